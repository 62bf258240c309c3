"""Statistics over observations: covariance and correlation matrices (cov, corrcoef).

Both are composites of differentiable ops, as in torch, so their gradients (and double
backward) come from those ops' formulas, and the result's grad_fn is the last op's node.
Rows of a 2-D input are variables, columns are observations; a 1-D input is one variable.
"""

from __future__ import annotations

import operator

from .._core import dtype as _dt
from .._core.warn import warn_user
from ._common import _SHORT, Tensor, register
from .creation import scalar_tensor
from .rearrange import stack
from .views import view_as_complex

__all__ = ["cov", "corrcoef"]


def _check_tensor(value, name, fn, position=None):
    if not isinstance(value, Tensor):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Tensor, not "
                        f"{type(value).__name__}")


def _check_at_most_2d(t, fn):
    if t.ndim > 2:
        raise RuntimeError(f"{fn}(): expected input to have two or fewer dimensions but got an "
                           f"input with {t.ndim} dimensions")


def _correction_arg(correction):
    # torch's parser takes an int here: bools and floats are refused, integer-likes indexed
    if isinstance(correction, (bool, float)) or not hasattr(type(correction), "__index__"):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__}")
    return operator.index(correction)


def _check_weights(w, name, n, kind_ok, kind):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if not kind_ok(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{_SHORT[w.dtype]} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not bool(w.min() >= 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _is_integral(dt):
    return dt._category == 1


def _is_real_floating(dt):
    return dt.is_floating_point


@register()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (observations in columns).

    ``correction`` is subtracted from the number of observations (1: Bessel's correction);
    ``fweights`` (integers) repeat observations, ``aweights`` (floats) weight them. A 1-D
    input gives a 0-d variance. With no degrees of freedom left the result is nan/inf, with a
    warning, as in torch.

    >>> torch.cov(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    _check_tensor(input, "input", "cov", position=1)
    correction = _correction_arg(correction)
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is not None:
            _check_tensor(w, name, "cov")
    _check_at_most_2d(input, "cov")
    if input.dtype is _dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.ndim == 2 else input.view(1, -1)
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, _is_integral, "integral")
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, _is_real_floating, "floating point")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = scalar_tensor(n, dtype=_dt.int64)
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (x if w is None else x * w).sum(1) / w_sum
    norm = _normalizer(w, w_sum, aweights, correction)
    centered = x - mean.unsqueeze(1)
    weighted = centered if w is None else centered * w
    return (centered.mm(weighted.t().conj()) / norm).squeeze()


def _normalizer(w, w_sum, aweights, correction):
    """Effective degrees of freedom; zeroed (so the result is inf/nan) when none are left."""
    if aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0):
        warn_user("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                  "than the number of observations.", UserWarning)
        norm.zero_()
    return norm


@register()
def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``: ``cov``
    scaled by the standard deviations, clipped to [-1, 1] (real and imaginary parts apart).

    >>> torch.corrcoef(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    _check_tensor(input, "input", "corrcoef", position=1)
    _check_at_most_2d(input, "corrcoef")
    c = cov(input)
    if c.ndim == 0:  # one variable: 1, or nan where its variance is 0, inf or nan
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.view(-1, 1)
    c = c / std.view(1, -1)
    if c.is_complex():
        return view_as_complex(stack((c.real.clip(-1, 1), c.imag.clip(-1, 1)), -1))
    return c.clip(-1, 1)


# ----------------------------------------------------------------------------- quantiles

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name, out):
    """Quantiles composed from sort, gather and lerp, so gradients flow as in torch."""
    import glasstorch as _g

    from ._common import finish, wrap_dim
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    q_tensor = isinstance(q, Tensor)
    if q_tensor:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = q.detach()._data.astype("float64").reshape(-1)
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qs = _g.tensor([float(q)], dtype=_dt.float64)._data
    if not ((qs >= 0) & (qs <= 1)).all():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    x = input.reshape(-1) if dim is None else input.movedim(wrap_dim(dim, input.dim()), -1)
    srt = _g.sort(x, -1).values  # NaN sorts last
    n = x.shape[-1]
    # q stays in the graph: the interpolation weights are differentiable in q, as in torch
    qv = q.reshape(-1) if q_tensor else _g.tensor(qs, dtype=input.dtype)
    # a slice whose answer is NaN reads a NaN element (the first sorted one when all are
    # NaN, else the last): the gradient goes to that element, as in torch
    if ignore_nan:
        count = (~_g.isnan(x)).sum(-1, keepdim=True).to(input.dtype)
        ranks = qv * (count - 1).clamp(min=0)
    else:
        ranks = _g.where(_g.isnan(srt[..., -1:]), float(n - 1),
                         (qv * (n - 1)).expand(*x.shape[:-1], len(qs)))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.floor().long().clamp(0, n - 1)
    above = ranks.ceil().long().clamp(0, n - 1)
    v_below, v_above = srt.gather(-1, below), srt.gather(-1, above)
    if interpolation == "midpoint":
        weights = _g.where(above > below, 0.5, 0.0).to(input.dtype)
    else:
        weights = ranks - below.to(input.dtype)
    r = _g.lerp(v_below, v_above, weights)
    if keepdim:
        if dim is None:
            r = r.reshape((1,) * input.dim() + (len(qs),))
        else:
            r = r.unsqueeze(wrap_dim(dim, input.dim()))
    r = r.movedim(-1, 0) if q_tensor else r.squeeze(-1)
    return finish(r, out) if out is not None else r


@register()
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of input (over all elements, or along ``dim``); a NaN in a slice
    makes its quantiles NaN. ``interpolation``: linear, lower, higher, midpoint, nearest."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile", out)


@register()
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaNs (a slice of only NaNs gives NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile", out)


__all__ += ["quantile", "nanquantile"]
