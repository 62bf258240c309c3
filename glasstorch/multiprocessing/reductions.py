"""How tensors and storages cross process boundaries: through shared memory, not by value.

``init_reductions`` registers reducers with ``multiprocessing.reduction.ForkingPickler``, the
pickler behind every Queue, Pipe, Pool, Manager and the arguments of spawn/forkserver
processes. Pickling a tensor moves its storage into shared memory (``share_memory_``: every view
of the storage moves with it) and sends a handle: under the ``file_descriptor`` strategy the
memory file's descriptor (``reduction.DupFd`` hands it to the receiver), under ``file_system``
the segment's name. The receiver maps the same pages and rebuilds the tensor with the same
offset, shape and strides, so writes on either side are seen by the other. Each process keeps a
cache from handle to its mapping, so one storage received twice (or sent to oneself) is one
storage, as in torch.
"""

from __future__ import annotations

import os
import threading
import weakref
from multiprocessing import reduction

from .._core import storage as _storage
from .._core.backend import xp
from .._core.storage import UntypedStorage, data_ptr, flat_bytes, root_array
from .._tensor import Tensor, _tensors_sharing_storage, _wrap, alloc_hook
from ..nn.parameter import Parameter
from . import _file_system

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "reduce_storage",
           "rebuild_storage_fd", "rebuild_storage_filename", "rebuild_storage_empty",
           "shared_cache"]

# handle key ((st_dev, st_ino) of a memory file, or a segment name) -> the storage's root
# array mapped in this process; entries go when the storage does.
shared_cache = weakref.WeakValueDictionary()
_cache_lock = threading.Lock()
# buffer -> its _StorageHandle, so one pickle names a storage once however many views it holds
_handles = weakref.WeakKeyDictionary()


def _reset_lock_after_fork():
    global _cache_lock
    _cache_lock = threading.Lock()  # a lock held by another thread at fork time stays held


os.register_at_fork(after_in_child=_reset_lock_after_fork)


def _key(handle):
    kind, value = handle
    if kind == "fd":
        st = os.fstat(value)
        return (st.st_dev, st.st_ino)
    return value


class _StorageHandle:
    """Stands for a shared storage inside a pickle; unpickles as the root array mapped in the
    receiving process."""

    __slots__ = ("handle", "nbytes", "__weakref__")

    def __init__(self, handle, nbytes):
        self.handle = handle
        self.nbytes = nbytes

    def __reduce__(self):
        kind, value = self.handle
        if kind == "fd":
            return (rebuild_storage_fd, (reduction.DupFd(value), self.nbytes))
        # the message holds the segment until its receiver maps it
        if _file_system.add_holders(value, +1) is None:
            raise RuntimeError(f"shared memory segment {value!r} was released while a tensor "
                               f"over it was being sent")
        return (rebuild_storage_filename, (value, self.nbytes))


def _wanted_kind():
    return "filename" if _storage.sharing_strategy == "file_system" else "fd"


def _move_storage(tensor):
    """Move ``tensor``'s storage (with every tensor over it) into new shared memory of the
    current strategy: it is elsewhere, or shared in a way the strategy cannot hand on."""
    if _storage.shared_buffer(tensor._data) is None:
        tensor.share_memory_()
        return
    root, tensors = _tensors_sharing_storage(tensor)
    old = flat_bytes(root)
    new = _storage.shared_copy(old)
    for t in tensors:
        t._data = _storage.rebased(t._data, old, new)
    if alloc_hook[0] is not None:  # glasstorch.memory counts the new allocation
        alloc_hook[0](new)


def _shared_handle(tensor):
    """The ``_StorageHandle`` of ``tensor``'s storage, moving the storage into shared memory of
    the current strategy first when needed."""
    buf = _storage.shared_buffer(tensor._data)
    if buf is None or buf.handle is None or buf.handle[0] != _wanted_kind():
        _move_storage(tensor)
        buf = _storage.shared_buffer(tensor._data)
    ref = _handles.get(buf)
    if ref is None:
        root = root_array(tensor._data)
        ref = _handles[buf] = _StorageHandle(buf.handle, flat_bytes(root).nbytes)
        with _cache_lock:  # a storage sent to this very process comes back as itself
            shared_cache.setdefault(_key(buf.handle), root)
    return ref


def _cached(key):
    with _cache_lock:
        return shared_cache.get(key)


def _remember(key, root):
    with _cache_lock:
        return shared_cache.setdefault(key, root)


def rebuild_storage_fd(df, nbytes):
    """The root array over the memory file that ``df`` (a ``reduction.DupFd``) hands over."""
    fd = df.detach()
    key = _key(("fd", fd))
    root = _cached(key)
    if root is not None:
        if _storage.shared_buffer(root).handle != ("fd", fd):
            os.close(fd)  # a second descriptor of memory mapped here already
        return root
    buf = _storage.fd_buffer(nbytes, fd)  # the buffer owns ``fd`` from here on
    return _remember(key, xp.frombuffer(buf, dtype=xp.uint8, count=nbytes))


def rebuild_storage_filename(name, nbytes):
    """The root array over shared-memory segment ``name``."""
    root = _cached(name)
    if root is not None:
        _file_system.add_holders(name, -1)  # the message's hold: this process holds it already
        return root
    buf = _file_system.attach(name, nbytes)
    return _remember(name, xp.frombuffer(buf, dtype=xp.uint8, count=nbytes))


def rebuild_storage_empty():
    """An empty storage's bytes (nothing to share)."""
    return xp.empty(0, dtype=xp.uint8)


def _check_sendable(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")


def reduce_tensor(tensor):
    """ForkingPickler reducer of Tensor and Parameter: the storage goes by shared-memory handle,
    the tensor by its layout (dtype, shape, strides, offset) and ``requires_grad``. As in torch
    the ``.grad``, hooks and Python attributes stay behind."""
    _check_sendable(tensor)
    arr = tensor._data
    layout = (tensor.dtype, arr.shape, arr.strides)
    if flat_bytes(root_array(arr)).nbytes == 0:
        return (rebuild_tensor, (type(tensor), rebuild_storage_empty(), 0, layout,
                                 tensor.requires_grad))
    ref = _shared_handle(tensor)
    arr = tensor._data  # moved into shared memory, maybe just now
    offset = data_ptr(arr) - data_ptr(root_array(arr))
    return (rebuild_tensor, (type(tensor), ref, offset, layout, tensor.requires_grad))


def rebuild_tensor(cls, root, offset, layout, requires_grad):
    """A ``cls`` tensor over the bytes ``root`` (a storage's root array) at byte ``offset``."""
    dtype, shape, strides = layout
    arr = xp.ndarray(shape, dtype.np, buffer=root, offset=offset, strides=strides)
    if issubclass(cls, Parameter):
        # through the constructor: it decides (and checks) whether the dtype may require grad
        return cls(_wrap(arr), requires_grad)
    t = _wrap(arr, cls)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_storage(storage):
    """ForkingPickler reducer of UntypedStorage: its bytes (and the tensors over them) move into
    shared memory and go by handle."""
    flat = storage._bytes
    if flat.nbytes == 0:
        return (UntypedStorage, (0,))
    carrier = _wrap(flat)  # moved with the storage's tensors, then its new bytes are the storage's
    ref = _shared_handle(carrier)
    storage._bytes = carrier._data
    return (UntypedStorage, (ref,))


def init_reductions():
    """Register the shared-memory reducers with ``multiprocessing.reduction.ForkingPickler``."""
    reduction.register(Tensor, reduce_tensor)
    reduction.register(Parameter, reduce_tensor)
    reduction.register(UntypedStorage, reduce_storage)
