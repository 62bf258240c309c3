"""Every op-table entry, every dtype it supports, every sample: glasstorch vs torch."""

import pytest

from .harness import GRAD_DTYPES, run_grad_sample, run_sample
from .optable import all_ops
from .samples import rng_for

CASES = [pytest.param(op, dt, id=f"{op.name}-{dt}") for op in all_ops() for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES)
def test_parity(op, dtype):
    if dtype in op.skip:
        pytest.skip(op.skip[dtype])
    rng = rng_for(f"{op.name}-{dtype}")
    samples = list(op.samples(dtype, rng))
    assert samples, "an op-table entry needs at least one sample"
    for sample in samples:
        try:
            run_sample(op, dtype, sample)
        except AssertionError as e:
            raise AssertionError(f"{op.name} [{dtype}] {sample}: {e}") from None


GRAD_CASES = [pytest.param(op, dt, id=f"{op.name}-{dt}") for op in all_ops() if op.grad
              for dt in op.dtypes if dt in GRAD_DTYPES]


@pytest.mark.parametrize("op,dtype", GRAD_CASES)
def test_grad_parity(op, dtype):
    """Same upstream gradient in both libraries: same input gradients and grad_fn names;
    float64 samples also pass gradcheck."""
    if dtype in op.skip:
        pytest.skip(op.skip[dtype])
    rng = rng_for(f"grad-{op.name}-{dtype}")
    for sample in op.samples(dtype, rng):
        try:
            run_grad_sample(op, dtype, sample, rng)
        except AssertionError as e:
            raise AssertionError(f"{op.name} [{dtype}] {sample}: {e}") from None
