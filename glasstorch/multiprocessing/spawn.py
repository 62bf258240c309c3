"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes and wait for them.

Each child gets a path to write its traceback to if ``fn`` raises (a one-shot message that
cannot deadlock the way a queue can when a child dies mid-write). ``ProcessContext.join`` waits
until any child ends; when one failed it stops the others (SIGTERM, then SIGKILL) and raises
``ProcessRaisedException`` carrying the child's traceback, or ``ProcessExitedException`` with
its exit code or signal.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

log = logging.getLogger(__name__)

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]


class ProcessException(Exception):
    """A process started by ``spawn``/``start_processes`` failed: ``error_index`` is its index,
    ``error_pid`` its process id."""

    __slots__ = ("error_index", "error_pid")

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's function raised; the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero code (``exit_code``) or was killed by a signal
    (``signal_name``; ``exit_code`` is then minus the signal number)."""

    __slots__ = ("exit_code",)

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent():
    # Linux: a child whose parent died gets SIGINT instead of running on as an orphan.
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _wrap(fn, i, args, error_file):
    """What each child runs: ``fn(i, *args)``, its traceback written to ``error_file`` if it
    raises (then exit code 1). A SIGINT (the parent went away) ends it quietly."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes started by ``start_processes(..., join=False)``; ``join()`` waits on them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        # sentinel of each process not joined yet -> its index
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        """The process ids, by index."""
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None):
        """Wait (up to ``timeout`` seconds) until a process ends. Returns True once all ended
        cleanly, False while some still run. If one failed, the rest get ``grace_period``
        seconds, then SIGTERM, then SIGKILL, and the failure is raised: ProcessRaisedException
        (with the child's traceback) or ProcessExitedException (exit code or signal)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_all(grace_period)
        self._raise_failure(failed)

    def _stop_all(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        # a process stuck outside Python's signal handling ignores SIGTERM: then SIGKILL
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via "
                            "SIGKILL", p.pid)
                p.kill()
            p.join()

    def _raise_failure(self, index):
        process = self.processes[index]
        error_file = self.error_files[index]
        try:
            with open(error_file, "rb") as fh:
                trace = pickle.load(fh)
        except OSError:  # no traceback written: the process exited or was killed
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {index:d} terminated with signal {name}", error_index=index,
                    error_pid=process.pid, exit_code=code, signal_name=name) from None
            raise ProcessExitedException(
                f"process {index:d} terminated with exit code {code:d}", error_index=index,
                error_pid=process.pid, exit_code=code) from None
        os.unlink(error_file)
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n{trace}"
        raise ProcessRaisedException(msg, index, process.pid)


class SpawnContext(ProcessContext):
    """Deprecated name of ``ProcessContext``."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def _error_file_path():
    # a fresh name that nothing exists at: the child creates the file only when it fails
    fd, path = tempfile.mkstemp(prefix="pytorch-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(path)
    return path


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes (with ``start_method``) each running ``fn(i, *args)``. With
    ``join`` wait for all of them (raising as ``ProcessContext.join`` does), else return the
    ``ProcessContext``. With ``start_method='forkserver'`` and ``TORCH_MP_PARALLEL_START=1``
    the processes are started from a thread pool."""
    ctx = multiprocessing.get_context(start_method)

    def start(i):
        error_file = _error_file_path()
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        p.start()
        return p, error_file

    parallel = (start_method == "forkserver"
                and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1")
    if parallel:
        log.info("Starting processes in parallel.")
        with ThreadPoolExecutor(max_workers=nprocs) as pool:
            started = list(pool.map(start, range(nprocs)))
    else:
        started = [start(i) for i in range(nprocs)]
    context = ProcessContext([p for p, _ in started], [f for _, f in started])
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process started with
    the ``spawn`` method (other ``start_method`` values only warn: use ``start_processes``).
    Returns None when ``join``, else the ``ProcessContext``. A failing child stops the others
    and raises ``ProcessRaisedException``/``ProcessExitedException`` here."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
