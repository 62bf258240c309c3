"""glasstorch.distributed: a single-process process group for now.

Scripts written for ``torch.distributed`` run unchanged with ``world_size=1``
(collectives are identities, as they are over one process); more than one
process is refused with a clear error until multi-process training lands.
"""

from __future__ import annotations

import enum
import os

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
           "all_gather", "reduce", "ReduceOp", "new_group", "is_torchelastic_launched",
           "ProcessGroup", "GroupMember", "group", "Backend", "Work", "is_mpi_available",
           "is_nccl_available", "get_process_group_ranks", "get_global_rank",
           "get_group_rank", "gather", "scatter", "reduce_scatter", "all_to_all",
           "all_to_all_single", "all_gather_object", "broadcast_object_list"]

_group = {}


class _RedOpType(int, enum.Enum):
    """The reduction kinds (``ReduceOp.RedOpType``); ``ReduceOp.SUM`` is one of them."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """The reductions collectives accept: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``,
    ``MAX``, ``BAND``, ``BOR``, ``BXOR`` (members of ``ReduceOp.RedOpType``), or a
    ``ReduceOp(RedOpType)`` object wrapping one; both compare equal to the member."""

    RedOpType = _RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = (_RedOpType.SUM, _RedOpType.AVG, _RedOpType.PRODUCT,
                                   _RedOpType.MIN, _RedOpType.MAX)
    BAND, BOR, BXOR, PREMUL_SUM = (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR,
                                   _RedOpType.PREMUL_SUM)

    def __init__(self, op):
        if not isinstance(op, _RedOpType):
            raise TypeError(f"ReduceOp(): expected a ReduceOp.RedOpType, got {op!r}")
        self.op = op

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            return self.op == other.op
        return isinstance(other, _RedOpType) and self.op == other

    def __hash__(self):
        return hash(self.op)


def _red_op(op):
    """The RedOpType behind ``op``; TypeError for anything else (a string, an int...)."""
    kind = op.op if isinstance(op, ReduceOp) else op
    if not isinstance(kind, _RedOpType) or kind is _RedOpType.PREMUL_SUM:
        raise TypeError(f"collectives take a ReduceOp (torch.distributed.ReduceOp.SUM, ...), "
                        f"got {op!r}")
    return kind


def _check_reduction(tensor, op):
    """torch's checks of a reduction on one tensor (the result over one process is the tensor
    itself, so only the errors remain)."""
    kind = _red_op(op)
    if kind in (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR) and (
            tensor.is_floating_point() or tensor.is_complex()):
        raise RuntimeError(f"Cannot use ReduceOp.{kind.name} with non-integral dtype")
    if kind is _RedOpType.AVG and not (tensor.is_floating_point() or tensor.is_complex()):
        # the average is computed in floating point and written back into the tensor
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtype_name(tensor)}")


def _dtype_name(tensor):
    """torch's C++ name of a tensor's dtype ('Long' for int64), as its cast errors use."""
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(tensor.dtype).split(".")[-1], str(tensor.dtype))


class Backend(str):
    """A backend name, lower-cased (``Backend("GLOO") == "gloo"``), with the known names as
    attributes."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class ProcessGroup:
    """A group of processes that collectives run over. glasstorch runs one process, so every
    group holds just rank 0."""

    def __init__(self, rank: int = 0, size: int = 1, backend: str = "gloo",
                 group_name: str = "0", group_desc: str = "undefined"):
        self._rank, self._size, self._backend = rank, size, backend
        self.group_name = group_name
        self.group_desc = group_desc
        self.bound_device_id = None

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._rank

    def size(self) -> int:
        """The number of processes in the group."""
        return self._size

    def name(self) -> str:
        """The backend's name."""
        return self._backend


class GroupMember:
    """The default group (``WORLD``, None until ``init_process_group``) and the marker of a
    rank that is not in a group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802 (torch's name)
        return GroupMember.WORLD


class group(metaclass=_WorldMeta):  # noqa: N801 (torch's name)
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""


class Work:
    """The handle a collective returns with ``async_op=True``; with one process the work is
    done when it is returned."""

    def __init__(self, result):
        from ..futures import Future
        self._future = Future()
        self._future.set_result(result)

    def wait(self, timeout=None) -> bool:
        """Wait for the collective: it has finished."""
        return True

    def is_completed(self) -> bool:
        """True: the collective has finished."""
        return True

    def is_success(self) -> bool:
        """True: the collective succeeded."""
        return True

    def exception(self):
        """None: the collective did not fail."""
        return None

    def get_future(self):
        """A completed ``Future`` holding the collective's output tensors."""
        return self._future

    def synchronize(self) -> None:
        """Wait for the collective on the current stream: it has finished."""


def _done(async_op, result):
    return Work(result) if async_op else None


def is_available() -> bool:
    """False, as a torch built without distributed support answers: glasstorch has the
    single-process group (init_process_group, collectives, DDP on one rank) but not DTensor,
    DeviceMesh, FSDP or distributed checkpointing, which every torch with distributed support
    has and which libraries (transformers, accelerate) import once this says True."""
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` was called (and not destroyed since)."""
    return bool(_group)


def is_torchelastic_launched() -> bool:
    """Whether the process was started by torchrun (``TORCHELASTIC_RUN_ID`` is set)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def is_mpi_available() -> bool:
    """False: glasstorch has no MPI backend (yet)."""
    return False


def is_nccl_available() -> bool:
    """False: NCCL needs CUDA, which glasstorch does not have."""
    return False


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
    name = Backend(backend) if backend else Backend.GLOO
    _group.update(backend=str(name), world_size=1, rank=0, groups=1)
    GroupMember.WORLD = ProcessGroup(0, 1, str(name), group_name or "0", "default_pg")


def _require_group():
    if not _group:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _group


def destroy_process_group(group=None) -> None:
    """Leave the default process group."""
    _require_group()
    _group.clear()
    GroupMember.WORLD = None


def get_rank(group=None) -> int:
    """This process's rank: 0, the only one."""
    return _require_group()["rank"]


def get_world_size(group=None) -> int:
    """The number of processes: 1."""
    return _require_group()["world_size"]


def get_backend(group=None) -> str:
    """The backend name given to ``init_process_group`` ('gloo' by default)."""
    return _require_group()["backend"]


def get_process_group_ranks(group) -> list:
    """The global ranks in ``group``: [0]."""
    _require_group()
    return [0]


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group`` (the same number: one process)."""
    _require_group()
    if group_rank != 0:
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return 0


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of global rank ``global_rank`` (0: one process)."""
    _require_group()
    if global_rank != 0:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return 0


def barrier(group=None, async_op=False, device_ids=None):
    """Wait for every process: returns at once with one process."""
    _require_group()
    return _done(async_op, [])


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Over one process every reduction leaves the tensor as it is."""
    _require_group()
    _check_reduction(tensor, op)
    return _done(async_op, [tensor])


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """With one process the reduced value is the tensor itself: nothing changes."""
    _require_group()
    _check_reduction(tensor, op)
    return _done(async_op, [tensor])


def broadcast(tensor, src=0, group=None, async_op=False):
    """With one process the source is this process: nothing changes."""
    _require_group()
    return _done(async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Copy ``tensor`` into the single entry of ``tensor_list`` (one process)."""
    _require_group()
    if len(tensor_list) != 1:
        raise ValueError("all_gather expects one output tensor per process (1 here)")
    tensor_list[0].copy_(tensor)
    return _done(async_op, list(tensor_list))


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Collect every process's ``tensor`` into ``gather_list`` on ``dst``: with one process,
    ``gather_list[0]`` receives a copy of ``tensor``."""
    _require_group()
    _single_entry("gather_list", gather_list)[0].copy_(tensor)
    return _done(async_op, list(gather_list))


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Send ``scatter_list[i]`` to rank i: with one process, ``tensor`` receives
    ``scatter_list[0]``."""
    _require_group()
    tensor.copy_(_single_entry("scatter_list", scatter_list)[0])
    return _done(async_op, [tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` over processes into rank i's ``output``: with one process,
    ``output`` receives ``input_list[0]``."""
    _require_group()
    source = _single_entry("input_list", input_list)[0]
    _check_reduction(source, op)
    output.copy_(source)
    return _done(async_op, [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[i]`` to rank i and receive into ``output_tensor_list``: with
    one process, the single input is copied to the single output."""
    _require_group()
    _single_entry("output_tensor_list", output_tensor_list)[0].copy_(
        _single_entry("input_tensor_list", input_tensor_list)[0])
    return _done(async_op, list(output_tensor_list))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """``all_to_all`` on split tensors: with one process ``output`` receives ``input``."""
    _require_group()
    for sizes in (output_split_sizes, input_split_sizes):
        if sizes is not None and list(sizes) != [input.shape[0]]:
            raise ValueError(f"split sizes {list(sizes)} do not describe one process's "
                             f"{input.shape[0]} rows")
    output.copy_(input)
    return _done(async_op, [output])


def all_gather_object(object_list, obj, group=None) -> None:
    """Gather picklable objects from every process: with one process ``object_list[0]`` is
    ``obj``."""
    _require_group()
    _single_entry("object_list", object_list)[0] = obj


def broadcast_object_list(object_list, src=0, group=None, device=None, group_src=None) -> None:
    """Broadcast picklable objects from ``src``: with one process they are already here."""
    _require_group()


def _single_entry(name, items):
    if items is None or len(items) != 1:
        raise ValueError(f"{name} must hold one entry per process (1 here), got "
                         f"{None if items is None else len(items)}")
    return items


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A new process group over ``ranks`` (default: all); with one process it holds rank 0."""
    state = _require_group()
    if ranks is not None and len(ranks) > state["world_size"]:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    name = str(state["groups"])
    state["groups"] += 1
    return ProcessGroup(0, 1, str(Backend(backend)) if backend else state["backend"], name,
                        group_desc or "undefined")
