"""ZeroRedundancyOptimizer (ZeRO stage 1): each rank keeps the optimizer state of its share
of the parameters only, steps that share, then broadcasts it to the other ranks."""

from __future__ import annotations

import copy

from ... import cat, no_grad
from ..._tensor import Tensor
from ...optim.optimizer import Optimizer
from .. import broadcast, gather_object, get_global_rank, get_rank, get_world_size, group
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]


class _ZeROJoinHook(JoinHook):
    """A joined rank keeps taking part in the parameter broadcasts of ``step``."""

    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        self.zero._sync_params()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wraps ``optimizer_class`` so that the parameters are split among the ranks of
    ``process_group`` (largest first, each to the rank holding the fewest elements so far);
    ``step`` updates this rank's part with a local ``optimizer_class`` and then broadcasts
    every part from its owner. ``state_dict`` needs a preceding ``consolidate_state_dict(to)``
    on all ranks and answers on rank ``to`` only, in the global indexing a plain optimizer
    uses. ``parameters_as_bucket_view=True`` stores each rank's parameters as views of one
    flat buffer, broadcast as is."""

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if isinstance(params, Tensor):
            raise TypeError(f"`params` argument should be an iterable of Tensors, but got "
                            f"{params.type()}")
        try:
            params = list(params)
        except TypeError as e:
            raise TypeError(f"`params` argument should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}") from e
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if not (all(isinstance(p, Tensor) for p in params)
                or all(isinstance(p, dict) for p in params)):
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by glasstorch: "
                "step() runs after backward, as with overlap_with_ddp=False")
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self.process_group = process_group if process_group is not None else group.WORLD
        self.world_size = get_world_size(self.process_group)
        self.rank = get_rank(self.process_group)
        self.global_rank = get_global_rank(self.process_group, self.rank)
        self._optim_class, self._optim_defaults = optimizer_class, defaults
        self._partition_cache = []
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._all_state_dicts = []
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._buckets = []
        self._build_param_buckets()
        self.initialized = True

    # ---- the partition
    def _partition_parameters(self):
        """Per rank, its parameter groups (copies of the global groups holding its
        parameters)."""
        if not self._partition_cache:
            per_rank = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for g in self.param_groups:
                mine = [[] for _ in range(self.world_size)]
                for p in sorted(g["params"], key=lambda t: t.numel(), reverse=True):
                    r = sizes.index(min(sizes))
                    mine[r].append(p)
                    sizes[r] += p.numel()
                for r, ps in enumerate(mine):
                    part = copy.copy(g)
                    part["params"] = ps
                    per_rank[r].append(part)
            self._partition_cache = per_rank
        return self._partition_cache

    def _params_of(self, rank):
        return [p for g in self._partition_parameters()[rank] for p in g["params"]]

    @property
    def _param_to_rank(self):
        return {p: r for r in range(self.world_size) for p in self._params_of(r)}

    @property
    def _index_to_param(self):
        return [p for g in self.param_groups for p in g["params"]]

    @property
    def _param_to_index(self):
        return {p: i for i, p in enumerate(self._index_to_param)}

    def _build_param_buckets(self):
        """With ``parameters_as_bucket_view``, one flat buffer per rank and dtype whose
        views become the parameters' data."""
        self._buckets = []
        if not self.parameters_as_bucket_view:
            return
        for r in range(self.world_size):
            by_dtype = {}
            for p in self._params_of(r):
                by_dtype.setdefault(p.dtype, []).append(p)
            for ps in by_dtype.values():
                with no_grad():
                    flat = cat([p.detach().reshape(-1) for p in ps])
                offset = 0
                for p in ps:
                    p.data = flat[offset:offset + p.numel()].view(p.shape)
                    offset += p.numel()
                self._buckets.append((r, flat, []))

    # ---- stepping
    @staticmethod
    def _sync_param_groups(src, dst):
        for s, d in zip(src, dst):
            for key, value in s.items():
                if key != "params":
                    d[key] = value

    def add_param_group(self, param_group):
        """Add a parameter group; its parameters are partitioned among the ranks again."""
        super().add_param_group(param_group)
        if self.initialized:
            self._partition_cache = []
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])
            self._build_param_buckets()

    def _sync_params(self):
        """Broadcast each rank's parameters from it to the others, one message per rank and
        dtype."""
        if self.parameters_as_bucket_view:
            for r, flat, _ in self._buckets:
                broadcast(flat, get_global_rank(self.process_group, r), self.process_group)
            return
        for r in range(self.world_size):
            by_dtype = {}
            for p in self._params_of(r):
                by_dtype.setdefault(p.dtype, []).append(p)
            for ps in by_dtype.values():
                with no_grad():
                    flat = cat([p.detach().reshape(-1) for p in ps])
                    broadcast(flat, get_global_rank(self.process_group, r), self.process_group)
                    if r != self.rank:
                        offset = 0
                        for p in ps:
                            p.copy_(flat[offset:offset + p.numel()].view(p.shape))
                            offset += p.numel()

    def step(self, closure=None, **kwargs):
        """Step this rank's parameters, then broadcast every rank's to all."""
        Join.notify_join_context(self)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = (self.optim.step(**kwargs) if closure is None
                else self.optim.step(closure=closure, **kwargs))
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._sync_params()
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter (not only this rank's)."""
        super().zero_grad(set_to_none)

    # ---- state
    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's optimizer state on group rank ``to`` (all ranks call it)."""
        local = self.optim.state_dict()
        out = [None] * self.world_size if self.rank == to else None
        gather_object(local, out, group=self.process_group, group_dst=to)
        self._all_state_dicts = out if self.rank == to else []

    def state_dict(self):
        """The global state gathered by the last ``consolidate_state_dict`` to this rank."""
        if not self._all_state_dicts:
            raise RuntimeError(
                f"Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you "
                f"meant to save the global state.")
        state_dict = super().state_dict()
        index = self._param_to_index
        for r, local in enumerate(self._all_state_dicts):
            for local_group, global_group in zip(local["param_groups"],
                                                 self._partition_parameters()[r]):
                for i, p in zip(local_group["params"], global_group["params"]):
                    if i in local["state"]:
                        state_dict["state"][index[p]] = local["state"][i]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict) -> None:
        """Load a global state (from ``state_dict``): each rank keeps its parameters' part."""
        owner, params = self._param_to_rank, self._index_to_param
        for i, value in state_dict["state"].items():
            p = params[i]
            if owner[p] == self.rank:
                self.optim.state[p] = {k: v.clone() if isinstance(v, Tensor) else v
                                       for k, v in value.items()}
        mine = {k: v for k, v in state_dict["state"].items() if owner[params[k]] == self.rank}
        super().load_state_dict({"state": mine, "param_groups": state_dict["param_groups"]})
        self.state.clear()          # the state lives in the local optimizer
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    # ---- Joinable
    def join_hook(self, **kwargs):
        """The hook that keeps a joined rank in ``step``'s broadcasts."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self._index_to_param[0].device

    @property
    def join_process_group(self):
        return self.process_group
