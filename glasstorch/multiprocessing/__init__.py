"""torch.multiprocessing: the standard ``multiprocessing`` module, with tensors shared.

Everything of ``multiprocessing`` is here under the same names (``Process``, ``Queue``,
``Pool``, ``get_context``, ...). What differs is importing this module: it registers reducers
(``reductions.init_reductions``) so that a tensor sent through a queue, a pipe, a pool or as an
argument of a spawned/forkserver process is moved into shared memory and arrives as a view of the
same memory, a child's in-place write being seen by the parent. Children forked by the ``fork``
method inherit memory instead; a tensor is shared with them only once it is in shared memory
(``Tensor.share_memory_``, ``Module.share_memory``).

``spawn``/``start_processes`` run a function in several processes and raise the first failure.
"""

import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .._core import storage as _storage
from . import _file_system  # noqa: F401  (registers the file_system allocator)
from .reductions import init_reductions
from .spawn import (  # noqa: F401
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
    _storage.sharing_strategy = "file_system"
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Choose how CPU tensors are shared from now on: ``'file_descriptor'`` (a memory file's
    descriptor goes to the receiver) or ``'file_system'`` (a named segment in /dev/shm)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    _storage.sharing_strategy = new_strategy


def get_sharing_strategy():
    """The strategy CPU tensors are shared with (``'file_descriptor'`` by default on Linux)."""
    return _storage.sharing_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies this platform supports."""
    return _all_sharing_strategies


init_reductions()
