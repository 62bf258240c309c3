"""Import-time and thread-pool policies: ml_dtypes loads only when one of its types is needed;
OpenBLAS's idle threads are told not to spin unless the user chose otherwise."""

import os
import subprocess
import sys

import numpy as np

import glasstorch
from glasstorch import _runtime

_LAZY = """
import sys
import glasstorch, numpy as np
assert "ml_dtypes" not in sys.modules
assert glasstorch.bfloat16.itemsize == 2 and glasstorch.float8_e5m2.itemsize == 1
t = glasstorch.ones(3) * 2
assert "ml_dtypes" not in sys.modules, "plain float32 work loaded ml_dtypes"
b = t.to(glasstorch.bfloat16)
assert "ml_dtypes" in sys.modules
assert b.dtype is glasstorch.bfloat16 and (b.float() == 2).all()
print(b)
"""

_FOREIGN = """
import ml_dtypes, numpy as np
import glasstorch
a = np.ones(2, ml_dtypes.bfloat16)   # made outside glasstorch, before it loaded ml_dtypes
assert glasstorch.from_numpy(a).dtype is glasstorch.bfloat16
"""


def _run(code):
    env = dict(os.environ)
    env.pop("OPENBLAS_THREAD_TIMEOUT", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ml_dtypes_loads_when_first_needed():
    assert "bfloat16" in _run(_LAZY)
    _run(_FOREIGN)


def test_blas_thread_timeout_is_a_default_only(monkeypatch):
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "28")
    assert _runtime._quiet_blas_pool() is False
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "28"
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT")
    assert _runtime._quiet_blas_pool() is True  # NumPy is loaded: its pool restarts
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == _runtime.BLAS_THREAD_TIMEOUT
    a = np.arange(256.0).reshape(16, 16)
    np.testing.assert_allclose(glasstorch.tensor(a).matmul(glasstorch.tensor(a)).numpy(),
                               a @ a)  # BLAS still works after the restart
