"""Indexing: ``t[...]`` and ``t[...] = v``, and the gather/scatter family of operators.

Indexing follows torch's two stages: ints, slices, ``None`` and ``...`` are applied
first as a NumPy basic index (a real view, with torch's strides), then tensor/list
indices ("advanced" indices) pick elements out of that view (a copy). Applying ints
in the first stage is what makes ``x[0, :, [1, 2]]`` keep the slice dim first, as
torch does (NumPy alone would move the advanced dim to the front).
"""

from __future__ import annotations

import warnings

from .._core import dtype as _dt
from .._tensor import _strided_array
from ._common import Tensor, finish, register, register_inplace, view_of, wrap, wrap_dim, xp

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
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
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
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=3)
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
    return view, adv, only_mask


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
        return view_of(self, a[index, ...])
    view, adv, _ = _resolve(self, index)
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
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=3)
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
    view, adv, only_mask = _resolve(self, index)
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
        return finish(wrap(a.copy()), out)
    size = a.shape[d]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError("index out of range in self")
    return finish(wrap(_contig(xp.take(a, idx, axis=d))), out)


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
        return finish(wrap(xp.empty(idx.shape, a.dtype)), out)
    a1, i1 = _as_1d(a), _as_1d(idx)
    i1 = _bounds(i1, a1.shape[d], d)
    r = a1[_grid(i1, d)]
    return finish(wrap(_contig(r.reshape(idx.shape))), out)


@register()
def take_along_dim(input, indices, dim=None, *, out=None):
    """Pick values along ``dim`` (the flattened input when None) at ``indices``."""
    _check_long(indices, "torch.take_along_dim(): dtype of indices should be Long but got {}")
    a, idx = input._data, indices._data
    if dim is None:
        flat = a.reshape(-1)
        i = _bounds(idx.reshape(-1), flat.size, 0)
        return finish(wrap(flat[i]), out)
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
    return finish(wrap(_contig(xp.take_along_axis(aa, ii, d))), out)


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
    return finish(wrap(flat[idx] if idx.ndim else flat[idx.reshape(1)].reshape(())), out)


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
    return finish(wrap(res.reshape(a.shape)), out)


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
    return finish(wrap(res.reshape(a.shape)), out)


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
    return finish(wrap(work.astype(dt, copy=False).reshape(a.shape)), out)


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
    if alpha != 1 and idx.size and (int(idx.min()) < 0 or int(idx.max()) >= res.shape[d]):
        raise IndexError("index out of range in self")  # torch's alpha path reports this
    idx = _bounds(idx, res.shape[d], d)
    s1 = _as_1d(s)
    if alpha != 1:
        s1 = (s1 * alpha).astype(a.dtype)
    _ufunc_at(xp.add, res, _along(d, idx, res.ndim), s1)
    return finish(wrap(res.reshape(a.shape)), out)


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
    return finish(wrap(res.reshape(a.shape)), out)


@register()
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``."""
    a, d, idx = _index_prep(input, dim, index)
    _check_long(index, "index_fill_(): Expected dtype int64 for index.", IndexError)
    v = _scalar_value(value, a.dtype, "index_fill_")
    res = _as_1d(a).copy()
    idx = _bounds(idx, res.shape[d], d, IndexError, negative=True)
    res[_along(d, idx, res.ndim)] = v
    return wrap(res.reshape(a.shape))


@register()
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (or added) at the tensor ``indices``."""
    res = wrap(input._data.copy())
    return index_put_(res, indices, values, accumulate)


@register()
def index_put_(input, indices, values, accumulate=False):
    """``input[indices] = values`` (or ``+=`` when ``accumulate``), in place."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
    for n, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {n} in argument 1, but got "
                            f"{type(i).__name__}")
    key = tuple(indices)
    view, adv, only_mask = _resolve(input, key)
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
    return wrap(xp.where(m, v, a).astype(a.dtype, copy=False).reshape(shape))


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
    return finish(wrap(a[m]), out)


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
    return wrap(res)


@register()
def masked_scatter_(input, mask, source):
    """In-place :func:`masked_scatter`; ``mask`` broadcasts to ``input``."""
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
    return put_(wrap(input._data.copy()), index, source, accumulate)


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
