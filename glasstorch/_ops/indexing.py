"""Indexing: ``t[...]`` and ``t[...] = v``, and the gather/scatter family of operators.

Indexing follows torch's two stages: ints, slices, ``None`` and ``...`` are applied
first as a NumPy basic index (a real view, with torch's strides), then tensor/list
indices ("advanced" indices) pick elements out of that view (a copy). Applying ints
in the first stage is what makes ``x[0, :, [1, 2]]`` keep the slice dim first, as
torch does (NumPy alone would move the advanced dim to the front).
"""

from __future__ import annotations

from .._core import dtype as _dt
from .._core.storage import data_ptr, root_array
from .._core.warn import warn_user
from .._tensor import _strided_array
from ._common import (
    Node,
    Tensor,
    assign_inplace,
    finish,
    needs_grad,
    record,
    register,
    register_inplace,
    view_of,
    wrap,
    wrap_dim,
    xp,
)
from .views import SelectBackward0, SliceBackward0, UnsqueezeBackward0

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add",
           "index_copy", "index_fill", "index_put", "masked_fill", "masked_select",
           "masked_scatter", "take", "take_along_dim", "put", "nonzero", "argwhere",
           "searchsorted", "bucketize"]

_ndarray = xp.ndarray
_int64 = xp.dtype(xp.int64)
_int32 = xp.dtype(xp.int32)
_uint8 = xp.dtype(xp.uint8)
_bool = xp.dtype(xp.bool_)
_by_np = _dt._by_np
_SHORT = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}
_TENSOR_NAMES = {
    "bool": "BoolTensor", "uint8": "ByteTensor", "int8": "CharTensor", "int16": "ShortTensor",
    "int32": "IntTensor", "int64": "LongTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "float32": "FloatTensor", "float64": "DoubleTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


def _short(arr):
    return _SHORT[_by_np[arr.dtype].__repr__().split(".")[-1]]


def _name(arr):
    return _by_np[arr.dtype].__repr__().split(".")[-1]


def _contig(a):
    # np.ascontiguousarray turns 0-d arrays into 1-d ones; this keeps the shape
    return a if a.flags.c_contiguous else a.copy(order="C")


def _oob(i, dim, size, exc=IndexError, prefix=""):
    return exc(f"{prefix}index {i} is out of bounds for dimension {dim} with size {size}")


# ----------------------------------------------------------------------------- index parsing
# Parsed items: ("i", int) select, ("s", slice), ("n",) new axis, ("e",) ellipsis,
# ("a", int array) advanced index, ("m", bool array) mask, ("b", bool) Python bool.

def _index_array(obj):
    """An index given as a tensor, list or NumPy array -> ("a"/"m"/"i"/"b", value)."""
    if isinstance(obj, Tensor):
        arr = obj._data
    elif isinstance(obj, _ndarray):
        arr = obj
    else:
        arr = xp.asarray(obj)
        if arr.size == 0 and arr.dtype.kind == "f":  # [] indexes like an empty long tensor
            arr = arr.astype(_int64)
    k = arr.dtype
    if k == _bool:
        if arr.ndim == 0 and not isinstance(obj, Tensor):
            return ("b", bool(arr))
        return ("m", arr)
    if k == _uint8:
        warn_user("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                  "torch.bool instead.", UserWarning)
        return ("m", arr.astype(_bool))
    if k == _int64 or k == _int32:
        if arr.ndim == 0 and isinstance(obj, Tensor):
            return ("i", int(arr))  # a 0-d integer tensor selects like an int (a view)
        return ("a", arr)
    if k.kind in "iu" and not isinstance(obj, Tensor):
        return ("a", arr.astype(_int64))
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _parse_item(item):
    t = type(item)
    if t is int:
        return ("i", item)
    if t is slice:
        return ("s", item)
    if item is None:
        return ("n",)
    if item is Ellipsis:
        return ("e",)
    if t is bool:
        return ("b", item)
    if isinstance(item, (Tensor, _ndarray, list, tuple)):
        return _index_array(item)
    if t is range:  # torch reads a range as the list of its integers
        return _index_array(list(item))
    if isinstance(item, (xp.bool_,)):
        return ("b", bool(item))
    if isinstance(item, xp.integer):
        return ("i", int(item))
    if t is str:
        raise TypeError("new(): invalid data type 'str'")
    if hasattr(item, "__index__") and not isinstance(item, (float, complex, str)):
        return ("i", item.__index__())
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _as_tuple(index):
    if type(index) is tuple:
        return index
    if type(index) is list and len(index) < 32 and any(
            isinstance(e, (list, tuple, Tensor, _ndarray, slice)) or e is None or e is Ellipsis
            for e in index):
        warn_user("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                  "use x[tuple(seq)] instead of x[seq].", UserWarning)
        return tuple(index)
    return (index,)


def _consumed(p):
    kind = p[0]
    if kind in ("i", "s", "a"):
        return 1
    if kind == "m":
        return p[1].ndim
    return 0


def _check_slice(s):
    if s.step is not None:
        step = s.step.__index__()
        if step <= 0:
            if step == 0:
                raise ValueError("slice step cannot be zero")
            raise ValueError("step must be greater than zero")
    return s if all(type(v) is int or v is None for v in (s.start, s.stop, s.step)) else \
        slice(*(None if v is None else v.__index__() for v in (s.start, s.stop, s.step)))


def _resolve(input, index):
    """Apply the basic part of ``index``: (numpy view, [(dim in view, index array), ...])."""
    a = input._data
    parsed = [_parse_item(i) for i in _as_tuple(index)]
    shape = a.shape
    ndim = a.ndim
    used = sum(_consumed(p) for p in parsed)
    if used > ndim:
        if ndim == 0 and parsed and parsed[0][0] == "i":
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                             "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic = []
    adv = []
    new_dims = []   # (result dim, stride in bytes) of each None
    dim = 0   # dim of ``a`` the next item applies to
    out = 0   # dim of the basic result the next item lands on
    ellipsis_done = False
    for p in parsed:
        kind = p[0]
        if kind == "i":
            i, size = p[1], shape[dim]
            if not -size <= i < size:
                raise _oob(i, dim, size)
            basic.append(i)
            dim += 1
        elif kind == "s":
            basic.append(_check_slice(p[1]))
            dim += 1
            out += 1
        elif kind == "n":
            basic.append(None)
            # torch unsqueezes: the new dim's stride is the next dim's size * stride, not 0
            new_dims.append((out, shape[dim] * a.strides[dim] if dim < ndim else a.itemsize))
            out += 1
        elif kind == "e":
            n = 0 if ellipsis_done else ndim - used
            ellipsis_done = True
            basic.extend([slice(None)] * n)
            dim += n
            out += n
        elif kind == "b":
            # torch: unsqueeze, then index the new dim with [0] (True) or [] (False)
            basic.append(None)
            adv.append((out, xp.zeros(1 if p[1] else 0, _int64)))
            out += 1
        elif kind == "a":
            basic.append(slice(None))
            adv.append((out, p[1]))
            dim += 1
            out += 1
        else:  # mask over mask.ndim dims
            m = p[1]
            k = m.ndim
            for j in range(k):
                if m.shape[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(m.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(shape[dim:])} at index {dim + j}")
            basic.extend([slice(None)] * k)
            if k == 0:  # a 0-d bool tensor: like a Python bool
                basic.append(None)
                adv.append((out, xp.zeros(1 if m else 0, _int64)))
                out += 1
            else:
                for j, nz in enumerate(xp.nonzero(m)):
                    adv.append((out + j, nz))
            dim += k
            out += k
    kinds = [p[0] for p in parsed if p[0] in "abm"]
    only_mask = len(kinds) == 1 and kinds[0] == "m" and adv and len(adv) == parsed_mask_ndim(
        parsed)
    basic.append(Ellipsis)  # keeps 0-d results as array views rather than scalars
    view = a[tuple(basic)]
    if view.size == 0 and a.size:
        view = _empty_view(input, view, basic)
    elif not a.size and view.ndim:
        view = _view_of_empty(input, view, basic)
    if new_dims and a.size:
        item = a.itemsize
        strides = [st // item for st in view.strides]
        for d, st in new_dims:
            strides[d] = st // item
        off = (data_ptr(view) - data_ptr(root_array(a))) // item
        view = _strided_array(a, view.shape, strides, off)
    return view, adv, only_mask, basic


def parsed_mask_ndim(parsed):
    return max((p[1].ndim for p in parsed if p[0] == "m"), default=0)


def _empty_view(input, view, basic):
    # NumPy leaves the data pointer alone for empty slices; torch moves the storage offset
    # to the clamped start, so rebuild the view there.
    a = input._data
    item = a.itemsize
    off = input.storage_offset()
    dim = 0
    for b in basic:
        if b is None or b is Ellipsis:
            continue
        size, st = a.shape[dim], a.strides[dim] // item
        if type(b) is slice:
            off += b.indices(size)[0] * st
        else:
            off += (b + size if b < 0 else b) * st
        dim += 1
    strides = [s // item for s in view.strides]
    try:
        return _strided_array(a, view.shape, strides, off)
    except ValueError:  # the offset lies past the end of the buffer: keep NumPy's
        return view


def _view_of_empty(input, view, basic):
    """The view of an empty tensor with torch's strides and offset (NumPy gives empty arrays
    zero strides): each item applied to the tensor's sizes and strides in turn, as torch's
    select/slice/unsqueeze do."""
    sizes, strides = list(input.shape), list(input.stride())
    off, dim = input.storage_offset(), 0
    for b in basic:
        if b is Ellipsis:
            continue
        if b is None:
            strides.insert(dim, sizes[dim] * strides[dim] if dim < len(sizes) else 1)
            sizes.insert(dim, 1)
        elif type(b) is slice:
            start, stop, step = b.indices(sizes[dim])
            off += start * strides[dim] if sizes[dim] else 0
            sizes[dim] = len(range(start, stop, step))
            strides[dim] *= step
        else:
            off += (b + sizes[dim] if b < 0 else b) * strides[dim]
            del sizes[dim], strides[dim]
            continue
        dim += 1
    try:
        return _strided_array(input._data, view.shape, strides, off)
    except ValueError:  # the offset lies past the end of the (empty) buffer
        return _strided_array(input._data, view.shape, strides, 0)


def _adv_index(view, adv, value=None):
    """The NumPy index tuple for the advanced stage (after bounds/broadcast checks), the
    result shape, and ``value`` (if given) broadcast to it; the key is None when the
    result is empty."""
    shape = view.shape
    try:
        bshape = xp.broadcast_shapes(*(arr.shape for _, arr in adv))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(arr.shape)) for _, arr in adv)
                         ) from None
    positions = [pos for pos, _ in adv]
    first, last = positions[0], positions[-1]
    if last - first + 1 == len(positions):  # adjacent: the result dims stay in place
        rshape = shape[:first] + bshape + shape[last + 1:]
    else:
        rest = tuple(s for i, s in enumerate(shape) if i not in positions)
        rshape = bshape + rest
    if value is not None:  # torch checks the value's shape before the indices
        v = _strip_leading_ones(value, len(rshape))
        try:
            value = xp.broadcast_to(v, rshape)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot "
                               f"be broadcast to indexing result of shape {list(rshape)}"
                               ) from None
    if 0 in rshape:  # torch checks indices only for elements it reads: none here
        if 0 not in bshape and any(not shape[pos] for pos, _ in adv):
            raise IndexError("index is out of bounds for dimension with size 0")
        return None, rshape, value
    key = [slice(None)] * view.ndim
    for pos, arr in adv:
        size = shape[pos]
        if arr.size:
            lo, hi = int(arr.min()), int(arr.max())
            if lo < -size:
                raise _oob(lo, pos, size)
            if hi >= size:
                raise _oob(hi, pos, size)
        key[pos] = arr
    return tuple(key), rshape, value


def __getitem__(self, index):
    """``self[index]``: a view for ints/slices/None/...; a copy when tensors index."""
    if type(index) is int:  # fast path: select along dim 0
        a = self._data
        if not a.ndim:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                             "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        size = a.shape[0]
        if not -size <= index < size:
            raise _oob(index, 0, size)
        out = view_of(self, a[index, ...])
        if needs_grad(self):
            record(out, SelectBackward0, (self,), self_sym_sizes=self.shape, dim=0, index=index)
        return out
    if needs_grad(self):
        return _getitem_grad(self, index)
    view, adv, _, _ = _resolve(self, index)
    if not adv:
        return view_of(self, view)
    key, rshape, _ = _adv_index(view, adv)
    if key is None:
        return wrap(xp.empty(rshape, view.dtype))
    return wrap(_contig(view[key]))


def _value_array(self, value, advanced):
    """The value to store, as an array of self's dtype (not yet broadcast)."""
    dt = self._data.dtype
    if isinstance(value, Tensor):
        v = value._data
        if v.dtype != dt:
            if advanced:
                raise RuntimeError(f"Index put requires the source and destination dtypes "
                                   f"match, got {_short(self._data)} for the destination and "
                                   f"{_short(v)} for the source.")
            if v.dtype.kind == "c" and dt.kind != "c":
                warn_user("Casting complex values to real discards the imaginary part",
                          UserWarning)
                v = v.real
            v = v.astype(dt)
        return v
    if isinstance(value, (bool, int, float, complex, xp.generic)):
        return _scalar_to(value, dt)
    raise TypeError(f"can't assign a {type(value).__name__} to a torch."
                    f"{_TENSOR_NAMES[_name(self._data)]}")


def _scalar_to(value, dt):
    """A Python number as a 0-d array of ``dt``, refusing what torch refuses."""
    kind = dt.kind
    if kind == "b":
        return xp.asarray(bool(value))
    if isinstance(value, (complex, xp.complexfloating)) and kind != "c":
        if value.imag != 0:
            raise _overflow(dt)
        value = value.real
    if kind in "iu":
        if isinstance(value, (float, xp.floating)):
            info = xp.iinfo(dt)
            if value != value or not info.min <= value <= info.max:
                raise _overflow(dt)
            value = int(value)
        value = int(value)
        info = xp.iinfo(dt)
        # like torch, unsigned types accept negatives that wrap around
        low = -info.max - 1 if kind == "u" else info.min
        if not low <= value <= info.max:
            raise _overflow(dt)
        return xp.asarray(value % (info.max + 1) if kind == "u" else value, dt)
    return xp.asarray(value).astype(dt)


_C_TYPE = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
           "uint8": "uint8_t"}


def _overflow(dt):
    n = _name(xp.empty(0, dt))
    return RuntimeError(f"value cannot be converted to type {_C_TYPE.get(n, n)} without "
                        f"overflow")


def _strip_leading_ones(v, ndim):
    # torch drops leading size-1 dims of the value beyond the target's rank
    while v.ndim > ndim and v.shape[0] == 1:
        v = v.reshape(v.shape[1:])
    return v


def __setitem__(self, index, value):
    """``self[index] = value``: broadcast ``value`` and write it in place."""
    if index is False:  # torch writes nothing and leaves the version alone
        return
    if isinstance(value, Tensor) and value is self:
        value = wrap(self._data.copy())
    if needs_grad(self, value):
        return _setitem_grad(self, index, value)
    view, adv, only_mask, _ = _resolve(self, index)
    if not adv:
        v = _strip_leading_ones(_value_array(self, value, False), view.ndim)
        if v.ndim > view.ndim:
            raise RuntimeError(f"expand({v.shape}, size={list(view.shape)}): the number of "
                               f"sizes provided ({view.ndim}) must be greater or equal to the "
                               f"number of dimensions in the tensor ({v.ndim})")
        try:
            v = xp.broadcast_to(v, view.shape)
        except ValueError:
            raise _expand_error(v.shape, view.shape) from None
        xp.copyto(view, v, casting="unsafe")
    else:
        # torch fills through masked_fill_ (which converts dtypes) for one mask and a
        # one-element value
        if only_mask and isinstance(value, Tensor) and value._data.size == 1:
            v = _scalar_to(_item(value._data.reshape(())), self._data.dtype)
        else:
            v = _value_array(self, value, True)
        _put_advanced(view, adv, v, False)
    self._bump_version()


def _expand_error(vshape, target):
    off = len(target) - len(vshape)
    for i in range(len(vshape)):
        if vshape[i] != 1 and vshape[i] != target[off + i]:
            return RuntimeError(f"The expanded size of the tensor ({target[off + i]}) must "
                                f"match the existing size ({vshape[i]}) at non-singleton "
                                f"dimension {off + i}.  Target sizes: {list(target)}.  "
                                f"Tensor sizes: {list(vshape)}")
    return RuntimeError(f"cannot expand {list(vshape)} to {list(target)}")


def _put_advanced(view, adv, v, accumulate):
    """Write array ``v`` (self's dtype) into ``view`` at the advanced positions."""
    key, _, v = _adv_index(view, adv, v)
    if key is None:
        return
    if accumulate:
        if v.dtype == _bool:
            xp.logical_or.at(view, key, v)
        else:
            xp.add.at(view, key, v)
    else:
        view[key] = v


Tensor.__getitem__ = __getitem__
Tensor.__setitem__ = __setitem__


# ----------------------------------------------------------------------------- autograd

def _basic_tensor(self, index):
    """Apply the basic part of ``self[index]`` as torch does under autograd: one recorded
    view op per item (select for ints, slice for non-full slices, unsqueeze for None).

    Returns (tensor, advanced indices, only_mask, whether any view op was applied).
    """
    view, adv, only_mask, basic = _resolve(self, index)
    steps = []
    cur = self._data
    dim = 0
    lead = (slice(None),)
    for b in basic:
        if b is Ellipsis:
            continue
        if b is None:
            cur = xp.expand_dims(cur, dim)
            steps.append((cur, UnsqueezeBackward0, {"dim": dim}))
            dim += 1
        elif type(b) is slice:
            size = cur.shape[dim]
            start, stop, step = b.indices(size)
            if not (start == 0 and stop == size and step == 1):
                sizes = cur.shape
                cur = cur[lead * dim + (b,)]
                steps.append((cur, SliceBackward0, {"self_sym_sizes": sizes, "dim": dim,
                                                    "start": start, "end": max(stop, start),
                                                    "step": step}))
            dim += 1
        else:
            sizes = cur.shape
            cur = cur[lead * dim + (b, Ellipsis)]
            steps.append((cur, SelectBackward0, {"self_sym_sizes": sizes, "dim": dim,
                                                 "index": b}))
    if not steps:
        return self, adv, only_mask, False
    if not needs_grad(self):
        return view_of(self, view), adv, only_mask, True
    t = self
    last = len(steps) - 1
    for k, (arr, node, saved) in enumerate(steps):
        out = view_of(t, view if k == last else arr)
        if "self_sym_sizes" in saved:
            saved["self_sym_sizes"] = _size(saved["self_sym_sizes"])
        record(out, node, (t,), **saved)
        t = out
    return t, adv, only_mask, True


def _size(shape):
    from .._tensor import Size
    return Size(shape)


def _getitem_grad(self, index):
    base, adv, _, stepped = _basic_tensor(self, index)
    if adv:
        return _index_adv(base, adv)
    if stepped:
        return base
    out = view_of(self, self._data[...])
    if type(index) is slice:  # a lone full slice is still a slice op in torch
        n = self._data.shape[0]
        record(out, SliceBackward0, (self,), self_sym_sizes=self.shape, dim=0, start=0, end=n,
               step=1)
    else:
        record(out, AliasBackward0, (self,))
    return out


class AliasBackward0(Node):
    def backward(self, grad):
        return grad


def _index_list(adv):
    """torch's ``indices`` of an index op: one int64 tensor per indexed dim, None elsewhere."""
    out = [None] * (adv[-1][0] + 1)
    for pos, arr in adv:
        out[pos] = wrap(arr.astype(_int64, copy=False))
    return tuple(out)


def _index_adv(t, adv):
    """``t[advanced indices]`` (a copy), recorded as IndexBackward0."""
    view = t._data
    key, rshape, _ = _adv_index(view, adv)
    out = wrap(xp.empty(rshape, view.dtype)) if key is None else wrap(_contig(view[key]))
    if needs_grad(t):
        record(out, IndexBackward0, (t,), self_sym_sizes=t.shape, indices=_index_list(adv),
               adv=adv)
    return out


class IndexBackward0(Node):
    def backward(self, grad):
        zeros = grad.new_zeros(self._saved_self_sym_sizes)
        return _index_put_adv(zeros, self._saved_adv, grad, True)


def _index_put_adv(target, adv, values, accumulate):
    """Out-of-place ``index_put`` at parsed advanced indices, recorded as IndexPutBackward0."""
    res = target._data.copy()
    _put_advanced(res, adv, values._data, accumulate)
    out = wrap(res)
    if needs_grad(target, values):
        record(out, IndexPutBackward0, (target, values), indices=_index_list(adv),
               accumulate=accumulate, adv=adv)
    return out


class IndexPutBackward0(Node):
    def backward(self, grad):
        adv = self._saved_adv
        gs = gv = None
        if self.next_functions[0][0] is not None:
            gs = grad if self._saved_accumulate else \
                _index_put_adv(grad, adv, grad.new_zeros(()), False)
        if self.next_functions[1][0] is not None:
            gv = _index_adv(grad, adv)
            vshape = self._input_meta[1][0]
            if tuple(gv.shape) != vshape:
                from ..autograd.engine import sum_to
                stripped = vshape
                while len(stripped) > gv.dim() and stripped[0] == 1:
                    stripped = stripped[1:]
                gv = sum_to(gv, stripped).reshape(vshape)
        return gs, gv


class FillBackward3(Node):
    def backward(self, grad):
        gs = grad.new_zeros(grad.shape) if self.next_functions[0][0] is not None else None
        gv = None
        if self.next_functions[1][0] is not None:
            gv = grad.sum().reshape(self._input_meta[1][0])
        return gs, gv


def _setitem_grad(self, index, value):
    """``self[index] = value`` when autograd records: basic indices write through a view with
    ``copy_`` (torch's CopySlices), advanced ones go through a recorded ``index_put``."""
    if isinstance(value, Tensor) and value is self:
        value = value.clone()
    base, adv, only_mask, _ = _basic_tensor(self, index)
    if not adv:
        v = _strip_leading_ones(_value_array(self, value, False), base._data.ndim)
        if v.ndim > base._data.ndim:
            raise RuntimeError(f"expand({v.shape}, size={list(base.shape)}): the number of "
                               f"sizes provided ({base._data.ndim}) must be greater or equal to "
                               f"the number of dimensions in the tensor ({v.ndim})")
        try:
            xp.broadcast_shapes(v.shape, base._data.shape)
        except ValueError:
            raise _expand_error(v.shape, base._data.shape) from None
        if v.ndim == 0:  # torch fills with a number or a 0-d tensor (FillBackward3)
            result = wrap(xp.broadcast_to(v, base._data.shape).copy())
            record(result, FillBackward3, (base, value))
            assign_inplace(base, result)
            return
        src = value if value._data.shape == v.shape else value.reshape(v.shape)
        base.copy_(src)
        return
    if isinstance(value, Tensor):
        if not (only_mask and value._data.size == 1):
            _value_array(self, value, True)  # torch's dtype check
        values = value if value.dtype is self.dtype else value.to(self.dtype)
    else:
        values = wrap(_value_array(self, value, True))
    assign_inplace(base, _index_put_adv(base, adv, values, False))


# ----------------------------------------------------------------------------- helpers

def _check_long(index, msg, exc=RuntimeError, allow_int32=False):
    d = index._data.dtype
    if d != _int64 and not (allow_int32 and d == _int32):
        raise exc(msg.format(_short(index._data)))


def _bounds(idx, size, dim, exc=RuntimeError, prefix="", negative=False):
    """Raise torch's out-of-bounds error; returns ``idx`` with negatives wrapped if allowed."""
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        low = -size if negative else 0
        if lo < low:
            raise _oob(lo, dim, size, exc, prefix)
        if hi >= size:
            raise _oob(hi, dim, size, exc, prefix)
        if negative and lo < 0:
            idx = xp.where(idx < 0, idx + size, idx)
    return idx


def _as_1d(a):
    return a.reshape(1) if a.ndim == 0 else a


def _scalar_value(value, dt, op):
    """A fill value (number or 0-d tensor) as a 0-d array of ``dt``."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"{op} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        value = _item(value._data)  # converted like a number, with its overflow checks
    return _scalar_to(value, dt)


def _item(arr):
    return float(arr) if arr.dtype == _dt.bfloat16.np else arr.item()


# ----------------------------------------------------------------------------- select/gather

@register()
def index_select(input, dim, index, *, out=None):
    """Entries of ``input`` along ``dim`` at the positions in the 1-D ``index``."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    _check_long(index, "index_select(): Expected dtype int32 or int64 for index",
                allow_int32=True)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = _as_1d(idx)
    if a.ndim == 0:
        if idx.size != 1 or int(idx[0]) != 0:
            raise IndexError("index out of range in self")
        r = wrap(a.copy())
    else:
        size = a.shape[d]
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
            raise IndexError("index out of range in self")
        r = wrap(_contig(xp.take(a, idx, axis=d)))
    if needs_grad(input):
        record(r, IndexSelectBackward0, (input,), self_sym_sizes=input.shape, dim=d,
               index=index)
    return finish(r, out)


class IndexSelectBackward0(Node):
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        return full.index_add(self._saved_dim, self._saved_index, grad)


def _check_gather_shapes(a, idx, d, name):
    if max(idx.ndim, 1) != max(a.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i in range(idx.ndim):
        if i != d and idx.shape[i] > _as_1d(a).shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index "
                               f"{list(idx.shape)} to be no larger than self {list(a.shape)} "
                               f"apart from dimension {d}")


def _grid(idx, d):
    """Coordinate arrays addressing, for every element of ``idx``, its target in dim ``d``."""
    coords = list(xp.indices(idx.shape, sparse=True))
    coords[d] = idx
    return tuple(coords)


@register()
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (likewise for other dims)."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    _check_long(index, "gather(): Expected dtype int64 for index", allow_int32=True)
    idx = index._data
    _check_gather_shapes(a, idx, d, "gather")
    if idx.size == 0:
        r = wrap(xp.empty(idx.shape, a.dtype))
    else:
        a1, i1 = _as_1d(a), _as_1d(idx)
        i1 = _bounds(i1, a1.shape[d], d)
        r = wrap(_contig(a1[_grid(i1, d)].reshape(idx.shape)))
    if needs_grad(input):
        record(r, GatherBackward0, (input,), self=input, dim=d, index=index,
               sparse_grad=sparse_grad)
    return finish(r, out)


class GatherBackward0(Node):
    def backward(self, grad):
        zeros = self._saved_self.new_zeros(self._input_meta[0][0]).to(grad.dtype)
        return zeros.scatter_add(self._saved_dim, self._saved_index, grad)


@register()
def take_along_dim(input, indices, dim=None, *, out=None):
    """Pick values along ``dim`` (the flattened input when None) at ``indices``."""
    _check_long(indices, "torch.take_along_dim(): dtype of indices should be Long but got {}")
    a, idx = input._data, indices._data
    if dim is None:
        flat = a.reshape(-1)
        i = _bounds(idx.reshape(-1), flat.size, 0)
        r = wrap(flat[i])
        if needs_grad(input):
            from .views import reshape
            src = reshape(input, (-1,))
            record(r, GatherBackward0, (src,), self=src, dim=0, index=wrap(_contig(i)),
                   sparse_grad=False)
        return finish(r, out)
    d = wrap_dim(dim, a.ndim)
    if a.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {a.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    if a.ndim == 0:
        return finish(wrap(a.copy()), out)
    sa, si = list(a.shape), list(idx.shape)
    sa[d] = si[d] = 1
    try:
        b = list(xp.broadcast_shapes(tuple(sa), tuple(si)))
    except ValueError:
        raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape: "
                           f"{list(a.shape)} and {list(idx.shape)}") from None
    ba, bi = list(b), list(b)
    ba[d], bi[d] = a.shape[d], idx.shape[d]
    aa = xp.broadcast_to(a, ba)
    if a.shape[d] == 0 and idx.size:
        raise RuntimeError("ZeroDivisionError")
    # torch 2.13 wraps indices along ``dim`` modulo its size (no bounds error)
    ii = xp.broadcast_to(xp.mod(idx, max(a.shape[d], 1)), bi)
    r = wrap(_contig(xp.take_along_axis(aa, ii, d)))
    if needs_grad(input):
        from .views import expand
        src = expand(input, ba)
        record(r, GatherBackward0, (src,), self=src, dim=d, index=wrap(_contig(ii)),
               sparse_grad=False)
    return finish(r, out)


@register()
def take(input, index, *, out=None):
    """Values of the flattened ``input`` at ``index`` (negatives count from the end)."""
    _check_long(index, "take(): Expected a long tensor for index, but got {}")
    flat = input._data.reshape(-1)
    idx = index._data
    n = flat.size
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        bad = lo if lo < -n else (hi if hi >= n else None)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             f"elements.")
    r = wrap(flat[idx] if idx.ndim else flat[idx.reshape(1)].reshape(()))
    if needs_grad(input):
        record(r, TakeBackward0, (input,), self=input, index=index)
    return finish(r, out)


class TakeBackward0(Node):
    def backward(self, grad):
        zeros = grad.new_zeros(self._input_meta[0][0])
        _ = self._saved_self  # torch keeps self; unpacking checks it was not modified
        return zeros.put(self._saved_index, grad, True)


# ----------------------------------------------------------------------------- scatter

def _scatter_prep(input, dim, index, src, name):
    a = input._data
    d = wrap_dim(dim, a.ndim)
    _check_long(index, name + "(): Expected dtype int64 for index", allow_int32=True)
    idx = index._data
    if isinstance(src, Tensor):
        s = src._data
        if s.dtype != a.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        if max(idx.ndim, 1) != max(a.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as self "
                               "tensor")
        if idx.ndim != s.ndim and not (idx.ndim <= 1 and s.ndim <= 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        s1 = _as_1d(s)
        for i in range(idx.ndim):
            if idx.shape[i] > s1.shape[i] or (i != d and idx.shape[i] > _as_1d(a).shape[i]):
                raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                                   f"{list(a.shape)} apart from dimension {d} and to be no "
                                   f"larger size than src {list(s.shape)}")
        vals = s1[tuple(slice(0, n) for n in _as_1d(idx).shape)]
    else:
        if max(idx.ndim, 1) != max(a.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as self "
                               "tensor")
        for i in range(idx.ndim):
            if i != d and idx.shape[i] > _as_1d(a).shape[i]:
                raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                                   f"{list(a.shape)} apart from dimension {d}")
        vals = xp.broadcast_to(_scalar_value(src, a.dtype, name), _as_1d(idx).shape)
    res = _as_1d(a).copy()
    i1 = _bounds(_as_1d(idx), res.shape[d], d)
    return a, res, _grid(i1, d), vals


@register()
def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    """Write ``src`` (a tensor or a number) into a copy of ``input`` at ``index`` along ``dim``.

    ``reduce='add'`` or ``'multiply'`` combines with the existing values instead.
    """
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    a, res, coords, vals = _scatter_prep(input, dim, index, src, "scatter")
    if reduce is None:
        res[coords] = vals
    elif reduce == "add":
        _ufunc_at(xp.add, res, coords, vals)
    else:
        _ufunc_at(xp.multiply, res, coords, vals)
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, src):
        d = wrap_dim(dim, a.ndim)
        if reduce is not None:
            record(r, _ScatterReduceNotImplemented, (input, src))
        elif isinstance(src, Tensor):
            record(r, ScatterBackward0, (input, src), dim=d, index=index)
        else:
            record(r, ScatterBackward1, (input,), dim=d, index=index)
    return finish(r, out)


class ScatterBackward0(Node):
    def backward(self, grad):
        d, idx = self._saved_dim, self._saved_index
        gs = grad.scatter(d, idx, 0) if self.next_functions[0][0] is not None else None
        gv = grad.gather(d, idx) if self.next_functions[1][0] is not None else None
        return gs, gv


class ScatterBackward1(Node):
    def backward(self, grad):
        return grad.scatter(self._saved_dim, self._saved_index, 0)


class _ScatterReduceNotImplemented(Node):
    def name(self):
        return "ScatterBackward0"

    def backward(self, grad):
        raise NotImplementedError("the derivative for 'scatter' with a 'reduce' argument is "
                                  "not implemented")


def _ufunc_at(ufunc, res, coords, vals):
    if res.dtype == _bool:
        ufunc = xp.logical_or if ufunc is xp.add else xp.logical_and
    c = res.dtype
    work = res.astype(xp.float32) if c.kind == "f" and c.itemsize < 4 or c == _dt.bfloat16.np \
        else res
    ufunc.at(work, coords, vals.astype(work.dtype, copy=False))
    if work is not res:
        res[...] = work.astype(c)


@register()
def scatter_add(input, dim, index, src, *, out=None):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim`` (duplicates accumulate)."""
    if not isinstance(src, Tensor):
        raise TypeError("scatter_add(): argument 'src' must be Tensor")
    a, res, coords, vals = _scatter_prep(input, dim, index, src, "scatter_add")
    _ufunc_at(xp.add, res, coords, vals)
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, src):
        record(r, ScatterAddBackward0, (input, src), dim=wrap_dim(dim, a.ndim), index=index)
    return finish(r, out)


class ScatterAddBackward0(Node):
    def backward(self, grad):
        gv = grad.gather(self._saved_dim, self._saved_index) \
            if self.next_functions[1][0] is not None else None
        return grad, gv


_REDUCE = {"sum": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum,
           "mean": xp.add}


@register()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduce ``src`` into ``input`` at ``index`` ("sum", "prod", "mean", "amax", "amin")."""
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    a, res, coords, vals = _scatter_prep(input, dim, index, src, "scatter_reduce")
    dt = res.dtype
    low = (dt.kind == "f" and dt.itemsize < 4) or dt == _dt.bfloat16.np
    work = res.astype(xp.float32) if low else res.copy()
    v = vals.astype(work.dtype, copy=False)
    ufunc = _REDUCE[reduce]
    if dt == _bool:
        ufunc = {"sum": xp.logical_or, "mean": xp.logical_or, "prod": xp.logical_and,
                 "amax": xp.logical_or, "amin": xp.logical_and}[reduce]
    if not include_self:
        # positions that receive values start from the reduction's identity
        hit = xp.zeros(work.shape, bool)
        hit[coords] = True
        if reduce in ("sum", "mean"):
            ident = 0
        elif reduce == "prod":
            ident = 1
        elif dt.kind == "f" or low:
            ident = -xp.inf if reduce == "amax" else xp.inf
        elif dt == _bool:
            ident = reduce == "amin"
        else:
            info = xp.iinfo(dt)
            ident = info.min if reduce == "amax" else info.max
        work[hit] = ident
    with xp.errstate(all="ignore"):
        ufunc.at(work, coords, v)
        if reduce == "mean":
            count = xp.zeros(work.shape, xp.int64)
            xp.add.at(count, coords, 1)
            if include_self:
                count += 1
            count = xp.maximum(count, 1)
            if dt.kind in "iu":
                work = xp.floor_divide(work, count).astype(dt)
            elif dt != _bool:
                work = (work / count).astype(work.dtype)
    r = wrap(work.astype(dt, copy=False).reshape(a.shape))
    if needs_grad(input, src):
        record(r, ScatterReduceBackward0, (input, src), self=input, src=src, result=r,
               dim=wrap_dim(dim, a.ndim), index=index, reduce=reduce, include_self=include_self)
    return finish(r, out)


class ScatterReduceBackward0(Node):
    """torch's scatter_reduce gradients: sum/mean spread ``grad``; prod divides the product
    by each factor (with care for zeros); amax/amin share ``grad`` evenly among ties."""

    def backward(self, grad):
        d, idx, reduce = self._saved_dim, self._saved_index, self._saved_reduce
        include_self = self._saved_include_self
        self_, src, result = self._saved_self, self._saved_src, self._saved_result
        if reduce == "sum":
            gs, gv = grad, grad.gather(d, idx)
        elif reduce == "mean":
            n = grad.new_ones(grad.shape) if include_self else grad.new_zeros(grad.shape)
            n = n.scatter_add(d, idx, src.new_ones(src.shape).to(grad.dtype))
            n = n.masked_fill(n == 0, 1)
            gs = grad / n
            gv = gs.gather(d, idx)
        elif reduce == "prod":
            masked_self = self_.masked_fill(self_ == 0, 1)
            masked_self_result = masked_self.scatter_reduce(d, idx, src, reduce,
                                                            include_self=include_self)
            gs = grad * masked_self_result / masked_self
            src_zero = src == 0
            zeros = self_.new_zeros(self_.shape)
            src_num_zeros = zeros.scatter_add(d, idx, src_zero.to(self_.dtype)).gather(d, idx)
            src_single_zero = src_zero & (src_num_zeros == 1)
            masked_src = src.masked_fill(src_single_zero, 1)
            masked_src_result = self_.scatter_reduce(d, idx, masked_src, reduce,
                                                     include_self=include_self)
            from .. import where
            gv = where(src_single_zero, (grad * masked_src_result).gather(d, idx),
                       (grad * result).gather(d, idx) / src.masked_fill(src_zero, 1))
        else:  # amax / amin
            value = result.gather(d, idx)
            self_is_result = (self_ == result).to(self_.dtype)
            src_is_result = (src == value).to(self_.dtype)
            n = self_is_result.scatter_add(d, idx, src_is_result)
            distributed = grad / n
            gs = self_is_result * distributed
            gv = src_is_result * distributed.gather(d, idx)
        if not include_self:
            gs = gs.scatter(d, idx, 0)
        return gs, gv


# ----------------------------------------------------------------------------- index_* ops

def _index_prep(input, dim, index):
    a = input._data
    d = wrap_dim(dim, a.ndim)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    return a, d, _as_1d(idx)


def _check_source(a, s, d, idx, name):
    sa, ss = list(_as_1d(a).shape), list(_as_1d(s).shape)
    if len(sa) != len(ss) or any(x != y for i, (x, y) in enumerate(zip(sa, ss)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(a.shape)} "
                           f"source.shape = {list(s.shape)}")
    if ss[d] != idx.size:
        raise RuntimeError(f"{name}: Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim) ({ss[d]})")


def _along(d, idx, ndim):
    key = [slice(None)] * ndim
    key[d] = idx
    return tuple(key)


@register()
def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Add ``alpha * source`` into a copy of ``input`` at ``index`` along ``dim``."""
    a, d, idx = _index_prep(input, dim, index)
    _check_long(index, "index_add_(): Expected dtype int32/int64 for index", allow_int32=True)
    s = source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({_short(a)}) and source ({_short(s)}) must "
                           f"have the same scalar type")
    _check_source(a, s, d, idx, "index_add_()")
    res = _as_1d(a).copy()
    if (alpha != 1 or a.ndim <= 1) and idx.size and (
            int(idx.min()) < 0 or int(idx.max()) >= res.shape[d]):
        # torch's kernels for 1-d self and for alpha != 1 report it so; the others below
        raise IndexError("index out of range in self")
    idx = _bounds(idx, res.shape[d], d)
    s1 = _as_1d(s)
    if alpha != 1:
        s1 = (s1 * alpha).astype(a.dtype)
    _ufunc_at(xp.add, res, _along(d, idx, res.ndim), s1)
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, source):
        record(r, IndexAddBackward0, (input, source), dim=d, index=index, source=source,
               source_dim=source.dim(), alpha=alpha)
    return finish(r, out)


def _source_grad(grad, dim, index, source_shape):
    g = grad.index_select(dim, index) if grad.dim() else grad.reshape(1)
    return g.reshape(source_shape) if tuple(g.shape) != tuple(source_shape) else g


class IndexAddBackward0(Node):
    def backward(self, grad):
        gv = None
        if self.next_functions[1][0] is not None:
            gv = _source_grad(grad, self._saved_dim, self._saved_index,
                              self._saved_source.shape)
            if self._saved_alpha != 1:
                gv = gv * self._saved_alpha
        return grad, gv


@register()
def index_copy(input, dim, index, source, *, out=None):
    """Copy ``source`` into a copy of ``input`` at ``index`` along ``dim``."""
    a, d, idx = _index_prep(input, dim, index)
    _check_long(index, "index_copy_(): Expected a long tensor for index, but got {}")
    s = source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_short(a)} and (source) {_short(s)}")
    _check_source(a, s, d, idx, "index_copy_()")
    res = _as_1d(a).copy()
    idx = _bounds(idx, res.shape[d], d, IndexError, "index_copy_(): ")
    res[_along(d, idx, res.ndim)] = _as_1d(s)
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, source):
        record(r, IndexCopyBackward0, (input, source), dim=d, index=index, source=source,
               source_dim=source.dim())
    return finish(r, out)


class IndexCopyBackward0(Node):
    def backward(self, grad):
        d, idx = self._saved_dim, self._saved_index
        gs = gv = None
        if self.next_functions[0][0] is not None:
            gs = grad.index_fill(d, idx, 0)
        if self.next_functions[1][0] is not None:
            gv = _source_grad(grad, d, idx, self._saved_source.shape)
        return gs, gv


@register()
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``."""
    a, d, idx = _index_prep(input, dim, index)
    _check_long(index, "index_fill_(): Expected dtype int64 for index.", IndexError)
    v = _scalar_value(value, a.dtype, "index_fill_")
    res = _as_1d(a).copy()
    idx = _bounds(idx, res.shape[d], d, IndexError, negative=True)
    res[_along(d, idx, res.ndim)] = v
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, value):
        if isinstance(value, Tensor):
            record(r, IndexFillBackward1, (input, value), dim=d, index=index)
        else:
            record(r, IndexFillBackward0, (input,), dim=d, index=index)
    return r


class IndexFillBackward0(Node):
    def backward(self, grad):
        return grad.index_fill(self._saved_dim, self._saved_index, 0)


class IndexFillBackward1(Node):
    def backward(self, grad):
        d, idx = self._saved_dim, self._saved_index
        gs = grad.index_fill(d, idx, 0) if self.next_functions[0][0] is not None else None
        gv = None
        if self.next_functions[1][0] is not None:
            gv = (grad.index_select(d, idx) if grad.dim() else grad).sum()
        return gs, gv


@register()
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (or added) at the tensor ``indices``."""
    if needs_grad(input, values) and isinstance(indices, (tuple, list)) and all(
            isinstance(i, Tensor) for i in indices):
        base, adv, only_mask, stepped = _basic_tensor(input, tuple(indices))
        if adv and not stepped:
            res = wrap(input._data.copy())
            index_put_(res, indices, values.detach(), accumulate)  # torch's checks, values
            out = _index_put_adv(input, adv, values, accumulate)
            out._data = res._data
            return out
    res = wrap(input._data.copy())
    if isinstance(values, Tensor):
        values = values.detach()
    return index_put_(res, indices, values, accumulate)


@register()
def index_put_(input, indices, values, accumulate=False):
    """``input[indices] = values`` (or ``+=`` when ``accumulate``), in place."""
    if needs_grad(input, values):
        return assign_inplace(input, index_put(input, indices, values, accumulate))
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
    for n, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {n} in argument 1, but got "
                            f"{type(i).__name__}")
    key = tuple(indices)
    view, adv, only_mask, _ = _resolve(input, key)
    v = values._data
    if only_mask and v.size == 1:  # torch dispatches this to masked_fill_, which converts
        v = _scalar_to(_item(v.reshape(())), input._data.dtype)
    elif v.dtype != input._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_short(input._data)} for the destination and {_short(v)} for the "
                           f"source.")
    if not adv:  # only basic (e.g. 0-d index tensors): a plain broadcast write
        if accumulate:
            view += xp.broadcast_to(_strip_leading_ones(v, view.ndim), view.shape)
        else:
            view[...] = _strip_leading_ones(v, view.ndim)
    else:
        _put_advanced(view, adv, v, accumulate)
    input._bump_version()
    return input


# ----------------------------------------------------------------------------- masked ops

def _check_mask(mask, msg):
    if mask._data.dtype != _bool:
        raise RuntimeError(msg.format(_c_name(mask._data)))


_C_NAMES = {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long int", "float32": "float", "float64": "double", "float16": "Half",
            "bfloat16": "BFloat16", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>", "bool": "bool"}


def _c_name(arr):
    return _C_NAMES[_name(arr)]


@register()
def masked_fill(input, mask, value):
    """A copy of ``input`` (broadcast with ``mask``) with ``value`` where ``mask`` is True."""
    _check_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype {}")
    a, m = input._data, mask._data
    v = _scalar_value(value, a.dtype, "masked_fill_")
    try:
        shape = xp.broadcast_shapes(a.shape, m.shape)
    except ValueError:
        from ._common import broadcast_error
        raise broadcast_error(a, m) from None
    r = wrap(xp.where(m, v, a).astype(a.dtype, copy=False).reshape(shape))
    if needs_grad(input, value):
        if isinstance(value, Tensor):
            record(r, MaskedFillBackward1, (input, value), mask=mask)
        else:
            record(r, MaskedFillBackward0, (input,), mask=mask)
    return r


class MaskedFillBackward0(Node):
    def backward(self, grad):
        return grad.masked_fill(self._saved_mask, 0)


class MaskedFillBackward1(Node):
    def backward(self, grad):
        mask = self._saved_mask
        gs = grad.masked_fill(mask, 0) if self.next_functions[0][0] is not None else None
        gv = None
        if self.next_functions[1][0] is not None:
            from .. import where
            gv = where(mask, grad, grad.new_zeros(())).sum()
        return gs, gv


@register()
def masked_fill_(input, mask, value):
    """Set ``input`` to ``value`` where ``mask`` (broadcast to input) is True, in place."""
    _check_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype {}")
    a, m = input._data, mask._data
    v = _scalar_value(value, a.dtype, "masked_fill_")
    try:
        m = xp.broadcast_to(m, a.shape)
    except ValueError:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast "
                           f"shape {list(xp.broadcast_shapes(a.shape, m.shape))}") from None
    if needs_grad(input, value):
        return assign_inplace(input, masked_fill(input, mask, value))
    xp.copyto(a, v, where=m)
    input._bump_version()
    return input


@register()
def masked_select(input, mask, *, out=None):
    """The 1-D tensor of ``input``'s values where ``mask`` is True (both broadcast)."""
    _check_mask(mask, "masked_select: expected BoolTensor for mask")
    a, m = input._data, mask._data
    try:
        a, m = xp.broadcast_arrays(a, m)
    except ValueError:
        from ._common import broadcast_error
        raise broadcast_error(a, m) from None
    r = wrap(a[m])
    if needs_grad(input):
        record(r, MaskedSelectBackward0, (input,), self=input, mask=mask)
    return finish(r, out)


class MaskedSelectBackward0(Node):
    def backward(self, grad):
        mask = self._saved_mask
        shape = xp.broadcast_shapes(self._input_meta[0][0], tuple(mask.shape))
        _ = self._saved_self  # torch keeps self; unpacking checks it was not modified
        return grad.new_zeros(shape).masked_scatter(mask, grad)


def _masked_scatter_into(res, m, s):
    n = int(xp.count_nonzero(m))
    src = s.reshape(-1)
    if src.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    res[m] = src[:n]


@register()
def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) with ``source``'s values, in order, at
    the True positions of ``mask``."""
    _check_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with dtype {}")
    a, m, s = input._data, mask._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_short(a)} and {_short(s)}")
    try:
        a, m = xp.broadcast_arrays(a, m)
    except ValueError:
        from ._common import broadcast_error
        raise broadcast_error(a, m) from None
    res = a.copy()
    _masked_scatter_into(res, m, s)
    r = wrap(res)
    if needs_grad(input, source):
        record(r, MaskedScatterBackward0, (input, source), mask=mask,
               source_sym_sizes=source.shape)
    return r


class MaskedScatterBackward0(Node):
    def backward(self, grad):
        mask = self._saved_mask
        gs = grad.masked_fill(mask, 0) if self.next_functions[0][0] is not None else None
        gv = None
        if self.next_functions[1][0] is not None:
            shape = self._saved_source_sym_sizes
            n = 1
            for k in shape:
                n *= k
            sel = grad.masked_select(mask)
            if sel.numel() < n:
                from .rearrange import cat
                sel = cat([sel, grad.new_zeros(n - sel.numel())])
            gv = sel.reshape(shape)
        return gs, gv


@register()
def masked_scatter_(input, mask, source):
    """In-place :func:`masked_scatter`; ``mask`` broadcasts to ``input``."""
    if needs_grad(input, source):
        m = mask._data
        if m.ndim <= input._data.ndim and xp.broadcast_shapes(m.shape, input._data.shape) == \
                input._data.shape:
            return assign_inplace(input, masked_scatter(input, mask, source))
    _check_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with dtype {}")
    a, m, s = input._data, mask._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"masked_scatter_: expected self and source to have same dtypes but "
                           f"got{_short(a)} and {_short(s)}")
    try:
        m = xp.broadcast_to(m, a.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({a.shape[-1] if a.ndim else 1}) must match "
                           f"the size of tensor b ({m.shape[-1]}) at non-singleton dimension "
                           f"{a.ndim - 1}") from None
    _masked_scatter_into(a, m, s)
    input._bump_version()
    return input


# ----------------------------------------------------------------------------- put

@register()
def put_(input, index, source, accumulate=False):
    """Write ``source`` into the flattened ``input`` at ``index``, in place."""
    if needs_grad(input, source):
        return assign_inplace(input, put(input, index, source, accumulate))
    _check_long(index, "put_(): Expected a long tensor for index, but got {}")
    a, idx, s = input._data, index._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_short(a)} and source.dtype = {_short(s)}")
    if s.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {s.size}, index.numel() = "
                         f"{idx.size}")
    n = a.size
    i = idx.reshape(-1)
    if i.size:
        lo, hi = int(i.min()), int(i.max())
        bad = lo if lo < -n else (hi if hi >= n else None)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             f"elements.")
    flat = a.reshape(-1) if a.flags.c_contiguous else a.copy().reshape(-1)
    if accumulate:
        _ufunc_at(xp.add, flat, (i,), s.reshape(-1))
    else:
        flat[i] = s.reshape(-1)
    if not a.flags.c_contiguous:
        a[...] = flat.reshape(a.shape)
    input._bump_version()
    return input


@register()
def put(input, index, source, accumulate=False):
    """Out-of-place :func:`Tensor.put_`."""
    r = put_(wrap(input._data.copy()), index, source.detach(), accumulate)
    if needs_grad(input, source):
        record(r, PutBackward0, (input, source), index=index, source=source,
               accumulate=accumulate)
    return r


class PutBackward0(Node):
    def backward(self, grad):
        idx = self._saved_index
        gs = gv = None
        if self.next_functions[0][0] is not None:
            gs = grad if self._saved_accumulate else \
                grad.put(idx, grad.new_zeros(self._saved_source.shape), False)
        if self.next_functions[1][0] is not None:
            gv = grad.take(idx).reshape(self._saved_source.shape)
        return gs, gv


# in-place forms of the copy-returning ops above: same checks, result written into self
for _fn in (scatter, scatter_add, scatter_reduce, index_add, index_copy, index_fill):
    register_inplace(_fn)


# ----------------------------------------------------------------------------- nonzero, search

@register()
def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim
    when ``as_tuple``."""
    a = input._data
    if as_tuple:
        if a.ndim == 0:
            return (wrap(xp.nonzero(a.reshape(1))[0].astype(_int64)),)
        return tuple(wrap(i.astype(_int64, copy=False)) for i in xp.nonzero(a))
    if a.ndim == 0:
        r = xp.zeros((1 if a else 0, 0), _int64)
    else:
        r = _contig(xp.argwhere(a).astype(_int64, copy=False))
    return finish(wrap(r), out)


@register()
def argwhere(input):
    """Same as ``nonzero(input)``: an (n, ndim) tensor of indices."""
    return nonzero(input)


def _search(boundaries, values, right, out_int32, sorter, name):
    """Per-row searchsorted; boundaries is 1-D or matches values' leading dims."""
    b = boundaries._data
    scalar = not isinstance(values, Tensor)
    if scalar:
        v = xp.asarray(values)
    else:
        v = values._data
    vt = _dt.scalar_dtype(values) if scalar else _by_np[v.dtype]
    bt = _dt.promote_types(_by_np[b.dtype], vt)
    if (bt.is_complex or bt is _dt.bool_) and v.size:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'{_short(b)}\'')
    if sorter is not None:
        sorter_a = sorter._data
        if sorter_a.dtype != _int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype, "
                               "but got dtype " + str(_by_np[sorter_a.dtype]))
        if sorter_a.shape != b.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(b.shape)}and got sorter "
                               f"tensor {list(sorter_a.shape)}")
        if sorter_a.size and (int(sorter_a.min()) < 0 or int(sorter_a.max()) >= b.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        b = xp.take_along_axis(b, sorter_a, -1)
    side = "right" if right else "left"
    odt = _int32 if out_int32 else _int64
    # compare in the promoted dtype (float16/bfloat16 values are exact in float32)
    cd = xp.dtype(xp.float32) if bt in (_dt.float16, _dt.bfloat16) else bt.np
    bc, vc = b.astype(cd, copy=False), v.astype(cd, copy=False)
    if b.ndim <= 1:
        r = xp.searchsorted(bc.reshape(-1), vc, side=side)
        return r.astype(odt)
    if b.shape[:-1] != v.shape[:-1] or v.ndim != b.ndim:
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(b.shape)} "
                           f"and input value tensor {list(v.shape)}")
    bf = bc.reshape(-1, b.shape[-1])
    vf = vc.reshape(-1, v.shape[-1])
    r = xp.empty(vf.shape, odt)
    for row in range(bf.shape[0]):
        r[row] = xp.searchsorted(bf[row], vf[row], side=side)
    return r.reshape(v.shape)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Insertion points of ``input`` in ``sorted_sequence`` (searched along its last dim)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    r = _search(sorted_sequence, input, right, out_int32, sorter, "searchsorted")
    return finish(wrap(r), out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Bucket index of each ``input`` value given sorted 1-D ``boundaries``."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries._data.ndim})")
    r = _search(boundaries, input, right, out_int32, None, "bucketize")
    return finish(wrap(r), out)


def unravel_index(indices, shape):
    """Coordinates, one int64 tensor per dim of ``shape``, of flat (row-major) ``indices``;
    out-of-range and negative indices wrap around (floor modulo), as in torch."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    a = indices._data
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    rest = a.astype(_int64)
    coords = []
    for s in reversed(shape):
        coords.append(xp.mod(rest, s) if s else xp.zeros_like(rest))
        rest = xp.floor_divide(rest, s) if s else rest
    return tuple(wrap(c) for c in reversed(coords))


__all__ += ["unravel_index"]


# ----------------------------------------------------------------------------- index_reduce

_INDEX_REDUCTIONS = {"prod": xp.multiply, "mean": xp.add, "amax": xp.maximum, "amin": xp.minimum}


def _reduce_identity(reduce, dtype):
    if reduce == "prod":
        return 1
    if reduce == "mean":
        return 0
    if _by_np[dtype]._category < 2:
        info = xp.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -xp.inf if reduce == "amax" else xp.inf


@register()
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """A copy of ``input`` whose slices at ``index`` along ``dim`` are reduced (``prod``,
    ``mean``, ``amax`` or ``amin``) with the matching slices of ``source``, and with their own
    value unless ``include_self`` is False."""
    _warn_beta()
    return _index_reduce(input, dim, index, source, reduce, include_self, out)


def _index_reduce(input, dim, index, source, reduce, include_self=True, out=None):
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    a, d, idx = _index_prep(input, dim, index)
    _check_long(index, "index_reduce_(): Expected dtype int32/int64 for index but got: {}",
                allow_int32=True)
    s = source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_short(a)}) and source ({_short(s)}) must "
                           f"have the same scalar type")
    s1 = _as_1d(s)
    if idx.size != s1.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({s1.shape[d]}), for dim: {d}")
    _check_source(a, s, d, idx, "index_reduce_()")
    res = _as_1d(a).copy()
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= res.shape[d]):
        raise IndexError("index out of range in self")
    key = _along(d, idx, res.ndim)
    if not include_self:
        res[key] = _reduce_identity(reduce, res.dtype)
    _ufunc_at(_INDEX_REDUCTIONS[reduce], res, key, s1)
    if reduce == "mean":
        counts = xp.ones(res.shape[d], dtype=xp.int64)
        if not include_self:
            counts[idx] = 0
        xp.add.at(counts, idx, 1)
        shape = [1] * res.ndim
        shape[d] = -1
        counts = xp.maximum(counts, 1).reshape(shape)
        floating = _by_np[res.dtype]._category >= 2
        res = (res / counts if floating else res // counts).astype(res.dtype)
    r = wrap(res.reshape(a.shape))
    if needs_grad(input, source):
        record(r, IndexReduceBackward0, (input, source), self=input, dim=d, index=index,
               source=source, reduce=reduce, include_self=include_self, result=r)
    return finish(r, out)


def _warn_beta():
    from .._core.warn import warn_user
    warn_user("index_reduce() is in beta and the API may change at any time.")


class IndexReduceBackward0(Node):
    """Each contributor to a slot (the slot's own value when ``include_self``, and every
    source slice sent there) gets the slot's gradient times d(result)/d(contributor)."""

    def backward(self, grad):
        x, src, r = self._saved_self, self._saved_source, self._saved_result
        d, idx, reduce = self._saved_dim, self._saved_index, self._saved_reduce
        hit = x.new_zeros(x.shape).index_fill(d, idx, 1) != 0  # slots some source reaches
        # where self's own value takes part: everywhere, or only the slots no source reaches
        own = hit.new_ones(hit.shape) if self._saved_include_self else ~hit
        if reduce == "mean":
            n = own.to(grad.dtype).index_add(d, idx, src.new_ones(src.shape))
            g = grad / n
            return g * own, g.index_select(d, idx)
        if reduce == "prod":
            return self._prod_grads(grad, x, src, own)
        # amax / amin: the gradient is shared evenly among the values equal to the result;
        # as in torch, a slot's own value counts as a tie even where it does not take part
        self_tie, src_tie = x == r, src == r.index_select(d, idx)
        n = self_tie.to(grad.dtype).index_add(d, idx, src_tie.to(grad.dtype))
        g = grad / n.masked_fill(n == 0, 1)
        return (g * self_tie).masked_fill(~own, 0), g.index_select(d, idx) * src_tie

    def _prod_grads(self, grad, x, src, own):
        # d(result)/d(contributor) is the product of the slot's other contributors, built
        # from products recomputed with this op so that double backward sees every factor:
        # result / c for a non-zero c, the product with c set to one for a slot's only zero
        # source, and 0 where two or more zero sources share a slot
        d, idx, inc = self._saved_dim, self._saved_index, self._saved_include_self
        from .pointwise import where
        gx = grad * _index_reduce(x.new_ones(x.shape), d, idx, src, "prod")
        sz = src == 0
        zeros = x.new_zeros(x.shape).index_add(d, idx, sz.to(grad.dtype))
        only = sz & (zeros.index_select(d, idx) == 1)
        at = _index_reduce(x, d, idx, src, "prod", inc).index_select(d, idx)
        at_only = _index_reduce(x, d, idx, src.masked_fill(only, 1), "prod",
                                inc).index_select(d, idx)
        others = where(sz, where(only, at_only, 0), at / src.masked_fill(sz, 1))
        return gx.masked_fill(~own, 0), grad.index_select(d, idx) * others


register_inplace(index_reduce)
__all__ += ["index_reduce"]
