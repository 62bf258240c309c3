"""Reductions, scans, sorting and counting: sum/mean/std, max/argmax, cumsum, sort, topk,
median, unique, bincount, histc...

Every reduction runs as one NumPy reduction over whole axes. Low-precision floats
(float16/bfloat16) are computed in float32 and rounded once, like torch's CPU kernels;
comparisons on them are exact in float32, so sorting and max use the upcast copy too.
"""

from __future__ import annotations

import builtins
import math
import warnings

from .. import return_types as _rt
from .._core import dtype as _dt
from .._core.warn import warn_user
from ._common import (
    _SHORT,
    Node,
    Tensor,
    compute_array,
    compute_dtype,
    dims_arg,
    finish,
    float_result_dtype,
    int_arg,
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
    "count_nonzero", "bincount", "histc", "diff", "isin", "trapezoid", "trapz",
    "cumulative_trapezoid",
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
    if dtype is not None and dtype._category < 2 and needs_grad(input):
        # the result could not carry the gradient: torch refuses rather than dropping it
        raise RuntimeError(f"Autograd not support dtype: {_SHORT[dtype]}")
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
    done = [finish(r, o) for r, o in zip(res, out)]
    return tuple(done) if type(res) is tuple else type(res)(*done)


def _reject_complex(a, name, err=NotImplementedError):
    if a.dtype.kind == "c":
        if err is NotImplementedError:
            raise not_implemented_for(name, _dtype_of(a))
        raise err(f"{name}(): does not support complex input")


# ----------------------------------------------------------------------------- sums

def _add_reduce(arr, axes, keepdims, dtype):
    """``xp.sum`` without its Python wrapper: NumPy's floating-point warnings (inf - inf)
    are then raised from this module, where glasstorch's filter silences them as torch is
    silent, instead of from NumPy's own code, where a user's warnings stay untouched."""
    return xp.add.reduce(arr, axis=axes, keepdims=keepdims, dtype=dtype)


@register()
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` (all by default); bool and integers sum to int64."""
    a = _source(input, dtype)
    rdt = dtype or _int_to_long(input.dtype)
    axes = _axes(a, dim)
    r = _add_reduce(compute_array(a), axes, keepdim, compute_dtype(rdt))
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
    return unsqueeze_reduced(grad, axes, keepdim).expand(shape)


def unsqueeze_reduced(t, axes, keepdim):
    """Put the reduced ``axes`` back (size 1) so ``t`` broadcasts against the input."""
    if not keepdim and axes is not None:
        for ax in sorted(axes):
            t = t.unsqueeze(ax)
    return t


def _gt():
    import glasstorch
    return glasstorch


def _select_backward(grad, dim, indices, sizes, keepdim):
    """Gradient of values picked by ``indices`` along ``dim``: scattered into zeros."""
    if not sizes:  # a 0-d input: its only element was picked
        return grad
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return _gt().zeros(sizes, dtype=grad.dtype).scatter(dim, indices, grad)


def _evenly_distribute(grad, input, value):
    """Gradient of a full max/min/median: shared evenly among the elements equal to it."""
    mask = input.isnan() if bool(xp.isnan(value._data)) else input == value
    return (grad / mask.sum()) * mask


def _scale_by_count(grad, input, result, axes, keepdim):
    """amax/amin gradient: split evenly among the elements equal to the result."""
    mask = unsqueeze_reduced(result, axes, keepdim) == input
    count = mask.sum() if axes is None else mask.sum(list(axes), keepdim=True)
    return (unsqueeze_reduced(grad, axes, keepdim) / count) * mask


def _reversed_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


def _dims_saved(axes):
    return () if axes is None else tuple(axes)


class _NoDerivative(Node):
    """A node whose backward raises, like torch's for ops without a derivative formula."""

    _op = ""

    def backward(self, *grads):
        raise NotImplementedError(f"the derivative for '{self._op}' is not implemented.")


class Unique2Backward0(_NoDerivative):
    _op = "_unique2"


class UniqueDimBackward0(_NoDerivative):
    _op = "unique_dim"


class UniqueConsecutiveBackward0(_NoDerivative):
    _op = "unique_consecutive"


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
    c = compute_array(a)
    r = _add_reduce(xp.where(xp.isnan(c), 0, c) if c.dtype.kind == "f" else c, axes, keepdim,
                    compute_dtype(rdt))
    r = wrap(result_array(xp.asarray(r), rdt))
    if needs_grad(input):
        record(r, NansumBackward0, (input,), self=input, dim=_dims_saved(axes), keepdim=keepdim)
    return finish(r, out)


class NansumBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        axes = self._saved_dim if x.ndim else None
        return unsqueeze_reduced(grad, axes or None, self._saved_keepdim) * x.isnan().logical_not()


@register()
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product over ``dim`` (an int; all elements by default)."""
    a = _source(input, dtype)
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    rdt = dtype or _int_to_long(input.dtype)
    axes = _axes(a, dim)
    with xp.errstate(all="ignore"):
        r = xp.prod(compute_array(a), axis=axes, keepdims=keepdim,
                    dtype=compute_dtype(rdt))
        r = wrap(result_array(xp.asarray(r), rdt))  # may overflow to inf, as in torch
    if needs_grad(input):
        if dim is None:
            record(r, ProdBackward0, (input,), self=input, result=r)
        else:
            record(r, ProdBackward1, (input,), self=input, result=r,
                   dim=0 if axes is None else axes[0], keepdim=keepdim)
    return finish(r, out)


def _prod_backward(grad, x, result, dim):
    """d prod / dx along ``dim`` (grad and result already broadcastable against x)."""
    if not (x._data == 0).any():
        return grad * (result / x)
    # with zeros, use the products of the elements before and after each position
    n = x.shape[dim]
    if not n:
        return grad.expand_as(x)
    gt = _gt()
    shape = list(x.shape)
    shape[dim] = 1
    ones = gt.ones(shape, dtype=x.dtype)
    before = gt.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = gt.cat([ones, x.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return grad * (before * after)


class ProdBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        if x.ndim == 0:
            return grad
        flat = x.reshape(-1)
        return _prod_backward(grad, flat, self._saved_result, 0).reshape(x.shape)


class ProdBackward1(Node):
    def backward(self, grad):
        x = self._saved_self
        if x.ndim == 0:
            return grad
        d, keep = self._saved_dim, self._saved_keepdim
        res = self._saved_result
        if not keep:
            grad, res = grad.unsqueeze(d), res.unsqueeze(d)
        return _prod_backward(grad, x, res, d)


def _mean_array(a, axes, keepdim, rdt):
    """sum / count in the compute dtype (0/0 gives NaN for empty, like torch)."""
    s = _add_reduce(compute_array(a), axes, keepdim, compute_dtype(rdt))
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
    if needs_grad(input):  # torch composes it: nansum(...) / count, a DivBackward0
        count = input.isnan().logical_not().sum(dim, keepdim)
        return finish(nansum(input, dim, keepdim, dtype=dtype) / count, out)
    a = compute_array(_source(input, dtype))
    nan = xp.isnan(a)
    s = _add_reduce(xp.where(nan, 0, a), axes, keepdim, compute_dtype(rdt))
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
        # one correction step makes the mean exact for constant slices (deviations exactly
        # 0, as torch's Welford gives), which std's gradient at 0 depends on
        m = m + xp.sum(c - m, axis=axes, keepdims=True) / n
        dev = c - m
        sq = (dev.real * dev.real + dev.imag * dev.imag) if dt.is_complex else dev * dev
        dof = builtins.max(n - correction, 0)
        if dof <= 0:
            warn_user(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      f"less than the reduction factor (input numel divided by output "
                      f"numel).", UserWarning)
        v = xp.asarray(xp.sum(sq, axis=axes, keepdims=keepdim) / dof)
    if not keepdim:
        m = m.reshape(v.shape)
    return v, xp.asarray(m), dt.to_real(), dt


@register()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance with ``correction`` (default 1, Bessel); legacy ``unbiased`` also accepted."""
    dim, correction = _var_args(dim, unbiased, correction, "var")
    v, _, rdt, _ = _var_mean(input, dim, correction, keepdim, "var")
    r = wrap(result_array(v, rdt))
    if needs_grad(input):
        record(r, VarBackward0, (input,), self=input, dim=_var_dims(input, dim),
               correction=correction, keepdim=keepdim)
    return finish(r, out)


def _var_dims(input, dim):
    """The reduced axes as saved for backward; None for a full reduction given no dim."""
    return None if dim is None else _dims_saved(_axes(input._data, dim))


def _var_backward(grad, x, dims, correction, keepdim):
    if x.ndim == 0 or dims is None:
        dof = x.numel() - correction
        if dof <= 0:
            # 2 / 0: infinite, or NaN where the deviation is 0, as in torch
            a = x._data
            with xp.errstate(all="ignore"):
                fac = xp.where(a == a.mean(), xp.nan, xp.inf).astype(a.dtype)
            return grad * wrap(fac)
        return (2.0 / dof) * grad * (x - x.mean())
    dof = _count(x._data, dims) - correction
    scale = 2.0 / dof if dof else math.inf
    return scale * unsqueeze_reduced(grad, dims, keepdim) * (x - x.mean(dims, keepdim=True))


def _std_backward(grad, result, x, dims, correction, keepdim):
    g = (grad / (result * 2)).masked_fill(result == 0, 0)
    return _var_backward(g, x, dims, correction, keepdim)


def _mean_backward(grad, x, dims, keepdim):
    if x.ndim == 0 or dims is None:
        return grad.expand(x.shape) / x.numel()
    return expand_reduced(grad, x.shape, dims, keepdim) / _count(x._data, dims)


class VarBackward0(Node):
    def backward(self, grad):
        return _var_backward(grad, self._saved_self, self._saved_dim, self._saved_correction,
                             self._saved_keepdim)


class StdBackward0(Node):
    def backward(self, grad):
        return _std_backward(grad, self._saved_result, self._saved_self, self._saved_dim,
                             self._saved_correction, self._saved_keepdim)


class VarMeanBackward0(Node):
    def backward(self, gvar, gmean):
        x, dims, keep = self._saved_self, self._saved_dim, self._saved_keepdim
        return (_var_backward(gvar, x, dims, self._saved_correction, keep)
                + _mean_backward(gmean, x, dims, keep))


class StdMeanBackward0(Node):
    def backward(self, gstd, gmean):
        x, dims, keep = self._saved_self, self._saved_dim, self._saved_keepdim
        return (_std_backward(gstd, self._saved_result0, x, dims, self._saved_correction, keep)
                + _mean_backward(gmean, x, dims, keep))


@register()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: sqrt of :func:`var`."""
    dim, correction = _var_args(dim, unbiased, correction, "std")
    v, _, rdt, _ = _var_mean(input, dim, correction, keepdim, "std")
    r = wrap(result_array(xp.sqrt(v), rdt))
    if needs_grad(input):
        record(r, StdBackward0, (input,), self=input, result=r, dim=_var_dims(input, dim),
               correction=correction, keepdim=keepdim)
    return finish(r, out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` computed together."""
    dim, correction = _var_args(dim, unbiased, correction, "var_mean")
    v, m, rdt, mdt = _var_mean(input, dim, correction, keepdim, "var_mean")
    r = wrap(result_array(v, rdt)), wrap(result_array(m, mdt))
    if needs_grad(input):
        record(r, VarMeanBackward0, (input,), self=input, dim=_var_dims(input, dim),
               correction=correction, keepdim=keepdim)
    return r


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` computed together."""
    dim, correction = _var_args(dim, unbiased, correction, "std_mean")
    v, m, rdt, mdt = _var_mean(input, dim, correction, keepdim, "std_mean")
    r = wrap(result_array(xp.sqrt(v), rdt)), wrap(result_array(m, mdt))
    if needs_grad(input):
        record(r, StdMeanBackward0, (input,), self=input, result0=r[0],
               dim=_var_dims(input, dim), correction=correction, keepdim=keepdim)
    return r


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
def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """Largest element; with ``dim``, ``(values, indices)``; with a tensor, :func:`maximum`."""
    if other is not None:  # torch.max(input, other=...)
        _one_of_dim_other("max", dim, keepdim)
        dim = other
    if isinstance(dim, Tensor):
        import glasstorch
        return glasstorch.maximum(input, dim, out=out)
    if dim is None:
        return finish(_record_all(_extreme_all(input, "max_all", xp.max), input,
                                  MaxBackward1), out)
    return _finish_tuple(_record_select(
        _extreme_dim(input, dim, keepdim, "max", xp.argmax, _rt.max), input, dim, keepdim,
        MaxBackward0), out)


@register()
def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """Smallest element; with ``dim``, ``(values, indices)``; with a tensor, :func:`minimum`."""
    if other is not None:  # torch.min(input, other=...)
        _one_of_dim_other("min", dim, keepdim)
        dim = other
    if isinstance(dim, Tensor):
        import glasstorch
        return glasstorch.minimum(input, dim, out=out)
    if dim is None:
        return finish(_record_all(_extreme_all(input, "min_all", xp.min), input,
                                  MinBackward1), out)
    return _finish_tuple(_record_select(
        _extreme_dim(input, dim, keepdim, "min", xp.argmin, _rt.min), input, dim, keepdim,
        MinBackward0), out)


def _one_of_dim_other(name, dim, keepdim):
    if dim is not None or keepdim:
        raise TypeError(f"{name}() received an invalid combination of arguments: 'other' "
                        f"cannot be given with 'dim' or 'keepdim'")


def _record_all(r, input, node):
    """A full max/min/median: the gradient goes evenly to the elements equal to ``r``."""
    if needs_grad(input):
        record(r, node, (input,), self=input, result=r)
    return r


def _record_select(res, input, dim, keepdim, node):
    """(values, indices) along ``dim``: the gradient goes to the picked elements."""
    if needs_grad(input):
        d = wrap_dim(int(dim), input.ndim)
        record(tuple(res), node, (input,), dim=d, indices=res[1].detach(), keepdim=keepdim,
               self_sym_sizes=input.shape)
    return res


class _SelectBackward(Node):
    def backward(self, grad, _indices_grad=None):
        return _select_backward(grad, self._saved_dim, self._saved_indices,
                                self._saved_self_sym_sizes, self._saved_keepdim)


class _SortLikeBackward(Node):
    def backward(self, grad, _indices_grad=None):
        return _select_backward(grad, self._saved_dim, self._saved_indices,
                                self._saved_self_sym_sizes, True)


class _EvenBackward(Node):
    def backward(self, grad):
        return _evenly_distribute(grad, self._saved_self, self._saved_result)


class MaxBackward0(_SelectBackward):
    pass


class MinBackward0(_SelectBackward):
    pass


class KthvalueBackward0(_SelectBackward):
    pass


class MedianBackward1(_SelectBackward):
    pass


class NanmedianBackward1(_SelectBackward):
    pass


class ModeBackward0(_SelectBackward):
    pass


class SortBackward0(_SortLikeBackward):
    pass


class SortBackward1(_SortLikeBackward):
    pass


class TopkBackward0(_SortLikeBackward):
    pass


class MaxBackward1(_EvenBackward):
    pass


class MinBackward1(_EvenBackward):
    pass


class MedianBackward0(_EvenBackward):
    pass


class NanmedianBackward0(_EvenBackward):
    pass


def _amax_like(input, dim, keepdim, name, fn):
    a = input._data
    axes = _axes(a, dim)
    _empty_check(a, axes, name)
    if a.dtype.kind == "c" and a.size:
        raise not_implemented_for(f"{name[1:]}_values", _dtype_of(a))
    r = fn(compute_array(a), axis=axes, keepdims=keepdim)
    r = wrap(result_array(xp.asarray(r), _dtype_of(a)))
    if needs_grad(input):
        record(r, AmaxBackward0 if name == "amax" else AminBackward0, (input,), self=input,
               result=r, dim=_dims_saved(axes), keepdim=keepdim)
    return r


class AmaxBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        return _scale_by_count(grad, x, self._saved_result,
                               (self._saved_dim or None) if x.ndim else None,
                               self._saved_keepdim)


class AminBackward0(AmaxBackward0):
    pass


@register()
def amax(input, dim=None, keepdim=False, *, out=None):
    """Maximum over ``dim`` (int or tuple; all by default), NaN propagating."""
    return finish(_amax_like(input, dim, keepdim, "amax", xp.max), out)


@register()
def amin(input, dim=None, keepdim=False, *, out=None):
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
    lo = wrap(result_array(xp.asarray(xp.min(c, axis=axes, keepdims=keepdim)), dt))
    hi = wrap(result_array(xp.asarray(xp.max(c, axis=axes, keepdims=keepdim)), dt))
    res = _rt.aminmax(lo, hi)
    if needs_grad(input):
        record(tuple(res), AminmaxBackward0, (input,), self=input, min=lo, max=hi,
               dim=None if axes is None else axes[0], keepdim=keepdim)
    return _finish_tuple(res, out)


class AminmaxBackward0(Node):
    def backward(self, gmin, gmax):
        x, keep = self._saved_self, self._saved_keepdim
        d = self._saved_dim
        axes = None if d is None else (d,)
        return (_scale_by_count(gmin, x, self._saved_min, axes, keep)
                + _scale_by_count(gmax, x, self._saved_max, axes, keep))


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
def count_nonzero(input, *dims, dim=None):
    """Number of nonzero elements along ``dim`` (int or tuple), as int64; the method also
    takes the dims as varargs (``x.count_nonzero(0, 1)``)."""
    if dims:
        if dim is not None:
            raise TypeError("count_nonzero() got multiple values for argument 'dim'")
        dim = dims[0] if len(dims) == 1 else dims
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
    with xp.errstate(all="ignore"):
        if not c.size:
            s = xp.log(xp.sum(xp.exp(c), axis=axes, keepdims=keepdim))
        else:
            m = xp.max(c.real, axis=axes, keepdims=True)
            # an infinite max (or NaN) is not a usable shift: shift by 0 there instead
            m = xp.where(xp.isfinite(m), m, 0)
            s = xp.log(xp.sum(xp.exp(c - m), axis=axes, keepdims=keepdim)) + (
                m if keepdim else m.reshape(xp.sum(m, axis=axes).shape))
    r = wrap(result_array(xp.asarray(s), dt))
    if needs_grad(input):
        record(r, LogsumexpBackward0, (input,), self=input, result=r, dim=_dims_saved(axes),
               keepdim=keepdim)
    return finish(r, out)


class LogsumexpBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        axes, keep = (self._saved_dim or None) if x.ndim else None, self._saved_keepdim
        return (unsqueeze_reduced(grad, axes, keep)
                * (x - unsqueeze_reduced(self._saved_result, axes, keep)).exp())


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
    r = _scan(input, dim, dtype, xp.add)
    if needs_grad(input):
        record(r, CumsumBackward0, (input,), dim=wrap_dim(dim, input.ndim))
    return finish(r, out)


class CumsumBackward0(Node):
    def backward(self, grad):
        d = self._saved_dim
        if grad.numel() <= 1 or grad.shape[d] == 1:
            return grad
        return _reversed_cumsum(grad, d)


@register()
def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``; bool and integers accumulate in int64."""
    r = _scan(input, dim, dtype, xp.multiply)
    if needs_grad(input):
        record(r, CumprodBackward0, (input,), dim=wrap_dim(dim, input.ndim), self=input,
               result=r)
    return finish(r, out)


class CumprodBackward0(Node):
    def backward(self, grad):
        x, d = self._saved_self, self._saved_dim
        if x.numel() <= 1 or x.shape[d] == 1:
            return grad
        out = self._saved_result
        if not (x._data == 0).any():
            return _reversed_cumsum(out * grad, d) / x
        # with zeros: grad_i = prod(x[:i]) * s_i, where s_i = g_i + x_{i+1} * s_{i+1}
        n = x.shape[d]
        gt = _gt()
        shape = list(x.shape)
        shape[d] = 1
        before = gt.cat([gt.ones(shape, dtype=x.dtype), x.narrow(d, 0, n - 1)], d).cumprod(d)
        s = grad.narrow(d, n - 1, 1)
        parts = [s]
        for i in range(n - 2, -1, -1):
            s = grad.narrow(d, i, 1) + x.narrow(d, i + 1, 1) * s
            parts.append(s)
        return before * gt.cat(parts[::-1], d)


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


def _record_cum(res, input, dim, node):
    if needs_grad(input):
        record(tuple(res), node, (input,), dim=wrap_dim(dim, input.ndim),
               indices=res[1].detach(), self=input)
    return res


class CummaxBackward0(Node):
    def backward(self, grad, _indices_grad=None):
        x = self._saved_self
        if x.ndim == 0 or not x.numel():
            return grad
        return _gt().zeros(x.shape, dtype=grad.dtype).scatter_add(
            self._saved_dim, self._saved_indices, grad)


class CumminBackward0(CummaxBackward0):
    pass


@register()
def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the index where it was reached."""
    return _finish_tuple(_record_cum(_cum_extreme(input, dim, xp.maximum, "cummax",
                                                  _rt.cummax), input, dim, CummaxBackward0),
                         out)


@register()
def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the index where it was reached."""
    return _finish_tuple(_record_cum(_cum_extreme(input, dim, xp.minimum, "cummin",
                                                  _rt.cummin), input, dim, CumminBackward0),
                         out)


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
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, LogcumsumexpBackward0, (input,), dim=d, self=input, result=r)
    return finish(r, out)


class LogcumsumexpBackward0(Node):
    def backward(self, grad):
        if grad.ndim == 0 or not grad.numel():
            return grad
        x, r, d = self._saved_self, self._saved_result, self._saved_dim
        # sum_{k>=i} g_k exp(x_i - r_k), split by the sign of g so logs apply (stable)
        lowest = float(xp.finfo(grad._data.dtype).min)
        log_abs = grad.abs().log()
        pos = log_abs.masked_fill(grad <= 0, lowest)
        neg = log_abs.masked_fill(grad >= 0, lowest)

        def rev_lcse(t):
            return t.flip(d).logcumsumexp(d).flip(d)

        return (rev_lcse(pos - r) + x).exp() - (rev_lcse(neg - r) + x).exp()


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
def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    """Sorted values and their indices along ``dim`` (stable; NaN last ascending)."""
    a = input._data
    d = _one_dim(a, dim)
    c = _sort_keys(a)
    if d is None:
        res = _rt.sort(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    else:
        idx = _argsort(c, d, descending)
        res = _rt.sort(wrap(xp.take_along_axis(a, idx, d)), wrap(idx))
    # the overload taking ``stable=`` has its own node, as in torch
    node = SortBackward0 if stable is None else SortBackward1
    return _finish_tuple(_record_select(res, input, dim, True, node), out)


@register()
def argsort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Indices that sort ``input`` along ``dim``."""
    a = input._data
    d = _one_dim(a, dim)
    c = _sort_keys(a)
    return finish(wrap(xp.zeros((), _int64) if d is None else _argsort(c, d, descending)), out)


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
        res = _rt.topk(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    else:
        idx = xp.take(_argsort(c, d, largest), xp.arange(k), axis=d)
        res = _rt.topk(wrap(xp.take_along_axis(a, idx, d)), wrap(idx))
    return _finish_tuple(_record_select(res, input, dim, True, TopkBackward0), out)


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
        return finish(_record_all(_median_all(input, _median_pos, "median"), input,
                                  MedianBackward0), out)
    return _finish_tuple(_record_select(
        _select(input, dim, keepdim, _median_pos, _rt.median, "median"), input, dim, keepdim,
        MedianBackward1), out)


@register()
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Lower median of the non-NaN elements; with ``dim``, ``(values, indices)``."""
    if dim is None:
        return finish(_record_all(_median_all(input, _nanmedian_pos, "median"), input,
                                  NanmedianBackward0), out)
    return _finish_tuple(_record_select(
        _select(input, dim, keepdim, _nanmedian_pos, _rt.nanmedian, "median"), input, dim,
        keepdim, NanmedianBackward1), out)


@register()
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    k = int_arg("kthvalue", "k", 2, k)
    a = input._data
    d = _one_dim(a, dim)
    n = 1 if d is None else a.shape[d]
    if not n:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension "
                           f"{0 if d is None else d}")
    res = _select(input, dim, keepdim, lambda n, nn: xp.full(nn.shape, k - 1), _rt.kthvalue,
                  "kthvalue")
    return _finish_tuple(_record_select(res, input, dim, keepdim, KthvalueBackward0), out)


@register()
def mode(input, dim=-1, keepdim=False, *, out=None):
    """Most frequent value along ``dim`` (the smallest on ties) and its last index."""
    return _finish_tuple(_record_select(_mode(input, dim, keepdim), input, dim, keepdim,
                                        ModeBackward0), out)


def _mode(input, dim, keepdim):
    a = input._data
    dt = _dtype_of(a)
    d = _one_dim(a, dim)
    if d is None:
        return _rt.mode(wrap(a.copy()), wrap(xp.zeros((), _int64)))
    n = a.shape[d]
    if not n:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    c = xp.moveaxis(compute_array(a), d, -1)
    if not c.size:  # other dims empty: an empty result
        shape = c.shape[:-1]
        vals, idx = xp.empty(shape, a.dtype), xp.zeros(shape, _int64)
        if keepdim:
            vals, idx = xp.expand_dims(vals, d), xp.expand_dims(idx, d)
        return _rt.mode(wrap(vals), wrap(idx))
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
    return _rt.mode(wrap(vals), wrap(idx))


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
    values = wrap(values)
    if needs_grad(input):
        record(values, Unique2Backward0 if d is None else UniqueDimBackward0, (input,))
    return _unique_extras(values, inv, counts, return_inverse, return_counts)


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
        return _unique_extras(_record_unique_consecutive(wrap(a.copy()), input), empty, empty,
                              return_inverse, return_counts)
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
    values = _record_unique_consecutive(wrap(xp.take(src, firsts, axis=axis)), input)
    return _unique_extras(values, inv, counts, return_inverse, return_counts)


def _record_unique_consecutive(values, input):
    if needs_grad(input):
        record(values, UniqueConsecutiveBackward0, (input,))
    return values


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a Python number,
    not both), compared in their promoted dtype; ``invert=True`` negates. A bool tensor."""
    el_t, te_t = isinstance(elements, Tensor), isinstance(test_elements, Tensor)
    if not (el_t or te_t) or not (el_t or _is_number(elements)) or \
            not (te_t or _is_number(test_elements)):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one of "
            f"(Tensor elements, Tensor test_elements), (Number element, Tensor test_elements) "
            f"or (Tensor elements, Number test_element)")
    for v in (elements, test_elements):
        dt = v.dtype if isinstance(v, Tensor) else _dt.scalar_dtype(v)
        if dt is _bool or dt.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_short(dt)}")
    common = _dt.result_dtype(elements, test_elements)
    if common._limited:
        raise NotImplementedError(f"\"isin_default_cpu\" not implemented for "
                                  f"'{_dt.scalar_type_name(common)}'")
    if out is not None and isinstance(out, Tensor) and out.dtype is not _bool:
        raise RuntimeError(f"Expected out tensor to have dtype bool, but got "
                           f"{_short(out.dtype).lower()} instead")
    cnp = compute_dtype(common)
    a = xp.asarray(elements._data if el_t else elements).astype(cnp, copy=False)
    b = xp.asarray(test_elements._data if te_t else test_elements).astype(cnp, copy=False)
    # NaN is never found, as NaN != NaN in torch's comparison
    r = xp.isin(a, b, assume_unique=bool(assume_unique), invert=bool(invert))
    return finish(wrap(xp.asarray(r, dtype=xp.bool_)), out)


def _is_number(v):
    return isinstance(v, (bool, int, float, complex)) or isinstance(v, xp.generic)


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
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """``n``-th forward difference along ``dim`` (xor for bool), after prepend/append."""
    if out is not None:
        return finish(diff(input, n, dim, prepend, append), out)
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, a.ndim)
    if needs_grad(input, prepend, append):
        return _diff_graph(input, n, d, prepend, append)
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


def _diff_graph(input, n, d, prepend, append):
    """diff composed of recorded ops (cat, narrow, sub), giving torch's graph."""
    x = input
    if prepend is not None or append is not None:
        parts = []
        for t in (prepend, input, append):
            if t is None:
                continue
            if not isinstance(t, Tensor):
                t = wrap(xp.asarray(t))
            if t.ndim == 0:
                shape = list(input.shape)
                shape[d] = 1
                t = t.expand(shape)
            parts.append(t)
        x = _gt().cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if not m:
            break
        x = x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1)
    return x


def _as_nd(t, ref, d):
    arr = t._data if isinstance(t, Tensor) else xp.asarray(t)
    if arr.ndim == 0:  # a scalar prepend/append becomes one slice along d
        shape = list(ref.shape)
        shape[d] = 1
        arr = xp.broadcast_to(arr, shape)
    return arr


# ----------------------------------------------------------------------------- trapezoid
# Composed of recorded ops (select, narrow, add, mul, sum, cumsum) in torch's order, so
# autograd, dtypes and grad_fn names come out as torch's; the final multiply or divide by a
# Python number is torch's Scalar overload (MulBackward1 / DivBackward1).

class MulBackward1(Node):
    """Gradient of ``tensor * number`` (torch's ``mul.Scalar``)."""

    def backward(self, grad):
        return grad * self._saved_other


class DivBackward1(Node):
    """Gradient of ``tensor / number`` (torch's ``div.Scalar``)."""

    def backward(self, grad):
        return grad / self._saved_other


def _scalar_op(t, other, divide):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        r = t / other if divide else t * other
    if needs_grad(t):
        record(r, DivBackward1 if divide else MulBackward1, (t,), other=other)
    return r


def _trapezoid_args(name, y, x, dx, dim):
    if not isinstance(y, Tensor):
        raise TypeError(f"{name}(): argument 'y' (position 1) must be Tensor, not "
                        f"{type(y).__name__}")
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        got = ", ".join([type(y).__name__, type(x).__name__] +
                        ([f"dx={type(dx).__name__}"] if dx is not None else []))
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of: (Tensor y, Tensor x, *, int dim = -1) "
                        f"or (Tensor y, *, Number dx = 1, int dim = -1)")
    if dx is None:
        dx = 1
    elif x is None and (isinstance(dx, (bool, complex)) or not _is_number(dx)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return x, dx


def _spacing(name, y, x, d):
    """The differences of ``x`` along ``d``, shaped to broadcast against ``y``'s."""
    if y.dtype is _bool or x.dtype is _bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = x.view(shape)
    elif x.ndim < y.ndim:
        x = x.view((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    m = x.shape[d]
    return x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1) if m else x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integral of ``y`` along ``dim`` by the trapezoidal rule, over sample points ``x`` (a
    tensor) or a constant spacing ``dx`` (default 1). An empty ``dim`` integrates to 0."""
    x, dx = _trapezoid_args("trapezoid", y, x, dx, dim)
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return wrap(xp.zeros(y.shape[:d] + y.shape[d + 1:], dtype=y._data.dtype))
    if x is None:
        if y.dtype is _bool:
            raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not "
                               "supported")
        inner = y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5
        return _scalar_op(inner, float(dx), divide=False)
    h = _spacing("trapezoid", y, x, d)
    total = (h * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d)
    return _scalar_op(total, 2.0, divide=True)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid` (``trapz(y, x, *, dim)`` or ``trapz(y, *, dx=1, dim)``)."""
    if isinstance(dx, complex) or (dx is not None and not _is_number(dx)):
        # trapz's dx is a C double (trapezoid's a Scalar): complex is a signature mismatch
        raise TypeError(f"trapz(): argument 'dx' must be float, not {type(dx).__name__}")
    return trapezoid(y, x, dx=None if dx is None else float(dx), dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoidal integral of ``y`` along ``dim`` (one value fewer than ``y`` has
    there), over sample points ``x`` or a constant spacing ``dx`` (default 1)."""
    x, dx = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y.dtype is _bool and x is None:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool "
                           "is not supported")
    if x is not None and (y.dtype is _bool or x.dtype is _bool):
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                           "bool is not supported")
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    m = builtins.max(n - 1, 0)
    pairs = y.narrow(d, 0, m) + y.narrow(d, builtins.min(1, n), m)
    if x is None:
        return (float(dx) / 2.0 * pairs).cumsum(d)
    h = _spacing("cumulative_trapezoid", y, x, d)
    return _scalar_op((h * pairs).cumsum(d), 2.0, divide=True)
