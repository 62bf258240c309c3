"""torch.distributed.checkpoint.state_dict: model and optimizer state under the parameters'
own names (FQNs), whatever wraps the model (DDP's ``module.`` prefix is dropped; FSDP
already answers with the original names)."""

from __future__ import annotations

from dataclasses import dataclass

from ..._tensor import Tensor
from ...nn.parallel import DistributedDataParallel
from ..fsdp import FullyShardedDataParallel
from ..tensor import DTensor, distribute_tensor

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]


@dataclass
class StateDictOptions:
    """``full_state_dict``: DTensors as whole tensors; ``ignore_frozen_params``: leave out
    parameters that do not require grad; ``strict``: ``set_*`` insists on every key."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _wrapper_prefixes(model):
    """The key prefixes DDP wrappers add, each with what it stands for."""
    out = []
    for name, m in model.named_modules():
        if isinstance(m, DistributedDataParallel):
            outer = f"{name}." if name else ""
            out.append((outer + "module.", outer))
    return sorted(out, key=lambda p: -len(p[0]))


def _clean(key, prefixes):
    for wrapped, plain in prefixes:
        if key.startswith(wrapped):
            return plain + key[len(wrapped):]
    return key


def _param_fqns(model):
    prefixes = _wrapper_prefixes(model)
    return {id(p): _clean(name, prefixes) for name, p in model.named_parameters()}


def _no_fsdp(model, what):
    if any(isinstance(m, FullyShardedDataParallel) for m in model.modules()):
        raise ValueError(f"{what}: the optimizer of a glasstorch FSDP model holds flat "
                         f"shards; save it with ZeroRedundancyOptimizer-style "
                         f"optimizer.state_dict() per rank instead")


def get_model_state_dict(model, *, submodules=None, options=None):
    """``model.state_dict()`` under the FQNs of the unwrapped model."""
    options = options or StateDictOptions()
    prefixes = _wrapper_prefixes(model)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    out = {}
    for key, value in model.state_dict().items():
        if options.ignore_frozen_params and key in frozen:
            continue
        if options.full_state_dict and isinstance(value, DTensor):
            value = value.full_tensor()
        out[_clean(key, prefixes)] = value
    return out


def _placed_like(value, p, options):
    """An optimizer state tensor of DTensor parameter ``p`` (this rank's part, shaped as
    ``p``'s) as a DTensor placed as ``p`` (sharing its storage), whole with
    ``full_state_dict``; other values as they are."""
    if not isinstance(p, DTensor) or not isinstance(value, Tensor) or \
            isinstance(value, DTensor) or tuple(value.shape) != tuple(p.to_local().shape):
        return value
    dt = DTensor._make(value, p.device_mesh, p.placements, p.shape)
    return dt.full_tensor() if options.full_state_dict else dt


def _local_part(value, p):
    """The inverse of ``_placed_like``: what the optimizer keeps for DTensor parameter
    ``p`` (this rank's part, cut from a whole tensor if need be)."""
    if not isinstance(p, DTensor) or not isinstance(value, Tensor):
        return value
    if isinstance(value, DTensor):
        return value.to_local()
    if tuple(value.shape) == tuple(p.shape) != tuple(p.to_local().shape):
        return distribute_tensor(value, p.device_mesh, p.placements,
                                 src_data_rank=None).to_local()
    return value


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The optimizers' state, keyed by parameter FQN instead of position (the state of a
    DTensor parameter as DTensors placed as the parameter)."""
    _no_fsdp(model, "get_optimizer_state_dict")
    options = options or StateDictOptions()
    optimizers = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    fqns = _param_fqns(model)
    state, groups = {}, []
    for opt in optimizers:
        for group in opt.param_groups:
            names = [fqns[id(p)] for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": names})
            for p, name in zip(group["params"], names):
                if p in opt.state:
                    state[name] = {k: _placed_like(v, p, options)
                                   for k, v in opt.state[p].items()}
    return {"state": state, "param_groups": groups}


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load FQN-keyed ``model_state_dict`` (as ``get_model_state_dict`` gives)."""
    options = options or StateDictOptions()
    prefixes = _wrapper_prefixes(model)
    by_fqn = {_clean(k, prefixes): k for k in model.state_dict()}
    mapped = {by_fqn.get(k, k): v for k, v in model_state_dict.items()}
    return model.load_state_dict(mapped, strict=options.strict)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Load FQN-keyed ``optim_state_dict`` into ``optimizers``."""
    _no_fsdp(model, "set_optimizer_state_dict")
    optimizers = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    fqns = _param_fqns(model)
    saved_groups = iter(optim_state_dict["param_groups"])
    for opt in optimizers:
        state, groups, index = {}, [], 0
        for group in opt.param_groups:
            saved = next(saved_groups)
            ids = []
            for p in group["params"]:
                name = fqns[id(p)]
                if name in optim_state_dict["state"]:
                    state[index] = {k: _local_part(v, p)
                                    for k, v in optim_state_dict["state"][name].items()}
                ids.append(index)
                index += 1
            groups.append({**{k: v for k, v in saved.items() if k != "params"},
                           "params": ids})
        opt.load_state_dict({"state": state, "param_groups": groups})


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """``set_model_state_dict`` then ``set_optimizer_state_dict``."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
