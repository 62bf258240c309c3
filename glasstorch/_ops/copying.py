"""Copies and conversions: clone, contiguous, to(), dtype shorthands, copy_, fill_, zero_."""

from __future__ import annotations

from .. import debug as _debug
from .._core import dtype as _dt
from .._core.device import as_device
from .._core.device import device as _device_cls
from .._core.meta import meta_array
from .._tensor import channels_last, channels_last_3d, contiguous_format, preserve_format
from ._common import (
    Node,
    Tensor,
    assign_inplace,
    needs_grad,
    record,
    register,
    wrap,
    xp,
)

__all__ = ["clone"]


def _copy_in_format(a, memory_format):
    """A fresh copy of ``a`` laid out as ``memory_format`` asks (None: preserve_format)."""
    if memory_format is channels_last or memory_format is channels_last_3d:
        want = 4 if memory_format is channels_last else 5
        if a.ndim != want:
            raise RuntimeError(f"required rank {want} tensor to use {memory_format} format")
        order = (0,) + tuple(range(2, a.ndim)) + (1,)
        back = (0, a.ndim - 1) + tuple(range(1, a.ndim - 1))
        # .copy: ascontiguousarray hands back an already-dense array itself, not a copy
        return a.transpose(order).copy(order="C").transpose(back)
    if memory_format is preserve_format or memory_format is None:
        # like torch's empty_like: follow the input's stride order (e.g. keep a transpose)
        return xp.copy(a, order="K")
    return a.copy(order="C")


@register()
def clone(input, *, memory_format=None):
    """A copy with its own storage (keeps a dense layout such as a transpose)."""
    out = wrap(_copy_in_format(input._data, memory_format))
    if needs_grad(input):
        record(out, CloneBackward0, (input,))
    return out


class CloneBackward0(Node):
    def backward(self, grad):
        return grad


@register()
def contiguous(input, *, memory_format=contiguous_format):
    """``input`` itself when already contiguous in ``memory_format``, else a copy."""
    if input.is_contiguous(memory_format=memory_format):
        return input
    if _debug._on:
        _debug._impl().implicit_copy(input)
    return clone(input, memory_format=memory_format)


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif a is None:
            continue  # to(None) / to(None, dtype): no device asked for, as torch reads it
        elif isinstance(a, (str, _device_cls)) or isinstance(a, int):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    return dtype, device


@register()
def to(input, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
    """Convert dtype and/or device; returns ``input`` itself when nothing changes
    (``memory_format`` None keeps the layout, as preserve_format)."""
    if memory_format is None:
        memory_format = preserve_format
    dtype, device = _parse_to(args, kwargs)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    a = input._data
    if device is not None and as_device(device, meta=True).type != input.device.type:
        if input.is_meta:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        out = wrap(meta_array(a.shape, a.dtype if dtype is None else dtype.np))
        if needs_grad(input):
            record(out, ToCopyBackward0, (input,))
        return out
    same_dtype = dtype is None or dtype.np == a.dtype
    if same_dtype and not copy and (memory_format is preserve_format or
                                    _suggested_format(input) is memory_format):
        return input
    if memory_format is not preserve_format:
        a = _copy_in_format(a, memory_format)
        out = wrap(a if same_dtype else _dt.cast_array(a, dtype))
    else:  # torch's conversion (float8 saturation, overflow to inf without a NumPy warning)
        out = wrap(a.copy(order="K") if same_dtype else _dt.cast_array(a, dtype))
    if needs_grad(input):
        record(out, ToCopyBackward0, (input,))
    return out


def _suggested_format(t):
    """torch's ``suggest_memory_format``: the format ``to`` keeps a tensor in without copying
    (channels last for 4-d/5-d tensors laid out so, else contiguous, whatever the strides)."""
    nd = t._data.ndim
    if nd in (4, 5) and not t.is_contiguous():
        fmt = channels_last if nd == 4 else channels_last_3d
        if t.is_contiguous(memory_format=fmt):
            return fmt
    return contiguous_format


class ToCopyBackward0(Node):
    def backward(self, grad):
        return grad  # the engine casts it back to the input's dtype


def _dtype_shorthand(name, dt):
    def convert(input, memory_format=preserve_format):
        return to(input, dt, memory_format=memory_format)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``self.to({dt})``."
    setattr(Tensor, name, convert)


for _name, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("bfloat16", _dt.bfloat16), ("long", _dt.int64), ("int", _dt.int32),
                  ("short", _dt.int16), ("char", _dt.int8), ("byte", _dt.uint8),
                  ("bool", _dt.bool_), ("cfloat", _dt.complex64), ("cdouble", _dt.complex128)):
    _dtype_shorthand(_name, _d)


@register()
def copy_(self, other, non_blocking=False):
    """Copy ``other`` into ``self`` in place, broadcasting and converting dtype."""
    src = other
    s = src._data if isinstance(src, Tensor) else xp.asarray(src)
    try:
        b = xp.broadcast_to(s, self._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self._data.shape[-1] if self._data.ndim else 1}"
                           f") must match the size of tensor b "
                           f"({s.shape[-1] if s.ndim else 1}) at non-singleton dimension "
                           f"{self._data.ndim - 1}") from None
    to = _dt._by_np[self._data.dtype]
    if needs_grad(self, src):
        # recorded as an out-of-place copy so the in-place machinery rebases the history
        result = wrap(_dt.cast_array(b, to))
        record(result, CopyBackwards, (self, src))
        return assign_inplace(self, result)
    # torch's conversion (float8 saturation, overflow to inf without a NumPy warning)
    xp.copyto(self._data, b if b.dtype == self._data.dtype else _dt.cast_array(b, to))
    self._bump_version()
    return self


class CopyBackwards(Node):
    def backward(self, grad):
        return grad.new_zeros(grad.shape) if self.next_functions[0][0] else None, grad


@register()
def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-dim tensor)."""
    node = FillBackward2  # torch's names: fill_(Scalar) -> 2, fill_(Tensor) -> 3
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        node = FillBackward3
        value = value._data
    if needs_grad(self):
        result = wrap(xp.full(self._data.shape, value, dtype=self._data.dtype))
        record(result, node, (self,))
        return assign_inplace(self, result)
    self._data[...] = value
    self._bump_version()
    return self


class FillBackward2(Node):
    def backward(self, grad):
        return grad.new_zeros(grad.shape)


class FillBackward3(FillBackward2):
    pass


class ZeroBackward0(FillBackward2):
    pass


@register()
def zero_(self):
    """Set every element to zero."""
    if needs_grad(self):
        result = wrap(xp.zeros(self._data.shape, dtype=self._data.dtype))
        record(result, ZeroBackward0, (self,))
        return assign_inplace(self, result)
    self._data[...] = 0
    self._bump_version()
    return self
