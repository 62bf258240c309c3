"""grouped_mm (Mixture-of-Experts grouped GEMM) and the scaled-matmul enums of nn.functional."""

from __future__ import annotations

from enum import Enum

from ..._core import dtype as _dt
from ..._ops import linalg as _linalg
from ..._ops import rearrange as _rearrange
from ..._ops._common import _SHORT, Node, needs_grad, record, wrap

__all__ = ["grouped_mm", "ScalingType", "SwizzleType"]


class ScalingType(Enum):
    """How scaled_mm's scales map onto a float8 operand."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(Enum):
    """Memory swizzle of scaled_mm's block scales."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


def _groups(offs):
    ends = [int(e) for e in offs.tolist()]
    return list(zip([0] + ends[:-1], ends))


def _grouped_graph(a, b, offs):
    """The grouped product with differentiable ops; groups cut the 2-D operands along their
    jagged dim at ``offs`` (rows past the last offset stay zero)."""
    if a.dim() == 3 and b.dim() == 3:
        return _linalg.matmul(a, b)
    groups = _groups(offs)
    if a.dim() == 2 and b.dim() == 3:  # rows of a by group, each times its b
        parts = [_linalg.matmul(a[s:e], b[i]) for i, (s, e) in enumerate(groups)]
        tail = a.new_zeros((a.shape[0] - groups[-1][1], b.shape[-1])) if groups else None
        return _rearrange.cat(parts + ([tail] if tail is not None and tail.shape[0] else []))
    if a.dim() == 3:  # columns of b by group, each times its a
        parts = [_linalg.matmul(a[i], b[:, s:e]) for i, (s, e) in enumerate(groups)]
        tail = b.new_zeros((a.shape[1], b.shape[1] - groups[-1][1]))
        return _rearrange.cat(parts + ([tail] if tail.shape[1] else []), 1)
    # both 2-D: the contraction dim is jagged, one (M, N) product per group
    return _rearrange.stack([_linalg.matmul(a[:, s:e], b[s:e]) for s, e in groups])


class GroupedMmBackward0(Node):
    def backward(self, grad):
        from ...autograd import engine
        from ...autograd.grad_mode import enable_grad, is_grad_enabled
        inputs = (self._saved_self, self._saved_mat2)
        need = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        create = is_grad_enabled()  # create_graph: the gradients are differentiable
        with enable_grad():
            out = _grouped_graph(*inputs, self._saved_offs)
            found = engine.grad(out, [inputs[i] for i in need], grad,
                                create_graph=create, allow_unused=True)
        grads = [None, None]
        for i, g in zip(need, found):
            grads[i] = g
        return tuple(grads)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped matrix multiply: 2-D operands are cut into groups at the int32 ``offs``
    (ends of groups), 3-D operands hold one matrix per group. (M, K) x (G, K, N) -> (M, N);
    (G, M, K) x (K, N) -> (M, N); (M, K) x (K, N) -> (G, M, N); (G, M, K) x (G, K, N)
    -> (G, M, N) without ``offs``."""
    if mat_a.dtype not in (_dt.float32, _dt.bfloat16, _dt.float16):
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{_SHORT[mat_a.dtype]}")
    if (offs is None) != (mat_a.dim() == 3 and mat_b.dim() == 3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype is not _dt.int32:
        raise RuntimeError("Offsets have to be int32")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    for m in (mat_a, mat_b):  # the grouped GEMM kernels' layout rule, as torch checks it
        if any(s > 1 and (s * m.element_size()) % 16 for s in m.stride()):
            raise RuntimeError("strides should be multiple of 16 bytes")
    from ...autograd.grad_mode import no_grad
    with no_grad():
        out = _grouped_graph(mat_a, mat_b, offs)
    out = wrap(out._data.copy())
    if needs_grad(mat_a, mat_b):
        record(out, GroupedMmBackward0, (mat_a, mat_b), self=mat_a, mat2=mat_b, offs=offs)
    return out
