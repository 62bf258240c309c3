"""glasstorch.distributed: a single-process process group for now.

Scripts written for ``torch.distributed`` run unchanged with ``world_size=1``
(collectives are identities, as they are over one process); more than one
process is refused with a clear error until multi-process training lands.
"""

from __future__ import annotations

import os

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
           "all_gather", "reduce", "ReduceOp", "new_group", "is_torchelastic_launched"]

_group = {}


class ReduceOp:
    """The reductions collectives accept (SUM, AVG, PRODUCT, MIN, MAX)."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


def is_available() -> bool:
    """True: the single-process group is always available."""
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` was called (and not destroyed since)."""
    return bool(_group)


def is_torchelastic_launched() -> bool:
    """Whether the process was started by torchrun (``TORCHELASTIC_RUN_ID`` is set)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group; only a group of one process is supported yet."""
    if _group:
        raise ValueError("trying to initialize the default process group twice!")
    if world_size == -1:
        world_size = int(os.environ.get("WORLD_SIZE", 1))
    if rank == -1:
        rank = int(os.environ.get("RANK", 0))
    if world_size != 1 or rank != 0:
        raise NotImplementedError(
            f"glasstorch.distributed supports a single process for now (got world_size="
            f"{world_size}, rank={rank}); multi-process training is not implemented yet")
    _group.update(backend=backend or "gloo", world_size=1, rank=0)


def _require_group():
    if not _group:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _group


def destroy_process_group(group=None) -> None:
    """Leave the default process group."""
    _require_group()
    _group.clear()


def get_rank(group=None) -> int:
    """This process's rank: 0, the only one."""
    return _require_group()["rank"]


def get_world_size(group=None) -> int:
    """The number of processes: 1."""
    return _require_group()["world_size"]


def get_backend(group=None) -> str:
    """The backend name given to ``init_process_group`` ('gloo' by default)."""
    return _require_group()["backend"]


def barrier(group=None, async_op=False, device_ids=None):
    """Wait for every process: returns at once with one process."""
    _require_group()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Over one process every reduction leaves the tensor as it is."""
    _require_group()


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """With one process the reduced value is the tensor itself: nothing changes."""
    _require_group()


def broadcast(tensor, src=0, group=None, async_op=False):
    """With one process the source is this process: nothing changes."""
    _require_group()


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Copy ``tensor`` into the single entry of ``tensor_list`` (one process)."""
    _require_group()
    if len(tensor_list) != 1:
        raise ValueError("all_gather expects one output tensor per process (1 here)")
    tensor_list[0].copy_(tensor)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A sub-group; with one process it is the default group (returns None, as torch's handle for it
    is not needed)."""
    _require_group()
    return None
