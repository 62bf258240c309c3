"""DLPack exchange: ``from_dlpack`` and ``Tensor.__dlpack__``/``__dlpack_device__``.

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

__all__ = ["from_dlpack"]

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
    raise BufferError(f"not an unconsumed DLPack capsule (capsule name {name!r})")


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


def _produce(ext, copy):
    if type(ext).__name__ == "PyCapsule":
        return ext
    device = getattr(ext, "__dlpack_device__", None)
    if device is None or not hasattr(ext, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__ and "
                        f"__dlpack_device__ or a DLPack capsule, got {type(ext).__name__}")
    dev_type, dev_id = device()
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
    if isinstance(ext_tensor, Tensor):
        return ext_tensor if not copy else _wrap(ext_tensor._data.copy())
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"glasstorch.from_dlpack: only device='cpu' is supported, got "
                           f"{device}")
    capsule = _produce(ext_tensor, copy)
    bf16 = _retag(capsule, _KDL_BFLOAT, _KDL_UINT)
    try:
        arr = xp.from_dlpack(_Capsule(capsule))
    except Exception:
        if bf16:  # give the producer its capsule back as it was
            _retag(capsule, _KDL_UINT, _KDL_BFLOAT)
        raise
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
