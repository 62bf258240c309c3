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
    grad: bool = False          # compare gradients (and grad_fn names) with torch
    gradcheck: bool = True      # with grad: also finite-difference check in float64

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
    if getattr(t, "_is_zerotensor", lambda: False)():
        t = torch.zeros(t.shape, dtype=t.dtype)  # torch's lazily-zero gradients
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


# ----------------------------------------------------------------------------- gradients

GRAD_DTYPES = ("float32", "float64")


def _leaf_and_arg(lib, x):
    """(argument, leaf): the leaf requires grad; the argument may be a view of it."""
    if isinstance(x, (T, E)) and not _is_float_array(x.arr):
        return to_lib(lib, x), None
    if isinstance(x, T):
        leaf = to_lib(lib, np.ascontiguousarray(x.arr.transpose())).requires_grad_()
        return leaf.permute(*reversed(range(leaf.dim()))), leaf
    if isinstance(x, E):
        leaf = to_lib(lib, x.arr).requires_grad_()
        return leaf.expand(*x.shape), leaf
    if _is_float_array(x):
        leaf = to_lib(lib, x).requires_grad_()
        return leaf, leaf
    if isinstance(x, (list, tuple)) and any(isinstance(v, (np.ndarray, T, E)) for v in x):
        pairs = [_leaf_and_arg(lib, v) for v in x]
        return type(x)(p[0] for p in pairs), [p[1] for p in pairs]
    return to_lib(lib, x), None


def _is_float_array(x):
    return isinstance(x, np.ndarray) and (x.dtype.kind in "fc" or x.dtype == ml_dtypes.bfloat16)


def _flat_leaves(leaves):
    out = []
    for lf in leaves:
        if isinstance(lf, list):
            out.extend(v for v in lf if v is not None)
        elif lf is not None:
            out.append(lf)
    return out


def _diff_outputs(result):
    items = result if isinstance(result, (tuple, list)) else (result,)
    outs = []
    for r in items:
        if isinstance(r, (tuple, list)):
            outs.extend(_diff_outputs(r))
        elif hasattr(r, "requires_grad") and r.requires_grad and r.dtype.is_floating_point:
            outs.append(r)
    return outs


def run_grad_sample(info, dtype, sample, rng):
    """Backward through ``info.fn`` in both libraries with the same upstream gradient;
    compare input gradients and grad_fn names; gradcheck in float64."""
    t_pairs = [_leaf_and_arg(torch, a) for a in sample.args]
    g_pairs = [_leaf_and_arg(glasstorch, a) for a in sample.args]
    t_kw = {k: to_lib(torch, v) for k, v in sample.kwargs.items()}
    g_kw = {k: to_lib(glasstorch, v) for k, v in sample.kwargs.items()}
    t_leaves = _flat_leaves([p[1] for p in t_pairs])
    g_leaves = _flat_leaves([p[1] for p in g_pairs])
    if not t_leaves:
        return
    try:
        t_out = _diff_outputs(info.fn(torch, *[p[0] for p in t_pairs], **t_kw))
    except Exception:
        return  # error behaviour is checked by the forward parity test
    g_out = _diff_outputs(info.fn(glasstorch, *[p[0] for p in g_pairs], **g_kw))
    assert len(g_out) == len(t_out), \
        f"{len(g_out)} differentiable outputs, torch has {len(t_out)}"
    if not t_out:
        return
    for o, t in zip(g_out, t_out):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__ or (
            type(t.grad_fn).__name__ == "CopySlices" and o.grad_fn.name() ==
            t.grad_fn.name()), f"grad_fn {o.grad_fn} != {t.grad_fn}"
    weights = [make_array(rng, tuple(t.shape), dtype) for t in t_out]
    t_loss = sum((o * torch.from_numpy(w)).sum() for o, w in zip(t_out, weights))
    g_loss = sum((o * glasstorch.from_numpy(w)).sum() for o, w in zip(g_out, weights))
    t_grads = torch.autograd.grad(t_loss, t_leaves, allow_unused=True)
    g_grads = glasstorch.autograd.grad(g_loss, g_leaves, allow_unused=True)
    for i, (gg, tg) in enumerate(zip(g_grads, t_grads)):
        if tg is None:
            tg = torch.zeros_like(t_leaves[i])
        if gg is None:
            gg = glasstorch.zeros_like(g_leaves[i])
        rtol, atol = info.tol.get(dtype) or TOL[dtype]
        np.testing.assert_allclose(to_numpy(gg), to_numpy(tg), rtol=max(rtol, 1e-5) * 10,
                                   atol=max(atol, 1e-6) * 10,
                                   err_msg=f"{info.name} grad of input {i} [{dtype}]")
    if dtype == "float64" and info.gradcheck:
        def f(*leaves):
            it = iter(leaves)
            rebuilt = [_rebuild_arg(a, p[1], it) for a, p in zip(sample.args, g_pairs)]
            return tuple(_diff_outputs(info.fn(glasstorch, *rebuilt, **g_kw)))

        assert glasstorch.autograd.gradcheck(f, tuple(g_leaves), atol=1e-5, rtol=1e-3)


def _rebuild_arg(sample_arg, leaf, it):
    """Re-apply a sample's layout marker to (perturbed) leaves, in leaf order."""
    if isinstance(sample_arg, (T, E)) and not _is_float_array(sample_arg.arr):
        return to_lib(glasstorch, sample_arg)
    if isinstance(sample_arg, T):
        lf = next(it)
        return lf.permute(*reversed(range(lf.dim())))
    if isinstance(sample_arg, E):
        return next(it).expand(*sample_arg.shape)
    if _is_float_array(sample_arg):
        return next(it)
    if isinstance(sample_arg, (list, tuple)) and isinstance(leaf, list):
        return type(sample_arg)(_rebuild_arg(a, lf, it) if lf is not None else to_lib(glasstorch, a)
                                for a, lf in zip(sample_arg, leaf))
    return to_lib(glasstorch, sample_arg)
