"""glasstorch.distributed: process groups and collectives over MPI (torch.distributed).

Backends ``"gloo"`` and ``"mpi"`` both run on MPI (mpi4py, see ``_mpi.py``); a group of one
process needs no MPI at all. Rendezvous is torch's: ``init_method`` ``env://`` (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as ``glasstorch.distributed.run`` and torchrun set
them), ``tcp://host:port`` or ``file://path``, or an explicit ``store``; under ``mpiexec -n N``
without any of them the MPI world is the group. What differs from torch's gloo: the transport
is MPI (each rank must be started by an MPI process manager: the launcher or mpiexec), reduced
float16/bfloat16 values are summed in float32, and the ``*_object`` collectives pickle through
MPI without the group timeout.
"""

from __future__ import annotations

import datetime
import enum
import os
from urllib.parse import parse_qs, urlparse

import numpy as np

from . import _mpi
from ._store import (
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    FileStore,
    HashStore,
    PrefixStore,
    Store,
    TCPStore,
)

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
           "all_gather", "reduce", "ReduceOp", "new_group", "is_torchelastic_launched",
           "ProcessGroup", "GroupMember", "group", "Backend", "Work", "is_mpi_available",
           "is_nccl_available", "get_process_group_ranks", "get_global_rank",
           "get_group_rank", "gather", "scatter", "reduce_scatter", "all_to_all",
           "all_to_all_single", "all_gather_object", "broadcast_object_list",
           "all_gather_into_tensor", "reduce_scatter_tensor", "monitored_barrier", "send",
           "recv", "isend", "irecv", "batch_isend_irecv", "P2POp", "gather_object",
           "scatter_object_list", "Store", "HashStore", "FileStore", "TCPStore", "PrefixStore",
           "DistError", "DistBackendError", "DistStoreError", "DistNetworkError",
           "is_gloo_available", "get_node_local_rank", "default_pg_timeout", "GradBucket",
           "DeviceMesh", "init_device_mesh"]

_group = {}      # the default group's state: backend, world_size, rank, store, groups
default_pg_timeout = datetime.timedelta(minutes=30)


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
    """A group of processes that collectives run over: this process's ``rank()`` in it, its
    ``size()``, the backend's ``name()``, and the MPI communicator (``_comm``) under it."""

    def __init__(self, rank: int = 0, size: int = 1, backend: str = "gloo",
                 group_name: str = "0", group_desc: str = "undefined"):
        self._rank, self._size, self._backend = rank, size, backend
        self.group_name = group_name
        self.group_desc = group_desc
        self.bound_device_id = None
        self._comm = _mpi.SelfComm()
        self._ranks = list(range(size))      # the global rank of each group rank
        self._timeout = default_pg_timeout

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


def _seconds(timeout):
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class Work:
    """The handle of a started collective (returned with ``async_op=True``): ``wait`` blocks
    until it finishes (DistBackendError after the timeout), ``is_completed`` polls, and
    ``get_future`` gives a Future of the output tensors."""

    def __init__(self, pending, result, pg=None, what="collective"):
        self._pending, self._result, self._what = pending, result, what
        self._timeout = pg._timeout if pg is not None else default_pg_timeout
        self._rank = pg._rank if pg is not None else 0
        self._fut = None

    def wait(self, timeout=None) -> bool:
        """Wait for the operation (at most ``timeout``, else the group's timeout); raises
        DistBackendError if it did not finish in time or failed."""
        limit = _seconds(self._timeout if timeout is None else timeout)
        if not self._pending.wait(limit):
            raise DistBackendError(
                f"[Rank {self._rank}] {self._what} timed out after {limit * 1000:.0f} ms: a "
                f"peer did not take part in time (it may have failed or be running different "
                f"collectives)")
        if self._pending.error is not None:
            raise DistBackendError(f"[Rank {self._rank}] {self._what} failed: "
                                   f"{self._pending.error}") from self._pending.error
        return True

    def is_completed(self) -> bool:
        """Whether the operation has finished."""
        return self._pending.done

    def is_success(self) -> bool:
        """Whether the operation finished without error."""
        return self._pending.done and self._pending.error is None

    def exception(self):
        """The error the operation failed with (None if it succeeded or is running)."""
        return self._pending.error

    def result(self) -> list:
        """The operation's output tensors."""
        return list(self._result)

    def source_rank(self) -> int:
        """For ``irecv`` from any source: the rank the tensor came from."""
        self.wait()
        return self._pending.result

    def get_future(self):
        """A ``Future`` completed with the output tensors once the operation finishes."""
        if self._fut is None:
            from ..futures import Future
            fut = self._fut = Future()

            def done(p):
                if p.error is not None:
                    fut.set_exception(DistBackendError(f"{self._what} failed: {p.error}"))
                else:
                    fut.set_result(list(self._result))
            self._pending.on_done(done)
        return self._fut

    def synchronize(self) -> None:
        """Wait for the operation (there are no streams on CPU)."""
        self.wait()


def is_available() -> bool:
    """False, as a torch built without distributed support answers. glasstorch has process
    groups, collectives (functional ones too), DDP, ZeroRedundancyOptimizer, DeviceMesh,
    DTensor, FSDP1 and FSDP2 (``fully_shard``) and distributed checkpointing over MPI, all
    usable directly; but libraries that see True import more at their own import time, and
    two of those names glasstorch does not have: ``checkpoint.hf_storage`` (safetensors
    storage for DCP) and the ``_StridedShard`` placement (transformers, peft and
    sentence-transformers import both), so True would break importing them."""
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` was called (and not destroyed since)."""
    return bool(_group)


def is_torchelastic_launched() -> bool:
    """Whether the process was started by torchrun (``TORCHELASTIC_RUN_ID`` is set)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def is_mpi_available() -> bool:
    """False, as torch's CPU wheels answer: their MPI backend is absent. glasstorch's
    ``"mpi"`` backend name works whenever mpi4py is installed (it is the same transport as
    ``"gloo"`` here)."""
    return False


def is_gloo_available() -> bool:
    """True: the ``"gloo"`` backend (on MPI for more than one process) is always present."""
    return True


def is_nccl_available() -> bool:
    """False: NCCL needs CUDA, which glasstorch does not have."""
    return False


def get_node_local_rank(fallback_rank=None) -> int:
    """This process's rank on its machine (``LOCAL_RANK``, set by the launcher)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def _env_int(name, method):
    if name not in os.environ:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(os.environ[name])


def _rendezvous(init_method, rank, world_size, timeout):
    """The store and (rank, world_size) that ``init_method`` describes."""
    url = urlparse(init_method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank == -1:
            rank = _env_int("RANK", "env://")
        if world_size == -1:
            world_size = _env_int("WORLD_SIZE", "env://")
        addr = os.environ.get("MASTER_ADDR")
        if addr is None:
            _env_int("MASTER_ADDR", "env://")
        port = _env_int("MASTER_PORT", "env://")
        return TCPStore(addr, port, world_size, rank == 0, timeout), rank, world_size
    if url.scheme not in ("tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    if rank == -1 or world_size == -1:
        raise ValueError(f"Error initializing torch.distributed using {url.scheme}:// "
                         f"rendezvous: rank and world_size must be given (as arguments or "
                         f"in the URL's query)")
    if url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"tcp:// init_method needs a host and a port, got {init_method!r}")
        return TCPStore(url.hostname, url.port, world_size, rank == 0, timeout), rank, \
            world_size
    store = FileStore(url.path, world_size)       # file://
    store.set_timeout(timeout)
    return store, rank, world_size


def _backend_name(backend):
    name = str(Backend(backend)) if backend else Backend.GLOO
    if ":" in name:          # "cpu:gloo,cuda:nccl": the CPU entry is the one that matters
        parts = dict(p.split(":", 1) for p in name.split(","))
        name = parts.get("cpu", Backend.GLOO)
    if name == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in (Backend.GLOO, Backend.MPI):
        raise RuntimeError(f"Invalid backend: '{name}' (glasstorch runs 'gloo' and 'mpi', "
                           f"both on MPI)")
    return name


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None,
                       _ranks=None):
    """Join the default process group of ``world_size`` processes as ``rank``, meeting the
    others through ``init_method`` (``env://`` by default) or ``store``; collectives then
    time out after ``timeout`` (30 minutes by default)."""
    if _group:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if world_size <= 0 or rank < 0:
            raise ValueError("world_size and rank must be specified when store is given "
                             f"(got world_size={world_size}, rank={rank})")
    elif (init_method is None and "MASTER_ADDR" not in os.environ
          and _mpi.mpiexec_world_size() > 1):
        # mpiexec -n N started the ranks together: the MPI world is the group (torch's "mpi")
        if world_size == -1:
            world_size = int(os.environ.get("WORLD_SIZE", _mpi.mpiexec_world_size()))
        if rank == -1:
            rank = int(os.environ.get("RANK", _mpi.mpiexec_rank()))
    else:
        store, rank, world_size = _rendezvous(init_method or "env://", rank, world_size,
                                              timeout)
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank} for a world of {world_size} processes")
    if world_size == 1:
        comm = _mpi.SelfComm()
    elif store is None:
        if _mpi.load().COMM_WORLD.Get_size() != world_size:
            raise RuntimeError(f"mpiexec started {_mpi.mpiexec_world_size()} processes but "
                               f"world_size is {world_size}")
        comm = _mpi.world_from_mpiexec(rank)
    elif _mpi.mpiexec_world_size() == world_size:
        comm = _mpi.world_from_mpiexec(rank)
    else:
        comm = _mpi.connect_world(PrefixStore("glasstorch", store), rank, world_size,
                                  _seconds(timeout))
    pg = ProcessGroup(rank, world_size, name, group_name or "0", "default_pg")
    pg._comm, pg._timeout = comm, timeout
    _group.update(backend=name, world_size=world_size, rank=rank, groups=1, store=store,
                  pg=pg, subgroups=[])
    GroupMember.WORLD = pg


def _require_group():
    if not _group:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _group


def _pg(group):
    """The ProcessGroup a call is about (the default one for None); None for a rank outside
    it."""
    _require_group()
    if group is None:
        return _group["pg"]
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(group).__name__}")
    return group


def destroy_process_group(group=None) -> None:
    """Leave ``group`` (the default group, and every group made from it, when None)."""
    state = _require_group()
    if group is not None and group is not state["pg"]:
        if isinstance(group, ProcessGroup):
            group._comm.free()
            if group in state["subgroups"]:
                state["subgroups"].remove(group)
        return
    for pg in state["subgroups"]:
        pg._comm.free()
    state["pg"]._comm.free()
    store = state.get("store")
    if isinstance(store, TCPStore):
        store._shutdown()
    _group.clear()
    GroupMember.WORLD = None


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group if None; -1 if not a member)."""
    pg = _pg(group)
    return -1 if pg is None else pg._rank


def get_world_size(group=None) -> int:
    """The number of processes in ``group`` (-1 if this process is not a member)."""
    pg = _pg(group)
    return -1 if pg is None else pg._size


def get_backend(group=None) -> str:
    """The backend name of ``group`` ('gloo' by default)."""
    pg = _pg(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return str(pg._backend)


def get_process_group_ranks(group) -> list:
    """The global ranks in ``group``, in group-rank order."""
    pg = _pg(group)
    return list(pg._ranks)


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group``."""
    pg = _pg(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of global rank ``global_rank``."""
    pg = _pg(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A process group over the global ``ranks`` (default: all). Every process of the default
    group must call it, members or not; non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    state = _require_group()
    world = state["pg"]
    ranks = list(range(state["world_size"])) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > state["world_size"]:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if not 0 <= r < state["world_size"]:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    name = str(state["groups"])
    state["groups"] += 1
    me = state["rank"]
    member = me in ranks
    if world._size == 1:
        comm = _mpi.SelfComm() if member else None
    else:
        comm = world._comm.split(0 if member else None, ranks.index(me) if member else 0)
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(ranks.index(me), len(ranks),
                      _backend_name(backend) if backend else state["backend"], name,
                      group_desc or "undefined")
    pg._comm, pg._ranks = comm, ranks
    pg._timeout = world._timeout if timeout is None else timeout
    state["subgroups"].append(pg)
    return pg


# ---- tensors <-> buffers ----------------------------------------------------------------

_FLOAT_KINDS = ("float16", "bfloat16")


def _flat(tensor):
    """A contiguous 1-D copy-or-view of ``tensor``'s values."""
    return np.ascontiguousarray(tensor._data).reshape(-1)


def _write(tensor, values):
    """Write ``values`` into ``tensor`` in place (any layout), as the collectives do."""
    np.copyto(tensor._data, np.asarray(values).reshape(tensor._data.shape), casting="unsafe")
    tensor._bump_version()


def _wire(values):
    """``values`` in a dtype MPI reduces natively (float16/bfloat16 in float32, bool as
    uint8)."""
    if values.dtype.name in _FLOAT_KINDS:
        return values.astype(np.float32)
    if values.dtype == np.bool_:
        return values.astype(np.uint8)
    return np.array(values, copy=True)


def _unwire(values, dtype, kind, size):
    """Back from the wire dtype, averaging for AVG."""
    if kind is _RedOpType.AVG:
        values = values / size if values.dtype.kind == "f" or values.dtype.kind == "c" else values
    if dtype == np.bool_:
        return values != 0
    return values.astype(dtype, copy=False)


def _check_reduction(tensor, op):
    """torch's checks of a reduction's op against the tensor's dtype; returns the kind."""
    kind = _red_op(op)
    if kind in (_RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR) and (
            tensor.is_floating_point() or tensor.is_complex()):
        raise RuntimeError(f"Cannot use ReduceOp.{kind.name} with non-integral dtype")
    if kind is _RedOpType.AVG and not (tensor.is_floating_point() or tensor.is_complex()):
        # the average is computed in floating point and written back into the tensor
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtype_name(tensor)}")
    if kind in (_RedOpType.MIN, _RedOpType.MAX) and tensor.is_complex():
        raise ValueError(f"all_reduce does not support {kind} on complex tensors")
    return kind


def _mpi_op(kind):
    return "SUM" if kind is _RedOpType.AVG else kind.name


def _run(pg, start, finish, result, async_op, what):
    """Start an operation (``start(finish)`` gives a Pending that calls ``finish`` once the
    data is in) and either return its Work (``async_op``) or wait for it within the group's
    timeout."""
    try:
        pending = start(finish)
    except Exception as e:
        if isinstance(e, (ValueError, TypeError, RuntimeError)) and not _is_mpi_error(e):
            raise
        raise DistBackendError(f"[Rank {pg._rank}] {what} failed: {e}") from e
    work = Work(pending, result, pg, what)
    if async_op:
        return work
    work.wait()
    return None


def _is_mpi_error(e):
    return type(e).__module__.startswith("mpi4py")


def _group_rank(pg, rank, group_rank, what):
    """The group rank of a src/dst given as a global rank or as ``group_rank``."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        r = group_rank
    else:
        r = 0 if rank is None else rank
        if r not in pg._ranks:
            raise ValueError(f"Global rank {r} is not part of group {pg.group_name}")
        r = pg._ranks.index(r)
    if not 0 <= r < pg._size:
        raise ValueError(f"Invalid {what} rank: {r}")
    return r


def _check_tensor(tensor, name="tensor"):
    from .._tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(tensor)} instead.")


def _check_list(tensors, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(tensors)} instead.")
    for t in tensors:
        _check_tensor(t, name)


def _same_dtype(tensors):
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        a, b = list(dtypes)[:2]
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {a} and  {b}")


def _not_member(what):
    import warnings
    warnings.warn(f"Running {what} on global rank {_group['rank']} which does not belong to "
                  f"the given group.", stacklevel=3)


# ---- collectives ---------------------------------------------------------------------------

def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every process of ``group`` reaches the barrier."""
    pg = _pg(group)
    if pg is None:
        return _not_member("barrier")
    work = _run(pg, lambda f: pg._comm.barrier(finish=f), None, [], True, "barrier")
    if async_op:
        return work
    work.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not arrive within ``timeout``
    (RuntimeError): rank 0 waits for each rank's message, then releases them all."""
    pg = _pg(group)
    if pg is None:
        return _not_member("monitored_barrier")
    limit = _seconds(pg._timeout if timeout is None else timeout)
    if pg._size == 1:
        return None
    from .. import int32, zeros
    token = zeros(1, dtype=int32)
    tag = 0x6d62
    if pg._rank != 0:
        _run(pg, lambda f: pg._comm.isend(_flat(token), 0, tag, finish=f), None, [], True,
             "monitored_barrier").wait(limit)
        _run(pg, lambda f: pg._comm.irecv(np.zeros(1, np.int32), 0, tag + 1, finish=f), None,
             [], True, "monitored_barrier").wait(limit)
        return None
    works = {r: Work(pg._comm.irecv(np.zeros(1, np.int32), r, tag), [], pg, "monitored_barrier")
             for r in range(1, pg._size)}
    import time
    deadline = time.monotonic() + limit
    missing = []
    for r, w in works.items():
        if not w._pending.wait(max(0.0, deadline - time.monotonic())):
            missing.append(pg._ranks[r])
            if not wait_all_ranks:
                break
    if missing:
        if wait_all_ranks:
            raise RuntimeError(f"Ranks {', '.join(map(str, missing))} failed to pass "
                               f"monitoredBarrier in {limit * 1000:.0f} ms")
        raise RuntimeError(f"[Rank 0]: Rank {missing[0]} failed to pass monitoredBarrier in "
                           f"{limit * 1000:.0f} ms")
    for r in range(1, pg._size):
        Work(pg._comm.isend(np.zeros(1, np.int32), r, tag + 1), [], pg).wait(limit)
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every process of ``group`` with ``op``; each gets the
    result, in place."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("all_reduce")
    kind = _check_reduction(tensor, op)
    send = _wire(_flat(tensor))
    recv = np.empty_like(send)
    dtype = tensor._data.dtype
    return _run(pg, lambda f: pg._comm.allreduce(send, recv, _mpi_op(kind), finish=f),
                lambda: _write(tensor, _unwire(recv, dtype, kind, pg._size)), [tensor],
                async_op, "all_reduce")


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the processes of ``group`` onto rank ``dst`` (in place there;
    the others' tensors are left as they are)."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("reduce")
    root = _group_rank(pg, dst, group_dst, "dst")
    kind = _check_reduction(tensor, op)
    send = _wire(_flat(tensor))
    recv = np.empty_like(send)
    dtype = tensor._data.dtype
    mine = pg._rank == root
    return _run(pg, lambda f: pg._comm.reduce(send, recv, _mpi_op(kind), root, finish=f),
                (lambda: _write(tensor, _unwire(recv, dtype, kind, pg._size))) if mine else None,
                [tensor], async_op, "reduce")


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` from rank ``src`` into the same tensor of every process."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("broadcast")
    if group_src is None and src is not None and src not in pg._ranks:
        raise RuntimeError(f"ProcessGroupGloo::broadcast: invalid root rank: {src}")
    root = _group_rank(pg, src, group_src, "src")
    buf = _flat(tensor).copy()
    finish = (lambda: _write(tensor, buf)) if pg._rank != root else None
    return _run(pg, lambda f: pg._comm.bcast(buf, root, finish=f), finish, [tensor], async_op,
                "broadcast")


def _check_same(tensor, others, what):
    for i, t in enumerate(others):
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::{what}: invalid tensor size at index {i} "
                               f"(expected ({', '.join(map(str, tensor.shape))}), got "
                               f"({', '.join(map(str, t.shape))}))")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather every process's ``tensor`` into ``tensor_list`` (one entry per rank) on every
    process."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("all_gather")
    _same_dtype(list(tensor_list) + [tensor])
    if len(tensor_list) != pg._size:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                           f"0 (expected length {pg._size}, got {len(tensor_list)})")
    _check_same(tensor, tensor_list, "allgather")
    send = _flat(tensor)
    recv = np.empty((pg._size,) + send.shape, send.dtype)

    def finish():
        for out, values in zip(tensor_list, recv):
            _write(out, values)
    return _run(pg, lambda f: pg._comm.allgather(send, recv, finish=f), finish, list(tensor_list),
                async_op, "all_gather")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every process's ``input_tensor`` into ``output_tensor``, concatenated along
    dim 0 (or stacked: any shape of ``world_size`` times the elements)."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _pg(group)
    if pg is None:
        return _not_member("all_gather_into_tensor")
    _same_dtype([output_tensor, input_tensor])
    if output_tensor.numel() != input_tensor.numel() * pg._size:
        raise ValueError(f"output tensor size must be equal to world_size times input tensor "
                         f"size ({output_tensor.numel()} vs {pg._size} x "
                         f"{input_tensor.numel()})")
    send = _flat(input_tensor)
    recv = np.empty((pg._size,) + send.shape, send.dtype)
    return _run(pg, lambda f: pg._comm.allgather(send, recv, finish=f),
                lambda: _write(output_tensor, recv), [output_tensor], async_op,
                "all_gather_into_tensor")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Collect every process's ``tensor`` into ``gather_list`` on rank ``dst`` (which alone
    passes a list)."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("gather")
    root = _group_rank(pg, dst, group_dst, "dst")
    if pg._rank == root:
        if gather_list is None or len(gather_list) != pg._size:
            raise RuntimeError(f"ProcessGroupGloo::gather: Incorrect output list size "
                               f"{0 if gather_list is None else len(gather_list)}. Output list "
                               f"size should be {pg._size}, same as size of the process group.")
        _check_list(gather_list, "gather_list")
        _same_dtype(list(gather_list) + [tensor])
        _check_same(tensor, gather_list, "gather")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    send = _flat(tensor)
    recv = np.empty((pg._size,) + send.shape, send.dtype) if pg._rank == root else None

    def finish():
        for out, values in zip(gather_list, recv):
            _write(out, values)
    return _run(pg, lambda f: pg._comm.gather(send, recv, root, finish=f),
                finish if pg._rank == root else None,
                list(gather_list) if pg._rank == root else [], async_op, "gather")


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send ``scatter_list[i]`` from rank ``src`` (which alone passes the list) into rank
    i's ``tensor``."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("scatter")
    root = _group_rank(pg, src, group_src, "src")
    send = None
    if pg._rank == root:
        if scatter_list is None or len(scatter_list) != pg._size:
            raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size "
                               f"{0 if scatter_list is None else len(scatter_list)}. Input list "
                               f"size should be {pg._size}, same as size of the process group.")
        _check_list(scatter_list, "scatter_list")
        _same_dtype(list(scatter_list) + [tensor])
        _check_same(tensor, scatter_list, "scatter")
        send = np.stack([_flat(t) for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    recv = np.empty(tensor.numel(), tensor._data.dtype)
    return _run(pg, lambda f: pg._comm.scatter(send, recv, root, finish=f),
                lambda: _write(tensor, recv), [tensor], async_op, "scatter")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` over the processes into rank i's ``output``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _pg(group)
    if pg is None:
        return _not_member("reduce_scatter")
    if len(input_list) != pg._size:
        raise ValueError(f"reduce_scatter needs one input tensor per process ({pg._size}), "
                         f"got {len(input_list)}")
    _same_dtype(list(input_list) + [output])
    _check_same(output, input_list, "reduce_scatter")
    kind = _check_reduction(output, op)
    send = _wire(np.concatenate([_flat(t) for t in input_list]))
    recv = np.empty(output.numel(), send.dtype)
    dtype = output._data.dtype
    return _run(pg, lambda f: pg._comm.reduce_scatter(send, recv, _mpi_op(kind), finish=f),
                lambda: _write(output, _unwire(recv, dtype, kind, pg._size)), [output],
                async_op, "reduce_scatter")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world_size`` chunks along dim 0) over the processes; rank i's
    ``output`` receives chunk i."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _pg(group)
    if pg is None:
        return _not_member("reduce_scatter_tensor")
    _same_dtype([output, input])
    if input.numel() != output.numel() * pg._size:
        raise ValueError(f"input tensor must be the same size as output size times world size "
                         f"({input.numel()} vs {pg._size} x {output.numel()})")
    kind = _check_reduction(output, op)
    send = _wire(_flat(input))
    recv = np.empty(output.numel(), send.dtype)
    dtype = output._data.dtype
    return _run(pg, lambda f: pg._comm.reduce_scatter(send, recv, _mpi_op(kind), finish=f),
                lambda: _write(output, _unwire(recv, dtype, kind, pg._size)), [output],
                async_op, "reduce_scatter_tensor")


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[i]`` to rank i; ``output_tensor_list[j]`` receives what
    rank j sent here."""
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    pg = _pg(group)
    if pg is None:
        return _not_member("all_to_all")
    for name, items in (("output_tensor_list", output_tensor_list),
                        ("input_tensor_list", input_tensor_list)):
        if len(items) != pg._size:
            raise ValueError(f"{name} must hold one tensor per process ({pg._size}), got "
                             f"{len(items)}")
    _same_dtype(list(output_tensor_list) + list(input_tensor_list))
    send = np.concatenate([_flat(t).view(np.uint8) for t in input_tensor_list])
    scounts = [t.numel() * t.element_size() for t in input_tensor_list]
    rcounts = [t.numel() * t.element_size() for t in output_tensor_list]
    recv = np.empty(sum(rcounts), np.uint8)
    dtype = output_tensor_list[0]._data.dtype

    def finish():
        pos = 0
        for out, n in zip(output_tensor_list, rcounts):
            _write(out, recv[pos:pos + n].view(dtype))
            pos += n
    return _run(pg, lambda f: pg._comm.alltoallv(send, scounts, recv, rcounts, finish=f), finish,
                list(output_tensor_list), async_op, "all_to_all")


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """``all_to_all`` on one tensor each side, split along dim 0 (equally, or by the split
    sizes)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _pg(group)
    if pg is None:
        return _not_member("all_to_all_single")
    _same_dtype([output, input])

    def counts(t, sizes, name):
        rows = t.shape[0] if t.dim() else 1
        row = (t.numel() // rows if rows else 0) * t.element_size()
        if sizes is None or len(sizes) == 0:
            if rows % pg._size:
                raise ValueError(f"{name} tensor's dim 0 ({rows}) must divide equally by the "
                                 f"world size {pg._size}")
            return [rows // pg._size * row] * pg._size
        if len(sizes) != pg._size or sum(sizes) != rows:
            raise ValueError(f"{name}_split_sizes {list(sizes)} must have {pg._size} entries "
                             f"summing to dim 0 ({rows})")
        return [int(s) * row for s in sizes]
    scounts = counts(input, input_split_sizes, "input")
    rcounts = counts(output, output_split_sizes, "output")
    send = _flat(input).view(np.uint8)
    recv = np.empty(sum(rcounts), np.uint8)
    dtype = output._data.dtype
    return _run(pg, lambda f: pg._comm.alltoallv(send, scounts, recv, rcounts, finish=f),
                lambda: _write(output, recv.view(dtype)), [output], async_op,
                "all_to_all_single")


# ---- point to point ------------------------------------------------------------------------

def _peer(pg, rank, group_rank, what):
    r = _group_rank(pg, rank, group_rank, what)
    if r == pg._rank:
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: "
                         f"{'destination' if what == 'dst' else 'source'} rank should not be "
                         f"the same as the rank of the current process.")
    return r


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns its Work."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("isend")
    peer = _peer(pg, dst, group_dst, "dst")
    buf = _flat(tensor).copy()
    return _run(pg, lambda f: pg._comm.isend(buf, peer, tag, finish=f), None, [tensor], True,
                "send")


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (None: any rank); returns its
    Work."""
    _check_tensor(tensor)
    pg = _pg(group)
    if pg is None:
        return _not_member("irecv")
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src")
    buf = np.empty(tensor.numel(), tensor._data.dtype)
    return _run(pg, lambda f: pg._comm.irecv(buf, peer, tag, finish=f), lambda: _write(tensor, buf),
                [tensor], True, "recv")


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once it is on its way)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receive into ``tensor`` from rank ``src`` (None: any); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = _pg(group)
    return pg._ranks[work._pending.result]


class P2POp:
    """One point-to-point operation for ``batch_isend_irecv``: ``op`` is ``isend`` or
    ``irecv``, with its tensor, peer rank, group and tag."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed"
                             ".isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list) -> list:
    """Start every operation in ``p2p_op_list`` (P2POps); returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# ---- picklable objects ---------------------------------------------------------------------

def all_gather_object(object_list, obj, group=None) -> None:
    """Gather the picklable ``obj`` of every process into ``object_list`` (one entry per
    rank)."""
    pg = _pg(group)
    if pg is None:
        return _not_member("all_gather_object")
    if len(object_list) != pg._size:
        raise ValueError(f"object_list must hold one entry per process ({pg._size}), got "
                         f"{len(object_list)}")
    object_list[:] = pg._comm.obj_allgather(obj)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    """Gather the picklable ``obj`` of every process into ``object_gather_list`` on
    ``dst``."""
    pg = _pg(group)
    if pg is None:
        return _not_member("gather_object")
    root = _group_rank(pg, dst, group_dst, "dst")
    if pg._rank == root and (object_gather_list is None
                             or len(object_gather_list) != pg._size):
        raise ValueError(f"object_gather_list must hold one entry per process ({pg._size}) on "
                         f"the destination rank")
    values = pg._comm.obj_gather(obj, root)
    if pg._rank == root:
        object_gather_list[:] = values


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s entries on every process by those of rank ``src``."""
    pg = _pg(group)
    if pg is None:
        return _not_member("broadcast_object_list")
    root = _group_rank(pg, src, group_src, "src")
    values = pg._comm.obj_bcast(list(object_list) if pg._rank == root else None, root)
    if pg._rank != root:
        object_list[:] = values


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None) -> None:
    """Send ``scatter_object_input_list[i]`` from ``src`` to rank i, which finds it in
    ``scatter_object_output_list[0]``."""
    pg = _pg(group)
    if pg is None:
        return _not_member("scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    root = _group_rank(pg, src, group_src, "src")
    if pg._rank == root and (scatter_object_input_list is None
                             or len(scatter_object_input_list) != pg._size):
        raise ValueError(f"scatter_object_input_list must hold one entry per process "
                         f"({pg._size}) on the source rank")
    scatter_object_output_list[0] = pg._comm.obj_scatter(
        list(scatter_object_input_list) if pg._rank == root else None, root)


class GradBucket:
    """One bucket of DDP gradients as a communication hook sees it: ``buffer()`` (the
    gradients flattened into one tensor), ``gradients()`` (views of it, one per parameter),
    ``parameters()``, ``index()``, ``is_last()`` and ``set_buffer``."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index, self._buffer, self._params = index, buffer, params
        self._offsets, self._is_last = offsets, is_last

    def index(self) -> int:
        """The bucket's position (0 holds the last parameters, which get gradients first)."""
        return self._index

    def buffer(self):
        """The flattened gradients of the bucket."""
        return self._buffer

    def set_buffer(self, buffer) -> None:
        """Replace the flattened gradients (what later hooks and DDP read)."""
        self._buffer = buffer

    def gradients(self) -> list:
        """Each parameter's gradient, as a view of ``buffer()``."""
        return [self._buffer[o:o + p.numel()].view(p.shape)
                for p, o in zip(self._params, self._offsets)]

    def parameters(self) -> list:
        """The parameters whose gradients the bucket holds."""
        return list(self._params)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the iteration."""
        return self._is_last


# torch.distributed names these at its top level too (imported last: they build on the above)
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: E402
