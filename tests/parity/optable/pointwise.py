"""Pointwise operators."""

import ml_dtypes
import numpy as np

from ..harness import ALL, F32, FLOATS, NUMBERS, REALS, E, OpInfo, S, T, make_array
from ..samples import binary, mixed_dtype_pairs, unary


def _binary_with_promotion(dtype, rng):
    yield from binary(dtype, rng)
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _nonzero_divisor(dtype, rng):
    yield from binary(dtype, rng, low2=1, high2=6)
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


OPS = [
    OpInfo("add", lambda lib, a, b, **kw: lib.add(a, b, **kw), _binary_with_promotion,
           dtypes=ALL, covers=("Tensor.add", "Tensor.__add__", "Tensor.__radd__"),
           grad=True),
    OpInfo("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), binary, dtypes=NUMBERS,
           grad=True),
    OpInfo("Tensor.add_", lambda lib, a, b: a.clone().add_(b), binary, dtypes=ALL,
           covers=("Tensor.__iadd__",),
           grad=True),
    OpInfo("radd", lambda lib, a, b: 3 + a, binary, dtypes=ALL,
           grad=True),
    OpInfo("sub", lambda lib, a, b: lib.sub(a, b), _binary_with_promotion, dtypes=ALL,
           covers=("Tensor.sub", "Tensor.__sub__", "subtract", "Tensor.subtract"),
           grad=True),
    OpInfo("rsub", lambda lib, a, b: 2.5 - a, binary, dtypes=NUMBERS,
           covers=("Tensor.__rsub__",),
           grad=True),
    OpInfo("Tensor.sub_", lambda lib, a, b: a.clone().sub_(b, alpha=2), binary, dtypes=NUMBERS,
           covers=("Tensor.__isub__",),
           grad=True),
    OpInfo("mul", lambda lib, a, b: lib.mul(a, b), _binary_with_promotion, dtypes=ALL,
           covers=("Tensor.mul", "Tensor.__mul__", "Tensor.__rmul__", "multiply",
                   "Tensor.multiply"),
           grad=True),
    OpInfo("Tensor.mul_", lambda lib, a, b: a.clone().mul_(b), binary, dtypes=ALL,
           covers=("Tensor.__imul__",),
           grad=True),
    OpInfo("div", lambda lib, a, b: lib.div(a, b), _nonzero_divisor, dtypes=REALS,
           covers=("Tensor.div", "Tensor.__truediv__", "divide", "true_divide",
                   "Tensor.divide", "Tensor.true_divide"),
           grad=True),
    OpInfo("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
           _nonzero_divisor, dtypes=REALS[1:], grad=True),
    OpInfo("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
           _nonzero_divisor, dtypes=REALS[1:], grad=True),
    OpInfo("rdiv", lambda lib, a, b: 2 / a, lambda d, r: unary(d, r, 1, 5), dtypes=REALS[1:],
           covers=("Tensor.__rtruediv__",),
           grad=True),
    OpInfo("Tensor.div_", lambda lib, a, b: a.clone().div_(b), _nonzero_divisor, dtypes=FLOATS,
           covers=("Tensor.__itruediv__",)),
    OpInfo("neg", lambda lib, a: lib.neg(a), unary, dtypes=ALL,
           covers=("Tensor.neg", "Tensor.__neg__", "negative", "Tensor.negative",
                   "Tensor.neg_"),
           grad=True),
    OpInfo("abs", lambda lib, a: lib.abs(a), unary, dtypes=ALL,
           covers=("Tensor.abs", "Tensor.__abs__", "absolute", "Tensor.absolute"),
           grad=True),
    OpInfo("exp", lambda lib, a: lib.exp(a), unary, dtypes=REALS + ("complex64",),
           covers=("Tensor.exp",),
           grad=True),
    OpInfo("Tensor.exp_", lambda lib, a: a.clone().exp_(), unary, dtypes=FLOATS,
           grad=True),
    OpInfo("log", lambda lib, a: lib.log(a), lambda d, r: unary(d, r, 0, 5), dtypes=REALS,
           covers=("Tensor.log",),
           grad=True),
    OpInfo("sqrt", lambda lib, a: lib.sqrt(a), lambda d, r: unary(d, r, 0, 5), dtypes=REALS,
           covers=("Tensor.sqrt",),
           grad=True),
    OpInfo("add_out", lambda lib, a, b: lib.add(a, b, out=lib.empty(0, dtype=a.dtype)),
           lambda d, r: [S(make_array(r, (3,), d), make_array(r, (3,), d))]),
]


# ----------------------------------------------------------------------------- extended ops

_SPECIAL = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 2.5, -2.5, 0.5, -1.5, 3.5]


def _special(dtype):
    if dtype == "bfloat16":
        # torch's float32 -> bfloat16 cast (used to build inputs) turns NaN into a NaN with
        # the sign bit set; start from -NaN so both libraries see the same bits.
        return np.array([-v if v != v else v for v in _SPECIAL], dtype=ml_dtypes.bfloat16)
    return np.array(_SPECIAL, dtype=dtype)


def _unary_special(dtype, rng, low=-5, high=5):
    """The usual unary samples, plus NaN/inf/signed zeros/halves for float dtypes."""
    yield from unary(dtype, rng, low, high)
    if dtype in FLOATS or dtype.startswith("complex"):
        yield S(_special(dtype))
        if dtype.startswith("complex"):
            yield S(_special(dtype) * np.array(1j, dtype=dtype) + _special(dtype)[::-1])


def _ranged(low, high):
    def samples(dtype, rng):
        if dtype in FLOATS or dtype.startswith("complex"):
            return unary(dtype, rng, low, high)
        return unary(dtype, rng, int(np.floor(low)), int(np.ceil(high)) + 1)
    return samples


def _fn_and_method(name, *aliases):
    """Call torch.<name>, Tensor.<name> and every alias on the same input."""
    def fn(lib, *args, **kw):
        res = [getattr(lib, name)(*args, **kw), getattr(args[0], name)(*args[1:], **kw)]
        res += [getattr(lib, a)(*args, **kw) for a in aliases]
        return tuple(res)
    return fn


def _method_only(name, *aliases):
    def fn(lib, *args, **kw):
        res = [getattr(args[0], name)(*args[1:], **kw)]
        res += [getattr(args[0], a)(*args[1:], **kw) for a in aliases]
        return tuple(res)
    return fn


def _inplace(name):
    def fn(lib, a, *args, **kw):
        a = a.clone()
        r = getattr(a, name + "_")(*args, **kw)
        return r, a
    return fn


def _covers(name, aliases=(), inplace=True, function=True):
    out = [f"Tensor.{name}"] + ([name] if function else [])
    for a in aliases:
        out += [a, f"Tensor.{a}"] + ([f"Tensor.{a}_"] if inplace else [])
    if inplace:
        out.append(f"Tensor.{name}_")
    return tuple(out)


# In-place entries re-check the kernels through Tensor.<op>_; a subset of dtypes keeps the
# suite fast while still covering every category (and the refused casts back into self).
_IP = ("bool", "uint8", "int64", "bfloat16", "float32", "complex64")


def _unary_ops():
    ops = []
    # name, samples, aliases, has in-place, float-only in-place dtypes
    table = [
        ("exp2", _unary_special, ()), ("expm1", _unary_special, ()),
        ("log2", _ranged(0, 5), ()), ("log10", _ranged(0, 5), ()), ("log1p", _ranged(-1, 5), ()),
        ("rsqrt", _ranged(0.1, 5), ()), ("reciprocal", _ranged(0.5, 5), ()),
        ("sigmoid", _unary_special, ()), ("sin", _unary_special, ()),
        ("cos", _unary_special, ()), ("tan", _ranged(-1.4, 1.4), ()),
        ("asin", _ranged(-1, 1), ("arcsin",)), ("acos", _ranged(-1, 1), ("arccos",)),
        ("atan", _unary_special, ("arctan",)), ("sinh", _ranged(-3, 3), ()),
        ("cosh", _ranged(-3, 3), ()), ("tanh", _unary_special, ()),
        ("asinh", _unary_special, ("arcsinh",)), ("acosh", _ranged(1, 5), ("arccosh",)),
        ("atanh", _ranged(-0.95, 0.95), ("arctanh",)),
        ("erf", _unary_special, ()), ("erfc", _unary_special, ()),
        ("erfinv", _ranged(-1, 1), ()), ("deg2rad", _unary_special, ()),
        ("rad2deg", _unary_special, ()), ("logit", _ranged(0, 1), ()),
        ("sign", _unary_special, ()), ("sgn", _unary_special, ()),
        ("square", _unary_special, ()), ("floor", _unary_special, ()),
        ("ceil", _unary_special, ()), ("trunc", _unary_special, ("fix",)),
        ("round", _unary_special, ()), ("frac", _unary_special, ()),
        ("nan_to_num", _unary_special, ()), ("logical_not", _unary_special, ()),
        ("bitwise_not", _unary_special, ()),
    ]
    for name, samples, aliases in table:
        grad = name not in _NOT_DIFFERENTIABLE and name != "sgn"
        # NaN/inf samples: compared with torch's gradients, but finite differences are
        # ill-posed there, so gradcheck runs on the smooth "-grad" entries below instead
        ops.append(OpInfo(name, _fn_and_method(name, *aliases), samples, dtypes=ALL,
                          covers=_covers(name, aliases), grad=grad,
                          gradcheck=samples is not _unary_special))
        if name in ("asinh", "acosh", "atanh"):  # torch: the in-place derivative raises
            ops.append(OpInfo(f"Tensor.{name}_-backward", _inplace_backward(name),
                              _ranged(1.5, 3) if name == "acosh" else _ranged(-0.9, 0.9)))
            grad = False
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), samples, dtypes=_IP, grad=grad))
        grad = name not in _NOT_DIFFERENTIABLE and name != "sgn"
        if grad and samples is _unary_special:
            ops.append(OpInfo(f"{name}-grad", _fn_and_method(name, *aliases), unary,
                              dtypes=("float64",), grad=True))
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit",
                 "angle", "positive", "conj_physical", "resolve_conj", "resolve_neg"):
        grad = name not in _NOT_DIFFERENTIABLE
        ops.append(OpInfo(name, _fn_and_method(name), _unary_special, dtypes=ALL,
                          covers=_covers(name, inplace=False), grad=grad, gradcheck=False))
        if grad:
            ops.append(OpInfo(f"{name}-grad", _fn_and_method(name), unary,
                              dtypes=("float64",), grad=True))
    return ops


def _sgn_grad(lib, a):
    # torch's gradient of sgn on real inputs is a ZeroTensor (unreadable by the harness);
    # adding a second use of the input makes it an ordinary tensor: zeros + w
    return lib.sgn(a), a.sgn(), a * 1


_NOT_DIFFERENTIABLE = {"logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf",
                       "isneginf", "isreal", "signbit", "floor_divide", "heaviside", "eq", "ne",
                       "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                       "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                       "bitwise_right_shift"}


def _with_zero_divisor(dtype, rng):
    yield from binary(dtype, rng, low2=1, high2=6)
    yield S(make_array(rng, (4,), dtype), np.zeros((4,), dtype="float32").astype(
        ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype))
    yield S(make_array(rng, (4,), dtype), 0)
    if dtype in FLOATS:
        yield S(_special(dtype), _special(dtype)[::-1].copy())
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _pow_samples(dtype, rng):
    yield from binary(dtype, rng, -3, 3, -3, 3)
    yield S(make_array(rng, (4,), dtype, -3, 3), -2)
    yield S(make_array(rng, (4,), dtype, -3, 3), 0.5)
    yield S(make_array(rng, (4,), dtype, -3, 3), True)
    if dtype in FLOATS:
        yield S(_special(dtype), _special(dtype)[::-1].copy())
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _float_binary_samples(dtype, rng):
    yield from binary(dtype, rng)
    if dtype in FLOATS:
        yield S(_special(dtype), _special(dtype)[::-1].copy())
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _shift_samples(dtype, rng):
    yield from binary(dtype, rng, -20, 20, 0, 8)
    if dtype in ("int8", "int16", "int32", "int64", "uint8"):
        bits = np.dtype(dtype).itemsize * 8
        yield S(make_array(rng, (5,), dtype, -20, 20),
                np.array([0, bits - 1, bits, bits + 3, 1], dtype=dtype))


def _binary_ops():
    ops = []
    table = [
        ("floor_divide", _with_zero_divisor, ()), ("remainder", _with_zero_divisor, ()),
        ("fmod", _with_zero_divisor, ()), ("pow", _pow_samples, ()),
        ("atan2", _float_binary_samples, ("arctan2",)), ("hypot", _float_binary_samples, ()),
        ("copysign", _float_binary_samples, ()), ("xlogy", _float_binary_samples, ()),
        ("maximum", _float_binary_samples, ()), ("minimum", _float_binary_samples, ()),
        ("fmax", _float_binary_samples, ()), ("fmin", _float_binary_samples, ()),
        ("heaviside", _float_binary_samples, ()), ("ldexp", _ranged_binary(-4, 4), ()),
        ("eq", _float_binary_samples, ()), ("ne", _float_binary_samples, ("not_equal",)),
        ("lt", _float_binary_samples, ("less",)), ("le", _float_binary_samples, ("less_equal",)),
        ("gt", _float_binary_samples, ("greater",)),
        ("ge", _float_binary_samples, ("greater_equal",)),
        ("logical_and", _float_binary_samples, ()), ("logical_or", _float_binary_samples, ()),
        ("logical_xor", _float_binary_samples, ()),
        ("bitwise_and", _float_binary_samples, ()), ("bitwise_or", _float_binary_samples, ()),
        ("bitwise_xor", _float_binary_samples, ()),
        ("bitwise_left_shift", _shift_samples, ()), ("bitwise_right_shift", _shift_samples, ()),
    ]
    for name, samples, aliases in table:
        grad = name not in _NOT_DIFFERENTIABLE
        # float16 x bfloat16 pairs: torch multiplies by a 0-d half operand in float32 while
        # glasstorch rounds it to the promoted dtype first; the one-ulp difference exceeds
        # the float32 gradient tolerance, so these ops check gradients in their -grad entry
        main_grad = grad and name not in _HALF_MIX
        ops.append(OpInfo(name, _fn_and_method(name, *aliases), samples, dtypes=ALL,
                          covers=_covers(name, aliases), grad=main_grad, gradcheck=False))
        if name not in ("maximum", "minimum", "fmax", "fmin"):  # torch has no in-place form
            ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), samples, dtypes=_IP,
                              grad=main_grad))
        if grad:
            ops.append(OpInfo(f"{name}-grad", _fn_and_method(name, *aliases),
                              _grad_samples(_SMOOTH_BINARY.get(name, _smooth_binary)),
                              dtypes=F32, grad=True))
    ops.append(OpInfo("float_power", _fn_and_method("float_power"), _pow_samples, dtypes=ALL,
                      covers=_covers("float_power"), grad=True, gradcheck=False))
    ops.append(OpInfo("Tensor.float_power_", _inplace("float_power"), _pow_samples,
                      dtypes=("float32", "float64", "int64", "complex128"), grad=True,
                      gradcheck=False))
    ops.append(OpInfo("float_power-grad", _fn_and_method("float_power"), _smooth_pow,
                      dtypes=("float32", "float64"), grad=True))
    return ops


_HALF_MIX = {"pow", "atan2", "hypot", "xlogy"}


def _grad_samples(smooth):
    """float64: smooth samples (gradcheck runs); float32: also NaN/inf and promotions."""
    def samples(dtype, rng):
        yield from smooth(dtype, rng)
        if dtype == "float32":
            yield S(_special(dtype), _special(dtype)[::-1].copy())
            for s in mixed_dtype_pairs(rng):
                if {s.args[0].dtype.name, s.args[1].dtype.name} != {"float16", "bfloat16"}:
                    yield s
    return samples


def _smooth_binary(dtype, rng):
    """Finite, well-separated operands (no ties, no zeros) for finite-difference checks."""
    yield from binary(dtype, rng, 0.5, 3, -3, -0.5)
    yield S(make_array(rng, (3,), dtype, -3, 3), make_array(rng, (3,), dtype, 4, 6))


def _smooth_pow(dtype, rng):
    yield from binary(dtype, rng, 0.5, 3, -3, 3)
    yield S(make_array(rng, (3,), dtype, -3, 3), 2)
    yield S(make_array(rng, (3,), dtype, -3, 3), 0)
    yield S(make_array(rng, (3,), dtype, 0.5, 3), -1.5)
    if dtype == "float32":  # float32 base, float64 exponent: promotion through the grads
        yield S(make_array(rng, (3,), dtype, 0.5, 3), make_array(rng, (3,), "float64"))


def _smooth_ldexp(dtype, rng):
    # torch's gradient for negative integer exponents is 0 (it uses integer 2 ** other), so
    # those are only compared with torch (float32), never finite-differenced
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), "int64",
                                                       -3 if dtype == "float32" else 0, 3))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 1), dtype, -3, 3))
    yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (), dtype, -3, 3))


def _smooth_xlogy(dtype, rng):
    yield from binary(dtype, rng, -3, 3, 0.5, 4)


_SMOOTH_BINARY = {"pow": _smooth_pow, "ldexp": _smooth_ldexp, "xlogy": _smooth_xlogy}


def _ranged_binary(low, high):
    return lambda d, r: binary(d, r, low, high, low, high)


def _dunder(expr_fn):
    return lambda lib, a, b: expr_fn(a, b)


def _dunder_ops():
    ops = []
    table = [
        ("__floordiv__", lambda a, b: (a // b, 7 // a), _with_zero_divisor,
         ("Tensor.__rfloordiv__",)),
        ("__mod__", lambda a, b: (a % b, 7 % a), _with_zero_divisor, ("Tensor.__rmod__",)),
        ("__pow__", lambda a, b: (a ** b, 2 ** a, 1.5 ** a), _pow_samples, ("Tensor.__rpow__",)),
        ("__and__", lambda a, b: (a & b, 3 & a), _float_binary_samples, ("Tensor.__rand__",)),
        ("__or__", lambda a, b: (a | b, 3 | a), _float_binary_samples, ("Tensor.__ror__",)),
        ("__xor__", lambda a, b: (a ^ b, 3 ^ a), _float_binary_samples, ("Tensor.__rxor__",)),
        ("__lshift__", lambda a, b: (a << b, 3 << a), _shift_samples, ("Tensor.__rlshift__",)),
        ("__rshift__", lambda a, b: (a >> b, 100 >> a), _shift_samples,
         ("Tensor.__rrshift__",)),
        ("__eq__", lambda a, b: (a == b, a != b, a == None, a != "x"),  # noqa: E711
         _float_binary_samples, ("Tensor.__ne__",)),
        ("__lt__", lambda a, b: (a < b, a <= b, a > b, a >= b), _float_binary_samples,
         ("Tensor.__le__", "Tensor.__gt__", "Tensor.__ge__")),
    ]
    for name, expr, samples, covers in table:
        ops.append(OpInfo(f"Tensor.{name}", _dunder(expr), samples, dtypes=ALL, covers=covers))
    ops.append(OpInfo("Tensor.__pow__-grad", _dunder(lambda a, b: (a ** b, 2 ** a, 1.5 ** a)),
                      _grad_samples(_smooth_pow), dtypes=F32, grad=True))
    ops.append(OpInfo("Tensor.__mod__-grad", _dunder(lambda a, b: a % b), _smooth_binary,
                      dtypes=F32, grad=True))
    inplace = [
        ("__ifloordiv__", lambda a, b: a.__ifloordiv__(b), _with_zero_divisor),
        ("__imod__", lambda a, b: a.__imod__(b), _with_zero_divisor),
        ("__ipow__", lambda a, b: a.__ipow__(b), _pow_samples),
        ("__iand__", lambda a, b: a.__iand__(b), _float_binary_samples),
        ("__ior__", lambda a, b: a.__ior__(b), _float_binary_samples),
        ("__ixor__", lambda a, b: a.__ixor__(b), _float_binary_samples),
        ("__ilshift__", lambda a, b: a.__ilshift__(b), _shift_samples),
        ("__irshift__", lambda a, b: a.__irshift__(b), _shift_samples),
    ]
    for name, expr, samples in inplace:
        ops.append(OpInfo(f"Tensor.{name}", lambda lib, a, b, e=expr: (lambda c: (e(c, b), c))(
            a.clone()), samples, dtypes=_IP, grad=name in ("__ipow__", "__imod__")))
    ops.append(OpInfo("Tensor.__invert__", lambda lib, a: ~a, _unary_special, dtypes=ALL))
    ops.append(OpInfo("Tensor.__pos__", lambda lib, a: +a, _unary_special, dtypes=ALL,
                      grad=True, gradcheck=False))
    return ops


# ----------------------------------------------------------------------------- ternary and misc

def _where_samples(dtype, rng):
    cond = make_array(rng, (3, 4), "bool")
    yield S(cond, make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype))
    yield S(cond, make_array(rng, (4,), dtype), make_array(rng, (3, 1), dtype))
    yield S(T(make_array(rng, (3, 4), "bool")), T(make_array(rng, (3, 4), dtype)),
            E(make_array(rng, (1, 4), dtype), (3, 4)))
    yield S(make_array(rng, (), "bool"), make_array(rng, (2,), dtype), 2)
    yield S(cond, make_array(rng, (3, 4), dtype), 2.5)
    yield S(cond, 1, make_array(rng, (3, 4), dtype))
    yield S(make_array(rng, (0,), "bool"), make_array(rng, (0,), dtype), 0)
    yield S(cond, make_array(rng, (2, 4), dtype), 0)  # shape mismatch
    yield S(make_array(rng, (3,), "int64", 0, 2), make_array(rng, (3,), dtype), 0)
    if dtype == "float32":
        yield S(cond, make_array(rng, (3, 4), "int64"), make_array(rng, (3, 4), "float64"))
        yield S(cond, 1, 0)
        yield S(cond, 1.0, 0)


def _clamp_samples(dtype, rng):
    for s in unary(dtype, rng):
        yield S(*s.args, -1, 2)
    yield S(make_array(rng, (3, 4), dtype), None, 1)
    yield S(make_array(rng, (3, 4), dtype), 2, None)
    yield S(make_array(rng, (3, 4), dtype), 2, -2)
    yield S(make_array(rng, (3, 4), dtype), -1.5, 2.5)
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), dtype, -2, 0),
            make_array(rng, (3, 1), dtype, 0, 2))
    yield S(make_array(rng, (3,), dtype), make_array(rng, (2, 1), dtype), None)
    yield S(make_array(rng, (3,), dtype), None, None)
    if dtype in FLOATS:
        yield S(_special(dtype), -1, 2)
        yield S(_special(dtype), float("nan"), None)


def _lerp_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype), 0.3)
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), dtype), 0.8)
    yield S(T(make_array(rng, (3, 4), dtype)), make_array(rng, (3, 4), dtype),
            make_array(rng, (3, 4), dtype, 0, 1))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype),
            make_array(rng, (), dtype, 0, 1))
    yield S(make_array(rng, (), dtype), make_array(rng, (), dtype), 2)
    yield S(make_array(rng, (0,), dtype), make_array(rng, (0,), dtype), 0.5)
    yield S(make_array(rng, (3,), dtype), make_array(rng, (2,), dtype), 0.5)
    if dtype == "float32":
        yield S(make_array(rng, (3,), dtype), make_array(rng, (3,), "float64"), 0.5)
        yield S(make_array(rng, (3,), dtype), make_array(rng, (3,), dtype),
                make_array(rng, (3,), "float64"))
        yield S(make_array(rng, (3,), dtype), make_array(rng, (3,), dtype),
                make_array(rng, (), "float64", 0, 1))


def _addc_samples(dtype, rng, divisor=False):
    lo2 = 1 if divisor else -5
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype),
            make_array(rng, (3, 4), dtype, lo2, 6))
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), dtype),
            make_array(rng, (3, 1), dtype, lo2, 6), value=2)
    yield S(make_array(rng, (4,), dtype), make_array(rng, (3, 1), dtype),
            make_array(rng, (4,), dtype, lo2, 6))
    yield S(T(make_array(rng, (3, 4), dtype)), make_array(rng, (), dtype),
            E(make_array(rng, (1, 4), dtype, lo2, 6), (3, 4)), value=0.5)
    yield S(make_array(rng, (0,), dtype), make_array(rng, (0,), dtype),
            make_array(rng, (0,), dtype, lo2, 6))
    yield S(make_array(rng, (3,), dtype), make_array(rng, (2,), dtype),
            make_array(rng, (3,), dtype, lo2, 6))
    if dtype == "float32":
        yield S(make_array(rng, (3,), dtype), make_array(rng, (3,), "int64"),
                make_array(rng, (3,), "int64", 1, 6))
        yield S(make_array(rng, (3,), "int64"), make_array(rng, (3,), dtype),
                make_array(rng, (3,), "float64", 1, 6))


def _close_samples(dtype, rng):
    a = make_array(rng, (3, 4), dtype)
    yield S(a, a.copy())
    yield S(a, make_array(rng, (3, 4), dtype))
    yield S(a, make_array(rng, (4,), dtype))
    yield S(T(a), a.copy(), rtol=0.5, atol=1.0)
    yield S(make_array(rng, (0,), dtype), make_array(rng, (0,), dtype))
    yield S(a, make_array(rng, (2, 4), dtype))
    if dtype in FLOATS:
        sp = _special(dtype)
        yield S(sp, sp.copy())
        yield S(sp, sp.copy(), equal_nan=True)
        yield S(sp, sp[::-1].copy(), atol=1.0)
        yield S(sp, sp.copy(), rtol=-1.0)
    if dtype == "float32":
        yield S(a, a.astype("float64"))


def _equal_samples(dtype, rng):
    a = make_array(rng, (3, 4), dtype)
    yield S(a, a.copy())
    yield S(a, make_array(rng, (3, 4), dtype))
    yield S(T(a), a.copy())
    yield S(a, a[:2].copy())
    yield S(make_array(rng, (), dtype), make_array(rng, (), dtype))
    if dtype in FLOATS:
        yield S(_special(dtype), _special(dtype))
    if dtype == "float32":
        yield S(a, a.astype("float64"))
        yield S(a, a.astype("int64"))


def _round_dec_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype, -50, 50))
    for d in (2, 1, -1, 0):
        yield S(make_array(rng, (3, 4), dtype, -50, 50), decimals=d)
    if dtype in FLOATS:
        yield S(np.array([0.125, 0.375, 2.5, -1.55, 1234.5, 25.0],
                         dtype=ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype),
                decimals=2)


def _nan_to_num_kw_samples(dtype, rng):
    if dtype in FLOATS or dtype.startswith("complex"):
        yield S(_special(dtype), nan=1.0, posinf=2.0, neginf=-3.0)
        yield S(_special(dtype), 0.5)
    yield S(make_array(rng, (3,), dtype), nan=1.5)


def _logit_eps_samples(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype, 0, 1), 0.2)
    yield S(np.array([0.0, 1.0, 0.5], dtype=ml_dtypes.bfloat16 if dtype == "bfloat16"
                     else ("float32" if dtype not in FLOATS else dtype)), eps=1e-3)


def _clamp_grad_samples(dtype, rng):
    """Values away from the bounds (finite differences are ill-posed at them)."""
    x = np.array([-3.1, -1.7, -0.4, 0.3, 1.2, 2.6, -2.2, 0.9], dtype)
    yield S(x, -1, 2)
    yield S(x, None, 0.5)
    yield S(x.reshape(2, 4), -0.5, None)
    yield S(x, 2, -2)  # min > max: everything is max
    lo = np.array([-2.0, -1.0, -0.2, 0.5], dtype)
    hi = np.array([[1.1], [0.15]], dtype)
    yield S(x.reshape(2, 4), lo, hi)
    yield S(T(x.reshape(4, 2)), None, hi.reshape(1, 2) * 3)
    yield S(x.reshape(2, 4), E(lo[:1], (4,)), None)
    yield S(x.reshape(2, 4), hi, lo)  # tensor bounds with min > max in places


def _backward(lib, fn, a, b):
    """Backward through ``fn``: torch raises 'derivative ... not implemented' for these."""
    x = a.clone().requires_grad_()
    y = b.clone().requires_grad_() if hasattr(b, "requires_grad_") else b
    return lib.autograd.grad(fn(x, y).sum(), x)


def _inplace_backward(name):
    def fn(lib, a):
        x = a.clone().requires_grad_()
        y = getattr(x.clone(), name + "_")()
        return type(y.grad_fn).__name__, lib.autograd.grad(y.sum(), x)
    return fn


def _backward_of(name):
    return lambda lib, a, b: _backward(lib, getattr(lib, name), a, b)


def _frexp_fn(lib, a):
    m, e = lib.frexp(a)
    m2, e2 = a.frexp()
    return m, e, m2, e2


def _misc_ops():
    return [
        OpInfo("where", lambda lib, c, a, b: lib.where(c, a, b), _where_samples, dtypes=ALL,
           grad=True),
        OpInfo("Tensor.where", lambda lib, c, a, b: a.where(c, b),
               lambda d, r: (s for s in _where_samples(d, r) if not isinstance(s.args[1], int)),
               dtypes=("float32", "int64"),
           grad=True),
        # the grad harness makes leaves of T(...) arguments, so no T(bool) condition here
        OpInfo("where-grad", lambda lib, c, a, b: (lib.where(c, a, b), a.where(c, b))
               if hasattr(a, "where") else lib.where(c, a, b),
               lambda d, r: (s for s in _where_samples(d, r) if not isinstance(s.args[0], T)),
               dtypes=F32, grad=True),
        OpInfo("where-grad-T", lambda lib, c, a, b: lib.where(c, a, b),
               lambda d, r: [S(make_array(r, (3, 4), "bool"), T(make_array(r, (4, 3), d)),
                               E(make_array(r, (1, 4), d), (3, 4)))], dtypes=F32, grad=True),
        OpInfo("clamp", _fn_and_method("clamp", "clip"), _clamp_samples, dtypes=ALL,
               covers=_covers("clamp", ("clip",)), grad=True, gradcheck=False),
        OpInfo("Tensor.clamp_", _inplace("clamp"), _clamp_samples, dtypes=ALL, grad=True,
               gradcheck=False),
        OpInfo("clamp_min", lambda lib, a, lo, hi: (lib.clamp_min(a, lo), a.clamp_min(lo))
               if lo is not None else lib.clamp(a, lo, hi), _clamp_samples, dtypes=REALS,
               covers=("Tensor.clamp_min", "Tensor.clamp_min_"), grad=True, gradcheck=False),
        OpInfo("clamp_max", lambda lib, a, lo, hi: (lib.clamp_max(a, hi), a.clone().clamp_max_(
            hi)) if hi is not None else lib.clamp(a, lo, hi), _clamp_samples, dtypes=REALS,
               covers=("Tensor.clamp_max", "Tensor.clamp_max_"), grad=True, gradcheck=False),
        OpInfo("clamp-grad", _fn_and_method("clamp"), _clamp_grad_samples, dtypes=F32,
               grad=True),
        OpInfo("clamp_min-grad", _fn_and_method("clamp_min"),
               lambda d, r: (S(s.args[0], s.args[1]) for s in _clamp_grad_samples(d, r)
                             if s.args[1] is not None), dtypes=F32, grad=True),
        OpInfo("clamp_max-grad", _fn_and_method("clamp_max"),
               lambda d, r: (S(s.args[0], s.args[2]) for s in _clamp_grad_samples(d, r)
                             if s.args[2] is not None), dtypes=F32, grad=True),
        OpInfo("lerp", _fn_and_method("lerp"), _lerp_samples, dtypes=ALL,
               covers=_covers("lerp"), grad=True),
        OpInfo("Tensor.lerp_", _inplace("lerp"), _lerp_samples, dtypes=FLOATS, grad=True),
        OpInfo("addcmul", _fn_and_method("addcmul"), _addc_samples, dtypes=ALL,
               covers=_covers("addcmul"), grad=True),
        OpInfo("Tensor.addcmul_", _inplace("addcmul"), _addc_samples, dtypes=NUMBERS,
               grad=True),
        OpInfo("addcdiv", _fn_and_method("addcdiv"),
               lambda d, r: _addc_samples(d, r, divisor=True), dtypes=ALL,
               covers=_covers("addcdiv"), grad=True),
        OpInfo("Tensor.addcdiv_", _inplace("addcdiv"),
               lambda d, r: _addc_samples(d, r, divisor=True), dtypes=FLOATS, grad=True),
        OpInfo("isclose", _fn_and_method("isclose"), _close_samples, dtypes=ALL,
               covers=("Tensor.isclose",)),
        OpInfo("allclose", _fn_and_method("allclose"), _close_samples, dtypes=ALL,
               covers=("Tensor.allclose",)),
        OpInfo("equal", _fn_and_method("equal"), _equal_samples, dtypes=ALL,
               covers=("Tensor.equal",)),
        OpInfo("round_decimals", _fn_and_method("round"), _round_dec_samples, dtypes=REALS,
               grad=True, gradcheck=False),  # the samples sit on rounding boundaries
        OpInfo("nan_to_num_args", _fn_and_method("nan_to_num"), _nan_to_num_kw_samples,
               dtypes=ALL, grad=True, gradcheck=False),
        OpInfo("logit_eps", _fn_and_method("logit"), _logit_eps_samples, dtypes=ALL,
               grad=True),
        OpInfo("frexp", _frexp_fn, _unary_special, dtypes=ALL, covers=("Tensor.frexp",),
               grad=True, gradcheck=False),
        OpInfo("frexp-grad", _frexp_fn, unary, dtypes=("float64",), grad=True),
        OpInfo("sgn-grad", _sgn_grad, _unary_special, dtypes=("float32",), grad=True),
        OpInfo("sgn-gradcheck", _sgn_grad, unary, dtypes=("float64",), grad=True),
        OpInfo("conj", lambda lib, a: (lib.conj(a).resolve_conj(), a.conj().resolve_conj()),
               _unary_special, dtypes=ALL, covers=("Tensor.conj",), grad=True,
               gradcheck=False),
        OpInfo("Tensor.conj_physical_", _inplace("conj_physical"), _unary_special,
               dtypes=ALL),
        OpInfo("floor_divide-backward", _backward_of("floor_divide"), _smooth_binary,
               covers=("Tensor.__floordiv__",)),
        OpInfo("heaviside-backward", _backward_of("heaviside"), _smooth_binary),
        OpInfo("rmod-backward", lambda lib, a, b: _backward(lib, lambda x, y: 7 % x, a, b),
               _smooth_binary, covers=("Tensor.__rmod__",)),
        OpInfo("sigmoid_out", lambda lib, a: lib.sigmoid(a, out=lib.empty(0, dtype=a.dtype)),
               lambda d, r: [S(make_array(r, (3,), d))], dtypes=FLOATS),
        OpInfo("eq_out", lambda lib, a, b: lib.eq(a, b, out=lib.empty(0, dtype=lib.bool)),
               lambda d, r: [S(make_array(r, (3,), d), make_array(r, (3,), d))]),
        OpInfo("where_out", lambda lib, c, a, b: lib.where(c, a, b, out=lib.empty(0)),
               lambda d, r: [S(make_array(r, (3,), "bool"), make_array(r, (3,), d),
                               make_array(r, (3,), d))]),
    ]


OPS += _unary_ops() + _binary_ops() + _dunder_ops() + _misc_ops()


def _erf_special(dtype, rng):
    import numpy as np
    vals = np.array([0.0, -0.0, 1e-8, 0.5, 1.0, 2.0, 3.92, 3.93, 4.5, 10.0, -3.92, np.inf,
                     -np.inf, np.nan], dtype=dtype)
    yield S(vals)
    yield S(np.linspace(-6, 6, 2001).astype(dtype))


OPS += [
    OpInfo("erf_special", lambda lib, a: [lib.erf(a), lib.erfc(a)], _erf_special,
           dtypes=("float32", "float64")),
]


# ----------------------------------------------------------------------------- function forms

def _function_form(name, *args, **kw):
    """torch.<name>(x, ...) on a clone: the result, and the clone it changed in place."""
    def fn(lib, a, *extra):
        a = a.clone()
        r = getattr(lib, name)(a, *(args + extra), **kw)
        return r, a
    return fn


def _in_range(low, high):
    return lambda d, r: [S(make_array(r, (3, 4), d, low, high)), S(make_array(r, (), d, low,
                                                                              high))]


_UNARY_FUNCTION_FORMS = {
    "abs_": (-3, 3), "acos_": (-0.9, 0.9), "acosh_": (1.5, 3), "arccos_": (-0.9, 0.9),
    "arccosh_": (1.5, 3), "arcsin_": (-0.9, 0.9), "arcsinh_": (-3, 3), "arctan_": (-3, 3),
    "arctanh_": (-0.9, 0.9), "asin_": (-0.9, 0.9), "asinh_": (-3, 3), "atan_": (-3, 3),
    "atanh_": (-0.9, 0.9), "ceil_": (-3, 3), "conj_physical_": (-3, 3), "cos_": (-3, 3),
    "cosh_": (-3, 3), "deg2rad_": (-3, 3), "erf_": (-3, 3), "erfc_": (-3, 3),
    "exp2_": (-3, 3), "exp_": (-3, 3), "expm1_": (-3, 3), "fix_": (-3, 3), "floor_": (-3, 3),
    "frac_": (-3, 3), "log10_": (0.2, 3), "log1p_": (-0.5, 3), "log2_": (0.2, 3),
    "log_": (0.2, 3), "logit_": (0.1, 0.9), "nan_to_num_": (-3, 3), "neg_": (-3, 3),
    "negative_": (-3, 3), "rad2deg_": (-3, 3), "reciprocal_": (0.5, 3), "round_": (-3, 3),
    "rsqrt_": (0.2, 3), "sigmoid_": (-3, 3), "sin_": (-3, 3), "sinh_": (-3, 3),
    "sqrt_": (0.2, 3), "square_": (-3, 3), "tan_": (-1.2, 1.2), "tanh_": (-3, 3),
    "trunc_": (-3, 3), "zero_": (-3, 3),
}

OPS += [OpInfo(f"torch.{name}", _function_form(name), _in_range(*rng), dtypes=F32,
               covers=(name,)) for name, rng in _UNARY_FUNCTION_FORMS.items()]
OPS += [
    OpInfo("torch.clamp_", _function_form("clamp_", -1.0, 1.0), _in_range(-3, 3), dtypes=F32,
           covers=("clamp_", "clip_")),
    OpInfo("torch.clamp_min_", _function_form("clamp_min_", 0.5), _in_range(-3, 3),
           dtypes=F32, covers=("clamp_min_",)),
    OpInfo("torch.clamp_max_", _function_form("clamp_max_", 0.5), _in_range(-3, 3),
           dtypes=F32, covers=("clamp_max_",)),
    OpInfo("torch.fill_", _function_form("fill_", 2.5), _in_range(-3, 3), dtypes=F32,
           covers=("fill_",)),
    OpInfo("torch.round_decimals", _function_form("round_", decimals=1), _in_range(-3, 3),
           dtypes=F32),
    OpInfo("torch.ldexp_", _function_form("ldexp_"),
           lambda d, r: [S(make_array(r, (3, 4), d), make_array(r, (3, 4), "int64", -3, 3))],
           dtypes=F32, covers=("ldexp_",)),
    OpInfo("torch.addmv_", _function_form("addmv_"),
           lambda d, r: [S(make_array(r, (3,), d), make_array(r, (3, 4), d),
                           make_array(r, (4,), d))], dtypes=F32, covers=("addmv_",)),
    OpInfo("torch.index_put_", _function_form("index_put_", accumulate=True),
           lambda d, r: [S(make_array(r, (5,), d), (np.array([0, 2, 0]),),
                           make_array(r, (3,), d))], dtypes=F32, covers=("index_put_",)),
    OpInfo("torch.as_strided_", _function_form("as_strided_", (2, 2), (1, 2)),
           lambda d, r: [S(make_array(r, (6,), d))], dtypes=F32, covers=("as_strided_",)),
]


def _int_pairs(dtype, rng):
    for sa, sb in (((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3,)), ((0,), (1,))):
        yield S(make_array(rng, sa, dtype, -12, 12), make_array(rng, sb, dtype, -12, 12))
    sign = 1 if dtype in ("uint8", "bool") else -1
    yield S(np.array([0, 0, sign * 4, 7]).astype(dtype),
            np.array([0, sign * 5, 6, 0]).astype(dtype))
    yield S(make_array(rng, (3,), dtype, 0, 9), make_array(rng, (3,), "int64", -9, 9))


OPS += [
    OpInfo("gcd", lambda lib, a, b: (lib.gcd(a, b), a.gcd(b)), _int_pairs,
           dtypes=("uint8", "int8", "int16", "int32", "int64", "float32", "bool"),
           covers=("Tensor.gcd",)),
    OpInfo("lcm", lambda lib, a, b: (lib.lcm(a, b), a.lcm(b)), _int_pairs,
           dtypes=("uint8", "int8", "int16", "int32", "int64", "float32", "bool"),
           covers=("Tensor.lcm",)),
    OpInfo("gcd_", lambda lib, a, b: (lambda c: (lib.gcd_(c, b), c.lcm_(b), c))(a.clone()),
           lambda d, r: [S(make_array(r, (3, 4), d, -9, 9), make_array(r, (4,), d, -9, 9))],
           dtypes=("int32", "int64"), covers=("Tensor.gcd_", "lcm_", "Tensor.lcm_")),
    OpInfo("rsub", lambda lib, a, b, **kw: lib.rsub(a, b, **kw),
           lambda d, r: [S(make_array(r, (3, 4), d), make_array(r, (4,), d)),
                         S(make_array(r, (3, 4), d), 2.5), S(make_array(r, (3,), d), 3, alpha=2),
                         S(make_array(r, (3,), d), make_array(r, (3,), d), alpha=2)],
           dtypes=("int64", "float32", "float64", "bool"), grad=True),
]
