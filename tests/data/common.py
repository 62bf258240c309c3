"""Helpers to run the same data-loading code with torch and glasstorch and compare."""

import numpy as np
import torch

import glasstorch

LIBS = (torch, glasstorch)


def norm(x):
    """A library-neutral description of a (nested) result: container types, dtypes, shapes,
    values."""
    if isinstance(x, (torch.Tensor, glasstorch.Tensor)):
        arr = x.float().numpy() if str(x.dtype).endswith("bfloat16") else x.numpy()
        return ("tensor", str(x.dtype).replace("torch.", ""), tuple(x.shape), arr.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: norm(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(norm(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    return (type(x).__name__, x)


def convert(x, lib):
    """numpy arrays marked ``T(arr)`` in a sample become tensors of ``lib``."""
    if isinstance(x, T):
        return lib.from_numpy(x.arr.copy())
    if isinstance(x, dict):
        return type(x)({k: convert(v, lib) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(convert(v, lib) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(convert(v, lib) for v in x)
    return x


class T:
    def __init__(self, arr):
        self.arr = np.asarray(arr)


def outcome(fn, *args, **kwargs):
    """(True, norm(result)) or (False, exception type)."""
    try:
        return True, norm(fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return False, type(e)


def same(fn_of_lib):
    """Run ``fn_of_lib(lib)`` with both libraries; assert equal results or equal error types."""
    ref = outcome(fn_of_lib, torch)
    got = outcome(fn_of_lib, glasstorch)
    assert got == ref, f"\n torch:      {ref}\n glasstorch: {got}"
    return ref
