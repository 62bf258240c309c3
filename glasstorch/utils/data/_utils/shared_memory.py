"""Named POSIX shared-memory segments for batches that cross the worker/main boundary.

``multiprocessing.shared_memory.SharedMemory`` registers every segment it creates *or attaches*
with the resource tracker (Python < 3.13), which would start a tracker process per worker and
warn about "leaked" segments that the main process already unlinked. This module does the same
shm_open/mmap/shm_unlink without the tracker; the DataLoader owns cleanup instead: the consumer
unlinks a segment as soon as it maps it, and shutdown removes whatever a dead or interrupted
worker left behind by the iterator's name prefix.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

try:
    import _posixshmem
except ImportError:  # pragma: no cover - non-POSIX platforms
    _posixshmem = None

SHM_DIR = "/dev/shm"
_MAP_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


def create_array(name, shape, dtype):
    """A new C-contiguous array of ``shape``/``dtype`` over a fresh segment called ``name``."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if _posixshmem is None:  # pragma: no cover
        from multiprocessing.shared_memory import SharedMemory
        shm = SharedMemory(name, create=True, size=max(nbytes, 1))
        return np.ndarray(shape, dtype, buffer=shm.buf)
    fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, nbytes)
        # Pre-fault the pages in one call: the batch is about to be written in full, and one
        # populate is much cheaper than a page fault per 4 KiB.
        mm = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | _MAP_POPULATE)
    finally:
        os.close(fd)
    # The array keeps the mmap alive through its buffer export; dropping the last array
    # unmaps it.
    return np.frombuffer(mm, dtype, count=nbytes // dtype.itemsize).reshape(shape)


def attach_array(name, shape, dtype, strides, unlink=True):
    """Map segment ``name`` as an array; with ``unlink`` the name is removed right away, so the
    memory is freed when the last mapping (the returned array and its views) goes away."""
    if _posixshmem is None:  # pragma: no cover
        from multiprocessing.shared_memory import SharedMemory
        shm = SharedMemory(name)
        arr = np.ndarray(shape, dtype, buffer=shm.buf, strides=strides)
        if unlink:
            shm.unlink()
        return arr
    fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    try:
        size = os.fstat(fd).st_size
        mm = mmap.mmap(fd, size)
    finally:
        os.close(fd)
        if unlink:
            _posixshmem.shm_unlink("/" + name)
    return np.ndarray(shape, dtype, buffer=mm, strides=strides)


def unlink(name):
    """Remove segment ``name`` if it still exists."""
    try:
        if _posixshmem is None:  # pragma: no cover
            from multiprocessing.shared_memory import SharedMemory
            SharedMemory(name).unlink()
        else:
            _posixshmem.shm_unlink("/" + name)
    except (FileNotFoundError, OSError):
        pass


def unlink_prefix(prefix):
    """Remove every segment whose name starts with ``prefix`` (left by dead/interrupted workers).
    Only possible where segments are listed as files (Linux's /dev/shm)."""
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return
    for n in names:
        if n.startswith(prefix):
            unlink(n)
