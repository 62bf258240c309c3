"""UntypedStorage: the block of bytes that a tensor and all its views look into.

A backend array already carries data pointer, offset, shape and strides; the
storage is the array that owns the allocation (the root of the ``.base``
chain), seen as flat bytes.
"""

from __future__ import annotations

import mmap

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
    """Anonymous memory mapped MAP_SHARED: processes forked after it was made write to the same
    pages. Its type marks a storage as shared (``Tensor.is_shared``)."""

    __slots__ = ()


def shared_copy(flat):
    """A 1-D uint8 array over a fresh SharedBuffer holding a copy of the bytes ``flat``."""
    buf = SharedBuffer(-1, max(flat.nbytes, 1), flags=mmap.MAP_SHARED)
    copy = xp.frombuffer(buf, dtype=xp.uint8, count=flat.nbytes)
    copy[...] = flat
    return copy


def is_shared(arr) -> bool:
    """Whether ``arr``'s allocation lives in a SharedBuffer."""
    owner = root_array(arr).base
    return isinstance(getattr(owner, "obj", owner), SharedBuffer)  # frombuffer: a memoryview


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
        return int(self._bytes[i])

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        return f"{body}\n[glasstorch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"
