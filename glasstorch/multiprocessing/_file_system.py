"""Shared memory for the ``file_system`` sharing strategy: named POSIX segments with a count of
holders.

A segment is ``/dev/shm/glasstorch_fs_<pid>_<random>``: the tensor bytes, then (8-aligned) one
int64 counting who holds it - every process that maps it, plus every message in flight that
names it. The count is changed under ``flock`` on the segment, and whoever brings it to zero
removes the name; the pages themselves live until the last mapping goes. Without torch's
``torch_shm_manager`` daemon, a process killed before it dropped its hold leaves the name behind
(``torch`` documents the same risk for this strategy when its manager dies).

On Python < 3.13 ``mmap`` keeps a duplicate descriptor for each mapping, so this strategy then
saves no descriptors over ``file_descriptor``; it still hands names, not descriptors, to other
processes.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import secrets
import sys
from multiprocessing import util

from .._core import storage as _storage

try:
    import _posixshmem
except ImportError:  # pragma: no cover - non-POSIX platforms
    _posixshmem = None

PREFIX = "glasstorch_fs_"
_COUNT = 8          # bytes of the holder count at the segment's end
_NO_DUP = {"trackfd": False} if sys.version_info >= (3, 13) else {}


def _segment_size(nbytes):
    return -(-nbytes // _COUNT) * _COUNT + _COUNT


def add_holders(name, delta):
    """Add ``delta`` to segment ``name``'s holder count; at zero the name is removed. Returns
    the new count, or None when the segment is gone already."""
    try:
        fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the close below
        at = os.fstat(fd).st_size - _COUNT
        count = int.from_bytes(os.pread(fd, _COUNT, at), "little", signed=True) + delta
        os.pwrite(fd, count.to_bytes(_COUNT, "little", signed=True), at)
        if count <= 0:
            _posixshmem.shm_unlink("/" + name)
        return count
    finally:
        os.close(fd)


def _hold(buf, name):
    """Make ``buf`` (a mapping of segment ``name``) release its hold when collected, at process
    exit, and again in each child forked while it lives (the child holds it too)."""
    buf.handle = ("filename", name)
    # multiprocessing's finalizers also run when its forked children exit (atexit does not)
    util.Finalize(buf, add_holders, (name, -1), exitpriority=0)
    util.register_after_fork(buf, _held_by_child)


def _held_by_child(buf):
    name = buf.handle[1]
    if add_holders(name, +1) is not None:
        util.Finalize(buf, add_holders, (name, -1), exitpriority=0)


def named_buffer(nbytes):
    """A SharedBuffer of ``nbytes`` over a new named segment held once (by this mapping)."""
    if _posixshmem is None:  # pragma: no cover
        raise RuntimeError("the file_system sharing strategy needs POSIX shared memory")
    name = f"{PREFIX}{os.getpid()}_{secrets.token_hex(8)}"
    fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        size = _segment_size(nbytes)
        os.ftruncate(fd, size)
        os.pwrite(fd, (1).to_bytes(_COUNT, "little", signed=True), size - _COUNT)
        buf = _storage.SharedBuffer(fd, nbytes, flags=mmap.MAP_SHARED, **_NO_DUP)
    except BaseException:
        _posixshmem.shm_unlink("/" + name)
        raise
    finally:
        os.close(fd)
    _hold(buf, name)
    return buf


def attach(name, nbytes):
    """Map segment ``name``; the hold of the message that named it passes to this mapping."""
    try:
        fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    except FileNotFoundError:
        raise RuntimeError(
            f"shared memory segment {name!r} no longer exists: every process holding the "
            f"tensor's storage released it before this one could map it") from None
    try:
        buf = _storage.SharedBuffer(fd, nbytes, flags=mmap.MAP_SHARED, **_NO_DUP)
    finally:
        os.close(fd)
    _hold(buf, name)
    return buf


_storage.shared_allocators["file_system"] = named_buffer
