"""safetensors files as glasstorch tensors, over the ``safetensors`` package.

The same four calls as ``safetensors.torch``: ``save_file``/``load_file`` for
files, ``save``/``load`` for bytes, and ``safe_open`` to read single tensors or
slices lazily. A file written here loads in PyTorch (and Hugging Face
libraries) and the reverse, so hub weights go straight into a state_dict.
"""

from __future__ import annotations

import os

from .._core import dtype as _dt
from .._core.backend import xp
from .._core.storage import data_ptr, root_array
from .._tensor import Tensor, _wrap

__all__ = ["save_file", "load_file", "save", "load", "safe_open"]


def _package():
    try:
        import safetensors
    except ImportError:
        raise ImportError(
            "glasstorch.utils.safetensors needs the 'safetensors' package: "
            "pip install safetensors") from None
    return safetensors


def _specs(tensors):
    """TensorSpec per name; refuses what safetensors.torch refuses (shared or strided)."""
    TensorSpec = _package().TensorSpec
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, glasstorch.Tensor] but received "
                         f"{type(tensors).__name__}")
    specs, spans = {}, {}
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected str to glasstorch.Tensor "
                             f"but received {type(name).__name__} to {type(t).__name__}")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not "
                f"allowed. It either means you are trying to save tensors which are reference "
                f"of each other in which case it's recommended to save only the full tensors, "
                f"and reslice at load time, or simply call `.contiguous()` on your tensor to "
                f"pack it before saving.")
        arr = t._data
        if arr.nbytes:
            spans.setdefault(id(root_array(arr)), []).append(
                (data_ptr(arr), data_ptr(arr) + arr.nbytes, name))
        specs[name] = TensorSpec(dtype=arr.dtype.name, shape=list(arr.shape),
                                 data_ptr=data_ptr(arr), data_len=arr.nbytes)
    for group in spans.values():
        group.sort()
        for (_, end, a), (start, _, b) in zip(group, group[1:]):
            if start < end:
                raise RuntimeError(
                    f"Some tensors share memory, this will lead to duplicate memory on disk "
                    f"and potential differences when loading them again: [{a!r}, {b!r}]. "
                    f"Save clones of them (tensor.clone()) or only one of them.")
    return specs


def save(tensors, metadata=None) -> bytes:
    """The safetensors bytes of a dict of contiguous tensors."""
    specs = _specs(tensors)
    return bytes(_package().serialize(specs, metadata=metadata))


def save_file(tensors, filename, metadata=None) -> None:
    """Write a dict of contiguous tensors to ``filename`` (via a temporary file and an
    atomic rename, so an interrupted save never leaves a truncated file)."""
    from ..serialization import _atomic_write
    specs = _specs(tensors)
    serialize_file = _package().serialize_file

    def write(fh, tmp_path):
        serialize_file(specs, tmp_path, metadata=metadata)

    _atomic_write(os.fspath(filename), write)


def _tensor(arr):
    _dt.from_numpy_dtype(arr.dtype)  # TypeError for element types glasstorch lacks
    return _wrap(arr)


def _check_device(device):
    if str(device) != "cpu":
        raise RuntimeError(f"glasstorch runs on the CPU only; cannot load onto '{device}'")


def load_file(filename, device="cpu"):
    """Every tensor in a safetensors file, as a dict name -> Tensor."""
    _check_device(device)
    with safe_open(filename, framework="pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.keys()}


def load(data: bytes):
    """Every tensor in safetensors ``data`` (bytes), as a dict name -> Tensor."""
    out = {}
    for name, view in _package().deserialize(data):
        dtype = _NP_NAMES.get(view["dtype"])
        if dtype is None:
            raise TypeError(f"glasstorch has no dtype for safetensors type {view['dtype']} "
                            f"(tensor {name!r})")
        arr = xp.frombuffer(bytearray(view["data"]), dtype=dtype.np).reshape(view["shape"])
        out[name] = _wrap(arr)
    return out


# the float8 formats: one byte each, so no byte order to mind
_F8_NAMES = {"F8_E4M3": _dt.float8_e4m3fn, "F8_E5M2": _dt.float8_e5m2,
             "F8_E4M3FNUZ": _dt.float8_e4m3fnuz, "F8_E5M2FNUZ": _dt.float8_e5m2fnuz,
             "F8_E8M0": _dt.float8_e8m0fnu}
_NP_NAMES = {"F64": _dt.float64, "F32": _dt.float32, "F16": _dt.float16, "BF16": _dt.bfloat16,
             "I64": _dt.int64, "I32": _dt.int32, "I16": _dt.int16, "I8": _dt.int8,
             "U64": _dt.uint64, "U32": _dt.uint32, "U16": _dt.uint16,
             "U8": _dt.uint8, "BOOL": _dt.bool_, "C64": _dt.complex64, **_F8_NAMES}


class _Slice:
    """``f.get_slice(name)``: shape/dtype without reading, ``[...]`` reads just that part
    (float8 tensors, which the numpy reader cannot build, are read whole, then indexed)."""

    def __init__(self, inner, read_whole):
        self._inner = inner
        self._read_whole = read_whole

    def get_shape(self):
        return self._inner.get_shape()

    def get_dtype(self):
        return self._inner.get_dtype()

    def __getitem__(self, index):
        if self._inner.get_dtype() in _F8_NAMES:
            return self._read_whole()[index]
        return _tensor(self._inner[index])


class safe_open:
    """Open a safetensors file for lazy reads: ``keys()``, ``metadata()``,
    ``get_tensor(name)``, ``get_slice(name)``; use it as a context manager."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "glasstorch", "gt", "np", "numpy"):
            raise ValueError(f"framework {framework!r} is not supported by "
                             f"glasstorch.utils.safetensors; use 'pt'")
        _check_device(device)
        self._path = os.fspath(filename)
        self._f = _package().safe_open(self._path, framework="numpy")
        self._header = None

    def __enter__(self):
        self._f.__enter__()
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

    def keys(self):
        """The tensor names in the file, sorted."""
        return list(self._f.keys())

    def offset_keys(self):
        """The tensor names in the order of their data in the file."""
        return list(self._f.offset_keys())

    def metadata(self):
        """The file's free-form ``__metadata__`` dict (str -> str), or None."""
        return self._f.metadata()

    def get_tensor(self, name):
        """Read the tensor ``name`` as a glasstorch tensor."""
        if self._f.get_slice(name).get_dtype() in _F8_NAMES:
            return self._read_float8(name)
        return _tensor(self._f.get_tensor(name))

    def get_slice(self, name):
        """A lazy handle on tensor ``name``: index it to read only part of the data."""
        return _Slice(self._f.get_slice(name), lambda: self._read_float8(name))

    def _read_float8(self, name):
        # the package's numpy reader has no float8 types, so read the bytes at the offsets
        # the (already validated) header gives
        import json
        import struct
        with open(self._path, "rb") as fh:
            if self._header is None:
                (n,) = struct.unpack("<Q", fh.read(8))
                self._header = (8 + n, json.loads(fh.read(n)))
            start, info = self._header[0], self._header[1][name]
            begin, end = info["data_offsets"]
            fh.seek(start + begin)
            data = bytearray(fh.read(end - begin))
        dtype = _F8_NAMES[info["dtype"]]
        return _wrap(xp.frombuffer(data, dtype=dtype.np).reshape(info["shape"]))
