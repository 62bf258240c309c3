"""Sparse COO/CSR operators: construction, conversion, coalesce, sparse @ dense, sums.

Backed by NumPy directly (no scipy): the kernels are scatter-adds (``add.at``)
and gathers over the entry list, which is all COO needs, and keeps glasstorch's
only dependencies NumPy and ml_dtypes. Gradients flow to the dense operand and
to the values tensor a sparse tensor was built from; a gradient that reaches a
sparse tensor is either dense or a sparse tensor with that tensor's pattern,
and the constructor's backward gathers it back onto the values.
"""

from __future__ import annotations

from .._core import dtype as _dt
from .._sparse_tensor import SparseCooTensor, SparseCsrTensor, make_coo, make_csr, sparse_csr
from ._common import (
    Node,
    Tensor,
    compute_array,
    finish,
    needs_grad,
    record,
    register,
    result_array,
    wrap,
    wrap_dim,
    xp,
)

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "spmm"]

_int64 = xp.int64


# ---------------------------------------------------------------- kernels (NumPy arrays)
def _linear(indices, sparse_shape):
    if indices.shape[1] == 0:
        return xp.zeros(0, _int64)
    return xp.ravel_multi_index(tuple(indices), sparse_shape)


def _coalesce_arrays(indices, values, shape):
    """Sorted unique indices and the values summed per index."""
    sd = indices.shape[0]
    lin = _linear(indices, shape[:sd])
    uniq, inv = xp.unique(lin, return_inverse=True)
    acc = compute_array(values)
    out = xp.zeros((len(uniq),) + values.shape[1:], acc.dtype)
    xp.add.at(out, inv, acc)
    idx = xp.array(xp.unravel_index(uniq, shape[:sd]), dtype=_int64).reshape(sd, len(uniq))
    return idx, out.astype(values.dtype, copy=False)


def _scatter_dense(indices, values, shape):
    acc = compute_array(values)
    out = xp.zeros(shape, acc.dtype)
    xp.add.at(out, tuple(indices), acc)
    return out.astype(values.dtype, copy=False)


def _grad_at(grad, indices, sparse_shape):
    """The values of ``grad`` (dense or sparse Tensor) at each entry of ``indices``."""
    if not isinstance(grad, SparseCooTensor):
        return grad._data[tuple(indices)]
    gi, gv = _coalesce_arrays(grad._sp_indices, grad._sp_values._data, grad._data.shape)
    glin = _linear(gi, sparse_shape)
    qlin = _linear(indices, sparse_shape)
    pos = xp.searchsorted(glin, qlin)
    pos = xp.minimum(pos, max(len(glin) - 1, 0))
    hit = glin[pos] == qlin if len(glin) else xp.zeros(len(qlin), bool)
    out = xp.zeros((len(qlin),) + gv.shape[1:], gv.dtype)
    out[hit] = gv[pos[hit]]
    return out


def _pattern(input):
    """The coalesced (sorted, unique) indices of a COO tensor: where its gradient lives."""
    idx = input._sp_indices
    if input._sp_coalesced:
        return idx
    sd = idx.shape[0]
    sparse_shape = input._data.shape[:sd]
    uniq = xp.unique(_linear(idx, sparse_shape))
    return xp.array(xp.unravel_index(uniq, sparse_shape), dtype=_int64).reshape(sd, len(uniq))


def _mm_arrays(indices, values, dense, m):
    """(sparse m x k with these entries) @ dense (k x n)."""
    rows, cols = indices
    a = compute_array(values)
    b = compute_array(dense)
    out = xp.zeros((m, dense.shape[1]), xp.result_type(a, b))
    xp.add.at(out, rows, a[:, None] * b[cols])
    return out


def _check_coo(input, name):
    if not isinstance(input, SparseCooTensor):
        got = "Strided" if not isinstance(input, SparseCsrTensor) else "SparseCsr"
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got {got}")


# ---------------------------------------------------------------- autograd nodes
class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    def backward(self, grad):
        idx = self._saved_indices
        return wrap(_grad_at(grad, idx, self._saved_shape[:idx.shape[0]]))


class ToDenseBackward0(Node):
    def backward(self, grad):
        idx, shape = self._saved_indices, self._saved_shape
        return make_coo(idx, wrap(_grad_at(grad, idx, shape[:idx.shape[0]])), shape, True)


class CoalesceBackward0(Node):
    def backward(self, grad):
        return grad


class ToSparseBackward0(Node):
    def backward(self, grad):
        return to_dense(grad) if isinstance(grad, SparseCooTensor) else grad


class MmBackward0(Node):
    """sparse @ dense through ``torch.mm``/``spmm``/``@``: the sparse side gets a dense grad."""

    def backward(self, grad):
        s = self._saved_self
        idx, vals = s._sp_indices, s._sp_values._data
        d = self._saved_mat2._data
        g = grad._data
        gs = gd = None
        if self.next_functions[0][0] is not None:
            gs = wrap(result_array(compute_array(g) @ compute_array(d).T, grad.dtype))
        if self.next_functions[1][0] is not None:
            gd = wrap(result_array(_mm_arrays(idx[::-1], vals, g, d.shape[0]), grad.dtype))
        return gs, gd


class SparseAddmmBackward0(Node):
    """``torch.sparse.mm``: the sparse side gets a sparse grad with its own pattern."""

    def backward(self, grad):
        s = self._saved_self
        idx, vals = s._sp_indices, s._sp_values._data
        d = self._saved_mat2._data
        g = grad._data
        gs = gd = None
        if self.next_functions[0][0] is not None:
            ci = _pattern(s)
            gv = (compute_array(g)[ci[0]] * compute_array(d)[ci[1]]).sum(axis=1)
            gs = make_coo(ci, wrap(result_array(gv, grad.dtype)), s._data.shape, True)
        if self.next_functions[1][0] is not None:
            gd = wrap(result_array(_mm_arrays(idx[::-1], vals, g, d.shape[0]), grad.dtype))
        return gs, gd


class SumBackward0(Node):
    def backward(self, grad):
        idx, shape = self._saved_indices, self._saved_shape
        vals = xp.broadcast_to(grad._data, (idx.shape[1],) + tuple(shape[idx.shape[0]:]))
        return make_coo(idx, wrap(vals.copy()), shape)


class SparseSumBackward0(Node):
    def backward(self, grad):
        idx, shape = self._saved_indices, self._saved_shape
        keep, dense_red = self._saved_keep, self._saved_dense_red
        sd = idx.shape[0]
        if keep:
            g = _grad_at(grad, idx[keep], tuple(shape[d] for d in keep))
        else:
            g = xp.broadcast_to(grad._data, (idx.shape[1],) + grad._data.shape)
        for d in dense_red:  # put back the reduced dense dims (sorted ascending)
            g = xp.expand_dims(g, d - sd + 1)
        g = xp.broadcast_to(g, (idx.shape[1],) + tuple(shape[sd:]))
        return make_coo(idx, wrap(xp.ascontiguousarray(g)), shape)


class MulBackward0(Node):
    def backward(self, grad):
        c = self._saved_other
        if isinstance(grad, SparseCooTensor):
            return make_coo(grad._sp_indices, grad._sp_values * c, grad._data.shape,
                            grad._sp_coalesced)
        return grad * c


class AddBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        return grad, (grad if alpha == 1 else grad * alpha)


class TBackward0(Node):
    def backward(self, grad):
        return grad.t()


# ---------------------------------------------------------------- construction
def _index_array(indices):
    arr = indices._data if isinstance(indices, Tensor) else xp.asarray(indices)
    if arr.dtype.kind not in "iub":
        arr = arr.astype(_int64)
    return arr.astype(_int64, copy=False)


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A COO sparse tensor with entries ``values`` at ``indices`` (sparse_dim x nnz); with a
    size alone (``sparse_coo_tensor((2, 3))``), an empty one of that shape."""
    from .creation import _dtype_or_default, as_tensor
    if values is None:  # torch's (size, *, dtype, ...) overload
        if indices is not None and size is not None:
            raise TypeError("sparse_coo_tensor() got multiple values for argument 'size'")
        if indices is None and size is None:
            raise TypeError("sparse_coo_tensor() missing 1 required positional argument: "
                            "'values'")
        size = size if indices is None else indices
        shape = tuple(int(s) for s in (size.tolist() if isinstance(size, Tensor) else size))
        vals = wrap(xp.zeros((0,), _dtype_or_default(dtype).np))
        out = make_coo(xp.zeros((len(shape), 0), _int64), vals, shape, True)
        if requires_grad:
            out.requires_grad_(True)
        return out
    idx = _index_array(indices)
    vals = values if isinstance(values, Tensor) else as_tensor(values)
    if dtype is not None and vals.dtype is not dtype:
        vals = vals.to(dtype)
    if idx.ndim != 2:
        if idx.ndim == 1 and size is not None:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {idx.shape[0]}, "
                               f"dense_dim = {max(vals.ndim - 1, 0)}")
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz)")
    sd, nnz = idx.shape
    if vals._data.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals._data.shape[0]}")
    dense_shape = tuple(vals._data.shape[1:])
    if size is None:
        sparse_shape = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sd
        shape = sparse_shape + dense_shape
    else:
        shape = tuple(int(s) for s in (size.tolist() if isinstance(size, Tensor) else size))
        if len(shape) != sd + len(dense_shape):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(shape)}, sparse_dim = {sd}, "
                               f"dense_dim = {len(dense_shape)}")
        if shape[sd:] != dense_shape:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *shape[sd:]]}, "
                               f"got {[nnz, *dense_shape]}")
    if check_invariants or nnz and (idx.min() < 0 or (idx.max(axis=1) >= shape[:sd]).any()):
        _check_invariants(idx, shape, sd, strict=bool(check_invariants))
    out = make_coo(idx, vals, shape, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    elif needs_grad(vals):
        record(out, SparseCooTensorWithDimsAndTensorsBackward0, (vals,), indices=idx,
               shape=shape)
    return out


def _check_invariants(idx, shape, sd, strict):
    # Out-of-range indices would corrupt every later kernel, so they are always refused
    # (torch skips the check by default and then reads out of bounds).
    for d in range(sd):
        if idx.shape[1] == 0:
            break
        lo, hi = int(idx[d].min()), int(idx[d].max())
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{shape[d]} but found index {hi}")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, layout=None,
                      device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """A 2-D CSR sparse tensor from compressed row pointers, column indices and values."""
    from .creation import as_tensor
    if layout is not None and layout is not sparse_csr:
        raise RuntimeError(f"sparse_csr_tensor: layout must be SparseCsr but got "
                           f"{_LAYOUT_NAMES.get(str(layout), layout)}")
    crow, col = _index_array(crow_indices), _index_array(col_indices)
    vals = values if isinstance(values, Tensor) else as_tensor(values)
    if dtype is not None and vals.dtype is not dtype:
        vals = vals.to(dtype)
    if crow.ndim != 1 or col.ndim != 1 or vals.ndim != 1:
        raise NotImplementedError("glasstorch: only 2-D CSR tensors with 1-D values are "
                                  "supported")
    if len(col) != vals._data.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but "
                           f"got {len(col)} and {vals._data.shape[0]}")
    if len(crow) == 0 or crow[0] != 0 or crow[-1] != len(col) or (xp.diff(crow) < 0).any():
        raise RuntimeError("`crow_indices[..., 0] == 0` and `crow_indices[..., -1] == nnz` "
                           "with non-decreasing crow_indices are required")
    if size is None:
        size = (len(crow) - 1, int(col.max()) + 1 if len(col) else 0)
    shape = tuple(int(s) for s in size)
    if len(shape) != 2 or shape[0] != len(crow) - 1:
        raise RuntimeError(f"crow_indices must have size {shape[0] + 1 if shape else 1} for a "
                           f"size {list(shape)} CSR tensor, got {len(crow)}")
    if len(col) and (col.min() < 0 or col.max() >= shape[1]):
        raise RuntimeError(f"col_indices must be in [0, {shape[1]})")
    if needs_grad(vals) or requires_grad:
        raise NotImplementedError("glasstorch: autograd through CSR tensors is not supported; "
                                  "use the COO layout")
    return make_csr(crow, col, vals, shape)


# torch's C++ names for layouts, as its messages print them
_LAYOUT_NAMES = {"torch.strided": "Strided", "torch.sparse_coo": "Sparse",
                 "torch.sparse_csr": "SparseCsr", "torch.sparse_csc": "SparseCsc",
                 "torch.sparse_bsr": "SparseBsr", "torch.sparse_bsc": "SparseBsc"}


# ---------------------------------------------------------------- conversions and accessors
@register("to_sparse_coo")
def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """This tensor in COO layout (or ``layout``) keeping only its nonzero entries."""
    if layout is sparse_csr:
        return to_sparse_csr(input)
    if isinstance(input, SparseCooTensor):
        return input
    if isinstance(input, SparseCsrTensor):
        n_per_row = xp.diff(input._sp_crow)
        rows = xp.repeat(xp.arange(input._data.shape[0], dtype=_int64), n_per_row)
        idx = xp.stack([rows, input._sp_col])
        return make_coo(idx, input._sp_values, input._data.shape, True)
    a = input._data
    sd = a.ndim if sparse_dim is None else sparse_dim
    if not 0 < sd <= a.ndim if a.ndim else sd != 0:
        raise RuntimeError(f"sparse_dim must be in [1, {a.ndim}], got {sd}")
    mask = a != 0
    if sd < a.ndim:
        mask = mask.any(axis=tuple(range(sd, a.ndim)))
    nz = xp.nonzero(mask)
    idx = xp.array(nz, dtype=_int64).reshape(sd, -1)
    out = make_coo(idx, wrap(a[nz]), a.shape, True)
    if needs_grad(input):
        record(out, ToSparseBackward0, (input,))
    return out


@register()
def to_sparse_csr(input, dense_dim=None):
    """This 2-D tensor in CSR layout."""
    if isinstance(input, SparseCsrTensor):
        return input
    if input.ndim != 2:
        raise NotImplementedError(f"glasstorch: to_sparse_csr supports 2-D tensors only, got "
                                  f"{input.ndim}-D")
    if needs_grad(input) or (isinstance(input, SparseCooTensor) and needs_grad(
            input._sp_values)):
        raise NotImplementedError("glasstorch: autograd through CSR tensors is not supported; "
                                  "use the COO layout")
    coo = coalesce(input) if isinstance(input, SparseCooTensor) else to_sparse(input)
    rows, cols = coo._sp_indices
    crow = xp.zeros(input._data.shape[0] + 1, _int64)
    xp.cumsum(xp.bincount(rows, minlength=input._data.shape[0]), out=crow[1:])
    return make_csr(crow, cols.copy(), coo._sp_values.detach(), input._data.shape)


@register()
def to_dense(input, dtype=None, *, masked_grad=None):
    """The dense (strided) tensor with this sparse tensor's values; a dense input is returned."""
    if isinstance(input, SparseCsrTensor):
        input = to_sparse(input)
    if not isinstance(input, SparseCooTensor):
        return input if dtype is None else input.to(dtype)
    vals = input._sp_values._data
    out = wrap(_scatter_dense(input._sp_indices, vals, input._data.shape))
    if needs_grad(input):
        record(out, ToDenseBackward0, (input,), indices=_pattern(input), shape=input._data.shape)
    return out if dtype is None else out.to(dtype)


@register()
def coalesce(input):
    """Sum duplicate entries and sort the indices; a coalesced input is returned as is."""
    _check_coo(input, "coalesce")
    if input._sp_coalesced:
        return input
    idx, vals = _coalesce_arrays(input._sp_indices, input._sp_values._data, input._data.shape)
    out = make_coo(idx, wrap(vals), input._data.shape, True)
    if needs_grad(input):
        record(out, CoalesceBackward0, (input,))
    return out


@register()
def is_coalesced(input) -> bool:
    """Whether the COO tensor is known to have sorted, unique indices."""
    _check_coo(input, "is_coalesced")
    return input._sp_coalesced


@register()
def indices(input):
    """The (sparse_dim, nnz) int64 index tensor of a coalesced COO tensor."""
    _check_coo(input, "indices")
    if not input._sp_coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return wrap(input._sp_indices)


class ValuesBackward0(Node):
    def backward(self, grad):
        return make_coo(self._saved_indices, grad, self._saved_shape, True)


@register()
def values(input):
    """The values of a coalesced COO tensor, or of a CSR tensor."""
    if isinstance(input, SparseCsrTensor):
        return input._sp_values
    if not isinstance(input, SparseCooTensor):
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    if not input._sp_coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    out = input._sp_values.detach()
    if needs_grad(input):
        record(out, ValuesBackward0, (input,), indices=input._sp_indices,
               shape=input._data.shape)
    return out


def _check_csr(input, name):
    if not isinstance(input, SparseCsrTensor):
        got = "Sparse" if isinstance(input, SparseCooTensor) else "Strided"
        raise RuntimeError(f"{name} expected sparse row compressed tensor layout but got {got}")


@register()
def crow_indices(input):
    """The compressed row pointers of a CSR tensor."""
    _check_csr(input, "crow_indices")
    return wrap(input._sp_crow)


@register()
def col_indices(input):
    """The column index of each stored entry of a CSR tensor."""
    _check_csr(input, "col_indices")
    return wrap(input._sp_col)


@register()
def sparse_dim(input) -> int:
    """Number of sparse dimensions (0 for a dense tensor)."""
    if isinstance(input, SparseCooTensor):
        return input._sp_indices.shape[0]
    return 2 if isinstance(input, SparseCsrTensor) else 0


@register()
def dense_dim(input) -> int:
    """Number of dense (trailing) dimensions."""
    return input._data.ndim - sparse_dim(input)


def _nnz(input) -> int:
    """Number of stored entries."""
    if isinstance(input, SparseCooTensor):
        return input._sp_indices.shape[1]
    if isinstance(input, SparseCsrTensor):
        return len(input._sp_col)
    raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend.")


Tensor._nnz = _nnz
# Dense tensors answer False; SparseCsrTensor overrides it.
Tensor.is_sparse_csr = property(lambda self: False, doc="Whether the layout is sparse_csr.")


# ---------------------------------------------------------------- products
def _mm_checks(input, mat2, name):
    if not isinstance(mat2, Tensor) or isinstance(mat2, (SparseCooTensor, SparseCsrTensor)):
        raise NotImplementedError(f"glasstorch: {name} supports sparse @ dense only")
    if input._data.ndim != 2 or sparse_dim(input) != 2:
        raise RuntimeError(f"{name}: expected a 2-D sparse matrix, got "
                           f"{input._data.ndim}-D with sparse_dim {sparse_dim(input)}")
    if mat2._data.ndim != 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "1)" if mat2._data.ndim == 1 else f"{name}: mat2 must be a matrix")
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                           f"{input._data.shape[1]}, got {mat2._data.shape[0]}")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype} but found {mat2.dtype}")


def _sparse_mm(input, mat2, node_cls, name):
    if isinstance(input, SparseCsrTensor):
        input = to_sparse(input)
    _mm_checks(input, mat2, name)
    idx, vals = input._sp_indices, input._sp_values._data
    out = wrap(result_array(_mm_arrays(idx, vals, mat2._data, input._data.shape[0]),
                            input.dtype))
    if needs_grad(input, mat2):
        record(out, node_cls, (input, mat2), self=input, mat2=mat2)
    return out


def spmm(input, mat2, out_dtype=None, *, out=None):
    """sparse (COO or CSR) @ dense; the sparse side's gradient is dense, as torch.mm's."""
    from .linalg import no_out_dtype
    no_out_dtype("mm", out_dtype)
    return finish(_sparse_mm(input, mat2, MmBackward0, "mm"), out)


def sparse_mm(sparse, dense, reduce=None):
    """``torch.sparse.mm``: sparse @ dense; the sparse side's gradient keeps its pattern."""
    if reduce is not None:
        raise NotImplementedError("glasstorch: torch.sparse.mm(reduce=...) is not supported")
    return _sparse_mm(sparse, dense, SparseAddmmBackward0, "sparse.mm")


def dense_sparse_mm(dense, sparse):
    """dense @ sparse as (sparse^T @ dense^T)^T."""
    if not isinstance(sparse, SparseCooTensor):
        raise NotImplementedError("glasstorch: dense @ sparse needs a COO right operand")
    if not isinstance(dense, Tensor):
        return NotImplemented
    return spmm(sparse_t(sparse), dense.t()).t()


def sparse_t(input):
    """Transpose of a 2-D COO tensor (indices swapped, no longer coalesced)."""
    if sparse_dim(input) != 2 or input._data.ndim != 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"self is {sparse_dim(input)} sparse and {dense_dim(input)} dense")
    shape = input._data.shape[::-1]
    out = make_coo(input._sp_indices[::-1].copy(), input._sp_values.detach(), shape,
                   input._sp_coalesced and 0 in shape)
    if needs_grad(input):
        record(out, TBackward0, (input,))
    return out


def sparse_transpose(input, dim0, dim1):
    """A COO tensor with sparse dims ``dim0`` and ``dim1`` swapped (their index rows and
    sizes exchanged; no longer coalesced unless they are one dim)."""
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    sd = sparse_dim(input)
    if d0 == d1:
        return input
    if d0 >= sd or d1 >= sd:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
    indices = input._sp_indices.copy()
    indices[[d0, d1]] = indices[[d1, d0]]
    shape = list(input._data.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    out = make_coo(indices, input._sp_values.detach(), tuple(shape), False)
    if needs_grad(input):
        record(out, TransposeBackward0, (input,), dim0=d0, dim1=d1)
    return out


class TransposeBackward0(Node):
    def backward(self, grad):
        return grad.transpose(self._saved_dim0, self._saved_dim1)


# ---------------------------------------------------------------- arithmetic
def sparse_clone(input):
    """A copy of a COO tensor (history kept, like Tensor.clone)."""
    out = make_coo(input._sp_indices.copy(), wrap(input._sp_values._data.copy()),
                   input._data.shape, input._sp_coalesced)
    if needs_grad(input):
        record(out, CoalesceBackward0, (input,))  # identity backward
    return out


def sparse_to(input, *args, **kwargs):
    """``to(dtype)`` for sparse tensors (the device is always the CPU)."""
    from .copying import _parse_to
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    dtype, _device = _parse_to(args, kwargs)
    if (dtype is None or dtype is input.dtype) and not copy:
        return input
    if isinstance(input, SparseCsrTensor):
        return make_csr(input._sp_crow, input._sp_col, input._sp_values.to(dtype),
                        input._data.shape)
    out = make_coo(input._sp_indices, wrap(input._sp_values._data.astype(
        (dtype or input.dtype).np)), input._data.shape, input._sp_coalesced)
    if needs_grad(input):
        record(out, CoalesceBackward0, (input,))  # the engine casts the grad back
    return out


def sparse_mul_scalar(input, other):
    """sparse * Python number (torch also multiplies sparse by tensors; not supported here)."""
    if isinstance(other, Tensor):
        if other._data.ndim:
            raise NotImplementedError("glasstorch: sparse * tensor is not supported; only "
                                      "multiplication by a number")
        other = other.item()
    v = input._sp_values._data
    res_dt = _dt.result_dtype(input, other)
    out = make_coo(input._sp_indices, wrap(result_array(compute_array(v) * other, res_dt)),
                   input._data.shape, input._sp_coalesced)
    if needs_grad(input):
        record(out, MulBackward0, (input,), other=other)
    return out


def sparse_add(a, b, alpha=1):
    """sparse + sparse (sparse result) and dense + sparse (dense result), like torch."""
    a_sp, b_sp = isinstance(a, SparseCooTensor), isinstance(b, SparseCooTensor)
    if a_sp and not b_sp:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if not isinstance(a, Tensor):
        return NotImplemented
    if tuple(a._data.shape) != tuple(b._data.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._data.shape)} while other has size "
                           f"{list(b._data.shape)}")
    res_dt = _dt.result_dtype(a, b)
    bv = compute_array(b._sp_values._data) * alpha if alpha != 1 else b._sp_values._data
    if a_sp:
        if sparse_dim(a) != sparse_dim(b):
            raise RuntimeError("add: expected 'self' and 'other' to have same sparse and dense "
                               "dimensions")
        idx = xp.concatenate([a._sp_indices, b._sp_indices], axis=1)
        vals = xp.concatenate([a._sp_values._data.astype(res_dt.np),
                               xp.asarray(bv).astype(res_dt.np)])
        ci, cv = _coalesce_arrays(idx, vals, a._data.shape)
        out = make_coo(ci, wrap(cv), a._data.shape, True)
    else:
        dense = compute_array(a._data).astype(xp.result_type(compute_array(a._data),
                                                             compute_array(bv)), copy=True)
        xp.add.at(dense, tuple(b._sp_indices), compute_array(bv))
        out = wrap(result_array(dense, res_dt))
    if needs_grad(a, b):
        record(out, AddBackward0, (a, b), alpha=alpha)
    return out


# ---------------------------------------------------------------- reductions
def sparse_sum(input, dim=None, *, dtype=None):
    """``torch.sparse.sum``: all entries (a dense 0-d tensor) or over ``dim`` (sparse unless
    every sparse dim is reduced)."""
    _check_coo(input, "sparse.sum")
    if dtype is not None and dtype is not input.dtype:
        input = sparse_to(input, dtype)
    idx, vals = input._sp_indices, input._sp_values._data
    shape = tuple(input._data.shape)
    acc = compute_array(vals)
    if dim is None:
        out = wrap(result_array(acc.sum(axis=tuple(range(acc.ndim))), input.dtype))
        if needs_grad(input):
            record(out, SumBackward0, (input,), indices=_pattern(input), shape=shape)
        return out
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    nd = len(shape)
    dims = sorted({wrap_dim(d, nd) for d in dims})
    sd = idx.shape[0]
    keep = [d for d in range(sd) if d not in dims]
    dense_red = [d for d in dims if d >= sd]
    red_vals = acc.sum(axis=tuple(d - sd + 1 for d in dense_red)) if dense_red else acc
    if keep:
        new_shape = tuple(shape[d] for d in keep) + tuple(
            shape[d] for d in range(sd, nd) if d not in dense_red)
        ci, cv = _coalesce_arrays(idx[keep], red_vals, new_shape)
        out = make_coo(ci, wrap(result_array(cv, input.dtype)), new_shape, True)
    else:
        out = wrap(result_array(red_vals.sum(axis=0), input.dtype))
    if needs_grad(input):
        record(out, SparseSumBackward0, (input,), indices=_pattern(input), shape=shape, keep=keep,
               dense_red=dense_red)
    return out



# ---------------------------------------------------------------- softmax over stored entries
def _groups(idx, shape, dim):
    """Group id of each entry: entries that share every sparse index but ``dim``."""
    sd = idx.shape[0]
    others = [d for d in range(sd) if d != dim]
    if not others:
        return xp.zeros(idx.shape[1], _int64), 1
    key = _linear(idx[others], tuple(shape[d] for d in others))
    uniq, inv = xp.unique(key, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _group_sum(x, groups, n):
    out = xp.zeros((n,) + x.shape[1:], x.dtype)
    xp.add.at(out, groups, x)
    return out[groups]


def _softmax_values(vals, idx, shape, dim, log):
    sd = idx.shape[0]
    if dim >= sd:  # a dense dim: an ordinary softmax inside each entry's values
        ax = dim - sd + 1
        z = vals - vals.max(axis=ax, keepdims=True)
        lse = xp.log(xp.exp(z).sum(axis=ax, keepdims=True))
        return z - lse if log else xp.exp(z - lse)
    groups, n = _groups(idx, shape, dim)
    m = xp.full((n,) + vals.shape[1:], -xp.inf, vals.dtype)
    xp.maximum.at(m, groups, vals)
    z = vals - m[groups]
    e = xp.exp(z)
    s = _group_sum(e, groups, n)
    return z - xp.log(s) if log else e / s


class SparseSoftmaxBackward0(Node):
    _log = False

    def backward(self, grad):
        idx, shape, dim = self._saved_indices, self._saved_shape, self._saved_dim
        y = self._saved_result
        g = compute_array(_grad_at(grad, idx, shape[:idx.shape[0]]))
        sd = idx.shape[0]
        if dim >= sd:
            ax = dim - sd + 1
            tot = (g if self._log else g * y).sum(axis=ax, keepdims=True)
        else:
            groups, n = _groups(idx, shape, dim)
            tot = _group_sum(g if self._log else g * y, groups, n)
        gin = g - xp.exp(y) * tot if self._log else y * (g - tot)
        return make_coo(idx, wrap(result_array(gin, grad.dtype)), shape, True)


class SparseLogSoftmaxBackward0(SparseSoftmaxBackward0):
    _log = True


def _sparse_softmax(input, dim, dtype, log):
    _check_coo(input, "sparse.softmax")
    if dtype is not None and dtype is not input.dtype:
        input = sparse_to(input, dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"softmax is not implemented for {input.dtype} sparse tensors")
    shape = tuple(input._data.shape)
    dim = wrap_dim(dim, len(shape))
    c = coalesce(input)
    idx = c._sp_indices
    y = _softmax_values(compute_array(c._sp_values._data), idx, shape, dim, log)
    out = make_coo(idx, wrap(result_array(y, input.dtype)), shape, True)
    if needs_grad(c):
        record(out, SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0, (c,),
               indices=idx, shape=shape, dim=dim, result=y)
    return out


def sparse_softmax(input, dim, dtype=None):
    """``torch.sparse.softmax``: softmax over the stored entries along ``dim`` (missing
    entries count as -inf, so they stay absent)."""
    return _sparse_softmax(input, dim, dtype, False)


def sparse_log_softmax(input, dim, dtype=None):
    """``torch.sparse.log_softmax``: log of ``sparse_softmax``."""
    return _sparse_softmax(input, dim, dtype, True)
