"""FullyShardedDataParallel (FSDP1 with flat parameters) on the MPI process group.

The wrapped module's parameters are flattened into one padded vector; each rank keeps its
1/world_size chunk as the ``nn.Parameter`` the optimizer sees. ``forward`` all-gathers the
full vector through an autograd Function and points the module's parameter names at views
of it, so backward brings the full gradient to that Function, which reduce-scatters it
(averaged over the ranks) into the chunk's ``.grad``. FULL_SHARD frees the full vector after
forward (the tensors autograd saved from it are re-gathered when backward unpacks them);
SHARD_GRAD_OP keeps it until backward; NO_SHARD keeps everything whole on every rank and
all-reduces the gradient, as DDP does."""

from __future__ import annotations

import contextlib
import math
import weakref
from collections import OrderedDict

from ... import cat, no_grad, zeros
from ... import nn as _nn
from ...autograd.function import Function
from ...autograd.graph import saved_tensors_hooks
from ...nn.modules.module import _IncompatibleKeys
from .. import (
    ReduceOp,
    all_gather_into_tensor,
    all_reduce,
    broadcast,
    get_global_rank,
    get_rank,
    get_world_size,
    group,
    reduce_scatter_tensor,
)
from .api import BackwardPrefetch as BackwardPrefetch
from .api import CPUOffload as CPUOffload  # torch's module has them too: imported from it
from .api import FullStateDictConfig, MixedPrecision, ShardingStrategy, StateDictType

__all__ = ["FullyShardedDataParallel"]

_WRAPPED = "_fsdp_wrapped_module"


class _GatherFlat(Function):
    """shard -> full flat parameters; backward: the full gradient reduced to the shard."""

    @staticmethod
    def forward(ctx, shard, fsdp):
        ctx.fsdp = fsdp
        return fsdp._gather(shard)

    @staticmethod
    def backward(ctx, grad):
        return ctx.fsdp._reduce_grad(grad), None


class FullyShardedDataParallel(_nn.Module):
    """Shard ``module``'s parameters over ``process_group`` (see the module docstring).
    Train it as the module itself; the optimizer gets ``fsdp.parameters()`` (this rank's
    flat shard). ``state_dict()`` is the full, unflattened state under the default
    ``StateDictType.FULL_STATE_DICT``; ``summon_full_params`` makes the full parameters the
    module's for a while; ``no_sync`` accumulates gradients locally; ``clip_grad_norm_``
    clips by the norm over all shards."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=None, mixed_precision=None,
                 ignored_modules=None, param_init_fn=None, device_id=None,
                 sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
                 use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        if auto_wrap_policy is not None:
            raise ValueError("FullyShardedDataParallel(auto_wrap_policy=...): glasstorch wraps "
                             "the whole module as one unit; wrap submodules in FSDP yourself")
        strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise ValueError(f"{strategy}: glasstorch shards over one process group "
                             f"(FULL_SHARD, SHARD_GRAD_OP, NO_SHARD)")
        if device_mesh is not None:
            process_group = device_mesh.get_group()
        self._pg = process_group if process_group is not None else group.WORLD
        self._ws, self._rank = get_world_size(self._pg), get_rank(self._pg)
        self.sharding_strategy = strategy
        self.mixed_precision = mixed_precision or MixedPrecision()
        self._fsdp_wrapped_module = module
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        self._sync_grads = True
        self._pending_grad = None          # gradients accumulated under no_sync
        self._full = None
        ignored = {id(p) for m in (ignored_modules or ()) for p in m.parameters()}
        ignored |= {id(p) for p in (ignored_states or ()) if isinstance(p, _nn.Parameter)}
        self._slots = []                    # (submodule, name, shape, offset, numel)
        params, offset, seen = [], 0, set()
        for mname, sub in module.named_modules():
            for name, p in list(sub._parameters.items()):
                if p is None or id(p) in ignored or id(p) in seen:
                    continue
                seen.add(id(p))
                self._slots.append((sub, name, tuple(p.shape), offset, p.numel(),
                                    f"{mname}.{name}" if mname else name))
                params.append(p)
                offset += p.numel()
        if not params:
            raise ValueError("FullyShardedDataParallel: the module has no parameters to shard")
        if sync_module_states:
            with no_grad():
                src = get_global_rank(self._pg, 0)
                for t in params + [b for b in module.buffers()]:
                    broadcast(t.data, src, group=self._pg)
        if self.mixed_precision.buffer_dtype is not None:
            for sub in module.modules():
                for name, b in sub._buffers.items():
                    if b is not None and b.is_floating_point():
                        sub._buffers[name] = b.to(self.mixed_precision.buffer_dtype)
        self._numel = offset
        self._sharded = strategy is not ShardingStrategy.NO_SHARD and self._ws > 1
        parts = self._ws if self._sharded else 1
        self._shard_numel = math.ceil(offset / parts)
        with no_grad():
            flat = cat([p.detach().reshape(-1) for p in params])
            padded = cat([flat, zeros(self._shard_numel * parts - offset, dtype=flat.dtype)])
            mine = padded[self._rank * self._shard_numel:(self._rank + 1) * self._shard_numel] \
                if self._sharded else padded
        self._flat_param = _nn.Parameter(mine.clone(), requires_grad=params[0].requires_grad)
        self._forget()                    # the names point at full views in forward only

    # ---- the full parameters
    @property
    def module(self):
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._fsdp_wrapped_module, name)

    def named_parameters(self, *args, **kwargs):
        """The parameters, named without the wrapper's ``_fsdp_wrapped_module.``."""
        for name, p in super().named_parameters(*args, **kwargs):
            yield name.replace(_WRAPPED + ".", ""), p

    def named_buffers(self, *args, **kwargs):
        for name, b in super().named_buffers(*args, **kwargs):
            yield name.replace(_WRAPPED + ".", ""), b

    def _gather(self, shard):
        shard = shard.detach()
        if self._sharded:
            full = zeros(self._shard_numel * self._ws, dtype=shard.dtype)
            all_gather_into_tensor(full, shard.contiguous(), group=self._pg)
        else:
            full = shard.clone()
        dtype = self.mixed_precision.param_dtype
        return full if dtype is None else full.to(dtype)

    def _reduce_grad(self, grad):
        if self._pending_grad is not None:
            grad = grad + self._pending_grad
        if not self._sync_grads:
            self._pending_grad = grad
            return None
        self._pending_grad = None
        self._forget()                    # SHARD_GRAD_OP/NO_SHARD kept them for backward
        reduce_dtype = self.mixed_precision.reduce_dtype
        grad = grad.to(reduce_dtype) if reduce_dtype is not None else grad.clone()
        grad = grad.contiguous() / self._ws
        if self._sharded:
            out = zeros(self._shard_numel, dtype=grad.dtype)
            reduce_scatter_tensor(out, grad, group=self._pg)
        else:
            all_reduce(grad, group=self._pg)
            out = grad
        return out.to(self._flat_param.dtype)

    def _point_at(self, full, as_params):
        """Set the module's parameter names to views of the flat ``full``."""
        for sub, name, shape, offset, numel, _ in self._slots:
            view = full[offset:offset + numel].view(shape)
            if as_params:
                sub.__dict__.pop(name, None)
                sub._parameters[name] = _nn.Parameter(view.detach(),
                                                      self._flat_param.requires_grad)
            else:
                sub.__dict__[name] = view

    def _forget(self):
        """Point the parameter names at empty tensors (torch's freed, storage-less ones)."""
        for sub, name, *_ in self._slots:
            sub._parameters.pop(name, None)
            sub.__dict__[name] = zeros(0, dtype=self._flat_param.dtype)

    def forward(self, *args, **kwargs):
        full = _GatherFlat.apply(self._flat_param, self)
        self._point_at(full, as_params=False)
        if self.sharding_strategy is not ShardingStrategy.FULL_SHARD or not self._sharded:
            return self._fsdp_wrapped_module(*args, **kwargs)
        # FULL_SHARD: what backward needs of the full parameters is gathered again then
        regathered, full_ref = {}, weakref.ref(full)
        del full                       # no closure may keep it

        def pack(t):
            full = full_ref()
            if t._base is full or t is full:
                return ("flat", t.storage_offset(), tuple(t.shape), t.stride())
            return t

        def unpack(packed):
            if type(packed) is not tuple:
                return packed
            if "full" not in regathered:
                regathered["full"] = self._gather(self._flat_param)
            _, offset, shape, stride = packed
            return regathered["full"].as_strided(shape, stride, offset)
        try:
            with saved_tensors_hooks(pack, unpack):
                return self._fsdp_wrapped_module(*args, **kwargs)
        finally:
            self._forget()             # the full parameters live no longer than forward

    # ---- contexts
    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients on each rank without communicating; the first backward
        after the context reduces them together with its own."""
        old = self._sync_grads
        self._sync_grads = False
        try:
            yield
        finally:
            self._sync_grads = old

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        """Within the context, every FSDP module in ``module`` holds its full parameters as
        ``nn.Parameter`` objects under their original names; with ``writeback`` their
        values are copied back into the shards on exit."""
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        for u in units:
            with no_grad():
                full = u._gather(u._flat_param)
            u._forget()
            u._point_at(full, as_params=True)
            u._full = full
        try:
            yield
        finally:
            for u in units:
                if writeback:
                    with no_grad():
                        flat = cat([sub._parameters[name].detach().reshape(-1)
                                    for sub, name, *_ in u._slots])
                        start = u._rank * u._shard_numel if u._sharded else 0
                        u._flat_param.data[:min(u._shard_numel, u._numel - start)] = \
                            flat[start:start + u._shard_numel]
                u._forget()
                u._point_at(u._full, as_params=False)
                u._full = None

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        """Make ``state_dict()``/``load_state_dict`` of the FSDP modules in ``module`` use
        ``state_dict_type`` (glasstorch: FULL_STATE_DICT)."""
        if state_dict_type is not StateDictType.FULL_STATE_DICT:
            raise ValueError(f"{state_dict_type}: glasstorch's FSDP has FULL_STATE_DICT "
                             f"only (for sharded checkpoints use fully_shard's DTensors)")
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        old = [(u._state_dict_type, u._state_dict_config) for u in units]
        for u in units:
            u._state_dict_type = state_dict_type
            u._state_dict_config = state_dict_config or FullStateDictConfig()
        try:
            yield
        finally:
            for u, (t, c) in zip(units, old):
                u._state_dict_type, u._state_dict_config = t, c

    # ---- state
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """The full state of the wrapped module under its own names (empty on ranks other
        than 0 with ``FullStateDictConfig(rank0_only=True)``)."""
        with no_grad():
            full = self._gather(self._flat_param)
        out = OrderedDict() if destination is None else destination
        if self._state_dict_config.rank0_only and self._rank != 0:
            return out
        values = {qual: full[offset:offset + numel].view(shape).clone()
                  for _, _, shape, offset, numel, qual in self._slots}
        for key, value in self._fsdp_wrapped_module.state_dict(keep_vars=keep_vars).items():
            out[prefix + key] = value
        for qual, value in values.items():
            out[prefix + qual] = value
        order = [prefix + k for k in self._original_keys()]
        return OrderedDict((k, out[k]) for k in order if k in out)

    def _original_keys(self):
        keys = []
        for mname, sub in self._fsdp_wrapped_module.named_modules():
            pre = f"{mname}." if mname else ""
            names = [name for s, name, *_ in self._slots if s is sub] + \
                [name for name in sub._parameters if sub._parameters[name] is not None]
            seen = set()
            for name in names:
                if name not in seen:
                    seen.add(name)
                    keys.append(pre + name)
            keys += [pre + name for name, b in sub._buffers.items()
                     if b is not None and name not in sub._non_persistent_buffers_set]
        return keys

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Load a full state dict (as ``state_dict()`` gives): each rank keeps its shard."""
        quals = {qual for *_, qual in self._slots}
        missing = [q for q in quals if q not in state_dict]
        rest = {k: v for k, v in state_dict.items() if k not in quals}
        result = self._fsdp_wrapped_module.load_state_dict(rest, strict=False)
        unexpected = list(result.unexpected_keys)
        missing += list(result.missing_keys)
        missing = [m for m in missing if m not in quals or m not in state_dict]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for FullyShardedDataParallel:"
                               f" missing keys {missing}, unexpected keys {unexpected}")
        with no_grad():
            parts = [state_dict[q].reshape(-1).to(self._flat_param.dtype)
                     if q in state_dict else self._gather(self._flat_param)[o:o + n]
                     for _, _, _, o, n, q in self._slots]
            flat = cat(parts)
            start = self._rank * self._shard_numel if self._sharded else 0
            keep = flat[start:start + self._shard_numel]
            self._flat_param.data[:keep.numel()] = keep
        return _IncompatibleKeys(missing, unexpected)

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clip the gradients by their norm over every rank's shard; returns the norm."""
        g = self._flat_param.grad
        if g is None:
            return zeros(())
        norm_type = float(norm_type)
        if math.isinf(norm_type):
            local = g.abs().max().reshape(1)
            if self._sharded:
                all_reduce(local, op=ReduceOp.MAX, group=self._pg)
            total = local[0]
        else:
            local = (g.abs() ** norm_type).sum().reshape(1).to(g.dtype)
            if self._sharded:
                all_reduce(local, group=self._pg)
            total = local[0] ** (1.0 / norm_type)
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        with no_grad():
            g.mul_(coef)
        return total

    def extra_repr(self):
        return f"sharding_strategy={self.sharding_strategy.name}"

