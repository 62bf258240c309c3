"""What runs inside a DataLoader worker process, and how its batches travel back.

Each worker reads ``(task_idx, indices)`` from its own index queue, fetches and collates the
batch, and puts ``(task_idx, payload)`` on the shared result queue. ``payload`` is a pickle in
which every tensor is replaced by the name of a shared-memory segment holding its data (the
default collate stacks straight into such a segment), so tensor bytes are never pickled; the
main process maps the segment and unlinks its name at once.
"""

from __future__ import annotations

import io
import itertools
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

from .... import debug as _debug
from ...._tensor import Tensor, _wrap
from . import shared_memory

__all__ = ["WorkerInfo", "get_worker_info"]

# Set only inside a worker process.
_worker_info = None
_shm_prefix = None          # segment-name prefix of this worker's batches
_shm_counter = itertools.count()


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``
    and ``dataset`` (this worker's copy). Read-only."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The current worker's ``WorkerInfo``, or ``None`` in the main process."""
    return _worker_info


class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as the ack."""


class _RngReport:
    """Sent ahead of a worker's first batch while the pitfall detector is on: which random
    generators the dataset drew from and a fingerprint of the state each started in."""

    def __init__(self, worker_id, rngs):
        self.worker_id = worker_id
        self.rngs = rngs


class _KeyErrorMessage(str):
    # KeyError's str() is the repr of its argument; keep the traceback text readable.
    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback text."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the same exception type with the worker id and the original traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # The type cannot be built from one message; keep the text, lose the type.
            raise RuntimeError(msg) from None
        raise exception


# ---------------------------------------------------------------- shared-memory transport
def _new_segment_name():
    return f"{_shm_prefix}{next(_shm_counter)}"


def _stack_into_shared(batch):
    """``stack(batch)`` written directly into a new shared-memory segment, or ``None`` when the
    inputs are mixed (then the ordinary stack runs, raising its usual errors)."""
    first = batch[0]._data
    shape, dt = first.shape, first.dtype
    for t in batch:
        if type(t) is not Tensor or t._data.shape != shape or t._data.dtype != dt:
            return None
    full = (len(batch),) + shape
    if first.size == 0:
        return None
    name = _new_segment_name()
    arr = shared_memory.create_array(name, full, dt)
    # One pass straight into the segment: no temporary batch, no extra copy.
    np.stack([t._data for t in batch], out=arr)
    out = _wrap(arr)
    out._shm = (name, arr)
    return out


class _ShmPickler(pickle.Pickler):
    """Pickles a batch with each tensor replaced by a reference to a shared-memory segment."""

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        arr = obj._data
        if arr.size == 0:
            return None             # nothing to share; pickles as an empty array
        shm = obj.__dict__.get("_shm")
        if shm is not None and shm[1] is arr:
            name = shm[0]
        else:
            name = _new_segment_name()
            dst = shared_memory.create_array(name, arr.shape, arr.dtype)
            np.copyto(dst, arr)
            arr = dst
        cls = type(obj)
        if cls is Tensor:
            return ("shm", name, arr.shape, arr.dtype, arr.strides, cls)
        # a subclass's attributes (e.g. a BoundingBoxes' format and canvas size) travel too
        state = {k: v for k, v in getattr(obj, "__dict__", {}).items() if k != "_shm"}
        return ("shm", name, arr.shape, arr.dtype, arr.strides, cls, state)


class _ShmUnpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        _, name, shape, dtype, strides, cls, *state = pid
        arr = shared_memory.attach_array(name, shape, dtype, strides, unlink=True)
        t = _wrap(arr, None if cls is Tensor else cls)
        if state:
            t.__dict__.update(state[0])
        return t


def _dumps(obj, worker_id):
    buf = io.BytesIO()
    try:
        _ShmPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception:
        where = f"in DataLoader worker process {worker_id} while sending a batch"
        wrapper = ExceptionWrapper(where=where)
        buf = io.BytesIO()
        try:
            pickle.dump(wrapper, buf, pickle.HIGHEST_PROTOCOL)
        except Exception:   # the exception type itself cannot be pickled
            wrapper.exc_type = RuntimeError
            buf = io.BytesIO()
            pickle.dump(wrapper, buf, pickle.HIGHEST_PROTOCOL)
    return buf.getvalue()


def _loads(payload):
    """Rebuild a worker's batch in the main process (maps and unlinks its segments)."""
    return _ShmUnpickler(io.BytesIO(payload)).load()


# ---------------------------------------------------------------- the worker process
def _numpy_seed(base_seed, worker_id):
    # A state distinct from ``random``'s and glasstorch's seeds, derived from both inputs.
    mask = 0xFFFFFFFF
    return np.random.SeedSequence([worker_id, base_seed & mask, base_seed >> 32]).generate_state(4)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 shm_prefix, parent_pid, poll_interval):
    global _worker_info, _shm_prefix
    import glasstorch

    from ..dataloader import _DatasetKind
    parent_alive = True
    try:
        glasstorch.set_num_threads(1)  # as torch: workers leave the cores to each other
        seed = base_seed + worker_id
        random.seed(seed)
        glasstorch.manual_seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        _shm_prefix = f"{shm_prefix}w{worker_id}_"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        rngs_watched = False
        while True:
            try:
                r = index_queue.get(timeout=poll_interval)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    parent_alive = False
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:  # a fresh iterator for IterableDatasets
                    fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset,
                                                          auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue    # shutting down, or this stream has ended: skip queued tasks
            idx, index = r
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    if _debug._on and not rngs_watched:
                        rngs_watched = True
                        data = _debug._impl().fetch_watching_rngs(fetcher, index, worker_id,
                                                                  data_queue, _RngReport)
                    else:
                        data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, _dumps(data, worker_id)))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass    # the main process sees Ctrl-C too and shuts everything down
    if done_event.is_set() or not parent_alive:
        # Nobody will read what is still buffered; do not block exit on flushing it.
        data_queue.cancel_join_thread()
        data_queue.close()
    if not parent_alive:
        shared_memory.unlink_prefix(_shm_prefix)
