"""``make_tensor``: random test tensors of a given shape and dtype, as torch.testing makes
them (values uniform in ``[low, high)`` with per-dtype defaults; drawn from glasstorch's
default generator)."""

from __future__ import annotations

import collections.abc
import math
import warnings

import glasstorch

__all__ = ["make_tensor"]

_INTEGRAL = (glasstorch.uint8, glasstorch.int8, glasstorch.int16, glasstorch.int32,
             glasstorch.int64)
_FLOATING = (glasstorch.float16, glasstorch.bfloat16, glasstorch.float32, glasstorch.float64)
_COMPLEX = (glasstorch.complex64, glasstorch.complex128)


def _bounds(dtype, low, high, lowest, highest, default_low, default_high):
    """Validate ``low``/``high`` (defaults filled in) and clamp them into the range the
    dtype can draw from: ``[lowest, highest)``."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and "
                         f"high={high!r}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                         f"{high}), but {dtype} only supports [{lowest}, {highest})")
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if dtype is glasstorch.bool or dtype in _INTEGRAL:
        # randint's upper bound is exclusive: rounding both bounds up keeps draws in range
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(t, low, high):
    # uniform_ needs high - low to be finite in the dtype: draw a halved range, then double
    if high - low >= glasstorch.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``.

    Defaults: bool [0, 2), unsigned integers [0, 10), signed integers [-9, 10), floating and
    complex (both parts) [-9, 9); given bounds are clamped to the dtype's finite range.
    ``noncontiguous`` returns a strided view (for more than one element), ``memory_format``
    a copy in that layout, ``exclude_zero`` replaces zeros by 1 (integers, bool) or the
    dtype's smallest normal number. ``requires_grad`` applies to floating and complex dtypes.
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    integral = dtype is glasstorch.bool or dtype in _INTEGRAL
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype!r}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # twice the last dim, viewed every other element from offset 1: a real stride and
        # offset, with distinct values
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is glasstorch.bool:
        low, high = _bounds(dtype, low, high, 0, 2, 0, 2)
        result = glasstorch.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = glasstorch.iinfo(dtype)
        # randint cannot draw int64's maximum (its bound is exclusive and itself an int64)
        top = info.max + (0 if dtype is glasstorch.int64 else 1)
        low, high = _bounds(dtype, low, high, info.min, top, -9, 10)
        result = glasstorch.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING or dtype in _COMPLEX:
        info = glasstorch.finfo(dtype)
        low, high = _bounds(dtype, low, high, info.min, info.max, -9, 9)
        result = glasstorch.empty(shape, device=device, dtype=dtype)
        _uniform(glasstorch.view_as_real(result) if dtype in _COMPLEX else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        f"torch.testing.make_tensor(). To request support, file an issue at: "
                        f"https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else glasstorch.finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
