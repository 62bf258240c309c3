"""Run one callable in glasstorch and in torch on the same inputs and compare everything.

A sample's arguments are NumPy arrays (made into tensors in each library),
layout markers (``T``: a non-contiguous transpose, ``E``: an expanded view),
or plain Python values passed through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
REALS = ("bool",) + INTS + FLOATS
NUMBERS = INTS + FLOATS + ("complex64", "complex128")
F32 = ("float32", "float64")

# tolerance by dtype: (rtol, atol)
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
       "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


@dataclass
class T:
    """A non-contiguous tensor with ``arr``'s values: built transposed, then transposed back."""
    arr: np.ndarray


@dataclass
class E:
    """``arr`` expanded (stride 0) to ``shape``."""
    arr: np.ndarray
    shape: tuple


class S:
    """One sample: positional and keyword arguments for the op."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        def short(a):
            if isinstance(a, np.ndarray):
                return f"array{list(a.shape)}:{a.dtype}"
            if isinstance(a, (T, E)):
                return f"{type(a).__name__}({short(a.arr)})"
            return repr(a)
        parts = [short(a) for a in self.args] + [f"{k}={short(v)}" for k, v in
                                                 self.kwargs.items()]
        return "S(" + ", ".join(parts) + ")"


@dataclass
class OpInfo:
    """One operator in the parity table.

    ``fn(lib, *args, **kwargs)`` runs it with ``lib`` being torch or glasstorch.
    ``samples(dtype_name, rng)`` yields ``S`` objects. ``covers`` names the torch
    functions / Tensor methods this entry exercises (``"add"``, ``"Tensor.add_"``).
    """
    name: str
    fn: Callable
    samples: Callable
    dtypes: tuple = F32
    covers: tuple = ()
    view: bool = False          # result must share storage exactly as torch's does
    tol: dict = field(default_factory=dict)
    check_strides: bool = False
    nondeterministic: bool = False  # compare only dtype/shape (random ops)
    skip: dict = field(default_factory=dict)  # dtype -> reason

    def names(self):
        return (self.name,) + tuple(self.covers)


def make_array(rng, shape, dtype, low=-5, high=5):
    """Random values of ``dtype`` spread over [low, high) (ints and bools too)."""
    return np.asarray(_random_values(rng, shape, dtype, low, high))


def _random_values(rng, shape, dtype, low, high):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in INTS:
        lo = max(low, 0) if dtype == "uint8" else low
        return rng.integers(lo, max(high, lo + 1), size=shape).astype(dtype)
    if dtype.startswith("complex"):
        r = rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)
        return r.astype(dtype)
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    return rng.uniform(low, high, size=shape).astype(np_dtype)


def to_lib(lib, x):
    """Build ``lib``'s tensor (or pass a plain value) for one sample argument."""
    if isinstance(x, T):
        t = to_lib(lib, np.ascontiguousarray(x.arr.transpose()))
        return t.permute(*reversed(range(t.dim())))
    if isinstance(x, E):
        return to_lib(lib, x.arr).expand(*x.shape)
    if isinstance(x, np.ndarray):
        if x.dtype == ml_dtypes.bfloat16:
            return lib.from_numpy(x.astype(np.float32)).to(lib.bfloat16)
        return lib.from_numpy(x.copy())
    if isinstance(x, (list, tuple)) and any(isinstance(v, (np.ndarray, T, E)) for v in x):
        return type(x)(to_lib(lib, v) for v in x)
    if isinstance(x, str) and x.startswith("dtype:"):
        return getattr(lib, x[6:])
    return x


def to_numpy(t):
    """Values of a torch or glasstorch tensor as a float64/complex128/bool NumPy array."""
    t = t.detach()
    name = str(t.dtype).split(".")[-1]
    if name == "bool":
        return np.asarray(t.cpu().numpy() if hasattr(t, "cpu") else t.numpy())
    if name.startswith("complex"):
        return t.numpy().astype(np.complex128)
    return t.double().numpy() if name in ("bfloat16",) else t.numpy().astype(np.float64)


def _storage_ptr(t):
    return t.untyped_storage().data_ptr()


def compare(ours, theirs, info, dtype, inputs=(), path="result"):
    """Assert ``ours`` (glasstorch) matches ``theirs`` (torch) in every observable way."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glasstorch.Tensor), f"{path}: expected a Tensor, got {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: dtype {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), \
            f"{path}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
        if info.nondeterministic:
            return
        a, b = to_numpy(ours), to_numpy(theirs)
        rtol, atol = info.tol.get(dtype) or TOL.get(str(theirs.dtype).split(".")[-1], (0, 0))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{info.name} {path} [{dtype}]")
        if (info.view or info.check_strides) and inputs:
            nontrivial = [i for i, s in enumerate(theirs.shape) if s != 1]
            ours_s = [ours.stride()[i] for i in nontrivial]
            theirs_s = [theirs.stride()[i] for i in nontrivial]
            assert ours_s == theirs_s, f"{path}: strides {ours.stride()} != {theirs.stride()}"
        if info.view and inputs:
            t_in, g_in = inputs
            assert ours.storage_offset() == theirs.storage_offset(), \
                f"{path}: storage_offset {ours.storage_offset()} != {theirs.storage_offset()}"
            for (gi, ti) in zip(g_in, t_in):
                if isinstance(ti, torch.Tensor):
                    shares_t = _storage_ptr(ti) == _storage_ptr(theirs) and theirs.numel() > 0
                    shares_g = _storage_ptr(gi) == _storage_ptr(ours) and ours.numel() > 0
                    assert shares_g == shares_t, f"{path}: storage sharing {shares_g} != {shares_t}"
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{path}: expected a sequence, got {type(ours)}"
        assert len(ours) == len(theirs), f"{path}: length {len(ours)} != {len(theirs)}"
        if hasattr(theirs, "_fields"):
            assert getattr(ours, "_fields", None) == theirs._fields, f"{path}: namedtuple fields"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            compare(o, t, info, dtype, inputs, f"{path}[{i}]")
        return
    if isinstance(theirs, float) and math.isnan(theirs):
        assert isinstance(ours, float) and math.isnan(ours), f"{path}: {ours} != nan"
        return
    if isinstance(theirs, (torch.dtype, torch.Size)):
        assert str(ours) == str(theirs), f"{path}: {ours} != {theirs}"
        return
    if isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-6), f"{path}: {ours} != {theirs}"
        return
    assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def run_sample(info, dtype, sample):
    """Run one sample in both libraries; errors must match in type."""
    t_args = [to_lib(torch, a) for a in sample.args]
    t_kwargs = {k: to_lib(torch, v) for k, v in sample.kwargs.items()}
    g_args = [to_lib(glasstorch, a) for a in sample.args]
    g_kwargs = {k: to_lib(glasstorch, v) for k, v in sample.kwargs.items()}
    try:
        expected = info.fn(torch, *t_args, **t_kwargs)
    except Exception as e:  # torch refuses: we must refuse the same way
        with pytest.raises(type(e)):
            info.fn(glasstorch, *g_args, **g_kwargs)
        return
    got = info.fn(glasstorch, *g_args, **g_kwargs)
    compare(got, expected, info, dtype, (t_args, g_args))
    # the inputs must not have been changed differently (in-place ops compare them too)
    for gi, ti in zip(g_args, t_args):
        if isinstance(ti, torch.Tensor):
            compare(gi, ti, info, dtype, path="input after op")
