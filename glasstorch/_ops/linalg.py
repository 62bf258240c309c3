"""Linear algebra: products (matmul, mm, einsum...), decompositions and norms.

The flat-namespace operators (``torch.matmul``, ``torch.det``...) are listed in
``__all__``; the ``torch.linalg`` functions are defined here too and exported by
``glasstorch.linalg`` (see ``LINALG``). Products check shapes and dtypes the way
torch does before handing the arithmetic to NumPy: torch's matrix products do not
promote dtypes, so neither do these. float16/bfloat16 products are computed in
float32 and rounded once. Decompositions use NumPy's batched LAPACK routines,
which keep float32 and complex64 in single precision.
"""

from __future__ import annotations

from collections import namedtuple

from .._core import dtype as _dt
from .._core.warn import warn_user
from ._common import (
    _SHORT,
    Node,
    Tensor,
    binary_operands,
    broadcast_error,
    compute_array,
    compute_dtype,
    finish,
    needs_grad,
    record,
    register,
    register_inplace,
    result_array,
    view_of,
    wrap,
    wrap_dim,
    xp,
)
from ._common import _attach as _common_attach
from .reduction import _finish_tuple
from .reduction import _NoDerivative as _NoDerivativeNode
from .views import SqueezeBackward1, UnsafeViewBackward0
from .views import diagonal as _diagonal_view

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm",
           "addmv", "addbmm", "baddbmm", "addr", "einsum", "tensordot", "kron", "cross",
           "trace", "inverse", "det", "logdet", "slogdet", "svd", "pinverse", "matrix_power",
           "norm", "dist", "cdist", "chain_matmul", "cholesky", "qr", "orgqr", "geqrf",
           "ormqr"]

# torch.linalg name -> function in this module (glasstorch.linalg exports these)
LINALG = {}

_by_np = _dt._by_np
_np_linalg = xp.linalg
_LOW = (_dt.float16, _dt.bfloat16)
_INF = float("inf")


class LinAlgError(RuntimeError):
    """A linear algebra routine failed (singular or non-definite input), like torch's."""


# torch's class is torch._C._LinAlgError (torch.linalg re-exports it): the same name here, so
# messages, reprs and pickles name it as torch does
LinAlgError.__module__, LinAlgError.__name__ = "glasstorch._C", "_LinAlgError"
LinAlgError.__qualname__ = LinAlgError.__name__


def _linalg(name=None):
    """Register ``fn`` as ``glasstorch.linalg.<name>``."""
    def deco(fn):
        LINALG[name or fn.__name__] = fn
        return fn
    return deco


# named results, mirroring torch.return_types
slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
svd_result = namedtuple("svd", ["U", "S", "V"])
qr_result = namedtuple("qr", ["Q", "R"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _dtype(a):
    return _by_np[a.dtype]


_TYPE_NAMES = {_dt.float32: "float", _dt.float64: "double", _dt.float16: "c10::Half",
               _dt.bfloat16: "c10::BFloat16", _dt.complex64: "c10::complex<float>",
               _dt.complex128: "c10::complex<double>", _dt.int64: "long int",
               _dt.int32: "int", _dt.int16: "short int", _dt.int8: "signed char",
               _dt.uint8: "unsigned char", _dt.bool_: "bool"}


def _same_dtype(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_TYPE_NAMES[_dtype(a)]} != {_TYPE_NAMES[_dtype(b)]}")


def _no_bool(a, kernel, b=None):
    # torch's bool check sits in the kernel, which empty products never reach
    if a.dtype == xp.bool_ and (b is None or (a.size and b.size)):
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _product(fn, *arrays):
    """Run a NumPy product in the compute dtype and round once to the input dtype."""
    dt = _dtype(arrays[0])
    c = compute_dtype(dt)
    if c != dt.np:
        return result_array(fn(*(a.astype(c) for a in arrays)), dt)
    return fn(*arrays)


def _mm_error(a_shape, b_shape):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                        f"({a_shape[0]}x{a_shape[1]} and {b_shape[0]}x{b_shape[1]})")


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _batch_shape(sa, sb):
    """Broadcast two batch shapes, with torch's message when they do not."""
    try:
        return xp.broadcast_shapes(sa, sb)
    except ValueError:
        raise broadcast_error(xp.broadcast_to(0, sa), xp.broadcast_to(0, sb)) from None


# ----------------------------------------------------------------------------- products

@register("__matmul__")
def matmul(input, other, *, out=None):
    """Matrix product with torch's rules for 1-D (vector), 2-D and batched operands."""
    for pos, (name, arg) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(arg, Tensor):
            kind = type(arg)
            shown = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"matmul(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {shown}")
    if type(input) is not Tensor and input.is_sparse:
        from .sparse import spmm
        return spmm(input, other)
    a, b = input._data, other._data
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other, out=out)
    if db == 1:
        if a.shape[-1] != b.shape[0]:
            rows = _prod(a.shape[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{a.shape[-1]}), "
                               f"vec ({b.shape[0]})")
    elif db == 2:
        if a.shape[-1] != b.shape[0]:
            rows = 1 if da == 1 else _prod(a.shape[:-1])
            raise _mm_error((rows, a.shape[-1]), b.shape)
    else:
        batch = _batch_shape(a.shape[:-2], b.shape[:-2])
        if a.shape[-1] != b.shape[-2]:
            n = _prod(batch)
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{n}, {a.shape[-1]}] but got: [{n}, {b.shape[-2]}].")
    _same_dtype(a, b)
    _no_bool(a, "addmm_impl_cpu_" if db <= 2 else "bmm", b)
    if needs_grad(input, other):
        return finish(_matmul_graph(input, other), out)
    return finish(wrap(_product(xp.matmul, a, b)), out)


def _unsafe_view(t, shape):
    """``t`` (a fresh contiguous result) reshaped, recorded as torch's _unsafe_view."""
    r = wrap(t._data.reshape(shape))
    if needs_grad(t):
        record(r, UnsafeViewBackward0, (t,), self_sym_sizes=t.shape)
    return r


class SqueezeBackward4(SqueezeBackward1):
    pass


def _matmul_graph(input, other):
    """matmul through the recorded primitives torch uses (mm/mv/bmm and views), so the
    graph has torch's nodes."""
    da, db = input._data.ndim, other._data.ndim
    sa, sb = input._data.shape, other._data.shape
    if da == 2 and db == 2:
        return mm(input, other)
    if db == 1:
        if da == 2:
            return mv(input, other)
        return _unsafe_view(mv(input.reshape(_prod(sa[:-1]), sa[-1]), other), sa[:-1])
    if da == 1 and db == 2:
        p = mm(input.unsqueeze(0), other)
        out = view_of(p, p._data.reshape(p._data.shape[1:]))
        record(out, SqueezeBackward4, (p,), self_sym_sizes=p.shape, dim=0)
        return out
    if db == 2:
        return _unsafe_view(mm(input.reshape(_prod(sa[:-1]), sa[-1]), other),
                            sa[:-1] + sb[-1:])
    if da == 1:
        bt = other.mT
        return _unsafe_view(mv(bt.reshape(_prod(bt.shape[:-1]), sb[-2]), input),
                            sb[:-2] + sb[-1:])
    if da == 2:
        return _matmul_graph(other.mT, input.mT).mT.contiguous()
    batch = _batch_shape(sa[:-2], sb[:-2])
    n = _prod(batch)
    a3 = input.expand(batch + sa[-2:]).reshape(n, sa[-2], sa[-1])
    b3 = other.expand(batch + sb[-2:]).reshape(n, sb[-2], sb[-1])
    return _unsafe_view(bmm(a3, b3), batch + (sa[-2], sb[-1]))


def __rmatmul__(self, other):
    return matmul(other, self)


Tensor.__rmatmul__ = __rmatmul__
LINALG["matmul"] = matmul


def _require_dim(a, n, what):
    if a.ndim != n:
        raise RuntimeError(what)


def no_out_dtype(name, out_dtype):
    """torch's error for ``out_dtype=`` on CPU, where its ``aten::<name>.dtype`` kernels are
    not built (they serve CUDA's low-precision GEMMs)."""
    if out_dtype is not None:
        raise NotImplementedError(
            f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend. This "
            f"could be because the operator doesn't exist for this backend, or was omitted "
            f"during the selective/custom build process (if using custom build).")


@register()
def mm(input, mat2, out_dtype=None, *, out=None):
    """Product of two matrices (2-D only)."""
    no_out_dtype("mm", out_dtype)
    if type(input) is not Tensor and input.is_sparse:
        from .sparse import spmm
        return spmm(input, mat2)
    a, b = input._data, mat2._data
    _require_dim(a, 2, "self must be a matrix")
    _require_dim(b, 2, "mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise _mm_error(a.shape, b.shape)
    _same_dtype(a, b)
    _no_bool(a, "addmm_impl_cpu_", b)
    r = wrap(_product(xp.matmul, a, b))
    if needs_grad(input, mat2):
        record(r, MmBackward0, (input, mat2), self=input, mat2=mat2)
    return finish(r, out)


def _h(t):
    """The conjugate transpose of the last two dims (a plain transpose view when real)."""
    return t.mH if t.dtype.is_complex else t.mT


def _conj(t):
    return t.conj() if t.dtype.is_complex else t


def _wants(node, i):
    """Whether input ``i`` of ``node`` needs a gradient (skip the work otherwise)."""
    return node.next_functions[i][0] is not None


def _scale(g, s):
    return g if s == 1 else g * (s.conjugate() if isinstance(s, complex) else s)


def _column_major(t):
    """A matrix stored as the transpose of a contiguous one (``W.t()`` in F.linear)."""
    a = t._data
    return a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


def _mm_grad_mat1(grad, mat1, mat2):
    """grad @ mat2^H, produced in mat1's layout when mat1 is column-major (as torch), so
    a transposed parameter's gradient arrives contiguous through its TBackward0."""
    if _column_major(mat1):
        return mm(_conj(mat2), grad.t()).t()
    return mm(grad, _h(mat2))


def _mm_grad_mat2(grad, mat1, mat2):
    """mat1^H @ grad, in mat2's layout when mat2 is column-major (F.linear's weight)."""
    if _column_major(mat2):
        return mm(grad.t(), _conj(mat1)).t()
    return mm(_h(mat1), grad)


class MmBackward0(Node):
    def backward(self, grad):
        mat1, mat2 = self._saved_self, self._saved_mat2
        gs = _mm_grad_mat1(grad, mat1, mat2) if _wants(self, 0) else None
        gm = _mm_grad_mat2(grad, mat1, mat2) if _wants(self, 1) else None
        return gs, gm


class BmmBackward0(Node):
    def backward(self, grad):
        gs = bmm(grad, _h(self._saved_mat2)) if _wants(self, 0) else None
        gm = bmm(_h(self._saved_self), grad) if _wants(self, 1) else None
        return gs, gm


class MvBackward0(Node):
    def backward(self, grad):
        gs = grad.unsqueeze(-1) * _conj(self._saved_vec) if _wants(self, 0) else None
        gv = mv(_h(self._saved_self), grad) if _wants(self, 1) else None
        return gs, gv


class DotBackward0(Node):
    def backward(self, grad):
        gs = grad * _conj(self._saved_tensor) if _wants(self, 0) else None
        gt = grad * _conj(self._saved_self) if _wants(self, 1) else None
        return gs, gt


class VdotBackward0(Node):
    def backward(self, grad):
        gs = _conj(grad) * self._saved_other if _wants(self, 0) else None
        go = grad * self._saved_self if _wants(self, 1) else None
        return gs, go


def _check_bmm(a, b):
    _require_dim(a, 3, "batch1 must be a 3D tensor")
    _require_dim(b, 3, "batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
                           f"{b.shape[1]}].")
    _no_bool(a, "bmm", b)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_SHORT[_dtype(a)]} but found "
                           f"{_SHORT[_dtype(b)]}")


@register()
def bmm(input, mat2, out_dtype=None, *, out=None):
    """Batched matrix product of (b, n, m) and (b, m, p) tensors; no broadcasting."""
    no_out_dtype("bmm", out_dtype)
    a, b = input._data, mat2._data
    _check_bmm(a, b)
    r = wrap(_product(xp.matmul, a, b))
    if needs_grad(input, mat2):
        record(r, BmmBackward0, (input, mat2), self=input, mat2=mat2)
    return finish(r, out)


@register()
def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    a, v = input._data, vec._data
    _check_mv(a, v)
    r = wrap(_product(xp.matmul, a, v))
    if needs_grad(input, vec):
        record(r, MvBackward0, (input, vec), self=input, vec=vec)
    return finish(r, out)


def _check_mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat "
                           f"({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    if a.dtype != v.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_SHORT[_dtype(v)]}, {_SHORT[_dtype(a)]}, and {_SHORT[_dtype(v)]}")
    _no_bool(a, "addmv_impl_cpu", v)


def _check_dot(x, y, name):
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.dtype != y.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{_SHORT[_dtype(x)]} and {_SHORT[_dtype(y)]}")
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                           f"[{y.shape[0]}] to have the same number of elements, but got "
                           f"{x.shape[0]} and {y.shape[0]} elements respectively")
    _no_bool(x, "dot")


@register()
def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of one dtype."""
    x, y = input._data, tensor._data
    _check_dot(x, y, "dot")
    r = wrap(_product(xp.dot, x, y))
    if needs_grad(input, tensor):
        record(r, DotBackward0, (input, tensor), self=input, tensor=tensor)
    return finish(r, out)


@register()
def vdot(input, other, *, out=None):
    """Dot product with the first argument conjugated."""
    x, y = input._data, other._data
    _check_dot(x, y, "dot")
    r = wrap(_product(xp.vdot, x, y))
    if needs_grad(input, other):
        record(r, VdotBackward0, (input, other), self=input, other=other)
    return finish(r, out)


def _same_dtype_scalar(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_SHORT[_dtype(a)]} but found "
                           f"{_SHORT[_dtype(b)]}")


@register()
def inner(input, other, *, out=None):
    """Sum product over the last dimension of both inputs (a product when one is 0-d)."""
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        if needs_grad(input, other):
            return finish(input * other, out)
        x, y, dt = binary_operands(input, other)
        return finish(wrap(xp.multiply(x, y)), out)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a.shape)} and {list(b.shape)}")
    _same_dtype_scalar(a, b)
    _no_bool(a, "addmm_impl_cpu_", b)
    if needs_grad(input, other):
        k = a.shape[-1]
        p = mm(input.reshape(_prod(a.shape[:-1]), k), other.reshape(_prod(b.shape[:-1]), k).mT)
        return finish(p.reshape(a.shape[:-1] + b.shape[:-1]), out)
    return finish(wrap(_product(xp.inner, a, b)), out)


@register("ger")
def outer(input, vec2, *, out=None):
    """Outer product of two vectors (dtypes promote, as in a product)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                               f"{v._data.ndim}-D")
    if needs_grad(input, vec2):
        return finish(input.reshape(input._data.shape[0], 1) * vec2, out)
    x, y, dt = binary_operands(input, vec2)
    return finish(wrap(xp.multiply.outer(x, y)), out)


ger = outer


def _combine(input, prod, beta, alpha, dt, name):
    """beta * input + alpha * prod, broadcasting input to prod's shape."""
    c = input._data
    try:
        c = xp.broadcast_to(c, prod.shape)
    except ValueError:
        raise RuntimeError(f"{name}: the input of shape {list(c.shape)} can not be broadcast to "
                           f"{list(prod.shape)}") from None
    if dt is _dt.bool_:
        r = xp.logical_and(prod, bool(alpha))
        if beta:
            r = r | c
        return r
    cd = compute_dtype(dt)
    if dt._category < 2:
        beta, alpha = int(beta), int(alpha)
    r = prod.astype(cd, copy=False)
    if alpha != 1:
        r = r * xp.asarray(alpha).astype(cd)
    if beta != 0:
        cb = c.astype(cd, copy=False)
        r = r + (cb if beta == 1 else cb * xp.asarray(beta).astype(cd))
    return result_array(xp.asarray(r), dt)


def _check_add_dtype(input, a, name):
    if input._data.dtype != a.dtype:
        raise RuntimeError(f"{name} must have the same dtype, but got "
                           f"{_SHORT[_dtype(input._data)]} and {_SHORT[_dtype(a)]}")


@register()
def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2)."""
    no_out_dtype("addmm", out_dtype)
    a, b = mat1._data, mat2._data
    _require_dim(a, 2, "mat1 must be a matrix, got " + f"{a.ndim}-D tensor")
    _require_dim(b, 2, "mat2 must be a matrix, got " + f"{b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise _mm_error(a.shape, b.shape)
    _same_dtype(a, b)
    _check_add_dtype(input, a, "self and mat2")
    _no_bool(a, "addmm_impl_cpu_")
    prod = _product(xp.matmul, a, b)
    r = wrap(_combine(input, prod, beta, alpha, _dtype(a), "addmm"))
    if needs_grad(input, mat1, mat2):
        record(r, AddmmBackward0, (input, mat1, mat2), alpha=alpha, beta=beta, mat1=mat1,
               mat2=mat2)
    return finish(r, out)


class AddmmBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        mat1, mat2 = self._saved_mat1, self._saved_mat2
        gi = _scale(grad, self._saved_beta) if _wants(self, 0) else None
        g1 = _scale(_mm_grad_mat1(grad, mat1, mat2), alpha) if _wants(self, 1) else None
        g2 = _scale(_mm_grad_mat2(grad, mat1, mat2), alpha) if _wants(self, 2) else None
        return gi, g1, g2


@register()
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    if input._data.dtype != mat._data.dtype or mat._data.dtype != vec._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_SHORT[input.dtype]}, {_SHORT[mat.dtype]}, and {_SHORT[vec.dtype]}")
    _check_mv(mat._data, vec._data)
    prod = _product(xp.matmul, mat._data, vec._data)
    r = wrap(_combine(input, prod, beta, alpha, mat.dtype, "addmv"))
    if needs_grad(input, mat, vec):
        record(r, AddmvBackward0, (input, mat, vec), alpha=alpha, beta=beta, mat=mat, vec=vec)
    return finish(r, out)


class AddmvBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        gi = _scale(grad, self._saved_beta) if _wants(self, 0) else None
        gm = _scale(grad.unsqueeze(-1) * _conj(self._saved_vec), alpha) if _wants(self, 1) \
            else None
        gv = _scale(mv(_h(self._saved_mat), grad), alpha) if _wants(self, 2) else None
        return gi, gm, gv


@register()
def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2), batched."""
    no_out_dtype("baddbmm", out_dtype)
    a, b = batch1._data, batch2._data
    _check_bmm(a, b)
    if input._data.dtype != a.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{_TYPE_NAMES[input.dtype]}, batch1: {_TYPE_NAMES[_dtype(a)]}, "
                           f"batch2: {_TYPE_NAMES[_dtype(b)]}")
    prod = _product(xp.matmul, a, b)
    r = wrap(_combine(input, prod, beta, alpha, _dtype(a), "baddbmm"))
    if needs_grad(input, batch1, batch2):
        record(r, BaddbmmBackward0, (input, batch1, batch2), alpha=alpha, beta=beta,
               batch1=batch1, batch2=batch2)
    return finish(r, out)


class BaddbmmBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        gi = _scale(grad, self._saved_beta) if _wants(self, 0) else None
        g1 = _scale(bmm(grad, _h(self._saved_batch2)), alpha) if _wants(self, 1) else None
        g2 = _scale(bmm(_h(self._saved_batch1), grad), alpha) if _wants(self, 2) else None
        return gi, g1, g2


@register()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_i(batch1[i] @ batch2[i])."""
    a, b = batch1._data, batch2._data
    _check_bmm(a, b)
    _check_add_dtype(input, a, "self and mat2")
    dt = _dtype(a)
    prod = result_array(xp.matmul(compute_array(a), compute_array(b)).sum(axis=0), dt)
    r = wrap(_combine(input, prod, beta, alpha, dt, "addbmm"))
    if needs_grad(input, batch1, batch2):
        record(r, AddbmmBackward0, (input, batch1, batch2), alpha=alpha, beta=beta,
               batch1=batch1, batch2=batch2)
    return finish(r, out)


class AddbmmBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        gi = _scale(grad, self._saved_beta) if _wants(self, 0) else None
        g1 = g2 = None
        if _wants(self, 1):
            b2 = self._saved_batch2
            ge = grad.unsqueeze(0).expand((b2.shape[0],) + tuple(grad.shape))
            g1 = _scale(bmm(ge, _h(b2)), alpha)
        if _wants(self, 2):
            b1 = self._saved_batch1
            ge = grad.unsqueeze(0).expand((b1.shape[0],) + tuple(grad.shape))
            g2 = _scale(bmm(_h(b1), ge), alpha)
        return gi, g1, g2


@register()
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2); dtypes promote like elementwise ops."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    dt = _dt.result_dtype(input, vec1, vec2)
    if dt._category < 2 and dt is not _dt.bool_ and (isinstance(beta, float) or
                                                     isinstance(alpha, float)):
        which = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {which} must not be a "
                           f"floating point number.")
    x = vec1._data.astype(compute_dtype(dt), copy=False)
    y = vec2._data.astype(compute_dtype(dt), copy=False)
    prod = xp.multiply.outer(x, y)
    inp = wrap(input._data.astype(dt.np, copy=False))
    r = wrap(_combine(inp, prod, beta, alpha, dt, "addr"))
    if needs_grad(input, vec1, vec2):
        record(r, AddrBackward0, (input, vec1, vec2), alpha=alpha, beta=beta, vec1=vec1,
               vec2=vec2)
    return finish(r, out)


class AddrBackward0(Node):
    def backward(self, grad):
        alpha = self._saved_alpha
        gi = _scale(grad, self._saved_beta) if _wants(self, 0) else None
        g1 = _scale((grad * _conj(self._saved_vec2)).sum(1), alpha) if _wants(self, 1) else None
        g2 = _scale((_conj(self._saved_vec1).unsqueeze(1) * grad).sum(0), alpha) \
            if _wants(self, 2) else None
        return gi, g1, g2


for _fn in (addmm, addmv, baddbmm, addbmm, addr):
    register_inplace(_fn)


# ----------------------------------------------------------------------------- einsum & co

def _int_sum_dtype(dt):
    # torch's sum turns bool/integers into int64
    return _dt.int64 if dt._category < 2 else dt


def einsum(equation, *operands):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` (operands as varargs or a list)."""
    if not isinstance(equation, str):
        # sublist form: einsum(op0, [0, 1], op1, [1, 2], [0, 2])
        args = (equation,) + operands
        n = len(args) // 2
        if needs_grad(*args[0:2 * n:2]):
            return einsum(_sublist_equation(args, n), *args[0:2 * n:2])
        arrays = [args[2 * i]._data for i in range(n)]
        dt = arrays[0].dtype
        pairs = [x for i in range(n) for x in (compute_array(arrays[i]), args[2 * i + 1])]
        return wrap(result_array(xp.asarray(xp.einsum(*pairs, *args[2 * n:])), _by_np[dt]))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    arrays = [op._data for op in operands]
    sizes = {}
    for i, (term, a) in enumerate(zip(terms, arrays)):
        letters = term.replace("...", "")
        if "..." not in term and len(letters) != a.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) does not match the number of dimensions "
                               f"({a.ndim}) for operand {i} and no ellipsis was given")
        if "..." in term and len(letters) > a.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) is more than the number of dimensions "
                               f"({a.ndim}) for operand {i}")
        dims = a.shape[:len(letters)] if not term.startswith("...") else \
            a.shape[a.ndim - len(letters):]
        if "..." in term and not term.startswith("...") and not term.endswith("..."):
            k = term.index("...")
            dims = a.shape[:k] + a.shape[a.ndim - (len(letters) - k):]
        elif term.endswith("...") and "..." in term:
            dims = a.shape[:len(letters)]
        for ch, n in zip(letters, dims):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   f"equation string, subscripts must be in [a-zA-Z]")
            seen = sizes.get((i, ch))
            if seen is not None and seen != n:
                raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {i} but "
                                   f"the sizes don't match, {seen} != {n}")
            sizes[(i, ch)] = n
    if arrow:
        out_letters = set(rhs.replace("...", ""))
    else:
        counts = {}
        for ch in lhs.replace(",", "").replace("...", ""):
            counts[ch] = counts.get(ch, 0) + 1
        out_letters = {ch for ch, c in counts.items() if c == 1}
    # result dtype: operands summed on their own go through sum (ints -> int64); a
    # contraction between operands is a bmm, which refuses mixed dtypes
    dts = []
    contracted = False
    for i, term in enumerate(terms):
        mine = set(term.replace("...", ""))
        others = set("".join(t for j, t in enumerate(terms) if j != i).replace("...", ""))
        dt = _dtype(arrays[i])
        if mine - out_letters - others:
            dt = _int_sum_dtype(dt)
        if (mine & others) - out_letters:
            contracted = True
        dts.append(dt)
    if contracted:
        if any(d is not dts[0] for d in dts):
            raise RuntimeError(f"expected scalar type {_SHORT[dts[0]]} but found "
                               f"{_SHORT[next(d for d in dts if d is not dts[0])]}")
        if dts[0] is _dt.bool_:
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    dt = dts[0]
    for d in dts[1:]:
        dt = _dt.promote_types(dt, d)
    cd = compute_dtype(dt)
    try:
        r = xp.einsum(eq, *[a.astype(cd, copy=False) for a in arrays])
    except ValueError as e:
        raise RuntimeError(f"einsum(): {e}") from None
    r = wrap(result_array(xp.asarray(r), dt))
    if needs_grad(*operands):
        spec = _explicit_einsum(terms, rhs if arrow else None, arrays)
        record(r, EinsumBackward, operands, spec=spec,
               **{f"op{i}": t for i, t in enumerate(operands)})
    return r


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args, n):
    def term(sub):
        return "".join("..." if x is Ellipsis else _LETTERS[x] for x in sub)
    eq = ",".join(term(args[2 * i + 1]) for i in range(n))
    return eq + ("->" + term(args[2 * n]) if len(args) > 2 * n else "")


def _explicit_einsum(terms, rhs, arrays):
    """Per-operand letter lists and the output's, with '...' spelled out in free letters
    (right-aligned like broadcasting), plus each letter's (broadcast) size."""
    used = set("".join(terms) + (rhs or ""))
    free = [c for c in _LETTERS if c not in used]
    ell_rank = max((a.ndim - len(t.replace("...", "")) for t, a in zip(terms, arrays)
                    if "..." in t), default=0)
    ell = "".join(free[:ell_rank])
    free = free[ell_rank:]
    letters, sizes = [], {}
    for t, a in zip(terms, arrays):
        if "..." in t:
            k = a.ndim - len(t.replace("...", ""))
            t = t.replace("...", ell[ell_rank - k:])
        letters.append(t)
        for ch, n in zip(t, a.shape):
            sizes[ch] = max(sizes.get(ch, 1), n)
    if rhs is None:
        counts = {}
        for ch in "".join(terms).replace("...", ""):
            counts[ch] = counts.get(ch, 0) + 1
        out = ell + "".join(sorted((c for c, k in counts.items() if k == 1),
                                   key=_LETTERS.index))
    else:
        out = rhs.replace("...", ell)
    return letters, out, sizes, "".join(free)


class EinsumBackward(Node):
    """Each operand's gradient is itself an einsum of the output gradient with the other
    operands; repeated letters (diagonals) go through identity matrices and letters summed
    away from one operand only through ones."""

    def backward(self, grad):
        letters, out, sizes, free = self._saved_spec
        ops = [getattr(self, f"_saved_op{i}") for i in range(len(letters))]
        ops = [o if tuple(o.shape) == tuple(sizes[c] for c in t) else
               o.expand(tuple(sizes[c] for c in t)) for o, t in zip(ops, letters)]
        grads = []
        for i, term in enumerate(letters):
            if not _wants(self, i):
                grads.append(None)
                continue
            terms = [out] + [t for j, t in enumerate(letters) if j != i]
            args = [grad] + [_conj(o).to(grad.dtype) for j, o in enumerate(ops) if j != i]
            target, fresh = [], iter(free)
            for ch in term:
                if ch in target:
                    f = next(fresh)
                    terms.append(ch + f)
                    args.append(_eye(sizes[ch], sizes[ch], grad))
                    target.append(f)
                else:
                    target.append(ch)
            present = set("".join(terms))
            for ch in set(term) - present:
                terms.append(ch)
                args.append(wrap(xp.ones(sizes[ch], grad._data.dtype)))
            grads.append(einsum(",".join(terms) + "->" + "".join(target), *args))
        return tuple(grads)


def tensordot(a, b, dims=2, out=None):
    """Sum product over the last ``dims`` axes of ``a`` and first of ``b`` (or given lists)."""
    x, y = a._data, b._data
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(x.ndim, y.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da = list(range(x.ndim - dims, x.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [wrap_dim(d, x.ndim) for d in da]
    db = [wrap_dim(d, y.ndim) for d in db]
    for i, j in zip(da, db):
        if x.shape[i] != y.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{x.shape[i]} in dim {i} and second has size {y.shape[j]} in "
                               f"dim {j}")
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    _no_bool(x, "addmm_impl_cpu_")
    if needs_grad(a, b):
        # torch's composition: permute both to (free, contracted) matrices, one mm, a view
        fa = [i for i in range(x.ndim) if i not in da]
        fb = [j for j in range(y.ndim) if j not in db]
        k = _prod(x.shape[i] for i in da)
        am = a.permute(fa + da).reshape(_prod(x.shape[i] for i in fa), k)
        bm = b.permute(db + fb).reshape(k, _prod(y.shape[j] for j in fb))
        r = mm(am, bm).reshape(tuple(x.shape[i] for i in fa) + tuple(y.shape[j] for j in fb))
        return finish(r, out)
    return finish(wrap(_product(lambda p, q: xp.tensordot(p, q, (da, db)), x, y)), out)


@register()
def kron(input, other, *, out=None):
    """Kronecker product (dtypes promote)."""
    if needs_grad(input, other):
        # interleave the dims of both, multiply (broadcasting), then merge each pair
        n = max(input.dim(), other.dim())
        sa = (1,) * (n - input.dim()) + tuple(input.shape)
        sb = (1,) * (n - other.dim()) + tuple(other.shape)
        ia = input.reshape(tuple(v for d in sa for v in (d, 1)))
        ib = other.reshape(tuple(v for d in sb for v in (1, d)))
        return finish(_unsafe_view(ia * ib, tuple(p * q for p, q in zip(sa, sb))), out)
    x, y, dt = binary_operands(input, other)
    x, y = xp.asarray(x), xp.asarray(y)
    return finish(wrap(result_array(xp.kron(x, y), dt)), out)


def _cross(input, other, dim, name):
    a, b = input._data, other._data
    try:
        shape = xp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a, b) from None
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = wrap_dim(dim, len(shape))
    sa, sb = (x.shape[d - len(shape) + x.ndim] if d - len(shape) + x.ndim >= 0 else 1
              for x in (a, b))
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} "
                           f"and {sb}")
    _no_bool(a, "cross")
    _same_dtype_scalar(a, b)
    a, b = xp.broadcast_to(a, shape), xp.broadcast_to(b, shape)
    r = wrap(result_array(xp.cross(compute_array(a), compute_array(b), axis=d), _dtype(a)))
    if needs_grad(input, other):
        record(r, LinalgCrossBackward0, (input, other), self=input, other=other,
               dim=d - len(shape))
    return r


class LinalgCrossBackward0(Node):
    def backward(self, grad):
        d = self._saved_dim
        gs = linalg_cross(self._saved_other, grad, dim=d) if _wants(self, 0) else None
        go = linalg_cross(grad, self._saved_self, dim=d) if _wants(self, 1) else None
        return gs, go


@register()
def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3)."""
    if dim is None:
        warn_user("Using torch.cross without specifying the dim arg is deprecated.\n"
                  "Please either pass the dim explicitly or simply use torch.linalg.cross.",
                  UserWarning)
    return finish(_cross(input, other, dim, "torch.cross"), out)


@_linalg("cross")
def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default the last), broadcasting."""
    return finish(_cross(input, other, dim, "linalg.cross"), out)


@register()
def trace(input):
    """Sum of the main diagonal of a matrix (integers sum into int64, like torch.sum)."""
    a = input._data
    _no_bool(a, "trace")
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    dt = _int_sum_dtype(_dtype(a))
    r = wrap(result_array(xp.asarray(xp.trace(a, dtype=compute_dtype(dt))), dt))
    if needs_grad(input):
        record(r, TraceBackward0, (input,), self_sym_sizes=input.shape)
    return r


def _eye(n, m, like):
    return wrap(xp.eye(n, m, dtype=like._data.dtype))


class TraceBackward0(Node):
    def backward(self, grad):
        n, m = self._saved_self_sym_sizes
        return _eye(n, m, grad) * grad


@_linalg()
def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices (the first and last may be vectors)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    arrays = [t._data for t in tensors]
    for i, a in enumerate(arrays):
        if i == 0:
            if a.ndim not in (1, 2):
                raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                                   f"{a.ndim}D")
        elif i == n - 1:
            if a.ndim not in (1, 2):
                raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                                   f"{a.ndim}D")
        elif a.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {a.ndim}D")
        if a.dtype != arrays[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_TYPE_NAMES[_dtype(arrays[0])]} and tensor {i} "
                               f"{_TYPE_NAMES[_dtype(a)]}")
    for i in range(n - 1):
        p, q = arrays[i], arrays[i + 1]
        if p.shape[-1] != q.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(p.shape)} and {list(q.shape)} cannot be multiplied")
    _no_bool(arrays[0], "addmm_impl_cpu_")
    if any(needs_grad(t) for t in tensors):
        # torch's composition: vectors become matrices, a chain of mm, one view at the end
        first = tensors[0]
        shape = arrays[0].shape[:-1] + arrays[-1].shape[1:]
        r = first.unsqueeze(0) if first.dim() == 1 else first
        for i, t in enumerate(tensors[1:], 1):
            r = mm(r, t.unsqueeze(1) if i == n - 1 and t.dim() == 1 else t)
        return finish(r.reshape(shape), out)
    return finish(wrap(_product(lambda *xs: xp.linalg.multi_dot(list(xs)), *arrays)), out)


def chain_matmul(*matrices, out=None):
    """Deprecated torch.chain_matmul: the product of 2-D matrices."""
    if len(matrices) == 1:
        return matrices[0].clone() if hasattr(matrices[0], "clone") else \
            wrap(matrices[0]._data.copy())
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    return multi_dot(list(matrices), out=out)


# ----------------------------------------------------------------------------- decompositions

def _check_float(a, name, low=RuntimeError, low_msg=None, int_exc=RuntimeError,
                 empty_ok=True):
    """Refuse what torch's LAPACK wrappers refuse: integers, bool and float16/bfloat16."""
    dt = _dtype(a)
    if empty_ok and a.size == 0 and (int_exc if dt._category < 2 else low) is NotImplementedError:
        return dt  # torch's kernel dtype check is never reached for empty input
    if dt._category < 2:
        if int_exc is NotImplementedError:
            raise NotImplementedError(f'"{low_msg}" not implemented for \'{_SHORT[dt]}\'')
        raise int_exc(f"{name}: Expected a floating point or complex tensor as input. "
                      f"Got {_SHORT[dt]}")
    if dt in _LOW:
        if low is NotImplementedError:
            raise NotImplementedError(f'"{low_msg}" not implemented for \'{_SHORT[dt]}\'')
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_SHORT[dt]}")
    return dt


def _check_matrix(a, name, square=True):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _batch_error(name, a, msg, check):
    """Find the failing batch element (torch names it) and raise LinAlgError."""
    if a.ndim > 2:
        flat = a.reshape((-1,) + a.shape[-2:])
        for i in range(flat.shape[0]):
            try:
                check(flat[i])
            except _np_linalg.LinAlgError:
                return LinAlgError(f"{name}: (Batch element {i}): {msg}")
    return LinAlgError(f"{name}: {msg}")


def _singular_msg(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            f"the input matrix is singular.")


@register("inverse")
def inverse(input, *, out=None):
    """Inverse of square matrices (batched); LinAlgError when singular."""
    a = input._data
    _check_float(a, "linalg.inv")
    _check_matrix(a, "linalg.inv")
    if a.size == 0:
        r = wrap(a.copy())
    else:
        try:
            r = _np_linalg.inv(a)
        except _np_linalg.LinAlgError:
            raise _ex_error("linalg.inv", _inv_info(a)[1], _singular_msg) from None
        r = wrap(result_array(r, _dtype(a)))
    if needs_grad(input):
        record(r, LinalgInvExBackward0, (input,), inverse=r)
    return finish(r, out)


@_linalg("inv")
def linalg_inv(A, *, out=None):
    """torch.linalg.inv: :func:`inverse`, under torch.linalg's parameter name ``A``."""
    return inverse(A, out=out)


class LinalgInvExBackward0(Node):
    def backward(self, grad):
        ih = _h(self._saved_inverse)
        return -matmul(matmul(ih, grad), ih)


@_linalg()
def solve(A, B, *, left=True, out=None):
    """Solve A X = B (or X A = B with ``left=False``), batched and broadcasting."""
    a, b = A._data, B._data
    _check_float(a, "linalg.solve", NotImplementedError, "lu_cpu")
    _check_matrix(a, "linalg.solve")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_SHORT[_dtype(a)]} and B of type {_SHORT[_dtype(b)]} "
                           f"instead")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if not left:
        a = xp.swapaxes(a, -1, -2)
        if not vector:
            b = xp.swapaxes(b, -1, -2)
    bm = b[..., None] if vector else b
    if bm.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{bm.shape[-2]}x{bm.shape[-1]})")
    batch = _batch_shape(a.shape[:-2], bm.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    bm = xp.broadcast_to(bm, batch + bm.shape[-2:])
    if a.size == 0 or bm.size == 0:
        r = xp.zeros(bm.shape, a.dtype)
    else:
        try:
            r = _np_linalg.solve(a, bm)
        except _np_linalg.LinAlgError:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                              "is singular.") from None
    if vector:
        r = r[..., 0]
    elif not left:
        r = xp.swapaxes(r, -1, -2)
    r = wrap(xp.ascontiguousarray(result_array(r, _dtype(A._data))))
    if needs_grad(A, B):
        record(r, LinalgSolveExBackward0, (A, B), A=A, left=left, result=r, vector=vector)
    return finish(r, out)


class LinalgSolveExBackward0(Node):
    def backward(self, grad):
        A, X, left = self._saved_A, self._saved_result, self._saved_left
        vector = self._saved_vector
        gB = solve(_h(A), grad, left=left)
        gA = None
        if _wants(self, 0):
            if vector:
                gA = -gB.unsqueeze(-1) * _conj(X).unsqueeze(-2)
            elif left:
                gA = -matmul(gB, _h(X))
            else:
                gA = -matmul(_h(X), gB)
        return gA, (gB if _wants(self, 1) else None)


@register()
def det(input):
    """Determinant of square matrices (batched)."""
    a = input._data
    _check_float(a, "linalg.det", NotImplementedError, "lu_cpu")
    _check_matrix(a, "linalg.det")
    if a.size == 0:
        r = wrap(xp.ones(a.shape[:-2], a.dtype))
    else:
        r = wrap(result_array(xp.asarray(_np_linalg.det(a)), _dtype(a)))
    if needs_grad(input):
        record(r, LinalgDetBackward0, (input,), A=input, result=r)
    return r


@_linalg("det")
def linalg_det(A, *, out=None):
    """torch.linalg.det: :func:`det`, under torch.linalg's parameter name ``A``, with ``out=``."""
    return finish(det(A), out)


class LinalgDetBackward0(Node):
    def backward(self, grad):
        # d det(A) = det(A) tr(A^-1 dA): the gradient is conj(grad * det) A^-H (invertible A)
        A, d = self._saved_A, self._saved_result
        return _h(inverse(A)) * _conj(grad * d).unsqueeze(-1).unsqueeze(-1)


def _slogdet(input, name):
    a = input._data
    dt = _check_float(a, name)
    _check_matrix(a, name)
    if a.size == 0:
        return xp.ones(a.shape[:-2], a.dtype), xp.zeros(a.shape[:-2], dt.to_real().np)
    sign, lad = _np_linalg.slogdet(a)
    return (result_array(xp.asarray(sign), dt),
            result_array(xp.asarray(lad), dt.to_real()))


def _slogdet_graph(A, name):
    sign, lad = _slogdet(A, name)
    sign, lad = wrap(sign), wrap(lad)
    if needs_grad(A):
        record((sign, lad), LinalgSlogdetBackward0, (A,), A=A, sign=sign)
    return sign, lad


class LinalgSlogdetBackward0(Node):
    def backward(self, g_sign, g_lad):
        A = self._saved_A
        g = g_lad
        if A.dtype.is_complex:
            # only the phase of sign moves: its part of the gradient is imaginary
            g = g - 1j * (_conj(self._saved_sign) * g_sign).imag
        return _h(inverse(A)) * g.unsqueeze(-1).unsqueeze(-1)


@_linalg("slogdet")
def linalg_slogdet_fn(A, *, out=None):
    """(sign, log|det|) of square matrices; sign is 0 and logabsdet -inf when singular."""
    return _finish_tuple(linalg_slogdet(*_slogdet_graph(A, "linalg.slogdet")), out)


@register()
def slogdet(input, *, out=None):
    """torch.slogdet: (sign, logabsdet) of square matrices."""
    return _finish_tuple(slogdet_result(*_slogdet_graph(input, "linalg.slogdet")), out)



@register()
def logdet(input):
    """log(det(input)): NaN for a negative real determinant, -inf for a singular matrix."""
    if needs_grad(input) and not input.dtype.is_complex:
        from .. import where
        sign, lad = _slogdet_graph(input, "logdet")
        return where(sign < 0, float("nan"), lad)
    sign, lad = _slogdet(input, "logdet")
    if xp.iscomplexobj(sign):
        with xp.errstate(all="ignore"):
            r = (lad + xp.log(sign)).astype(sign.dtype)
        r = xp.where(sign == 0, xp.asarray(complex(-_INF, xp.nan), sign.dtype), r)
    else:
        r = xp.where(sign < 0, xp.asarray(xp.nan, lad.dtype), lad)
    return wrap(xp.asarray(r))


_NOT_PD = ("The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order {} is not positive-definite).")


@_linalg("cholesky")
def linalg_cholesky(input, *, upper=False, out=None):
    """Cholesky factor L (A = L L^H), or U = L^H with ``upper=True``."""
    a = input._data
    _check_float(a, "linalg.cholesky", NotImplementedError, "cholesky_cpu")
    _check_matrix(a, "linalg.cholesky")
    r = _cholesky(input, upper)
    if needs_grad(input):
        record(r, LinalgCholeskyExBackward0, (input,), L=r, upper=upper)
    return finish(r, out)


def _cholesky(A, upper):
    a = A._data
    if a.size == 0:
        return wrap(a.copy())
    try:
        r = _np_linalg.cholesky(a)
    except _np_linalg.LinAlgError:
        raise _batch_error("linalg.cholesky", a, _NOT_PD.format(_failing_minor(a)),
                           _np_linalg.cholesky) from None
    if upper:
        r = xp.conj(xp.swapaxes(r, -1, -2))
    return wrap(xp.ascontiguousarray(result_array(r, _dtype(a))))


def _phi(m):
    """The lower triangle of ``m`` with its diagonal halved."""
    n = m.shape[-1]
    mask = xp.tril(xp.ones((n, n), m._data.dtype)) - 0.5 * xp.eye(n, dtype=m._data.dtype)
    return m * wrap(mask)


class LinalgCholeskyExBackward0(Node):
    def backward(self, grad):
        # A = L L^H: gA = L^-H phi(L^H gL) L^-1, symmetrized (torch's convention)
        L = self._saved_L
        _real_only(self, L)
        if self._saved_upper:
            L, grad = L.mT, grad.mT
        if L.numel() == 0:
            return grad
        Linv = inverse(L)
        g = matmul(matmul(Linv.mT, _phi(matmul(L.mT, grad))), Linv)
        return 0.5 * (g + g.mT)


class CholeskyBackward0(LinalgCholeskyExBackward0):
    pass


@register()
def cholesky(input, upper=False, *, out=None):
    """Deprecated torch.cholesky: the lower (or ``upper``) Cholesky factor."""
    _check_float(input._data, "linalg.cholesky", NotImplementedError, "cholesky_cpu")
    _check_matrix(input._data, "linalg.cholesky")
    r = _cholesky(input, upper)
    if needs_grad(input):
        record(r, CholeskyBackward0, (input,), L=r, upper=upper)
    return finish(r, out)


def _failing_minor(a):
    # the order of the first leading minor that is not positive-definite (first failing one)
    flat = a.reshape((-1,) + a.shape[-2:])
    for m in flat:
        for k in range(1, m.shape[-1] + 1):
            try:
                _np_linalg.cholesky(m[:k, :k])
            except _np_linalg.LinAlgError:
                return k
    return 1


@_linalg("qr")
def linalg_qr_fn(A, mode="reduced", *, out=None):
    """QR decomposition; ``mode`` is 'reduced', 'complete' or 'r' (Q is then empty)."""
    a = A._data
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    dt = _check_float(a, "linalg.qr", NotImplementedError, "geqrf_cpu", empty_ok=False)
    _check_matrix(a, "linalg.qr", square=False)
    m, n = a.shape[-2:]
    if a.size == 0:
        k = m if mode == "complete" else min(m, n)
        q = xp.zeros(a.shape[:-2] + (m, k), a.dtype)
        if mode == "complete" or k:
            q[..., range(min(m, k)), range(min(m, k))] = 1
        r = xp.zeros(a.shape[:-2] + (k if mode != "complete" else m, n), a.dtype)
        if mode == "r":
            q = xp.zeros((0,), a.dtype)
        q, r = wrap(q), wrap(r)
        if needs_grad(A):
            record((q, r), LinalgQrBackward0, (A,), Q=q, R=r, mode=mode)
        return linalg_qr(q, r)
    if mode == "r":
        q, r = wrap(xp.zeros((0,), a.dtype)), wrap(result_array(_np_linalg.qr(a, mode="r"), dt))
        if needs_grad(A):  # differentiable-looking, but backward raises torch's error
            record((q, r), LinalgQrBackward0, (A,), Q=q, R=r, mode=mode)
        return linalg_qr(q, r)
    q, r = _np_linalg.qr(a, mode=mode)
    q, r = wrap(result_array(q, dt)), wrap(result_array(r, dt))
    if needs_grad(A):
        record((q, r), LinalgQrBackward0, (A,), Q=q, R=r, mode=mode)
    return linalg_qr(q, r)


def _qr_grad_tall(Q, R, gQ, gR):
    """A = QR with R square: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q."""
    M = matmul(R, gR.mT) - matmul(gQ.mT, Q)
    low = _phi(M)
    return matmul(gQ + matmul(Q, low + low.mT), inverse(R).mT)


class LinalgQrBackward0(Node):
    def backward(self, gQ, gR):
        Q, R, mode = self._saved_Q, self._saved_R, self._saved_mode
        _real_only(self, R)
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        m, n = Q.shape[-2], R.shape[-1]
        if Q.numel() == 0 or R.numel() == 0:
            return gQ.new_zeros(self._input_meta[0][0])
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return _qr_grad_tall(Q, R, gQ, gR)
        # wide A = [X | Y] = Q [U | V]: X = QU is a square QR, Y = QV
        U, V = R[..., :, :m], R[..., :, m:]
        gU, gV = gR[..., :, :m], gR[..., :, m:]
        Y = matmul(Q, V)
        gX = _qr_grad_tall(Q, U, gQ + matmul(Y, gV.mT), gU)
        from .. import cat
        return cat([gX, matmul(Q, gV)], -1)


@register()
def qr(input, some=True, *, out=None):
    """Deprecated torch.qr: reduced (``some=True``) or complete QR decomposition."""
    q, r = linalg_qr_fn(input, "reduced" if some else "complete")
    return qr_result(q, r)


def _svd(a, name, full_matrices, compute_uv=True):
    dt = _check_float(a, name, NotImplementedError, "linalg_svd_cpu")
    _check_matrix(a, name, square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    rd = dt.to_real()
    if a.size == 0:
        s = xp.zeros(a.shape[:-2] + (k,), rd.np)
        if not compute_uv:
            return None, s, None
        um, vn = (m, n) if full_matrices else (k, k)
        u = xp.zeros(a.shape[:-2] + (m, um), a.dtype)
        vh = xp.zeros(a.shape[:-2] + (vn, n), a.dtype)
        u[..., range(min(m, um)), range(min(m, um))] = 1
        vh[..., range(min(vn, n)), range(min(vn, n))] = 1
        return u, s, vh
    if not compute_uv:
        return None, result_array(_np_linalg.svd(a, compute_uv=False), rd), None
    u, s, vh = _np_linalg.svd(a, full_matrices=full_matrices)
    return result_array(u, dt), result_array(s, rd), result_array(vh, dt)


@_linalg("svd")
def linalg_svd_fn(A, full_matrices=True, *, driver=None, out=None):
    """A = U diag(S) Vh; singular values S are real and descending."""
    u, s, vh = _svd(A._data, "linalg.svd", full_matrices)
    u, s, vh = wrap(u), wrap(s), wrap(vh)
    if needs_grad(A):
        record((u, s, vh), LinalgSvdBackward0, (A,), U=u, S=s, Vh=vh,
               full_matrices=full_matrices, values_only=False)
    return linalg_svd(u, s, vh)


def _real_only(node, A):
    if A.dtype.is_complex:
        raise NotImplementedError(f"{node.name()}: the derivative for complex inputs is not "
                                  f"implemented in glasstorch")


def _offdiag_inverse(e):
    """1 / e off the diagonal and 0 on it (e: batches of square matrices)."""
    n = e.shape[-1]
    eye = _eye(n, n, e)
    return (1 / (e + eye)) * (1 - eye)


class LinalgSvdBackward0(Node):
    def backward(self, gU, gS, gVh):
        U, S, Vh = self._saved_U, self._saved_S, self._saved_Vh
        _real_only(self, U)
        k = S.shape[-1]
        if self._saved_values_only and not (gU._data.any() or gVh._data.any()):
            # svdvals: U and Vh only receive gradients in a double backward
            return matmul(U * gS.unsqueeze(-2), Vh)
        if self._saved_full_matrices and U.shape[-1] != Vh.shape[-2]:
            raise RuntimeError("linalg_svd_backward: The derivative of linalg.svd is not "
                               "implemented when full_matrices=True and the matrix is not "
                               "square; use full_matrices=False")
        V, gV = Vh.mT, gVh.mT
        s2 = S * S
        F = _offdiag_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1))
        UtgU, VtgV = matmul(U.mT, gU), matmul(V.mT, gV)
        J = F * (UtgU - UtgU.mT)
        K = F * (VtgV - VtgV.mT)
        inner = J * S.unsqueeze(-2) + S.unsqueeze(-1) * K + _eye(k, k, S) * gS.unsqueeze(-1)
        gA = matmul(matmul(U, inner), Vh)
        m, n = U.shape[-2], V.shape[-2]
        if m > k:  # (I - U U^T) gU S^-1 V^T
            gA = gA + matmul((gU - matmul(U, UtgU)) / S.unsqueeze(-2), Vh)
        if n > k:  # U S^-1 gV^T (I - V V^T)
            gA = gA + matmul(U, ((gV - matmul(V, VtgV)) / S.unsqueeze(-2)).mT)
        return gA


@register()
def svd(input, some=True, compute_uv=True, *, out=None):
    """Legacy torch.svd: returns (U, S, V) with V (not Vh); ``some`` gives the reduced form."""
    a = input._data
    if compute_uv and needs_grad(input):
        u, s, vh = linalg_svd_fn(input, full_matrices=not some)
        return svd_result(u, s, vh.mH)
    u, s, vh = _svd(a, "linalg.svd", not some, compute_uv)
    if not compute_uv:
        m, n = a.shape[-2:]
        u = xp.zeros(a.shape[:-2] + (m, m), a.dtype)
        v = xp.zeros(a.shape[:-2] + (n, n), a.dtype)
        return svd_result(wrap(u), wrap(s), wrap(v))
    v = xp.conj(xp.swapaxes(vh, -1, -2))
    return svd_result(wrap(u), wrap(s), wrap(v))


@_linalg()
def svdvals(A, *, driver=None, out=None):
    """Singular values of A, real and descending."""
    if needs_grad(A):
        u, s, vh = (wrap(x) for x in _svd(A._data, "linalg.svd", False))
        record((u, s, vh), LinalgSvdBackward0, (A,), U=u, S=s, Vh=vh, full_matrices=False,
               values_only=True)
        return finish(s, out)
    return finish(wrap(_svd(A._data, "linalg.svd", False, False)[1]), out)


def _eigh_checks(a, name, UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    dt = _check_float(a, name, NotImplementedError, "linalg_eigh_cpu",
                      int_exc=NotImplementedError)
    _check_matrix(a, name)
    return dt


@_linalg()
def eigh(input, UPLO="L", *, out=None):
    """Eigen-decomposition of Hermitian matrices: ascending real eigenvalues, eigenvectors."""
    a = input._data
    dt = _eigh_checks(a, "linalg.eigh", UPLO)
    if a.size == 0:
        w, v = wrap(xp.zeros(a.shape[:-1], dt.to_real().np)), wrap(a.copy())
    else:
        w, v = _np_linalg.eigh(a, UPLO=UPLO.upper())
        w, v = wrap(result_array(w, dt.to_real())), wrap(result_array(v, dt))
    if needs_grad(input):
        record((w, v), LinalgEighBackward0, (input,), eigenvalues=w, eigenvectors=v)
    return _finish_tuple(linalg_eigh(w, v), out)


class LinalgEighBackward0(Node):
    def backward(self, gL, gV):
        L, V = (self._saved_eigenvalues, self._saved_eigenvectors)
        _real_only(self, V)
        inner = _eye(L.shape[-1], L.shape[-1], L) * gL.unsqueeze(-1)
        if gV is not None:
            VtgV = matmul(V.mT, gV)
            # F_ij = 1 / (L_j - L_i) on the skew part of V^T gV: a symmetric gradient
            inner = inner + _offdiag_inverse(L.unsqueeze(-2) - L.unsqueeze(-1)) * \
                (0.5 * (VtgV - VtgV.mT))
        return matmul(matmul(V, inner), V.mT)


@_linalg()
def eigvalsh(input, UPLO="L", *, out=None):
    """Eigenvalues of Hermitian matrices, ascending."""
    a = input._data
    dt = _eigh_checks(a, "linalg.eigvalsh", UPLO)
    if needs_grad(input):
        return finish(eigh(input, UPLO)[0], out)
    if a.size == 0:
        return finish(wrap(xp.zeros(a.shape[:-1], dt.to_real().np)), out)
    return finish(wrap(result_array(_np_linalg.eigvalsh(a, UPLO=UPLO.upper()),
                                    dt.to_real())), out)


def _eig_checks(a, name):
    dt = _dtype(a)
    if dt._category < 2:
        raise RuntimeError(f"Unknown Complex ScalarType for {_SHORT[dt]}")
    _check_float(a, name, NotImplementedError, "linalg_eig_out_cpu", empty_ok=False)
    _check_matrix(a, name)
    return dt.to_complex()


@_linalg()
def eig(input, *, out=None):
    """Eigenvalues and eigenvectors of general square matrices (always complex)."""
    a = input._data
    cd = _eig_checks(a, "linalg.eig")
    if a.size == 0:
        res = linalg_eig(wrap(xp.zeros(a.shape[:-1], cd.np)), wrap(a.astype(cd.np)))
    else:
        w, v = _np_linalg.eig(a)
        res = linalg_eig(wrap(w.astype(cd.np)), wrap(v.astype(cd.np)))
    if needs_grad(input):
        record(tuple(res), LinalgEigBackward0, (input,), L=res[0], V=res[1],
               real=not input.dtype.is_complex)
    return _finish_tuple(res, out)


@_linalg()
def eigvals(input, *, out=None):
    """Eigenvalues of general square matrices (always complex)."""
    a = input._data
    cd = _eig_checks(a, "linalg.eigvals")
    if needs_grad(input):
        # the backward needs the eigenvectors, as torch computes them too
        w, v = eig(input)
        # a fresh output of its own node; V keeps its graph for double backward
        w = wrap(w._data)
        record(w, LinalgEigBackward0, (input,), L=w, V=v, real=not input.dtype.is_complex)
        return finish(w, out)
    if a.size == 0:
        return finish(wrap(xp.zeros(a.shape[:-1], cd.np)), out)
    return finish(wrap(_np_linalg.eigvals(a).astype(cd.np)), out)


class LinalgEigBackward0(Node):
    def backward(self, gL, gV=None):
        # A V = V diag(L): gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H
        # with E_ij = L_j - L_i off the diagonal (torch's linalg_eig_backward)
        L, V = self._saved_L, self._saved_V
        n = L.shape[-1]
        Vh = V.mH
        eye = _eye(n, n, L)
        if gV is None or not gV._data.any():
            inner = gL.unsqueeze(-1) * eye
        else:
            VhgV = matmul(Vh, gV)
            diag_re = VhgV.diagonal(0, -2, -1).real
            VhgV = VhgV - matmul(Vh, V) * diag_re.unsqueeze(-2).to(V.dtype)
            Lc = L.conj()
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
            E = E + eye  # the diagonal is replaced below; keep it from dividing by zero
            off = VhgV / E
            inner = off * (1 - eye) + gL.unsqueeze(-1) * eye
        gA = solve(Vh, matmul(inner, Vh))
        return gA.real.contiguous() if self._saved_real else gA


def _tolerances(s, m, n, dt, atol, rtol, name):
    """The per-matrix cutoff max(atol, rtol * largest singular value), torch's defaults."""
    def as_arr(v):
        return v._data if isinstance(v, Tensor) else v
    atol, rtol = as_arr(atol), as_arr(rtol)
    if rtol is None:
        rtol = 0.0 if (atol is not None and xp.any(xp.asarray(atol) > 0)) else \
            float(xp.finfo(dt.to_real().np).eps) * max(m, n)
    if atol is None:
        atol = 0.0
    smax = s.max(axis=-1) if s.shape[-1] else xp.zeros(s.shape[:-1], s.dtype)
    return xp.maximum(xp.asarray(atol), xp.asarray(rtol) * smax)


def _check_pinv_dtype(a, name):
    dt = _dtype(a)
    if dt._category < 2 or dt in _LOW:
        raise RuntimeError(f"{name}({_SHORT[dt]}{{{list(a.shape)}}}): expected a tensor with 2 "
                           f"or more dimensions of float, double, cfloat or cdouble types")
    if a.ndim < 2:
        raise RuntimeError(f"{name}({_SHORT[dt]}{{{list(a.shape)}}}): expected a tensor with 2 "
                           f"or more dimensions of float, double, cfloat or cdouble types")
    return dt


@_linalg()
def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Moore-Penrose pseudo-inverse via the SVD (or eigh with ``hermitian=True``); ``rcond``
    is torch's older spelling of ``rtol``."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: "
                            "rcond cannot be given with atol or rtol")
        rtol = rcond
    a = input._data
    dt = _check_pinv_dtype(a, "linalg.pinv")
    m, n = a.shape[-2:]
    if a.size == 0:
        r = wrap(xp.zeros(a.shape[:-2] + (n, m), a.dtype))
        if needs_grad(input):
            record(r, LinalgPinvBackward0, (input,), self=input, result=r)
        return finish(r, out)
    if hermitian:
        w, v = _np_linalg.eigh(a)
        s = xp.abs(w)
        cut = _tolerances(xp.sort(s, axis=-1), m, n, dt, atol, rtol, "linalg.pinv")
        with xp.errstate(all="ignore"):
            inv_w = xp.where(s > cut[..., None], 1 / w, 0).astype(w.dtype)
        r = (v * inv_w[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))
    else:
        u, s, vh = _np_linalg.svd(a, full_matrices=False)
        cut = _tolerances(s, m, n, dt, atol, rtol, "linalg.pinv")
        with xp.errstate(all="ignore"):
            inv_s = xp.where(s > cut[..., None], 1 / s, 0).astype(s.dtype)
        r = (xp.conj(xp.swapaxes(vh, -1, -2)) * inv_s[..., None, :]) @ \
            xp.conj(xp.swapaxes(u, -1, -2))
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, LinalgPinvBackward0, (input,), self=input, result=r)
    return finish(r, out)


class LinalgPinvBackward0(Node):
    def backward(self, grad):
        # derivative of the pseudo-inverse at constant rank (Golub & Pereyra)
        A, P = self._saved_self, self._saved_result
        _real_only(self, A)
        Pt, Gt = P.mT, grad.mT
        gA = -matmul(matmul(Pt, grad), Pt)
        t2 = matmul(Gt, matmul(P, Pt))
        gA = gA + t2 - matmul(A, matmul(P, t2))
        t3 = matmul(matmul(Pt, P), Gt)
        return gA + t3 - matmul(matmul(t3, P), A)


@register()
def pinverse(input, rcond=1e-15):
    """Legacy torch.pinverse: pinv with a relative cutoff ``rcond``."""
    return pinv(input, rtol=rcond)


def _rank_dtype_check(a, rtol=None):
    dt = _dtype(a)
    if rtol is not None and dt in _LOW:
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{_SHORT[dt]}'")
    if dt._category < 2 or dt in _LOW:
        raise RuntimeError("This function doesn't handle types other than float and double")
    return dt


@_linalg()
def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Number of singular values above max(atol, rtol * largest), as int64; ``tol`` is torch's
    older spelling of an absolute ``atol`` (with ``rtol=0``)."""
    if tol is not None and (atol is not None or rtol is not None):
        raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: "
                        "tol cannot be given with atol or rtol")
    a = input._data
    dt = _rank_dtype_check(a, rtol)
    _check_matrix(a, "linalg.matrix_rank", square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = a.shape[-2:]
    if a.size == 0:
        return finish(wrap(xp.zeros(a.shape[:-2], xp.int64)), out)
    s = xp.abs(_np_linalg.eigvalsh(a)) if hermitian else _np_linalg.svd(a, compute_uv=False)
    cut = _tolerances(s if not hermitian else xp.sort(s, axis=-1), m, n, dt, atol, rtol, "")
    return finish(wrap(xp.asarray((s > cut[..., None]).sum(axis=-1), xp.int64)), out)


@_linalg()
def lstsq(input, b, rcond=None, *, driver=None, out=None):
    """Least-squares solution of A X = B, with torch's per-driver extra outputs.

    The solution is the minimum-norm least-squares one (as LAPACK's gelsy/gelsd
    give); ``residuals`` and ``singular_values`` are filled only for the drivers
    that return them in torch ('gelsd', 'gelss'; residuals also for 'gels').
    """
    a, bb = input._data, b._data
    dt = _rank_dtype_check(a)
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if a.dtype != bb.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_SHORT[dt]} and other's dtype "
                           f"{_SHORT[_dtype(b)]}")
    vector = bb.ndim == a.ndim - 1
    bm = bb[..., None] if vector else bb
    m, n = a.shape[-2:]
    if bm.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    batch = _batch_shape(a.shape[:-2], bm.shape[:-2])
    k = bm.shape[-1]
    a = xp.broadcast_to(a, batch + (m, n)).reshape((-1, m, n))
    bm = xp.broadcast_to(bm, batch + (m, k)).reshape((-1, m, k))
    rd = dt.to_real()
    if rcond is None:
        rcond = float(xp.finfo(rd.np).eps) * max(m, n)
    sol = xp.zeros((a.shape[0], n, k), a.dtype)
    ranks = xp.zeros(a.shape[0], xp.int64)
    svals = xp.zeros((a.shape[0], min(m, n)), rd.np)
    res = xp.zeros((a.shape[0], k), rd.np)
    for i in range(a.shape[0]):
        if a[i].size == 0:
            continue
        x, r, rank, s = _np_linalg.lstsq(a[i], bm[i], rcond=rcond)
        sol[i], ranks[i], svals[i] = x, rank, s
        if r.size:
            res[i] = r
    sol = sol.reshape(batch + (n, k))
    if vector:
        sol = sol[..., 0]
    empty_real = xp.zeros((0,), rd.np)
    full_rank = bool((ranks == min(m, n)).all()) if ranks.size else True
    residuals = res.reshape(batch + (k,)) if (driver != "gelsy" and m > n and full_rank) \
        else empty_real
    if vector and residuals.size:
        residuals = residuals[..., 0]
    rank = ranks.reshape(batch) if driver != "gels" else xp.zeros((0,), xp.int64)
    sv = svals.reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") else empty_real
    solution, residuals = wrap(result_array(sol, dt)), wrap(result_array(residuals, rd))
    if needs_grad(input, b):
        record((solution, residuals), LinalgLstsqBackward0, (input, b), A=input, B=b,
               X=solution, vector=vector)
    return _finish_tuple(linalg_lstsq(solution, residuals, wrap(rank),
                                      wrap(result_array(sv, rd))), out)


class LinalgLstsqBackward0(Node):
    def backward(self, gX, gres):
        # the solution is pinv(A) B; the residuals ||A x - b||^2 are stationary in x
        A, B, X = self._saved_A, self._saved_B, self._saved_X
        if self._saved_vector:
            B, X, gX = B.unsqueeze(-1), X.unsqueeze(-1), gX.unsqueeze(-1)
        P = pinv(A)
        gB = matmul(_h(P), gX)
        gP = matmul(gX, _h(B))
        Ph = _h(P)
        gA = -matmul(matmul(Ph, gP), Ph)
        t2 = matmul(_h(gP), matmul(P, Ph))
        gA = gA + t2 - matmul(A, matmul(P, t2))
        t3 = matmul(matmul(Ph, P), _h(gP))
        gA = gA + t3 - matmul(matmul(t3, P), A)
        if gres is not None and gres.numel() and gres._data.any():
            w = gres.unsqueeze(-2) if not self._saved_vector else gres.unsqueeze(-1).unsqueeze(-1)
            R = (matmul(A, X) - B) * w.to(X.dtype)
            gA = gA + 2 * matmul(R, _h(X))
            gB = gB - 2 * R
        if self._saved_vector:
            gB = gB.squeeze(-1)
        return gA, gB


@_linalg("matrix_power")
@register()
def matrix_power(input, n, *, out=None):
    """input multiplied by itself n times (n < 0 uses the inverse; n == 0 the identity)."""
    if out is not None:
        return finish(matrix_power(input, n), out)
    a = input._data
    _check_matrix(a, "linalg.matrix_power")
    if n == 0:
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
        if needs_grad(input):
            # torch: a clone overwritten by the identity (CopyBackwards, zero gradient)
            return input.clone().copy_(wrap(eye))
        return wrap(xp.ascontiguousarray(eye))
    if n == 1:
        return input.clone() if needs_grad(input) else wrap(a.copy())
    if needs_grad(input):
        base = inverse(input) if n < 0 else input
        n = abs(n)
        result = None
        while n:  # the same binary exponentiation, through recorded matmuls
            if n & 1:
                result = base if result is None else matmul(result, base)
            n >>= 1
            if n:
                base = matmul(base, base)
        return result
    if n < 0:
        a = inverse(input)._data
        n = -n
    _no_bool(a, "addmm_impl_cpu_")
    dt = _dtype(a)
    c = compute_array(a)
    result = None
    base = c
    while n:  # binary exponentiation: ~log2(n) products
        if n & 1:
            result = base if result is None else xp.matmul(result, base)
        n >>= 1
        if n:
            base = xp.matmul(base, base)
    return wrap(xp.ascontiguousarray(result_array(result, dt)))


@_linalg("diagonal")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """A view of the diagonals of the matrices in A (same as torch.diagonal, last two dims)."""
    return _diagonal_view(A, offset, dim1, dim2)


# ----------------------------------------------------------------------------- norms

def _norm_input(a, name, dtype):
    """The array to reduce (cast to ``dtype`` if given) and the real result dtype."""
    dt = _dtype(a)
    if dt._category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_SHORT[dt]}")
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex) or \
                _dt.promote_types(dt, dtype) is not dtype:
            raise RuntimeError(f"{name}: the dtype of the input ({_SHORT[dt]}) should be "
                               f"convertible without narrowing to the specified dtype "
                               f"({_SHORT[dtype]})")
        dt = dtype
        a = a.astype(dt.np)
    return a, dt.to_real()


def _vector_norm(a, ord, axes, keepdim, rd, name="linalg.vector_norm"):
    """||a||_ord over ``axes`` (None: all), computed in the compute dtype of ``rd``."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' must be Number, not str")
    ord = float(ord)
    cd = compute_dtype(rd)
    x = xp.abs(a)
    if x.dtype != cd:
        x = x.astype(cd)
    if (ord < 0 or ord == _INF) and x.size == 0:
        if axes is None or a.ndim == 0:
            raise RuntimeError(f"{name} cannot compute the {_fmt_ord(ord)} norm on an empty "
                               f"tensor because the operation does not have an identity")
        for d in axes:
            if a.shape[d] == 0:
                raise RuntimeError(f"{name} cannot compute the {_fmt_ord(ord)} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   f"operation does not have an identity")
    with xp.errstate(all="ignore"):
        if ord == _INF:
            r = x.max(axis=axes, keepdims=keepdim, initial=0) if x.size else \
                x.max(axis=axes, keepdims=keepdim)
        elif ord == -_INF:
            r = x.min(axis=axes, keepdims=keepdim)
        elif ord == 0:
            r = (x != 0).sum(axis=axes, keepdims=keepdim, dtype=cd)
        elif ord == 1:
            r = x.sum(axis=axes, keepdims=keepdim)
        elif ord == 2:
            r = xp.sqrt((x * x).sum(axis=axes, keepdims=keepdim))
        else:
            r = xp.power(xp.power(x, ord).sum(axis=axes, keepdims=keepdim), 1.0 / ord)
    return result_array(xp.asarray(r, dtype=cd), rd)


def _fmt_ord(ord):
    if ord in (_INF, -_INF):
        return "inf" if ord > 0 else "-inf"
    return f"{ord:g}"


def _axes(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim),)
    axes = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return axes or None


@_linalg()
def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of x over ``dim`` (all elements by default), as a real tensor."""
    a, rd = _norm_input(input._data, "linalg.vector_norm", dtype)
    axes = _axes(dim, a.ndim)
    if a.ndim == 0:
        axes = None
    r = wrap(_vector_norm(a, ord, axes, keepdim, rd))
    if needs_grad(input):
        record(r, LinalgVectorNormBackward0, (input,), self=input, result=r, ord=float(ord),
               dim=axes, keepdim=keepdim)
    return finish(r, out)


def _norm_grad(x, norm, grad, ord, axes, keepdim):
    """d||x||_ord / dx times ``grad`` (norm and grad broadcast back over ``axes``)."""
    from .reduction import expand_reduced
    if x.dtype is not grad.dtype and not x.dtype.is_complex:
        x = x.to(grad.dtype)
    if not keepdim and axes is not None:
        for ax in sorted(axes):
            grad, norm = grad.unsqueeze(ax), norm.unsqueeze(ax)
    elif axes is None and x.dim():
        grad, norm = grad.reshape((1,) * x.dim()), norm.reshape((1,) * x.dim())
    if ord == 0:
        return expand_reduced(grad * 0, x.shape, None, True)
    sgn = x.sgn() if x.dtype.is_complex else x.sign()
    if ord == 1:
        return sgn * grad
    if ord == 2:
        # x / ||x||, with 0 where the norm is 0 (torch's choice at the kink)
        return x * (grad / norm).masked_fill(norm == 0, 0)
    if ord in (_INF, -_INF):
        mask = (x.abs() == norm).to(grad.dtype)
        count = mask.sum(axes, keepdim=True) if axes is not None else mask.sum()
        return sgn * mask * (grad / count)
    a = x.abs()
    scale = (grad / norm.pow(ord - 1)).masked_fill(norm == 0, 0)
    return sgn * a.pow(ord - 1) * scale


class LinalgVectorNormBackward0(Node):
    def backward(self, grad):
        return _norm_grad(self._saved_self, self._saved_result, grad, self._saved_ord,
                          self._saved_dim, self._saved_keepdim)


def _matrix_norm(a, ord, dim, keepdim, rd, name="linalg.matrix_norm"):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    dim = tuple(dim) if not isinstance(dim, int) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = wrap_dim(dim[0], a.ndim), wrap_dim(dim[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _vector_norm(a, 2, (d0, d1), keepdim, rd)
    if ord == "nuc" or ord in (2, -2):
        if isinstance(ord, str) or True:
            if _dtype(a) in _LOW:
                raise NotImplementedError(f'"linalg_svd_cpu" not implemented for '
                                          f"'{_SHORT[_dtype(a)]}'")
        m = xp.moveaxis(a, (d0, d1), (-2, -1))
        if m.size == 0 and ord != "nuc":
            raise RuntimeError(f"{name}: Expected a non-empty tensor")
        s = _np_linalg.svd(m, compute_uv=False) if m.size else \
            xp.zeros(m.shape[:-2] + (0,), rd.np)
        r = s.sum(-1) if ord == "nuc" else (s.max(-1) if ord == 2 else s.min(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = xp.expand_dims(r, d)
        return result_array(xp.asarray(r), rd)
    if ord in (1, -1, _INF, -_INF):
        # 1: max column sum (sum over rows, d0); inf: max row sum (sum over columns, d1)
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        col = _vector_norm(a, 1, (sum_dim,), True, rd)
        c = compute_array(col)
        if c.shape[red_dim] == 0:
            raise RuntimeError(f"{name}: Expected a non-empty tensor")
        r = c.max(axis=red_dim, keepdims=True) if ord > 0 else c.min(axis=red_dim, keepdims=True)
        if not keepdim:
            r = r.squeeze(axis=(d0, d1))
        return result_array(xp.asarray(r), rd)
    raise RuntimeError(f"{name}: Order {ord} not supported.")


@_linalg()
def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over two dims: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2."""
    a, rd = _norm_input(input._data, "linalg.matrix_norm", dtype)
    r = wrap(_matrix_norm(a, ord, dim, keepdim, rd))  # also checks the arguments
    if needs_grad(input):
        if ord == "fro":
            r = vector_norm(input, 2, dim, keepdim, dtype=dtype)
        else:
            r = _matrix_norm_graph(input if dtype is None else input.to(dtype), ord, dim,
                                   keepdim)
    return finish(r, out)


def _matrix_norm_graph(A, ord, dim, keepdim):
    """The spectral/nuclear and max-sum norms through recorded ops, as torch composes them."""
    d0, d1 = (wrap_dim(d, A.dim()) for d in dim)
    if ord in (1, -1, _INF, -_INF):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        col = vector_norm(A, 1, sum_dim, keepdim)
        if not keepdim and sum_dim < red_dim:
            red_dim -= 1
        return col.amax(red_dim, keepdim) if ord > 0 else col.amin(red_dim, keepdim)
    rest = [i for i in range(A.dim()) if i not in (d0, d1)]
    perm = rest + [d0, d1]
    s = svdvals(A.permute(perm))
    r = s.sum(-1, keepdim) if ord == "nuc" else (s.amax(-1, keepdim) if ord == 2 else
                                                s.amin(-1, keepdim))
    if keepdim:
        # back to the input's dim order, the two reduced dims kept as size 1
        r = r.unsqueeze(-1).permute([perm.index(i) for i in range(A.dim())])
    return r


@_linalg("norm")
def linalg_norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm, chosen by ``ord`` and ``dim`` like torch.linalg.norm."""
    a = input._data
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dims[0]}")
            return vector_norm(input, 2 if ord is None else ord, dims, keepdim, dtype=dtype,
                               out=out)
        if len(dims) != 2:
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dims)}")
        if ord is None:
            return vector_norm(input, 2, dims, keepdim, dtype=dtype, out=out)
        return matrix_norm(input, ord, dims, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(input, 2, None, keepdim, dtype=dtype, out=out)
    if a.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {a.ndim}D.")
    if a.ndim == 1:
        if isinstance(ord, str):
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                               "dimensions.")
        return vector_norm(input, ord, None, keepdim, dtype=dtype, out=out)
    return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype, out=out)


@register()
def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    """Legacy torch.norm: 'fro' (2-norm over dims), 'nuc', or a p-norm over ``dim``."""
    a = input._data
    if isinstance(p, str):
        if p == "fro":
            if dim is not None and not isinstance(dim, int) and len(dim) > 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   f"{' '.join(map(str, dim))}")
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if p == "nuc":
            if dim is None:
                if a.ndim != 2:
                    raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                                       f"{' '.join(map(str, range(a.ndim)))}")
                dim = (-2, -1)
            return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype, out=out)
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {p}")
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype, out=out)


@register()
def dist(input, other, p=2):
    """p-norm of (input - other), broadcasting and promoting dtypes."""
    x, y, dt = binary_operands(input, other)
    if dt._category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_SHORT[dt]} instead.")
    try:
        diff = xp.subtract(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    diff = xp.asarray(diff, dtype=dt.np)
    r = wrap(_vector_norm(diff, p, None, False, dt.to_real()))
    if needs_grad(input, other):
        record(r, DistBackward0, (input, other), self=input, other=other, p=p, result=r)
    return r


class DistBackward0(Node):
    def backward(self, grad):
        g = _norm_grad(self._saved_self - self._saved_other, self._saved_result, grad,
                       float(self._saved_p), None, False)
        return g, -g


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M)."""
    a, b = x1._data, x2._data
    for name, arr in (("X1", a), ("X2", b)):
        dt = _dtype(arr)
        if arr.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{arr.ndim}D")
        if dt._category < 2 or dt.is_complex:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_SHORT[dt]}")
        if dt in _LOW:
            raise NotImplementedError(f"\"cdist\" not implemented for '{_SHORT[dt]}'")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{a.shape[-1]} X2: {b.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    _same_dtype_scalar(a, b)
    batch = _batch_shape(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    diff = a[..., :, None, :] - b[..., None, :, :]
    r = wrap(_vector_norm(diff, p, (diff.ndim - 1,), False, _dtype(a), "cdist"))
    if needs_grad(x1, x2):
        record(r, CdistBackward0, (x1, x2), x1=x1, x2=x2, p=p, result=r)
    return r


class CdistBackward0(Node):
    def backward(self, grad):
        x1, x2 = self._saved_x1, self._saved_x2
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        g = _norm_grad(diff, self._saved_result, grad, float(self._saved_p), (diff.dim() - 1,),
                       False)
        g1 = g.sum(-2) if _wants(self, 0) else None
        g2 = -g.sum(-3) if _wants(self, 1) else None
        return g1, g2


@_linalg()
def vecdot(x, y, *, dim=-1, out=None):
    """Dot product of vectors along ``dim`` (x conjugated), broadcasting."""
    a, b = x._data, y._data
    if a.dtype.kind in "biu":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_SHORT[_dtype(a)]}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_SHORT[_dtype(a)]} and y of type {_SHORT[_dtype(b)]} "
                           f"instead")
    try:
        prod = xp.conj(compute_array(a)) * compute_array(b)
    except ValueError:
        raise broadcast_error(a, b) from None
    d = wrap_dim(dim, prod.ndim)
    if needs_grad(x, y):
        return finish((_conj(x) * y).sum(d), out)
    return finish(wrap(result_array(xp.asarray(prod.sum(axis=d)), _dtype(a))), out)


@_linalg()
def cond(input, p=None, *, out=None):
    """Condition number: sigma_max / sigma_min for p None/2 (-2: the inverse ratio), else
    norm(A, p) * norm(inv(A), p)."""
    a = input._data
    svd_based = p is None or p in (2, -2)
    # torch's first LAPACK call is an SVD for these orders (and for the 'nuc' norm)
    dt = _check_float(a, "linalg.inv",
                      NotImplementedError if svd_based or p == "nuc" else RuntimeError,
                      "linalg_svd_cpu", empty_ok=False)
    rd = dt.to_real()
    if needs_grad(input):
        return finish(_cond_graph(input, p, svd_based), out)
    if svd_based:
        _check_matrix(a, "linalg.cond", square=False)
        s = _svd(a, "linalg.cond", False, False)[1]
        with xp.errstate(all="ignore"):
            r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return finish(wrap(result_array(xp.asarray(r), rd)), out)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        _check_matrix(a, f"linalg.cond(ord={p})")
    flat = a.reshape((-1,) + a.shape[-2:])
    inv = xp.zeros_like(flat)
    singular = xp.zeros(flat.shape[0], bool)
    for i in range(flat.shape[0]):
        try:
            inv[i] = _np_linalg.inv(flat[i])
        except _np_linalg.LinAlgError:
            singular[i] = True
    n1 = _matrix_norm(a, p, (-2, -1), False, rd)
    n2 = _matrix_norm(inv.reshape(a.shape), p, (-2, -1), False, rd)
    with xp.errstate(all="ignore"):
        # a singular matrix has an infinite condition number in these norms
        r = xp.where(singular.reshape(a.shape[:-2]), xp.inf, n1 * n2)
    return finish(wrap(result_array(xp.asarray(r), rd)), out)


def _cond_graph(A, p, svd_based):
    """linalg.cond composed from differentiable pieces, as torch records it."""
    if svd_based:
        _check_matrix(A._data, "linalg.cond", square=False)
        s = svdvals(A)
        k = s.shape[-1]
        hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, k - 1, 1)
        return (hi / lo if p != -2 else lo / hi).squeeze(-1)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        _check_matrix(A._data, f"linalg.cond(ord={p})")
    inv, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(inv, p)
    if p == "nuc":
        return r
    # singular matrices: an infinite condition number (torch's nan_to_num(..., nan=inf))
    from .. import nan_to_num
    return nan_to_num(r, nan=_INF)


@_linalg()
def vander(x, *, N=None):
    """Vandermonde matrix with increasing powers: columns x**0, x**1, ..., x**(N-1)."""
    a = x._data
    if a.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    if a.dtype == xp.bool_ or _dtype(a) in _LOW:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_SHORT[_dtype(a)]}")
    n = a.shape[-1] if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    dt = _dtype(a)
    # ints use int64 like torch's cumprod
    dt = _dt.int64 if dt._category < 2 else dt
    if needs_grad(x):
        from .. import cat
        col = x.unsqueeze(-1)
        powers = col.expand(*x.shape, n - 1).cumprod(-1)
        return cat([x.new_ones(x.shape + (1,)), powers], -1)
    c = compute_array(a.astype(dt.np, copy=False))
    r = c[..., None] ** xp.arange(n, dtype=xp.int64).astype(c.dtype)
    return wrap(result_array(r, dt))


@_linalg()
def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve A X = B (or X A = B) for triangular A by substitution; no error when singular
    (the result then holds inf/nan, as in torch)."""
    a, b = input._data, B._data
    _check_float(a, "linalg.solve_triangular", NotImplementedError, "triangular_solve_cpu",
                 NotImplementedError, empty_ok=False)
    if a.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 "
                           "dimensions.")
    if b.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    _check_matrix(a, "linalg.solve_triangular")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {_SHORT[_dtype(a)]} and B of type "
                           f"{_SHORT[_dtype(b)]} instead")
    upper_in = upper
    if not left:
        # X A = B  <=>  A^T X^T = B^T, and A^T is triangular the other way
        a, b, upper = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not upper
    n = a.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    batch = _batch_shape(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    x = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]))
    order = range(n - 1, -1, -1) if upper else range(n)
    with xp.errstate(all="ignore"):
        for i in order:
            # row i minus the already solved unknowns (the rest of x is still zero-free B)
            rest = slice(i + 1, n) if upper else slice(0, i)
            acc = x[..., i, :] - (a[..., i, rest, None] * x[..., rest, :]).sum(axis=-2)
            x[..., i, :] = acc if unitriangular else acc / a[..., i, i, None]
    if not left:
        x = xp.swapaxes(x, -1, -2)
    r = wrap(xp.ascontiguousarray(x))
    if needs_grad(input, B):
        record(r, LinalgSolveTriangularBackward0, (input, B), A=input, X=r, upper=upper_in,
               left=left, unitriangular=unitriangular)
    return finish(r, out)


class LinalgSolveTriangularBackward0(Node):
    def backward(self, grad):
        A, X, upper = self._saved_A, self._saved_X, self._saved_upper
        left, unit = self._saved_left, self._saved_unitriangular
        # gB solves the adjoint system; gA is -gB X^H (or -X^H gB) kept on A's triangle
        gB = solve_triangular(_h(A), grad, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if _wants(self, 0):
            gA = -matmul(gB, _h(X)) if left else -matmul(_h(X), gB)
            k = 1 if unit else 0
            gA = gA.triu(k) if upper else gA.tril(-k)
        return gA, (gB if _wants(self, 1) else None)


# ----------------------------------------------------------------------------- *_ex variants
# torch.linalg.inv_ex / cholesky_ex / solve_ex report a failing matrix in an int32 ``info``
# tensor (LAPACK's: > 0 for singular or not positive-definite input) instead of raising,
# unless ``check_errors=True``. Healthy matrices go through the same NumPy LAPACK calls as
# the plain functions; only failing ones are worked through here, to find LAPACK's info and
# the partial results LAPACK leaves behind.

_I32 = xp.dtype(xp.int32)


def _lu_partial_pivoting(m):
    """LAPACK getf2 on one square matrix: (LU, row permutation, info), info the 1-based column
    of the first zero pivot (0 when none). Elimination continues past a zero pivot."""
    lu = m.astype(m.dtype, copy=True)
    n = lu.shape[-1]
    perm = xp.arange(n)
    info = 0
    # LAPACK's complex pivot search ranks by |re| + |im|
    mag = (lambda v: xp.abs(v.real) + xp.abs(v.imag)) if xp.iscomplexobj(lu) else xp.abs
    with xp.errstate(all="ignore"):
        for k in range(n):
            p = k + int(xp.argmax(mag(lu[k:, k])))  # the first largest, as i?amax
            if p != k:
                lu[[k, p]] = lu[[p, k]]
                perm[[k, p]] = perm[[p, k]]
            pivot = lu[k, k]
            if pivot == 0:
                if not info:
                    info = k + 1
                continue  # the column below is all zero: nothing to eliminate
            lu[k + 1:, k] /= pivot
            lu[k + 1:, k + 1:] -= xp.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu, perm, info


def _lu_solve(lu, perm, b):
    """Solve (P L U) X = B from getf2's factors with IEEE arithmetic (inf/nan where a pivot is
    zero, as LAPACK's getrs leaves them)."""
    x = b[perm].astype(lu.dtype, copy=True)
    n = lu.shape[-1]
    with xp.errstate(all="ignore"):
        for i in range(n):  # unit lower triangle
            x[i] -= lu[i, :i] @ x[:i]
        for i in range(n - 1, -1, -1):
            x[i] = (x[i] - lu[i, i + 1:] @ x[i + 1:]) / lu[i, i]
    return x


def _singular_info(a, flat_ok):
    """For each matrix of ``a`` (flattened batch) not marked in ``flat_ok``: getf2's factors
    and info. A matrix LAPACK found singular but whose pivots here all come out nonzero (a
    rounding difference) gets the column of its smallest pivot."""
    out = {}
    for i in xp.flatnonzero(~flat_ok):
        lu, perm, info = _lu_partial_pivoting(a[i])
        if not info:
            info = int(xp.argmin(xp.abs(xp.diagonal(lu)))) + 1
        out[int(i)] = (lu, perm, info)
    return out


def _lapack_per_matrix(fn, flat):
    """``fn`` on each matrix of ``flat``: (results or None, ok mask); one batched call when none
    fails."""
    try:
        return fn(flat), xp.ones(flat.shape[0], bool)
    except _np_linalg.LinAlgError:
        pass
    res = xp.empty_like(flat)
    ok = xp.ones(flat.shape[0], bool)
    for i in range(flat.shape[0]):
        try:
            res[i] = fn(flat[i])
        except _np_linalg.LinAlgError:
            ok[i] = False
    return res, ok


def _ex_error(name, info, msg_of):
    """LinAlgError for the first failing matrix (torch names its batch element)."""
    flat = info.reshape(-1)
    i = int(xp.flatnonzero(flat)[0])
    where = f"(Batch element {i}): " if info.ndim else ""
    return LinAlgError(f"{name}: {where}{msg_of(int(flat[i]))}")


def _ex_out(result, info, out):
    if out is None:
        return result, info
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("out must be a tuple of 2 tensors")
    if out[1].dtype is not _dt.int32:
        raise RuntimeError(f"Expected out tensor to have dtype int, but got "
                           f"{_TYPE_NAMES.get(out[1].dtype, str(out[1].dtype))} instead")
    return finish(result, out[0]), finish(info, out[1])


def _inv_info(a):
    """(inverses, int32 info) of the square matrices ``a`` (not empty-checked)."""
    batch, n = a.shape[:-2], a.shape[-1]
    info = xp.zeros(batch, _I32)
    if a.size == 0:
        return a.copy(), info
    flat = a.reshape((-1, n, n))
    res, ok = _lapack_per_matrix(_np_linalg.inv, flat)
    eye = xp.eye(n, dtype=a.dtype)
    for i, (lu, perm, k) in _singular_info(flat, ok).items():
        res[i] = _lu_solve(lu, perm, eye)
        info.reshape(-1)[i] = k
    return res.reshape(a.shape), info


@_linalg()
def inv_ex(A, *, check_errors=False, out=None):
    """Inverse of square matrices with LAPACK's ``info`` (int32, batch shaped): 0, or the
    1-based column of the zero pivot of a singular matrix, whose ``inverse`` then holds the
    inf/nan a failed solve leaves. ``check_errors=True`` raises LinAlgError instead."""
    from .. import return_types as _rt
    a = A._data
    dt = _check_float(a, "linalg.inv")
    _check_matrix(a, "linalg.inv")
    r, info = _inv_info(a)
    r = result_array(r, dt)
    if check_errors and info.any():
        raise _ex_error("linalg.inv_ex", info, _singular_msg)
    r = wrap(r)
    if needs_grad(A):
        record(r, LinalgInvExBackward0, (A,), inverse=r)
    return _rt.linalg_inv_ex(*_ex_out(r, wrap(info), out))


def _partial_cholesky(m, k):
    """The lower factor LAPACK's left-looking potf2 leaves when the leading minor of order
    ``k`` fails: columns before k complete, the failing value on diagonal k, the rest of the
    lower triangle as in ``m``."""
    lower = xp.tril(m)
    j = k - 1
    with xp.errstate(all="ignore"):
        if j:
            l11 = _np_linalg.cholesky(m[:j, :j])
            lower[:j, :j] = l11
            # rows below: L21 = A21 L11^-H
            lower[j:, :j] = _np_linalg.solve(l11.conj(), m[j:, :j].T).T
        row = lower[j, :j]
        # potrf reads only the real part of a diagonal entry
        lower[j, j] = m[j, j].real - (row * row.conj()).real.sum()
    return lower


def _failing_order(m):
    """The order of the first leading minor of ``m`` that is not positive-definite (leading
    minors past a failing one fail too, so a bisection finds it)."""
    lo, hi = 1, m.shape[-1]
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            _np_linalg.cholesky(m[:mid, :mid])
            lo = mid + 1
        except _np_linalg.LinAlgError:
            hi = mid
    return lo


@_linalg()
def cholesky_ex(input, *, upper=False, check_errors=False, out=None):
    """Cholesky factor with LAPACK's ``info`` (int32, batch shaped): 0, or the order of the
    leading minor that is not positive-definite, where ``L`` holds the partial factorisation
    LAPACK leaves. ``check_errors=True`` raises LinAlgError instead."""
    from .. import return_types as _rt
    a = input._data
    dt = _check_float(a, "linalg.cholesky", NotImplementedError, "cholesky_cpu")
    _check_matrix(a, "linalg.cholesky")
    batch, n = a.shape[:-2], a.shape[-1]
    info = xp.zeros(batch, _I32)
    if a.size == 0:
        r = a.copy()
    else:
        flat = a.reshape((-1, n, n))
        if upper:  # LAPACK's 'U' factorisation reads the upper triangle: factor A^H's lower
            flat = xp.conj(xp.swapaxes(flat, -1, -2))
        res, ok = _lapack_per_matrix(_np_linalg.cholesky, flat)
        # NumPy lets NaN through; potrf stops at the first NaN pivot it meets
        nan_pivot = xp.isnan(xp.diagonal(res, axis1=-2, axis2=-1)).any(-1) & ok
        ok &= ~nan_pivot
        for i in xp.flatnonzero(~ok):
            if nan_pivot[i]:
                k = int(xp.argmax(xp.isnan(xp.diagonal(res[i])))) + 1
            else:
                k = _failing_order(flat[i])
            res[i] = _partial_cholesky(flat[i], k)
            info.reshape(-1)[i] = k
        r = res.reshape(a.shape)
        if upper:
            r = xp.conj(xp.swapaxes(r, -1, -2))
        r = xp.ascontiguousarray(result_array(r, dt))
    if check_errors and info.any():
        raise _ex_error("linalg.cholesky_ex", info, _NOT_PD.format)
    r = wrap(r)
    if needs_grad(input):
        record(r, LinalgCholeskyExBackward0, (input,), L=r, upper=upper)
    return _rt.linalg_cholesky_ex(*_ex_out(r, wrap(info), out))


@_linalg()
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Solve A X = B (X A = B with ``left=False``) with LAPACK's ``info`` (int32, shaped like
    A's batch): 0, or the 1-based column of the zero pivot of a singular A, whose solution
    then holds inf/nan. ``check_errors=True`` raises LinAlgError instead."""
    from .. import return_types as _rt
    a = A._data
    n = a.shape[-1] if a.ndim >= 2 else 0
    flat_ok, singular = None, {}
    if a.ndim >= 2 and a.size and a.shape[-1] == a.shape[-2] and \
            _dtype(a)._category >= 2 and _dtype(a) not in _LOW:
        flat = a.reshape((-1, n, n))
        _, flat_ok = _lapack_per_matrix(_np_linalg.inv, flat)
        singular = _singular_info(flat, flat_ok)
    info = xp.zeros(a.shape[:-2] if a.ndim >= 2 else (), _I32)
    for i, (_, _, k) in singular.items():
        info.reshape(-1)[i] = k
    if check_errors and info.any():
        raise _ex_error("torch.linalg.solve_ex", info,
                        lambda k: "The solver failed because the input matrix is singular.")
    if not singular:
        r = solve(A, B, left=left)
    else:
        r = _solve_singular(A, B, left, singular)
    return _rt.linalg_solve_ex(*_ex_out(r, wrap(info), out))


def _solve_singular(A, B, left, singular):
    """``solve`` for a batch holding singular matrices: the healthy ones through LAPACK, the
    singular ones through the getf2 factors of A (inf/nan as LAPACK leaves), transposed for
    ``left=False`` as LAPACK's getrs('T') does."""
    a, b = A._data, B._data
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    at = a if left else xp.swapaxes(a, -1, -2)
    bm = b[..., None] if vector else (b if left else xp.swapaxes(b, -1, -2))
    if bm.shape[-2] != at.shape[-1]:
        return solve(A, B, left=left)  # solve raises torch's shape error
    batch = _batch_shape(a.shape[:-2], bm.shape[:-2])
    n = a.shape[-1]
    a_b = xp.broadcast_to(at, batch + at.shape[-2:]).reshape((-1, n, n))
    b_b = xp.broadcast_to(bm, batch + bm.shape[-2:]).reshape((-1,) + bm.shape[-2:])
    # the matrix of A (flattened batch index) each broadcast problem uses
    n_a = 1
    for d in a.shape[:-2]:
        n_a *= d
    owner = xp.broadcast_to(xp.arange(n_a).reshape(a.shape[:-2]), batch).reshape(-1)
    res = xp.empty(b_b.shape, a.dtype)
    for p in range(a_b.shape[0]):
        fact = singular.get(int(owner[p]))
        if fact is None:
            res[p] = _np_linalg.solve(a_b[p], b_b[p])
        elif left:
            res[p] = _lu_solve(fact[0], fact[1], b_b[p])
        else:
            res[p] = _lu_solve_transposed(fact[0], fact[1], b_b[p])
    r = res.reshape(batch + bm.shape[-2:])
    if vector:
        r = r[..., 0]
    elif not left:
        r = xp.swapaxes(r, -1, -2)
    r = wrap(xp.ascontiguousarray(result_array(r, _dtype(a))))
    if needs_grad(A, B):
        record(r, LinalgSolveExBackward0, (A, B), A=A, left=left, result=r, vector=vector)
    return r


def _lu_solve_transposed(lu, perm, b):
    """Solve A^T X = B from getf2's factors of A (P A = L U, so A^T = U^T L^T P)."""
    x = b.astype(lu.dtype, copy=True)
    n = lu.shape[-1]
    with xp.errstate(all="ignore"):
        for i in range(n):  # U^T is lower triangular
            x[i] = (x[i] - lu[:i, i] @ x[:i]) / lu[i, i]
        for i in range(n - 1, -1, -1):  # L^T is unit upper triangular
            x[i] -= lu[i + 1:, i] @ x[i + 1:]
    out = xp.empty_like(x)
    out[perm] = x
    return out


# ----------------------------------------------------------------------------- LU family
# LU with partial pivoting (LAPACK getrf's result: P A = L U with LU packed in one matrix
# and 1-based int32 row interchanges), batched and for rectangular matrices. The backward
# formulas are written with differentiable ops (solve_triangular, matmul), so double
# backward works through them.

def _lu_batched(a):
    """(LU, pivots, info) for a (B, m, n) array: getrf's packed factors, 1-based pivots and
    the 1-based index of the first zero pivot (0 when none); elimination goes on past it."""
    lu = xp.array(a, copy=True)
    nb, m, n = lu.shape
    k = min(m, n)
    pivots = xp.zeros((nb, k), xp.int32)
    info = xp.zeros(nb, xp.int32)
    rows = xp.arange(nb)
    # LAPACK's complex pivot search ranks by |re| + |im| (i?amax)
    mag = (lambda v: xp.abs(v.real) + xp.abs(v.imag)) if xp.iscomplexobj(lu) else xp.abs
    with xp.errstate(all="ignore"):
        for j in range(k):
            p = j + xp.argmax(mag(lu[:, j:, j]), axis=1)
            pivots[:, j] = p + 1
            row_j = lu[rows, j].copy()
            lu[rows, j] = lu[rows, p]
            lu[rows, p] = row_j
            piv = lu[:, j, j]
            zero = piv == 0
            info = xp.where(zero & (info == 0), j + 1, info).astype(xp.int32)
            # a zero pivot is the column's largest: the column below is zero already
            col = lu[:, j + 1:, j] / xp.where(zero, 1, piv)[:, None]
            lu[:, j + 1:, j] = col
            lu[:, j + 1:, j + 1:] -= col[:, :, None] * lu[:, j, None, j + 1:]
    return lu, pivots, info


def _perm_from_pivots(pivots, m):
    """Row order (B, m) that getrf's interchanges produce: A[perm] = L U."""
    nb = pivots.shape[0]
    perm = xp.tile(xp.arange(m), (nb, 1))
    rows = xp.arange(nb)
    for j in range(pivots.shape[1]):
        p = pivots[:, j].astype(xp.int64) - 1
        pj = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = pj
    return perm


def _perm_matrix(perm, dtype):
    """P with A = P L U: column i of P is e_{perm[i]}."""
    nb, m = perm.shape
    P = xp.zeros((nb, m, m), dtype)
    P[xp.arange(nb)[:, None], perm, xp.arange(m)[None, :]] = 1
    return P


def _lu_checks(a, name, kernel="lu_cpu"):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(a.shape)} instead")
    return _check_float(a, name, NotImplementedError, kernel, NotImplementedError)


def _lu_factor_core(A, pivot, name):
    a = A._data
    dt = _lu_checks(a, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    flat = a.reshape((_prod(batch), m, n))
    lu, piv, info = _lu_batched(flat)
    lu = wrap(result_array(lu.reshape(a.shape), dt))
    piv = wrap(piv.reshape(batch + (min(m, n),)))
    info = wrap(info.reshape(batch))
    if needs_grad(A):
        record(lu, LinalgLuFactorExBackward0, (A,), LU=lu, pivots=piv)
    return lu, piv, info


@_linalg()
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU factorization with partial pivoting, packed as LAPACK's getrf: (LU, pivots, info);
    info > 0 names the first zero pivot of U instead of raising (unless check_errors)."""
    from .. import return_types as _rt
    lu, piv, info = _lu_factor_core(A, pivot, "torch.lu_factor")
    if check_errors and info._data.any():
        raise _ex_error("torch.linalg.lu_factor_ex", info._data,
                        lambda k: f"U[{k},{k}] is zero and using it on lu_solve would result "
                                  f"in a division by zero.")
    res = _rt.linalg_lu_factor_ex(lu, piv, info)
    return _finish_tuple(res, out)


@_linalg()
def lu_factor(A, *, pivot=True, out=None):
    """LU factorization with partial pivoting as (LU, pivots); RuntimeError when U has a
    zero pivot (use lu_factor_ex or lu to factor such matrices anyway)."""
    from .. import return_types as _rt
    lu, piv, info = _lu_factor_core(A, pivot, "torch.lu_factor")
    if info._data.any():
        flat = info._data.reshape(-1)
        i = int(xp.flatnonzero(flat)[0])
        where = f"(Batch element {i}): " if info._data.ndim else ""
        k = int(flat[i])
        raise RuntimeError(f"torch.linalg.lu_factor: {where}U[{k},{k}] is zero and using it on "
                           f"lu_solve would result in a division by zero. If you still want "
                           f"to perform the factorization, consider calling linalg.lu(A, "
                           f"pivot) or linalg.lu_factor_ex(A, pivot)")
    return _finish_tuple(_rt.linalg_lu_factor(lu, piv), out)


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from packed factors; L and U as differentiable functions of LU."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    if unpack_pivots:
        piv = pivots._data.reshape((_prod(tuple(pivots.shape[:-1])), pivots.shape[-1]))
        perm = _perm_from_pivots(piv, m)
        P = wrap(_perm_matrix(perm, LU._data.dtype).reshape(LU.shape[:-2] + (m, m)))
    else:
        P = wrap(xp.zeros((0,), LU._data.dtype))
    if not unpack_data:
        empty = wrap(xp.zeros((0,), LU._data.dtype))
        return P, empty, empty
    eye = wrap(xp.eye(m, k, dtype=LU._data.dtype))
    L = LU[..., :, :k].tril(-1) + eye
    U = LU[..., :k, :].triu()
    return P, L, U


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """torch.lu_unpack: (P, L, U) with A = P L U from lu_factor's packed result."""
    from .. import return_types as _rt
    if LU_pivots.dtype is not _dt.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.")
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    P, L, U = _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    if needs_grad(LU_data) and unpack_data:
        # one node, as torch's LuUnpackBackward0, over the two differentiable outputs
        Ld, Ud = wrap(L._data), wrap(U._data)
        record((Ld, Ud), LuUnpackBackward0, (LU_data,), m=LU_data.shape[-2],
               n=LU_data.shape[-1])
        L, U = Ld, Ud
    return _finish_tuple(_rt.lu_unpack(P, L, U), out)


class LuUnpackBackward0(Node):
    def backward(self, gL, gU):
        m, n = self._saved_m, self._saved_n
        k = min(m, n)
        from .. import zeros
        g = zeros(gL.shape[:-2] + (m, n), dtype=gL.dtype)
        g[..., :, :k] = g[..., :, :k] + gL.tril(-1)
        g[..., :k, :] = g[..., :k, :] + gU.triu()
        return g


def _lu_grad(P, L, U, gL, gU):
    """Gradient of A = P L U given the gradients of L and U (real or complex, any shape)."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        phi = matmul(_h(L), gL).tril(-1) + matmul(gU, _h(U)).triu()
        x = solve_triangular(_h(L), phi, upper=True, unitriangular=True)
        return matmul(P, solve_triangular(_h(U), x, upper=False, left=False))
    if m < n:  # wide: U = [U1 | U2]
        U1, U2, gU1, gU2 = U[..., :, :m], U[..., :, m:], gU[..., :, :m], gU[..., :, m:]
        phi = (matmul(_h(L), gL) - matmul(gU2, _h(U2))).tril(-1) + \
            matmul(gU1, _h(U1)).triu()
        left = solve_triangular(_h(U1), phi, upper=False, left=False)
        from .. import cat
        g = cat([left, gU2], -1)
        return matmul(P, solve_triangular(_h(L), g, upper=True, unitriangular=True))
    # tall: L = [L1; L2]
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    phi = matmul(_h(L1), gL1).tril(-1) + (matmul(gU, _h(U)) - matmul(_h(L2), gL2)).triu()
    top = solve_triangular(_h(L1), phi, upper=True, unitriangular=True)
    from .. import cat
    g = cat([top, gL2], -2)
    return matmul(P, solve_triangular(_h(U), g, upper=False, left=False))


class LinalgLuFactorExBackward0(Node):
    def backward(self, gLU, *rest):
        LU, pivots = self._saved_LU, self._saved_pivots
        m, n = LU.shape[-2:]
        k = min(m, n)
        P, L, U = _unpack(LU, pivots)
        return _lu_grad(P, L, U, gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu())


class LinalgLuBackward0(Node):
    def backward(self, gP, gL, gU):
        return _lu_grad(self._saved_P, self._saved_L, self._saved_U, gL, gU)


@_linalg()
def lu(A, *, pivot=True, out=None):
    """LU decomposition with partial pivoting as (P, L, U), A = P L U; works on singular
    and rectangular matrices (L is m x k unit lower, U is k x n upper, k = min(m, n))."""
    from .. import return_types as _rt
    a = A._data
    _lu_checks(a, "linalg.lu")
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    m, n = a.shape[-2:]
    lu_arr, piv, _info = _lu_batched(a.reshape((_prod(a.shape[:-2]), m, n)))
    lu_t = wrap(result_array(lu_arr.reshape(a.shape), _dtype(a)))
    P, L, U = _unpack(lu_t, wrap(piv.reshape(a.shape[:-2] + (min(m, n),))))
    L, U = wrap(xp.ascontiguousarray(L._data)), wrap(xp.ascontiguousarray(U._data))
    if needs_grad(A):
        record((P, L, U), LinalgLuBackward0, (A,), P=P, L=L, U=U)
        P.grad_fn, P._requires_grad = None, False  # the permutation is not differentiable
    return _finish_tuple(_rt.linalg_lu(P, L, U), out)


@_linalg("lu_solve")
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve A X = B (``adjoint``: A^H X = B; ``left=False``: X A = B) from lu_factor's
    packed factors of A."""
    lu_a, b = LU._data, B._data
    _check_float(lu_a, "linalg.lu_solve", NotImplementedError, "lu_solve_cpu",
                 NotImplementedError, empty_ok=False)
    if lu_a.ndim < 2 or lu_a.shape[-1] != lu_a.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {lu_a.shape[-2] if lu_a.ndim > 1 else 1} by "
                           f"{lu_a.shape[-1]} matrices")
    if b.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if lu_a.dtype != b.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_SHORT[_dtype(lu_a)]} and B of type "
                           f"{_SHORT[_dtype(b)]} instead")
    if pivots.dtype is not _dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    n = lu_a.shape[-1]
    rows = b.shape[-2] if left else b.shape[-1]
    if rows != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    with _no_grad():
        X = _lu_solve_graph(LU, pivots, B, left, adjoint)
    X = wrap(xp.ascontiguousarray(X._data))
    if needs_grad(LU, B):
        record(X, LinalgLuSolveBackward0, (LU, None, B), LU=LU, pivots=pivots, X=X,
               left=left, adjoint=adjoint)
    return finish(X, out)


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


def _lu_solve_graph(LU, pivots, B, left, adjoint):
    """X from the factors with differentiable ops: A = P L U."""
    P, L, U = _unpack(LU, pivots)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _h(_lu_solve_graph(LU, pivots, _h(B), True, not adjoint))
    if adjoint:  # A^H X = B: U^H L^H P^T X = B
        y = solve_triangular(_h(U), B, upper=False)
        y = solve_triangular(_h(L), y, upper=True, unitriangular=True)
        return matmul(P, y)
    y = solve_triangular(L, matmul(P.mT, B), upper=False, unitriangular=True)
    return solve_triangular(U, y, upper=True)


class LinalgLuSolveBackward0(Node):
    def backward(self, grad):
        LU, pivots, X = self._saved_LU, self._saved_pivots, self._saved_X
        left, adjoint = self._saved_left, self._saved_adjoint
        # op(A) = A or A^H; left: op(A) X = B, right: X op(A) = B
        if left:
            gB = linalg_lu_solve(LU, pivots, grad, left=True, adjoint=not adjoint)
            g_op = -matmul(gB, _h(X))
        else:
            gB = linalg_lu_solve(LU, pivots, grad, left=False, adjoint=not adjoint)
            g_op = -matmul(_h(X), gB)
        gLU = None
        if _wants(self, 0):
            gA = _h(g_op) if adjoint else g_op
            P, L, U = _unpack(LU, pivots)
            # A = P L U with L = tril(LU, -1) + I and U = triu(LU)
            pa = matmul(P.mT, gA)
            gLU = matmul(pa, _h(U)).tril(-1) + matmul(_h(L), pa).triu()
        return gLU, None, (gB if _wants(self, 2) else None)


__all__ += ["lu_unpack"]


# ----------------------------------------------------------------------------- matrix_exp

def _expm_array(a):
    """exp of each square matrix in ``a``: scaling and squaring around a degree-18 Taylor
    polynomial (the scaled matrix has 1-norm <= 1/2, so the truncation is below roundoff)."""
    n = a.shape[-1]
    flat = a.reshape((_prod(a.shape[:-2]), n, n))
    eye = xp.eye(n, dtype=a.dtype)
    with xp.errstate(all="ignore"):
        norm = xp.abs(flat).sum(axis=-2).max(axis=-1) if n else xp.zeros(flat.shape[0])
        s = xp.where(norm > 0.5, xp.ceil(xp.log2(xp.where(norm > 0.5, norm, 1) / 0.5)), 0)
        s = xp.where(xp.isfinite(s), s, 0).astype(xp.int64)
        x = flat / (2.0 ** s).astype(flat.real.dtype)[:, None, None]
        p = xp.broadcast_to(eye, flat.shape).copy()
        for k in range(18, 0, -1):  # Horner: I + X/1 (I + X/2 (... (I + X/18)))
            p = eye + (x @ p) / k
        for j in range(int(s.max()) if s.size else 0):
            more = s > j
            p[more] = p[more] @ p[more]
    return p.reshape(a.shape)


@_linalg()
@register()
def matrix_exp(input):
    """Matrix exponential of square matrices (batched), differentiable (double backward too)."""
    A = input
    a = A._data
    dt = _dtype(a)
    if dt._category < 2:
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_SHORT[dt]}")
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    r = wrap(result_array(_expm_array(compute_array(a)), dt))
    if needs_grad(A):
        record(r, LinalgMatrixExpBackward0, (A,), A=A)
    return r


class LinalgMatrixExpBackward0(Node):
    def backward(self, grad):
        # the Frechet derivative's adjoint: the top-right block of exp([[A^H, G], [0, A^H]])
        from .. import cat
        A = self._saved_A
        n = A.shape[-1]
        Ah = _h(A)
        top = cat([Ah, grad], -1)
        bottom = cat([grad.new_zeros(grad.shape), Ah], -1)
        return matrix_exp(cat([top, bottom], -2))[..., :n, n:]


# ----------------------------------------------------------------------------- Cholesky solves

def _cholesky_factor_checks(b, f, name, kernel):
    _check_float(f._data, name, NotImplementedError, kernel, NotImplementedError,
                 empty_ok=False)
    if f.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if f.shape[-1] != f.shape[-2]:
        raise RuntimeError(f"{'' if b is not None else name + ': '}A must be batches of square "
                           f"matrices, but they are {f.shape[-2]} by {f.shape[-1]} matrices")


@register()
def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve A X = B given A's Cholesky factor ``input2`` (A = L L^H, or U^H U when
    ``upper``); ``input`` is B."""
    B, F = input, input2
    if B.dtype is not F.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_SHORT[B.dtype]} and A of type {_SHORT[F.dtype]} instead.")
    _cholesky_factor_checks(B, F, "cholesky_solve", "cholesky_solve_cpu")
    if B.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has 1 dimensions instead")
    n = F.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} "
                           f"by {n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    with _no_grad():
        X = _cholesky_solve_graph(B, F, upper)
    X = wrap(xp.ascontiguousarray(X._data))
    if needs_grad(B, F):
        record(X, CholeskySolveBackward0, (B, F), F=F, X=X, upper=upper)
    return finish(X, out)


def _cholesky_solve_graph(B, F, upper):
    if upper:  # U^H U X = B
        y = solve_triangular(_h(F), B, upper=False)
        return solve_triangular(F, y, upper=True)
    y = solve_triangular(F, B, upper=False)
    return solve_triangular(_h(F), y, upper=True)


class CholeskySolveBackward0(Node):
    def backward(self, grad):
        F, X, upper = self._saved_F, self._saved_X, self._saved_upper
        gB = cholesky_solve(grad, F, upper)
        gF = None
        if _wants(self, 1):
            # torch's formula: no projection onto the factor's triangle
            c = matmul(gB, _h(X))
            c = c + _h(c)
            gF = -matmul(F, c) if upper else -matmul(c, F)
        return (gB if _wants(self, 0) else None), gF


@register()
def cholesky_inverse(input, upper=False, *, out=None):
    """Inverse of A = L L^H (or U^H U when ``upper``) from its Cholesky factor ``input``."""
    _cholesky_factor_checks(None, input, "cholesky_inverse", "cholesky_inverse_out_cpu")
    n = input.shape[-1]
    eye = wrap(xp.broadcast_to(xp.eye(n, dtype=input._data.dtype), input.shape).copy())
    with _no_grad():
        r = _cholesky_solve_graph(eye, input, upper)
    r = wrap(xp.ascontiguousarray(r._data))
    if needs_grad(input):
        record(r, CholeskyInverseBackward0, (input,), F=input, result=r, upper=upper)
    return finish(r, out)


class CholeskyInverseBackward0(Node):
    def backward(self, grad):
        F, R, upper = self._saved_F, self._saved_result, self._saved_upper
        c = matmul(matmul(R, grad + _h(grad)), R)
        return -matmul(F, c) if upper else -matmul(c, F)



# ----------------------------------------------------------------------------- tensor solves

@_linalg()
def tensorinv(input, ind=2, *, out=None):
    """The tensor inverse for tensordot: A reshaped to a square matrix at ``ind``, inverted,
    and shaped as A.shape[ind:] + A.shape[:ind]."""
    A = input
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    front, back = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    pf, pb = _prod(front), _prod(back)
    if pf != pb:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pb} != {pf}")
    return finish(linalg_inv(A.reshape(pf, pb)).reshape(back + front), out)


@_linalg()
def tensorsolve(input, other, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B; ``dims`` are A's dims moved to the end first."""
    A, B = input, other
    if dims is not None:
        nd = A.dim()
        dims = [wrap_dim(d, nd) for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    pr, pb = _prod(rest), _prod(tuple(A.shape[:B.dim()]))
    if pr != pb:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {pr} != {pb}")
    x = solve(A.reshape(pb, pr), B.reshape(pb))
    return finish(x.reshape(rest), out)


@register()
def lu_solve(input, LU_data, LU_pivots, *, out=None):
    """Deprecated torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU, pivots, b)."""
    return linalg_lu_solve(LU_data, LU_pivots, input, out=out)


def _tensor_lu(self, pivot=True, get_infos=False):
    """Deprecated Tensor.lu: (LU, pivots) or (LU, pivots, infos) from lu_factor_ex."""
    lu_, piv, info = lu_factor_ex(self, pivot=pivot)
    return (lu_, piv, info) if get_infos else (lu_, piv)


_common_attach("lu", _tensor_lu)


__all__ += ["matrix_exp", "cholesky_solve", "cholesky_inverse", "lu_solve"]


# ============================================================================= Householder, LDL

def _householder_graph(A, tau):
    """H_1 ... H_k applied to the first n columns of the identity, H_i = I - tau_i v_i v_i^H
    (v_i: 1 at row i, A's column i below it, zeros above), with differentiable ops."""
    from .creation import eye
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    below = eye(m, n, dtype=A.dtype).logical_not().tril().to(A.dtype)  # strictly lower mask
    V = A * below + eye(m, n, dtype=A.dtype)
    X = eye(m, n, dtype=A.dtype).expand(A.shape).clone()
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        X = X - tau[..., i:i + 1, None] * matmul(v, matmul(_h(v), X))
    return X


class LinalgHouseholderProductBackward0(Node):
    def backward(self, grad):
        # differentiate the product again as recorded ops (gives double backward too)
        from ..autograd import engine
        from ..autograd.grad_mode import enable_grad, is_grad_enabled
        create = is_grad_enabled()
        inputs = (self._saved_input, self._saved_tau)
        need = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        if inputs[1].shape[-1] == 0:  # no reflectors: Q is the identity, constant
            return tuple(wrap(xp.zeros_like(t._data)) for t in inputs)
        with enable_grad():
            Q = _householder_graph(*inputs)
            found = engine.grad(Q, [inputs[i] for i in need], grad, create_graph=create,
                                allow_unused=True)
        grads = [None, None]
        for i, g in zip(need, found):
            grads[i] = g
        return tuple(grads)


@_linalg()
def householder_product(input, tau, *, out=None):
    """The first n columns of H_1 ... H_k from Householder reflectors packed as geqrf
    leaves them (LAPACK's orgqr); ``input`` is (*, m, n) with m >= n >= k = tau.shape[-1]."""
    name = "torch.linalg.householder_product"
    A = input
    a, t = A._data, tau._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if t.ndim != a.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if t.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(t.shape[:-1])}")
    if a.dtype != t.dtype:
        raise RuntimeError(f"{name}: tau dtype {_SHORT[_dtype(t)]} does not match input dtype "
                           f"{_SHORT[_dtype(a)]}")
    _check_float(a, name, NotImplementedError, "orgqr_cpu", NotImplementedError)
    with _no_grad():
        Q = _householder_graph(A, tau)
    Q = wrap(xp.ascontiguousarray(Q._data))
    if needs_grad(A, tau):
        record(Q, LinalgHouseholderProductBackward0, (A, tau), input=A, tau=tau)
    return finish(Q, out)


@register()
def orgqr(input, input2, *, out=None):
    """``linalg.householder_product`` under LAPACK's name (``input2`` is tau)."""
    return householder_product(input, input2, out=out)


_BK_ALPHA = (1 + 17 ** 0.5) / 8  # Bunch-Kaufman's growth-bounding constant


def _abs1(x):
    """LAPACK's pivot size for complex entries: |re| + |im|."""
    return abs(x.real) + abs(x.imag) if xp.iscomplexobj(x) else abs(x)


def _sytf2_lower(a, hermitian):
    """In-place Bunch-Kaufman L D L^T (or L D L^H) of one matrix's lower triangle, as
    LAPACK's sytf2/hetf2 with uplo='L': returns (1-based ipiv, info)."""
    n = a.shape[0]
    cj = xp.conj if hermitian else (lambda x: x)
    ipiv = xp.zeros(n, xp.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        akk = a[k, k].real if hermitian else a[k, k]
        absakk = abs(akk) if hermitian else _abs1(akk)
        if k + 1 < n:
            col = _abs1(a[k + 1:, k])
            imax = k + 1 + int(xp.argmax(col))
            colmax = float(col.max())
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0:
            info = info or k + 1
            kp = k
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _BK_ALPHA * colmax:
                kp = k
            else:
                rowmax = float(_abs1(a[imax, k:imax]).max())
                if imax + 1 < n:
                    rowmax = max(rowmax, float(_abs1(a[imax + 1:, imax]).max()))
                aii = abs(a[imax, imax].real) if hermitian else _abs1(a[imax, imax])
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aii >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # symmetric interchange of rows/columns kk and kp below k
                if kp + 1 < n:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                seg = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = cj(seg)
                if hermitian:
                    a[kp, kk] = xp.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if hermitian:
                    a[k, k] = a[k, k].real
                if k + 1 < n:
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= xp.tril(xp.outer(x, cj(x)) / a[k, k])
                    a[k + 1:, k] = x / a[k, k]
            else:
                if hermitian:
                    a[k, k] = a[k, k].real
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
                if k + 2 < n:
                    d21 = a[k + 1, k]
                    # W = A[k+2:, k:k+2] D^-1 with D = [[a_kk, conj(d21)], [d21, a_k1k1]]
                    D = xp.array([[a[k, k], cj(d21)], [d21, a[k + 1, k + 1]]])
                    Wt = a[k + 2:, k:k + 2].copy()
                    W = xp.linalg.solve(D.T, Wt.T).T
                    a[k + 2:, k + 2:] -= xp.tril(Wt @ cj(W).T)
                    a[k + 2:, k:k + 2] = W
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _ldl_checks(a, name):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    return _check_float(a, name, NotImplementedError, "ldl_factor_kernel_cpu")


@_linalg()
def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """Bunch-Kaufman factorization A = P L D L^T P^T of a symmetric (``hermitian``: Hermitian)
    matrix, packed as LAPACK's sytrf: (LD, pivots, info). Only A's lower triangle is read;
    info > 0 names a zero diagonal block of D."""
    from .. import return_types as _rt
    name = "torch.linalg.ldl_factor_ex"
    A = input
    a = A._data
    dt = _ldl_checks(a, name)
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = xp.array(a.reshape((_prod(batch), n, n)), dtype=dt.np, copy=True)
    pivots = xp.zeros((flat.shape[0], n), xp.int32)
    infos = xp.zeros(flat.shape[0], xp.int32)
    hermitian = bool(hermitian) and xp.iscomplexobj(flat)
    for i in range(flat.shape[0]):
        pivots[i], infos[i] = _sytf2_lower(flat[i], hermitian)
    LD = wrap(xp.tril(flat).reshape(a.shape))
    pivots = wrap(pivots.reshape(batch + (n,)))
    info = wrap(infos.reshape(batch))
    if check_errors and infos.any():
        raise _ex_error(name, info._data,
                        lambda k: f"The factorization could not be completed because the "
                                  f"input is not invertible: D[{k - 1},{k - 1}] is zero.")
    if needs_grad(A):
        from .random import NotImplemented as _NoFormula
        record(LD, _NoFormula, (A,), op="aten::linalg_ldl_factor_ex")
    return _finish_tuple(_rt.linalg_ldl_factor_ex(LD, pivots, info), out)


@_linalg()
def ldl_factor(input, *, hermitian=False, out=None):
    """``ldl_factor_ex`` without info: (LD, pivots); RuntimeError when D is singular."""
    from .. import return_types as _rt
    LD, pivots, info = ldl_factor_ex(input, hermitian=hermitian)
    if info._data.any():  # a RuntimeError in torch, not a LinAlgError
        raise RuntimeError(str(_ex_error(
            "torch.linalg.ldl_factor", info._data,
            lambda k: f"The factorization could not be completed because the input is not "
                      f"invertible: D[{k - 1},{k - 1}] is zero.")))
    return _finish_tuple(_rt.linalg_ldl_factor(LD, pivots), out)


def _sytrs_lower(ld, ipiv, b, hermitian):
    """Solve with one packed factorization (LAPACK sytrs/hetrs, uplo='L'), b in place."""
    n = ld.shape[0]
    cj = xp.conj if hermitian else (lambda x: x)
    k = 0
    while k < n:  # forward: (P L) y = b, then D z = y
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= xp.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k].real if hermitian else ld[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= xp.outer(ld[k + 2:, k], b[k]) + xp.outer(ld[k + 2:, k + 1], b[k + 1])
            D = xp.array([[ld[k, k], cj(ld[k + 1, k])], [ld[k + 1, k], ld[k + 1, k + 1]]])
            b[k:k + 2] = xp.linalg.solve(D, b[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:  # backward: (P L)^T x = z
        if ipiv[k] > 0:
            b[k] -= cj(ld[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= cj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= cj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2


@_linalg()
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve A X = B from ``ldl_factor``'s packed factors of A."""
    name = "torch.linalg.ldl_solve"
    ld, piv, b = LD._data, pivots._data, B._data
    if ld.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if ld.shape[-1] != ld.shape[-2]:
        raise RuntimeError(f"{name}: LD must be batches of square matrices, but they are "
                           f"{ld.shape[-2]} by {ld.shape[-1]} matrices")
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if pivots.dtype is not _dt.int32:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_SHORT[pivots.dtype]}")
    if ld.dtype != b.dtype:
        raise RuntimeError(f"{name}: LD dtype {_SHORT[_dtype(ld)]} does not match b dtype "
                           f"{_SHORT[_dtype(b)]}")
    dt = _check_float(ld, name)
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    batch = tuple(xp.broadcast_shapes(ld.shape[:-2], b.shape[:-2], piv.shape[:-1]))
    lds = xp.broadcast_to(ld, batch + ld.shape[-2:]).reshape((_prod(batch), n, n))
    pivs = xp.broadcast_to(piv, batch + piv.shape[-1:]).reshape((_prod(batch), n))
    X = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), dtype=dt.np, copy=True)
    flat = X.reshape((_prod(batch),) + b.shape[-2:])
    hermitian = bool(hermitian) and xp.iscomplexobj(flat)
    for i in range(flat.shape[0]):
        _sytrs_lower(lds[i], pivs[i], flat[i], hermitian)
    X = wrap(flat.reshape(X.shape))
    if needs_grad(LD, B):
        from .random import NotImplemented as _NoFormula
        record(X, _NoFormula, (LD, None, B), op="aten::linalg_ldl_solve")
    return finish(X, out)


def _geqr2(a):
    """In-place Householder QR of one matrix as LAPACK's geqr2: R on and above the diagonal,
    the reflectors' vectors below it; returns tau. H_i = I - tau_i v_i v_i^H with
    beta = -sign(Re alpha) * ||(alpha, x)|| (LAPACK's larfg)."""
    m, n = a.shape
    k = min(m, n)
    tau = xp.zeros(k, a.dtype)
    cplx = xp.iscomplexobj(a)
    for i in range(k):
        alpha = a[i, i]
        xnorm = float(xp.linalg.norm(a[i + 1:, i]))
        if xnorm == 0 and (not cplx or alpha.imag == 0):
            continue  # H_i = I
        norm = float(xp.sqrt(abs(alpha) ** 2 + xnorm ** 2))
        beta = -norm if alpha.real >= 0 else norm
        tau[i] = (beta - alpha) / beta
        a[i + 1:, i] /= alpha - beta
        a[i, i] = beta
        if i + 1 < n:  # apply H_i^H from the left to the trailing columns
            v = xp.concatenate([xp.ones(1, a.dtype), a[i + 1:, i]])
            w = v.conj() @ a[i:, i + 1:]
            a[i:, i + 1:] -= xp.conj(tau[i]) * xp.outer(v, w)
    return tau


class GeqrfBackward0(_NoDerivativeNode):
    _op = "geqrf"


@register()
def geqrf(input, *, out=None):
    """QR as LAPACK's geqrf leaves it: (a, tau) with R in a's upper triangle and the
    Householder vectors below it (``householder_product(a, tau)`` is Q)."""
    from .. import return_types as _rt
    a = input._data
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    dt = _check_float(a, "torch.geqrf", NotImplementedError, "geqrf_cpu", NotImplementedError,
                      empty_ok=False)
    m, n = a.shape[-2:]
    flat = xp.array(a.reshape((_prod(a.shape[:-2]), m, n)), dtype=dt.np, copy=True)
    taus = xp.zeros((flat.shape[0], min(m, n)), dt.np)
    for i in range(flat.shape[0]):
        taus[i] = _geqr2(flat[i])
    qr = wrap(flat.reshape(a.shape))
    tau = wrap(taus.reshape(a.shape[:-2] + (min(m, n),)))
    if needs_grad(input):
        record((qr, tau), GeqrfBackward0, (input,))
    return _finish_tuple(_rt.geqrf(qr, tau), out)


def _ormqr_graph(A, tau, C, left, transpose):
    """op(Q) C (``left``) or C op(Q) with Q = H_1 ... H_k from geqrf's packed reflectors and
    op = conjugate transpose when ``transpose``, by applying each reflector in turn."""
    from .creation import eye
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    below = eye(m, n, dtype=A.dtype).logical_not().tril().to(A.dtype)
    V = A * below + eye(m, n, dtype=A.dtype)
    # Q C = H_1 (... (H_k C)); Q^H C = H_k^H (... (H_1^H C)); C Q = ((C H_1) ...) H_k
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1, None]
        if transpose:
            t = _conj(t)
        if left:
            C = C - t * matmul(v, matmul(_h(v), C))
        else:
            C = C - t * matmul(matmul(C, v), _h(v))
    return C


class OrmqrBackward0(Node):
    def backward(self, grad):
        from ..autograd import engine
        from ..autograd.grad_mode import enable_grad, is_grad_enabled
        inputs = (self._saved_input, self._saved_tau, self._saved_other)
        need = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        create = is_grad_enabled()  # create_graph: the gradients are differentiable
        with enable_grad():
            out = _ormqr_graph(*inputs, self._saved_left, self._saved_transpose)
            found = engine.grad(out, [inputs[i] for i in need], grad,
                                create_graph=create, allow_unused=True)
        grads = [None, None, None]
        for i, g in zip(need, found):
            grads[i] = g if g is not None else wrap(xp.zeros_like(inputs[i]._data))
        return tuple(grads)


@register()
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Multiply ``input3`` by Q (or Q^H when ``transpose``; from the right unless ``left``),
    Q given by geqrf's packed reflectors ``input`` and ``input2`` (LAPACK's ormqr)."""
    A, tau, C = input, input2, input3
    a, t, c = A._data, tau._data, C._data
    name = "torch.ormqr"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != a.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if t.shape[-1] > a.shape[-1]:
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to "
                           f"input.shape[-1]")
    if t.shape[-1] != min(c.shape[side], a.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    if not (a.dtype == t.dtype == c.dtype):
        raise RuntimeError(f"{name}: Expected input, input2 and other to have the same dtype, "
                           f"got {_SHORT[_dtype(a)]}, {_SHORT[_dtype(t)]} and "
                           f"{_SHORT[_dtype(c)]}")
    _check_float(a, name, NotImplementedError, "ormqr_cpu", NotImplementedError)
    with _no_grad():
        X = _ormqr_graph(A, tau, C, left, transpose)
    X = wrap(xp.ascontiguousarray(X._data))
    if needs_grad(A, tau, C):
        record(X, OrmqrBackward0, (A, tau, C), input=A, tau=tau, other=C, left=left,
               transpose=transpose)
    return finish(X, out)
