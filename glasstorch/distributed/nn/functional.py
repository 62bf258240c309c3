"""torch.distributed.nn.functional: collectives that autograd differentiates.

Each one is an ``autograd.Function`` (``_AllReduce``, ``_AllGather``...; their nodes are
``_AllReduceBackward``...) whose backward is the adjoint collective: all_reduce's gradient is
an all_reduce of the gradients, all_gather's a reduce_scatter, broadcast's a reduce to the
source, and so on. They run over glasstorch's process group (one process for now), through the
same collectives as ``torch.distributed``.
"""

from __future__ import annotations

import warnings

from ...autograd.function import Function
from .. import ReduceOp, get_rank, get_world_size
from .. import all_gather as _all_gather
from .. import all_reduce as _all_reduce
from .. import all_to_all as _all_to_all
from .. import all_to_all_single as _all_to_all_single
from .. import broadcast as _broadcast
from .. import gather as _gather
from .. import reduce as _reduce
from .. import reduce_scatter as _reduce_scatter
from .. import scatter as _scatter

__all__ = ["broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather",
           "all_to_all", "all_to_all_single", "all_reduce"]


def _deprecated(name, suggestion):
    warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use {suggestion} "
                  f"instead.", FutureWarning, stacklevel=3)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group, ctx.rank = src, group, get_rank(group)
        out = tensor.clone()
        _broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        grad = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        if ctx.src != ctx.rank:
            grad = grad * 0       # only the source's value reached the output
        return None, None, grad


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        _reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad_output)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        out = tensor.clone()
        _all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, _AllReduce.apply(ReduceOp.SUM, ctx.group, grad_output)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [tensor.new_empty(tensor.shape) for _ in range(get_world_size(group))]
        _all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        rank = get_rank(ctx.group)
        out = grad_outputs[rank].new_empty(grad_outputs[rank].shape)
        return None, _Reduce_Scatter.apply(ReduceOp.SUM, ctx.group, out, *grad_outputs)


class _Reduce_Scatter(Function):  # noqa: N801 (torch's name, seen in grad_fn names)
    @staticmethod
    def forward(ctx, op, group, tensor, *input_tensor_list):
        ctx.group = group
        out = tensor.contiguous().clone()
        _reduce_scatter(out, [t.contiguous() for t in input_tensor_list], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None) + _AllGather.apply(ctx.group, grad_output)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        outs = [tensor.new_zeros(tensor.shape) for _ in range(get_world_size(group))]
        if get_rank(group) == dst:
            _gather(tensor.contiguous(), outs, dst, group=group)
        else:
            _gather(tensor.contiguous(), None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grad_outputs)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        out = tensors[get_rank(group)].new_empty(tensors[get_rank(group)].shape)
        _scatter(out, [t.contiguous() for t in tensors] if get_rank(group) == src else None,
                 src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad_output)


class _AlltoAll(Function):
    @staticmethod
    def forward(ctx, group, out_tensor_list, *tensors):
        ctx.group = group
        ctx.input_shapes = [t.shape for t in tensors]
        outs = [o.clone() for o in out_tensor_list]
        _all_to_all(outs, [t.contiguous() for t in tensors], group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        empties = [grad_outputs[0].new_empty(s) for s in ctx.input_shapes]
        return (None, None) + _AlltoAll.apply(ctx.group, empties, *grad_outputs)


class _AlltoAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.input_shape = group, input.shape
        ctx.output_split_sizes, ctx.input_split_sizes = input_split_sizes, output_split_sizes
        out = output.clone()
        _all_to_all_single(out, input, output_split_sizes=output_split_sizes,
                           input_split_sizes=input_split_sizes, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        empty = grad_output.new_empty(ctx.input_shape)
        return (None, None, None, None, _AlltoAllSingle.apply(
            ctx.group, empty, ctx.output_split_sizes, ctx.input_split_sizes,
            grad_output.contiguous()))


def broadcast(tensor, src, group=None):
    """Copy ``tensor`` from rank ``src`` to every process; the gradient is summed back to
    ``src``. Returns the received tensor."""
    _deprecated("broadcast", "torch.distributed._functional_collectives.broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=None):
    """Collect every process's ``tensor`` on ``dst``; returns one tensor per process."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=None):
    """Send ``tensors[i]`` from ``src`` to rank i; returns this process's tensor."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    """Reduce ``tensor`` over processes onto ``dst``; returns the (reduced) tensor."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """Reduce ``input_list[i]`` over processes into rank i's result, shaped like
    ``output``."""
    _deprecated("reduce_scatter", "torch.distributed._functional_collectives."
                "reduce_scatter_single")
    return _Reduce_Scatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=None):
    """Every process's ``tensor``, gathered on every process (a tuple, one per rank)."""
    _deprecated("all_gather", "torch.distributed._functional_collectives.all_gather_single")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=None):
    """Send ``input_tensor_list[i]`` to rank i; returns what each rank sent here."""
    return _AlltoAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None):
    """``all_to_all`` on one tensor split along dim 0; returns the received tensor."""
    _deprecated("all_to_all_single",
                "torch.distributed._functional_collectives.all_to_all_single")
    return _AlltoAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """Reduce ``tensor`` over all processes (sum by default); every process gets the result,
    and the gradient is all-reduced back."""
    _deprecated("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)
