"""torch.masked's reductions and normalizations on strided tensors.

``mask`` (broadcastable to the input, converted to bool) marks the elements that take part.
Each operation replaces the others by its identity (0 for sum, -inf for amax, NaN for
median...) and runs the ordinary op, so gradients reach exactly the unmasked elements; mean,
var and std divide by the count of unmasked elements (NaN where there are none).
"""

from __future__ import annotations

import math

import glasstorch as _torch

from .. import _ops
from .._core import dtype as _dt

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_SMALL_INTS = (_dt.bool_, _dt.uint8, _dt.int8, _dt.int16, _dt.int32)


def _input_mask(input, mask):
    """``mask`` as a bool tensor of ``input``'s shape."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = mask.clone().broadcast_to(input.shape)
    return mask.to(_dt.bool_)


def _identity(op, input, ord=2):
    dt = input.dtype
    if op in ("sum", "norm"):
        return math.inf if op == "norm" and ord == -math.inf else 0
    if op == "prod":
        return 1
    if op == "median":
        return math.nan
    low = op in ("amax", "logsumexp")
    if dt.is_floating_point or dt.is_complex:
        return -math.inf if low else math.inf
    info = _dt.iinfo(dt)
    return info.min if low else info.max


def _fill(op, input, mask, *args):
    """``input`` with its masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    value = _torch.tensor(_identity(op, input, *args), dtype=input.dtype)
    return _torch.where(_input_mask(input, mask), input, value)


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        w = _ops._common.wrap_dim(d, max(ndim, 1))
        if w in out:
            raise RuntimeError(f"dim={w} appears multiple times in the list of dims")
        out.append(w)
    return tuple(out)


def _int64_default(input, dtype):
    if dtype is None:
        return _dt.int64 if input.dtype in _SMALL_INTS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The sum over ``dim`` (all dims by default) of the unmasked elements."""
    dtype = _int64_default(input, dtype)
    return _torch.sum(_fill("sum", input, mask), _dims(dim, input.dim()), bool(keepdim),
                  dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product over ``dim`` of the unmasked elements."""
    dtype = _int64_default(input, dtype)
    r = _fill("prod", input, mask).to(dtype)
    for d in reversed(_dims(dim, input.dim())):
        r = _torch.prod(r, d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    """Running sum along ``dim``; masked-out elements add nothing."""
    dtype = dtype or input.dtype
    return _torch.cumsum(_fill("sum", input, mask), _dims(dim, input.dim())[0], dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Running product along ``dim``; masked-out elements multiply by one."""
    dtype = dtype or input.dtype
    return _torch.cumprod(_fill("prod", input, mask), _dims(dim, input.dim())[0], dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest unmasked element over ``dim`` (-inf, or the dtype's minimum, if none)."""
    filled = _fill("amax", input, mask)
    return _torch.amax(filled, _dims(dim, filled.dim()), bool(keepdim)).to(dtype or input.dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest unmasked element over ``dim`` (inf, or the dtype's maximum, if none)."""
    filled = _fill("amin", input, mask)
    return _torch.amin(filled, _dims(dim, filled.dim()), bool(keepdim)).to(dtype or input.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest unmasked element, in ``dtype`` (the input's by default)."""
    return _torch.argmax(_fill("amax", input, mask), dim, bool(keepdim)).to(dtype or input.dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest unmasked element, in ``dtype`` (the input's by default)."""
    return _torch.argmin(_fill("amin", input, mask), dim, bool(keepdim)).to(dtype or input.dtype)


def _count(input, dim, keepdim, mask):
    ones = _torch.ones(input.shape, dtype=_dt.int64)
    return _torch.sum(ones if mask is None else _input_mask(input, mask), _dims(dim, input.dim()),
                  bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the unmasked elements over ``dim`` (NaN where all are masked out)."""
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The (lower) median of the unmasked elements along ``dim``."""
    dtype = dtype or input.dtype
    floating = input.dtype.is_floating_point
    x = input if floating else input.to(_dt.float32)
    out = _torch.nanmedian(_fill("median", x, mask), _dims(dim, input.dim())[0], keepdim).values
    if floating:
        return out
    if bool(_torch.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) over the unmasked elements (-inf where there are none)."""
    r = _torch.logsumexp(_fill("logsumexp", input, mask), _dims(dim, input.dim()), keepdim=keepdim)
    return r.to(dtype or input.dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)), each operand's masked-out elements counting as -inf."""
    r = _torch.logaddexp(_fill("amax", input, input_mask),
                               _fill("amax", other, other_mask))
    return r.to(dtype or input.dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The ``ord``-norm of the unmasked elements over ``dim``."""
    return _torch.linalg.vector_norm(_fill("norm", input, mask, ord), ord,
                                   _dims(dim, input.dim()), bool(keepdim),
                                   dtype=dtype or input.dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dt.float32
    count = _count(input, dim, True, mask)
    centred = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=dtype, mask=mask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = dtype.to_real() if dtype.is_complex else dtype
        count = _torch.clamp_min(count.to(real) - corr, 0)
    out = (total / count).to(dtype)
    return _torch.sqrt(out) if sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The variance of the unmasked elements over ``dim`` (Bessel-corrected by default)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """The standard deviation of the unmasked elements over ``dim``."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _activation(name, op):
    def fn(input, dim, *, dtype=None, mask=None):
        from ..nn import functional as F
        d = _dims(dim, input.dim())[0]
        return getattr(F, name)(_fill(op, input, mask), d, dtype=dtype or input.dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}`` along ``dim`` over the unmasked elements (masked-out ones get "
                  f"{'-inf' if name == 'log_softmax' else 0}; NaN where all are).")
    return fn


softmax = _activation("softmax", "amax")
log_softmax = _activation("log_softmax", "amax")
softmin = _activation("softmin", "amin")


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input`` over its ``ord``-norm along ``dim`` taken over the unmasked elements (at least
    ``eps``); masked-out elements become 0."""
    dtype = dtype or input.dtype
    n = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _fill("sum", input, mask) / _torch.clamp_min(n, eps)


