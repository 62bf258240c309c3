"""DLPack exchange: ``from_dlpack``, ``to_dlpack`` and ``Tensor.__dlpack__``/``__dlpack_device__``.

NumPy's DLPack support does the real work (zero copy both ways). NumPy refuses
bfloat16, so a bfloat16 tensor travels as uint16 and the dtype field of the
DLTensor inside the capsule is rewritten (bfloat16 <-> uint16 have the same
bits); everything else about the exchange is unchanged.
"""

from __future__ import annotations

import ctypes

from ._core import dtype as _dt
from ._core.backend import xp
from ._tensor import Tensor, _wrap
from ._tensor import strided as _strided

__all__ = ["from_dlpack", "to_dlpack"]

_KDL_CPU = 1
_KDL_UINT, _KDL_BFLOAT = 1, 4
# Offset of DLTensor.dtype.code: data pointer (8) + DLDevice (8) + ndim (4).
_DTYPE_IN_TENSOR = 20
# DLManagedTensorVersioned puts version (8), manager_ctx (8), deleter (8), flags (8) first.
_TENSOR_IN_VERSIONED = 32

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def _dtype_code_address(capsule):
    """Address of the DLDataType of the DLTensor a DLPack capsule holds."""
    name = _get_name(capsule)
    if name == b"dltensor_versioned":
        return _get_pointer(capsule, name) + _TENSOR_IN_VERSIONED + _DTYPE_IN_TENSOR
    if name == b"dltensor":
        return _get_pointer(capsule, name) + _DTYPE_IN_TENSOR
    raise RuntimeError(f"from_dlpack received an invalid capsule (named {name!r}): DLPack "
                       f"capsules can be consumed only once, so a tensor may already have been "
                       f"built from this one")


def _retag(capsule, old_code, new_code):
    """Rewrite a 16-bit dtype code in place; True when it matched ``old_code``."""
    addr = _dtype_code_address(capsule)
    code = ctypes.c_uint8.from_address(addr)
    bits = ctypes.c_uint8.from_address(addr + 1).value
    if code.value == old_code and bits == 16:
        code.value = new_code
        return True
    return False


class _Capsule:
    """Hands an already produced capsule to NumPy's from_dlpack."""

    __slots__ = ("capsule",)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if max_version is None and _get_name(self.capsule) == b"dltensor_versioned":
            raise BufferError("consumer does not accept versioned DLPack capsules")
        return self.capsule

    def __dlpack_device__(self):
        return (_KDL_CPU, 0)


class _WritableView:
    """The memory of ``arr`` described as writable; holding ``arr`` keeps it alive."""

    __slots__ = ("__array_interface__", "_arr")

    def __init__(self, arr):
        interface = dict(arr.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface
        self._arr = arr


def _produce(ext, device, copy):
    if not hasattr(ext, "__dlpack__"):
        if type(ext).__name__ != "PyCapsule":
            # torch hands anything else to its capsule reader, which refuses it
            raise RuntimeError(f"from_dlpack expects an object with __dlpack__ and "
                               f"__dlpack_device__ or a DLPack capsule, got "
                               f"{type(ext).__name__}")
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        return ext
    dev_type, dev_id = ext.__dlpack_device__()
    if int(dev_type) != _KDL_CPU:
        raise RuntimeError(f"glasstorch runs on the CPU only and cannot import a tensor from "
                           f"DLPack device type {int(dev_type)} (index {dev_id}); move it to "
                           f"the CPU first")
    kwargs = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    try:
        return ext.__dlpack__(**kwargs)
    except TypeError:  # a producer from before DLPack 1.0 takes no keywords
        if copy:
            raise
        return ext.__dlpack__()


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with ``ext_tensor`` (any DLPack producer on the CPU, or a
    legacy ``dltensor`` capsule): NumPy arrays, torch tensors, JAX arrays..."""
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"glasstorch.from_dlpack: only device='cpu' is supported, got "
                           f"{device}")
    if isinstance(ext_tensor, Tensor):
        # a new tensor over the same memory, as a round trip through a capsule would give
        if ext_tensor._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        _check_strided(ext_tensor, BufferError)
        return _wrap(ext_tensor._data.copy() if copy else ext_tensor._data)
    capsule = _produce(ext_tensor, device, copy)
    legacy = _get_name(capsule) == b"dltensor"
    bf16 = _retag(capsule, _KDL_BFLOAT, _KDL_UINT)
    try:
        arr = xp.from_dlpack(_Capsule(capsule))
    except Exception:
        if bf16:  # give the producer its capsule back as it was
            _retag(capsule, _KDL_UINT, _KDL_BFLOAT)
        raise
    if legacy and not arr.flags.writeable:
        # a legacy capsule cannot say whether its memory is read-only, so NumPy assumes it is;
        # torch treats it as writable (to_dlpack/from_dlpack share writes), and so do we
        arr = xp.asarray(_WritableView(arr))
    if bf16:
        arr = arr.view(_dt.bfloat16.np)
    _dt.from_numpy_dtype(arr.dtype)  # TypeError for element types glasstorch lacks
    return _wrap(arr)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export this tensor as a DLPack capsule (zero copy unless ``copy=True``)."""
    if self._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and stream != -1:
        raise BufferError("glasstorch tensors live on the CPU: stream must be None")
    _check_strided(self, BufferError)
    return _capsule(self, max_version, dl_device, copy)


def to_dlpack(tensor):
    """A legacy ``dltensor`` capsule sharing ``tensor``'s memory, for ``from_dlpack`` of any
    library (consume it once). Unlike ``__dlpack__``, it does not refuse tensors that
    require grad, as torch's does not."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    _check_strided(tensor, RuntimeError)
    return _capsule(tensor, None, None, None)


def _check_strided(tensor, error):
    # a sparse tensor's _data is a placeholder: there is no dense memory to share
    if tensor.layout is not _strided:
        raise error(f"Can't export tensors with layout other than torch.strided (got "
                    f"{tensor.layout})")


def _capsule(self, max_version, dl_device, copy):
    arr = self._data
    bf16 = arr.dtype == _dt.bfloat16.np
    if bf16:
        arr = arr.view(xp.uint16)
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    capsule = arr.__dlpack__(**kwargs)
    if bf16:
        _retag(capsule, _KDL_UINT, _KDL_BFLOAT)
    return capsule


def __dlpack_device__(self):
    """(kDLCPU, 0): glasstorch tensors live in host memory."""
    return (_KDL_CPU, 0)


Tensor.__dlpack__ = __dlpack__
Tensor.__dlpack_device__ = __dlpack_device__
