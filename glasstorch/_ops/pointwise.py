"""Pointwise operators: arithmetic, math functions, comparisons, logic.

Each operator is defined once here; its Tensor method, in-place ``op_``
variant and operator dunders are attached from that definition.
"""

from __future__ import annotations

from .._core import dtype as _dt
from .._core.warn import warn_user
from ._common import (
    _SHORT,
    Node,
    Tensor,
    assign_inplace,
    binary_operands,
    broadcast_error,
    compute_array,
    compute_dtype,
    finish,
    float_result_dtype,
    needs_grad,
    not_implemented_for,
    record,
    register,
    register_inplace,
    result_array,
    wrap,
    xp,
)

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "neg", "negative", "exp", "log", "sqrt", "abs", "absolute"]

_np_add, _np_sub, _np_mul = xp.add, xp.subtract, xp.multiply


def _binary_ufunc(ufunc, input, other):
    x, y, dt = binary_operands(input, other)
    try:
        r = ufunc(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    return wrap(r)


@register("__add__", "__radd__")
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with torch's type promotion."""
    x, y, dt = binary_operands(input, other)
    try:
        if alpha != 1:
            _check_alpha(alpha, dt)
            y = _np_mul(y, alpha, dtype=dt.np) if isinstance(y, xp.ndarray) else y * alpha
        r = wrap(_np_add(x, y))
    except ValueError:
        raise broadcast_error(x, y) from None
    except NotImplementedError:  # a sparse other's placeholder refuses math: dense + sparse
        from .._sparse_tensor import SparseCooTensor
        if not isinstance(other, SparseCooTensor) or isinstance(input, SparseCooTensor):
            raise
        from .sparse import sparse_add
        r = sparse_add(input, other, alpha)
        return r if out is None else finish(r, out)
    if needs_grad(input, other):
        record(r, AddBackward0, (input, other), alpha=alpha)
    return r if out is None else finish(r, out)


class AddBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        return grad, grad if alpha == 1 else grad * alpha


@register()
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    x, y, dt = binary_operands(input, other)
    if _is_bool(input) or _is_bool(other):
        if dt is _dt.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    if alpha != 1:
        _check_alpha(alpha, dt)
        y = _np_mul(y, alpha, dtype=dt.np) if isinstance(y, xp.ndarray) else y * alpha
    try:
        r = wrap(_np_sub(x, y))
    except ValueError:
        raise broadcast_error(x, y) from None
    if needs_grad(input, other):
        if isinstance(input, Tensor):
            record(r, SubBackward0, (input, other), alpha=alpha)
        else:  # number - tensor
            record(r, RsubBackward1, (other,), alpha=alpha)
    return r if out is None else finish(r, out)


class SubBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        return grad, -grad if alpha == 1 else grad * -alpha


class RsubBackward1(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        return -grad if alpha == 1 else grad * -alpha


def _is_bool(v):
    return v._data.dtype == xp.bool_ if isinstance(v, Tensor) else type(v) is bool


def _check_alpha(alpha, dt):
    if isinstance(alpha, float) and dt._category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


subtract = sub
Tensor.subtract = sub


def __rsub__(self, other):
    return sub(other, self)


def __sub__(self, other):
    return sub(self, other)


Tensor.__sub__ = __sub__
Tensor.__rsub__ = __rsub__


@register("__mul__", "__rmul__", "multiply")
def mul(input, other, *, out=None):
    """Elementwise product."""
    x, y, dt = binary_operands(input, other)
    try:
        r = wrap(_np_mul(x, y))
    except ValueError:
        raise broadcast_error(x, y) from None
    if needs_grad(input, other):
        # like torch, keep each operand only if the other one's gradient needs it
        record(r, MulBackward0, (input, other), self=input if _requires(other) else None,
               other=other if _requires(input) else None)
    return r if out is None else finish(r, out)


class MulBackward0(Node):
    def backward(self, grad):
        a, b = self._saved_self, self._saved_other
        ga = grad * _conj(b) if self.next_functions[0][0] is not None else None
        gb = grad * _conj(a) if self.next_functions[1][0] is not None else None
        return ga, gb


def _requires(v):
    return isinstance(v, Tensor) and v._requires_grad


def _conj(v):
    if isinstance(v, Tensor):
        return v.conj() if v.dtype.is_complex else v
    return v.conjugate() if isinstance(v, complex) else v


multiply = mul


@register("divide", "true_divide")
def div(input, other, *, rounding_mode=None, out=None):
    """Division; true division promotes integers to the default float dtype.

    ``rounding_mode='trunc'`` or ``'floor'`` round the quotient and keep integer dtypes.
    """
    x, y, dt = binary_operands(input, other)
    with xp.errstate(all="ignore"):
        try:
            if rounding_mode is None:
                rt = float_result_dtype(dt)
                r = result_array(xp.true_divide(x, y, dtype=compute_dtype(rt)), rt)
            elif rounding_mode in ("trunc", "floor"):
                if dt.is_complex:
                    raise not_implemented_for(f"div_{rounding_mode}", dt)
                if dt._category < 2:
                    if _any_zero(y):
                        raise RuntimeError("ZeroDivisionError")
                    if rounding_mode == "floor":
                        r = xp.floor_divide(x, y)
                    else:
                        q = xp.floor_divide(x, y)
                        # floor and trunc differ where the exact quotient is negative
                        neg = (xp.asarray(x) < 0) != (xp.asarray(y) < 0)
                        fix = (xp.remainder(x, y) != 0) & neg
                        r = xp.where(fix, q + 1, q).astype(dt.np)
                else:
                    q = xp.true_divide(compute_array(xp.asarray(x)), compute_array(xp.asarray(y)))
                    r = result_array(xp.floor(q) if rounding_mode == "floor" else xp.trunc(q), dt)
            else:
                raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                                   f"'floor' but found '{rounding_mode}'")
        except ValueError:
            raise broadcast_error(x, y) from None
    r = wrap(r)
    if needs_grad(input, other):
        if rounding_mode is None:
            # self is only needed for other's gradient; other is needed for both
            record(r, DivBackward0, (input, other), self=input if _requires(other) else None,
                   other=other)
        else:  # rounding makes the result piecewise constant
            record(r, DivBackward2, (input, other), rounding_mode=rounding_mode)
    return finish(r, out)


class DivBackward0(Node):
    def backward(self, grad):
        a, b = self._saved_self, self._saved_other
        ga = grad / _conj(b) if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            gb = -grad * _conj(a) / _conj(b * b)
        return ga, gb


class DivBackward2(Node):
    def backward(self, grad):
        z = _zeros_like(grad)
        return (None if self.next_functions[0][0] is None else z,
                None if self.next_functions[1][0] is None else z)


def _any_zero(y):
    return bool(xp.any(xp.asarray(y) == 0))


divide = true_divide = div


def __truediv__(self, other):
    return div(self, other)


def __rtruediv__(self, other):
    if isinstance(other, (int, float, complex)):
        # torch computes ``number / t`` as ``t.reciprocal() * number``: same rounding, same graph
        return mul(reciprocal(self), other)
    return div(other, self)


Tensor.__truediv__ = __truediv__
Tensor.__rtruediv__ = __rtruediv__

for _fn in (add, sub, mul, div):
    register_inplace(_fn)
Tensor.subtract_ = Tensor.sub_
Tensor.multiply_ = Tensor.mul_
Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_


# ----------------------------------------------------------------------------- unary math
# exp, log and sqrt are defined with the other unary float ops below.


@register("__neg__", "negative")
def neg(input, *, out=None):
    """-input; refused for bool tensors like torch."""
    a = input._data
    if a.dtype == xp.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    r = wrap(xp.negative(a))
    if needs_grad(input):
        record(r, NegBackward0, (input,))
    return finish(r, out)


class NegBackward0(Node):
    def backward(self, grad):
        return -grad


negative = neg
register_inplace(neg)
Tensor.negative_ = Tensor.neg_


@register("__abs__", "absolute")
def abs(input, *, out=None):
    """|input|; complex inputs give their real magnitude."""
    a = input._data
    if a.dtype == xp.bool_:
        raise not_implemented_for("abs", _dt.bool_)
    r = wrap(xp.absolute(a))
    if needs_grad(input):
        record(r, AbsBackward0, (input,), self=input)
    return finish(r, out)


class AbsBackward0(Node):
    def backward(self, grad):
        return grad * self._saved_self.sgn()


absolute = abs
register_inplace(abs)
Tensor.absolute_ = Tensor.abs_


# ----------------------------------------------------------------------------- helpers

_NUMBER = (int, float, complex, bool, xp.generic)


def _apply(ufunc, x, y):
    """``ufunc(x, y)`` with torch's message when the shapes do not broadcast."""
    try:
        return ufunc(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None


def _tensor_arg(fname, argname, pos, value):
    # Ops whose torch signature is (Tensor, Tensor) refuse Python numbers.
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, "
                        f"not {type(value).__name__}")


def _tensors_only(fname, input, other, other_name="other"):
    _tensor_arg(fname, "input", 1, input)
    _tensor_arg(fname, other_name, 2, other)


def _promoted(input, other):
    """Both operands as arrays of the promoted dtype (bfloat16-safe), and that dtype."""
    x, y, dt = binary_operands(input, other)
    if not isinstance(y, xp.ndarray):
        y = xp.asarray(y, dt.np)
    if not isinstance(x, xp.ndarray):
        x = xp.asarray(x, dt.np)
    return x, y, dt


def _dtype_of(v):
    return v.dtype if isinstance(v, Tensor) else _dt.result_dtype(v)


def _register_unary(op, *aliases, inplace=True):
    for n in (op.__name__,) + aliases:
        setattr(Tensor, n, op)
    if inplace:
        ip = register_inplace(op)
        for n in aliases:
            if not n.startswith("__"):
                setattr(Tensor, n + "_", ip)
    return op


def _make_unary_float(name, compute, doc, *, real_only=None, aliases=(), node=None,
                      backward=None, saves=("self",)):
    """A unary op whose integer/bool inputs become the default float dtype.

    ``compute`` gets the input in the compute dtype (float32 for half types).
    ``real_only`` is the exception class raised for complex inputs, if any.
    ``backward(node, grad)`` is the derivative formula, recorded as a node class
    named ``node``; it reads ``node._saved_self`` and/or ``node._saved_result``
    as listed in ``saves``.
    """
    node_cls = type(node, (Node,), {"backward": backward, "__module__": __name__}) \
        if backward else None

    def op(input, *, out=None):
        a = input._data
        dt = float_result_dtype(_by_np[a.dtype])
        if real_only is not None and dt._category == 3:
            if real_only is NotImplementedError:
                raise not_implemented_for(name + "_vml", dt) if name.startswith("erf") else \
                    not_implemented_for(name, dt)
            raise real_only(f"{name} is not supported for complex tensors.")
        with xp.errstate(all="ignore"):
            r = compute(a.astype(compute_dtype(dt), copy=False))
        r = wrap(result_array(r, dt))
        if node_cls is not None and needs_grad(input):
            saved = {}
            if "self" in saves:
                saved["self"] = input
            if "result" in saves:
                saved["result"] = r
            record(r, node_cls, (input,), **saved)
        return finish(r, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    if node_cls is not None:
        globals()[node] = node_cls
    return _register_unary(op, *aliases)


_by_np = _dt._by_np
_PI = 3.141592653589793


def _rsqrt(a):
    return 1 / xp.sqrt(a)


def _sigmoid(a):
    return 1 / (1 + xp.exp(-a))


def _reciprocal(a):
    return 1 / a


# Derivative formulas are written with glasstorch ops, so create_graph=True
# differentiates them again (double backward) with no extra code.
_LN2, _LN10 = 0.6931471805599453, 2.302585092994046


def _unary(name, compute, doc, node, backward, saves=("self",), **kw):
    return _make_unary_float(name, compute, doc, node=node, backward=backward, saves=saves, **kw)


exp = _unary("exp", xp.exp, "e ** input, elementwise.", "ExpBackward0",
             lambda n, g: g * n._saved_result.conj(), saves=("result",))
log = _unary("log", xp.log, "Natural logarithm, elementwise.", "LogBackward0",
             lambda n, g: g / n._saved_self.conj())
sqrt = _unary("sqrt", xp.sqrt, "Square root, elementwise.", "SqrtBackward0",
              lambda n, g: g / (2 * n._saved_result.conj()), saves=("result",))
exp2 = _unary("exp2", xp.exp2, "2 ** input, elementwise.", "Exp2Backward0",
              lambda n, g: g * n._saved_result.conj() * _LN2, saves=("result",))
expm1 = _unary("expm1", xp.expm1, "exp(input) - 1, accurate near zero.", "Expm1Backward0",
               lambda n, g: g * (n._saved_result.conj() + 1), saves=("result",))
log2 = _unary("log2", xp.log2, "Base-2 logarithm, elementwise.", "Log2Backward0",
              lambda n, g: g / (n._saved_self.conj() * _LN2))
log10 = _unary("log10", xp.log10, "Base-10 logarithm, elementwise.", "Log10Backward0",
               lambda n, g: g / (n._saved_self.conj() * _LN10))
log1p = _unary("log1p", xp.log1p, "log(1 + input), accurate near zero.", "Log1PBackward0",
               lambda n, g: g / (n._saved_self.conj() + 1))
rsqrt = _unary("rsqrt", _rsqrt, "1 / sqrt(input), elementwise.", "RsqrtBackward0",
               lambda n, g: -0.5 * g * n._saved_result.pow(3).conj(), saves=("result",))
reciprocal = _unary("reciprocal", _reciprocal, "1 / input, elementwise.", "ReciprocalBackward0",
                    lambda n, g: -g * (n._saved_result * n._saved_result).conj(),
                    saves=("result",))
sigmoid = _unary("sigmoid", _sigmoid, "The logistic function 1 / (1 + exp(-input)).",
                 "SigmoidBackward0",
                 lambda n, g: g * (n._saved_result * (1 - n._saved_result)).conj(),
                 saves=("result",))
sin = _unary("sin", xp.sin, "Sine, elementwise.", "SinBackward0",
             lambda n, g: g * n._saved_self.cos().conj())
cos = _unary("cos", xp.cos, "Cosine, elementwise.", "CosBackward0",
             lambda n, g: -g * n._saved_self.sin().conj())
tan = _unary("tan", xp.tan, "Tangent, elementwise.", "TanBackward0",
             lambda n, g: g * (1 + n._saved_result * n._saved_result).conj(),
             saves=("result",))
asin = _unary("asin", xp.arcsin, "Inverse sine.", "AsinBackward0",
              lambda n, g: g * (1 - n._saved_self * n._saved_self).rsqrt().conj(),
              aliases=("arcsin",))
acos = _unary("acos", xp.arccos, "Inverse cosine.", "AcosBackward0",
              lambda n, g: -g * (1 - n._saved_self * n._saved_self).rsqrt().conj(),
              aliases=("arccos",))
atan = _unary("atan", xp.arctan, "Inverse tangent.", "AtanBackward0",
              lambda n, g: g / (1 + n._saved_self * n._saved_self).conj(), aliases=("arctan",))
sinh = _unary("sinh", xp.sinh, "Hyperbolic sine.", "SinhBackward0",
              lambda n, g: g * n._saved_self.cosh().conj())
cosh = _unary("cosh", xp.cosh, "Hyperbolic cosine.", "CoshBackward0",
              lambda n, g: g * n._saved_self.sinh().conj())
tanh = _unary("tanh", xp.tanh, "Hyperbolic tangent.", "TanhBackward0",
              lambda n, g: g * (1 - n._saved_result * n._saved_result).conj(),
              saves=("result",))
asinh = _unary("asinh", xp.arcsinh, "Inverse hyperbolic sine.", "AsinhBackward0",
               lambda n, g: g * (n._saved_self * n._saved_self + 1).rsqrt().conj(),
               aliases=("arcsinh",))
acosh = _unary("acosh", xp.arccosh, "Inverse hyperbolic cosine.", "AcoshBackward0",
               lambda n, g: g * ((n._saved_self - 1).rsqrt() * (n._saved_self + 1).rsqrt()
                                 ).conj(), aliases=("arccosh",))
atanh = _unary("atanh", xp.arctanh, "Inverse hyperbolic tangent.", "AtanhBackward0",
               lambda n, g: g / (1 - n._saved_self * n._saved_self).conj(),
               aliases=("arctanh",))
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def _inplace_without_derivative(op, node_name):
    """``op_`` whose history torch records as a node that refuses to backpropagate."""
    def backward(node, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {op.__name__}' is "
                                  "not implemented.")
    node_cls = type(node_name, (Node,), {"backward": backward, "__module__": __name__})

    def inplace(self):
        r = op(self)
        if r.grad_fn is not None:
            record(r, node_cls, (self,))
        return assign_inplace(self, r)
    inplace.__name__ = inplace.__qualname__ = op.__name__ + "_"
    inplace.__doc__ = f"In-place version of :func:`{op.__name__}`."
    return inplace


# torch has no derivative for these three in-place forms (their formulas need the input)
for _fn in (asinh, acosh, atanh):
    _ip = _inplace_without_derivative(_fn, _fn.__name__.capitalize() + "Backward1")
    setattr(Tensor, _fn.__name__ + "_", _ip)
    setattr(Tensor, "arc" + _fn.__name__ + "_", _ip)


def _deg2rad(a):
    return a * a.dtype.type(_PI / 180)


def _rad2deg(a):
    return a * a.dtype.type(180 / _PI)


deg2rad = _unary("deg2rad", _deg2rad, "Degrees to radians.", "Deg2RadBackward0",
                  lambda n, g: g * (_PI / 180), saves=(), real_only=RuntimeError)
rad2deg = _unary("rad2deg", _rad2deg, "Radians to degrees.", "Rad2DegBackward0",
                  lambda n, g: g * (180 / _PI), saves=(), real_only=RuntimeError)


# erf family. NumPy has no erf; these are computed in float64 and rounded once.
# |x| < 2: erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!!  (positive terms,
# no cancellation; 30 terms reach double precision). |x| >= 2: erfc from its continued
# fraction, evaluated backwards with a fixed depth (40 levels reach ~1e-13 relative).
_TWO_OVER_SQRTPI = 1.1283791670955126
_INV_SQRTPI = 0.5641895835477563


def _erf_series(x):
    x2 = x * x
    term = x.copy()
    s = x.copy()
    for n in range(1, 30):
        term *= x2 * (2.0 / (2 * n + 1))
        s += term
    return _TWO_OVER_SQRTPI * xp.exp(-x2) * s


def _erfc_cf(x):
    f = x.copy()
    for k in range(40, 0, -1):
        f = x + (k * 0.5) / f
    return xp.exp(-x * x) * _INV_SQRTPI / f


def _erf_parts(a):
    """(erf(|a|), erfc(|a|)) in float64; the pair keeps whichever is accurate."""
    x = xp.abs(a.astype(xp.float64))
    small = x < 2.0
    erf_ = xp.empty_like(x)
    erfc_ = xp.empty_like(x)
    xs, xl = x[small], x[~small]
    e = _erf_series(xs)
    erf_[small], erfc_[small] = e, 1.0 - e
    c = _erfc_cf(xp.where(xp.isnan(xl), 1.0, xl))
    c = xp.where(xp.isnan(xl), xl, c)
    erf_[~small], erfc_[~small] = 1.0 - c, c
    return erf_, erfc_


# float32 erf: erf(x) = tanh(x * g(x^2)) with g a degree-8 polynomial fitted (weighted
# towards float32's accuracy needs) to atanh(erf(x))/x on |x| <= 4. No branches and no
# float64 temporaries: ~20 float32 ufunc passes (tanh is SIMD in NumPy). Max error
# ~3 ulp against the exact erf (torch's: ~1 ulp). erf rounds to +-1 in float32 from
# |x| = 3.9192, but NumPy's float32 tanh only returns 1 from 10, so past |x| = 3.88 the
# argument gets a steep extra ramp (and +-inf stays +-inf).
_ERF32_G = tuple(xp.float32(c) for c in (
    -1.3041677737746227e-09, 4.3089947610042145e-08, -3.8251209844020195e-07,
    -2.650000396897667e-06, 7.890228152973577e-05, -0.000607362249866128,
    -0.000199668895220384, 0.10277077555656433, 1.128379225730896))
_ERF32_KNEE = xp.float32(3.88)
_ERF32_RAMP = xp.float32(40.0)


def _erf_f32(a):
    if a.ndim == 0:  # ufuncs return scalars on 0-d arrays; the in-place steps need arrays
        return _erf_f32(a.reshape(1)).reshape(())
    x = xp.clip(a, -_ERF32_KNEE, _ERF32_KNEE)
    t = x * x
    c = _ERF32_G
    p = t * c[0]
    p += c[1]
    for k in c[2:]:
        p *= t
        p += k
    p *= x
    with xp.errstate(over="ignore", invalid="ignore"):
        x -= a
        x *= -_ERF32_RAMP
        p += x
    return xp.tanh(p, out=p)


def _erf(a):
    if a.dtype == xp.float32:
        return _erf_f32(a)
    e, _ = _erf_parts(a)
    return xp.copysign(e, a)


def _erfc(a):
    e, c = _erf_parts(a)
    return xp.where(a < 0, 1.0 + e, c)


def _erfinv(a):
    y = a.astype(xp.float64)
    ay = xp.abs(y)
    # Giles' single-precision approximation as a start, then Newton steps on
    # erf or log(erfc) (1 - |y| is exact for |y| >= 0.5, so precision holds near 1).
    w = -xp.log((1.0 - ay) * (1.0 + ay))
    lo = w < 5.0
    wl = w - 2.5
    wh = xp.sqrt(xp.where(lo, 5.0, w)) - 3.0
    pl = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        pl = c + pl * wl
    ph = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        ph = c + ph * wh
    x = xp.where(lo, pl, ph) * ay
    ok = ay < 1.0
    x = xp.where(ok, x, 0.5)
    target = 1.0 - ay
    big = ay >= 0.5
    log_target = xp.log(xp.where(big, target, 1.0))
    for _ in range(4):
        e, c = _erf_parts(x)
        d = _TWO_OVER_SQRTPI * xp.exp(-x * x)
        # small |y|: Newton on erf(x) = |y|; near 1: Newton on log(erfc(x)) = log(1 - |y|),
        # which is nearly linear in the tail and exact in 1 - |y|.
        step = xp.where(big, (log_target - xp.log(xp.where(big, c, 1.0))) * c, e - ay) / d
        x = x - step
    x = xp.where(ok, x, xp.where(ay == 1.0, xp.inf, xp.nan))
    return xp.copysign(x, y)


_TWO_OVER_SQRT_PI = 1.1283791670955126

erf = _unary("erf", _erf, "The error function.", "ErfBackward0",
             lambda n, g: g * _TWO_OVER_SQRT_PI * (-n._saved_self * n._saved_self).exp(),
             real_only=NotImplementedError)
erfc = _unary("erfc", _erfc, "The complementary error function 1 - erf(input).",
              "ErfcBackward0",
              lambda n, g: -g * _TWO_OVER_SQRT_PI * (-n._saved_self * n._saved_self).exp(),
              real_only=NotImplementedError)
erfinv = _unary("erfinv", _erfinv, "The inverse error function.", "ErfinvBackward0",
                lambda n, g: g * (n._saved_result * n._saved_result).exp() / _TWO_OVER_SQRT_PI,
                saves=("result",), real_only=NotImplementedError)


@register()
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps]."""
    a = input._data
    dt = float_result_dtype(_by_np[a.dtype])
    if dt._category == 3:
        raise not_implemented_for("logit", dt)
    p = a.astype(compute_dtype(dt), copy=False)
    if eps is not None:
        # the bounds are rounded to the result dtype first, as torch does
        lo = float(dt.np.type(eps))
        p = xp.clip(p, lo, float(dt.np.type(1 - lo))).astype(p.dtype, copy=False)
    with xp.errstate(all="ignore"):
        r = xp.log(p / (1 - p))
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, LogitBackward0, (input,), self=input, eps=eps)
    return finish(r, out)


class LogitBackward0(Node):
    """1 / (p (1 - p)); outside [eps, 1 - eps] zero (with eps) or NaN (without)."""

    def backward(self, grad):
        p, eps = self._saved_self, self._saved_eps
        g = grad / (p * (1 - p))
        if eps is None:
            return where((p < 0) | (p > 1), float("nan"), g)
        return where((p < eps) | (p > 1 - eps), 0, g)


register_inplace(logit)


# ----------------------------------------------------------------------------- rounding, sign

class _ZeroGrad(Node):
    """Piecewise-constant ops: torch's gradient is zero everywhere."""

    def backward(self, grad):
        return _zeros_like(grad)


def _zero_grad_node(name):
    return type(name, (_ZeroGrad,), {"__module__": __name__})


FloorBackward0 = _zero_grad_node("FloorBackward0")
CeilBackward0 = _zero_grad_node("CeilBackward0")
TruncBackward0 = _zero_grad_node("TruncBackward0")
RoundBackward0 = _zero_grad_node("RoundBackward0")
RoundBackward1 = _zero_grad_node("RoundBackward1")
SignBackward0 = _zero_grad_node("SignBackward0")
_ROUNDING_NODES = {"floor": FloorBackward0, "ceil": CeilBackward0, "trunc": TruncBackward0}


def _make_rounding(name, ufunc, doc, aliases=()):
    """floor/ceil/trunc: integers pass through unchanged, bool and complex are refused."""
    node = _ROUNDING_NODES[name]

    def op(input, *, out=None):
        a = input._data
        dt = _by_np[a.dtype]
        if dt._category == 2:
            r = result_array(ufunc(compute_array(a)), dt)
        elif dt._category == 1:
            r = a.copy()
        elif dt is _dt.bool_:
            raise not_implemented_for(name + "_vml", dt)
        else:
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        r = wrap(r)
        if needs_grad(input):
            record(r, node, (input,))
        return finish(r, out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return _register_unary(op, *aliases)


floor = _make_rounding("floor", xp.floor, "Largest integer <= input, elementwise.")
ceil = _make_rounding("ceil", xp.ceil, "Smallest integer >= input, elementwise.")
trunc = _make_rounding("trunc", xp.trunc, "Round toward zero, elementwise.", ("fix",))
fix = trunc


@register()
def round(input, *, decimals=None, out=None):
    """Round half to even; ``decimals`` scales by 10**decimals first (like torch)."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category != 2:
        if dt._category == 1 and decimals is None:
            return finish(wrap(a.copy()), out)
        raise not_implemented_for("round" if decimals else "round_vml", dt)
    node = RoundBackward0 if decimals is None else RoundBackward1
    decimals = decimals or 0
    c = compute_array(a)
    with xp.errstate(all="ignore"):
        if decimals > 0:
            p = c.dtype.type(10.0 ** decimals)
            r = xp.rint(c * p) / p
        elif decimals < 0:
            p = c.dtype.type(10.0 ** -decimals)
            r = xp.rint(c / p) * p
        else:
            r = xp.rint(c)
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, node, (input,))
    return finish(r, out)


register_inplace(round)


@register()
def frac(input, *, out=None):
    """input - trunc(input); floating dtypes only."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category != 2:
        raise not_implemented_for("frac", dt)
    c = compute_array(a)
    r = wrap(result_array(c - xp.trunc(c), dt))
    if needs_grad(input):
        record(r, FracBackward0, (input,))
    return finish(r, out)


class FracBackward0(Node):
    def backward(self, grad):
        return grad


register_inplace(frac)


def _sign_array(a, dt):
    if dt is _dt.bool_:
        return a.copy()
    # (x > 0) - (x < 0) gives 0 for NaN and +0 for -0, as torch does.
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


@register()
def sign(input, *, out=None):
    """-1, 0 or 1 by the sign of each element (0 for NaN); refuses complex."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category == 3:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    r = wrap(_sign_array(a, dt))
    if needs_grad(input):
        record(r, SignBackward0, (input,))
    return finish(r, out)


register_inplace(sign)


@register()
def sgn(input, *, out=None):
    """sign for real inputs; x / |x| (0 at 0) for complex ones."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category != 3:
        r = wrap(_sign_array(a, dt))
    else:
        m = xp.abs(a)
        with xp.errstate(all="ignore"):
            r = wrap(xp.where(m == 0, 0, a / m).astype(a.dtype))
    if needs_grad(input):
        record(r, SgnBackward0, (input,), self=input, result=r)
    return finish(r, out)


class SgnBackward0(Node):
    """Zero for real inputs; for complex z, (g - sgn(z)**2 * conj(g)) / (2|z|) (0 at z = 0)."""

    def backward(self, grad):
        z = self._saved_self
        if not z.dtype.is_complex:
            return _zeros_like(grad)
        s = self._saved_result
        m = z.abs()
        return where(m == 0, 0, (grad - s * s * grad.conj()) / (m * 2))


register_inplace(sgn)


@register()
def signbit(input, *, out=None):
    """True where the sign bit is set (including -0.0 and negative NaN)."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category == 3:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if dt._category == 2:
        r = xp.signbit(compute_array(a))
    else:
        r = a < 0
    return finish(wrap(r), out)


@register()
def square(input, *, out=None):
    """input * input; bool becomes int64 like torch.pow(input, 2)."""
    a = input._data
    if a.dtype == xp.bool_:
        a = a.astype(xp.int64)
    r = wrap(xp.multiply(a, a))
    if needs_grad(input):  # torch records square as pow(input, 2)
        record(r, PowBackward0, (input,), self=input, exponent=2)
    return finish(r, out)


register_inplace(square)


@register("__pos__")
def positive(input):
    """Returns ``input`` itself; refused for bool like torch's unary ``+``."""
    if input._data.dtype == xp.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@register()
def angle(input, *, out=None):
    """Argument of complex numbers; pi for negative reals, 0 otherwise (NaN kept)."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category == 3:
        r = wrap(xp.angle(a))
    else:
        rt = float_result_dtype(dt)
        c = a.astype(compute_dtype(rt), copy=False)
        r = xp.where(c < 0, c.dtype.type(_PI), c.dtype.type(0))
        if rt._category == 2 and dt._category == 2:
            r = xp.where(xp.isnan(c), c, r)
        r = wrap(result_array(r, rt))
    if needs_grad(input):
        record(r, AngleBackward0, (input,), self=input)
    return finish(r, out)


class AngleBackward0(Node):
    """Zero for real inputs; for complex z = x + iy, d angle = (x dy - y dx) / |z|^2."""

    def backward(self, grad):
        z = self._saved_self
        if not z.dtype.is_complex:
            return _zeros_like(z)
        # the real gradient g maps to g * i z / |z|^2 (0 at z = 0)
        m2 = (z * z.conj()).real
        return where(m2 == 0, 0, grad * z * 1j / m2)


@register()
def conj(input):
    """Complex conjugate; real tensors are returned as they are."""
    a = input._data
    if a.dtype.kind != "c":
        return input
    r = wrap(xp.conjugate(a))
    if needs_grad(input):
        record(r, ConjBackward0, (input,))
    return r


class ConjBackward0(Node):
    def backward(self, grad):
        return grad.conj()


class ConjPhysicalBackward0(ConjBackward0):
    pass


@register()
def conj_physical(input, *, out=None):
    """Complex conjugate computed eagerly; real tensors are returned as they are."""
    a = input._data
    if a.dtype.kind != "c":
        return input if out is None else finish(wrap(a), out)
    r = wrap(xp.conjugate(a))
    if needs_grad(input):
        record(r, ConjPhysicalBackward0, (input,))
    return finish(r, out)


def _conj_physical_(self):
    """In-place ``conj_physical``: conjugates a complex tensor's values; a real tensor is
    unchanged."""
    if self._data.dtype.kind == "c":
        assign_inplace(self, conj_physical(self))
    return self


Tensor.conj_physical_ = _conj_physical_


@register()
def resolve_conj(input):
    """No lazy conjugation here, so nothing to resolve: returns ``input``."""
    return input


@register()
def resolve_neg(input):
    """No lazy negation here, so nothing to resolve: returns ``input``."""
    return input


@register()
def nan_to_num(input, nan=None, posinf=None, neginf=None, *, out=None):
    """Replace NaN, +inf and -inf (defaults: 0 and the dtype's largest/lowest finite)."""
    if nan is None:
        nan = 0.0
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category < 2:
        return finish(wrap(a.copy()), out)
    info = _dt.finfo(dt)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    if dt._category == 3:
        r = xp.empty_like(a)
        r.real = _nan_to_num_real(a.real, nan, hi, lo)
        r.imag = _nan_to_num_real(a.imag, nan, hi, lo)
    else:
        r = _nan_to_num_real(a, nan, hi, lo)
    r = wrap(r)
    if needs_grad(input):
        record(r, NanToNumBackward0, (input,), self=input)
    return finish(r, out)


class NanToNumBackward0(Node):
    def backward(self, grad):
        return where(self._saved_self.isfinite(), grad, 0)


def _nan_to_num_real(a, nan, hi, lo):
    c = compute_array(a)
    t = c.dtype.type
    with xp.errstate(over="ignore"):
        r = xp.where(xp.isnan(c), t(nan), xp.where(c == xp.inf, t(hi),
                                                    xp.where(c == -xp.inf, t(lo), c)))
    return r.astype(a.dtype)


register_inplace(nan_to_num)


# ----------------------------------------------------------------------------- classification

def _classify(name, fn, doc, complex_error=None, out_arg=False):
    def op(input):
        a = input._data
        if a.dtype.kind in "biu":
            return wrap(fn_int(a))
        if complex_error is not None and a.dtype.kind == "c":
            raise RuntimeError(complex_error)
        return wrap(fn(compute_array(a)))
    if out_arg:  # torch gives out= to isposinf/isneginf only
        compute = op

        def op(input, *, out=None):
            return finish(compute(input), out)
    fn_int = _INT_CLASSIFY[name]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    setattr(Tensor, name, op)
    return op


def _all_false(a):
    return xp.zeros(a.shape, dtype=xp.bool_)


def _all_true(a):
    return xp.ones(a.shape, dtype=xp.bool_)


def _isposinf(a):
    return a == xp.inf


def _isneginf(a):
    return a == -xp.inf


def _isreal(a):
    return a.imag == 0 if a.dtype.kind == "c" else _all_true(a)


_INT_CLASSIFY = {"isnan": _all_false, "isinf": _all_false, "isfinite": _all_true,
                 "isposinf": _all_false, "isneginf": _all_false, "isreal": _all_true}
isnan = _classify("isnan", xp.isnan, "True where input is NaN.")
isinf = _classify("isinf", xp.isinf, "True where input is +/-infinity.")
isfinite = _classify("isfinite", xp.isfinite, "True where input is neither inf nor NaN.")
isposinf = _classify("isposinf", _isposinf, "True where input is +infinity.",
                     "isposinf does not support complex inputs.", out_arg=True)
isneginf = _classify("isneginf", _isneginf, "True where input is -infinity.",
                     "isneginf does not support complex inputs.", out_arg=True)
isreal = _classify("isreal", _isreal, "True where input has no imaginary part.")


# ------------------------------------------------------------------- integer-style division

def _int_or_float_binary(name, kernel, input, other, int_fn, float_fn):
    x, y, dt = binary_operands(input, other)
    cat = dt._category
    if cat == 0 or cat == 3:
        raise not_implemented_for(kernel, dt)
    with xp.errstate(all="ignore"):
        if cat == 1:
            if _any_zero(y):
                raise RuntimeError("ZeroDivisionError")
            return wrap(_apply(int_fn, x, y))
        cx = compute_array(xp.asarray(x, dt.np))
        cy = compute_array(xp.asarray(y, dt.np))
        return wrap(result_array(_apply(float_fn, cx, cy), dt))


def _not_differentiable(op):
    """A node class like torch's ``NotImplemented``: backward through it raises."""
    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return type("NotImplemented", (Node,), {"backward": backward, "__module__": __name__})


_FloorDivideNotImplemented = _not_differentiable("floor_divide")
_RemainderNotImplemented = _not_differentiable("remainder")
_HeavisideNotImplemented = _not_differentiable("heaviside")


@register("__floordiv__")
def floor_divide(input, other, *, out=None):
    """Division rounded toward -inf (Python's ``//``); integer division by zero raises."""
    r = _int_or_float_binary("floor_divide", "div_floor", input, other, xp.floor_divide,
                             xp.floor_divide)
    if needs_grad(input, other):
        record(r, _FloorDivideNotImplemented,
               tuple(v for v in (input, other) if isinstance(v, Tensor)))
    return finish(r, out)


@register("__mod__")
def remainder(input, other, *, out=None):
    """Python-style modulus: the result has the sign of the divisor."""
    r = _int_or_float_binary("remainder", "remainder", input, other, xp.remainder,
                             xp.remainder)
    if needs_grad(input, other):
        if not isinstance(input, Tensor):
            record(r, _RemainderNotImplemented, (other,))
        elif isinstance(other, Tensor):
            record(r, RemainderBackward1, (input, other), self=input, other=other)
        else:
            record(r, RemainderBackward0, (input,))
    return finish(r, out)


@register()
def fmod(input, other, *, out=None):
    """C-style modulus: the result has the sign of the dividend."""
    _tensor_arg("fmod", "input", 1, input)
    r = _int_or_float_binary("fmod", "fmod", input, other, xp.fmod, xp.fmod)
    if needs_grad(input, other):
        if isinstance(other, Tensor):
            record(r, FmodBackward1, (input, other), self=input, other=other)
        else:
            record(r, FmodBackward0, (input,))
    return finish(r, out)


class RemainderBackward0(Node):
    def backward(self, grad):
        return grad


class RemainderBackward1(Node):
    """self - floor(self / other) * other: d/dother = -floor(self / other)."""

    def backward(self, grad):
        go = None
        if self.next_functions[1][0] is not None:
            go = -grad * _rounded_quotient(self, xp.floor_divide)
        return grad, go


class FmodBackward0(RemainderBackward0):
    pass


class FmodBackward1(Node):
    """self - trunc(self / other) * other: d/dother = -trunc(self / other)."""

    def backward(self, grad):
        go = None
        if self.next_functions[1][0] is not None:
            go = -grad * _rounded_quotient(self, _trunc_divide)
        return grad, go


def _trunc_divide(x, y):
    return xp.trunc(x / y)


def _rounded_quotient(node, fn):
    # piecewise constant, so a constant tensor (no graph) is its exact derivative
    x, y, dt = _promoted(node._saved_self, node._saved_other)
    with xp.errstate(all="ignore"):
        return wrap(result_array(fn(compute_array(x), compute_array(y)), dt))


def __rfloordiv__(self, other):
    return floor_divide(other, self)


def __rmod__(self, other):
    return remainder(other, self)


Tensor.__rfloordiv__ = __rfloordiv__
Tensor.__rmod__ = __rmod__
for _fn in (floor_divide, remainder, fmod):
    register_inplace(_fn)
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__imod__ = Tensor.remainder_


# ----------------------------------------------------------------------------- powers

# exponents torch's kernel evaluates with products and roots instead of pow(): faster, and
# results equal to torch's to the last bit
_POWERS_BY_PRODUCT = {2: lambda a: a * a, 3: lambda a: a * a * a, -1: xp.reciprocal,
                      -2: lambda a: 1 / (a * a), 0.5: xp.sqrt, -0.5: lambda a: 1 / xp.sqrt(a)}


def _power_by_number(a, exponent):
    fn = _POWERS_BY_PRODUCT.get(exponent) if a.dtype.kind == "f" else None
    return xp.power(a, exponent) if fn is None else fn(a)


@register("__pow__")
def pow(input, exponent, *, out=None):
    """input ** exponent with torch's promotion; integer bases refuse negative int scalars."""
    x, y, dt = binary_operands(input, exponent)
    cat = dt._category
    if cat < 2 and type(exponent) is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with xp.errstate(all="ignore"):
        if cat >= 2:
            if isinstance(y, xp.ndarray) or dt is _dt.bfloat16:
                r = result_array(_apply(xp.power, compute_array(xp.asarray(x, dt.np)),
                                        compute_array(xp.asarray(y, dt.np))), dt)
            else:
                r = result_array(_power_by_number(compute_array(x), y), dt)
        elif cat == 1:
            r = _int_pow(x, y, exponent)
        else:
            if type(exponent) is bool:
                r = x.copy() if exponent else xp.ones_like(x)
            elif type(input) is bool:
                r = xp.ones_like(y) if input else ~y
            else:
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    r = wrap(r)
    if needs_grad(input, exponent):
        _record_pow(r, input, exponent)
    return finish(r, out)


def _record_pow(r, input, exponent):
    if not isinstance(exponent, Tensor):
        record(r, PowBackward0, (input,), self=input, exponent=exponent)
    elif not isinstance(input, Tensor):
        record(r, PowBackward2, (exponent,), self=input, exponent=exponent, result=r)
    else:
        record(r, PowBackward1, (input, exponent), self=input, exponent=exponent, result=r)


class PowBackward0(Node):
    """tensor ** number: exponent * self ** (exponent - 1) (zero for exponent 0)."""

    def backward(self, grad):
        e = self._saved_exponent
        if e == 0:
            return _zeros_like(grad)
        return grad * _conj(self._saved_self.pow(e - 1) * e)


class PowBackward1(Node):
    """tensor ** tensor."""

    def backward(self, grad):
        s, e = self._saved_self, self._saved_exponent
        gs = ge = None
        if self.next_functions[0][0] is not None:
            # exponent 0 has derivative 0 even at base 0 (where the formula gives 0 * inf)
            gs = where(e == 0, 0, grad * _conj(s.pow(e - 1) * e))
        if self.next_functions[1][0] is not None:
            r = self._saved_result
            ge = grad * _conj(where((s == 0) & (e >= 0), 0, r * s.log()))
        return gs, ge


class PowBackward2(Node):
    """number ** tensor: result * log(base) (zero for base 0 and exponent >= 0)."""

    def backward(self, grad):
        base, e, r = self._saved_self, self._saved_exponent, self._saved_result
        with xp.errstate(all="ignore"):
            log_base = wrap(xp.log(xp.asarray(base, r._data.dtype)))
        g = r * log_base
        if base == 0:
            g = where(e >= 0, 0, g)
        return grad * _conj(g)


def _zeros_like(t):
    return wrap(xp.zeros(t._data.shape, t._data.dtype))


def _int_pow(x, y, exponent):
    if not isinstance(y, xp.ndarray):
        if y < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return xp.power(x, y)
    neg = y < 0
    if not neg.any():
        return _apply(xp.power, x, y)
    # Integer results of negative powers: 1 ** -n = 1, (-1) ** -n = +-1, otherwise 0.
    pos = _apply(xp.power, x, xp.where(neg, 0, y).astype(y.dtype))
    odd = (y & 1).astype(xp.bool_)
    small = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0))
    return xp.where(neg, small, pos).astype(pos.dtype)


def __rpow__(self, other):
    return pow(other, self)


Tensor.__rpow__ = __rpow__
register_inplace(pow)
Tensor.__ipow__ = Tensor.pow_


@register()
def float_power(input, exponent, *, out=None):
    """pow computed and returned in double precision (complex128 for complex operands)."""
    cplx = _dtype_of(input)._category == 3 or _dtype_of(exponent)._category == 3
    rt = _dt.complex128 if cplx else _dt.float64
    if needs_grad(input, exponent):
        # differentiable casts (ToCopyBackward0, as in torch) and a recorded pow
        return finish(pow(input.to(rt) if isinstance(input, Tensor) else input,
                          exponent.to(rt) if isinstance(exponent, Tensor) else exponent), out)
    x = input._data.astype(rt.np) if isinstance(input, Tensor) else input
    y = exponent._data.astype(rt.np) if isinstance(exponent, Tensor) else exponent
    with xp.errstate(all="ignore"):
        r = _apply(xp.power, xp.asarray(x, rt.np), xp.asarray(y, rt.np))
    return finish(wrap(r), out)


def _float_power_(self, exponent):
    """In-place ``float_power``; RuntimeError unless the tensor is already float64 (or complex128),
    the dtype the result needs."""
    r = float_power(self, exponent)
    if r.dtype is not self.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_SHORT[self.dtype]} but "
                           f"the operation's result requires dtype {_SHORT[r.dtype]}")
    return assign_inplace(self, r)


Tensor.float_power_ = _float_power_


# ----------------------------------------------------------------------------- float binary ops

def _float_binary(name, input, other, fn, *, int_ok=True, kernel=None):
    """A binary op computed in floating point (integer operands -> default float)."""
    x, y, dt = binary_operands(input, other)
    if dt._category == 3 or (not int_ok and dt._category < 2):
        raise not_implemented_for(kernel or name, dt)
    rt = float_result_dtype(dt)
    ct = compute_dtype(rt)
    if rt is not dt:
        # integer operands go straight to floating point, as in torch: first promoting
        # them to a common integer type (uint8 with int8 -> uint8) would wrap negatives
        x, y = _as_array(input), _as_array(other)
    with xp.errstate(all="ignore"):
        r = _apply(fn, xp.asarray(x).astype(ct, copy=False), xp.asarray(y).astype(ct, copy=False))
    return wrap(result_array(r, rt))


def _as_array(v):
    return v._data if isinstance(v, Tensor) else xp.asarray(v)


@register("arctan2")
def atan2(input, other, *, out=None):
    """Angle of the point (other, input), in (-pi, pi]."""
    _tensors_only("atan2", input, other)
    r = _float_binary("atan2", input, other, xp.arctan2)
    if needs_grad(input, other):
        record(r, Atan2Backward0, (input, other), self=input, other=other)
    return finish(r, out)


class Atan2Backward0(Node):
    def backward(self, grad):
        y, x = self._saved_self, self._saved_other
        g = grad / (y * y + x * x)
        return (g * x if self.next_functions[0][0] is not None else None,
                -g * y if self.next_functions[1][0] is not None else None)


arctan2 = atan2
register_inplace(atan2)
Tensor.arctan2_ = Tensor.atan2_


@register()
def hypot(input, other, *, out=None):
    """sqrt(input**2 + other**2) without undue overflow; floating dtypes only."""
    _tensors_only("hypot", input, other)
    r = _float_binary("hypot", input, other, xp.hypot, int_ok=False)
    if needs_grad(input, other):
        record(r, HypotBackward0, (input, other), self=input, other=other, result=r)
    return finish(r, out)


class HypotBackward0(Node):
    def backward(self, grad):
        g = grad / self._saved_result
        return (g * self._saved_self if self.next_functions[0][0] is not None else None,
                g * self._saved_other if self.next_functions[1][0] is not None else None)


register_inplace(hypot)


@register()
def copysign(input, other, *, out=None):
    """|input| with the sign of ``other`` (integer inputs become floating)."""
    _tensor_arg("copysign", "input", 1, input)
    r = _float_binary("copysign", input, other, xp.copysign)
    if needs_grad(input, other):
        if isinstance(other, Tensor):
            record(r, CopysignBackward0, (input, other), self=input, result=r)
        else:
            record(r, CopysignBackward1, (input,), self=input, result=r)
    return finish(r, out)


def _copysign_self_grad(node, grad):
    # d|x|*s/dx = result / x, taken as 0 at x = 0
    x = node._saved_self
    return grad * where(x == 0, 0, node._saved_result / x)


class CopysignBackward0(Node):
    def backward(self, grad):
        go = _zeros_like(grad) if self.next_functions[1][0] is not None else None
        return _copysign_self_grad(self, grad), go


class CopysignBackward1(Node):
    def backward(self, grad):
        return _copysign_self_grad(self, grad)


register_inplace(copysign)


def _xlogy(x, y):
    r = x * xp.log(y)
    return xp.where(xp.isnan(y), y, xp.where(x == 0, 0, r))


@register()
def xlogy(input, other, *, out=None):
    """input * log(other), with 0 where input is 0 (unless other is NaN)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy(): expected at least one Tensor argument, got "
                        f"({type(input).__name__}, {type(other).__name__})")
    r = _float_binary("xlogy", input, other, _xlogy)
    if needs_grad(input, other):
        if not isinstance(input, Tensor):
            record(r, XlogyBackward1, (other,), self=input, other=other)
        elif not isinstance(other, Tensor):
            record(r, XlogyBackward2, (input,), self=input, other=other)
        else:
            record(r, XlogyBackward0, (input, other), self=input, other=other)
    return finish(r, out)


class XlogyBackward0(Node):
    """d/dx = log(y) (0 where x = 0); d/dy = x / y."""

    def backward(self, grad):
        x, y = self._saved_self, self._saved_other
        gx = _xlogy_self_grad(grad, x, y) if self.next_functions[0][0] is not None else None
        gy = grad * x / y if self.next_functions[1][0] is not None else None
        return gx, gy


class XlogyBackward1(Node):
    def backward(self, grad):  # number self, tensor other
        return grad * self._saved_self / self._saved_other


class XlogyBackward2(Node):
    def backward(self, grad):  # tensor self, number other
        return _xlogy_self_grad(grad, self._saved_self, self._saved_other)


def _xlogy_self_grad(grad, x, y):
    # log(y), except where x = 0 and log(y) is not finite-real (y <= 0): there 0
    return where((x == 0) & (y <= 0), 0, xlogy(grad, y))


register_inplace(xlogy)


def _ldexp(x, y):
    return x * xp.exp2(y)


@register()
def ldexp(input, other, *, out=None):
    """input * 2 ** other."""
    _tensors_only("ldexp", input, other)
    x, y, dt = binary_operands(input, other)
    rt = float_result_dtype(dt)
    ct = compute_dtype(rt)
    with xp.errstate(all="ignore"):
        r = _apply(_ldexp, x.astype(ct, copy=False), y.astype(ct, copy=False))
    r = wrap(result_array(r, rt))
    if needs_grad(input, other):
        record(r, LdexpBackward0, (input, other), other=other, result=r)
    return finish(r, out)


class LdexpBackward0(Node):
    def backward(self, grad):
        # torch uses pow(2, other): for integer ``other`` negative powers give 0, like torch
        gx = grad * pow(2, self._saved_other) if self.next_functions[0][0] is not None else None
        go = None
        if self.next_functions[1][0] is not None:
            go = grad * self._saved_result * _LN2
        return gx, go


register_inplace(ldexp)


class FrexpBackward0(Node):
    def backward(self, grad):  # mantissa = input * 2 ** -exponent
        return grad / self._saved_exponent.exp2()


@register()
def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1."""
    from .. import return_types
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category != 2:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = xp.frexp(compute_array(a))
    res = return_types.frexp(wrap(result_array(m, dt)), wrap(e.astype(xp.int32)))
    if needs_grad(input):
        record(res[0], FrexpBackward0, (input,), exponent=res[1])
    if out is not None:
        finish(res[0], out[0])
        finish(res[1], out[1])
        return return_types.frexp(out[0], out[1])
    return res


def _minmax(name, ufunc, doc):
    def op(input, other, *, out=None):
        _tensors_only(name, input, other)
        x, y, dt = binary_operands(input, other)
        if dt._category == 3:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        if dt is _dt.bfloat16:
            x, y = x.astype(xp.float32), y.astype(xp.float32)
        r = wrap(result_array(_apply(ufunc, x, y), dt))
        if needs_grad(input, other):
            record(r, node, (input, other), self=input, other=other)
        return finish(r, out)
    node = _MINMAX_NODES[name]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    setattr(Tensor, name, op)
    return op


class MaximumBackward0(Node):
    """The larger operand gets the gradient; ties split it evenly (NaN: both get it)."""

    def backward(self, grad):
        a, b = self._saved_self, self._saved_other
        half = where(a == b, grad / 2, grad)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = where(a < b if self._max else a > b, 0, half)
        if self.next_functions[1][0] is not None:
            gb = where(a > b if self._max else a < b, 0, half)
        return ga, gb

    _max = True


class MinimumBackward0(MaximumBackward0):
    _max = False


class FmaxBackward0(Node):
    """All of the gradient to the chosen operand (ties and a NaN other: to input)."""
    _max = True

    def backward(self, grad):
        a, b = self._saved_self, self._saved_other
        first = ((a >= b) if self._max else (a <= b)) | b.isnan()
        ga = where(first, grad, 0) if self.next_functions[0][0] is not None else None
        gb = where(first, 0, grad) if self.next_functions[1][0] is not None else None
        return ga, gb


class FminBackward0(FmaxBackward0):
    _max = False


_MINMAX_NODES = {"maximum": MaximumBackward0, "minimum": MinimumBackward0,
                 "fmax": FmaxBackward0, "fmin": FminBackward0}

maximum = _minmax("maximum", xp.maximum, "Elementwise maximum; NaN propagates.")
minimum = _minmax("minimum", xp.minimum, "Elementwise minimum; NaN propagates.")
fmax = _minmax("fmax", xp.fmax, "Elementwise maximum ignoring NaN where possible.")
fmin = _minmax("fmin", xp.fmin, "Elementwise minimum ignoring NaN where possible.")


@register()
def heaviside(input, values, *, out=None):
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    _tensors_only("heaviside", input, values, "values")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    if input.dtype._category == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    x, v = input._data, values._data
    r = wrap(_apply(lambda a, b: xp.where(a == 0, b, a > 0), x, v).astype(x.dtype))
    if needs_grad(input, values):
        record(r, _HeavisideNotImplemented, (input, values))
    return finish(r, out)


register_inplace(heaviside)


# ----------------------------------------------------------------------------- blends

@register()
def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input), evaluated like torch for accuracy near weight = 1."""
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"expected dtype {_c_name(dt)} for `end` but got dtype "
                           f"{_c_name(end.dtype)}")
    tensor_w = isinstance(weight, Tensor)
    if tensor_w and weight.dtype is not dt and weight._data.ndim:
        raise RuntimeError(f"expected dtype {_c_name(dt)} for `weight` but got dtype "
                           f"{_c_name(weight.dtype)}")
    if dt._category < 2:
        kernel = "lerp_kernel_tensor" if tensor_w else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_SHORT[dt]}\'')
    ct = compute_dtype(dt)
    s = input._data.astype(ct, copy=False)
    e = end._data.astype(ct, copy=False)
    w = weight._data.astype(ct, copy=False) if tensor_w else xp.asarray(weight, ct)
    with xp.errstate(all="ignore"):
        try:
            d = e - s
            r = xp.where(xp.abs(w) < 0.5, s + w * d, e - d * (1 - w))
        except ValueError:
            raise broadcast_error(s, e if w.ndim == 0 else w) from None
    r = wrap(result_array(r, dt))
    if needs_grad(input, end, weight):
        if tensor_w:
            record(r, LerpBackward1, (input, end, weight), self=input, end=end, weight=weight)
        else:
            record(r, LerpBackward0, (input, end), weight=weight)
    return finish(r, out)


class LerpBackward0(Node):
    def backward(self, grad):
        w = self._saved_weight
        return grad * _conj(1 - w), grad * _conj(w)


class LerpBackward1(Node):
    def backward(self, grad):
        w = self._saved_weight
        need = [f[0] is not None for f in self.next_functions]
        gs = grad * _conj(1 - w) if need[0] else None
        ge = grad * _conj(w) if need[1] else None
        gw = grad * _conj(self._saved_end - self._saved_self) if need[2] else None
        return gs, ge, gw


def _c_name(dt):
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}.get(dt.name,
                                                                                   dt.name)


register_inplace(lerp)


def _addc(name, input, tensor1, tensor2, value, fn):
    dt = _dt.result_dtype(input, tensor1, tensor2)
    if dt is _dt.bool_:
        raise NotImplementedError(f'"{name}_cpu_out" not implemented for \'Bool\'')
    if dt._category < 2 and isinstance(value, float):
        value = int(value)  # torch casts the scalar to the integral result type
    ct = compute_dtype(dt)
    a = input._data.astype(ct, copy=False)
    b = tensor1._data.astype(ct, copy=False)
    c = tensor2._data.astype(ct, copy=False)
    try:
        shape = xp.broadcast_shapes(a.shape, b.shape, c.shape)
    except ValueError:
        raise _broadcast_error3(a, b, c) from None
    with xp.errstate(all="ignore"):
        r = a + value * fn(b, c) if value != 1 else a + fn(b, c)
    if r.shape != shape:
        r = xp.broadcast_to(r, shape)
    return wrap(result_array(xp.asarray(r), dt))


def _broadcast_error3(a, b, c):
    for x, y in ((b, c), (a, b), (a, c)):
        try:
            xp.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            return broadcast_error(x, y)
    return broadcast_error(a, xp.empty(xp.broadcast_shapes(b.shape, c.shape)))


@register()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    r = _addc("addcmul", input, tensor1, tensor2, value, xp.multiply)
    if needs_grad(input, tensor1, tensor2):
        record(r, AddcmulBackward0, (input, tensor1, tensor2), tensor1=tensor1, tensor2=tensor2,
               value=value)
    return finish(r, out)


class AddcmulBackward0(Node):
    def backward(self, grad):
        v = self._saved_value
        need = [f[0] is not None for f in self.next_functions]
        g1 = grad * _conj(self._saved_tensor2 * v) if need[1] else None
        g2 = grad * _conj(self._saved_tensor1 * v) if need[2] else None
        return grad if need[0] else None, g1, g2


class AddcdivBackward0(Node):
    def backward(self, grad):
        v = self._saved_value
        t1, t2 = self._saved_tensor1, self._saved_tensor2
        need = [f[0] is not None for f in self.next_functions]
        g1 = grad * _conj(v / t2) if need[1] else None
        g2 = -grad * _conj(t1 * v / (t2 * t2)) if need[2] else None
        return grad if need[0] else None, g1, g2


@register()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 (integer tensor1 and tensor2 are refused)."""
    if tensor1.dtype._category < 2 and tensor2.dtype._category < 2:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all "
                           "dtypes.")
    r = _addc("addcdiv", input, tensor1, tensor2, value, xp.true_divide)
    if needs_grad(input, tensor1, tensor2):
        record(r, AddcdivBackward0, (input, tensor1, tensor2), tensor1=tensor1, tensor2=tensor2,
               value=value)
    return finish(r, out)


register_inplace(addcmul)
register_inplace(addcdiv)


# ----------------------------------------------------------------------------- clamp

def _bound(v, dt, ct):
    if isinstance(v, Tensor):
        return v._data.astype(ct, copy=False)
    if dt._category == 1 and isinstance(v, int):
        info = xp.iinfo(dt.np)
        # torch lets negative bounds wrap around for unsigned types (-1 -> 255 for uint8)
        low = -info.max if info.min == 0 else info.min
        if not low <= v <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dt.name}_t without "
                               f"overflow")
        if v < 0 and info.min == 0:
            v += info.max + 1
    return xp.asarray(v, ct)


@register("clip")
def clamp(input, min=None, max=None, *, out=None):
    """Limit values to [min, max]; either bound may be None, a number or a tensor."""
    r = _clamp(input, min, max)
    if needs_grad(input, min, max):
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            record(r, ClampBackward0, (input, min, max), self=input, min=min, max=max)
        else:
            record(r, ClampBackward1, (input,), self=input, min=min, max=max)
    return finish(r, out)


def _clamp(input, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = _dt.result_dtype(input, *(v for v in (min, max) if v is not None))
    if dt._category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _dt.bool_:
        # bool works only through the one-tensor-bound path (maximum/minimum), as in torch
        n_tensors = isinstance(min, Tensor) + isinstance(max, Tensor)
        if n_tensors == 2:
            raise not_implemented_for("clamp", dt)
        if n_tensors == 0:
            raise not_implemented_for("clamp_scalar", dt)
    ct = compute_dtype(dt)
    r = input._data.astype(ct, copy=False)
    # max(min(...)) order: where min > max, every element becomes max, as in torch.
    if min is not None:
        lo = _bound(min, dt, ct)
        r = _apply(xp.maximum, r, lo)
    if max is not None:
        hi = _bound(max, dt, ct)
        r = _apply(xp.minimum, r, hi)
    return wrap(result_array(xp.asarray(r), dt))


def _clamp_input_grad(grad, x, lo, hi):
    # the bounds themselves get gradient 1 (torch's subgradient choice)
    if lo is None:
        return where(x <= hi, grad, 0)
    if hi is None:
        return where(x >= lo, grad, 0)
    return where((x >= lo) & (x <= hi), grad, 0)


class ClampBackward1(Node):
    """Number bounds: the gradient passes where min <= input <= max."""

    def backward(self, grad):
        return _clamp_input_grad(grad, self._saved_self, self._saved_min, self._saved_max)


class ClampBackward0(Node):
    """Tensor bounds: each element's gradient goes to whichever of input/min/max it came from."""

    def backward(self, grad):
        x, lo, hi = self._saved_self, self._saved_min, self._saved_max
        need = [f[0] is not None for f in self.next_functions]
        gx = _clamp_input_grad(grad, x, lo, hi) if need[0] else None
        glo = ghi = None
        if lo is not None and need[1]:
            from_lo = x < lo if hi is None else (x < lo) & (lo < hi)
            glo = where(from_lo, grad, 0)
        if hi is not None and need[2]:
            from_hi = x > hi if lo is None else (x > hi) | (hi < lo)
            ghi = where(from_hi, grad, 0)
        return gx, glo, ghi


clip = clamp


@register()
def clamp_min(input, min, *, out=None):
    """clamp(input, min=min)."""
    r = _clamp(input, min, None)
    if needs_grad(input, min):
        if isinstance(min, Tensor):
            record(r, ClampMinBackward1, (input, min), self=input, min=min)
        else:
            record(r, ClampMinBackward0, (input,), self=input, min=min)
    return finish(r, out)


@register()
def clamp_max(input, max, *, out=None):
    """clamp(input, max=max)."""
    r = _clamp(input, None, max)
    if needs_grad(input, max):
        if isinstance(max, Tensor):
            record(r, ClampMaxBackward1, (input, max), self=input, max=max)
        else:
            record(r, ClampMaxBackward0, (input,), self=input, max=max)
    return finish(r, out)


class ClampMinBackward0(Node):
    def backward(self, grad):
        return where(self._saved_self >= self._saved_min, grad, 0)


class ClampMinBackward1(Node):
    def backward(self, grad):
        x, lo = self._saved_self, self._saved_min
        glo = where(x < lo, grad, 0) if self.next_functions[1][0] is not None else None
        return where(x >= lo, grad, 0), glo


class ClampMaxBackward0(Node):
    def backward(self, grad):
        return where(self._saved_self <= self._saved_max, grad, 0)


class ClampMaxBackward1(Node):
    def backward(self, grad):
        x, hi = self._saved_self, self._saved_max
        ghi = where(x > hi, grad, 0) if self.next_functions[1][0] is not None else None
        return where(x <= hi, grad, 0), ghi


for _fn in (clamp, clamp_min, clamp_max):
    register_inplace(_fn)
Tensor.clip_ = Tensor.clamp_


# ----------------------------------------------------------------------------- comparisons

def _comparison(name, ufunc, doc, ordered, dunder, aliases=()):
    def op(input, other, *, out=None):
        _tensor_arg(name, "input", 1, input)
        if not isinstance(other, Tensor) and not isinstance(other, _NUMBER):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(other).__name__}), but expected (Tensor other) or "
                            f"(Number other)")
        x, y, dt = binary_operands(input, other)
        if ordered and dt._category == 3:
            raise not_implemented_for(name, dt)
        return finish(wrap(_apply(ufunc, x, y)), out)

    def dunder_op(self, other):
        # Unknown operand types hand over to Python (``t == None`` is False, like torch).
        if not isinstance(other, Tensor) and not isinstance(other, _NUMBER):
            return NotImplemented
        return op(self, other)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    dunder_op.__name__ = dunder_op.__qualname__ = dunder
    setattr(Tensor, dunder, dunder_op)
    for n in (name,) + aliases:
        setattr(Tensor, n, op)
    nodes = tuple(type(f"{name.capitalize()}Backward{i}", (_ComparisonInplaceBackward,),
                       {"__module__": __name__}) for i in (0, 1))

    def inplace(input, other):
        r = op(input, other)
        if needs_grad(input, other) and (input.dtype.is_floating_point or
                                         input.dtype.is_complex):
            # self's old values are overwritten by 0/1: torch records a node that sends
            # zero gradients to self (and to a tensor ``other``)
            r = wrap(r._data.astype(input._data.dtype))
            tensor_other = isinstance(other, Tensor)
            record(r, nodes[tensor_other], (input, other) if tensor_other else (input,))
        return assign_inplace(input, r)

    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place version of :func:`{name}`: self becomes 0/1 in its own dtype."
    for n in (name,) + aliases:
        setattr(Tensor, n + "_", inplace)
    return op


class _ComparisonInplaceBackward(Node):
    """In-place comparisons: the result is piecewise constant, every input gets zeros."""

    def backward(self, grad):
        return tuple(None if m is None else wrap(xp.zeros(m[0], m[1])) for m in
                     self._input_meta)


eq = _comparison("eq", xp.equal, "Elementwise ==, as a bool tensor.", False, "__eq__")
ne = _comparison("ne", xp.not_equal, "Elementwise !=, as a bool tensor.", False, "__ne__",
                 ("not_equal",))
lt = _comparison("lt", xp.less, "Elementwise <, as a bool tensor.", True, "__lt__", ("less",))
le = _comparison("le", xp.less_equal, "Elementwise <=, as a bool tensor.", True, "__le__",
                 ("less_equal",))
gt = _comparison("gt", xp.greater, "Elementwise >, as a bool tensor.", True, "__gt__",
                 ("greater",))
ge = _comparison("ge", xp.greater_equal, "Elementwise >=, as a bool tensor.", True, "__ge__",
                 ("greater_equal",))
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


@register()
def equal(input, other):
    """True if both tensors have the same shape and elements (NaN != NaN)."""
    if input._data.shape != other._data.shape:
        return False
    x, y, _ = _promoted(input, other)
    return bool(xp.array_equal(x, y))


@register()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (infinities must match)."""
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_SHORT[input.dtype]} did not match {_SHORT[other.dtype]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    x, y = input._data, other._data
    cat = input.dtype._category
    if cat == 0:
        return wrap(_apply(xp.equal, x, y))
    if cat == 1:
        x, y = x.astype(xp.float64), y.astype(xp.float64)
    else:
        x, y = compute_array(x), compute_array(y)
    with xp.errstate(all="ignore"):
        diff = xp.abs(_apply(xp.subtract, x, y))
        close = (x == y) | (xp.isfinite(diff) & (diff <= atol + rtol * xp.abs(y)))
        if equal_nan and cat >= 2:
            close |= xp.isnan(x) & xp.isnan(y)
    return wrap(close)


@register()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``isclose(input, other, ...)`` is True."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


# ----------------------------------------------------------------------------- logical

def _truth(a):
    return a if a.dtype == xp.bool_ else a != 0


def _logical(name, ufunc, doc):
    def op(input, other, *, out=None):
        _tensors_only(name, input, other)
        return finish(wrap(_apply(ufunc, _truth(input._data), _truth(other._data))), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    setattr(Tensor, name, op)
    register_inplace(op)
    return op


logical_and = _logical("logical_and", xp.logical_and, "Elementwise logical AND (nonzero is true).")
logical_or = _logical("logical_or", xp.logical_or, "Elementwise logical OR (nonzero is true).")
logical_xor = _logical("logical_xor", xp.logical_xor, "Elementwise logical XOR (nonzero is true).")


@register()
def logical_not(input, *, out=None):
    """Elementwise NOT of the truth value (nonzero is true), as a bool tensor."""
    return finish(wrap(xp.logical_not(_truth(input._data))), out)


register_inplace(logical_not)


# ----------------------------------------------------------------------------- bitwise

def _shift_left(x, s, bits):
    over = (s < 0) | (s >= bits)
    r = xp.left_shift(x, xp.where(over, 0, s).astype(s.dtype))
    return xp.where(over, 0, r).astype(r.dtype)


def _shift_right(x, s, bits):
    # Shifts past the width fill with the sign bit (signed) or 0 (unsigned); negative
    # shift counts give 0, as torch's kernels do.
    signed = x.dtype.kind == "i"
    r = xp.right_shift(x, xp.clip(s, 0, bits - 1).astype(s.dtype))
    if not signed:
        r = xp.where(s >= bits, 0, r)
    return xp.where(s < 0, 0, r).astype(x.dtype)


def _bitwise(name, kernel, ufunc, doc, dunders, shift=False):
    def op(input, other, *, out=None):
        x, y, dt = binary_operands(input, other)
        if dt._category >= 2 or (shift and dt is _dt.bool_):
            raise not_implemented_for(kernel, dt)
        if shift:
            x = xp.asarray(x, dt.np)
            y = xp.asarray(y, dt.np)
            try:
                x, y = xp.broadcast_arrays(x, y)
            except ValueError:
                raise broadcast_error(x, y) from None
            r = ufunc(x, y, dt.itemsize * 8)
        else:
            r = _apply(ufunc, x, y)
        return finish(wrap(r), out)

    def rop(self, other):
        return op(other, self)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    setattr(Tensor, name, op)
    ip = register_inplace(op)
    fwd, rev, inp = dunders
    setattr(Tensor, fwd, op)
    setattr(Tensor, rev, rop)
    setattr(Tensor, inp, ip)
    return op


bitwise_and = _bitwise("bitwise_and", "bitwise_and", xp.bitwise_and, "Elementwise AND.",
                       ("__and__", "__rand__", "__iand__"))
bitwise_or = _bitwise("bitwise_or", "bitwise_or", xp.bitwise_or, "Elementwise OR.",
                      ("__or__", "__ror__", "__ior__"))
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor", xp.bitwise_xor, "Elementwise XOR.",
                       ("__xor__", "__rxor__", "__ixor__"))
bitwise_left_shift = _bitwise("bitwise_left_shift", "lshift", _shift_left,
                              "input << other (bits shifted past the width are lost).",
                              ("__lshift__", "__rlshift__", "__ilshift__"), shift=True)
bitwise_right_shift = _bitwise("bitwise_right_shift", "rshift", _shift_right,
                               "input >> other (arithmetic shift for signed types).",
                               ("__rshift__", "__rrshift__", "__irshift__"), shift=True)


@register()
def bitwise_not(input, *, out=None):
    """Elementwise NOT: ~input for integers, logical not for bool."""
    a = input._data
    if a.dtype.kind not in "biu":
        raise not_implemented_for("bitwise_not", _by_np[a.dtype])
    return finish(wrap(xp.invert(a)), out)


register_inplace(bitwise_not)


def __invert__(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


Tensor.__invert__ = __invert__


# ----------------------------------------------------------------------------- where

@register()
def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (either may be a number).

    With only ``condition``, the same as ``nonzero(condition, as_tuple=True)``.
    """
    if input is None and other is None:
        import glasstorch
        return glasstorch.nonzero(condition, as_tuple=True)
    c = condition._data
    if c.dtype != xp.bool_:
        if c.dtype != xp.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {_SHORT[_by_np[c.dtype]]}")
        warn_user("where received a uint8 condition tensor. This behavior is deprecated "
                  "and will be removed in a future version of PyTorch. Use a boolean "
                  "condition instead.", UserWarning)
        c = c.astype(xp.bool_)
    dt = _dt.result_dtype(input, other)
    x = input._data.astype(dt.np, copy=False) if isinstance(input, Tensor) else \
        xp.asarray(input, dt.np)
    y = other._data.astype(dt.np, copy=False) if isinstance(other, Tensor) else \
        xp.asarray(other, dt.np)
    if out is not None and isinstance(out, Tensor) and out.dtype is not dt:
        raise RuntimeError(f"Expected out type to be {_SHORT[dt]} but got {_SHORT[out.dtype]}")
    try:
        r = xp.where(c, x, y)
    except ValueError:
        raise RuntimeError(f"The size of tensors do not match: condition {list(c.shape)}, "
                           f"input {list(x.shape)}, other {list(y.shape)} cannot be "
                           f"broadcast together") from None
    r = wrap(r)
    if needs_grad(input, other):
        record(r, WhereBackward0, (input, other), condition=condition)
    return finish(r, out)


class WhereBackward0(Node):
    def backward(self, grad):
        c = self._saved_condition
        if c.dtype is not _dt.bool_:
            c = c != 0
        gi = where(c, grad, 0) if self.next_functions[0][0] is not None else None
        go = where(c, 0, grad) if self.next_functions[1][0] is not None else None
        return gi, go


def _tensor_where(self, condition, other):
    """``self.where(condition, other)`` is ``where(condition, self, other)``."""
    return where(condition, self, other)


Tensor.where = _tensor_where

__all__ += [
    "floor_divide", "remainder", "fmod", "pow", "float_power", "sign", "sgn", "signbit",
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "square", "reciprocal", "sigmoid",
    "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh",
    "atan2", "arctan2", "hypot", "copysign", "xlogy", "ldexp", "frexp", "logit",
    "erf", "erfc", "erfinv", "deg2rad", "rad2deg",
    "clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum", "fmax", "fmin",
    "floor", "ceil", "round", "trunc", "fix", "frac", "lerp", "addcmul", "addcdiv",
    "nan_to_num", "heaviside", "angle", "positive", "conj", "conj_physical",
    "resolve_conj", "resolve_neg",
    "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "equal", "isclose", "allclose",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal",
    "where",
]


# ----------------------------------------------------------------------------- function forms
# torch.exp_(x), torch.clamp_(x, ...), torch.zero_(x)...: the flat spelling of an in-place
# Tensor method. Each routes to the method (looked up when called, since some methods are
# attached by op modules imported after this one), so there is still one definition per op.

_INPLACE_FUNCTION_FORMS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
    "frac_", "index_put_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "zero_",
)


def _function_form(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(Tensor, name)(input, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: the same as ``input.{name}(...)``."
    return fn


# and the flat spellings of some Tensor queries and methods (torch.is_conj(x), ...)
_METHOD_FUNCTION_FORMS = ("i0_", "sinc_", "xlogy_", "is_conj", "is_neg", "is_inference",
                          "is_signed", "get_device", "is_distributed", "nonzero_static")

for _name in _INPLACE_FUNCTION_FORMS + _METHOD_FUNCTION_FORMS:
    globals()[_name] = _function_form(_name)
__all__ += list(_INPLACE_FUNCTION_FORMS + _METHOD_FUNCTION_FORMS)


# ----------------------------------------------------------------------------- rsub, gcd, lcm

def rsub(input, other, alpha=1):
    """other - alpha * input (``sub`` with the operands swapped)."""
    if not isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)  # records RsubBackward1, as torch
    with _no_grad():
        r = sub(other, input, alpha=alpha)
    if needs_grad(input, other):
        record(r, RsubBackward0, (input, other), alpha=alpha)
    return r


class RsubBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        return (-grad if alpha == 1 else grad * -alpha), grad


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


def _integer_binary(name, ufunc, doc):
    def op(input, other, *, out=None):
        x, y, dt = binary_operands(input, other)
        if dt._category != 1:  # integers only (bool refused too, as torch)
            raise not_implemented_for(name, dt)
        try:
            r = wrap(xp.asarray(ufunc(x, y)).astype(dt.np, copy=False))
        except ValueError:
            raise broadcast_error(x, y) from None
        return finish(r, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    register()(op)
    register_inplace(op)
    return op


gcd = _integer_binary("gcd", xp.gcd, "Elementwise greatest common divisor (non-negative) of "
                                     "integer tensors; gcd(0, 0) = 0.")
lcm = _integer_binary("lcm", xp.lcm, "Elementwise least common multiple (non-negative) of "
                                     "integer tensors; 0 when either is 0.")
gcd_, lcm_ = Tensor.gcd_, Tensor.lcm_
__all__ += ["rsub", "gcd", "lcm", "gcd_", "lcm_"]


# ----------------------------------------------------------------------------- nextafter

@register()
def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` toward ``other``, in their common dtype."""
    _tensors_only("nextafter", input, other)
    x, y, dt = binary_operands(input, other)
    if dt._category != 2:
        raise not_implemented_for("nextafter", dt)
    try:
        r = wrap(xp.asarray(xp.nextafter(x, y)).astype(dt.np, copy=False))
    except ValueError:
        raise broadcast_error(x, y) from None
    if needs_grad(input, other):
        record(r, NextafterBackward0, (input, other), self=input, other=other)
    return finish(r, out)


class NextafterBackward0(Node):
    # torch's rule: the result follows ``input`` except where it already equals ``other``;
    # ``other`` only gives the direction
    def backward(self, grad):
        go = _zeros_like(grad) if self.next_functions[1][0] is not None else None
        return grad.masked_fill(self._saved_self == self._saved_other, 0), go


register_inplace(nextafter)
__all__ += ["nextafter"]

