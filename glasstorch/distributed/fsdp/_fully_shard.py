"""fully_shard (FSDP2): each parameter becomes a DTensor sharded along dim 0 over the mesh.

Outside forward the module's parameters are those sharded DTensors (what the optimizer,
``state_dict`` and distributed checkpointing see). Forward all-gathers every managed
parameter through an autograd Function and makes the full tensor the one the module's
attribute answers with; that Function's backward reduce-scatters the full gradient
(averaged over the ranks) into the shard's ``.grad``, while backward is still running. With
``reshard_after_forward`` the full tensors are dropped after forward: what autograd saved of
them is gathered again when backward unpacks it. A 2-D mesh shards along its last dimension
and replicates along the first (HSDP): gradients are then also averaged over the replicas."""

from __future__ import annotations

import weakref

from ... import no_grad
from ...autograd.function import Function
from ...autograd.graph import saved_tensors_hooks
from ...nn import Parameter
from .. import ReduceOp, all_reduce, get_world_size, reduce_scatter_tensor
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor import DTensor, Replicate, Shard, distribute_tensor
from ..tensor._api import _chunk_bounds, _gather
from .api import MixedPrecisionPolicy, OffloadPolicy

__all__ = ["fully_shard", "FSDPModule", "UnshardHandle", "register_fsdp_forward_method"]

_CLASSES = {}      # original module class -> its FSDP subclass


class _Param:
    """One managed parameter: where it lives, how it is sharded, and its gradient held
    while gradient sync is off."""

    def __init__(self, module, name, state):
        self.module, self.name, self.state = module, name, state
        self.pending = None

    @property
    def sharded(self):
        return self.module._parameters[self.name]

    def gather(self):
        """The full parameter (in ``param_dtype`` if the policy sets one), no autograd."""
        dt = self.sharded
        shard = self.state.placements[-1]
        with no_grad():
            full = _gather(dt._local_tensor.detach(), shard.dim, dt.shape[shard.dim],
                           self.state.shard_group)
        dtype = self.state.mp_policy.param_dtype
        return full if dtype is None else full.to(dtype)

    def reduce(self, grad):
        """This rank's part of the gradient averaged over every rank (None while gradient
        sync is off: the full gradient waits for the next synced backward)."""
        if self.pending is not None:
            grad = grad + self.pending
        if not self.state.sync:
            self.pending = grad
            return None
        self.pending = None
        dt, state = self.sharded, self.state
        dim, k = state.placements[-1].dim, get_world_size(state.shard_group)
        dtype = state.mp_policy.reduce_dtype or dt.dtype
        with no_grad():
            grad = grad.to(dtype).movedim(dim, 0)
            size = -(-grad.shape[0] // k) if grad.shape[0] else 0
            padded = grad.new_zeros((size * k, *grad.shape[1:]))
            padded[:grad.shape[0]] = grad
            out = grad.new_empty((size, *grad.shape[1:]))
            reduce_scatter_tensor(out, padded, op=ReduceOp.AVG, group=state.shard_group)
            if state.replicate_group is not None:
                all_reduce(out, op=ReduceOp.AVG, group=state.replicate_group)
            c = state.mesh.get_local_rank(state.mesh.ndim - 1)
            _, length = _chunk_bounds(dt.shape[dim], k, c)
            out = out[:length].movedim(0, dim).contiguous()
        return out.to(dt.dtype)


class _Unshard(Function):
    """shard -> full parameter; backward: the full gradient reduce-scattered to the shard."""

    @staticmethod
    def forward(ctx, local, param):
        ctx.param = param
        return param.gather()

    @staticmethod
    def backward(ctx, grad):
        return ctx.param.reduce(grad), None


class _State:
    def __init__(self, module, mesh, reshard_after_forward, mp_policy, offload_policy):
        self.module, self.mesh = module, mesh
        self.reshard_after_forward = reshard_after_forward
        self.mp_policy, self.offload_policy = mp_policy, offload_policy
        self.sync = True
        if mesh.ndim == 1:
            self.placements = (Shard(0),)
            self.shard_group, self.replicate_group = mesh.get_group(0), None
        else:
            self.placements = (Replicate(), Shard(0))
            self.shard_group, self.replicate_group = mesh.get_group(1), mesh.get_group(0)
        self.params = []


class UnshardHandle:
    """What ``unshard(async_op=True)`` returns; the gather has finished already."""

    def wait(self) -> None:
        """Nothing is left to wait for (glasstorch's collectives finish when they return)."""


class FSDPModule:
    """The class a module joins when ``fully_shard`` is applied to it (as ``FSDP<Class>``):
    ``unshard``/``reshard`` gather and free the full parameters, and the ``set_*`` methods
    tune gradient synchronisation."""

    def _fsdp(self):
        return self.__dict__["_fsdp_state"]

    def forward(self, *args, **kwargs):
        state = self._fsdp()
        policy = state.mp_policy
        if policy.param_dtype is not None and policy.cast_forward_inputs:
            args, kwargs = _cast((args, kwargs), policy.param_dtype)
        fulls = [_Unshard.apply(p.sharded._local_tensor, p) for p in state.params]
        for p, full in zip(state.params, fulls):
            p.module.__dict__[p.name] = full         # shadows the sharded parameter
        try:
            if state.reshard_after_forward:
                out = self._reshard_forward(state, fulls, args, kwargs)
            else:
                out = super().forward(*args, **kwargs)
        finally:
            self.reshard()
        return out if policy.output_dtype is None else _cast(out, policy.output_dtype)

    def _reshard_forward(self, state, fulls, args, kwargs):
        """Forward keeping none of the full parameters: a saved view of one is recorded by
        its position and gathered again when backward unpacks it."""
        index = {id(full): i for i, full in enumerate(fulls)}
        refs = [weakref.ref(full) for full in fulls]
        del fulls                              # no closure may keep them
        regathered = {}

        def pack(t):
            i = index.get(id(t._base if t._base is not None else t))
            if i is None or refs[i]() is not (t._base if t._base is not None else t):
                return t
            return ("full", i, t.storage_offset(), tuple(t.shape), t.stride())

        def unpack(packed):
            if type(packed) is not tuple:
                return packed
            _, i, offset, shape, stride = packed
            if i not in regathered:
                regathered[i] = state.params[i].gather()
            return regathered[i].as_strided(shape, stride, offset)
        with saved_tensors_hooks(pack, unpack):
            return super().forward(*args, **kwargs)

    def unshard(self, async_op: bool = False):
        """Make the full parameters (``nn.Parameter`` objects, gathered now) the module's
        until ``reshard()`` or the next forward."""
        state = self._fsdp()
        for p in state.params:
            p.module.__dict__[p.name] = Parameter(p.gather(), p.sharded.requires_grad)
        return UnshardHandle() if async_op else None

    def reshard(self) -> None:
        """Free the full parameters: the module's parameters are the sharded ones again."""
        state = self._fsdp()
        for p in state.params:
            p.module.__dict__.pop(p.name, None)

    def _states(self, recurse):
        mods = self.modules() if recurse else [self]
        return [m._fsdp() for m in mods if isinstance(m, FSDPModule)]

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *,
                                   recurse: bool = True) -> None:
        """Whether backward reduce-scatters the gradients (False: each rank accumulates its
        full gradients until a backward with sync on reduces them together)."""
        for state in self._states(recurse):
            state.sync = bool(requires_gradient_sync)

    def set_reshard_after_forward(self, reshard_after_forward: bool, *,
                                  recurse: bool = True) -> None:
        """Whether forward drops the full parameters (gathering them again for backward)."""
        for state in self._states(recurse):
            state.reshard_after_forward = bool(reshard_after_forward)


def _cast(obj, dtype):
    from ..._tensor import Tensor
    if isinstance(obj, Tensor) and obj.is_floating_point():
        return obj.to(dtype)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: _cast(v, dtype) for k, v in obj.items()}
    return obj


def _fsdp_class(cls):
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return _CLASSES[cls]


def fully_shard(module, *, mesh: DeviceMesh | None = None, reshard_after_forward=None,
                shard_placement_fn=None, mp_policy: MixedPrecisionPolicy | None = None,
                offload_policy: OffloadPolicy | None = None, ignored_params=None,
                dp_mesh_dims=None):
    """Shard ``module``'s parameters (those not already managed by a ``fully_shard`` inside
    it, nor in ``ignored_params``) over ``mesh`` (default: every rank), each rank cutting
    its own copy: apply it to the submodules first, then to the root. ``module`` joins
    ``FSDPModule`` and is returned. ``reshard_after_forward`` (default True) frees the full
    parameters after forward; ``mp_policy`` sets the dtypes of the gathered parameters, the
    gradient reduction, the inputs and the output."""
    if isinstance(module, (list, tuple)):
        raise ValueError("fully_shard: glasstorch shards one module at a time; call it on "
                         "each module")
    if isinstance(module, FSDPModule):
        raise AssertionError(f"Each distinct composable distributed API can only be applied "
                             f"to a module once. fully_shard has already been applied to the "
                             f"following module:\n{module}")
    if shard_placement_fn is not None:
        raise ValueError("fully_shard(shard_placement_fn=...): glasstorch shards every "
                         "parameter along dim 0")
    if mesh is None:
        mesh = init_device_mesh("cpu", (get_world_size(),))
    if mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    if mesh.ndim == 2 and mesh.mesh_dim_names is None:
        raise AssertionError("Please init the 2D mesh for HSDP with mesh_dim_names specified")
    rshard = True if reshard_after_forward is None else reshard_after_forward
    if not isinstance(rshard, bool):
        raise ValueError(f"reshard_after_forward={rshard!r}: glasstorch takes True or False")
    state = _State(module, mesh, rshard, mp_policy or MixedPrecisionPolicy(),
                   offload_policy or OffloadPolicy())
    ignored = {id(p) for p in ignored_params or ()}
    seen = set()
    for sub in _unmanaged_modules(module):
        for name, p in list(sub._parameters.items()):
            if p is None or id(p) in ignored or isinstance(p, DTensor) or id(p) in seen:
                continue
            seen.add(id(p))
            dt = distribute_tensor(p.detach(), mesh, state.placements, src_data_rank=None)
            sub._parameters[name] = Parameter(dt, p.requires_grad)
            state.params.append(_Param(sub, name, state))
    module.__dict__["_fsdp_state"] = state
    module.__class__ = _fsdp_class(type(module))
    return module


def _unmanaged_modules(module):
    """``module`` and its submodules, leaving out those under a nested FSDP module."""
    yield module
    for child in module.children():
        if not isinstance(child, FSDPModule):
            yield from _unmanaged_modules(child)


def register_fsdp_forward_method(module, method_name: str) -> None:
    """Make ``module.<method_name>`` gather the parameters as ``forward`` does."""
    if not isinstance(module, FSDPModule):
        return
    method = getattr(type(module), method_name)

    def gathered(self, *args, **kwargs):
        state = self._fsdp()
        for p in state.params:
            p.module.__dict__[p.name] = _Unshard.apply(p.sharded._local_tensor, p)
        try:
            return method(self, *args, **kwargs)
        finally:
            self.reshard()
    module.__dict__[method_name] = gathered.__get__(module)
FSDPModule.__module__ = "glasstorch.distributed.fsdp"
