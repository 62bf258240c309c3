"""Tensor creation: from data, filled, ranges, identity."""

from __future__ import annotations

import math
import numbers

from .._core import dtype as _dt
from .._core.device import META, as_device
from .._core.meta import meta_array
from .._core.warn import warn_user
from .._tensor import Size, _grad_state, strided
from .._tensor import layout as layout_type
from ._common import Tensor, register, size_arg, sizes_or_keyword, wrap, xp
from ._rounding import round_sum_once

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range",
           "linspace", "logspace", "eye", "empty_strided", "scalar_tensor", "frombuffer"]


def check_pin_memory(pin_memory, fn, optional=True):
    """Refuse ``pin_memory=True`` as torch does without an accelerator: pinned (page-locked)
    memory only speeds up copies to a device, and there is no allocator for it here.
    ``optional``: whether None is accepted (torch.tensor wants a bool)."""
    if pin_memory is False or (pin_memory is None and optional):
        return
    if pin_memory is True:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    raise TypeError(f"{fn}(): argument 'pin_memory' must be bool, not "
                    f"{type(pin_memory).__name__}")


def _leaf_dtypes(data, found):
    """Collect the dtypes torch infers for the leaves of nested data."""
    t = type(data)
    if t in (list, tuple):
        types = set(map(type, data))
        if types <= {float} or types <= {int} or types <= {bool}:
            if data:
                found.add(_dt.scalar_dtype(data[0]))
            return
        for x in data:
            _leaf_dtypes(x, found)
    elif isinstance(data, Tensor):
        found.add(data.dtype)
    elif isinstance(data, (xp.ndarray, xp.generic)):  # NumPy scalars keep their dtype too
        found.add(_dt.from_numpy_dtype(data.dtype))
    elif isinstance(data, (bool, numbers.Number)):
        found.add(_dt.scalar_dtype(data))
    elif isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    else:
        try:
            seq = list(data)
        except TypeError:
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'") from None
        _leaf_dtypes(seq, found)


def _check_ragged(data, dim=0):
    if isinstance(data, (list, tuple)) and data:
        first = data[0]
        if isinstance(first, (list, tuple)):
            n = len(first)
            for x in data:
                if not isinstance(x, (list, tuple)) or len(x) != n:
                    got = len(x) if isinstance(x, (list, tuple)) else 1
                    raise ValueError(f"expected sequence of length {n} at dim {dim + 1} "
                                     f"(got {got})")
            for x in data:
                _check_ragged(x, dim + 1)


def _array_from_data(data, dtype=None):
    """A fresh backend array holding ``data``, with torch's dtype inference."""
    if isinstance(data, Tensor):
        arr = data._data
        return arr.copy() if dtype is None else arr.astype(dtype.np)
    if isinstance(data, xp.ndarray):
        _dt.from_numpy_dtype(data.dtype)
        return data.copy() if dtype is None else data.astype(dtype.np)
    _refuse_string_rows(data)
    if dtype is None:
        found = set()
        _leaf_dtypes(data, found)
        dtype = _dt._default[0]
        if found:
            dtype = None
            for d in found:
                dtype = d if dtype is None else _dt.promote_types(dtype, d)
    try:
        arr = xp.array(_unwrap_leaves(data), dtype=dtype.np)
    except ValueError:
        _check_ragged(data)
        raise
    except TypeError:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'") from None
    return arr


def _refuse_string_rows(data):
    """torch reads a string met as the first element of a sequence as one more dimension
    (``tensor(['a'])``: ValueError); elsewhere it is an invalid element (TypeError)."""
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")


def _unwrap_leaves(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and data and not isinstance(data[0], (int, float)):
        return [_unwrap_leaves(x) for x in data]
    return data


def _finish(arr, requires_grad=False, device=None):
    """The tensor over ``arr``; on the meta device (``device`` META) only its shape and dtype
    are kept."""
    if device is META:
        arr = meta_array(arr.shape, arr.dtype)
    t = wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data``: ints -> int64, floats -> default dtype, bools -> bool."""
    device = as_device(device, meta=True)
    check_pin_memory(pin_memory, "tensor", optional=False)
    if isinstance(data, Tensor):
        warn_user("To copy construct from a tensor, it is recommended to use "
                  "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                  "requires_grad_(True), rather than torch.tensor(sourceTensor).", UserWarning)
    return _finish(_array_from_data(data, dtype), requires_grad, device)


def as_tensor(data, *, dtype=None, device=None):
    """Like ``tensor`` but shares memory with Tensors and NumPy arrays when it can."""
    as_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else data.to(dtype)
    if isinstance(data, xp.ndarray):
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    return wrap(_array_from_data(data, dtype))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """torch.asarray: share memory unless ``copy=True`` or a conversion forces it.
    ``requires_grad`` unset keeps the tensor's own flag (torch 2.13 warns about that change)."""
    as_device(device)
    if requires_grad is None and isinstance(obj, Tensor) and obj.requires_grad and \
            (dtype is None or dtype is obj.dtype) and not copy:
        warn_user("torch.asarray: unspecified requires_grad now defaults to "
                  "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                  "to get the old behavior and silence this warning.", UserWarning)
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None and dtype is not t.dtype:
            if copy is False:
                raise ValueError("can't alias tensor to a different dtype without a copy")
            t = t.to(dtype)
        elif copy:
            t = t.clone()
    elif isinstance(obj, xp.ndarray) and not copy:
        t = as_tensor(obj, dtype=dtype)
    else:
        t = wrap(_array_from_data(obj, dtype))
    if requires_grad:
        t.requires_grad = True
    return t


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes go both ways)."""
    if not isinstance(ndarray, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if ndarray.itemsize and any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return wrap(ndarray)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor viewing a Python buffer (bytes-like) without copying."""
    arr = xp.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    return _finish(arr, requires_grad)


def _dtype_or_default(dtype):
    return _dt._default[0] if dtype is None else dtype


_INT64_MAX = (1 << 63) - 1


def _filled(fill, size, dtype, device, requires_grad, name="empty"):
    device = as_device(device, meta=True)
    shape = size_arg(size)
    for i, s in enumerate(shape):
        if s > _INT64_MAX:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\"")
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: {list(shape)}")
    np_dtype = _dtype_or_default(dtype).np
    nbytes = math.prod(shape) * xp.dtype(np_dtype).itemsize
    if nbytes > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if device is META:
        return _finish(meta_array(shape, np_dtype), requires_grad)
    try:
        arr = fill(shape, dtype=np_dtype)
    except (MemoryError, ValueError) as e:  # NumPy: MemoryError, or ValueError past its limit
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{nbytes} bytes ({type(e).__name__}: {e})") from None
    return _finish(arr, requires_grad)


# ---- layout= and out= of the factories

def _layout_arg(layout, name):
    """``layout`` checked (None means strided): torch's TypeError for a non-layout."""
    if layout is None:
        return strided
    if not isinstance(layout, layout_type):
        raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not "
                        f"{type(layout).__name__}")
    return layout


def _is_sparse(layout, name):
    return layout is not None and layout is not strided and \
        _layout_arg(layout, name).name != "strided"


def _sparse_backend_refuses(layout, aten_name):
    """What torch raises for a factory that has no sparse kernel (for CSR, an ``out``-variant
    kernel first makes an empty 1-D result, which CSR cannot be)."""
    csr = layout.name == "sparse_csr"
    if csr and aten_name.endswith("out"):
        return RuntimeError("torch.empty: Only batched sparse compressed (non-block) tensors "
                            "are supported, but got size [0]")
    return NotImplementedError(f"Could not run 'aten::{aten_name}' with arguments from the "
                               f"'{'SparseCsrCPU' if csr else 'SparseCPU'}' backend: it has no "
                               f"{layout!r} kernel.")


def _refuse_sparse(layout, name, aten_name=None):
    """Factories with no sparse result: torch's error for a sparse ``layout``."""
    if _is_sparse(layout, name):
        if name in ("ones", "full"):
            raise RuntimeError("full(...) is not implemented for sparse layout")
        raise _sparse_backend_refuses(layout, aten_name or name)


def _sparse_zeros(layout, shape, dtype, requires_grad, name):
    """The all-zero tensor of a sparse ``layout`` (what torch's zeros and empty give there:
    no stored elements)."""
    from .._sparse_tensor import make_coo, make_csr
    shape = tuple(shape)
    values = wrap(xp.empty(0, dtype=_dtype_or_default(dtype).np))
    if layout.name == "sparse_coo":
        t = make_coo(xp.empty((len(shape), 0), dtype=xp.int64), values, shape, coalesced=True)
    else:
        if len(shape) != 2:
            raise RuntimeError(f"torch.{name}: Only batched sparse compressed (non-block) "
                               f"tensors are supported, but got size {list(shape)}")
        t = make_csr(xp.zeros(shape[0] + 1, dtype=xp.int64), xp.empty(0, dtype=xp.int64),
                     values, shape)
    if requires_grad:
        t.requires_grad = True
    return t


def _out_dtype(out, dtype, name):
    """The dtype a factory computes with ``out=`` given: out's own, which an explicit
    ``dtype`` must equal (torch's RuntimeError otherwise)."""
    if out is None:
        return dtype
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.requires_grad and _grad_state().grad_enabled:
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    if dtype is not None and dtype is not out.dtype:
        from ._common import _SHORT
        raise RuntimeError(f"dtype {_SHORT[dtype]} does not match dtype of out parameter "
                           f"({_SHORT[out.dtype]})")
    return out.dtype


def _into_out(result, out):
    """``result`` written into ``out`` (resized to its shape if needed, silently as torch's
    factories do), or ``result`` itself without ``out``."""
    if out is None:
        return result
    if out._data.shape == result._data.shape:
        xp.copyto(out._data, result._data, casting="unsafe")
    else:
        out._data = result._data.astype(out.dtype.np, copy=False)
    out._bump_version()
    if out.requires_grad != result.requires_grad:  # torch applies requires_grad= to out
        out.requires_grad = result.requires_grad
    return out


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """A tensor of zeros of the given size."""
    check_pin_memory(pin_memory, "zeros")
    shape = sizes_or_keyword(sizes, size, "zeros")
    dtype = _out_dtype(out, dtype, "zeros")
    if _is_sparse(layout, "zeros"):
        return _sparse_zeros(layout, size_arg(shape), dtype, requires_grad, "zeros")
    return _into_out(_filled(xp.zeros, shape, dtype, device, requires_grad, "zeros"), out)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of ones of the given size."""
    check_pin_memory(pin_memory, "ones")
    _refuse_sparse(layout, "ones")
    shape = sizes_or_keyword(sizes, size, "ones")
    dtype = _out_dtype(out, dtype, "ones")
    return _into_out(_filled(xp.ones, shape, dtype, device, requires_grad, "ones"), out)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialised tensor of the given size."""
    check_pin_memory(pin_memory, "empty")
    shape = sizes_or_keyword(sizes, size, "empty")
    dtype = _out_dtype(out, dtype, "empty")
    if _is_sparse(layout, "empty"):
        return _sparse_zeros(layout, size_arg(shape), dtype, requires_grad, "empty")
    if out is not None:  # nothing to write: empty(out=) only resizes
        if out._data.shape != tuple(size_arg(shape)):
            out._data = xp.empty(size_arg(shape), dtype=out.dtype.np)
            out._bump_version()
        if requires_grad:
            out.requires_grad = True
        return out
    return _filled(xp.empty, shape, dtype, device, requires_grad, "empty")


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    check_pin_memory(pin_memory, "full")
    _refuse_sparse(layout, "full")
    dtype = _out_dtype(out, dtype, "full")
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                 else fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _into_out(_filled(lambda shape, dtype: xp.full(shape, value, dtype=dtype),
                             (size,), dtype, device, requires_grad, "full"), out)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides (in elements)."""
    check_pin_memory(pin_memory, "empty_strided")
    _refuse_sparse(layout, "empty_strided")
    from .._tensor import _strided_array
    dtype = _dtype_or_default(dtype)
    if as_device(device, meta=True) is META:
        return _finish(meta_array(size, dtype.np, stride), requires_grad)
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    storage = xp.empty(extent, dtype=dtype.np)
    return _finish(_strided_array(storage, size, stride, 0), requires_grad)


def _like(fill, input, dtype, requires_grad, pin_memory, name, layout=None, device=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"expected Tensor as element 0 in argument 0, but got "
                        f"{type(input).__name__}")
    device = input.device if device is None else as_device(device, meta=True)
    check_pin_memory(pin_memory, name)
    dtype = input.dtype if dtype is None else dtype
    if _is_sparse(layout, name):
        if name != "zeros_like":  # torch's other *_like go through empty_strided
            raise _sparse_backend_refuses(layout, "empty_strided")
        return _sparse_zeros(layout, input.shape, dtype, requires_grad, name)
    if device is META:
        return _finish(meta_array(input._data.shape, dtype.np), requires_grad)
    return _finish(fill(input._data.shape, dtype=dtype.np), requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    """Zeros with ``input``'s shape and (unless ``dtype`` is given) dtype."""
    return _like(xp.zeros, input, dtype, requires_grad, pin_memory, "zeros_like", layout,
                 device)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    """Ones with ``input``'s shape and (unless ``dtype`` is given) dtype."""
    return _like(xp.ones, input, dtype, requires_grad, pin_memory, "ones_like", layout,
                 device)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    """An uninitialized tensor with ``input``'s shape and (unless ``dtype`` is given) dtype."""
    return _like(xp.empty, input, dtype, requires_grad, pin_memory, "empty_like", layout,
                 device)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    """``fill_value`` everywhere, with ``input``'s shape and (unless ``dtype`` is given) dtype."""
    return _like(lambda shape, dtype: xp.full(shape, fill_value, dtype=dtype), input, dtype,
                 requires_grad, pin_memory, "full_like", layout, device)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor holding ``s``, of the default dtype unless ``dtype`` is given (always
    strided: torch ignores ``layout`` here)."""
    check_pin_memory(pin_memory, "scalar_tensor")
    return _finish(xp.asarray(s, dtype=_dtype_or_default(dtype).np), requires_grad)


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is float.
    ``arange(n)`` and ``arange(end=n)`` start at 0."""
    device = as_device(device, meta=True)
    check_pin_memory(pin_memory, "arange")
    _refuse_sparse(layout, "arange", "arange.start_out")
    dtype = _out_dtype(out, dtype, "arange")
    if start is None:
        if end is None:
            raise TypeError("arange() missing 1 required positional argument: 'end'")
        start = 0
    elif end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    for bound in (start, end):
        if not math.isfinite(bound):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dt._default[0] if is_float else _dt.int64
    n = max(0, math.ceil((end - start) / step))
    # torch computes start + i * step in double (or int64) before casting.
    acc = xp.float64 if dtype._category >= 2 else xp.int64
    _warn_out_count(out, n)
    if device is META:
        return _into_out(_finish(meta_array((n,), dtype.np), requires_grad), out)
    arr = (start + xp.arange(n, dtype=acc) * step).astype(dtype.np)
    return _into_out(_finish(arr, requires_grad), out)


def _warn_out_count(out, n):
    """torch's warning when arange/range resize an ``out`` that had elements."""
    if out is not None and out._data.size and out._data.size != n:
        warn_user(f"The number of elements in the out tensor of shape {list(out.shape)} is "
                  f"{out._data.size} which does not match the computed number of elements "
                  f"{n}. Note that this may occur as a result of rounding error. The out "
                  f"tensor will be resized to a tensor of shape ({n},).", UserWarning)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated inclusive range (torch.range); prefer ``arange``."""
    warn_user("torch.range is deprecated and will be removed in a future release because "
              "its behavior is inconsistent with Python's range builtin. Instead, use "
              "torch.arange, which produces values in [start, end).", UserWarning)
    _refuse_sparse(layout, "range", "range.out")
    dtype = _out_dtype(out, dtype, "range")
    n = int(math.floor((end - start) / step)) + 1
    arr = (start + xp.arange(n, dtype=xp.float64) * step).astype(_dtype_or_default(dtype).np)
    _warn_out_count(out, n)
    return _into_out(_finish(arr, requires_grad), out)


def _steps_arg(steps, name):
    """``steps`` as an int, refusing floats and bools like torch (2.5 steps used to give
    values past ``end``)."""
    if isinstance(steps, Tensor) and steps.numel() == 1 and not steps.dtype.is_floating_point \
            and steps.dtype is not _dt.bool_:
        return int(steps.item())
    if isinstance(steps, bool) or not isinstance(steps, (int, xp.integer)):
        raise TypeError(f"{name}(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    return int(steps)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive."""
    device = as_device(device, meta=True)
    check_pin_memory(pin_memory, "linspace")
    _refuse_sparse(layout, "linspace", "linspace.out")
    steps = _steps_arg(steps, "linspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _number(start), _number(end)
    dtype = _dtype_or_default(_out_dtype(out, dtype, "linspace"))
    if dtype in (_dt.float32, _dt.float64) and steps > 1 and not isinstance(start + end, complex):
        with xp.errstate(all="ignore"):  # inf/nan ends give nan like torch, silently
            arr = linspace_array(start, end, steps, dtype.np.type)
        return _into_out(_finish(arr, requires_grad, device), out)
    acc = xp.complex128 if dtype.is_complex else xp.float64
    arr = xp.linspace(start, end, steps, dtype=acc)
    if dtype._category < 2:
        arr = xp.trunc(arr.real)
    return _into_out(_finish(arr.astype(dtype.np), requires_grad, device), out)


def linspace_array(start, end, steps, np_dtype):
    """linspace's values as a NumPy array of ``np_dtype`` (float32/float64, steps > 1)."""
    # torch's order of evaluation, so values agree to the last bit: the step in the output
    # dtype, the first half counted up from start and the second half down from end, each
    # multiply-add rounded once
    start, end = np_dtype(start), np_dtype(end)
    step = np_dtype((end - start) / np_dtype(steps - 1))
    i = xp.arange(steps)
    up = i < steps // 2
    base = xp.where(up, start, end)
    offset = xp.where(up, i, i - (steps - 1))
    if np_dtype is xp.float64:  # no exact wider type: long double where the platform has it
        return (xp.longdouble(step) * offset + base).astype(xp.float64)
    return round_sum_once(base.astype(xp.float64), xp.float64(step) * offset, np_dtype)



def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``base ** linspace(start, end, steps)``."""
    device = as_device(device, meta=True)
    check_pin_memory(pin_memory, "logspace")
    _refuse_sparse(layout, "logspace", "logspace.out")
    steps = _steps_arg(steps, "logspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = _dtype_or_default(_out_dtype(out, dtype, "logspace"))
    arr = xp.power(float(base), xp.linspace(_number(start), _number(end), steps))
    return _into_out(_finish(arr.astype(dtype.np), requires_grad, device), out)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """A 2-D identity matrix of ``n`` rows and ``m`` (default ``n``) columns."""
    device = as_device(device, meta=True)
    check_pin_memory(pin_memory, "eye")
    _refuse_sparse(layout, "eye", "eye.m_out")
    dtype = _dtype_or_default(_out_dtype(out, dtype, "eye"))
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m or 0)}")
    if device is META:
        return _into_out(_finish(meta_array((n, n if m is None else m), dtype.np),
                                 requires_grad), out)
    return _into_out(_finish(xp.eye(n, m, dtype=dtype.np), requires_grad), out)


@register()
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor (a copy, never a view) from ``data`` with this tensor's dtype unless ``dtype``
    is given."""
    device = self.device if device is None else as_device(device, meta=True)
    return _finish(_array_from_data(data, dtype or self.dtype), requires_grad, device)


def _new_filled(fill, name):
    def method(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
               layout=None, pin_memory=False):
        """A new tensor of ``size`` (zeros, ones or uninitialized, as the method's name says) with
        this tensor's dtype unless ``dtype`` is given."""
        check_pin_memory(pin_memory, name)
        shape = sizes_or_keyword(sizes, size, name)
        if fill is not xp.ones and _is_sparse(layout, name):
            return _sparse_zeros(layout, size_arg(shape), dtype or self.dtype, requires_grad,
                                 name)
        _refuse_sparse(layout, "ones")
        return _filled(fill, shape, dtype or self.dtype, self.device if device is None else device,
                       requires_grad, name)
    return method


Tensor.new_zeros = _new_filled(xp.zeros, "new_zeros")
Tensor.new_ones = _new_filled(xp.ones, "new_ones")
Tensor.new_empty = _new_filled(xp.empty, "new_empty")


def _legacy_new(self, *args, size=None, data=None, other=None, storage=None, device=None):
    """The legacy constructor ``x.new(...)``: sizes (ints or a ``torch.Size``) give an
    uninitialized tensor, a sequence gives its data, a tensor of this dtype is returned as an
    alias, a storage is viewed as a 1-D tensor; all with this tensor's dtype."""
    from .._core.storage import UntypedStorage
    device = self.device if device is None else as_device(device)
    for keyword in (size, data, other, storage):
        if keyword is not None:
            args = (Size(keyword) if keyword is size else keyword,) + args
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(f"expected {self.dtype} (got {other.dtype})")
        return other.as_subclass(type(other))     # an alias, with torch's AliasBackward0
    if len(args) == 1 and isinstance(args[0], UntypedStorage):
        return wrap(args[0]._bytes.view(self.dtype.np))
    if len(args) == 1 and not isinstance(args[0], (int, Size)):
        if not isinstance(args[0], (list, tuple)) and not hasattr(args[0], "__array__"):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        return _finish(_array_from_data(args[0], self.dtype), False, device)
    shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
    if not shape:
        shape = (0,)
    return _filled(xp.empty, shape, self.dtype, device, False, "new")


Tensor.new = _legacy_new


@register()
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype unless ``dtype`` is
    given."""
    check_pin_memory(pin_memory, "new_full")
    return full(size, fill_value, dtype=dtype or self.dtype, layout=layout,
                device=self.device if device is None else device, requires_grad=requires_grad)
