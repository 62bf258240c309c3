"""linspace against torch: float32 bit for bit (torch's evaluation order), float64 to the last
bit in all but rare double-rounding cases, the other dtypes to their precision."""

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import glasstorch as gt

finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(finite, finite, st.integers(0, 257))
def test_float32_bit_for_bit(start, end, steps):
    ours = gt.linspace(start, end, steps).numpy()
    theirs = torch.linspace(start, end, steps).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@settings(max_examples=200, deadline=None)
@given(finite, finite, st.integers(0, 257))
def test_float64_to_the_last_bit(start, end, steps):
    ours = gt.linspace(start, end, steps, dtype=gt.float64).numpy()
    theirs = torch.linspace(start, end, steps, dtype=torch.float64).numpy()
    np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)  # long double: rare double rounding


def test_the_tenth_that_float64_arithmetic_rounds_differently():
    assert gt.linspace(0, 0.3, 10)[3].item() == torch.linspace(0, 0.3, 10)[3].item()


def test_other_dtypes_and_edges():
    for gdt, tdt in ((gt.float16, torch.float16), (gt.bfloat16, torch.bfloat16),
                     (gt.int64, torch.int64), (gt.complex64, torch.complex64)):
        ours = gt.linspace(-3, 7, 11, dtype=gdt)
        theirs = torch.linspace(-3, 7, 11, dtype=tdt)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.to(gt.complex128).numpy(),
                                   theirs.to(torch.complex128).numpy(), rtol=1e-2)
    for steps in (0, 1, 2):
        np.testing.assert_array_equal(gt.linspace(2.5, -1, steps).numpy(),
                                      torch.linspace(2.5, -1, steps).numpy())
    np.testing.assert_array_equal(gt.linspace(0, float("inf"), 3).numpy(),
                                  torch.linspace(0, float("inf"), 3).numpy())
