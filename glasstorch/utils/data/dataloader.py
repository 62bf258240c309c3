"""DataLoader: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker has its own index queue and all share one result queue;
up to ``prefetch_factor * num_workers`` batches are in flight and results are re-ordered to
sampler order (unless ``in_order=False``). Batches come back through shared memory (see
``_utils/worker.py``). The main process never blocks for long: it polls the result queue and
checks worker liveness in between, so a dead worker raises instead of hanging, and shutdown
(end of epoch, error, garbage collection, interpreter exit) stops the workers and removes any
shared-memory segment they left.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import signal
import sys
import warnings
import weakref

from ... import _runtime
from ... import debug as _debug
from . import _utils
from ._utils import shared_memory
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from ._utils.worker import _IterableDatasetStopIteration, _ResumeIteration, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """Yields ``None`` forever: the placeholder indices for an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    # torch uses fork on Linux; keep it even where Python's default moved on.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class DataLoader:
    """Iterate over ``dataset`` in batches (see torch.utils.data.DataLoader)."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The multiprocessing context (or start-method name) worker processes are started with;
        None means the platform's default."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers="
                                 f"{self.num_workers}")
            if isinstance(ctx, str):
                valid = multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        """A new iterator per epoch; with ``persistent_workers`` the same workers are reused."""
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warn when more workers are requested than CPUs this process may use."""
        if not self.num_workers:
            return
        try:
            max_workers = len(os.sched_getaffinity(0))
        except AttributeError:
            max_workers = os.cpu_count()
        if max_workers is not None and self.num_workers > max_workers:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {max_workers}, "
                "which is smaller than what this DataLoader is going to create. Please be "
                "aware that excessive worker creation might get DataLoader running slow or "
                "even freeze, lower the worker number to avoid potential slowness/freeze if "
                "necessary.", stacklevel=3)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        import glasstorch
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            # No accelerator exists, so there is nothing to pin for (torch warns the same).
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(glasstorch.empty((), dtype=glasstorch.int64)
                              .random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset(None)
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not "
                        "properly configuring the IterableDataset replica at each worker.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        if _debug._on and self._num_yielded < 4:
            return _debug._impl().fetch_watched(self, index)
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


_iter_serial = itertools.count()

# OpenBLAS threads spin while they wait for each other. With worker processes busy on the other
# cores, every matrix product then waits out scheduler time slices (the CIFAR-10 tutorial with two
# workers on two cores: 6 s with one BLAS thread, 130 s with two). While workers run, the main
# process leaves them their cores (needs threadpoolctl; torch's OpenMP threads sleep instead).
_blas_sharing = {"iterators": 0, "limit": None}


def _share_cores_with_workers(num_workers):
    tpc = _runtime._threadpool()
    if tpc is None:
        return
    if _blas_sharing["iterators"] == 0:
        target = max(1, (os.cpu_count() or 1) - num_workers)
        current = max((i["num_threads"] for i in tpc.threadpool_info()
                       if i["user_api"] == "blas"), default=1)
        if current > target:
            _blas_sharing["limit"] = tpc.threadpool_limits(target, user_api="blas")
    _blas_sharing["iterators"] += 1


def _release_cores():
    _blas_sharing["iterators"] -= 1
    limit = _blas_sharing["limit"]
    if _blas_sharing["iterators"] == 0 and limit is not None:
        _blas_sharing["limit"] = None
        limit.restore_original_limits()


class _WorkerPool:
    """The processes, queues and segment prefix of one multi-process iterator; kept apart from
    the iterator so a ``weakref.finalize`` can shut them down without keeping it alive."""

    def __init__(self, ctx, shm_prefix, num_workers):
        self.ctx = ctx
        _share_cores_with_workers(num_workers)
        self.shm_prefix = shm_prefix
        self.workers = []
        self.index_queues = []
        self.data_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.shutdown_done = False

    def shutdown(self, join_timeout=2.0):
        """Stop every worker (politely, then by force), close the queues and remove any
        shared-memory segment a worker created that the main process did not consume."""
        if self.shutdown_done:
            return
        self.shutdown_done = True
        _release_cores()
        try:
            self.done_event.set()
            for w, q in zip(self.workers, self.index_queues):
                if w.is_alive():
                    try:
                        q.put(None)
                    except (OSError, ValueError):
                        pass
            deadline = _now() + join_timeout
            for w in self.workers:
                w.join(max(0.0, deadline - _now()))
            for w in self.workers:
                if w.is_alive():
                    w.kill()
                    w.join()
            for q in self.index_queues:
                q.cancel_join_thread()
                q.close()
            self.data_queue.cancel_join_thread()
            self.data_queue.close()
        finally:
            # Workers are gone: whatever segment still carries our prefix is orphaned.
            shared_memory.unlink_prefix(self.shm_prefix)


def _now():
    import time
    return time.monotonic()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        assert self._num_workers > 0
        assert self._prefetch_factor > 0
        ctx = loader.multiprocessing_context or _default_context()
        self._worker_init_fn = loader.worker_init_fn
        self._poll = _utils.MP_STATUS_CHECK_INTERVAL
        prefix = f"gtdl_{os.getpid()}_{next(_iter_serial)}_"
        self._pool = pool = _WorkerPool(ctx, prefix, self._num_workers)
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        self._shutdown = False
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                # Only the workers read it; the main thread must not wait to flush on exit.
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_utils.worker._worker_loop,
                    args=(self._dataset_kind, self._dataset, index_queue, pool.data_queue,
                          pool.done_event, self._auto_collation, self._collate_fn,
                          self._drop_last, self._base_seed, self._worker_init_fn, i,
                          self._num_workers, prefix, os.getpid(), self._poll),
                    daemon=True)
                w.start()
                pool.index_queues.append(index_queue)
                pool.workers.append(w)
        except BaseException:
            pool.shutdown()
            raise
        self._finalizer = weakref.finalize(self, pool.shutdown)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        # Reset the cycle so (like torch) the first batch of an epoch goes to worker 0.
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: drop the previous epoch's leftovers and restart streams.
            for q in self._pool.index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                ok, data = self._try_get_data(self._poll)
                if not ok:
                    continue
                if isinstance(data[0], _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _dead_workers(self):
        dead = []
        for wid, w in enumerate(self._pool.workers):
            if self._workers_status[wid] and not w.is_alive():
                dead.append((wid, w))
        return dead

    def _try_get_data(self, timeout):
        """(True, (idx, batch)) or (False, None) after ``timeout``; raises if a worker died."""
        try:
            idx, payload = self._pool.data_queue.get(timeout=timeout)
        except queue.Empty:
            dead = self._dead_workers()
            if dead:
                self._shutdown_workers()
                raise RuntimeError("; ".join(_death_message(wid, w) for wid, w in dead)) \
                    from None
            return False, None
        except (OSError, EOFError) as e:
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader lost its result queue: {e}") from e
        if payload is None:
            if isinstance(idx, _utils.worker._RngReport):  # only sent while debugging
                if _debug._on:
                    _debug._impl().worker_rngs(self, idx)
                return False, None
            return True, (idx, None)
        return True, (idx, _utils.worker._loads(payload))

    def _get_data(self):
        if self._timeout > 0:
            deadline = _now() + self._timeout
            while True:
                remaining = deadline - _now()
                if remaining <= 0:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                ok, data = self._try_get_data(min(self._poll, remaining))
                if ok:
                    return data
        while True:
            ok, data = self._try_get_data(self._poll)
            if ok:
                return data

    def _next_data(self):
        while True:
            # Skip tasks whose worker has ended its stream (IterableDataset).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_queue_idx_cycle)
            if self._workers_status[wid]:
                break
        else:
            return  # every worker has ended its stream
        self._pool.index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _utils.worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        # Its stream ended: let it exit; its remaining queued tasks are skipped.
        self._pool.index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if not self._shutdown:
            self._shutdown = True
            self._pool.shutdown()
            self._finalizer.detach()

    def __del__(self):
        if getattr(self, "_pool", None) is not None:
            self._shutdown_workers()


def _death_message(wid, w):
    code = w.exitcode
    msg = f"DataLoader worker {wid} (pid {w.pid}) exited unexpectedly with exit code {code}"
    if code is not None and code < 0:
        try:
            msg += f" (killed by signal {signal.Signals(-code).name})"
        except ValueError:
            pass
    return msg


