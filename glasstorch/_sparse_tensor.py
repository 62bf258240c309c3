"""Sparse tensors: COO (``torch.sparse_coo``) and CSR (``torch.sparse_csr``) layouts.

A sparse tensor is a ``Tensor`` subclass that keeps its entries in component
tensors (COO: ``_sp_indices``, an int64 ``(sparse_dim, nnz)`` array, and
``_sp_values``, a ``(nnz, *dense_shape)`` Tensor; CSR: ``crow``/``col``/values).
Its ``_data`` is a zero-strided placeholder of the full shape and dtype: the
metadata every Tensor method and the autograd engine read (``shape``, ``dtype``,
``ndim``, ``numel``) comes from it for free, while any NumPy math on it raises
``NotImplementedError``, so a dense operator that does not know about sparse
inputs fails loudly instead of computing on zeros.

The operators themselves live in ``glasstorch._ops.sparse``; the methods here
only forward to them where the subclass must override a dense Tensor method.
"""

from __future__ import annotations

from ._core import dtype as _dt
from ._core.backend import xp
from ._tensor import Tensor, _new, _wrap_dim, sparse_coo, sparse_csr

__all__ = ["SparseCooTensor", "SparseCsrTensor", "sparse_coo", "sparse_csr"]


class _SparseShell(xp.ndarray):
    """Placeholder array of a sparse tensor: has shape and dtype, refuses all math."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(
            f"glasstorch: '{ufunc.__name__}' is not supported on sparse tensors; convert with "
            ".to_dense() first")

    def __array_function__(self, func, types, args, kwargs):
        raise NotImplementedError(
            f"glasstorch: '{func.__name__}' is not supported on sparse tensors; convert with "
            ".to_dense() first")


def _shell(shape, np_dtype):
    return xp.broadcast_to(xp.zeros((), np_dtype), tuple(shape)).view(_SparseShell)


def _init_common(t, shape, np_dtype):
    t._data = _shell(shape, np_dtype)
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._base = None
    t._version_counter = None


def make_coo(indices, values, shape, coalesced=False):
    """Build a COO tensor from an int64 index array and a values Tensor (no checks)."""
    t = _new(SparseCooTensor)
    _init_common(t, shape, values._data.dtype)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = bool(coalesced)
    return t


def make_csr(crow, col, values, shape):
    """Build a CSR tensor from int64 crow/col arrays and a values Tensor (no checks)."""
    t = _new(SparseCsrTensor)
    _init_common(t, shape, values._data.dtype)
    t._sp_crow = crow
    t._sp_col = col
    t._sp_values = values
    return t


def _no_data_ptr(self):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _no_storage(self):
    raise NotImplementedError("Cannot access storage of SparseTensorImpl")


def _ops():
    from ._ops import sparse
    return sparse


class _SparseBase(Tensor):
    """What COO and CSR tensors share: metadata overrides and printing."""

    _layout_name = ""

    data_ptr = _no_data_ptr
    untyped_storage = _no_storage

    def stride(self, dim=None):
        # torch reports zero strides for sparse tensors
        if dim is None:
            return (0,) * self._data.ndim
        _wrap_dim(dim, self._data.ndim)
        return 0

    def storage_offset(self) -> int:
        return 0

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def numpy(self, *, force=False):
        raise RuntimeError(f"can't convert {self._layout_name} layout tensor to numpy. Use "
                           "Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("glasstorch: a sparse tensor cannot be converted to a NumPy array; "
                        "use .to_dense() first")

    def item(self):
        return self.to_dense().item()

    def tolist(self):
        raise RuntimeError("tolist() is not supported for sparse tensors; use "
                           ".to_dense().tolist()")

    def __deepcopy__(self, memo):
        out = self.clone()
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, proto):
        from .serialization import _rebuild_sparse_tensor
        return (_rebuild_sparse_tensor, (self.layout, self._components()))

    def _repr_suffixes(self):
        nnz = self._nnz()
        out = [f"size={tuple(self._data.shape)}", f"nnz={nnz}"]
        dt = self.dtype
        default = _dt.get_default_dtype()
        if dt is not default and dt is not _dt.int64 and dt is not _dt.bool_ and \
                dt is not (_dt.complex128 if default is _dt.float64 else _dt.complex64):
            out.append(f"dtype={dt}")
        out.append(f"layout={self.layout}")
        if self.grad_fn is not None:
            out.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self._requires_grad:
            out.append("requires_grad=True")
        return out

    def _repr_with(self, parts, force_newline):
        from ._tensor_str import PRINT_OPTS
        text = "tensor(" + ",\n       ".join(
            name + "=" + _inner_repr(arr, 7 + len(name) + 1 + 7) for name, arr in parts)
        indent = 7
        last = len(text) - text.rfind("\n") + 1
        out = [text]
        for suffix in self._repr_suffixes():
            if force_newline or last + len(suffix) + 2 > PRINT_OPTS.linewidth:
                out.append(",\n" + " " * indent + suffix)
                last = indent + len(suffix)
                force_newline = False
            else:
                out.append(", " + suffix)
                last += len(suffix) + 2
        out.append(")")
        return "".join(out)


def _inner_repr(arr, indent):
    """``tensor([...])`` for a component, without dtype suffix (torch prints it once, outside)."""
    from ._tensor_str import _body_str
    if arr.size == 0:
        return f"tensor([], size={tuple(arr.shape)})"
    return "tensor(" + _body_str(arr, indent) + ")"


class SparseCooTensor(_SparseBase):
    """A tensor in ``torch.sparse_coo`` layout (see ``torch.sparse_coo_tensor``)."""

    _layout_name = "sparse_coo"
    layout = property(lambda self: sparse_coo)
    is_sparse = property(lambda self: True)

    def __repr__(self, *, tensor_contents=None):
        return self._repr_with((("indices", self._sp_indices),
                                ("values", self._sp_values._data)), True)

    __str__ = __repr__

    # Dense Tensor methods that must not touch _data: forward to the sparse operators.
    def detach(self):
        return make_coo(self._sp_indices, self._sp_values.detach(), self._data.shape,
                        self._sp_coalesced)

    def clone(self, *, memory_format=None):
        return _ops().sparse_clone(self)

    def to(self, *args, **kwargs):
        return _ops().sparse_to(self, *args, **kwargs)

    def __matmul__(self, other):
        return _ops().spmm(self, other)

    def __rmatmul__(self, other):
        return _ops().dense_sparse_mm(other, self)

    def mm(self, mat2):
        return _ops().spmm(self, mat2)

    def matmul(self, other):
        return _ops().spmm(self, other)

    def __add__(self, other):
        return _ops().sparse_add(self, other)

    def __radd__(self, other):
        return _ops().sparse_add(other, self)

    add = __add__

    def __sub__(self, other):
        return _ops().sparse_add(self, other, alpha=-1)

    def __rsub__(self, other):
        return _ops().sparse_add(other, self, alpha=-1)

    def __mul__(self, other):
        return _ops().sparse_mul_scalar(self, other)

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            return NotImplemented
        return _ops().sparse_mul_scalar(self, 1.0 / other)

    div = __truediv__

    def __neg__(self):
        return _ops().sparse_mul_scalar(self, -1)

    neg = __neg__

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if keepdim:
            raise NotImplementedError("glasstorch: sum(keepdim=True) is not supported on "
                                      "sparse tensors")
        return _ops().sparse_sum(self, dim, dtype=dtype)

    def t(self):
        return _ops().sparse_t(self)

    def transpose(self, dim0, dim1):
        return _ops().sparse_transpose(self, dim0, dim1)

    @property
    def T(self):  # noqa: N802  (torch's name)
        if self.dim() <= 2:
            return self.t() if self.dim() == 2 else self
        out, n = self, self.dim()
        for i in range(n // 2):  # all dims reversed
            out = _ops().sparse_transpose(out, i, n - 1 - i)
        return out

    @property
    def mT(self):  # noqa: N802
        return _ops().sparse_transpose(self, -2, -1)

    @property
    def mH(self):  # noqa: N802
        t = self.mT
        return t.conj() if self.dtype.is_complex else t

    def _indices(self):
        from ._tensor import _wrap
        return _wrap(self._sp_indices)

    def _components(self):
        """What torch pickles for a COO tensor: (indices, values, size, is_coalesced)."""
        return (self._indices(), self._values(), self.shape, self._sp_coalesced)

    def _values(self):
        return self._sp_values.detach()


class SparseCsrTensor(_SparseBase):
    """A 2-D tensor in ``torch.sparse_csr`` layout (see ``torch.sparse_csr_tensor``)."""

    def _components(self):
        """What torch pickles for a CSR tensor: (crow_indices, col_indices, values, size)."""
        from ._tensor import _wrap
        return (_wrap(self._sp_crow), _wrap(self._sp_col), self._sp_values.detach(), self.shape)

    _layout_name = "sparse_csr"
    layout = property(lambda self: sparse_csr)
    is_sparse_csr = property(lambda self: True)

    def __repr__(self, *, tensor_contents=None):
        return self._repr_with((("crow_indices", self._sp_crow), ("col_indices", self._sp_col),
                                ("values", self._sp_values._data)), False)

    __str__ = __repr__

    def detach(self):
        return make_csr(self._sp_crow, self._sp_col, self._sp_values.detach(), self._data.shape)

    def clone(self, *, memory_format=None):
        return make_csr(self._sp_crow.copy(), self._sp_col.copy(), self._sp_values.clone(),
                        self._data.shape)

    def to(self, *args, **kwargs):
        return _ops().sparse_to(self, *args, **kwargs)

    def __matmul__(self, other):
        return _ops().spmm(self, other)

    def mm(self, mat2):
        return _ops().spmm(self, mat2)

    matmul = mm


def _dtype_shorthand(name, dt):
    def convert(self, memory_format=None):
        return _ops().sparse_to(self, dt)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``self.to({dt})`` for a sparse tensor."
    setattr(SparseCooTensor, name, convert)
    setattr(SparseCsrTensor, name, convert)


for _name, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("bfloat16", _dt.bfloat16), ("long", _dt.int64), ("int", _dt.int32)):
    _dtype_shorthand(_name, _d)
