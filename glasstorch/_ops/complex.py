"""torch.complex and torch.polar: complex tensors built from real ones (float32 ->
complex64, float64 -> complex128), with their backward formulas."""

from __future__ import annotations

from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    Tensor,
    broadcast_error,
    finish,
    needs_grad,
    not_implemented_for,
    record,
    register,
    wrap,
    xp,
)
from .pointwise import _tensor_arg

__all__ = ["complex", "polar"]


_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _complex_parts(name, a, b, first, second):
    _tensor_arg(name, first, 1, a)
    _tensor_arg(name, second, 2, b)
    da, db = a.dtype, b.dtype
    if da not in (_dt.float16, _dt.float32, _dt.float64) or db not in (
            _dt.float16, _dt.float32, _dt.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_SHORT[da]} and {_SHORT[db]}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {_SHORT[da]} but got scalar type "
                           f"{_SHORT[db]} for second argument")
    if da is _dt.float16:
        # torch's result would be complex32, a dtype glasstorch does not have
        raise NotImplementedError(f"torch.{name} of Half tensors gives complex32 "
                                  f"(ComplexHalf), which glasstorch does not implement")
    try:
        x, y = xp.broadcast_arrays(a._data, b._data)
    except ValueError:
        raise broadcast_error(a._data, b._data) from None
    return x, y, getattr(xp, _COMPLEX_OF[da.np.name])


@register(method=False)
def complex(real, imag, *, out=None):
    """The complex tensor real + i imag (float32 -> complex64, float64 -> complex128)."""
    x, y, ct = _complex_parts("complex", real, imag, "real", "imag")
    r = xp.empty(x.shape, ct)
    r.real, r.imag = x, y
    r = wrap(r)
    if needs_grad(real, imag):
        record(r, ComplexBackward0, (real, imag))
    return finish(r, out)


class ComplexBackward0(Node):
    def backward(self, grad):
        return grad.real, grad.imag


@register(method=False)
def polar(abs, angle, *, out=None):
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    if isinstance(abs, Tensor) and abs.dtype is _dt.float16:
        raise not_implemented_for("polar_cpu", abs.dtype)
    x, y, ct = _complex_parts("polar", abs, angle, "abs", "angle")
    r = xp.empty(x.shape, ct)
    r.real, r.imag = x * xp.cos(y), x * xp.sin(y)
    r = wrap(r)
    if needs_grad(abs, angle):
        record(r, PolarBackward0, (abs, angle), angle=angle, result=r)
    return finish(r, out)


class PolarBackward0(Node):
    # d result / d abs is the unit phase e^(i angle), d result / d angle is i result
    def backward(self, grad):
        a = self._saved_angle
        unit = complex(a.cos(), a.sin())
        return (grad * unit.conj()).real, (grad * (self._saved_result * 1j).conj()).real

