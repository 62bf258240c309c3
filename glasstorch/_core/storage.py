"""UntypedStorage: the block of bytes that a tensor and all its views look into.

A backend array already carries data pointer, offset, shape and strides; the
storage is the array that owns the allocation (the root of the ``.base``
chain), seen as flat bytes.
"""

from __future__ import annotations

from .backend import xp


def root_array(arr):
    """The array that owns ``arr``'s memory."""
    base = arr.base
    while isinstance(base, xp.ndarray):
        arr, base = base, base.base
    return arr


def data_ptr(arr) -> int:
    return arr.__array_interface__["data"][0]


class UntypedStorage:
    """Flat bytes shared by every view of a tensor (``tensor.untyped_storage()``)."""

    __slots__ = ("_bytes",)

    def __init__(self, size_or_array=0):
        if isinstance(size_or_array, int):
            size_or_array = xp.zeros(size_or_array, dtype=xp.uint8)
        root = root_array(size_or_array)
        self._bytes = root.reshape(-1, order="A").view(xp.uint8) if root.ndim else \
            root.reshape(1).view(xp.uint8)

    def data_ptr(self) -> int:
        return data_ptr(self._bytes)

    def nbytes(self) -> int:
        return self._bytes.nbytes

    def size(self) -> int:
        return self._bytes.nbytes

    __len__ = size

    @property
    def device(self):
        from .device import CPU
        return CPU

    def tolist(self):
        return self._bytes.tolist()

    def __getitem__(self, i):
        return int(self._bytes[i])

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self._bytes.tolist())
        return f"{body}\n[glasstorch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"
