"""DDP communication hooks: how a gradient bucket is reduced over the processes.

A hook is ``hook(state, bucket) -> Future[Tensor]``: it starts the reduction of
``bucket.buffer()`` (the bucket's gradients flattened into one tensor) and returns a Future of
the averaged tensor, which DDP copies back into the parameters' gradients.
"""

from __future__ import annotations

from ... import ReduceOp, all_reduce, get_world_size
from ... import group as _group

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _allreduce_fut(process_group, tensor):
    """Average ``tensor`` over ``process_group`` asynchronously; a Future of the result."""
    group = process_group if process_group is not None else _group.WORLD
    tensor.div_(get_world_size(group))
    work = all_reduce(tensor, op=ReduceOp.SUM, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """DDP's default: divide the bucket by the world size and all-reduce it (a sum), so each
    process gets the average."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else _group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(get_world_size(group))
    work = all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])   # back into the bucket's dtype
        return buffer
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Like ``allreduce_hook``, but the values travel as float16 (half the bytes)."""
    from .... import float16
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Like ``allreduce_hook``, but the values travel as bfloat16."""
    from .... import bfloat16
    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(f):
            buffer.copy_(f.value())
            return buffer
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """Wrap ``hook`` so that it runs on the bucket cast to float16 (cast back afterwards)."""
    from .... import float16
    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    """Wrap ``hook`` so that it runs on the bucket cast to bfloat16 (cast back afterwards)."""
    from .... import bfloat16
    return _compress_wrapper(bfloat16, hook)
