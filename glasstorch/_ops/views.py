"""View operators: results share storage with their input and report torch's strides.

NumPy's own views are used where they agree with torch's (slicing, transpose,
squeeze); elsewhere the torch strides are computed here and the view is
built directly over the storage.
"""

from __future__ import annotations

import math

from .. import debug as _debug
from .._core.storage import flat_bytes, root_array
from .._tensor import (
    _contiguous_strides,
    _strided_array,
    channels_last,
    channels_last_3d,
    contiguous_format,
    preserve_format,
)
from ..autograd.engine import sum_to
from ..autograd.grad_mode import is_grad_enabled
from ._common import (
    _SHORT,
    Node,
    Tensor,
    needs_grad,
    record,
    register,
    sizes_or_keyword,
    view_of,
    wrap,
    wrap_dim,
    xp,
)

__all__ = ["view_as", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "t",
           "transpose", "swapaxes", "swapdims", "permute", "narrow", "select", "diagonal",
           "as_strided", "split", "chunk", "unbind", "movedim", "moveaxis", "broadcast_to",
           "tensor_split", "hsplit", "vsplit", "dsplit", "view_as_real", "view_as_complex",
           "real", "imag", "adjoint"]


def _strided_view(input, shape, strides, offset=None, dtype=None):
    if offset is None:
        offset = input.storage_offset()
    return view_of(input, _strided_array(input._data, shape, strides, offset, dtype))


def _infer_size(shape, numel):
    """Resolve one -1 in ``shape`` against ``numel``, with torch's errors."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{list(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = list(shape)
        shape[neg[0]] = numel // known
        return tuple(shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _view_strides(oldshape, oldstride, newshape):
    """Strides that let ``newshape`` view memory laid out as (oldshape, oldstride), or None."""
    numel = 1
    for s in oldshape:
        numel *= s
    if numel <= 1 or not oldshape:
        return _contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        # a chunk of dims ends where the memory stops being contiguous
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def _view_shape(input, shape):
    """The view of ``input`` with ``shape``, or None when the strides forbid it."""
    a = input._data
    shape = _infer_size(shape, a.size)
    if a.flags.c_contiguous:
        return view_of(input, a.reshape(shape))
    strides = _view_strides(a.shape, input.stride(), shape)
    if strides is None:
        return None
    return _strided_view(input, shape, strides)


@register()
def view(input, *shape, size=None, dtype=None):
    """A view with a new shape (one dim may be -1); errors if the strides do not allow it.

    ``view(dtype)`` reinterprets the bytes as another dtype instead.
    """
    from .._core.dtype import dtype as _dtype_cls
    if dtype is not None and not shape and size is None:
        shape = (dtype,)
    if len(shape) == 1 and isinstance(shape[0], _dtype_cls):
        return _view_dtype(input, shape[0])
    out = _view_shape(input, sizes_or_keyword(shape, size, "view"))
    if out is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    if input._requires_grad and needs_grad(input):
        record(out, ViewBackward0, (input,), self_sym_sizes=input.shape)
    return out


class ViewBackward0(Node):
    def backward(self, grad):
        return grad.reshape(self._saved_self_sym_sizes)


class UnsafeViewBackward0(ViewBackward0):
    pass


def _view_dtype(input, dtype):
    a = input._data
    if dtype.itemsize != a.itemsize:
        names = (_SHORT.get(input.dtype, str(input.dtype)), _SHORT.get(dtype, str(dtype)))
        what = f"to view {names[0]} as {names[1]} (different element sizes)"
        if not a.ndim:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if input.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{input.stride(-1)}")
        if dtype.itemsize > a.itemsize:
            ratio = dtype.itemsize // a.itemsize
            if a.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but "
                                   f"got {a.shape[-1]}")
            if input.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} "
                                   f"{what}, but got {input.storage_offset()}")
            for k, st in enumerate(input.stride()[:-1]):
                if st % ratio:
                    raise RuntimeError(f"self.stride({k}) must be divisible by {ratio} {what}, "
                                       f"but got {st}")
    return view_of(input, a.view(dtype.np))


@register()
def view_as(input, other):
    """``input.view(other.shape)``: a view with ``other``'s shape."""
    return view(input, other.shape)


@register()
def reshape(input, *shapes, shape=None):
    """A view when the strides allow one, otherwise a contiguous copy."""
    shape = sizes_or_keyword(shapes, shape, "reshape", "shape")
    out = _view_shape(input, shape)
    if out is None:  # like torch: a contiguous clone, then a view of it that owns its storage
        if _debug._on:
            _debug._impl().implicit_copy(input)
        if needs_grad(input):
            from .copying import clone
            input = clone(input)
        out = wrap(input._data.reshape(_infer_size(shape, input._data.size)))
        if needs_grad(input):
            record(out, UnsafeViewBackward0, (input,), self_sym_sizes=input.shape)
    elif needs_grad(input):
        node = ViewBackward0 if input._data.flags.c_contiguous else ReshapeAliasBackward0
        record(out, node, (input,), self_sym_sizes=input.shape)
    return out


class ReshapeAliasBackward0(ViewBackward0):
    pass


@register()
def reshape_as(input, other):
    """``input.reshape(other.shape)``: a view when possible, else a copy."""
    return reshape(input, other.shape)


@register()
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible)."""
    a = input._data
    if a.ndim == 0:
        return reshape(input, 1)
    s, e = wrap_dim(start_dim, a.ndim), wrap_dim(end_dim, a.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for d in a.shape[s:e + 1]:
        n *= d
    return reshape(input, a.shape[:s] + (n,) + a.shape[e + 1:])


@register()
def unflatten(input, dim, sizes):
    """Split ``dim`` into ``sizes`` (one may be -1)."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    sizes = _infer_size(tuple(sizes), a.shape[d]) if sizes else ()
    return view(input, a.shape[:d] + tuple(sizes) + a.shape[d + 1:])


@register()
def squeeze(input, *dims, dim=None):
    """Drop size-1 dims (all of them, or those in ``dim``; the method also takes them as
    varargs, ``x.squeeze(0, 1)``)."""
    if dims:
        if dim is not None:
            raise TypeError("squeeze() got multiple values for argument 'dim'")
        dim = dims[0] if len(dims) == 1 else dims
    a = input._data
    if dim is None:
        out, node = view_of(input, a.squeeze()), SqueezeBackward0
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(d for d in {wrap_dim(d, a.ndim) for d in dims}
                     if a.ndim and a.shape[d] == 1)
        out = view_of(input, a.squeeze(axes) if axes else a.view())
        node = SqueezeBackward2 if isinstance(dim, (tuple, list)) else SqueezeBackward1
    if needs_grad(input):
        record(out, node, (input,), self_sym_sizes=input.shape,
               **({} if dim is None else {"dim": dim}))
    return out


class SqueezeBackward0(ViewBackward0):
    pass


class SqueezeBackward1(ViewBackward0):
    pass


class SqueezeBackward2(ViewBackward0):
    pass


@register()
def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    a = input._data
    d = wrap_dim(dim, a.ndim + 1)
    shape = list(a.shape)
    strides = list(input.stride())
    new_stride = shape[d] * strides[d] if d < a.ndim else 1
    shape.insert(d, 1)
    strides.insert(d, new_stride)
    out = _strided_view(input, shape, strides)
    if needs_grad(input):
        record(out, UnsqueezeBackward0, (input,), dim=d)
    return out


class UnsqueezeBackward0(Node):
    def backward(self, grad):
        return grad.squeeze(self._saved_dim)


@register()
def t(input):
    """Transpose a tensor of at most 2 dims."""
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    out = view_of(input, a.T)
    if needs_grad(input):
        record(out, TBackward0, (input,))
    return out


class TBackward0(Node):
    def backward(self, grad):
        return grad.t()


@register("swapdims")
def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    a = input._data
    d0, d1 = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
    out = view_of(input, a.swapaxes(d0, d1))
    if needs_grad(input):
        record(out, TransposeBackward0, (input,), dim0=dim0, dim1=dim1)
    return out


class TransposeBackward0(Node):
    def backward(self, grad):
        return grad.transpose(self._saved_dim0, self._saved_dim1)


swapdims = transpose


@register()
def swapaxes(input, axis0, axis1):
    """Swap two dims (a view): :func:`transpose` under NumPy's parameter names."""
    return transpose(input, axis0, axis1)


@register()
def adjoint(input):
    """The conjugate transpose of the last two dimensions, as a view."""
    return transpose(input, -2, -1).conj()


@register()
def permute(input, *order, dims=None):
    """Reorder dims (a view)."""
    a = input._data
    dims = sizes_or_keyword(order, dims, "permute", "dims")
    if len(dims) != a.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    axes = tuple(wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permuted(input, axes, dims)


def _permuted(input, axes, dims):
    out = view_of(input, input._data.transpose(axes))
    if needs_grad(input):
        record(out, PermuteBackward0, (input,), dims=tuple(dims))
    return out


class PermuteBackward0(Node):
    def backward(self, grad):
        dims = self._saved_dims
        n = len(dims)
        inverse = [0] * n
        for i, d in enumerate(dims):
            inverse[d % n if n else 0] = i
        return grad.permute(inverse)


@register()
def expand(input, *sizes, size=None, implicit=False):
    """Broadcast to ``sizes`` without copying (-1 keeps a dim); expanded dims get stride 0.
    (``implicit`` only marks the expand for torch's JIT tracer; eager results ignore it.)"""
    a = input._data
    sizes = sizes_or_keyword(sizes, size, "expand")
    if len(sizes) < a.ndim:
        raise RuntimeError(f"expand({input.type()}{{{list(a.shape)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({a.ndim})")
    lead = len(sizes) - a.ndim
    old_strides = input.stride()
    shape, strides = [], []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            shape.append(s)
            strides.append(0)
            continue
        old = a.shape[i - lead]
        if s == -1 or s == old:
            shape.append(old)
            strides.append(old_strides[i - lead])
        elif old == 1:
            shape.append(s)
            strides.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({old}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(a.shape)}")
    out = _strided_view(input, shape, strides)
    if needs_grad(input):
        record(out, ExpandBackward0, (input,), self_sym_sizes=input.shape)
    return out


class ExpandBackward0(Node):
    def backward(self, grad):
        return sum_to(grad, self._saved_self_sym_sizes)


@register()
def expand_as(input, other):
    """``input.expand(other.shape)``: a broadcast view with ``other``'s shape (no copy)."""
    return expand(input, other.shape)


def broadcast_to(input, *sizes, size=None):
    """``input.expand(size)``: a broadcast view (stride 0 along expanded dims; no copy); the
    method also takes the sizes as varargs (``x.broadcast_to(2, 3)``)."""
    return expand(input, *sizes, size=size)


Tensor.broadcast_to = broadcast_to


@register()
def narrow(input, dim, start, length):
    """The slice ``start:start+length`` along ``dim`` (a view)."""
    out = _narrow(input, dim, start, length)
    if needs_grad(input):
        d = wrap_dim(dim, input._data.ndim)
        begin = out.storage_offset() - input.storage_offset()
        begin = begin // input.stride(d) if input.stride(d) and out.numel() else int(start) % max(
            input._data.shape[d], 1)
        record(out, SliceBackward0, (input,), self_sym_sizes=input.shape, dim=d, start=begin,
               end=begin + length, step=1)
    return out


class SliceBackward0(Node):
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        index = (slice(None),) * self._saved_dim + (
            slice(self._saved_start, self._saved_end, self._saved_step),)
        full[index] = grad
        return full


def _narrow(input, dim, start, length):
    a = input._data
    d = wrap_dim(dim, a.ndim)
    start = int(start)
    if start < 0:
        start += a.shape[d]
    if not 0 <= start <= a.shape[d] or length < 0 or start + length > a.shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({a.shape[d]}).")
    if length == 0:  # numpy leaves an empty slice's pointer at the start; torch advances it
        strides = input.stride()
        shape = a.shape[:d] + (0,) + a.shape[d + 1:]
        return _strided_view(input, shape, strides, input.storage_offset() + start * strides[d])
    index = (slice(None),) * d + (slice(start, start + length),)
    return view_of(input, a[index])


@register()
def select(input, dim, index):
    """Index ``index`` along ``dim``, removing that dim (a view)."""
    out = _select(input, dim, index)
    if needs_grad(input):
        record(out, SelectBackward0, (input,), self_sym_sizes=input.shape,
               dim=wrap_dim(dim, input._data.ndim), index=index)
    return out


class SelectBackward0(Node):
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        full.select(self._saved_dim, self._saved_index).copy_(grad)
        return full


def _select(input, dim, index):
    a = input._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    size = a.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {d}")
    # the trailing Ellipsis keeps a 0-d result a view (NumPy gives a scalar copy otherwise)
    return view_of(input, a[(slice(None),) * d + (index, Ellipsis)])


@register()
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over ``dim1``/``dim2`` as a view, moved to the last dim."""
    a = input._data
    d1, d2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    strides = input.stride()
    base = input.storage_offset()
    if offset >= 0:
        n = max(0, min(a.shape[d1], a.shape[d2] - offset))
        base += offset * strides[d2] if n else 0
    else:
        n = max(0, min(a.shape[d1] + offset, a.shape[d2]))
        base -= offset * strides[d1] if n else 0
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = [a.shape[i] for i in keep] + [n]
    new_strides = [strides[i] for i in keep] + [strides[d1] + strides[d2]]
    out = _strided_view(input, shape, new_strides, base)
    if needs_grad(input):
        record(out, DiagonalBackward0, (input,), self_sym_sizes=input.shape, offset=offset,
               dim1=d1, dim2=d2)
    return out


class DiagonalBackward0(Node):
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        full.diagonal(self._saved_offset, self._saved_dim1, self._saved_dim2).copy_(grad)
        return full


@register()
def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit size, stride and storage offset (in elements)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = input.storage_offset() if storage_offset is None else storage_offset
    out = _strided_view(input, size, stride, offset)
    if needs_grad(input):
        record(out, AsStridedBackward0, (input,), size=size, stride=stride,
               storage_offset=offset, input_geometry=_geometry(input))
    return out


def _geometry(t):
    return (tuple(t._data.shape), t.stride(), t.storage_offset())


def _scatter_add_through(geometry, view_fn, grad):
    """Gradient of a (possibly overlapping) strided view: add ``grad`` back at the storage
    positions the view read. ``view_fn`` maps the input's storage-position tensor to the view."""
    shape, stride, offset = geometry
    extent = _extent(geometry)
    storage = wrap(xp.arange(extent, dtype=xp.int64))
    positions = view_fn(storage.as_strided(shape, stride, offset))
    flat = xp.zeros(max(extent, 1), dtype=grad._data.dtype)
    xp.add.at(flat, positions._data.reshape(-1), grad.detach()._data.reshape(-1))
    base = wrap(flat)
    return base.as_strided(shape, stride, offset).clone()


def _extent(geometry):
    shape, stride, offset = geometry
    return offset + 1 + sum((n - 1) * st for n, st in zip(shape, stride)) if all(shape) else 0


class AsStridedBackward0(Node):
    def backward(self, grad):
        size, stride, off = self._saved_size, self._saved_stride, self._saved_storage_offset
        geometry = self._saved_input_geometry
        result = _scatter_add_through(geometry, lambda pos: pos.as_strided(size, stride, off),
                                      grad)
        if needs_grad(grad):
            # linear in grad; its adjoint gathers, for each view element, the input element
            # stored where that view element reads (-1 where no input element is)
            shape, in_stride, in_off = geometry
            extent = _extent(geometry)
            storage = xp.arange(extent, dtype=xp.int64)
            inp_pos = wrap(storage).as_strided(shape, in_stride, in_off)._data.reshape(-1)
            owner = xp.full(max(extent, 1), -1, dtype=xp.int64)
            owner[inp_pos] = xp.arange(inp_pos.size, dtype=xp.int64)
            view_pos = wrap(storage).as_strided(size, stride, off)._data
            record(result, AsStridedBackwardBackward0, (grad,), index=owner[view_pos])
        return result


class AsStridedBackwardBackward0(Node):
    def backward(self, h):
        index = self._saved_index
        valid = index >= 0
        picked = h.reshape(-1)[wrap(xp.where(valid, index, 0))]
        return picked if valid.all() else picked * wrap(valid.astype(h._data.dtype))


@register()
def unfold(input, dimension, size, step):
    """All windows of ``size`` along ``dimension`` every ``step``, as a new last dim."""
    a = input._data
    d = wrap_dim(dimension, a.ndim) if a.ndim else 0
    length = a.shape[d] if a.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    strides = list(input.stride())
    shape = list(a.shape)
    if a.ndim == 0:
        return _strided_view(input, [size], [1])
    shape[d] = (length - size) // step + 1
    last = strides[d]
    strides[d] = last * step
    out = _strided_view(input, shape + [size], strides + [last])
    if needs_grad(input):
        record(out, UnfoldBackward0, (input,), self_sym_sizes=input.shape, dimension=d,
               size=size, step=step, input_geometry=_geometry(input))
    return out


class UnfoldBackward0(Node):
    def backward(self, grad):
        d, size, step = self._saved_dimension, self._saved_size, self._saved_step
        result = _scatter_add_through(self._saved_input_geometry,
                                      lambda pos: pos.unfold(d, size, step), grad)
        if needs_grad(grad):
            # linear in grad; its adjoint is the unfold itself
            record(result, UnfoldBackwardBackward0, (grad,), dimension=d, size=size, step=step)
        return result


class UnfoldBackwardBackward0(Node):
    def backward(self, h):
        return h.unfold(self._saved_dimension, self._saved_size, self._saved_step)


@register()
def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """Pieces of ``split_size`` (the last may be smaller) or of the given section sizes.
    (``split_size`` is the name the Tensor method gives the first argument.)"""
    if split_size is not None:
        if split_size_or_sections is not None:
            raise TypeError("split() got multiple values for argument 'split_size'")
        split_size_or_sections = split_size
    elif split_size_or_sections is None:
        raise TypeError("split() missing 1 required positional argument: 'split_size'")
    a = tensor._data
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(_narrow(tensor, d, start, s))
        start += s
    out = tuple(out)
    if needs_grad(tensor):
        if isinstance(split_size_or_sections, int):
            record(out, SplitBackward0, (tensor,), self_sym_sizes=tensor.shape, dim=d,
                   split_size=split_size_or_sections)
        else:
            record(out, SplitWithSizesBackward0, (tensor,), self_sym_sizes=tensor.shape, dim=d,
                   split_sizes=tuple(sizes))
    return out


class SplitBackward0(Node):
    def backward(self, *grads):
        from .rearrange import cat
        return cat(grads, self._saved_dim)


class SplitWithSizesBackward0(SplitBackward0):
    pass


@register()
def split_with_sizes(input, split_sizes, dim=0):
    """Views of consecutive pieces along ``dim`` with the given sizes (which must sum to its
    length)."""
    return split(input, list(split_sizes), dim)


@register()
def chunk(input, chunks, dim=0):
    """Up to ``chunks`` pieces of equal size ceil(n / chunks)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    a = input._data
    n = a.shape[wrap_dim(dim, a.ndim)]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return tuple(narrow(input, dim, 0, 0) for _ in range(chunks if n == 0 else 1))
    return split(input, size, dim)


def _sections_arg(name, **given):
    """The one of torch's split arguments (``sections``, ``indices``, ...) that was given."""
    given = {k: v for k, v in given.items() if v is not None}
    if len(given) != 1:
        raise TypeError(f"{name}() expects exactly one of the arguments "
                        f"{', '.join(repr(k) for k in given) or repr('sections')}, got "
                        f"{len(given)}")
    return next(iter(given.values()))


@register()
def tensor_split(input, sections=None, dim=0, *, indices=None, tensor_indices_or_sections=None):
    """Split into ``sections`` nearly-equal parts or at the given ``indices`` (numpy style);
    the second argument, given positionally, may be either (as in torch)."""
    indices_or_sections = _sections_arg("tensor_split", sections=sections, indices=indices,
                                        tensor_indices_or_sections=tensor_indices_or_sections)
    a = input._data
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    return tuple(narrow(input, d, lo, max(hi, lo) - lo)
                 for lo, hi in zip(bounds[:-1], bounds[1:]))


def _split_along(name, dim, min_dim):
    def fn(input, *args, sections=None, indices=None):
        # the method also takes the indices as varargs: x.hsplit(1, 2)
        if args and sections is not None:
            raise TypeError(f"{name}() got multiple values for argument 'sections'")
        if args:
            sections = args[0] if len(args) == 1 else list(args)
        indices_or_sections = _sections_arg(name, sections=sections, indices=indices)
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with {input.dim()} dimensions!")
        d = 0 if (name == "hsplit" and input.dim() == 1) else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``tensor_split`` along dimension {dim}"
                  f"{' (0 for a 1-d input)' if name == 'hsplit' else ''}, as NumPy's {name}; "
                  "the pieces are views.")
    setattr(Tensor, name, fn)
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


@register()
def unbind(input, dim=0):
    """All slices along ``dim`` as a tuple of views."""
    a = input._data
    d = wrap_dim(dim, a.ndim)
    out = tuple(_select(input, d, i) for i in range(a.shape[d]))
    if needs_grad(input) and out:
        record(out, UnbindBackward0, (input,), dim=d)
    return out


class UnbindBackward0(Node):
    def backward(self, *grads):
        from .rearrange import stack
        return stack(grads, self._saved_dim)


@register("moveaxis")
def movedim(input, source, destination):
    """Move dims from ``source`` to ``destination`` positions (a view)."""
    a = input._data
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src = [wrap_dim(s, a.ndim) for s in src]
    dst = [wrap_dim(s, a.ndim) for s in dst]
    for dims, which in ((src, "source"), (dst, "destination")):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{which}` ({dims})")
    perm = [None] * a.ndim
    for s_, d_ in zip(src, dst):
        perm[d_] = s_
    rest = iter(i for i in range(a.ndim) if i not in src)
    perm = [p if p is not None else next(rest) for p in perm]
    return _permuted(input, perm, perm)


moveaxis = movedim


@register()
def view_as_real(input):
    """A complex tensor seen as real, with a trailing dimension of 2 (real, imaginary); shares
    storage."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    a = input._data
    shape = a.shape + (2,)
    strides = tuple(2 * s for s in input.stride()) + (1,)
    out = _strided_view(input, shape, strides, 2 * input.storage_offset(), a.real.dtype)
    if needs_grad(input):
        record(out, ViewAsRealBackward0, (input,))
    return out


class ViewAsRealBackward0(Node):
    def backward(self, grad):
        return view_as_complex(grad.contiguous())


class ViewAsComplexBackward0(Node):
    def backward(self, grad):
        return view_as_real(grad)


@register()
def view_as_complex(input):
    """A float32/float64 tensor whose last dimension is 2 (stride 1) seen as complex; shares
    storage."""
    a = input._data
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    cplx = {xp.float32: xp.complex64, xp.float64: xp.complex128}.get(a.dtype.type)
    if cplx is None:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype}")
    out = view_of(input, a.view(cplx)[..., 0])
    if needs_grad(input):
        record(out, ViewAsComplexBackward0, (input,))
    return out


def _component(name):
    def get(input):
        a = input._data
        if name == "imag" and not input.dtype.is_complex:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        if not input.dtype.is_complex:
            return input  # torch: .real of a real tensor is the tensor itself
        if needs_grad(input):  # torch's graph: view_as_real(input).select(-1, 0 or 1)
            return select(view_as_real(input), -1, 0 if name == "real" else 1)
        return view_of(input, getattr(a, name))
    get.__name__ = name
    get.__doc__ = (f"The {name} part of a complex tensor, as a view of its storage"
                   + (" (a real tensor is returned itself)." if name == "real" else
                      " (RuntimeError for a real tensor)."))
    return get


real = _component("real")
imag = _component("imag")
Tensor.real = property(real)
Tensor.imag = property(imag)


# ----------------------------------------------------------------------------- in-place on views

class CopySlices(Node):
    """History of a base whose view was written in place by ``fn``: the gradient for the
    written region goes through ``fn``, the rest of the base passes straight through."""

    def backward(self, grad):
        from .creation import empty_strided
        base_shape, base_stride, base_offset = self._saved_base_geometry
        size, stride, offset = self._saved_view_geometry
        fn = self._saved_fn
        result = empty_strided(base_shape, base_stride, dtype=grad.dtype)
        result.copy_(grad)
        region = result.as_strided(size, stride, offset - base_offset + result.storage_offset())
        from ..autograd.engine import _validate
        fn_grads = _validate(fn, _as_tuple(fn.backward(region.clone())))
        if fn_grads[0] is None:
            region.zero_()
        else:
            region.copy_(fn_grads[0])
        return (result,) + tuple(fn_grads[1:])

    def name(self):
        return "torch::autograd::CopySlices"

    def release_saved(self):
        self._saved_fn.release_saved()
        super().release_saved()


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def rebase_view_history(view, fn):
    """After ``fn`` (an in-place op's node) wrote into ``view``, route the base's history
    through a CopySlices node and give the view an AsStrided history from the new base."""
    base = view._base
    from ..autograd.graph import edge_of
    base_edge = edge_of(base)
    node = CopySlices((base_edge,) + tuple(fn.next_functions[1:]),
                      ((base._data.shape, base._data.dtype),) + tuple(fn._input_meta[1:]))
    node._saved = {"base_geometry": _geometry(base), "view_geometry": _geometry(view), "fn": fn}
    base.grad_fn = node
    base._requires_grad = True
    base.__dict__.pop("_output_nr", None)
    size, stride, offset = _geometry(view)
    view_node = AsStridedBackward0(((node, 0),), ((base._data.shape, base._data.dtype),))
    view_node._saved = {"size": size, "stride": stride, "storage_offset": offset,
                        "input_geometry": _geometry(base)}
    view.grad_fn = view_node
    view._requires_grad = True
    view.__dict__.pop("_output_nr", None)


# ----------------------------------------------------------------------------- in-place views

def _inplace_view(fn):
    """``fn_``: the view ``fn`` computes becomes this tensor's own shape and strides (torch's
    in-place view ops change a tensor's metadata, never its data)."""
    def method(self, *args, **kwargs):
        if self._requires_grad and self.grad_fn is None and is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        out = fn(self, *args, **kwargs)
        self._data = out._data
        if out.grad_fn is not None:  # the view's node (its input: this tensor's old history)
            self.grad_fn = out.grad_fn
        self._bump_version()
        return self
    method.__name__ = method.__qualname__ = fn.__name__ + "_"
    method.__doc__ = f"In-place ``{fn.__name__}``: changes this tensor's view of its storage."
    return method


for _view_fn in (squeeze, unsqueeze, t, transpose, as_strided):
    setattr(Tensor, _view_fn.__name__ + "_", _inplace_view(_view_fn))
Tensor.swapdims_ = Tensor.swapaxes_ = Tensor.transpose_


def _format_strides(shape, memory_format):
    """Dense strides for ``shape`` in ``memory_format`` (row-major, or channels last)."""
    if memory_format is None or memory_format is contiguous_format:
        return _contiguous_strides(shape)
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    rank = 4 if memory_format is channels_last else 5 if memory_format is channels_last_3d \
        else None
    if rank is None:
        raise RuntimeError(f"unsupported memory format {memory_format}")
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format} format")
    order = (0,) + tuple(range(2, rank)) + (1,)  # channels vary fastest
    dense = _contiguous_strides(tuple(shape[i] for i in order))
    strides = [0] * rank
    for k, i in enumerate(order):
        strides[i] = dense[k]
    return tuple(strides)


def resize_(self, *sizes, size=None, memory_format=None):
    """Give the tensor ``sizes`` (dense, in ``memory_format``) over its storage from its
    offset; a larger size grows the storage, keeping its contents (the new elements are zeros
    here, garbage in torch)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = sizes_or_keyword(sizes, size, "resize_")
    strides = _format_strides(shape, memory_format)
    n = math.prod(shape)
    offset = self.storage_offset()
    a = self._data
    storage = flat_bytes(root_array(a))
    item = a.dtype.itemsize
    if (offset + n) * item > storage.nbytes:  # grow: a new allocation holding the old bytes
        grown = xp.zeros((offset + n) * item, xp.uint8)
        grown[:storage.nbytes] = storage
        a = grown.view(a.dtype)
    self._data = _strided_array(a, shape, strides, offset)
    self._bump_version()
    return self


Tensor.resize_ = resize_


# ----------------------------------------------------------------------------- *_copy variants
# torch.transpose_copy(x, ...) and friends: the view's values in a fresh contiguous tensor.
# The graph node is the view's own backward under torch's name "<ViewNode>_copy".

_COPY_NODES = {}


class _ViewCopyBackward(Node):
    """Backward of a ``*_copy`` op: the backward of the view it copies."""

    def backward(self, *grads):
        return self._saved_view_node.backward(*grads)


def _copy_node(view_node):
    name = type(view_node).__name__ + "_copy"
    cls = _COPY_NODES.get(name)
    if cls is None:
        cls = _COPY_NODES[name] = type(name, (_ViewCopyBackward,), {"__module__": __name__})
    return cls


def _detached_copy(t):
    return wrap(xp.ascontiguousarray(t._data).copy())


def _view_copy_op(name, view_fn):
    from ._common import finish

    def op(input, *args, out=None, **kwargs):
        if name == "view_as_complex_copy" and needs_grad(input):
            raise RuntimeError("view_as_complex_copy does not support automatic "
                               "differentiation for outputs with complex dtype.")
        view = view_fn(input, *args, **kwargs)
        many = isinstance(view, (tuple, list))
        views = tuple(view) if many else (view,)
        copies = tuple(_detached_copy(v) for v in views)
        if needs_grad(input):
            if name == "detach_copy":  # torch keeps a node that has no derivative
                from .random import NotImplemented as _NoDerivative
                record(copies[0], _NoDerivative, (input,), op="aten::detach_copy")
            elif views and views[0].grad_fn is not None:
                node = views[0].grad_fn
                record(copies if many else copies[0], _copy_node(node), (input,),
                       view_node=node)
        if not many:
            return finish(copies[0], out)
        if out is None:
            return list(copies)
        if len(out) != len(copies):
            raise RuntimeError(f"{name}() expected an out= argument of size {len(copies)}, "
                               f"got size {len(out)}")
        for o, c in zip(out, copies):
            finish(c, o)
        return None

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``torch.{name}``: what ``{name[:-5]}`` views, as a new contiguous "
                  f"tensor (the gradient flows as through the view).")
    return op


def _detach_view(input):
    return view_of(input, input._data[...])


def _alias_view(input):
    out = view_of(input, input._data[...])
    if needs_grad(input):
        record(out, AliasBackward0, (input,))
    return out


class AliasBackward0(Node):
    def backward(self, grad):
        return grad


_VIEW_COPIES = {
    "alias_copy": _alias_view, "as_strided_copy": as_strided, "detach_copy": _detach_view,
    "diagonal_copy": diagonal, "expand_copy": expand, "permute_copy": permute,
    "select_copy": select, "slice_copy": None, "split_copy": split,
    "split_with_sizes_copy": split_with_sizes, "squeeze_copy": squeeze, "t_copy": t,
    "transpose_copy": transpose, "unbind_copy": unbind, "unfold_copy": unfold,
    "unsqueeze_copy": unsqueeze, "view_copy": view, "view_as_real_copy": view_as_real,
    "view_as_complex_copy": view_as_complex,
}


def _slice_view(input, dim=0, start=None, end=None, step=1):
    """torch's aten::slice: input[start:end:step] along ``dim`` (a view)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, input.dim())
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view_any_layout(input, *shape, **kwargs):
    # a copy needs no view-compatible strides: view the contiguous values (gradient alike)
    return view(input.contiguous(), *shape, **kwargs)


_VIEW_COPIES["slice_copy"] = _slice_view
_VIEW_COPIES["view_copy"] = _view_any_layout
for _name, _fn in _VIEW_COPIES.items():
    globals()[_name] = _view_copy_op(_name, _fn)


# ----------------------------------------------------------------------------- *_scatter
# torch.select_scatter(input, src, ...) and friends: a copy of input with src written into
# the region the view selects. Backward: the gradient outside the region goes to input, the
# region's to src; both written with these same ops, so double backward works.

def _scatter_op(name, view_fn, node_name):
    node_cls = type(node_name, (_ScatterBackward,), {"__module__": __name__})

    def op(input, src, *args, **kwargs):
        from .copying import clone
        with _no_grad():
            out = clone(input, memory_format=contiguous_format)
            region = view_fn(out, *args, **kwargs)
            if tuple(region.shape) != tuple(src.shape):
                raise RuntimeError(f"expected src to have a size equal to the slice of self. "
                                   f"src size = {list(src.shape)}, slice size = "
                                   f"{list(region.shape)}")
            region.copy_(src)
        out = wrap(out._data)
        if needs_grad(input, src):
            record(out, node_cls, (input, src), args=args, kwargs=kwargs, op=op,
                   view_fn=view_fn)
        return out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``torch.{name}(input, src, ...)``: a copy of input with ``src`` embedded "
                  f"where ``{view_fn.__name__.strip('_')}`` would view.")
    return op


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


class _ScatterBackward(Node):
    def backward(self, grad):
        args, kwargs = self._saved_args, self._saved_kwargs
        region = self._saved_view_fn(grad, *args, **kwargs)
        g_src = region.clone(memory_format=contiguous_format) if _wants_src(self) else None
        g_in = None
        if self.next_functions[0][0] is not None:
            g_in = self._saved_op(grad, region.new_zeros(region.shape), *args, **kwargs)
        return g_in, g_src


def _wants_src(node):
    return node.next_functions[1][0] is not None


diagonal_scatter = _scatter_op("diagonal_scatter", diagonal, "DiagonalScatterBackward0")
select_scatter = _scatter_op("select_scatter", select, "SelectScatterBackward0")
slice_scatter = _scatter_op("slice_scatter", _slice_view, "SliceScatterBackward0")
as_strided_scatter = _scatter_op("as_strided_scatter", as_strided,
                                 "AsStridedScatterBackward0")
for _fn in (diagonal_scatter, select_scatter, slice_scatter, as_strided_scatter):
    register()(_fn)  # also Tensor methods, as in torch


@register()
def ravel(input):
    """The elements as a 1-D tensor: a view when input is contiguous, else a copy (torch
    spells it contiguous().view(-1))."""
    return view(input.contiguous(), -1)


__all__ += list(_VIEW_COPIES) + ["diagonal_scatter", "select_scatter", "slice_scatter",
                                  "as_strided_scatter", "split_with_sizes", "ravel"]


def _unsafe(pieces, input, node, **saved):
    """``pieces`` (views of ``input``) as plain tensors over the same memory, with no view
    tracking, one ``node`` for all: torch's unsafe_* split forms, whose caller promises not to
    write in place."""
    out = tuple(wrap(p._data) for p in pieces)
    if needs_grad(input):
        record(out, node, (input,), self_sym_sizes=input.shape, **saved)
    return out


@register()
def unsafe_split(input, split_size, dim=0):
    """``split`` whose pieces are not tracked as views of ``input``."""
    pieces = split(input.detach(), split_size, dim)
    return _unsafe(pieces, input, UnsafeSplitBackward0, dim=wrap_dim(dim, input.dim()),
                   split_size=split_size)


@register()
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` whose pieces are not tracked as views of ``input``."""
    pieces = split(input.detach(), list(split_sizes), dim)
    return _unsafe(pieces, input, UnsafeSplitWithSizesBackward0,
                   dim=wrap_dim(dim, input.dim()), split_sizes=tuple(split_sizes))


@register()
def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose pieces are not tracked as views of ``input``."""
    pieces = chunk(input.detach(), chunks, dim)
    return _unsafe(pieces, input, UnsafeSplitBackward0, dim=wrap_dim(dim, input.dim()),
                   split_size=pieces[0].shape[wrap_dim(dim, input.dim())])


class UnsafeSplitBackward0(SplitBackward0):
    pass


class UnsafeSplitWithSizesBackward0(SplitBackward0):
    pass


__all__ += ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"]
