"""UntypedStorage: the block of bytes that a tensor and all its views look into.

A backend array already carries data pointer, offset, shape and strides; the
storage is the array that owns the allocation (the root of the ``.base``
chain), seen as flat bytes.
"""

from __future__ import annotations

import mmap
import operator
import os
import sys
import weakref

from .backend import xp


def root_array(arr):
    """The array that owns ``arr``'s memory."""
    base = arr.base
    while isinstance(base, xp.ndarray):
        arr, base = base, base.base
    return arr


def data_ptr(arr) -> int:
    return arr.__array_interface__["data"][0]


def flat_bytes(root):
    """All bytes of the allocation ``root`` (a storage root) as a 1-D uint8 view.

    A root can be dense but neither C- nor F-ordered (NumPy keeps the input's layout for
    elementwise results of permuted arrays); ``reshape`` would then silently copy, so
    such roots are viewed through explicit strides from their first (lowest) address.
    """
    if root.flags.c_contiguous or root.flags.f_contiguous:
        flat = root.reshape(-1, order="A")
    else:
        flat = xp.lib.stride_tricks.as_strided(root, shape=(root.size,),
                                               strides=(root.itemsize,),
                                               writeable=root.flags.writeable)
    return flat.view(xp.uint8)


class SharedBuffer(mmap.mmap):
    """Memory mapped MAP_SHARED: every process that maps it writes to the same pages. Its type
    marks a storage as shared (``Tensor.is_shared``).

    ``handle`` says how another process can map it too: ``("fd", fd)`` for an anonymous memory
    file whose descriptor this buffer keeps open (torch.multiprocessing's ``file_descriptor``
    strategy), ``("filename", name)`` for a named shared-memory segment (``file_system``), or
    ``None`` for anonymous memory that only children forked afterwards reach."""

    __slots__ = ("handle",)


# Which allocator ``share_memory_()`` uses: the name of torch.multiprocessing's sharing strategy
# (glasstorch.multiprocessing sets it, and registers the ``file_system`` allocator it owns).
sharing_strategy = "file_descriptor"
shared_allocators = {}

# mmap keeps its own duplicate of the descriptor unless told not to (Python >= 3.13); the buffer
# already keeps one, so a second would only spend the process's descriptor limit.
_NO_DUP = {"trackfd": False} if sys.version_info >= (3, 13) else {}


def _anonymous_memory_file():
    """A descriptor of a fresh, nameless memory file, or None where the platform has none."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("glasstorch_shared", getattr(os, "MFD_CLOEXEC", 0))
    try:
        import _posixshmem
    except ImportError:
        return None
    # A named segment unlinked at once: only the descriptor reaches it, as with a memfd.
    name = f"/glasstorch_{os.getpid()}_{os.urandom(6).hex()}"
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    _posixshmem.shm_unlink(name)
    return fd


def fd_buffer(nbytes, fd=None):
    """A SharedBuffer of ``nbytes`` (> 0) over the memory file ``fd`` (which it takes ownership
    of and closes when collected), or over a new one when ``fd`` is None."""
    if fd is None:
        fd = _anonymous_memory_file()
        if fd is None:  # pragma: no cover - no memory files: fork-only sharing
            buf = SharedBuffer(-1, nbytes, flags=mmap.MAP_SHARED)
            buf.handle = None
            return buf
        try:
            os.ftruncate(fd, nbytes)
        except BaseException:
            os.close(fd)
            raise
    try:
        buf = SharedBuffer(fd, nbytes, flags=mmap.MAP_SHARED, **_NO_DUP)
    except BaseException:
        os.close(fd)
        raise
    buf.handle = ("fd", fd)
    weakref.finalize(buf, os.close, fd)
    return buf


shared_allocators["file_descriptor"] = fd_buffer


def shared_copy(flat, strategy=None):
    """A 1-D uint8 array over a fresh SharedBuffer holding a copy of the bytes ``flat``, allocated
    as sharing ``strategy`` (by default the current one) says."""
    buf = shared_allocators[strategy or sharing_strategy](max(flat.nbytes, 1))
    copy = xp.frombuffer(buf, dtype=xp.uint8, count=flat.nbytes)
    copy[...] = flat
    return copy


def shared_buffer(arr):
    """The SharedBuffer holding ``arr``'s allocation, or None when it is not in shared memory."""
    owner = root_array(arr).base
    owner = getattr(owner, "obj", owner)  # frombuffer: a memoryview
    return owner if isinstance(owner, SharedBuffer) else None


def is_shared(arr) -> bool:
    """Whether ``arr``'s allocation lives in a SharedBuffer."""
    return shared_buffer(arr) is not None


def rebased(arr, old_flat, new_flat):
    """``arr`` (a view into the bytes ``old_flat``) rebuilt at the same offset and strides over
    ``new_flat``, a copy of those bytes elsewhere."""
    offset = data_ptr(arr) - data_ptr(old_flat)
    out = xp.ndarray(arr.shape, arr.dtype, buffer=new_flat, offset=offset, strides=arr.strides)
    out.flags.writeable = arr.flags.writeable
    return out


class UntypedStorage:
    """Flat bytes shared by every view of a tensor (``tensor.untyped_storage()``)."""

    __slots__ = ("_bytes",)

    def __init__(self, size_or_array=0):
        if isinstance(size_or_array, int):
            size_or_array = xp.zeros(size_or_array, dtype=xp.uint8)
        self._bytes = flat_bytes(root_array(size_or_array))

    def data_ptr(self) -> int:
        """The address of the first byte."""
        return data_ptr(self._bytes)

    def nbytes(self) -> int:
        """The size in bytes."""
        return self._bytes.nbytes

    def untyped(self):
        """This storage itself (what a typed storage's ``untyped()`` gives; safetensors
        calls it on the storage ``from_file`` returns)."""
        return self

    def size(self) -> int:
        """The size in bytes (as torch's untyped storages count them)."""
        return self._bytes.nbytes

    __len__ = size

    def is_shared(self) -> bool:
        """Whether the bytes are in shared memory (``Tensor.share_memory_``)."""
        return is_shared(self._bytes)

    @property
    def device(self):
        """The storage's device (always the CPU)."""
        from .device import CPU
        return CPU

    def tolist(self):
        """The bytes as a list of ints."""
        return self._bytes.tolist()

    def __getitem__(self, i):
        if isinstance(i, slice):
            if i.step not in (None, 1):
                raise RuntimeError(f"Trying to slice with a step of {i.step}, but only a step of "
                                   f"1 is supported")
            return _over_bytes(self._bytes[i])  # a view of the same bytes, as torch's
        i = self._index(i)
        n = self._bytes.nbytes
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return int(self._bytes[i])

    def __setitem__(self, i, value):
        if not isinstance(value, int):  # bool is an int, as in torch
            raise RuntimeError(f"can only set storage content with a int types, but got "
                               f"{type(value).__name__} instead")
        if isinstance(i, slice):
            self._bytes[i] = value & 0xFF
            return
        i = self._index(i)
        if not -self._bytes.nbytes <= i < self._bytes.nbytes:
            raise RuntimeError("out of bounds")
        self._bytes[i] = value & 0xFF  # bytes wrap around, as torch's uint8 storage does

    @staticmethod
    def _index(i):
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise RuntimeError(f"can't index a torch.UntypedStorage with {type(i).__name__}")
        return i.__index__()

    def __sizeof__(self):
        # torch's formula: the object itself plus the bytes it holds
        return object.__sizeof__(self) + self.nbytes()

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """A storage of ``nbytes`` bytes memory-mapped from the file ``filename``.

        ``shared=True`` maps it MAP_SHARED: writes go to the file (and to every process mapping
        it); the file is created, and grown to ``nbytes``, if needed. ``shared=False`` maps it
        MAP_PRIVATE: writes stay in this process, and the file must already hold ``nbytes``
        bytes. Like torch, both report ``is_shared()`` True.
        """
        if not isinstance(filename, str):
            raise TypeError(f"argument 1 must be str, not {type(filename).__name__}")
        nbytes = operator.index(nbytes)
        if nbytes < 0:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot "
                               f"allocate memory (12)")
        if nbytes == 0:  # torch maps nothing (and opens nothing) for an empty storage
            return _over_bytes(xp.frombuffer(_empty_mapping(), dtype=xp.uint8, count=0))
        mode = "read-write" if shared else "read-only"
        try:
            fd = os.open(filename, os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY, 0o600)
        except OSError as e:
            raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: "
                               f"{e.strerror} ({e.errno})") from None
        try:
            size = os.fstat(fd).st_size
            if size < nbytes:
                if not shared:
                    raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the "
                                       f"required mapping size <{nbytes}>")
                os.ftruncate(fd, nbytes)
            # a SharedBuffer without a handle: is_shared() as torch says, and
            # torch.multiprocessing copies it into fresh shared memory when it is sent
            buf = SharedBuffer(fd, nbytes, flags=mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE,
                               prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)  # the mapping keeps the file's pages
        buf.handle = None
        return _over_bytes(xp.frombuffer(buf, dtype=xp.uint8))

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        return f"{body}\n[glasstorch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"


def _over_bytes(flat):
    """An UntypedStorage over exactly the 1-D uint8 array ``flat`` (not its whole allocation)."""
    st = UntypedStorage.__new__(UntypedStorage)
    st._bytes = flat
    return st


def _empty_mapping():
    buf = SharedBuffer(-1, 1, flags=mmap.MAP_SHARED)
    buf.handle = None
    return buf
