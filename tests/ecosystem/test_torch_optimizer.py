"""torch_optimizer on glasstorch vs real torch's recorded outputs (programs/torch_optimizer.py)."""

import pytest

from ._harness import LibraryRun, installed, recorded_cases

LIB, MODULE = "torch_optimizer", "torch_optimizer"
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
