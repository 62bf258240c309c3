"""Flat-namespace forms that predate their modern spellings: torch.frobenius_norm and
torch.nuclear_norm (now torch.linalg's norms), torch.fill (out-of-place ``fill_``) and
torch.empty_permuted (an ``empty`` laid out in a given dimension order)."""

from __future__ import annotations

from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    Tensor,
    finish,
    needs_grad,
    record,
    wrap,
    xp,
)

__all__ = ["frobenius_norm", "nuclear_norm", "fill", "empty_permuted"]


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The 2-norm of ``input`` over (at most two) dims ``dim``."""
    from ..autograd.grad_mode import no_grad
    from .linalg import vector_norm
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    if input.dtype._category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_SHORT[input.dtype]} instead.")
    with no_grad():
        r = vector_norm(input, 2, dims, keepdim)
    if needs_grad(input):
        record(r, NormBackward1, (input,), self=input, dim=dims, keepdim=keepdim, result=r)
    return finish(r, out)


class NormBackward1(Node):
    def backward(self, grad):
        x, r = self._saved_self, self._saved_result
        if not self._saved_keepdim:
            for d in sorted(d % max(x.dim(), 1) for d in self._saved_dim):
                grad, r = grad.unsqueeze(d), r.unsqueeze(d)
        return (grad * x / r.masked_fill(r == 0, 1)).masked_fill(r == 0, 0)


def nuclear_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    """The nuclear norm (sum of singular values) over the matrix dims ``dim``."""
    from .linalg import matrix_norm
    return finish(matrix_norm(input, "nuc", dim, keepdim), out)


def fill(input, value):
    """A new tensor like ``input`` with every element ``value`` (a number or 0-d tensor)."""
    if isinstance(value, Tensor) and value.dim():
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    v = value._data if isinstance(value, Tensor) else value
    r = wrap(xp.full(input.shape, v).astype(input.dtype.np) if input.dtype is not _dt.bool_
             else xp.full(input.shape, bool(v)))
    if needs_grad(input, value):
        if isinstance(value, Tensor):
            record(r, FillBackward1, (input, value))
        else:
            record(r, FillBackward0, (input,))
    return r


class FillBackward0(Node):
    def backward(self, grad):
        return grad.new_zeros(grad.shape)


class FillBackward1(Node):
    def backward(self, grad):
        return grad.new_zeros(grad.shape), grad.sum()


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of ``size`` whose memory holds its dims in the order
    ``physical_layout`` (outermost first)."""
    from .creation import empty
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    phys = empty([size[p] for p in order], dtype=dtype, device=device)
    inverse = [order.index(i) for i in range(len(size))]
    r = wrap(phys._data.transpose(inverse))
    return r.requires_grad_() if requires_grad else r
