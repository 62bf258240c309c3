"""Build the same distribution in torch and glasstorch from NumPy parameters and compare."""

from __future__ import annotations

import numpy as np
import pytest

import glasstorch
import glasstorch.distributions  # noqa: F401  (makes glasstorch.distributions importable)

torch = pytest.importorskip("torch")

LIBS = (torch, glasstorch)


def as_lib(lib, value):
    """NumPy arrays become tensors of ``lib``; everything else passes through."""
    if isinstance(value, np.ndarray):
        return lib.tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(as_lib(lib, v) for v in value)
    return value


def to_np(value):
    if hasattr(value, "detach"):
        return value.detach().numpy() if hasattr(value.detach(), "numpy") else value
    return np.asarray(value)


def dists_of(lib):
    import importlib
    return importlib.import_module(lib.__name__ + ".distributions")


def assert_close(got, want, rtol=1e-5, atol=1e-5, what=""):
    """Compare a glasstorch result with torch's: dtype, shape, values (nan/inf positions)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], \
        f"{what}: dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} vs {want.shape}"
    g, w = to_np(got), to_np(want)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def both(fn):
    """``fn(lib)`` in torch and glasstorch: (glasstorch result or exception, torch's)."""
    out = []
    for lib in (glasstorch, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            out.append(e)
    return out[0], out[1]


def compare(fn, rtol=1e-5, atol=1e-5, what=""):
    """Run ``fn`` in both libraries; both raise the same exception type or agree."""
    got, want = both(fn)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"{what}: torch raised {want!r}, glasstorch gave {got}"
        assert type(got).__name__ == type(want).__name__, f"{what}: {got!r} vs {want!r}"
        return None
    if isinstance(got, Exception):
        raise AssertionError(f"{what}: glasstorch raised {got!r}, torch gave {want}") from got
    if isinstance(want, torch.Tensor):
        assert_close(got, want, rtol, atol, what)
    elif isinstance(want, torch.dtype):
        assert str(got) == str(want), f"{what}: {got} vs {want}"
    else:
        assert got == want, f"{what}: {got} vs {want}"
    return got
