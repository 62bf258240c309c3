"""Joining and rearranging: cat/stack families, flips, rolls, repeats, triangles, diagonals,
meshgrid and broadcasting helpers.

Everything here returns a fresh tensor except meshgrid, broadcast_tensors and atleast_*d,
which are views like torch's. Copies are contiguous unless torch preserves the input's
layout (flip, and rot90 built on it).
"""

from __future__ import annotations

import itertools

from .._core import dtype as _dt
from .._core.warn import warn_user
from .._tensor import Size, channels_last
from .._tensor import contiguous_format as _contiguous_format
from ._common import (
    Node,
    Tensor,
    assign_inplace,
    finish,
    int_arg,
    needs_grad,
    not_implemented_for,
    record,
    register,
    view_of,
    wrap,
    wrap_dim,
    xp,
)
from .views import expand, narrow, reshape, unsqueeze

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
           "column_stack", "flip", "fliplr", "flipud", "roll", "rot90", "repeat_interleave",
           "tile", "tril", "triu", "tril_indices", "triu_indices", "diag", "diag_embed",
           "diagflat", "block_diag", "meshgrid", "broadcast_tensors", "broadcast_shapes",
           "atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "combinations",
           "narrow_copy"]


def _contig(a):
    # NumPy's ascontiguousarray turns 0-d arrays into 1-d ones; this keeps the shape.
    return a if a.flags.c_contiguous else a.copy(order="C")


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {tensors.index(t)} in argument 0, "
                            f"but got {type(t).__name__}")
    return tensors


def _common_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _dt.promote_types(dt, t.dtype)
    return dt


def _arrays_as(tensors, dt):
    np_dt = dt.np
    return [t._data if t._data.dtype == np_dt else t._data.astype(np_dt) for t in tensors]


# ----------------------------------------------------------------------------- cat / stack

def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing ``dim``, promoting dtypes like torch."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    dt = _common_dtype(tensors)
    # Legacy rule: 1-D empty tensors take part in dtype promotion only.
    kept = [(i, t) for i, t in enumerate(tensors) if t._data.shape != (0,)]
    if not kept:
        r = wrap(xp.empty((0,), dtype=dt.np))
        if needs_grad(*tensors):
            record(r, CatBackward0, tuple(tensors), dim=dim)
        return finish(r, out)
    first = kept[0][1]._data.shape
    d = wrap_dim(dim, len(first))
    for i, t in kept[1:]:
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{len(first)} and {len(shape)}")
        for k, (x, y) in enumerate(zip(first, shape)):
            if k != d and x != y:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {x} but got size {y} for tensor number "
                                   f"{i} in the list.")
    arrays = _arrays_as([t for _, t in kept], dt)
    # torch's result is contiguous unless every input is channels_last (NumPy would keep
    # any shared layout, e.g. that of transposed inputs)
    if all(t._data.ndim == 4 and not t._data.flags.c_contiguous and
           t.is_contiguous(memory_format=channels_last) for _, t in kept):
        r = wrap(xp.concatenate(arrays, axis=d))
    else:
        shape = list(first)
        shape[d] = sum(a.shape[d] for a in arrays)
        out_arr = xp.empty(shape, dtype=dt.np)
        xp.concatenate(arrays, axis=d, out=out_arr)
        r = wrap(out_arr)
    if needs_grad(*tensors):
        record(r, CatBackward0, tuple(tensors), dim=d)
    return finish(r, out)


class CatBackward0(Node):
    def backward(self, grad):
        d = self._saved_dim
        out = []
        start = 0
        for (nx, _), (shape, _) in zip(self.next_functions, self._input_meta):
            if shape == (0,) and (grad.dim() != 1 or d != 0):  # skipped by the forward
                out.append(grad.new_zeros(shape) if nx is not None else None)
                continue
            n = shape[d]
            out.append(grad.narrow(d, start, n) if nx is not None else None)
            start += n
        return tuple(out)


def concat(tensors, dim=0, *, out=None):
    """Alias of :func:`cat`."""
    return cat(tensors, dim, out=out)


def concatenate(tensors, dim=0, *, axis=None, out=None):
    """Alias of :func:`cat` (also accepts NumPy's ``axis``)."""
    return cat(tensors, dim if axis is None else axis, out=out)


def stack(tensors, dim=0, *, out=None):
    """Join equally-shaped tensors along a new ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t._data.shape)} at entry {i}")
    d = wrap_dim(dim, len(shape) + 1)
    arrays = _arrays_as(tensors, _common_dtype(tensors))
    r = wrap(xp.stack(arrays, axis=d))
    if needs_grad(*tensors):
        record(r, StackBackward0, tuple(tensors), dim=d)
    return finish(r, out)


class StackBackward0(Node):
    def backward(self, grad):
        d = self._saved_dim
        return tuple(grad.select(d, i) if nx is not None else None
                     for i, (nx, _) in enumerate(self.next_functions))


def _nonempty(tensors, name):
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """Concatenate column-wise: along dim 0 for 1-D inputs, dim 1 otherwise."""
    ts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenate row-wise after making every input at least 2-D."""
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Concatenate depth-wise (dim 2) after making every input at least 3-D."""
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2, out=out)


def column_stack(tensors, *, out=None):
    """Stack 0-D/1-D inputs as columns (and 2-D ones as they are) along dim 1."""
    ts = _nonempty(tensors, "column_stack")
    ts = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in ts]
    return cat(ts, 1, out=out)


# ----------------------------------------------------------------------------- flips, rolls

def _preserve_layout_empty(a):
    """An uninitialised array shaped like ``a`` whose dims are laid out in ``a``'s stride
    order (torch's ``empty_like`` with ``preserve_format``); stride-0 dims are ambiguous
    and keep their place, so expanded inputs give contiguous results."""
    nd = a.ndim
    if nd < 2 or a.flags.c_contiguous:
        return xp.empty(a.shape, a.dtype)
    strides, shape = a.strides, a.shape
    perm = list(range(nd))  # outermost first
    # insertion sort from the innermost dim outwards, moving larger strides outward
    for i in range(nd - 2, -1, -1):
        j = i
        while j < nd - 1:
            x, y = perm[j], perm[j + 1]
            sx, sy = strides[x], strides[y]
            if sx == 0 or sy == 0:
                break
            if sx < sy or (sx == sy and shape[x] < shape[y]):
                perm[j], perm[j + 1] = y, x
                j += 1
            else:
                break
    inv = [0] * nd
    for k, p in enumerate(perm):
        inv[p] = k
    return xp.empty([shape[p] for p in perm], a.dtype).transpose(inv)


def _flip_dims(dims, ndim):
    axes = [wrap_dim(d, ndim) for d in dims]
    if len(set(axes)) != len(axes):
        dup = next(x for x in axes if axes.count(x) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return tuple(axes)


@register()
def flip(input, *args, dims=None):
    """Reverse the order of elements along ``dims`` (a copy; torch has no negative strides)."""
    dims = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else \
        (args or dims)
    if dims is None:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    a = input._data
    axes = _flip_dims(dims, a.ndim)
    res = _preserve_layout_empty(a)
    xp.copyto(res, xp.flip(a, axes) if axes and a.ndim else a)
    r = wrap(res)
    if needs_grad(input):
        record(r, FlipBackward0, (input,), dims=axes)
    return r


class FlipBackward0(Node):
    def backward(self, grad):
        return grad.flip(self._saved_dims)


@register()
def fliplr(input):
    """Flip the columns (dim 1); needs at least 2 dims."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@register()
def flipud(input):
    """Flip the rows (dim 0); needs at least 1 dim."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@register()
def roll(input, shifts, dims=None):
    """Shift elements circularly along ``dims`` (flattened first when ``dims`` is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else ((dims,) if isinstance(dims, int) else tuple(dims))
    a = input._data
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        r = wrap(_contig(xp.roll(a.reshape(-1), shifts[0]).reshape(a.shape)))
        if needs_grad(input):
            record(r, RollBackward0, (input,), shifts=shifts, dims=dims)
        return r
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    axes = tuple(wrap_dim(d, a.ndim) for d in dims)
    r = wrap(_contig(xp.roll(a, shifts, axes)))
    if needs_grad(input):
        record(r, RollBackward0, (input,), shifts=shifts, dims=axes)
    return r


class RollBackward0(Node):
    def backward(self, grad):
        dims = self._saved_dims
        return grad.roll(tuple(-s for s in self._saved_shifts), dims or None)


@register()
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from dims[0] to dims[1])."""
    dims = tuple(dims)
    a = input._data
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    r = _rot90(input.detach() if input._requires_grad else input, k % 4, d0, d1)
    if needs_grad(input):
        record(r, Rot90Backward0, (input,), k=k, dims=dims)
    return r


def _rot90(input, k, d0, d1):
    a = input._data
    if k == 0:
        return wrap(a.copy(order="C"))
    if k == 2:
        return flip(input, (d0, d1))
    # a quarter turn is a flip (a fresh tensor) viewed transposed, as in torch
    flipped = flip(input, (d1,) if k == 1 else (d0,))
    return view_of(flipped, xp.swapaxes(flipped._data, d0, d1))


class Rot90Backward0(Node):
    def backward(self, grad):
        return grad.rot90(-self._saved_k, self._saved_dims)


# ----------------------------------------------------------------------------- repeats

def _repeat(input, *sizes, repeats=None):
    """Tile ``input`` ``sizes[i]`` times along each dim (new leading dims allowed)."""
    sizes = sizes or (() if repeats is None else (repeats,))
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    a = input._data
    if len(sizes) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    shape = (1,) * (len(sizes) - a.ndim) + a.shape
    out_shape = [s * r for s, r in zip(shape, sizes)]
    if any(r < 0 for r in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out_shape)}: {out_shape}")
    r = wrap(_contig(xp.tile(a.reshape(shape), sizes)))
    if needs_grad(input):
        record(r, RepeatBackward0, (input,), repeats=sizes, self_sym_sizes=input.shape)
    return r


class RepeatBackward0(Node):
    def backward(self, grad):
        sizes = self._saved_repeats
        in_shape = tuple(self._saved_self_sym_sizes)
        shape = (1,) * (len(sizes) - len(in_shape)) + in_shape
        split = []
        for r, n in zip(sizes, shape):
            split += [r, n]
        if 0 in split:
            return grad.new_zeros(in_shape)
        g = grad.reshape(split).sum(list(range(0, len(split), 2)))
        return g.reshape(in_shape)


_repeat.__name__ = _repeat.__qualname__ = "repeat"
Tensor.repeat = _repeat


@register()
def tile(input, *args, dims=None):
    """Like ``Tensor.repeat`` but pads ``dims`` with leading 1s when it is shorter."""
    dims = tuple(args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else
                 (args or dims))
    dims = (1,) * (input._data.ndim - len(dims)) + tuple(dims)
    return _repeat(input, dims)


@register()
def repeat_interleave(input=None, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (flattened when None).

    With only a tensor of counts (``repeat_interleave(counts)`` or ``(repeats=counts)``),
    returns indices ``i`` repeated ``counts[i]`` times."""
    if input is None:
        if repeats is None or dim is not None:
            raise TypeError("repeat_interleave() takes either input and repeats, or repeats "
                            "alone (without dim)")
        input, repeats = repeats, None
    if repeats is None:
        r = input._data
        if input.dtype not in (_dt.int32, _dt.int64):
            raise not_implemented_for("repeat_interleave", input.dtype)
        if r.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        res = xp.repeat(xp.arange(r.size, dtype=r.dtype), r)
        if output_size is not None and output_size != res.size:
            raise RuntimeError("allocated size does not match required size")
        return wrap(res)
    if needs_grad(input):
        return _repeat_interleave_grad(input, repeats, dim, output_size)
    a = input._data
    if dim is None:
        a, d = a.reshape(-1), 0
    else:
        d = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            a = a.reshape(1)
    n = a.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (_dt.int32, _dt.int64):
            raise not_implemented_for("repeat_interleave", repeats.dtype)
        if repeats._data.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        r = repeats._data.reshape(-1)
        if r.size == 1:
            r = xp.broadcast_to(r, (n,))
        elif r.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.size} and input.size({d}) = {n}")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        r = int(repeats)
    res = xp.repeat(a, r, axis=d)
    if output_size is not None and output_size != res.shape[d]:
        raise RuntimeError("allocated size does not match required size")
    return wrap(_contig(res))


def _repeat_interleave_grad(input, repeats, dim, output_size):
    """repeat_interleave built from recorded ops, as torch does: index_select for a tensor
    of counts, unsqueeze/expand/clone/view for a single count."""
    from .. import no_grad
    with no_grad():  # the forward's checks and result
        ref = repeat_interleave(input, repeats, dim, output_size=output_size)
    x = reshape(input, (-1,)) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, input._data.ndim)
    if x._data.ndim == 0:
        x = reshape(x, (1,))
    if isinstance(repeats, Tensor):
        counts = xp.broadcast_to(repeats._data.reshape(-1), (x._data.shape[d],))
        idx = wrap(xp.repeat(xp.arange(x._data.shape[d]), counts))
        return x.index_select(d, idx)
    r = int(repeats)
    shape = list(x._data.shape)
    big = shape[:d + 1] + [r] + shape[d + 1:]
    y = expand(unsqueeze(x, d + 1), big).clone(memory_format=_contiguous_format)
    out = y.view(shape[:d] + [shape[d] * r] + shape[d + 1:])
    assert out._data.shape == ref._data.shape
    return out


def narrow_copy(input, dim, start, length, *, out=None):
    """A contiguous copy of ``input.narrow(dim, start, length)``."""
    r = wrap(narrow(input.detach(), dim, start, length)._data.copy(order="C"))
    if needs_grad(input):
        d = wrap_dim(dim, input._data.ndim)
        record(r, NarrowCopyBackward0, (input,), self_sym_sizes=input.shape,
               dim=d, start=start % max(input._data.shape[d], 1), length=length)
    return finish(r, out)


class NarrowCopyBackward0(Node):
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        full.narrow(self._saved_dim, self._saved_start, self._saved_length).copy_(grad)
        return full


Tensor.narrow_copy = narrow_copy


# ----------------------------------------------------------------------------- triangles

class TrilBackward0(Node):
    def backward(self, grad):
        return grad.tril(self._saved_diagonal)


class TriuBackward0(Node):
    def backward(self, grad):
        return grad.triu(self._saved_diagonal)


def _triangle(name, lower):
    node = TrilBackward0 if lower else TriuBackward0

    def fn(input, diagonal=0, *, out=None):
        diagonal = int_arg(name, "diagonal", 2, diagonal)
        a = input._data
        if a.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        n, m = a.shape[-2:]
        # tri(k) keeps j <= i + k; the upper triangle keeps j >= i + k, i.e. not tri(k - 1)
        mask = xp.tri(n, m, diagonal, dtype=bool) if lower else \
            ~xp.tri(n, m, diagonal - 1, dtype=bool)
        r = wrap(xp.where(mask, a, xp.zeros((), a.dtype)))
        if needs_grad(input):
            record(r, node, (input,), diagonal=diagonal)
        return finish(r, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {'lower' if lower else 'upper'} triangle of the last two dims "
                  f"(elements on the {'left/below' if lower else 'right/above'} of "
                  f"``diagonal``); the rest zeroed.")
    setattr(Tensor, name, fn)

    def inplace(self, diagonal=0):
        return assign_inplace(self, fn(self, diagonal))
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"In-place version of :func:`{name}`."
    setattr(Tensor, name + "_", inplace)
    return fn


tril = _triangle("tril", True)
triu = _triangle("triu", False)


def _tri_indices(name, lower):
    def fn(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False,
           requires_grad=False):
        from .creation import _finish, as_device, check_pin_memory
        row, col, offset = (int_arg(name, p, i + 1, v)
                            for i, (p, v) in enumerate((("row", row), ("col", col),
                                                        ("offset", offset))))
        as_device(device)
        check_pin_memory(pin_memory, name)
        dtype = _dt.int64 if dtype is None else dtype
        if dtype not in (_dt.int32, _dt.int64):
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{_LEGACY_SHORT.get(dtype, dtype)}'")
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        mask = xp.tri(row, col, offset, dtype=bool) if lower else \
            ~xp.tri(row, col, offset - 1, dtype=bool)
        return _finish(xp.stack(xp.nonzero(mask)).astype(dtype.np).reshape(2, -1), requires_grad)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The 2 x N coordinates of the {'lower' if lower else 'upper'} triangle of "
                  f"a row x col matrix, row by row.")
    return fn


_LEGACY_SHORT = {_dt.float32: "Float", _dt.float64: "Double", _dt.float16: "Half",
                 _dt.bfloat16: "BFloat16", _dt.bool_: "Bool", _dt.uint8: "Byte",
                 _dt.int8: "Char", _dt.int16: "Short"}
tril_indices = _tri_indices("tril_indices", True)
triu_indices = _tri_indices("triu_indices", False)


# ----------------------------------------------------------------------------- diagonals

@register()
def diag(input, diagonal=0, *, out=None):
    """1-D input: a matrix with it on the ``diagonal``; 2-D input: a copy of that diagonal."""
    a = input._data
    if a.ndim == 1:
        n = a.shape[0] + abs(diagonal)
        res = xp.zeros((n, n), a.dtype)
        i = xp.arange(a.shape[0])
        res[i + max(-diagonal, 0), i + max(diagonal, 0)] = a
        r = wrap(res)
        if needs_grad(input):
            record(r, DiagEmbedBackward0, (input,), offset=diagonal, dim1=0, dim2=1)
        return finish(r, out)
    if a.ndim == 2:
        r = wrap(xp.diagonal(a, diagonal).copy())
        if needs_grad(input):
            record(r, DiagonalBackward0_copy, (input,), self_sym_sizes=input.shape,
                   offset=diagonal, dim1=0, dim2=1)
        return finish(r, out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")


@register()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Place the last dim of ``input`` on the ``offset`` diagonal of the (dim1, dim2) planes
    of a new, otherwise zero, tensor with one more dim."""
    a = input._data
    nd = a.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = a.shape[-1]
    m = n + abs(offset)
    res = xp.zeros(a.shape[:-1] + (m, m), a.dtype)
    i = xp.arange(n)
    res[..., i + max(-offset, 0), i + max(offset, 0)] = a
    r = wrap(_contig(xp.moveaxis(res, (-2, -1), (d1, d2))))
    if needs_grad(input):
        record(r, DiagEmbedBackward0, (input,), offset=offset, dim1=d1, dim2=d2)
    return r


class DiagEmbedBackward0(Node):
    def backward(self, grad):
        return grad.diagonal(self._saved_offset, self._saved_dim1, self._saved_dim2)


class DiagonalBackward0_copy(Node):  # noqa: N801 - torch's name
    def backward(self, grad):
        full = grad.new_zeros(self._saved_self_sym_sizes)
        d1, d2, off = self._saved_dim1, self._saved_dim2, self._saved_offset
        full.diagonal(off, d1, d2).copy_(grad)
        return full


@register()
def diagflat(input, offset=0):
    """A 2-D matrix with the flattened ``input`` on the ``offset`` diagonal."""
    return diag(reshape(input, (-1,)), offset)


def block_diag(*tensors):
    """A block-diagonal matrix of the (at most 2-D) inputs, with their promoted dtype."""
    shapes = []
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
        shapes.append({0: (1, 1), 1: (1,) + t._data.shape}.get(t._data.ndim, t._data.shape))
    if not tensors:
        return wrap(xp.zeros((1, 0), _dt.get_default_dtype().np))  # torch's shape for no input
    dt = _common_dtype(tensors)
    res = xp.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), dt.np)
    r = c = 0
    for t, (h, w) in zip(tensors, shapes):
        res[r:r + h, c:c + w] = t._data.reshape(h, w)
        r, c = r + h, c + w
    out = wrap(res)
    if needs_grad(*tensors):
        record(out, BlockDiagBackward0, tuple(tensors), shapes=tuple(shapes))
    return out


class BlockDiagBackward0(Node):
    def backward(self, grad):
        out = []
        r = c = 0
        for (nx, _), (h, w), (shape, _) in zip(self.next_functions, self._saved_shapes,
                                              self._input_meta):
            out.append(grad[r:r + h, c:c + w].reshape(shape) if nx is not None else None)
            r, c = r + h, c + w
        return tuple(out)


# ----------------------------------------------------------------------------- grids, shapes

def _varargs(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0])
    return tensors


def meshgrid(*tensors, indexing=None):
    """Coordinate grids (expanded views) from 0-D/1-D tensors; ``indexing`` 'ij' or 'xy'."""
    tensors = _varargs(tensors)
    if indexing is None:
        warn_user("torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument.", UserWarning)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a {t._data.ndim}D tensor of shape "
                               f"{list(t._data.shape)}")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = [t._data.size for t in ts]
    n = len(ts)
    grids = [expand(reshape(t, [-1 if i == k else 1 for i in range(n)]), sizes)
             for k, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def broadcast_shapes(*shapes):
    """The shape all ``shapes`` broadcast to, as a ``torch.Size``."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for s in shapes:
        for i in range(1, len(s) + 1):
            x = s[-i]
            if x < 0 or (x != result[-i] and result[-i] != 1 and x != 1):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {x} at {-i}! Mismatching "
                    f"argument at index {shapes.index(s)} had {s}; but expected shape should "
                    f"be broadcastable to {result}")
            if result[-i] == 1:
                result[-i] = x
    return Size(result)


def broadcast_tensors(*tensors):
    """Expanded views of ``tensors`` to their common broadcast shape."""
    tensors = _varargs(tensors)
    if not tensors:
        return ()
    shape = tensors[0]._data.shape
    for t in tensors[1:]:
        s = t._data.shape
        for i in range(1, min(len(shape), len(s)) + 1):
            x, y = shape[-i], s[-i]
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of "
                                   f"tensor b ({y}) at non-singleton dimension "
                                   f"{max(len(shape), len(s)) - i}")
        shape = tuple(broadcast_shapes(shape, s))
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


def _atleast(nd):
    def fn(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        ts = _varargs(tensors)
        out = []
        for t in ts:
            if not isinstance(t, Tensor):
                raise TypeError(f"atleast_{nd}d() received an invalid combination of "
                                f"arguments - got ({type(t).__name__})")
            k = t._data.ndim
            if k >= nd:
                out.append(t)
            elif nd == 3 and k == 2:
                out.append(unsqueeze(t, -1))
            elif nd == 3 and k == 1:
                out.append(unsqueeze(unsqueeze(t, 0), -1))
            elif nd == 2 and k == 1:
                out.append(unsqueeze(t, 0))
            else:
                out.append(reshape(t, (1,) * (nd - k) + t._data.shape))
        return out[0] if single else tuple(out)
    fn.__name__ = fn.__qualname__ = f"atleast_{nd}d"
    fn.__doc__ = f"Views of the inputs with at least {nd} dims (a tensor for one input)."
    return fn


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D input, as rows (a 1-D copy for one)."""
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    if needs_grad(*tensors):
        return stack([reshape(g, (-1,)) for g in grids], 1)
    return wrap(xp.stack([g._data.reshape(-1) for g in grids], axis=1))


def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor, as rows."""
    a = input._data
    if a.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(a.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return wrap(xp.empty((0,), a.dtype))
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = xp.array(list(gen(range(a.shape[0]), r)), dtype=xp.int64).reshape(-1, r)
    if needs_grad(input):
        return stack([input.index_select(0, wrap(_contig(idx[:, j]))) for j in range(r)], 1)
    return wrap(_contig(a[idx]))
