"""Helpers shared by the distributions: broadcasting parameters, logits <-> probs,
``lazy_property``, and the special functions (lgamma, digamma, trigamma, gamma sampling with
implicit reparameterisation gradients) the densities need.

The special functions are private differentiable ops: a float64 NumPy kernel, the result
rounded once to the input's float dtype, and a ``Node`` whose backward is written with
glasstorch ops.
"""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

import glasstorch as torch
from glasstorch._ops._common import Node, Tensor, needs_grad, record, wrap, xp

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcast tensors and numbers to one shape; numbers become tensors of the tensors'
    dtype (or the default dtype)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, int, float)) and not hasattr(v, "__torch_function__"):
            raise ValueError("Input arguments must all be instances of Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    if len(tensors) < len(values):
        dtype = tensors[0].dtype if tensors else torch.get_default_dtype()
        values = [v if isinstance(v, Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    return torch.broadcast_tensors(*values)



def _set_probs_or_logits(dist, probs, logits, *others):
    """Set ``dist.probs`` or ``dist.logits`` (exactly one must be given), broadcast with
    ``others``: returns (the broadcast others, the parameter, whether it was a Python
    number)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    *rest, param = broadcast_all(*others, value)
    setattr(dist, name, param)
    dist._param = param
    return rest, param, isinstance(value, Number)


def _expand_probs_or_logits(new, dist, batch_shape):
    """Give ``new`` whichever of ``dist``'s probs and logits are computed, expanded to
    ``batch_shape``."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(batch_shape))
            new._param = getattr(new, name)

def _standard_normal(shape, dtype, device=None):
    return torch.randn(shape, dtype=dtype)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid when binary, else softmax over the last dim."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into the open interval (0, 1) by machine epsilon."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (log-odds when binary, log-probabilities otherwise)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    # Accessed on the class, a lazy_property looks like a property (for docs and
    # ``_validate_args``'s lookup) while keeping its type.
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not torch.jit.is_scripting() and diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = xp.tril_indices(n, k=diag)
    return mat[..., torch.tensor(rows), torch.tensor(cols)]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of ``tril_matrix_to_vec``."""
    k = vec.shape[-1]
    n = round((math.sqrt(1 + 8 * k) - 1) / 2 - diag)
    if (n + diag) * (n + diag + 1) // 2 != k:
        raise ValueError("The size of last dimension is " + str(k) + " which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    rows, cols = xp.tril_indices(n, k=diag)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., torch.tensor(rows), torch.tensor(cols)] = vec
    return mat


# ----------------------------------------------------------------------------- special functions
# Kernels work in float64. Small arguments are shifted up by recurrence until x >= 10, where
# the asymptotic series are accurate to ~1e-12; negative arguments use reflection.

_SHIFT = 10.0


def _shift_up(x):
    """(shifted x, per-step terms): x + k for the k steps needed to reach _SHIFT."""
    steps = xp.clip(xp.ceil(_SHIFT - x), 0, None)
    steps = xp.where(xp.isfinite(steps), steps, 0)
    n = int(steps.max()) if steps.size else 0
    ks = xp.arange(n, dtype=xp.float64).reshape((n,) + (1,) * x.ndim)
    terms = x + ks                      # x, x+1, ... (masked where beyond each one's steps)
    mask = ks < steps
    return x + steps, terms, mask


def _lgamma_np(x):
    x = xp.asarray(x, xp.float64)
    neg = x < 0.5
    xr = xp.where(neg, 1.0 - x, x)
    z, terms, mask = _shift_up(xr)
    logs = xp.where(mask, xp.log(xp.where(mask, terms, 1.0)), 0.0).sum(0) if mask.size else 0.0
    with xp.errstate(all="ignore"):
        zi = 1.0 / z
        zi2 = zi * zi
        series = zi * (1 / 12 - zi2 * (1 / 360 - zi2 * (1 / 1260 - zi2 / 1680)))
        r = (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi) + series - logs
        s = xp.abs(xp.sin(math.pi * x))
        refl = math.log(math.pi) - xp.log(s) - r
    refl = xp.where((x <= 0) & (x == xp.floor(x)), xp.inf, refl)
    out = xp.where(neg, refl, r)
    return xp.where(xp.isposinf(x) | xp.isneginf(x), xp.inf, out)


def _digamma_np(x):
    x = xp.asarray(x, xp.float64)
    neg = x < 0.5
    xr = xp.where(neg, 1.0 - x, x)
    z, terms, mask = _shift_up(xr)
    with xp.errstate(all="ignore"):
        inv = xp.where(mask, 1.0 / xp.where(mask, terms, 1.0), 0.0).sum(0) if mask.size else 0.0
        zi2 = 1.0 / (z * z)
        r = xp.log(z) - 0.5 / z - zi2 * (1 / 12 - zi2 * (1 / 120 - zi2 * (1 / 252 - zi2 * (
            1 / 240 - zi2 / 132)))) - inv
        refl = r - math.pi / xp.tan(math.pi * x)
    out = xp.where(neg, refl, r)
    out = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, out)
    out = xp.where(x == 0, -xp.inf, out)         # torch: digamma(0) = -inf
    return xp.where(xp.isposinf(x), xp.inf, out)


def _trigamma_np(x):
    x = xp.asarray(x, xp.float64)
    neg = x < 0.5
    xr = xp.where(neg, 1.0 - x, x)
    z, terms, mask = _shift_up(xr)
    with xp.errstate(all="ignore"):
        inv = xp.where(mask, 1.0 / xp.where(mask, terms, 1.0) ** 2, 0.0).sum(0) \
            if mask.size else 0.0
        zi = 1.0 / z
        zi2 = zi * zi
        r = zi + 0.5 * zi2 + zi * zi2 * (1 / 6 - zi2 * (1 / 30 - zi2 * (1 / 42 - zi2 / 30))) + inv
        refl = (math.pi / xp.sin(math.pi * x)) ** 2 - r
    out = xp.where(neg, refl, r)
    return xp.where((x <= 0) & (x == xp.floor(x)), xp.inf, out)


def _float_dtype(t):
    d = t.dtype
    return d if d.is_floating_point else torch.get_default_dtype()


def _apply(kernel, t):
    dt = _float_dtype(t)
    return wrap(xp.asarray(kernel(t._data), dt.np))


class LgammaBackward0(Node):
    def backward(self, grad):
        return grad * _digamma(self._saved_self)


class DigammaBackward0(Node):
    def backward(self, grad):
        return grad * _trigamma(self._saved_self)


def _lgamma(t):
    """log|Gamma(t)|, elementwise (differentiable)."""
    r = _apply(_lgamma_np, t)
    if needs_grad(t):
        record(r, LgammaBackward0, (t,), self=t)
    return r


def _digamma(t):
    """The digamma function psi(t) = d/dt lgamma(t) (differentiable)."""
    r = _apply(_digamma_np, t)
    if needs_grad(t):
        record(r, DigammaBackward0, (t,), self=t)
    return r


def _trigamma(t):
    """psi'(t) (not differentiable further)."""
    return _apply(_trigamma_np, t)


def _mvlgamma(t, p):
    """Multivariate log-gamma of dimension ``p``."""
    shifts = torch.arange(p, dtype=t.dtype) * -0.5
    return _lgamma(t.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


# ----------------------------------------------------------------------------- gamma sampling

def _pgamma_np(a, x):
    """Regularised lower incomplete gamma P(a, x) (float64, vectorised)."""
    small = x < a + 1
    n_iter = int(min(10 * math.sqrt(max(float(a.max(initial=1.0)), 1.0)) + 60, 20000))
    with xp.errstate(all="ignore"):
        log_front = a * xp.log(x) - x - _lgamma_np(a)
        # series: P = front/a * sum_n x^n / ((a+1)...(a+n))
        term = xp.ones_like(x)
        total = xp.ones_like(x)
        for k in range(1, n_iter):
            term = term * x / (a + k)
            total = total + term
            if not (term > 1e-17 * total)[small].any():
                break
        p_series = xp.exp(log_front) / a * total
        # continued fraction for Q (modified Lentz)
        tiny = 1e-300
        b = x + 1 - a
        c = xp.full_like(x, 1 / tiny)
        d = 1 / xp.where(b == 0, tiny, b)
        h = d.copy()
        for i in range(1, n_iter):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = xp.where(xp.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = xp.where(xp.abs(c) < tiny, tiny, c)
            d = 1 / d
            delta = d * c
            h = h * delta
            if not (xp.abs(delta - 1) > 1e-16)[~small].any():
                break
        q_cf = xp.exp(log_front) * h
    return xp.where(small, p_series, 1 - q_cf)


def _standard_gamma_grad_np(x, a):
    """d x / d alpha for x ~ Gamma(alpha, 1) with the quantile P(alpha, x) held fixed
    (implicit reparameterisation): -(dP/dalpha) / pdf, exactly differentiated.

    Below alpha + 1, P = x^a e^-x S / Gamma(a) with S = sum_n x^n / (a (a+1) ... (a+n)), so
    dx/da = -x (S (log x - digamma(a)) + dS/da); above, Q = 1 - P = x^a e^-x H / Gamma(a)
    with H Legendre's continued fraction (modified Lentz), and dx/da = x (H (log x -
    digamma(a)) + dH/da). dS/da and dH/da are carried through the recurrences alongside
    their values, so each side is evaluated where it has no cancellation."""
    x = xp.maximum(xp.asarray(x, xp.float64), 1e-300)
    a = xp.asarray(a, xp.float64)
    x, a = xp.broadcast_arrays(x, a)
    shape = x.shape
    x, a = x.ravel(), a.ravel()
    out = xp.zeros(x.shape)
    with xp.errstate(all="ignore"):
        lead = xp.log(x) - _digamma_np(a)
        lo = x < a + 1
        i = xp.flatnonzero(lo)
        if i.size:
            out[i] = -x[i] * _series_and_grad(x[i], a[i], lead[i])
        i = xp.flatnonzero(~lo)
        if i.size:
            out[i] = x[i] * _fraction_and_grad(x[i], a[i], lead[i])
    return xp.where(xp.isfinite(out), out, 0.0).reshape(shape)


def _series_and_grad(x, a, lead):
    """S (log x - digamma a) + dS/da for S = sum_n t_n, t_0 = 1/a, t_n = t_(n-1) x/(a+n)."""
    t = 1.0 / a
    dt = -t / a                        # d t_n / da = -t_n * sum_(k<=n) 1/(a+k)
    s, ds = t.copy(), dt.copy()
    live = xp.arange(x.shape[0])
    for n in range(1, 100000):
        xl, al = x[live], a[live]
        f = xl / (al + n)
        dt = (dt - t / (al + n)) * f
        t = t * f
        s[live] += t
        ds[live] += dt
        keep = (xp.abs(t) > 1e-17 * xp.abs(s[live])) | (xp.abs(dt) > 1e-17 * xp.abs(ds[live]))
        live, t, dt = live[keep], t[keep], dt[keep]
        if not live.size:
            break
    return s * lead + ds


def _fraction_and_grad(x, a, lead):
    """H (log x - digamma a) + dH/da for Legendre's continued fraction of the upper
    incomplete gamma, Gamma(a, x) = x^a e^-x H, by modified Lentz with derivatives."""
    tiny = 1e-300
    b = x + 1 - a                      # db/da = -1 at every step
    d = 1.0 / b
    dd = d * d                         # d(1/b)/da = 1/b^2
    c = xp.full_like(x, 1 / tiny)
    dc = xp.zeros_like(x)
    h, dh = d.copy(), dd.copy()
    live = xp.arange(x.shape[0])
    for i in range(1, 100000):
        al = a[live]
        an, dan = -i * (i - al), float(i)
        b = b + 2
        den = an * d + b
        dden = dan * d + an * dd - 1.0
        den = xp.where(xp.abs(den) < tiny, tiny, den)
        cn = b + an / c
        dcn = -1.0 + (dan * c - an * dc) / (c * c)
        cn = xp.where(xp.abs(cn) < tiny, tiny, cn)
        d, dd = 1.0 / den, -dden / (den * den)
        c, dc = cn, dcn
        delta = d * c
        ddelta = dd * c + d * dc
        hl = h[live]
        h[live] = hl * delta
        dh[live] = dh[live] * delta + hl * ddelta
        keep = (xp.abs(delta - 1) > 1e-16) | (xp.abs(hl * ddelta) > 1e-17 * xp.abs(dh[live]))
        live, b, d, dd, c, dc = live[keep], b[keep], d[keep], dd[keep], c[keep], dc[keep]
        if not live.size:
            break
    return h * lead + dh


def _standard_gamma_grad(x, alpha):
    """Reparameterisation gradient d sample / d alpha, as ``torch._standard_gamma_grad``."""
    g = _standard_gamma_grad_np(x._data, alpha._data)
    return wrap(xp.asarray(g, x._data.dtype))


class IgammaBackward0(Node):
    def backward(self, grad):
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); no gradient w.r.t. a (as torch)
        a, x = self._saved_self, self._saved_other
        return None, grad * torch.exp((a - 1) * torch.log(x) - x - _lgamma(a))


def _gammainc(a, x):
    """Regularised lower incomplete gamma P(a, x) (``torch.special.gammainc``)."""
    a, x = torch.broadcast_tensors(a, x)
    dt = _float_dtype(x if x.dtype.is_floating_point else a)
    a64 = xp.asarray(a._data, xp.float64)
    x64 = xp.asarray(x._data, xp.float64)
    with xp.errstate(all="ignore"):
        p = _pgamma_np(a64, xp.maximum(x64, 0))
    p = xp.where(x64 <= 0, 0.0, xp.where(xp.isposinf(x64), 1.0, p))
    r = wrap(xp.asarray(p, dt.np))
    if needs_grad(x):
        record(r, IgammaBackward0, (a, x), self=a.detach(), other=x)
    return r


_EMPTY_SIZE = torch.Size()  # default sample_shape / batch_shape (immutable)


class _SolveTrilBackward(Node):
    def backward(self, grad):
        L, X = self._saved_L, self._saved_result
        # X = L^-1 B:  dB = L^-T G,  dL = -tril(dB X^T)
        gB = _solve_triangular(L.mT, grad, upper=True)
        gL = gB @ X.mT
        return -(gL.triu() if self._saved_upper else gL.tril()), gB


def _solve_triangular(L, B, upper=False):
    """``linalg.solve_triangular(L, B, upper=upper)`` for same-batch L and B, differentiable
    in both (the shared op records no backward yet)."""
    batch = torch.broadcast_shapes(L.shape[:-2], B.shape[:-2])
    L = L.expand(batch + L.shape[-2:])
    B = B.expand(batch + B.shape[-2:])
    with torch.no_grad():
        X = torch.linalg.solve_triangular(L.detach(), B.detach(), upper=upper)
    if needs_grad(L, B):
        record(X, _SolveTrilBackward, (L, B), L=L, result=X, upper=upper)
    return X
