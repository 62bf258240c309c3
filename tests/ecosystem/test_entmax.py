"""entmax on glasstorch vs real torch's recorded outputs (programs/entmax.py)."""

import pytest

from ._harness import LibraryRun, installed, recorded_cases

LIB, MODULE = "entmax", "entmax"
# cases that stop on a missing capability: run only with GLASSTORCH_ECOSYSTEM=1 (a
# string: the whole library)
BLOCKED = {}
pytestmark = pytest.mark.skipif(not installed(MODULE), reason=f"{MODULE} is not installed")


@pytest.fixture(scope="module")
def run():
    return LibraryRun(LIB)


@pytest.mark.parametrize("name", recorded_cases(LIB))
def test_case(run, name):
    run.check(name)
