"""``torch.sparse``: operations on sparse tensors (see ``glasstorch._ops.sparse``)."""

from __future__ import annotations

from .._ops.sparse import sparse_log_softmax as log_softmax
from .._ops.sparse import sparse_mm as mm
from .._ops.sparse import sparse_softmax as softmax
from .._ops.sparse import sparse_sum as sum  # noqa: A001 - torch's name
from .._sparse_tensor import SparseCooTensor, SparseCsrTensor

__all__ = ["mm", "sum", "addmm", "softmax", "log_softmax", "SparseCooTensor", "SparseCsrTensor"]


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` and dense ``mat`` and
    ``mat2``."""
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    return prod + (mat if beta == 1 else mat * beta)
