"""The double samplers call the C library's log/log1p/exp/tan/cos/sin as torch's kernels do:
through NumPy's ufuncs where a probe finds them equal to the C library on this machine, else
one C call per element. Both paths give torch's values bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import glasstorch as gt
from glasstorch._ops import random as R

torch = pytest.importorskip("torch")

DRAWS = {
    "randn": lambda L: L.randn(1003, dtype=L.float64),
    "normal_": lambda L: L.empty(64, dtype=L.float64).normal_(1.5, 2.0),
    "randn small": lambda L: L.randn(7, dtype=L.float64),
    "exponential_": lambda L: L.empty(101, dtype=L.float64).exponential_(0.5),
    "cauchy_": lambda L: L.empty(101, dtype=L.float64).cauchy_(1.0, 2.0),
    "log_normal_": lambda L: L.empty(101, dtype=L.float64).log_normal_(0.5, 3.0),
    "geometric_": lambda L: L.empty(101, dtype=L.float64).geometric_(0.3),
}


@pytest.fixture(params=["probed", "per element"])
def libm_path(request, monkeypatch):
    chosen = {} if request.param == "probed" else {
        n: R._per_element(R._c_function(n)) for n in R._LIBM_PROBE}
    monkeypatch.setattr(R, "_LIBM", chosen)
    return request.param


@pytest.mark.parametrize("draw", list(DRAWS))
def test_double_draws_are_torchs(draw, libm_path):
    f = DRAWS[draw]
    gt.manual_seed(5)
    torch.manual_seed(5)
    np.testing.assert_array_equal(f(gt).numpy(), f(torch).numpy())
