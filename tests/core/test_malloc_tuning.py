"""glibc's malloc thresholds are fixed at import (fewer page faults per step), opt-out by env."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tuned(value):
    env = dict(os.environ, PYTHONPATH=ROOT, GLASSTORCH_MALLOC_TUNING=value)
    out = subprocess.run([sys.executable, "-c", "import glasstorch._runtime as r; "
                          "print(r._malloc_tuned)"], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_thresholds_set_on_glibc_and_env_opts_out():
    glibc = os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    assert _tuned("1") == str(glibc)
    assert _tuned("0") == "False"
