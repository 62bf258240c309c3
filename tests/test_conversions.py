"""``.to(dtype)`` and ``copy_`` convert as torch does: float8 saturation, overflow to inf
without a NumPy warning, truncation to integers."""

import warnings

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

VALUES = [1e6, 500.0, -1e9, float("nan"), 0.3, -7.5]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                                   "float32", "float64"])
@pytest.mark.parametrize("how", ["to", "copy_"])
def test_conversion_matches_torch_without_numpy_warnings(dtype, how):
    def convert(L):
        x = L.tensor(VALUES)
        if how == "to":
            r = x.to(getattr(L, dtype))
        else:
            r = L.empty(len(VALUES), dtype=getattr(L, dtype))
            r.copy_(x)
        return r.double().tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked NumPy RuntimeWarning fails the test
        mine = convert(gt)
    assert str(mine) == str(convert(torch))  # str: NaN compares equal to NaN


def test_copy_into_integers_truncates_and_broadcasts_like_torch():
    def run(L):
        c = L.empty(2, 4, dtype=L.int32)
        c.copy_(L.tensor([1.7, -2.5, 3.0, 4.9]))
        return c.tolist()
    assert run(gt) == run(torch)
