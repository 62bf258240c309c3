"""DistributedDataParallel: data-parallel training over a process group.

At construction rank 0's parameters and buffers are broadcast to every process. The trainable
parameters are split into buckets (in reverse registration order, which is roughly the order
backward produces their gradients; ``bucket_cap_mb`` each, the first one 1 MB). A hook runs
after each parameter's gradient is accumulated; once every gradient of a bucket is there (and
the buckets before it have started) the bucket's gradients are flattened and handed to the
communication hook (by default an asynchronous all-reduce of the average), so the reduction
overlaps the rest of backward. When the last bucket has started, the results are waited for
and written back into ``param.grad``.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


def _dist():
    from ... import distributed
    return distributed


def _coalesced_broadcast(tensors, src, group):
    """Broadcast ``tensors`` from ``src`` with one message per dtype."""
    dist = _dist()
    from ... import cat
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for items in by_dtype.values():
        flat = cat([t.detach().reshape(-1) for t in items])
        dist.broadcast(flat, src, group=group)
        pos = 0
        for t in items:
            n = t.numel()
            dist._write(t, flat._data[pos:pos + n])
            pos += n


class _Bucket:
    """Parameters reduced together, with their offsets in the flattened buffer."""

    def __init__(self, index, params):
        self.index, self.params = index, params
        self.offsets = list(np.cumsum([0] + [p.numel() for p in params[:-1]]).tolist())
        self.numel = sum(p.numel() for p in params)
        self.view = None        # the buffer gradients are views of (gradient_as_bucket_view)


class _DDPJoinHook:
    """What a DDP rank that ran out of inputs does while others train: take part in their
    buffer broadcast and gradient all-reduces with zero gradients."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp, self.divide = ddp, divide_by_initial_world_size

    def main_hook(self):
        """Shadow one iteration of the processes still training."""
        ddp = self.ddp
        if ddp.broadcast_buffers and ddp._buffers_to_sync():
            _coalesced_broadcast(ddp._buffers_to_sync(), ddp._src_rank(), ddp.process_group)
        from ... import zeros
        for bucket in ddp._buckets:
            flat = zeros(bucket.numel, dtype=bucket.params[0].dtype)
            ddp._reduce_bucket(bucket, flat, joined=True).wait()
        if ddp._track_unused:
            used = zeros(len(ddp._params))
            _dist().all_reduce(used, group=ddp.process_group)

    def post_hook(self, is_last_joiner: bool):
        """Make every process hold the last joiner's parameters."""
        ddp = self.ddp
        from ... import tensor
        dist = _dist()
        me = dist.get_rank(ddp.process_group)
        who = tensor([me if is_last_joiner else -1])
        dist.all_reduce(who, op=dist.ReduceOp.MAX, group=ddp.process_group)
        src = dist.get_global_rank(ddp.process_group, int(who.item())) \
            if ddp.process_group is not None else int(who.item())
        _coalesced_broadcast(list(ddp.module.parameters()) + list(ddp.module.buffers()), src,
                             ddp.process_group)


def _joinable_base():
    from ...distributed.algorithms.join import Joinable
    return Joinable


class DistributedDataParallel(Module, _joinable_base()):
    """Wraps ``module`` for data-parallel training over ``process_group`` (the default
    group if None): every process runs the same model on its share of the batch and
    backward leaves each process with the gradient averaged over all of them."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        dist = _dist()
        dist.get_world_size(process_group)    # torch's error when no process group exists
        Module.__init__(self)
        self._join_config = _dist_join_config()
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.process_group = process_group
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None
                                     else bucket_cap_mb) * 1024 * 1024)
        seen = set()
        self._params = []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        if not self._params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._world = dist.get_world_size(process_group)
        if init_sync:
            _coalesced_broadcast(list(module.parameters()) + list(module.buffers()),
                                 self._src_rank(), process_group)
        self._buckets = self._make_buckets()
        self._bucket_of = {}
        for bucket in self._buckets:
            for i, p in enumerate(bucket.params):
                self._bucket_of[id(p)] = (bucket, i)
        self._comm_hook, self._comm_state = None, None
        self._track_unused = find_unused_parameters or static_graph
        self._reset_iteration()
        self._expect_reduction = False
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready)
                       for p in self._params]

    # ---- buckets ------------------------------------------------------------------------
    def _src_rank(self):
        return _dist().get_global_rank(self.process_group, 0) \
            if self.process_group is not None else 0

    def _make_buckets(self):
        buckets, current, size, cap = [], [], 0, _FIRST_BUCKET_BYTES
        for p in reversed(self._params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > cap or p.dtype != current[0].dtype):
                buckets.append(_Bucket(len(buckets), current))
                current, size, cap = [], 0, self.bucket_bytes_cap
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    def _reset_iteration(self):
        self._ready = {b.index: set() for b in self._buckets}
        self._next_bucket = 0
        self._inflight = []         # (bucket, future)
        self._used = set()

    def _grad_ready(self, param):
        """Post-accumulate hook: mark ``param`` ready; start the buckets that are complete."""
        if not self.require_backward_grad_sync or not self._expect_reduction:
            return
        bucket, i = self._bucket_of[id(param)]
        self._used.add(id(param))
        self._ready[bucket.index].add(i)
        self._launch_ready()

    def _launch_ready(self):
        # buckets start in index order on every process, so the collectives line up
        while (self._next_bucket < len(self._buckets)
               and len(self._ready[self._next_bucket]) ==
               len(self._buckets[self._next_bucket].params)):
            bucket = self._buckets[self._next_bucket]
            self._next_bucket += 1
            self._inflight.append((bucket, self._reduce_bucket(bucket, self._flatten(bucket))))
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _flatten(self, bucket):
        from ... import cat, zeros
        parts = [p.grad.detach().reshape(-1) if p.grad is not None
                 else zeros(p.numel(), dtype=p.dtype) for p in bucket.params]
        return cat(parts)

    def _reduce_bucket(self, bucket, flat, joined=False):
        dist = _dist()
        grad_bucket = dist.GradBucket(bucket.index, flat, bucket.params, bucket.offsets,
                                      bucket.index == len(self._buckets) - 1)
        if self._comm_hook is None:
            from ...distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
            return allreduce_hook(self.process_group, grad_bucket)
        return self._comm_hook(self._comm_state, grad_bucket)

    def _finish(self):
        """Wait for every bucket's reduction and write the averages into the gradients."""
        self._expect_reduction = False
        dist = _dist()
        globally_used = None
        if self._track_unused:
            from ... import tensor
            used = tensor([1.0 if id(p) in self._used else 0.0 for p in self._params])
            dist.all_reduce(used, group=self.process_group)
            globally_used = {id(p) for p, u in zip(self._params, used.tolist()) if u > 0}
        for bucket, fut in self._inflight:
            result = fut.wait()
            if tuple(result.shape) != (bucket.numel,):
                raise RuntimeError(f"the communication hook returned a tensor of shape "
                                   f"{tuple(result.shape)} for a bucket of {bucket.numel} "
                                   f"gradient elements")
            for p, offset in zip(bucket.params, bucket.offsets):
                if globally_used is not None and id(p) not in globally_used:
                    continue          # nobody computed this gradient: leave it unset
                values = result[offset:offset + p.numel()].view(p.shape)
                if self.gradient_as_bucket_view:
                    p.grad = values.detach().to(p.dtype)
                elif p.grad is None:
                    p.grad = values.detach().to(p.dtype).clone()
                else:
                    dist._write(p.grad, values._data)
        self._reset_iteration()

    # ---- forward ------------------------------------------------------------------------
    def _buffers_to_sync(self):
        return list(self.module.buffers())

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module (syncing buffers from rank 0 first) and prepare this
        iteration's gradient reduction."""
        from ... import is_grad_enabled
        from ...distributed.algorithms.join import Join
        if self._expect_reduction and self._next_bucket < len(self._buckets) and \
                self._ready_any():
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss.")
        grad_sync = is_grad_enabled() and self.require_backward_grad_sync
        if grad_sync:
            Join.notify_join_context(self)
        if self.broadcast_buffers and self.require_forward_param_sync and \
                self._buffers_to_sync():
            _coalesced_broadcast(self._buffers_to_sync(), self._src_rank(), self.process_group)
        self._reset_iteration()
        output = self.module(*inputs, **kwargs)
        self._expect_reduction = grad_sync
        if grad_sync and self._track_unused:
            reached = _reachable_leaves(output)
            for p in self._params:
                if id(p) not in reached:
                    bucket, i = self._bucket_of[id(p)]
                    self._ready[bucket.index].add(i)
            if all(len(self._ready[b.index]) == len(b.params) for b in self._buckets):
                self._launch_ready()       # nothing needs a gradient: reduce now
        return output

    def _ready_any(self):
        return any(self._ready.values())

    # ---- API ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally without reducing them; the first
        backward after it reduces the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook) -> None:
        """Reduce buckets with ``hook(state, bucket) -> Future[Tensor]`` instead of the
        default averaged all-reduce (once per model)."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {type(hook).__name__}")
        self._comm_hook, self._comm_state = hook, state

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        """A ``Join`` context for training with uneven inputs across processes."""
        from ...distributed.algorithms.join import Join
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The hook that shadows this model's collectives once its process has joined."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        """The device join collectives run on (the CPU)."""
        from ... import device
        return device("cpu")

    @property
    def join_process_group(self):
        """The process group of this model's gradient reduction."""
        return self.process_group if self.process_group is not None else _dist().group.WORLD


def _dist_join_config():
    from ...distributed.algorithms.join import _JoinConfig
    return _JoinConfig.construct_disabled_join_config()


def _reachable_leaves(output):
    """ids of the leaf tensors whose gradient backward from ``output`` reaches."""
    from ..._tensor import Tensor
    roots, stack = [], [output]
    while stack:               # outputs may be nested in tuples, lists and dicts
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                roots.append(item.grad_fn)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    seen, found = set(), set()
    while roots:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        roots.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    return found
