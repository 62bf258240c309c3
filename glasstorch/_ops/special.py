"""Special functions (``torch.special`` and the flat ``lgamma``, ``digamma``, ``polygamma``,
``mvlgamma``, ``i0``, ``sinc``, ``igamma``, ``logaddexp`` ...), computed with NumPy only.

Kernels work in float64 and round once to the result dtype. Where NumPy has no closed form,
the approximations are written here from the standard series, asymptotic expansions and
quadratures (each kernel says which), with the region boundaries chosen so every piece
reaches double precision (checked against torch in tests/test_special_accuracy.py).
"""

from __future__ import annotations

import math

from .._core import dtype as _dt
from ._common import (
    Node,
    Tensor,
    _attach,
    binary_operands,
    broadcast_error,
    finish,
    needs_grad,
    not_implemented_for,
    record,
    register,
    register_inplace,
    wrap,
    xp,
)

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "sinc", "igamma", "igammac",
           "logaddexp", "logaddexp2"]

_by_np = _dt._by_np
_HALF = (_dt.float16, _dt.bfloat16)
_EULER = 0.5772156649015329
_PI = math.pi
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRTPI = 1 / math.sqrt(math.pi)
# Bernoulli numbers B2, B4, ..., B28
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730, 8553103 / 6,
        -23749461029 / 870)


# ----------------------------------------------------------------------------- op factories

def _float_dtype(dt, name, half_ok, kernel=None):
    """torch's result dtype for a special function of a ``dt`` input, or its error."""
    if dt._category < 2:
        return _dt._default[0]
    if dt._category == 3 or (dt in _HALF and not half_ok):
        raise not_implemented_for(kernel or name, dt)
    return dt


def _unary(name, kernel, *, half_ok=True, node=None, saves=("self",), method=False,
           kernel_name=None, doc="", param="input"):
    """A unary special function: ints/bools become the default float dtype; ``kernel`` gets
    a float64 array. ``node`` names the backward class in this module (None: torch records
    no graph); ``method``: also a Tensor method with an in-place variant; ``param``: the
    argument's name (torch calls it ``x`` on a few)."""
    def compute(input, out):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        dt = _float_dtype(input.dtype, name, half_ok, kernel_name)
        with xp.errstate(all="ignore"):
            r = kernel(input._data.astype(xp.float64))
            r = wrap(xp.asarray(r).astype(dt.np))  # overflow to inf, as torch
        if node is not None and needs_grad(input):
            saved = {}
            if "self" in saves:
                saved["self"] = input
            if "result" in saves:
                saved["result"] = r
            record(r, globals()[node], (input,), **saved)
        return finish(r, out)

    if param == "x":
        def op(x, *, out=None):
            return compute(x, out)
    else:
        def op(input, *, out=None):
            return compute(input, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    if method:
        register()(op)
        register_inplace(op)
    return op


def _chunked(kernel, x, size=4096):
    """Apply a quadrature kernel (elements x nodes temporaries) a slice at a time."""
    flat = x.reshape(-1)
    out = xp.empty_like(flat)
    for i in range(0, flat.size, size):
        out[i:i + size] = kernel(flat[i:i + size])
    return out.reshape(x.shape)


def _where_set(out, mask, fn, x):
    """``out[mask] = fn(x[mask])`` (skipping empty selections)."""
    if mask.any():
        out[mask] = fn(x[mask])


# ----------------------------------------------------------------------------- gamma family

def _zeta_integers(kmax):
    """Riemann zeta(k) for k = 0..kmax (k >= 2 used) as Python floats."""
    vals = _hurwitz(xp.arange(2, kmax + 1, dtype=xp.float64), xp.ones(kmax - 1))
    return (0.0, 0.0) + tuple(float(v) for v in vals)


def _lgamma_taylor(z):
    """lgamma(1 + z) for |z| <= 0.5: -gamma z + sum_k (-1)^k zeta(k) z^k / k."""
    s = xp.zeros_like(z)
    for k in range(60, 1, -1):
        s = (s + ((-1) ** k) * _ZETA_INT[k] / k) * z
    return (s - _EULER) * z


def _lgamma_pos(x):
    """lgamma for x > 0 (finite), with no cancellation anywhere: below 0.5 one step up,
    [0.5, 1.5) the Taylor series at 1, [1.5, 10) the recurrence down to [1.5, 2.5) and the
    series at 2, from 10 Stirling's series."""
    out = xp.empty_like(x)
    tiny = x < 0.5
    _where_set(out, tiny, lambda v: _lgamma_taylor(v) - xp.log(v), x)
    near1 = (x >= 0.5) & (x < 1.5)
    _where_set(out, near1, lambda v: _lgamma_taylor(v - 1), x)
    mid = (x >= 1.5) & (x < 10)
    if mid.any():
        v = x[mid]
        n = xp.floor(v - 1.5)
        y = v - n  # in [1.5, 2.5), exact
        prod = xp.ones_like(v)
        for k in range(9):
            prod = xp.where(k < n, prod * (y + k), prod)
        out[mid] = _lgamma_taylor(y - 2) + xp.log1p(y - 2) + xp.log(prod)
    big = x >= 10
    if big.any():
        y = x[big]
        inv = 1 / y
        inv2 = inv * inv
        series = xp.zeros_like(y)
        for k in range(8, 0, -1):
            series = series * inv2 + _B2K[k - 1] / (2 * k * (2 * k - 1))
        out[big] = (y - 0.5) * xp.log(y) - y + _LOG_SQRT_2PI + series * inv
    return out


def _sinpi(x):
    """sin(pi x) with the argument reduced exactly first (accurate for large |x|, exactly 0
    at the integers)."""
    k = xp.round(x)
    s = xp.sin(_PI * (x - k))  # x - k in [-0.5, 0.5], exact
    return xp.where(xp.fmod(k, 2) == 0, s, -s)


def _lgamma(x):
    out = xp.full_like(x, xp.inf)
    fin = xp.isfinite(x)
    out[xp.isnan(x)] = xp.nan
    pos = fin & (x > 0)
    _where_set(out, pos, _lgamma_pos, x)
    neg = fin & (x <= 0) & (x != xp.floor(x))
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    _where_set(out, neg, lambda v: xp.log(_PI / xp.abs(_sinpi(v))) - _lgamma_pos(1 - v), x)
    return out


def _digamma(x):
    out = xp.empty_like(x)
    out[...] = xp.nan
    zero = x == 0
    out[zero] = xp.copysign(xp.inf, -x[zero])
    out[x == xp.inf] = xp.inf
    fin = xp.isfinite(x) & ~zero & ~((x < 0) & (x == xp.floor(x)))
    if fin.any():
        v = x[fin]
        res = xp.zeros_like(v)
        neg = v < 0
        # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        res = xp.where(neg, -_PI / xp.tan(_PI * (v - xp.trunc(v))), 0.0)  # exact reduction
        v = xp.where(neg, 1 - v, v)
        for _ in range(10):
            small = v < 10
            res = xp.where(small, res - 1 / v, res)
            v = xp.where(small, v + 1, v)
        inv2 = 1 / (v * v)
        series = xp.zeros_like(v)
        for k in range(8, 0, -1):
            series = series * inv2 + _B2K[k - 1] / (2 * k)
        out[fin] = res + xp.log(v) - 0.5 / v - series * inv2
    return out


def _hurwitz(s, q):
    """Hurwitz zeta(s, q) = sum_n (q + n)^-s: direct terms until q + n > 9, then the
    Euler-Maclaurin tail with Bernoulli corrections. Domain as Cephes/torch: s == 1 is inf,
    s < 1 nan, q a non-positive integer inf, q < 0 with non-integer s nan."""
    s, q = xp.broadcast_arrays(xp.asarray(s, xp.float64), xp.asarray(q, xp.float64))
    s, q = s.astype(xp.float64), q.astype(xp.float64)
    out = xp.full(s.shape, xp.nan)
    q_int = q == xp.floor(q)
    ok = xp.isfinite(s) & xp.isfinite(q) & (s > 1) & ~((q <= 0) & (q_int | (s != xp.floor(s))))
    out[(s == 1) & ~xp.isnan(q)] = xp.inf
    out[(s > 1) & (q <= 0) & q_int] = xp.inf
    if not ok.any():
        return out
    sv, a = s[ok], q[ok].copy()
    total = xp.zeros_like(a)
    n = 0
    while True:
        need = (a <= 9) | (n < 9)
        if not need.any() or n > 100000:
            break
        total = xp.where(need, total + a ** -sv, total)
        a = xp.where(need, a + 1, a)
        n += 1
    apow = a ** -sv
    total += a * apow / (sv - 1) + 0.5 * apow
    coef = sv / 2.0
    ap = apow / a
    inv2 = 1 / (a * a)
    for j in range(1, 13):
        total += _B2K[j - 1] * coef * ap
        coef = coef * (sv + 2 * j - 1) * (sv + 2 * j) / ((2 * j + 1) * (2 * j + 2))
        ap = ap * inv2
    out[ok] = xp.where(a <= 9, xp.nan, total)  # q too negative to shift: no value
    # s = inf: only the first term q^-s survives
    si = (s == xp.inf) & (q > 0) & (q < xp.inf)
    out[si] = xp.where(q[si] == 1, 1.0, xp.where(q[si] > 1, 0.0, xp.inf))
    return out


_ZETA_INT = _zeta_integers(61)


def _trigamma(x):
    out = xp.full_like(x, xp.nan)
    refl = x < 0.5
    _where_set(out, ~refl, lambda v: _hurwitz(2.0, v), x)
    # psi1(x) + psi1(1 - x) = pi^2 / sin^2(pi x)
    _where_set(out, refl, lambda v: (_PI / _sinpi(v)) ** 2 - _hurwitz(2.0, 1 - v), x)
    out[x == xp.inf] = 0.0
    return out


def _polygamma_kernel(n, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.exp(math.lgamma(n + 1)) * _hurwitz(float(n + 1), x)


lgamma = _unary("lgamma", _lgamma, node="LgammaBackward0", method=True,
                doc="Natural log of the absolute value of the gamma function.")
digamma = _unary("digamma", _digamma, node="DigammaBackward0", method=True,
                 doc="The logarithmic derivative of the gamma function, psi(input).")


class LgammaBackward0(Node):
    def backward(self, grad):
        return grad * digamma(self._saved_self)


class DigammaBackward0(Node):
    def backward(self, grad):
        return grad * polygamma(1, self._saved_self)




@register()
def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of the digamma function."""
    if isinstance(n, Tensor):
        raise TypeError("polygamma(): argument 'n' (position 1) must be int, not Tensor")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    dt = _float_dtype(input.dtype, "polygamma", True)
    with xp.errstate(all="ignore"):
        r = _polygamma_kernel(int(n), input._data.astype(xp.float64))
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(input):
        record(r, PolygammaBackward0, (input,), self=input, n=int(n))
    return finish(r, out)


class PolygammaBackward0(Node):
    def backward(self, grad):
        return grad * polygamma(self._saved_n + 1, self._saved_self)


def _polygamma_method(self, n):
    """``polygamma(n, self)``."""
    return polygamma(n, self)


def _polygamma_(self, n):
    """In-place ``polygamma(n, self)``."""
    from ._common import assign_inplace
    return assign_inplace(self, polygamma(n, self))


_attach("polygamma", _polygamma_method)
_attach("polygamma_", _polygamma_)


@register()
def mvlgamma(input, p, *, out=None):
    """Multivariate log-gamma of dimension ``p``:
    sum_i lgamma(input - i / 2) + p (p - 1) / 4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dt = _float_dtype(input.dtype, "mvlgamma", True)
    a = input._data.astype(xp.float64)
    with xp.errstate(all="ignore"):
        r = sum(_lgamma(a - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(_PI)
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(input):
        record(r, MvlgammaBackward0, (input,), self=input, p=int(p))
    return finish(r, out)


class MvlgammaBackward0(Node):
    def backward(self, grad):
        x, p = self._saved_self, self._saved_p
        return grad * sum(digamma(x - i / 2) for i in range(p))


def _mvlgamma_(self, p):
    """In-place ``mvlgamma``."""
    from ._common import assign_inplace
    return assign_inplace(self, mvlgamma(self, p))


_attach("mvlgamma_", _mvlgamma_)


# ----------------------------------------------------------------------------- binary helpers

def _binary_float(name, input, other, half_ok=True, int_ok=True, tensors_only=False):
    """Promoted float64 arrays and the result dtype of a binary special function
    (``tensors_only``: torch's signature takes no Python numbers)."""
    for pos, arg, v in ((1, "input", input), (2, "other", other)):
        if tensors_only and not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(v).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): expected at least one Tensor argument")
    x, y, dt = binary_operands(input, other)
    try:
        xp.broadcast_shapes(xp.shape(x), xp.shape(y))
    except ValueError:
        raise broadcast_error(x, y) from None
    if dt._category < 2:
        if not int_ok:
            raise not_implemented_for(name, dt)
        dt = _dt._default[0]
    elif dt._category == 3 or (dt in _HALF and not half_ok):
        raise not_implemented_for(name, dt)
    x = xp.asarray(x).astype(xp.float64)
    y = xp.asarray(y).astype(xp.float64)
    return x, y, dt


def _tensor_operands(input, other):
    return tuple(v for v in (input, other) if isinstance(v, Tensor))


# ----------------------------------------------------------------------------- incomplete gamma

def _igamma_log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a + 1)). For large a its terms are each ~a and cancel, so it is
    rewritten with d = (x - a) / a as a (log1p(d) - d) - log(2 pi a) / 2 - S(a), S being
    Stirling's correction series."""
    out = a * xp.log(x) - x - _lgamma(a + 1)
    big = a >= 10
    if big.any():
        ab, xb = a[big], x[big]
        d = (xb - ab) / ab
        inv = 1 / ab
        inv2 = inv * inv
        series = xp.zeros_like(ab)
        for k in range(8, 0, -1):
            series = series * inv2 + _B2K[k - 1] / (2 * k * (2 * k - 1))
        out[big] = ab * (xp.log1p(d) - d) - 0.5 * xp.log(2 * _PI * ab) - series * inv
    return out


def _igamma_series(a, x):
    """P(a, x) by its power series (x < a + 1): x^a e^-x / Gamma(a + 1) sum x^n / (a+1)_n."""
    term = xp.ones_like(a)
    total = xp.ones_like(a)
    ap = a.copy()
    active = xp.ones(a.shape, bool)
    for _ in range(20000):
        ap = ap + 1
        term = xp.where(active, term * x / ap, term)
        total = xp.where(active, total + term, total)
        active = active & (term > total * 1e-17)
        if not active.any():
            break
    return total * xp.exp(_igamma_log_prefactor(a, x))


def _igammac_cf(a, x):
    """Q(a, x) by Legendre's continued fraction (x >= a + 1), evaluated with modified Lentz."""
    tiny = 1e-300
    b = x + 1 - a
    c = xp.full_like(a, 1 / tiny)
    d = 1 / b
    h = d.copy()
    active = xp.ones(a.shape, bool)
    for i in range(1, 20000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = xp.where(xp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = xp.where(active, h * delta, h)
        active = active & (xp.abs(delta - 1) > 1e-16)
        if not active.any():
            break
    return xp.exp(_igamma_log_prefactor(a, x) + xp.log(a)) * h


def _igamma_pair(a, x, upper):
    a, x = xp.broadcast_arrays(a, x)
    out = xp.full(a.shape, xp.nan)
    valid = (a >= 0) & (x >= 0) & ~xp.isnan(a) & ~xp.isnan(x)
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    # edge values as torch: a = 0 with x > 0 gives P = 1; x = 0 gives P = 0; x = inf P = 1
    out[valid & (x == 0) & (a > 0)] = lo
    out[valid & (a == 0) & (x > 0)] = hi
    out[valid & (x == xp.inf) & (a < xp.inf)] = hi
    out[valid & (a == xp.inf) & (x < xp.inf)] = lo
    body = valid & (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    if body.any():
        av, xv = a[body], x[body]
        series = xv < av + 1
        p = xp.empty_like(av)
        if series.any():
            s = _igamma_series(av[series], xv[series])
            p[series] = 1 - s if upper else s
        if (~series).any():
            q = _igammac_cf(av[~series], xv[~series])
            p[~series] = q if upper else 1 - q
        out[body] = p
    return out


def _igamma_op(name, upper, input, other, out):
    x, y, dt = _binary_float(name, input, other, int_ok=False, tensors_only=True)
    with xp.errstate(all="ignore"):
        r = _igamma_pair(x, y, upper)
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(*_tensor_operands(input, other)):
        node = IgammacBackward0 if upper else IgammaBackward0
        record(r, node, (input if isinstance(input, Tensor) else None,
                         other if isinstance(other, Tensor) else None),
               self=input, other=other)
    return finish(r, out)


@register()
def igamma(input, other, *, out=None):
    """Regularised lower incomplete gamma function P(input, other)."""
    return _igamma_op("igamma", False, input, other, out)


@register()
def igammac(input, other, *, out=None):
    """Regularised upper incomplete gamma function Q(input, other)."""
    return _igamma_op("igammac", True, input, other, out)


register_inplace(igamma)
register_inplace(igammac)


def _igamma_dx(a, x):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
    return ((a - 1) * x.log() - x - lgamma(a)).exp()


class IgammaBackward0(Node):
    _name = "igamma"
    _sign = 1

    def backward(self, grad):
        a, x = self._saved_self, self._saved_other
        if self.next_functions[0][0] is not None:
            raise NotImplementedError(f"the derivative for '{self._name}: input' is not "
                                      "implemented.")
        return None, grad * _igamma_dx(a, x) * self._sign


class IgammacBackward0(IgammaBackward0):
    _name = "igammac"
    _sign = -1


# ----------------------------------------------------------------------------- zeta

def _zeta_op(input, other, out):
    x, y, dt = _binary_float("zeta", input, other, half_ok=False)
    with xp.errstate(all="ignore"):
        r = _hurwitz(x, y)
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(*_tensor_operands(input, other)):
        record(r, SpecialZetaBackward0, (input if isinstance(input, Tensor) else None,
                                         other if isinstance(other, Tensor) else None))
    return finish(r, out)


class SpecialZetaBackward0(Node):
    def backward(self, grad):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")


# ----------------------------------------------------------------------------- Bessel I, K

def _asym_terms(nu, x, sign, terms=30):
    """sum_k sign^k a_k(nu) / x^k with a_k = prod_j (4 nu^2 - (2j-1)^2) / (k! 8^k): the
    Hankel-type series shared by I (sign -1) and K (sign +1)."""
    mu = 4.0 * nu * nu
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for k in range(1, terms + 1):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x) * sign
        total = total + term
    return total


def _i_series(nu, x):
    """I_nu(x) for integer nu >= 0, |x| <= 30: sum (x/2)^(2k+nu) / (k! (k+nu)!) (all terms
    positive, no cancellation)."""
    h = x / 2
    h2 = h * h
    term = h ** nu / math.factorial(nu)
    total = term.copy()
    for k in range(1, 120):
        term = term * h2 / (k * (k + nu))
        total = total + term
    return total


def _bessel_i(nu, x, scaled):
    ax = xp.abs(x)
    out = xp.empty_like(x)
    small = ax <= 30
    _where_set(out, small, lambda v: _i_series(nu, v) * (xp.exp(-xp.abs(v)) if scaled else 1),
               x)
    large = ~small
    if large.any():
        v = ax[large]
        val = _asym_terms(nu, v, -1.0) / xp.sqrt(2 * _PI * v)
        if not scaled:
            val = val * xp.exp(xp.minimum(v, 800))
        if nu % 2:
            val = xp.where(x[large] < 0, -val, val)
        out[large] = val
    out[xp.isnan(x)] = xp.nan
    return out


def _k_small(nu, x):
    """K_0, K_1 for 0 < x <= 2 from their series in I and harmonic numbers."""
    h = x / 2
    h2 = h * h
    lg = xp.log(h)
    if nu == 0:
        term = xp.ones_like(x)
        total = xp.zeros_like(x)
        harm = 0.0
        for k in range(1, 40):
            harm += 1 / k
            term = term * h2 / (k * k)
            total = total + harm * term
        return -(lg + _EULER) * _i_series(0, x) + total
    # K_1 = 1/x + ln(x/2) I_1 - (x/4) sum (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)
    term = xp.ones_like(x)
    psi1 = -_EULER
    total = (2 * psi1 + 1) * term
    for k in range(1, 40):
        psi1 += 1 / k
        term = term * h2 / (k * (k + 1))
        total = total + (2 * psi1 + 1 / (k + 1)) * term
    return 1 / x + lg * _i_series(1, x) - x / 4 * total


_K_H = 0.04
_K_T = xp.arange(0, 4.2, _K_H)
_K_W = xp.full(_K_T.shape, _K_H)
_K_W[0] = _K_H / 2


def _k_quad(nu):
    """e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule
    (spectrally accurate: the integrand is even, analytic and decays double-exponentially)."""
    ct1 = xp.cosh(_K_T) - 1
    wc = _K_W * xp.cosh(nu * _K_T)

    def kernel(x):
        return xp.exp(-x[:, None] * ct1[None, :]) @ wc
    return kernel


def _bessel_k(nu, x, scaled):
    out = xp.full_like(x, xp.nan)
    out[x == 0] = xp.inf
    out[x == xp.inf] = 0.0
    small = (x > 0) & (x <= 2)
    _where_set(out, small, lambda v: _k_small(nu, v) * (xp.exp(v) if scaled else 1), x)
    mid = (x > 2) & (x <= 30)
    _where_set(out, mid, lambda v: _chunked(_k_quad(nu), v) * (1 if scaled else xp.exp(-v)),
               x)
    big = (x > 30) & (x < xp.inf)
    _where_set(out, big, lambda v: _asym_terms(nu, v, 1.0) * xp.sqrt(_PI / (2 * v)) *
               (1 if scaled else xp.exp(-v)), x)
    if scaled:
        out[x == xp.inf] = 0.0
    return out


# ----------------------------------------------------------------------------- Bessel J, Y

_J_N = 96
_J_TAU = 2 * _PI * xp.arange(_J_N) / _J_N
_GL_X, _GL_W = xp.polynomial.legendre.leggauss(100)
_GL_THETA = (_GL_X + 1) * (_PI / 2)
_GL_W = _GL_W * (_PI / 2)
_DE_H = 1 / 32
_DE_S = xp.arange(-4.5, 4.5 + _DE_H / 2, _DE_H)
_DE_T = xp.exp(_PI / 2 * xp.sinh(_DE_S))
_DE_W = _DE_H * _PI / 2 * xp.cosh(_DE_S) * _DE_T


def _j_quad(nu):
    """J_nu(x), integer nu, from the periodic integral (1/2pi) int cos(nu t - x sin t) dt by
    the trapezoidal rule (aliasing error ~ J_96(25) < 1e-30 for |x| <= 25). The half of the
    integrand that cancels by symmetry is left out, so odd orders are exactly odd (J_1(0) = 0)
    and keep their relative accuracy near 0."""
    st = xp.sin(_J_TAU)
    if nu % 2:
        w = xp.sin(nu * _J_TAU) / _J_N

        def kernel(x):
            return xp.sin(x[:, None] * st[None, :]) @ w
    else:
        w = xp.cos(nu * _J_TAU) / _J_N

        def kernel(x):
            return xp.cos(x[:, None] * st[None, :]) @ w
    return kernel


def _y_quad(nu):
    """Y_nu(x) = (1/pi) int_0^pi sin(x sin t - nu t) dt
    - (1/pi) int_0^inf (e^(nu t) + (-1)^nu e^(-nu t)) e^(-x sinh t) dt: Gauss-Legendre for
    the first, the double-exponential (exp-sinh) rule for the second."""
    st = xp.sin(_GL_THETA)
    sh = xp.sinh(_DE_T)
    sgn = -1.0 if nu % 2 else 1.0

    def kernel(x):
        first = xp.sin(x[:, None] * st[None, :] - nu * _GL_THETA[None, :]) @ _GL_W
        e = -x[:, None] * sh[None, :]
        f = xp.exp(e + nu * _DE_T[None, :]) + sgn * xp.exp(e - nu * _DE_T[None, :])
        return (first - f @ _DE_W) / _PI
    return kernel


def _hankel(nu, x, want_y):
    """J_nu / Y_nu for x > 25 from Hankel's expansion sqrt(2/(pi x)) (P cos c - Q sin c)."""
    mu = 4.0 * nu * nu
    term = xp.ones_like(x)
    p = xp.ones_like(x)
    q = xp.zeros_like(x)
    for k in range(1, 41):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        # a_k / x^k enters P (even k) or Q (odd k) with sign (-1)^(k//2)
        s = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + s * term
        else:
            p = p + s * term
    chi = x - (nu / 2 + 0.25) * _PI
    amp = xp.sqrt(2 / (_PI * x))
    if want_y:
        return amp * (p * xp.sin(chi) + q * xp.cos(chi))
    return amp * (p * xp.cos(chi) - q * xp.sin(chi))


def _bessel_j(nu, x):
    ax = xp.abs(x)
    out = xp.full_like(x, xp.nan)
    small = ax <= 25
    _where_set(out, small, lambda v: _chunked(_j_quad(nu), v), x)
    big = (ax > 25) & (ax < xp.inf)
    if big.any():
        v = _hankel(nu, ax[big], False)
        if nu % 2:
            v = xp.where(x[big] < 0, -v, v)
        out[big] = v
    return out  # J(+-inf) stays NaN, as torch's


def _y_series(nu, x):
    """Y_0, Y_1 for 0 < x <= 2 from their series in J and harmonic numbers."""
    h = x / 2
    h2 = -h * h
    lg = xp.log(h)
    if nu == 0:
        term = xp.ones_like(x)
        total = xp.zeros_like(x)
        harm = 0.0
        for k in range(1, 40):
            harm += 1 / k
            term = term * h2 / (k * k)
            total = total - harm * term
        return 2 / _PI * ((lg + _EULER) * _bessel_j(0, x) + total)
    term = h.copy()
    psi1 = -_EULER
    total = (2 * psi1 + 1) * term
    for k in range(1, 40):
        psi1 += 1 / k
        term = term * h2 / (k * (k + 1))
        total = total + (2 * psi1 + 1 / (k + 1)) * term
    return -2 / (_PI * x) + 2 / _PI * lg * _bessel_j(1, x) - total / _PI


def _bessel_y(nu, x):
    out = xp.full_like(x, xp.nan)
    out[x == 0] = -xp.inf  # Y(inf) stays NaN, as torch's
    _where_set(out, (x > 0) & (x <= 2), lambda v: _y_series(nu, v), x)
    _where_set(out, (x > 2) & (x <= 25), lambda v: _chunked(_y_quad(nu), v, 1024), x)
    _where_set(out, (x > 25) & (x < xp.inf), lambda v: _hankel(nu, v, True), x)
    return out


# ----------------------------------------------------------------------------- Airy Ai

_AI0 = 0.35502805388781723926
_AIP0 = 0.25881940379280679840


def _airy_series(x):
    """Ai(x) for |x| <= 2 from its Maclaurin series c1 f(x) - c2 g(x)."""
    x3 = x * x * x
    f = xp.ones_like(x)
    g = x.copy()
    tf, tg = f.copy(), g.copy()
    for k in range(1, 40):
        tf = tf * x3 / ((3 * k - 1) * (3 * k))
        tg = tg * x3 / ((3 * k) * (3 * k + 1))
        f = f + tf
        g = g + tg
    return _AI0 * f - _AIP0 * g


def _j_frac_quad(nu):
    """J_nu(x) for real nu (Schlafli): (1/pi) int_0^pi cos(nu t - x sin t) dt
    - (sin(nu pi)/pi) int_0^inf e^(-x sinh t - nu t) dt."""
    st = xp.sin(_GL_THETA)
    sh = xp.sinh(_DE_T)
    snp = math.sin(nu * _PI)

    def kernel(x):
        first = xp.cos(nu * _GL_THETA[None, :] - x[:, None] * st[None, :]) @ _GL_W
        second = xp.exp(-x[:, None] * sh[None, :] - nu * _DE_T[None, :]) @ _DE_W
        return (first - snp * second) / _PI
    return kernel


def _airy_ai(x):
    out = xp.full_like(x, xp.nan)  # Ai(+-inf) stays NaN, as torch's
    _where_set(out, xp.abs(x) <= 2, _airy_series, x)

    def right(v):  # Ai(x) = sqrt(x/3)/pi K_{1/3}(zeta), zeta = 2/3 x^1.5
        z = 2 / 3 * v ** 1.5
        ks = xp.where(z <= 30, _chunked(_k_quad(1 / 3), xp.minimum(z, 30)),
                      _asym_terms(1 / 3, z, 1.0) * xp.sqrt(_PI / (2 * z)))
        return xp.sqrt(v / 3) / _PI * ks * xp.exp(-z)

    def left(v):  # Ai(-x) = sqrt(x)/3 (J_{1/3}(zeta) + J_{-1/3}(zeta))
        a = -v
        z = 2 / 3 * a ** 1.5
        small = z <= 25
        zs = xp.where(small, z, 1.0)
        zb = xp.where(small, 30.0, z)
        js = _chunked(_j_frac_quad(1 / 3), zs, 1024) + _chunked(_j_frac_quad(-1 / 3), zs, 1024)
        jb = _hankel(1 / 3, zb, False) + _hankel(-1 / 3, zb, False)
        return xp.sqrt(a) / 3 * xp.where(small, js, jb)

    _where_set(out, (x > 2) & (x < xp.inf), right, x)
    _where_set(out, (x < -2) & (x > -xp.inf), left, x)
    return out


# ----------------------------------------------------------------------------- erf relatives

def _erfcx_cf(x):
    """erfcx(x) = e^(x^2) erfc(x) for x >= 2 from the continued fraction of erfc."""
    f = x.copy()
    for k in range(80, 0, -1):
        f = x + (k * 0.5) / f
    return _INV_SQRTPI / f


def _erfcx(x):
    from .pointwise import _erf_parts
    out = xp.full_like(x, xp.nan)
    ax = xp.abs(x)
    big = ax >= 2
    # below 2, e^(x^2) erfc(x) from the erf kernel is accurate (no overflow, erfc >= 0.004)
    def near(v):
        e, c = _erf_parts(v)
        return xp.exp(v * v) * xp.where(v < 0, 1 + e, c)
    _where_set(out, ~big & ~xp.isnan(x), near, x)
    pos = big & (x > 0)
    _where_set(out, pos & (x < xp.inf), _erfcx_cf, x)
    out[x == xp.inf] = 0.0
    neg = big & (x < 0)
    # erfcx(-x) = 2 e^(x^2) - erfcx(x)
    _where_set(out, neg, lambda v: 2 * xp.exp(v * v) - _erfcx_cf(-v), x)
    return out


def _ndtr(x):
    from .pointwise import _erfc
    return 0.5 * _erfc(-x * _SQRT1_2)


def _log_ndtr(x):
    from .pointwise import _erfc
    out = xp.empty_like(x)
    left = x < -1
    _where_set(out, left, lambda v: xp.log(0.5 * _erfcx(-v * _SQRT1_2)) - 0.5 * v * v, x)
    _where_set(out, ~left, lambda v: xp.log1p(-0.5 * _erfc(v * _SQRT1_2)), x)
    return out


def _ndtri(p):
    from .pointwise import _erfinv
    out = xp.full_like(p, xp.nan)
    q = xp.minimum(p, 1 - p)  # exact for p in [0.5, 1]
    ok = (p >= 0) & (p <= 1)
    mid = ok & (q > 0.05)
    u = xp.zeros_like(p)
    u[mid] = _erfinv(1 - 2 * q[mid])
    tail = ok & (q <= 0.05) & (q > 0)
    if tail.any():
        # Newton on log(erfc(u)) = log(2q), with log erfc(u) = log(erfcx(u)) - u^2
        lt = xp.log(2 * q[tail])
        v = xp.sqrt(-lt)
        for _ in range(2):
            v = xp.sqrt(xp.maximum(-lt - xp.log(v * math.sqrt(_PI)), 0.5))
        for _ in range(6):
            cx = _erfcx(v)
            h = xp.log(cx) - v * v - lt
            v = v + h * (math.sqrt(_PI) * cx) / 2
        u[tail] = v
    z = math.sqrt(2) * u
    out[ok] = xp.where(p < 0.5, -z, z)[ok]
    out[p == 0] = -xp.inf
    out[p == 1] = xp.inf
    return out


def _entr(x):
    out = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1)), 0.0)
    out = xp.where(x < 0, -xp.inf, out)
    out = xp.where(x == xp.inf, -xp.inf, out)
    return xp.where(xp.isnan(x), x, out)


def _sph_j0(x):
    ok = xp.isfinite(x) & (x != 0)
    safe = xp.where(ok, x, 1.0)
    r = xp.where(ok, xp.sin(safe) / safe, 0.0)
    r = xp.where(x == 0, 1.0, r)
    return xp.where(xp.isnan(x), x, r)


# ----------------------------------------------------------------------------- the unary ops

def _node(name, backward):
    """A backward class ``name`` (torch's node name) with formula ``backward(node, grad)``."""
    cls = type(name, (Node,), {"backward": backward, "__module__": __name__})
    globals()[name] = cls
    return cls


def _i0_bw(n, g):
    return g * i1(n._saved_self)


def _i0e_bw(n, g):
    x = n._saved_self
    return g * (i1e(x) - x.sgn() * n._saved_result)


def _i1_bw(n, g):
    x, r = n._saved_self, n._saved_result
    from .pointwise import where
    # 0.5 at 0 (the limit) and, as torch's formula gives, at NaN
    return g * where((x == 0) | x.isnan(), 0.5, i0(x) - r / x)


def _i1e_bw(n, g):
    x, r = n._saved_self, n._saved_result
    from .pointwise import where
    return g * where((x == 0) | x.isnan(), 0.5, i0e(x) - r * (x.sgn() + 1 / x))


_SR = ("self", "result")
_node("I0Backward0", _i0_bw)
_node("SpecialI0EBackward0", _i0e_bw)
_node("SpecialI1Backward0", _i1_bw)
_node("SpecialI1EBackward0", _i1e_bw)
i0 = _unary("i0", lambda a: _bessel_i(0, a, False), method=True, node="I0Backward0",
            doc="Modified Bessel function of the first kind, order 0.")
i0e = _unary("special_i0e", lambda a: _bessel_i(0, a, True), node="SpecialI0EBackward0",
             saves=_SR,
             doc="Exponentially scaled modified Bessel function of order 0: exp(-|x|) i0(x).")
i1 = _unary("special_i1", lambda a: _bessel_i(1, a, False), node="SpecialI1Backward0",
            saves=_SR, doc="Modified Bessel function of the first kind, order 1.")
i1e = _unary("special_i1e", lambda a: _bessel_i(1, a, True), node="SpecialI1EBackward0",
             saves=_SR,
             doc="Exponentially scaled modified Bessel function of order 1: exp(-|x|) i1(x).")


def _no_half(name, kernel, doc, param="input"):
    """torch's non-differentiable special functions (no half kernels, no graph)."""
    return _unary(name, kernel, half_ok=False, doc=doc, param=param)


bessel_j0 = _no_half("bessel_j0", lambda a: _bessel_j(0, a),
                     "Bessel function of the first kind, order 0.")
bessel_j1 = _no_half("bessel_j1", lambda a: _bessel_j(1, a),
                     "Bessel function of the first kind, order 1.")
bessel_y0 = _no_half("bessel_y0", lambda a: _bessel_y(0, a),
                     "Bessel function of the second kind, order 0.")
bessel_y1 = _no_half("bessel_y1", lambda a: _bessel_y(1, a),
                     "Bessel function of the second kind, order 1.")
modified_bessel_i0 = _no_half("modified_bessel_i0", lambda a: _bessel_i(0, a, False),
                              "Modified Bessel function of the first kind, order 0.")
modified_bessel_i1 = _no_half("modified_bessel_i1", lambda a: _bessel_i(1, a, False),
                              "Modified Bessel function of the first kind, order 1.")
modified_bessel_k0 = _no_half("modified_bessel_k0", lambda a: _bessel_k(0, a, False),
                              "Modified Bessel function of the second kind, order 0.")
modified_bessel_k1 = _no_half("modified_bessel_k1", lambda a: _bessel_k(1, a, False),
                              "Modified Bessel function of the second kind, order 1.")
scaled_modified_bessel_k0 = _no_half(
    "scaled_modified_bessel_k0", lambda a: _bessel_k(0, a, True),
    "Exponentially scaled modified Bessel function of the second kind, order 0.",
    param="x")
scaled_modified_bessel_k1 = _no_half(
    "scaled_modified_bessel_k1", lambda a: _bessel_k(1, a, True),
    "Exponentially scaled modified Bessel function of the second kind, order 1.",
    param="x")
spherical_bessel_j0 = _no_half("spherical_bessel_j0", _sph_j0,
                               "Spherical Bessel function of the first kind, order 0.", "x")
airy_ai = _no_half("airy_ai", _airy_ai, "The Airy function Ai.", "x")


def _erfcx_bw(n, g):
    x = n._saved_self
    return g * (2 * x * n._saved_result - 2 * _INV_SQRTPI)


def _log_ndtr_bw(n, g):
    x = n._saved_self
    return g * (-0.5 * x * x - n._saved_result).exp() / math.sqrt(2 * _PI)


def _ndtri_bw(n, g):
    r = n._saved_result
    return g * math.sqrt(2 * _PI) * (0.5 * r * r).exp()


def _entr_bw(n, g):
    return g * -(1 + n._saved_self.log())


_node("SpecialErfcxBackward0", _erfcx_bw)
_node("SpecialLogNdtrBackward0", _log_ndtr_bw)
_node("SpecialNdtriBackward0", _ndtri_bw)
_node("SpecialEntrBackward0", _entr_bw)
erfcx = _unary("special_erfcx", _erfcx, half_ok=False, node="SpecialErfcxBackward0",
               saves=_SR, doc="Scaled complementary error function exp(x^2) erfc(x).")
log_ndtr = _unary("special_log_ndtr", _log_ndtr, half_ok=False,
                  node="SpecialLogNdtrBackward0", saves=_SR,
                  doc="Log of the standard normal CDF, accurate far into both tails.")
ndtri = _unary("special_ndtri", _ndtri, half_ok=False, node="SpecialNdtriBackward0",
               saves=("result",),
               doc="Inverse of the standard normal CDF (the probit / quantile function).")
entr = _unary("special_entr", _entr, node="SpecialEntrBackward0",
              doc="Elementwise entropy -x ln(x) (0 at 0, -inf below).")


class NdtrBackward(Node):
    """Gaussian density exp(-x^2/2) / sqrt(2 pi)."""

    def backward(self, grad):
        x = self._saved_self
        return grad * (-0.5 * x * x).exp() / math.sqrt(2 * _PI)


ndtr = _unary("ndtr", _ndtr, node="NdtrBackward",
              doc="Standard normal CDF, 0.5 (1 + erf(x / sqrt(2))).")


# ----------------------------------------------------------------------------- sinc

@register()
def sinc(input, *, out=None):
    """Normalised sinc: sin(pi x) / (pi x), 1 at 0."""
    dt = input.dtype
    a = input._data
    if dt._category < 2:
        dt = _dt._default[0]
    work = a.astype(xp.complex128 if dt._category == 3 else xp.float64)
    with xp.errstate(all="ignore"):
        px = _PI * work
        r = xp.where(work == 0, 1.0, xp.sin(px) / xp.where(work == 0, 1.0, px))
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(input):
        record(r, SincBackward0, (input,), self=input)
    return finish(r, out)


class SincBackward0(Node):
    def backward(self, grad):
        from .pointwise import where
        x = self._saved_self
        px = x * _PI
        d = (px * px.cos() - px.sin()) / (px * x)
        return grad * where(x == 0, 0, d).conj()


register_inplace(sinc)


# ----------------------------------------------------------------------------- xlog1py

def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input is 0 (unless other is NaN)."""
    x, y, dt = _binary_float("xlog1py", input, other)
    with xp.errstate(all="ignore"):
        r = xp.where((x == 0) & ~xp.isnan(y), 0.0, x * xp.log1p(y))
    r = wrap(xp.asarray(r).astype(dt.np))
    ti, to = isinstance(input, Tensor), isinstance(other, Tensor)
    if needs_grad(*_tensor_operands(input, other)):
        name = SpecialXlog1PyBackward0 if ti and to else (
            SpecialXlog1PyBackward2 if ti else SpecialXlog1PyBackward1)
        record(r, name, (input if ti else None, other if to else None), self=input,
               other=other)
    return finish(r, out)


class SpecialXlog1PyBackward0(Node):
    def backward(self, grad):
        x, y = self._saved_self, self._saved_other
        gx = gy = None
        if self.next_functions[0][0] is not None:
            gx = grad * xlog1py((x != 0).to(grad.dtype), y)
        if self.next_functions[1][0] is not None:
            gy = grad * x / (y + 1)
        return gx, gy


class SpecialXlog1PyBackward1(SpecialXlog1PyBackward0):
    pass


class SpecialXlog1PyBackward2(SpecialXlog1PyBackward0):
    pass


# ----------------------------------------------------------------------------- logaddexp

@register()
def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)), without overflow."""
    return _logaddexp(input, other, out, False)


@register()
def logaddexp2(input, other, *, out=None):
    """log2(2**input + 2**other), without overflow."""
    return _logaddexp(input, other, out, True)


def _logaddexp(input, other, out, base2):
    name = "logaddexp2" if base2 else "logaddexp"
    for pos, v in ((1, input), (2, other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{'input' if pos == 1 else 'other'}' "
                            f"(position {pos}) must be Tensor, not {type(v).__name__}")
    x, y, dt = binary_operands(input, other)
    if dt._category < 2 or (dt._category == 3 and base2):
        raise not_implemented_for(name, dt)
    try:
        xp.broadcast_shapes(xp.shape(x), xp.shape(y))
    except ValueError:
        raise broadcast_error(x, y) from None
    from ._common import compute_dtype
    cd = compute_dtype(dt)
    x, y = xp.asarray(x).astype(cd), xp.asarray(y).astype(cd)
    with xp.errstate(all="ignore"):
        r = xp.logaddexp2(x, y) if base2 else (
            xp.logaddexp(x, y) if dt._category < 3 else _complex_logaddexp(x, y))
    r = wrap(xp.asarray(r).astype(dt.np))
    if needs_grad(input, other):
        record(r, Logaddexp2Backward0 if base2 else LogaddexpBackward0, (input, other),
               self=input, other=other)
    return finish(r, out)


def _complex_logaddexp(x, y):
    m = xp.where(x.real >= y.real, x, y)
    n = xp.where(x.real >= y.real, y, x)
    return m + xp.log1p(xp.exp(n - m))


class LogaddexpBackward0(Node):
    def backward(self, grad):
        from .pointwise import sigmoid
        x, y = self._saved_self, self._saved_other
        return grad * sigmoid(x - y), grad * sigmoid(y - x)


class Logaddexp2Backward0(Node):
    def backward(self, grad):
        from .pointwise import sigmoid
        x, y = self._saved_self, self._saved_other
        ln2 = math.log(2)
        return grad * sigmoid((x - y) * ln2), grad * sigmoid((y - x) * ln2)


# ----------------------------------------------------------------------------- polynomials

def _poly_operands(name, input, n):
    x, nv, dt = _binary_float(name, input, n, half_ok=False)
    x, nv = xp.broadcast_arrays(x, nv)
    return x.astype(xp.float64), nv, dt


def _recurrence(x, n, p0, p1, step):
    """P_n(x) by a three-term recurrence P_{k+1} = step(k, x, P_k, P_{k-1}); n < 0 gives 0."""
    p, q = p0, p1
    out = xp.where(n == 0, p0, p1)
    top = int(xp.max(n)) if n.size else 0
    for k in range(1, top):
        r = step(k, x, q, p)
        p, q = q, r
        out = xp.where(n == k + 1, r, out)
    return xp.where(n < 0, 0.0, out)


def _poly(name, kernel, doc):
    def op(x, n, *, out=None):
        x, nv, dt = _poly_operands(name, x, n)
        nv = xp.where(xp.isnan(nv), -1, xp.floor(nv)) if nv.size else nv
        with xp.errstate(all="ignore"):
            r = kernel(x, nv) if x.size else x.copy()
        return finish(wrap(xp.asarray(r).astype(dt.np)), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _cheb_t(x, n):
    r = _recurrence(x, n, xp.ones_like(x), x, lambda k, x, q, p: 2 * x * q - p)
    inside = (xp.abs(x) < 1) & (n > 6)
    r = xp.where(inside, xp.cos(n * xp.arccos(xp.clip(x, -1, 1))), r)
    edge = (xp.abs(x) == 1) & (n >= 0)
    return xp.where(edge, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0), r)


def _cheb_u(x, n):
    r = _recurrence(x, n, xp.ones_like(x), 2 * x, lambda k, x, q, p: 2 * x * q - p)
    edge = (xp.abs(x) == 1) & (n >= 0)
    return xp.where(edge, xp.where((x > 0) | (n % 2 == 0), n + 1, -(n + 1)), r)


def _cheb_v(x, n):
    r = _recurrence(x, n, xp.ones_like(x), 2 * x - 1, lambda k, x, q, p: 2 * x * q - p)
    edge = (xp.abs(x) == 1) & (n >= 0)
    return xp.where(edge, xp.where(x > 0, 1.0, xp.where(n % 2 == 0, 2 * n + 1, -(2 * n + 1))),
                    r)


def _cheb_w(x, n):
    r = _recurrence(x, n, xp.ones_like(x), 2 * x + 1, lambda k, x, q, p: 2 * x * q - p)
    edge = (xp.abs(x) == 1) & (n >= 0)
    return xp.where(edge, xp.where(x > 0, 2 * n + 1, xp.where(n % 2 == 0, 1.0, -1.0)), r)


def _hermite_h(x, n):
    return _recurrence(x, n, xp.ones_like(x), 2 * x, lambda k, x, q, p: 2 * x * q - 2 * k * p)


def _hermite_he(x, n):
    return _recurrence(x, n, xp.ones_like(x), x.copy(), lambda k, x, q, p: x * q - k * p)


def _laguerre(x, n):
    r = _recurrence(x, n, xp.ones_like(x), 1 - x,
                    lambda k, x, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1))
    return xp.where((x == 0) & (n >= 0), 1.0, r)


def _legendre(x, n):
    r = _recurrence(x, n, xp.ones_like(x), x.copy(),
                    lambda k, x, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1))
    edge = (xp.abs(x) == 1) & (n >= 0)
    return xp.where(edge, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0), r)


def _shifted(kernel):
    return lambda x, n: kernel(2 * x - 1, n)


chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", _cheb_t,
                               "Chebyshev polynomial of the first kind T_n(input).")
chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", _cheb_u,
                               "Chebyshev polynomial of the second kind U_n(input).")
chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", _cheb_v,
                               "Chebyshev polynomial of the third kind V_n(input).")
chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", _cheb_w,
                               "Chebyshev polynomial of the fourth kind W_n(input).")
shifted_chebyshev_polynomial_t = _poly(
    "shifted_chebyshev_polynomial_t", _shifted(_cheb_t),
    "Shifted Chebyshev polynomial of the first kind T*_n(input) = T_n(2 input - 1).")
shifted_chebyshev_polynomial_u = _poly(
    "shifted_chebyshev_polynomial_u", _shifted(_cheb_u),
    "Shifted Chebyshev polynomial of the second kind U*_n(input) = U_n(2 input - 1).")
shifted_chebyshev_polynomial_v = _poly(
    "shifted_chebyshev_polynomial_v", _shifted(_cheb_v),
    "Shifted Chebyshev polynomial of the third kind V*_n(input) = V_n(2 input - 1).")
shifted_chebyshev_polynomial_w = _poly(
    "shifted_chebyshev_polynomial_w", _shifted(_cheb_w),
    "Shifted Chebyshev polynomial of the fourth kind W*_n(input) = W_n(2 input - 1).")
hermite_polynomial_h = _poly("hermite_polynomial_h", _hermite_h,
                             "Physicists' Hermite polynomial H_n(input).")
hermite_polynomial_he = _poly("hermite_polynomial_he", _hermite_he,
                              "Probabilists' Hermite polynomial He_n(input).")
laguerre_polynomial_l = _poly("laguerre_polynomial_l", _laguerre,
                              "Laguerre polynomial L_n(input).")
legendre_polynomial_p = _poly("legendre_polynomial_p", _legendre,
                              "Legendre polynomial P_n(input).")


def zeta(input, other, *, out=None):
    """Hurwitz zeta function sum_k (other + k) ** -input."""
    return _zeta_op(input, other, out)
