"""Reductions, scans, sorting and counting: sum/mean/std, max/argmax, cumsum, sort, topk,
median, unique, bincount, histc...

Every reduction runs as one NumPy reduction over whole axes. Low-precision floats
(float16/bfloat16) are computed in float32 and rounded once, like torch's CPU kernels;
comparisons on them are exact in float32, so sorting and max use the upcast copy too.
"""

from __future__ import annotations

import builtins
import warnings

from .. import return_types as _rt
from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    Tensor,
    compute_array,
    compute_dtype,
    dims_arg,
    finish,
    float_result_dtype,
    needs_grad,
    not_implemented_for,
    record,
    register,
    register_inplace,
    result_array,
    wrap,
    wrap_dim,
    xp,
)

__all__ = [
    "sum", "mean", "nansum", "nanmean", "prod", "std", "var", "std_mean", "var_mean",
    "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "all", "any", "logsumexp",
    "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort", "msort",
    "topk", "kthvalue", "median", "nanmedian", "mode", "unique", "unique_consecutive",
    "count_nonzero", "bincount", "histc", "diff",
]

_by_np = _dt._by_np
_int64 = xp.dtype(xp.int64)
_bool = _dt.bool_
_uint8 = _dt.uint8


# ----------------------------------------------------------------------------- helpers

def _axes(a, dim):
    """NumPy axes for ``dim`` (None = all). A 0-d tensor accepts dim 0/-1 and reduces fully."""
    axes = dims_arg(dim, a.ndim)
    return None if a.ndim == 0 else axes


def _count(a, axes):
    if axes is None:
        return a.size
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    return n


def _int_to_long(dt):
    """sum/prod/cumsum of bool and integer tensors accumulate in int64."""
    return _dt.int64 if dt._category < 2 else dt


def _source(input, dtype):
    """The input array, cast first to an explicit ``dtype=`` as torch does."""
    a = input._data
    return a if dtype is None or a.dtype == dtype.np else a.astype(dtype.np)


def _dtype_of(a):
    return _by_np[a.dtype]


def _empty_check(a, axes, name):
    """torch refuses to reduce an empty dimension for ops without an identity."""
    if a.size:
        return
    if axes is None:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                           f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                           f"argument.")
    for ax in axes:
        if a.shape[ax] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")


def _one_dim(a, dim):
    """A single wrapped dim; ``None`` for a 0-d array (dim 0 or -1 is accepted there)."""
    if not isinstance(dim, int) and not (isinstance(dim, Tensor) and dim.ndim == 0):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    d = wrap_dim(int(dim), a.ndim)
    return None if a.ndim == 0 else d


def _finish_tuple(res, out):
    if out is None:
        return res
    if len(out) != len(res):
        raise TypeError(f"out must be a tuple of {len(res)} tensors")
    return type(res)(*(finish(r, o) for r, o in zip(res, out)))


def _reject_complex(a, name, err=NotImplementedError):
    if a.dtype.kind == "c":
        if err is NotImplementedError:
            raise not_implemented_for(name, _dtype_of(a))
        raise err(f"{name}(): does not support complex input")


# ----------------------------------------------------------------------------- sums

@register()
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` (all by default); bool and integers sum to int64."""
    a = _source(input, dtype)
    rdt = dtype or _int_to_long(input.dtype)
    axes = _axes(a, dim)
    r = xp.sum(compute_array(a), axis=axes, keepdims=keepdim, dtype=compute_dtype(rdt))
    r = wrap(result_array(xp.asarray(r), rdt))
    if needs_grad(input):
        if dim is None:
            record(r, SumBackward0, (input,), self_sym_sizes=input.shape)
        else:
            record(r, SumBackward1, (input,), self_sym_sizes=input.shape, dim=axes,
                   keepdim=keepdim)
    return finish(r, out)


def expand_reduced(grad, shape, axes, keepdim):
    """Broadcast a reduction's gradient back over the reduced ``axes`` of ``shape``."""
    if not keepdim and axes is not None:
        for ax in sorted(axes):
            grad = grad.unsqueeze(ax)
    return grad.expand(shape)


class SumBackward0(Node):
    def backward(self, grad):
        return grad.expand(self._saved_self_sym_sizes)


class SumBackward1(Node):
    def backward(self, grad):
        return expand_reduced(grad, self._saved_self_sym_sizes, self._saved_dim,
                              self._saved_keepdim)


@register()
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero."""
    a = _source(input, dtype)
    axes = _axes(a, dim)
    if a.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    rdt = dtype or _int_to_long(input.dtype)
    r = xp.nansum(compute_array(a), axis=axes, keepdims=keepdim,
                  dtype=compute_dtype(rdt))
    return finish(wrap(result_array(xp.asarray(r), rdt)), out)


@register()
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product over ``dim`` (an int; all elements by default)."""
    a = _source(input, dtype)
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    rdt = dtype or _int_to_long(input.dtype)
    with xp.errstate(all="ignore"):
        r = xp.prod(compute_array(a), axis=_axes(a, dim), keepdims=keepdim,
                    dtype=compute_dtype(rdt))
        r = result_array(xp.asarray(r), rdt)  # may overflow to inf, as in torch
    return finish(wrap(r), out)


def _mean_array(a, axes, keepdim, rdt):
    """sum / count in the compute dtype (0/0 gives NaN for empty, like torch)."""
    s = xp.sum(compute_array(a), axis=axes, keepdims=keepdim, dtype=compute_dtype(rdt))
    with xp.errstate(all="ignore"):
        return xp.asarray(s / _count(a, axes))


@register()
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Arithmetic mean; integer inputs need an explicit floating ``dtype=``."""
    rdt = dtype or input.dtype
    if rdt._category < 2:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_short(rdt)}")
    a = _source(input, dtype)
    axes = _axes(a, dim)
    r = wrap(result_array(_mean_array(a, axes, keepdim, rdt), rdt))
    if needs_grad(input):
        count = _count(a, axes)
        if dim is None:
            record(r, MeanBackward0, (input,), self_sym_sizes=input.shape, self_sym_numel=count)
        else:
            record(r, MeanBackward1, (input,), self_sym_sizes=input.shape, dim=axes,
                   keepdim=keepdim, self_sym_numel=count)
    return finish(r, out)


class MeanBackward0(Node):
    def backward(self, grad):
        return grad.expand(self._saved_self_sym_sizes) / self._saved_self_sym_numel


class MeanBackward1(Node):
    def backward(self, grad):
        return expand_reduced(grad, self._saved_self_sym_sizes, self._saved_dim,
                              self._saved_keepdim) / self._saved_self_sym_numel


@register()
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements."""
    rdt = dtype or input.dtype
    if rdt._category < 2:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_short(rdt)}")
    axes = _axes(input._data, dim)
    if rdt.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    a = compute_array(_source(input, dtype))
    nan = xp.isnan(a)
    s = xp.sum(xp.where(nan, 0, a), axis=axes, keepdims=keepdim, dtype=compute_dtype(rdt))
    n = xp.sum(~nan, axis=axes, keepdims=keepdim)
    with xp.errstate(all="ignore"):
        r = xp.asarray(s / n)
    return finish(wrap(result_array(r.astype(compute_dtype(rdt)), rdt)), out)


def _short(dt):
    return _SHORT[dt]


# ----------------------------------------------------------------------------- var / std

def _var_args(dim, unbiased, correction, name):
    if isinstance(dim, bool):  # legacy var(input, unbiased)
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise RuntimeError(f"{name}: can't specify both correction and unbiased arguments")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def _var_mean(input, dim, correction, keepdim, name):
    """(variance, mean) arrays in the compute dtype, and the result dtypes."""
    a = input._data
    dt = _dtype_of(a)
    if dt._category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    axes = _axes(a, dim)
    c = compute_array(a)
    n = _count(a, axes)
    with xp.errstate(all="ignore"):
        m = xp.sum(c, axis=axes, keepdims=True) / n
        dev = c - m
        sq = (dev.real * dev.real + dev.imag * dev.imag) if dt.is_complex else dev * dev
        dof = builtins.max(n - correction, 0)
        if dof <= 0:
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                          f"less than the reduction factor (input numel divided by output "
                          f"numel).", UserWarning, stacklevel=3)
        v = xp.asarray(xp.sum(sq, axis=axes, keepdims=keepdim) / dof)
    if not keepdim:
        m = m.reshape(v.shape)
    return v, xp.asarray(m), dt.to_real(), dt


@register()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance with ``correction`` (default 1, Bessel); legacy ``unbiased`` also accepted."""
    dim, correction = _var_args(dim, unbiased, correction, "var")
    v, _, rdt, _ = _var_mean(input, dim, correction, keepdim, "var")
    return finish(wrap(result_array(v, rdt)), out)


@register()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: sqrt of :func:`var`."""
    dim, correction = _var_args(dim, unbiased, correction, "std")
    v, _, rdt, _ = _var_mean(input, dim, correction, keepdim, "std")
    return finish(wrap(result_array(xp.sqrt(v), rdt)), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` computed together."""
    dim, correction = _var_args(dim, unbiased, correction, "var_mean")
    v, m, rdt, mdt = _var_mean(input, dim, correction, keepdim, "var_mean")
    return wrap(result_array(v, rdt)), wrap(result_array(m, mdt))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` computed together."""
    dim, correction = _var_args(dim, unbiased, correction, "std_mean")
    v, m, rdt, mdt = _var_mean(input, dim, correction, keepdim, "std_mean")
    return wrap(result_array(xp.sqrt(v), rdt)), wrap(result_array(m, mdt))


# ----------------------------------------------------------------------------- max / min

def _extreme_dim(input, dim, keepdim, name, argfn, cls):
    """values/indices of the max or min along one dim; the first occurrence wins, NaN wins."""
    a = input._data
    d = _one_dim(a, dim)
    if d is not None:
        _empty_check(a, (d,), name)
    if a.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if d is None:
        return cls(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    idx = argfn(compute_array(a), axis=d, keepdims=True)
    vals = xp.take_along_axis(a, idx, axis=d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return cls(wrap(vals), wrap(idx.astype(_int64, copy=False)))


def _extreme_all(input, name, fn):
    a = input._data
    _empty_check(a, None, name.split("_")[0])
    if a.dtype.kind == "c":
        raise not_implemented_for(name, _dtype_of(a))
    return wrap(result_array(xp.asarray(fn(compute_array(a))), _dtype_of(a)))


@register()
def max(input, dim=None, keepdim=False, *, out=None):
    """Largest element; with ``dim``, ``(values, indices)``; with a tensor, :func:`maximum`."""
    if isinstance(dim, Tensor):
        import glasstorch
        return glasstorch.maximum(input, dim, out=out)
    if dim is None:
        return finish(_extreme_all(input, "max_all", xp.max), out)
    return _finish_tuple(_extreme_dim(input, dim, keepdim, "max", xp.argmax, _rt.max), out)


@register()
def min(input, dim=None, keepdim=False, *, out=None):
    """Smallest element; with ``dim``, ``(values, indices)``; with a tensor, :func:`minimum`."""
    if isinstance(dim, Tensor):
        import glasstorch
        return glasstorch.minimum(input, dim, out=out)
    if dim is None:
        return finish(_extreme_all(input, "min_all", xp.min), out)
    return _finish_tuple(_extreme_dim(input, dim, keepdim, "min", xp.argmin, _rt.min), out)


def _amax_like(input, dim, keepdim, name, fn):
    a = input._data
    axes = _axes(a, dim)
    _empty_check(a, axes, name)
    if a.dtype.kind == "c" and a.size:
        raise not_implemented_for(f"{name[1:]}_values", _dtype_of(a))
    r = fn(compute_array(a), axis=axes, keepdims=keepdim)
    return wrap(result_array(xp.asarray(r), _dtype_of(a)))


@register()
def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (int or tuple; all by default), NaN propagating."""
    return finish(_amax_like(input, dim, keepdim, "amax", xp.max), out)


@register()
def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (int or tuple; all by default), NaN propagating."""
    return finish(_amax_like(input, dim, keepdim, "amin", xp.min), out)


@register()
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over ``dim`` (or everything)."""
    a = input._data
    if dim is None:
        axes = None
        if not a.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
    else:
        d = _one_dim(a, dim)
        axes = None if d is None else (d,)
        if axes is not None and not a.shape[d]:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
    if a.dtype.kind == "c":
        raise not_implemented_for("aminmax", _dtype_of(a))
    c = compute_array(a)
    dt = _dtype_of(a)
    lo = result_array(xp.asarray(xp.min(c, axis=axes, keepdims=keepdim)), dt)
    hi = result_array(xp.asarray(xp.max(c, axis=axes, keepdims=keepdim)), dt)
    return _finish_tuple(_rt.aminmax(wrap(lo), wrap(hi)), out)


def _arg_extreme(input, dim, keepdim, name, fn):
    a = input._data
    if a.dtype == xp.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    _reject_complex(a, name, RuntimeError)
    d = None if dim is None else _one_dim(a, dim)
    c = compute_array(a)
    if dim is None:
        if not a.size:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        r = xp.asarray(fn(c.reshape(-1)), dtype=_int64)
        return wrap(r.reshape((1,) * a.ndim) if keepdim else r)
    if d is None:
        return wrap(xp.zeros((), _int64))
    _empty_check(a, (d,), name)
    return wrap(fn(c, axis=d, keepdims=keepdim).astype(_int64, copy=False))


@register()
def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the first maximum (over the flattened input when ``dim`` is None)."""
    return finish(_arg_extreme(input, dim, keepdim, "argmax", xp.argmax), out)


@register()
def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the first minimum (over the flattened input when ``dim`` is None)."""
    return finish(_arg_extreme(input, dim, keepdim, "argmin", xp.argmin), out)


# ----------------------------------------------------------------------------- all / any

def _logical_reduce(input, dim, keepdim, fn):
    a = input._data
    # unlike sum, all/any over an empty dim list reduce nothing
    axes = () if isinstance(dim, (tuple, list)) and not dim else _axes(a, dim)
    r = xp.asarray(fn(a, axis=axes, keepdims=keepdim))
    # torch keeps uint8 for uint8 inputs (a legacy of ByteTensor masks)
    return wrap(r.astype(xp.uint8) if a.dtype == xp.uint8 else r)


@register()
def all(input, dim=None, keepdim=False, *, out=None):
    """True where every element along ``dim`` is nonzero."""
    return finish(_logical_reduce(input, dim, keepdim, xp.all), out)


@register()
def any(input, dim=None, keepdim=False, *, out=None):
    """True where some element along ``dim`` is nonzero."""
    return finish(_logical_reduce(input, dim, keepdim, xp.any), out)


@register()
def count_nonzero(input, dim=None):
    """Number of nonzero elements along ``dim`` (int or tuple), as int64."""
    a = input._data
    r = xp.count_nonzero(a, axis=_axes(a, dim))
    return wrap(xp.asarray(r, dtype=_int64))


# ----------------------------------------------------------------------------- logsumexp

@register()
def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) over ``dim``, shifted by the maximum so it cannot overflow."""
    a = input._data
    dt = float_result_dtype(_dtype_of(a))
    c = a.astype(compute_dtype(dt), copy=False)
    axes = _axes(a, dim)
    if not c.size:
        with xp.errstate(all="ignore"):
            r = xp.log(xp.sum(xp.exp(c), axis=axes, keepdims=keepdim))
        return finish(wrap(result_array(xp.asarray(r), dt)), out)
    m = xp.max(c.real, axis=axes, keepdims=True)
    # an infinite max (or NaN) is not a usable shift: shift by 0 there instead
    m = xp.where(xp.isfinite(m), m, 0)
    with xp.errstate(all="ignore"):
        s = xp.log(xp.sum(xp.exp(c - m), axis=axes, keepdims=keepdim)) + (
            m if keepdim else m.reshape(xp.sum(m, axis=axes).shape))
    return finish(wrap(result_array(xp.asarray(s), dt)), out)


# ----------------------------------------------------------------------------- scans

def _scan(input, dim, dtype, ufunc):
    a = _source(input, dtype)
    rdt = dtype or _int_to_long(input.dtype)
    d = wrap_dim(dim, a.ndim)
    c = compute_array(a)
    if a.ndim == 0:
        return wrap(result_array(c.astype(compute_dtype(rdt)), rdt))
    with xp.errstate(all="ignore"):
        r = ufunc.accumulate(c, axis=d, dtype=compute_dtype(rdt))
    return wrap(result_array(r, rdt))


@register()
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim``; bool and integers accumulate in int64."""
    return finish(_scan(input, dim, dtype, xp.add), out)


@register()
def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``; bool and integers accumulate in int64."""
    return finish(_scan(input, dim, dtype, xp.multiply), out)


register_inplace(cumsum)
register_inplace(cumprod)


def _cum_extreme(input, dim, ufunc, name, cls):
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if a.ndim == 0 or not a.size:  # torch checks the dtype only when there is work to do
        return cls(wrap(a.copy()), wrap(xp.zeros(a.shape, _int64)))
    _reject_complex(a, name)
    c = compute_array(a)
    v = ufunc.accumulate(c, axis=d)
    # the index moves to every new extreme, ties included (the last one wins), and to NaNs
    hit = c == v
    if c.dtype.kind == "f":
        hit |= xp.isnan(c)
    pos = xp.arange(a.shape[d], dtype=_int64).reshape((-1,) + (1,) * (a.ndim - d - 1))
    idx = xp.maximum.accumulate(xp.where(hit, pos, 0), axis=d) if a.size else \
        xp.zeros(a.shape, _int64)
    return cls(wrap(result_array(v, _dtype_of(a))), wrap(idx))


@register()
def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the index where it was reached."""
    return _finish_tuple(_cum_extreme(input, dim, xp.maximum, "cummax", _rt.cummax), out)


@register()
def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the index where it was reached."""
    return _finish_tuple(_cum_extreme(input, dim, xp.minimum, "cummin", _rt.cummin), out)


@register()
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along ``dim``, computed stably with logaddexp."""
    a = input._data
    dt = _dtype_of(a)
    d = wrap_dim(dim, a.ndim)
    if dt._category != 2:  # complex inputs are not supported here (torch supports them)
        raise not_implemented_for("logcumsumexp_out", dt)
    c = compute_array(a)
    r = c.copy() if a.ndim == 0 else xp.logaddexp.accumulate(c, axis=d)
    return finish(wrap(result_array(r, dt)), out)


# ----------------------------------------------------------------------------- sorting

def _sort_keys(a, name="sort"):
    if a.dtype.kind == "c":
        raise RuntimeError(f"{name}(): Sort does not support complex dtypes on CPU")
    return compute_array(a)


def _argsort(c, d, descending):
    """Stable sort indices along axis ``d``; NaN sorts as the largest value.

    Descending order sorts the reversed array ascending and reverses back, so equal
    elements keep their original order in both directions (as torch's CPU sort does).
    """
    if not descending:
        return xp.argsort(c, axis=d, kind="stable").astype(_int64, copy=False)
    idx = xp.flip(xp.argsort(xp.flip(c, d), axis=d, kind="stable"), d)
    return (c.shape[d] - 1) - idx.astype(_int64, copy=False)


@register()
def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Sorted values and their indices along ``dim`` (stable; NaN last ascending)."""
    a = input._data
    d = _one_dim(a, dim)
    c = _sort_keys(a)
    if d is None:
        return _finish_tuple(_rt.sort(wrap(a.copy()), wrap(xp.zeros((), _int64))), out)
    idx = _argsort(c, d, descending)
    return _finish_tuple(_rt.sort(wrap(xp.take_along_axis(a, idx, d)), wrap(idx)), out)


@register()
def argsort(input, dim=-1, descending=False, *, stable=False):
    """Indices that sort ``input`` along ``dim``."""
    a = input._data
    d = _one_dim(a, dim)
    c = _sort_keys(a)
    return wrap(xp.zeros((), _int64) if d is None else _argsort(c, d, descending))


@register()
def msort(input, *, out=None):
    """``input`` sorted along its first dimension."""
    return finish(sort(input, 0).values, out)


@register()
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    a = input._data
    d = _one_dim(a, dim)
    c = _sort_keys(a, "topk")
    n = 1 if d is None else a.shape[d]
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if d is None:
        return _finish_tuple(_rt.topk(wrap(a.copy()), wrap(xp.zeros((), _int64))), out)
    idx = xp.take(_argsort(c, d, largest), xp.arange(k), axis=d)
    return _finish_tuple(_rt.topk(wrap(xp.take_along_axis(a, idx, d)), wrap(idx)), out)


def _select(input, dim, keepdim, pick, cls, name):
    """values/indices of the element at sorted position ``pick(sorted, nonnan_count)``."""
    a = input._data
    dt = _dtype_of(a)
    d = _one_dim(a, dim)
    if d is not None and not a.shape[d]:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if d is None and name == "kthvalue":  # torch checks the dtype only in the kernel
        return cls(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    if dt.is_complex or dt is _bool:
        raise not_implemented_for(name if name == "kthvalue" else "median_out", dt)
    if d is None:
        return cls(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    c = compute_array(a)
    order = _argsort(c, d, False)
    n = a.shape[d]
    nn = (xp.sum(~xp.isnan(c), axis=d, keepdims=True) if c.dtype.kind == "f" else
          xp.full(c.shape[:d] + (1,) + c.shape[d + 1:], n))
    pos = xp.asarray(pick(n, nn), dtype=_int64)
    idx = xp.take_along_axis(order, pos, d)
    vals = xp.take_along_axis(a, idx, d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return cls(wrap(vals), wrap(idx))


def _median_pos(n, nn):
    # lower median; a row holding NaN gives its first NaN (sorted right after the numbers)
    return xp.where(nn < n, nn, (n - 1) // 2)


def _nanmedian_pos(n, nn):
    return xp.where(nn == 0, (n - 1) // 2, (nn - 1) // 2)


def _median_all(input, pick, name):
    a = input._data
    dt = _dtype_of(a)
    if not a.size:
        # NaN, converted to the dtype as a C cast would (INT_MIN for int32/int64)
        with xp.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return wrap(xp.asarray(xp.nan).astype(a.dtype))
    if dt.is_complex or dt is _bool:
        raise not_implemented_for("median", dt)
    return _select(wrap(a.reshape(-1)), 0, False, pick, _rt.median, name).values


@register()
def median(input, dim=None, keepdim=False, *, out=None):
    """Lower median (NaN if any); with ``dim``, ``(values, indices)``."""
    if dim is None:
        return finish(_median_all(input, _median_pos, "median"), out)
    return _finish_tuple(_select(input, dim, keepdim, _median_pos, _rt.median, "median"), out)


@register()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Lower median of the non-NaN elements; with ``dim``, ``(values, indices)``."""
    if dim is None:
        return finish(_median_all(input, _nanmedian_pos, "median"), out)
    return _finish_tuple(_select(input, dim, keepdim, _nanmedian_pos, _rt.nanmedian,
                                 "median"), out)


@register()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    a = input._data
    d = _one_dim(a, dim)
    n = 1 if d is None else a.shape[d]
    if not n:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension "
                           f"{0 if d is None else d}")
    return _finish_tuple(_select(input, dim, keepdim, lambda n, nn: xp.full(nn.shape, k - 1),
                                 _rt.kthvalue, "kthvalue"), out)


@register()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """Most frequent value along ``dim`` (the smallest on ties) and its last index."""
    a = input._data
    dt = _dtype_of(a)
    d = _one_dim(a, dim)
    if d is None:
        return _finish_tuple(_rt.mode(wrap(a.copy()), wrap(xp.zeros((), _int64))), out)
    n = a.shape[d]
    if not n:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    c = xp.moveaxis(compute_array(a), d, -1)
    if not c.size:  # other dims empty: an empty result
        shape = c.shape[:-1]
        vals, idx = xp.empty(shape, a.dtype), xp.zeros(shape, _int64)
        if keepdim:
            vals, idx = xp.expand_dims(vals, d), xp.expand_dims(idx, d)
        return _finish_tuple(_rt.mode(wrap(vals), wrap(idx)), out)
    if dt.is_complex:
        raise not_implemented_for("mode", dt)
    order = xp.argsort(c, axis=-1, kind="stable")
    s = xp.take_along_axis(c, order, -1)
    pos = xp.arange(n)
    start = xp.ones(s.shape, bool)
    start[..., 1:] = s[..., 1:] != s[..., :-1]
    # length of the run of equal values ending at each position
    run = pos - xp.maximum.accumulate(xp.where(start, pos, 0), axis=-1) + 1
    # the first position reaching the longest run ends the smallest most-frequent value;
    # the stable sort puts that value's last original index there
    end = xp.argmax(run, axis=-1)[..., None]
    idx = xp.take_along_axis(order, end, -1).astype(_int64, copy=False)
    vals = xp.take_along_axis(xp.moveaxis(a, d, -1), idx, -1)
    idx, vals = xp.moveaxis(idx, -1, d), xp.moveaxis(vals, -1, d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return _finish_tuple(_rt.mode(wrap(vals), wrap(idx)), out)


# ----------------------------------------------------------------------------- unique

def _unique_extras(values, inverse, counts, return_inverse, return_counts):
    if not (return_inverse or return_counts):
        return values
    res = (values,)
    if return_inverse:
        res += (wrap(inverse.astype(_int64, copy=False)),)
    if return_counts:
        res += (wrap(counts.astype(_int64, copy=False)),)
    return res


def _unique_dim(a, dim, name):
    if dim is None:
        return None
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    if not a.size and a.shape[d]:
        raise RuntimeError(f"There are 0 sized dimensions, and they aren't selected, so {name} "
                           f"cannot be applied")
    return d


@register()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct elements (or slices along ``dim``), sorted, optionally with inverse and counts.

    NaNs are all distinct, as in torch.
    """
    a = input._data
    dt = _dtype_of(a)
    if dt.is_complex:
        raise NotImplementedError(f"\"unique\" not implemented for '{_short(dt)}'")
    d = _unique_dim(a, dim, "unique")
    c = compute_array(a)
    if d is None:
        flat = c.reshape(-1)
        _, first, inv, counts = xp.unique(flat, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False)
        values = a.reshape(-1)[first]
        inv = inv.reshape(a.shape)
    else:
        if not a.shape[d]:
            values = a.copy()
            inv = counts = xp.zeros((0,), _int64)
        else:
            # sort the slices along d lexicographically, then keep the first of each run
            m = xp.moveaxis(c, d, 0).reshape(a.shape[d], -1)
            order = xp.lexsort(m.T[::-1]) if m.shape[1] else xp.arange(m.shape[0])
            s = m[order]
            start = xp.ones(len(s), bool)
            start[1:] = (s[1:] != s[:-1]).any(axis=1) if m.shape[1] else False
            group = xp.cumsum(start) - 1
            inv = xp.empty(len(s), _int64)
            inv[order] = group
            counts = xp.diff(xp.append(xp.flatnonzero(start), len(s)))
            values = xp.take(a, order[start], axis=d)
    return _unique_extras(wrap(values), inv, counts, return_inverse, return_counts)


@register()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    a = input._data
    dt = _dtype_of(a)
    if dt.is_complex:
        raise NotImplementedError(f"\"unique_consecutive\" not implemented for '{_short(dt)}'")
    d = _unique_dim(a, dim, "unique")
    if d is not None and not a.shape[d]:
        empty = xp.zeros((0,), _int64)
        return _unique_extras(wrap(a.copy()), empty, empty, return_inverse, return_counts)
    c = compute_array(a)
    if d is None:
        m = c.reshape(-1, 1)
        src, axis = a.reshape(-1), 0
    else:
        m = xp.moveaxis(c, d, 0).reshape(a.shape[d], -1)
        src, axis = a, d
    n = m.shape[0]
    start = xp.ones(n, bool)
    if n > 1:
        start[1:] = (m[1:] != m[:-1]).any(axis=1) if m.shape[1] else False
    firsts = xp.flatnonzero(start)
    inv = xp.cumsum(start) - 1
    if d is None:
        inv = inv.reshape(a.shape)
    counts = xp.diff(xp.append(firsts, n))
    return _unique_extras(wrap(xp.take(src, firsts, axis=axis)), inv, counts,
                          return_inverse, return_counts)


# ----------------------------------------------------------------------------- counting

@register()
def bincount(input, weights=None, minlength=0):
    """Count occurrences of each non-negative integer (optionally summing ``weights``)."""
    a = input._data
    dt = _dtype_of(a)
    if dt._category != 1:
        raise not_implemented_for("bincount", dt)
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return wrap(xp.bincount(a, minlength=minlength).astype(_int64, copy=False))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # float32 weights keep float32; any other weights give float64, as in torch
    rdt = _dt.float32 if w.dtype == xp.float32 else _dt.float64
    r = xp.bincount(a, weights=w.astype(xp.float64), minlength=minlength)
    return wrap(r.astype(rdt.np))


@register()
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``bins`` equal-width bins over [min, max] (the data range if equal)."""
    a = input._data
    dt = _dtype_of(a)
    if not dt.is_floating_point:
        raise not_implemented_for("histogram" if dt._category == 1 else "linspace", dt)
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got "
                           f"{bins} for dimension 0")
    # torch bins in the input's own precision: (x - min) * bins / (max - min), each step
    # rounded to the dtype (NumPy's float16 and ml_dtypes' bfloat16 arithmetic round the same)
    c = a.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and c.size:
        lo, hi = float(c.min()), float(c.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (xp.isfinite(lo) and xp.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    keep = c[(c >= lo) & (c <= hi)]
    pos = ((keep - c.dtype.type(lo)) * bins / c.dtype.type(hi - lo)).astype(_int64)
    pos = xp.minimum(pos, bins - 1)
    r = xp.bincount(pos, minlength=bins).astype(xp.float64)
    return finish(wrap(result_array(r, dt)), out)


@register()
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """``n``-th forward difference along ``dim`` (xor for bool), after prepend/append."""
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, a.ndim)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        rdt = _dt.result_dtype(*parts)
        a = xp.concatenate([_as_nd(t, a, d).astype(rdt.np, copy=False) for t in parts],
                           axis=d)
    for _ in range(n):
        if not a.shape[d]:
            break
        hi = xp.take(a, xp.arange(1, a.shape[d]), axis=d)
        lo = xp.take(a, xp.arange(a.shape[d] - 1), axis=d)
        a = (hi != lo) if a.dtype == xp.bool_ else result_array(
            compute_array(hi) - compute_array(lo), _dtype_of(a))
    return wrap(a)


def _as_nd(t, ref, d):
    arr = t._data if isinstance(t, Tensor) else xp.asarray(t)
    if arr.ndim == 0:  # a scalar prepend/append becomes one slice along d
        shape = list(ref.shape)
        shape[d] = 1
        arr = xp.broadcast_to(arr, shape)
    return arr
