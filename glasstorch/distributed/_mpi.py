"""The transport under glasstorch.distributed: MPI through mpi4py, imported lazily.

Everything that talks to MPI lives here. A process group holds a ``Comm`` (an MPI
communicator, or ``SelfComm`` for a group of one process, which needs no MPI at all). Its
methods start a nonblocking MPI operation on contiguous NumPy buffers and return a ``Pending``:
the MPI requests plus a ``finish`` callable that writes the received data into the caller's
tensors. One progress thread completes pending operations in the background, so futures
chained with ``then`` complete without anyone waiting on them, and ``Pending.wait(timeout)``
turns a peer that never arrives into a ``DistBackendError`` instead of a hang.

How ranks find each other:
- started together by ``mpiexec -n N`` (one MPI world of N processes): the world is used
  directly, reordered by ``RANK`` when that is set;
- started one by one (``python -m glasstorch.distributed.run`` starts each rank under its own
  ``mpiexec -n 1``, as do several nodes' launchers): rank 0 opens an MPI port
  (``MPI_Open_port``) and publishes its name in the rendezvous store (TCPStore/FileStore);
  once all ranks have checked in, the others connect one at a time in rank order
  (``MPI_Comm_connect``/``accept``) and the inter-communicators are merged into one world.
A process started without any MPI process manager cannot connect (MPICH singletons share one
process id), so that case is refused with a message naming the launcher.
"""

from __future__ import annotations

import os
import pickle
import threading
import time

import numpy as np

__all__ = ["load", "SelfComm", "Comm", "Pending", "connect_world", "world_from_mpiexec"]

_MPI = None
_INSTALL_HINT = ("torch.distributed with more than one process runs on MPI through mpi4py: "
                 "install them with `pip install glasstorch[distributed]` (mpi4py and the "
                 "mpich wheel)")


def load():
    """The ``mpi4py.MPI`` module, imported on first use (ImportError with the install hint
    when mpi4py or its MPI library is missing)."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise ImportError(f"{_INSTALL_HINT} ({e})") from e
        _MPI = MPI
    return _MPI


def under_process_manager() -> bool:
    """Whether an MPI process manager (mpiexec's hydra, PMIx, Open MPI) started us."""
    return any(k in os.environ for k in ("PMI_RANK", "PMI_FD", "PMI_PORT", "PMIX_RANK",
                                         "OMPI_COMM_WORLD_RANK"))


def mpiexec_world_size() -> int:
    """The number of processes ``mpiexec`` started together with this one (1 if none)."""
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"):
        if key in os.environ:
            return int(os.environ[key])
    return 1


def mpiexec_rank() -> int:
    """This process's rank in the ``mpiexec`` world (0 if none)."""
    for key in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if key in os.environ:
            return int(os.environ[key])
    return 0


class Pending:
    """A started operation: MPI ``requests`` and ``finish()``, which runs once they complete
    and returns the operation's result. Completed by the progress thread or ``wait``."""

    __slots__ = ("requests", "finish", "statuses", "done", "result", "error", "cond",
                 "callbacks")

    def __init__(self, requests, finish=None, statuses=None):
        self.requests, self.finish, self.statuses = requests, finish, statuses
        self.done, self.result, self.error = False, None, None
        self.cond = threading.Condition()
        self.callbacks = []
        if not requests:
            self._complete()
        else:
            _progress.add(self)

    def _complete(self):
        try:
            result = self.finish() if self.finish is not None else None
            error = None
        except Exception as e:      # reported to whoever waits
            result, error = None, e
        with self.cond:
            self.result, self.error, self.done = result, error, True
            callbacks, self.callbacks = self.callbacks, []
            self.cond.notify_all()
        for cb in callbacks:
            cb(self)

    def on_done(self, cb):
        """Call ``cb(self)`` once complete (at once if it is)."""
        with self.cond:
            if not self.done:
                self.callbacks.append(cb)
                return
        cb(self)

    def wait(self, timeout: float) -> bool:
        """Block until complete or ``timeout`` seconds pass; whether it completed."""
        with self.cond:
            return self.cond.wait_for(lambda: self.done, timeout=timeout)


class _Progress:
    """The background thread that tests pending MPI requests and completes them."""

    def __init__(self):
        self.items = []
        self.cond = threading.Condition()
        self.thread = None

    def add(self, item):
        with self.cond:
            self.items.append(item)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True,
                                               name="glasstorch-mpi-progress")
                self.thread.start()
            self.cond.notify()

    def _run(self):
        MPI = load()
        delay = 0.0
        while True:
            with self.cond:
                while not self.items:
                    self.cond.wait()
                    delay = 0.0
                items = list(self.items)
            finished = [p for p in items if MPI.Request.Testall(p.requests, p.statuses)]
            if finished:
                with self.cond:
                    self.items = [p for p in self.items if p not in finished]
                for p in finished:
                    p._complete()
                items = finished = p = None   # idle, the thread must keep no buffer alive
                delay = 0.0
            else:
                # back off so that polling does not steal the CPU the peers compute on
                time.sleep(delay)
                delay = min(delay * 2 + 2e-5, 1e-3)


_progress = _Progress()

_OPS = {"SUM": "SUM", "PRODUCT": "PROD", "MIN": "MIN", "MAX": "MAX", "BAND": "BAND",
        "BOR": "BOR", "BXOR": "BXOR"}


class SelfComm:
    """The transport of a one-process group: every operation completes at once, locally."""

    rank, size = 0, 1

    def allreduce(self, send, recv, op, finish=None):
        recv[...] = send
        return Pending([], finish)

    def bcast(self, buf, root, finish=None):
        return Pending([], finish)

    def reduce(self, send, recv, op, root, finish=None):
        recv[...] = send
        return Pending([], finish)

    def allgather(self, send, recv, finish=None):
        recv[0] = send
        return Pending([], finish)

    def gather(self, send, recv, root, finish=None):
        recv[0] = send
        return Pending([], finish)

    def scatter(self, send, recv, root, finish=None):
        recv[...] = send[0]
        return Pending([], finish)

    def reduce_scatter(self, send, recv, op, finish=None):
        recv[...] = send
        return Pending([], finish)

    def alltoallv(self, send, scounts, recv, rcounts, finish=None):
        recv[...] = send
        return Pending([], finish)

    def barrier(self, finish=None):
        return Pending([], finish)

    def isend(self, buf, dest, tag, finish=None):
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")

    irecv = isend

    def obj_bcast(self, obj, root):
        return obj

    def obj_allgather(self, obj):
        return [pickle.loads(pickle.dumps(obj))]

    def obj_gather(self, obj, root):
        return [pickle.loads(pickle.dumps(obj))]

    def obj_scatter(self, objs, root):
        return objs[0]

    def split(self, color, key):
        return SelfComm() if color is not None else None

    def free(self):
        """Nothing to release."""


def _buf(arr):
    """An mpi4py buffer spec for a contiguous array (a byte view for dtypes MPI lacks)."""
    MPI = load()
    if arr.dtype.kind in "biufc" and arr.dtype.itemsize <= 16 and arr.dtype.char != "e":
        return arr
    return [arr.view(np.uint8), MPI.BYTE]


class Comm:
    """An MPI communicator with the nonblocking operations the collectives need. Buffers are
    contiguous NumPy arrays; reductions get a dtype MPI reduces natively."""

    def __init__(self, comm):
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def _op(self, op):
        return getattr(load(), _OPS[op])

    def allreduce(self, send, recv, op, finish=None):
        return Pending([self.comm.Iallreduce(send, recv, self._op(op))], finish)

    def bcast(self, buf, root, finish=None):
        return Pending([self.comm.Ibcast(_buf(buf), root)], finish)

    def reduce(self, send, recv, op, root, finish=None):
        return Pending([self.comm.Ireduce(send, recv, self._op(op), root)], finish)

    def allgather(self, send, recv, finish=None):
        return Pending([self.comm.Iallgather(_buf(send), _buf(recv))], finish)

    def gather(self, send, recv, root, finish=None):
        return Pending([self.comm.Igather(_buf(send), None if recv is None else _buf(recv),
                                          root)], finish)

    def scatter(self, send, recv, root, finish=None):
        return Pending([self.comm.Iscatter(None if send is None else _buf(send), _buf(recv),
                                           root)], finish)

    def reduce_scatter(self, send, recv, op, finish=None):
        return Pending([self.comm.Ireduce_scatter_block(send, recv, self._op(op))], finish)

    def alltoallv(self, send, scounts, recv, rcounts, finish=None):
        MPI = load()
        sdispl = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
        rdispl = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
        return Pending([self.comm.Ialltoallv(
            [send.view(np.uint8), (list(scounts), sdispl), MPI.BYTE],
            [recv.view(np.uint8), (list(rcounts), rdispl), MPI.BYTE])], finish)

    def barrier(self, finish=None):
        return Pending([self.comm.Ibarrier()], finish)

    def isend(self, buf, dest, tag, finish=None):
        return Pending([self.comm.Isend(_buf(buf), dest, tag)], finish)

    def irecv(self, buf, source, tag, finish=None):
        """Receive from ``source`` (None: any); the result is the sender's group rank."""
        MPI = load()
        status = MPI.Status()
        req = self.comm.Irecv(_buf(buf), MPI.ANY_SOURCE if source is None else source,
                              MPI.ANY_TAG if tag is None else tag)
        return Pending([req], lambda: (finish and finish(), status.Get_source())[1], [status])

    def obj_bcast(self, obj, root):
        return self.comm.bcast(obj, root)

    def obj_allgather(self, obj):
        return self.comm.allgather(obj)

    def obj_gather(self, obj, root):
        return self.comm.gather(obj, root)

    def obj_scatter(self, objs, root):
        return self.comm.scatter(objs, root)

    def split(self, color, key):
        """A sub-communicator (collective over this one); None where ``color`` is None."""
        MPI = load()
        sub = self.comm.Split(MPI.UNDEFINED if color is None else color, key)
        return None if sub == MPI.COMM_NULL else Comm(sub)

    def free(self):
        """Release the communicator."""
        MPI = load()
        if self.comm not in (MPI.COMM_WORLD, MPI.COMM_SELF, MPI.COMM_NULL):
            self.comm.Free()


def world_from_mpiexec(rank):
    """The world ``mpiexec -n N`` started, ordered by ``rank`` (this process's global rank)."""
    MPI = load()
    return Comm(MPI.COMM_WORLD.Split(0, rank))


def connect_world(store, rank, world_size, timeout):
    """Join ``world_size`` separately started MPI processes into one world through
    ``store`` (see the module docstring); ``timeout`` seconds for everyone to check in."""
    from ._store import DistStoreError
    if not under_process_manager():
        raise RuntimeError(
            f"rank {rank} of {world_size} was not started by an MPI process manager, so it "
            f"cannot connect to the other ranks; start the ranks with `python -m "
            f"glasstorch.distributed.run --nproc_per_node N script.py` (or `mpiexec -n N "
            f"python script.py`)")
    MPI = load()
    if rank == 0:
        port = MPI.Open_port()
        store.set("mpi/port", port)
    store.add("mpi/arrived", 1)
    deadline = time.monotonic() + timeout
    while int(store.get("mpi/arrived")) < world_size:
        if time.monotonic() > deadline:
            raise DistStoreError(
                f"Timed out after {timeout:g} s waiting for all {world_size} ranks to join "
                f"the process group ({int(store.get('mpi/arrived'))} arrived)")
        time.sleep(0.01)
    # ranks connect one at a time, in rank order (MPICH crashes on concurrent connects to
    # one port): rank k connects once the group that accepts it holds ranks 0..k-1
    if rank == 0:
        comm = MPI.COMM_SELF
    else:
        port = store.get("mpi/port").decode()
        while int(store.get("mpi/size")) != rank:
            if time.monotonic() > deadline:
                raise DistStoreError(f"Timed out after {timeout:g} s waiting for ranks before "
                                     f"{rank} to connect")
            time.sleep(0.005)
        comm = MPI.COMM_SELF.Connect(port, root=0).Merge(high=True)
    while True:
        if comm.Get_rank() == 0:
            store.set("mpi/size", str(comm.Get_size()))
        if comm.Get_size() == world_size:
            break
        comm = comm.Accept(port, root=0).Merge(high=False)
    if rank == 0:
        MPI.Close_port(port)
    return Comm(comm.Split(0, rank))
