"""Pointwise operators: arithmetic, math functions, comparisons, logic.

Each operator is defined once here; its Tensor method, in-place ``op_``
variant and operator dunders are attached from that definition.
"""

from __future__ import annotations

from .._core import dtype as _dt
from ._common import (
    Tensor,
    binary_operands,
    broadcast_error,
    compute_array,
    compute_dtype,
    finish,
    float_result_dtype,
    not_implemented_for,
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
    if alpha != 1:
        _check_alpha(alpha, dt)
        y = _np_mul(y, alpha, dtype=dt.np) if isinstance(y, xp.ndarray) else y * alpha
    try:
        r = wrap(_np_add(x, y))
    except ValueError:
        raise broadcast_error(x, y) from None
    return r if out is None else finish(r, out)


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
    return r if out is None else finish(r, out)


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
    return r if out is None else finish(r, out)


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
    return finish(wrap(r), out)


def _any_zero(y):
    return bool(xp.any(xp.asarray(y) == 0))


divide = true_divide = div


def __truediv__(self, other):
    return div(self, other)


def __rtruediv__(self, other):
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

def _unary_float(name, ufunc, doc):
    """A unary op whose integer inputs become the default float dtype (exp, log, sqrt...)."""
    def op(input, *, out=None):
        a = input._data
        dt = float_result_dtype(_dt._by_np[a.dtype])
        with xp.errstate(all="ignore"):
            r = ufunc(a.astype(compute_dtype(dt), copy=False))
        return finish(wrap(result_array(r, dt)), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    setattr(Tensor, name, op)
    register_inplace(op)
    return op


exp = _unary_float("exp", xp.exp, "e ** input, elementwise.")
log = _unary_float("log", xp.log, "Natural logarithm, elementwise.")
sqrt = _unary_float("sqrt", xp.sqrt, "Square root, elementwise.")


@register("__neg__", "negative")
def neg(input, *, out=None):
    """-input; refused for bool tensors like torch."""
    a = input._data
    if a.dtype == xp.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    return finish(wrap(xp.negative(a)), out)


negative = neg
register_inplace(neg)
Tensor.negative_ = Tensor.neg_


@register("__abs__", "absolute")
def abs(input, *, out=None):
    """|input|; complex inputs give their real magnitude."""
    a = input._data
    if a.dtype == xp.bool_:
        raise not_implemented_for("abs", _dt.bool_)
    return finish(wrap(xp.absolute(a)), out)


absolute = abs
register_inplace(abs)
Tensor.absolute_ = Tensor.abs_
