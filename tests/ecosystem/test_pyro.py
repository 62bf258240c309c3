"""pyro on glasstorch vs real torch's recorded outputs (programs/pyro.py)."""

import pytest

from ._harness import LibraryRun, installed, recorded_cases

LIB, MODULE = "pyro", "pyro"
# cases that stop on a missing capability: run only with GLASSTORCH_ECOSYSTEM=1 (a
# string: the whole library)
BLOCKED = ("pyro imports torch.serialization.MAP_LOCATION, then asserts torch.__name__ == "
           "'torch'; glasstorch serves torch under its own name (docs/pytorch-users.md)")
pytestmark = pytest.mark.skipif(not installed(MODULE), reason=f"{MODULE} is not installed")


@pytest.fixture(scope="module")
def run():
    return LibraryRun(LIB)


@pytest.mark.parametrize("name", recorded_cases(LIB))
def test_case(run, name):
    run.check(name)
