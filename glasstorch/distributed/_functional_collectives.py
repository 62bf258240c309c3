"""torch.distributed._functional_collectives: collectives that return a new tensor instead of
writing into their argument, differentiable as torch's are: the gradient of all_reduce is an
all_reduce (sum) of the gradients, all_gather's a reduce_scatter, reduce_scatter's an
all_gather, all_to_all_single's the all_to_all back (only "sum" reductions differentiate).

``group`` is a ProcessGroup, its name, a 1-D DeviceMesh, ``(mesh, mesh_dim)`` or a list of
global ranks. glasstorch's collectives have finished when they return, so the results are
plain, complete tensors (torch wraps them in an AsyncCollectiveTensor that waits on first
use) and ``wait_tensor`` finds nothing left to wait for."""

from __future__ import annotations

import warnings

from .. import cat
from .._tensor import Tensor
from ..autograd.function import Function
from . import (
    GroupMember,
    ProcessGroup,
    ReduceOp,
    _require_group,
    get_world_size,
    new_group,
)
from . import all_gather_into_tensor as _all_gather_into_tensor
from . import all_reduce as _all_reduce
from . import all_to_all_single as _all_to_all_single
from . import broadcast as _broadcast
from . import reduce_scatter_tensor as _reduce_scatter_tensor
from .device_mesh import DeviceMesh

__all__ = ["all_reduce", "all_reduce_coalesced", "all_gather_single",
           "all_gather_single_autograd", "all_gather_tensor", "all_gather_tensor_autograd",
           "all_gather_single_coalesced", "all_gather_into_tensor_coalesced",
           "reduce_scatter_single", "reduce_scatter_single_coalesced",
           "reduce_scatter_single_autograd", "reduce_scatter_tensor",
           "reduce_scatter_tensor_autograd", "reduce_scatter_tensor_coalesced",
           "all_to_all_single", "all_to_all_single_autograd", "broadcast", "permute_tensor",
           "wait_tensor", "REDUCE_OP_TO_STR"]

REDUCE_OP_TO_STR = {ReduceOp.SUM: "sum", ReduceOp.AVG: "avg", ReduceOp.PRODUCT: "product",
                    ReduceOp.MIN: "min", ReduceOp.MAX: "max", ReduceOp.BAND: "band",
                    ReduceOp.BOR: "bor", ReduceOp.BXOR: "bxor"}
_OPS = {name: op for op, name in REDUCE_OP_TO_STR.items()}


def _op(name):
    op = _OPS.get(name.lower())
    if op is None:
        raise RuntimeError(f"Unrecognized reduce_op: {name}")
    return op


def _resolve(group):
    """The ProcessGroup that ``group`` (any of the forms the module docstring lists) is."""
    if isinstance(group, ProcessGroup):
        return group
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise AssertionError("Only 1D mesh is supported, pass in (DeviceMesh, int) "
                                 "together if mesh > 1D")
        return group.get_group()
    if isinstance(group, tuple):
        if len(group) == 2 and isinstance(group[0], DeviceMesh) and isinstance(group[1], int):
            return group[0].get_group(group[1])
        raise ValueError(f"Invalid tuple for group must be (DeviceMesh, int). Instead got "
                         f"({', '.join(str(type(g)) for g in group)})")
    if isinstance(group, str):
        state = _require_group()
        for pg in [state["pg"], *state["subgroups"]]:
            if pg.group_name == group:
                return pg
        raise RuntimeError(f"Could not resolve the process group registered under the name "
                           f"{group}")
    if isinstance(group, list) and all(isinstance(r, int) for r in group):
        warnings.warn("The combination of ranks + tag as process group identifier has been "
                      "deprecated. Please switch to using ProcessGroup, DeviceMesh, or group "
                      "name instead.", FutureWarning, stacklevel=3)
        state = _require_group()
        for pg in [state["pg"], *state["subgroups"]]:
            if sorted(pg._ranks) == sorted(group):
                return pg
        pg = new_group(group)            # collective: every rank names the same ranks
        if pg is GroupMember.NON_GROUP_MEMBER:
            raise ValueError(f"this rank is not in the group of ranks {group}")
        return pg
    raise ValueError(f"Unsupported group type: {type(group)}, {group}")


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, x, op, pg):
        ctx.op, ctx.pg = op, pg
        out = x.contiguous().clone()
        _all_reduce(out, op=_op(op), group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.op.lower() != "sum":
            raise RuntimeError(f"all_reduce backward only supports 'sum' reduction, got "
                               f"'{ctx.op.lower()}'")
        return _AllReduce.apply(grad, "sum", ctx.pg), None, None


class _AllGather(Function):
    """Every rank's tensor, stacked along dim 0."""

    @staticmethod
    def forward(ctx, x, pg):
        ctx.pg = pg
        out = x.new_empty((x.shape[0] * get_world_size(pg), *x.shape[1:]))
        _all_gather_into_tensor(out, x.contiguous(), group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _ReduceScatter.apply(grad, "sum", ctx.pg), None


class _ReduceScatter(Function):
    """The reduction of every rank's tensor; this rank gets its chunk of dim 0."""

    @staticmethod
    def forward(ctx, x, op, pg):
        ctx.op, ctx.pg = op, pg
        k = get_world_size(pg)
        if x.shape[0] % k:
            raise AssertionError(f"input dimension 0 ({x.shape[0]}) must be a multiple of "
                                 f"group_size {k}")
        out = x.new_empty((x.shape[0] // k, *x.shape[1:]))
        _reduce_scatter_tensor(out, x.contiguous(), op=_op(op), group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.op.lower() != "sum":
            raise RuntimeError(f"reduce_scatter_tensor backward only supports 'sum' "
                               f"reduction, got '{ctx.op.lower()}'")
        return _AllGather.apply(grad, ctx.pg), None, None


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, pg):
        ctx.splits, ctx.pg = (input_split_sizes, output_split_sizes), pg
        k = get_world_size(pg)
        if (sum(input_split_sizes) != x.shape[0] if input_split_sizes is not None
                else x.shape[0] % k):
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        rows = sum(output_split_sizes) if output_split_sizes is not None else x.shape[0]
        out = x.new_empty((rows, *x.shape[1:]))
        _all_to_all_single(out, x.contiguous(), output_split_sizes, input_split_sizes,
                           group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _AllToAllSingle.apply(grad, *ctx.splits, ctx.pg), None, None, None


class _Broadcast(Function):
    """torch registers no gradient for broadcast: its autograd fallback warns and passes
    the gradient through unchanged, as this does."""

    @staticmethod
    def forward(ctx, x, src, pg):
        out = x.contiguous().clone()
        _broadcast(out, src, group=pg)
        return out

    @staticmethod
    def backward(ctx, grad):
        warnings.warn("_c10d_functional::broadcast: an autograd kernel was not registered to "
                      "the Autograd key(s) but we are trying to backprop through it. This may "
                      "lead to silently incorrect behavior.", UserWarning, stacklevel=2)
        return grad, None, None


def _deprecated(name, instead):
    warnings.warn(f"`torch.distributed._functional_collectives.{name}` is deprecated. Please "
                  f"use `torch.distributed._functional_collectives.{instead}` instead.",
                  FutureWarning, stacklevel=3)


def all_reduce(self, reduceOp: str, group, tag: str = ""):  # noqa: N803 (torch's names)
    """The reduction (``reduceOp``: "sum", "avg", "product", "min", "max", "band", "bor",
    "bxor") of ``self`` over the group; ``self`` is left as it is."""
    return _AllReduce.apply(self, reduceOp, _resolve(group))


def all_gather_single(self, gather_dim: int, group, tag: str = ""):
    """Every rank's ``self``, concatenated along ``gather_dim`` in rank order."""
    pg = _resolve(group)
    gather_dim = gather_dim + self.ndim if gather_dim < 0 else gather_dim
    if not 0 <= gather_dim < max(self.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-self.ndim}, {self.ndim - 1}], but got {gather_dim})")
    out = _AllGather.apply(self, pg)
    if gather_dim:
        out = cat(out.chunk(get_world_size(pg)), gather_dim)
    return out


all_gather_single_autograd = all_gather_single


def all_gather_tensor(self, gather_dim: int, group, tag: str = ""):
    """Deprecated name of ``all_gather_single``."""
    _deprecated("all_gather_tensor", "all_gather_single")
    return all_gather_single(self, gather_dim, group, tag)


def all_gather_tensor_autograd(self, gather_dim: int, group, tag: str = ""):
    """Deprecated name of ``all_gather_single_autograd``."""
    _deprecated("all_gather_tensor_autograd", "all_gather_single_autograd")
    return all_gather_single(self, gather_dim, group, tag)


def reduce_scatter_single(self, reduceOp: str, scatter_dim: int, group,  # noqa: N803
                          tag: str = ""):
    """The reduction of every rank's ``self``; rank i gets the i-th chunk along
    ``scatter_dim`` (whose size must be a multiple of the group's)."""
    pg = _resolve(group)
    k = get_world_size(pg)
    if scatter_dim:
        if self.shape[scatter_dim] % k:
            raise AssertionError(f"input dimension {scatter_dim} ({self.shape[scatter_dim]}) "
                                 f"must be a multiple of group_size {k}")
        self = cat(self.chunk(k, scatter_dim), 0)     # chunk i is now rows i of k
    return _ReduceScatter.apply(self, reduceOp, pg)


reduce_scatter_single_autograd = reduce_scatter_single


def reduce_scatter_tensor(self, reduceOp: str, scatter_dim: int, group,  # noqa: N803
                          tag: str = ""):
    """Deprecated name of ``reduce_scatter_single``."""
    _deprecated("reduce_scatter_tensor", "reduce_scatter_single")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


def reduce_scatter_tensor_autograd(self, reduceOp: str, scatter_dim: int,  # noqa: N803
                                   group, tag: str = ""):
    """Deprecated name of ``reduce_scatter_single_autograd``."""
    _deprecated("reduce_scatter_tensor_autograd", "reduce_scatter_single_autograd")
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag: str = ""):
    """Rows ``input_split_sizes[i]`` of ``self`` go to rank i; the result holds what every
    rank sent here, ``output_split_sizes[j]`` rows from rank j (equal parts when None)."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes,
                                 _resolve(group))


all_to_all_single_autograd = all_to_all_single


def broadcast(self, src: int, group, tag: str = ""):
    """Global rank ``src``'s ``self``, on every rank."""
    return _Broadcast.apply(self, src, _resolve(group))


def permute_tensor(self, src_dst, group, tag: str = ""):
    """Group rank i sends ``self`` to group rank ``src_dst[i]``; returns what this rank
    received. The splits count elements along dim 0, as torch's do: a 1-D ``self``."""
    pg = _resolve(group)
    k, me = get_world_size(pg), pg.rank()
    send, recv = [0] * k, [0] * k
    for src, dst in enumerate(src_dst):
        if src == me:
            send[dst] = self.numel()
        if dst == me:
            recv[src] = self.numel()
    return _AllToAllSingle.apply(self, recv, send, pg)


def all_reduce_coalesced(self: list, reduceOp: str, group, tag: str = "") -> list:  # noqa: N803
    """``all_reduce`` of each tensor of the list."""
    pg = _resolve(group)
    return [_AllReduce.apply(t, reduceOp, pg) for t in self]


def all_gather_single_coalesced(self: list, group, tag: str = "") -> list:
    """``all_gather_single`` (along dim 0) of each tensor of the list."""
    pg = _resolve(group)
    return [_AllGather.apply(t, pg) for t in self]


def all_gather_into_tensor_coalesced(self: list, group, tag: str = "") -> list:
    """Deprecated name of ``all_gather_single_coalesced``."""
    _deprecated("all_gather_into_tensor_coalesced", "all_gather_single_coalesced")
    return all_gather_single_coalesced(self, group, tag)


def reduce_scatter_single_coalesced(inputs: list, reduceOp: str, scatter_dim: list,  # noqa: N803
                                    group, tag: str = "") -> list:
    """``reduce_scatter_single`` of each tensor, each along its own ``scatter_dim``."""
    pg = _resolve(group)
    return [reduce_scatter_single(t, reduceOp, d, pg) for t, d in zip(inputs, scatter_dim)]


def reduce_scatter_tensor_coalesced(inputs: list, reduceOp: str, scatter_dim: list,  # noqa: N803
                                    group, tag: str = "") -> list:
    """Deprecated name of ``reduce_scatter_single_coalesced``."""
    _deprecated("reduce_scatter_tensor_coalesced", "reduce_scatter_single_coalesced")
    return reduce_scatter_single_coalesced(inputs, reduceOp, scatter_dim, group, tag)


def wait_tensor(tensor):
    """``tensor`` once its collective has finished: already the case here (see the module
    docstring), so ``tensor`` itself."""
    if not isinstance(tensor, Tensor):
        raise RuntimeError(f"_c10d_functional::wait_tensor() Expected a value of type 'Tensor' "
                           f"for argument 'tensor' but instead found type "
                           f"'{type(tensor).__name__}'.")
    return tensor
