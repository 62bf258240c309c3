"""torch.distributed.algorithms.join: training with uneven inputs across processes.

Inside ``with Join([model, optimizer]):`` each process iterates over its own data; a process
that runs out keeps "shadowing" the collectives of those still training (each joinable's
``JoinHook.main_hook``) until all have joined, then every hook's ``post_hook`` runs. Each
``Joinable`` calls ``Join.notify_join_context(self)`` once per iteration so that the
processes can count who is still training.

It runs over glasstorch's process group: with one process nobody is ever waited for, so on
exit the post hooks run at once, this process being the last (and only) joiner.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

from ... import ones, zeros
from .. import all_reduce, get_rank

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joinable does once its process has joined: ``main_hook`` is called while other
    processes still train (to mirror their collectives), ``post_hook`` once all have
    joined."""

    def main_hook(self) -> None:
        """Shadow one iteration of the processes that have not joined yet."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Clean up after every process has joined (``is_last_joiner``: this one joined
        last)."""


class _JoinConfig(NamedTuple):
    """A joinable's view of the ``Join`` it is in."""
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        """The config of a joinable outside any ``Join`` context."""
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """Base class of objects a ``Join`` context manages (DDP, ZeroRedundancyOptimizer...).
    Subclasses call ``super().__init__()``, return their ``JoinHook`` from ``join_hook`` and
    name the device and process group their collectives use."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The hook that shadows this joinable's collectives after its process joined."""

    @property
    @abstractmethod
    def join_device(self):
        """The device the join collectives run on."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group the join collectives run over."""


class Join:
    """Context manager for uneven inputs over ``joinables`` (see the module docstring).

    ``enable=False`` turns it into a no-op; ``throw_on_early_termination=True`` makes every
    process raise as soon as one runs out of inputs, instead of shadowing.
    """

    def __init__(self, joinables: list, enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, joinable in enumerate(joinables):
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        groups = {id(j.join_process_group): j.join_process_group for j in joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = joinables[0].join_process_group
        self._device = joinables[-1].join_device
        self._rank = get_rank(self._process_group)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._enable or exc_type is not None:
            return None          # let an exception propagate
        is_last_joiner = True
        rounds = 0
        while self._count_not_joined() > 0:
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            rounds += 1
            if rounds == 1000:
                warnings.warn(f"Detected uneven input skew of greater than {rounds}. This means "
                              f"that rank {self._rank} has at least {rounds} fewer inputs than "
                              f"other currently-active ranks. This level of skew could lead to "
                              f"performance degradation during training.", stacklevel=2)
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        return None

    def _count_not_joined(self) -> float:
        """How many processes are still iterating: the all-reduce of this process's 0 and the
        1s that ``notify_join_context`` contributes on processes still training."""
        count = zeros(1, device=self._device)
        all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self):
        all_reduce(ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable once per iteration, before its own collectives: counts this
        process as still training. Returns the async all-reduce's ``Work`` for the first
        joinable of an enabled ``Join`` (None otherwise)."""
        assert hasattr(joinable, "_join_config"), \
            f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = all_reduce(ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = zeros(1, device=device)
            all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing "
                                   "across all ranks.")
        return work
