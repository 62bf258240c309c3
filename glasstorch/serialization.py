"""save/load in PyTorch's checkpoint format, safe by default.

``save`` writes the zip layout that ``torch.save`` writes: ``<name>/data.pkl``
(a protocol-2 pickle in which every tensor is a call to
``torch._utils._rebuild_tensor_v2`` on a persistent storage id), one stored
(uncompressed) record ``<name>/data/<key>`` per storage, aligned to 64 bytes so
it can be memory-mapped, and the small ``version``/``byteorder`` records. The
pickle names torch's globals without importing torch, so PyTorch reads it, and
the unpickler maps those names back to glasstorch objects, so we read PyTorch's
files (the zip format and the legacy pre-1.6 stream).

``load`` uses an allow-list unpickler by default (``weights_only=True``): only
tensors, storages, containers, primitive values, ``torch.Size``/``device``/
dtypes and what ``add_safe_globals`` adds can be named; any other global is
refused with ``pickle.UnpicklingError`` before anything runs.
"""

from __future__ import annotations

import collections
import contextlib
import io
import mmap as _mmap
import os
import pickle
import struct
import sys
import tempfile
import types
import typing
import uuid
import warnings
import zipfile

from ._core import dtype as _dt
from ._core.backend import xp
from ._core.device import CPU
from ._core.device import device as _device
from ._core.storage import UntypedStorage, data_ptr, root_array
from ._sparse_tensor import SparseCooTensor, SparseCsrTensor
from ._sparse_tensor import sparse_csr as _sparse_csr
from ._tensor import Size, Tensor, _wrap
from ._tensor import layout as _layout
from ._tensor import memory_format as _memory_format

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "safe_globals",
           "clear_safe_globals", "TypedStorage", "PyTorchFileReader"]

_ALIGN = 64
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_STORAGE_NAMES = {
    _dt.float32: "FloatStorage", _dt.float64: "DoubleStorage", _dt.float16: "HalfStorage",
    _dt.bfloat16: "BFloat16Storage", _dt.int64: "LongStorage", _dt.int32: "IntStorage",
    _dt.int16: "ShortStorage", _dt.int8: "CharStorage", _dt.uint8: "ByteStorage",
    _dt.bool_: "BoolStorage", _dt.complex64: "ComplexFloatStorage",
    _dt.complex128: "ComplexDoubleStorage",
    _dt.quint8: "QUInt8Storage", _dt.qint8: "QInt8Storage", _dt.qint32: "QInt32Storage",
    _dt.quint4x2: "QUInt4x2Storage",
}
_U8 = xp.dtype(xp.uint8)


# ============================================================================ storages

class TypedStorage:
    """A storage read from a checkpoint: flat bytes plus the element type they hold.

    Tensors rebuilt from it are views of ``self._bytes``, so tensors that shared a
    storage when saved share memory after loading.
    """

    __slots__ = ("_bytes", "dtype")

    def __init__(self, byte_array, dtype):
        self._bytes = byte_array
        self.dtype = dtype

    def size(self) -> int:
        """The number of elements."""
        return self._bytes.nbytes // self.dtype.itemsize

    __len__ = size

    def nbytes(self) -> int:
        """The size in bytes."""
        return self._bytes.nbytes

    def untyped(self) -> UntypedStorage:
        """The same bytes as an UntypedStorage (no copy)."""
        return UntypedStorage(self._bytes)

    def tolist(self):
        """The elements as a list of Python numbers."""
        arr = self._array()
        return arr.astype(xp.float32).tolist() if self.dtype is _dt.bfloat16 else arr.tolist()

    @property
    def device(self):
        """The storage's device (always the CPU)."""
        return CPU

    def _array(self):
        n = self.size()
        return self._bytes[:n * self.dtype.itemsize].view(self.dtype.np)

    def __repr__(self):
        return f"glasstorch.TypedStorage(dtype={self.dtype}, size={self.size()})"


class _StorageType:
    """What ``torch.FloatStorage`` and friends unpickle to: a marker carrying a dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"<storage type torch.{self.name}>"


def _bytes_of(storage):
    """(uint8 array, dtype) of a storage object met while loading or saving."""
    if type(storage) is TypedStorage:
        return storage._bytes, storage.dtype
    if type(storage) is UntypedStorage:
        return storage._bytes, _dt.uint8
    raise pickle.UnpicklingError(
        f"expected a storage in a tensor record, got {type(storage).__name__}")


# ============================================================================ rebuilders

def _check_ints(what, values):
    if type(values) not in (tuple, list, Size) or any(type(v) is not int for v in values):
        raise pickle.UnpicklingError(f"tensor record has an invalid {what}: {values!r}")


def _rebuild_tensor(storage, storage_offset, size, stride, dtype=None):
    """Tensor over ``storage`` with torch element offset/size/stride (bounds checked);
    ``dtype`` reads an untyped storage's bytes as that element type."""
    buf, stored = _bytes_of(storage)
    if dtype is None:
        dtype = stored
    elif type(dtype) not in (_dt.dtype, _dt._MlDtype) or stored is not _dt.uint8:
        raise pickle.UnpicklingError(f"tensor record has an invalid dtype {dtype!r} for its "
                                     f"storage")
    _check_ints("size", size)
    _check_ints("stride", stride)
    if type(storage_offset) is not int or len(size) != len(stride) or storage_offset < 0 \
            or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise pickle.UnpicklingError(
            f"tensor record has invalid geometry: offset {storage_offset!r}, size "
            f"{list(size)}, stride {list(stride)}")
    item = dtype.itemsize
    if 0 in size:
        extent = 0
    else:
        extent = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if extent * item > buf.nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {item} requiring a storage size of "
            f"{extent * item} are out of bounds for storage of size {buf.nbytes}")
    if extent == 0:
        arr = xp.empty(tuple(size), dtype.np)
    else:
        arr = xp.ndarray(tuple(size), dtype.np, buffer=buf, offset=storage_offset * item,
                         strides=tuple(s * item for s in stride))
    return _wrap(arr)


def _set_requires_grad(t, requires_grad):
    if requires_grad:
        t.requires_grad = True  # refuses integer dtypes like torch
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    return _set_requires_grad(t, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    # torch's record for dtypes without a typed storage class (uint16/32/64, float8): an
    # UntypedStorage of bytes plus the dtype
    t = _rebuild_tensor(storage, storage_offset, size, stride, dtype)
    return _set_requires_grad(t, requires_grad)


def _make_parameter(data, requires_grad=True):
    """Hook for ``torch.nn.Parameter`` records: a Parameter once glasstorch.nn defines one,
    until then the tensor itself with ``requires_grad`` set."""
    import importlib.util
    if importlib.util.find_spec("glasstorch.nn") is not None:
        from . import nn
        param_cls = getattr(nn, "Parameter", None)
        if param_cls is not None:
            return param_cls(data, requires_grad)
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"Parameter record holds {type(data).__name__}, "
                                     f"not a tensor")
    return _set_requires_grad(data, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    return _make_parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _make_parameter(data, requires_grad)
    if state:
        if type(state) is not dict or any(type(k) is not str or k.startswith("_")
                                          for k in state):
            raise pickle.UnpicklingError("Parameter record has an invalid state")
        p.__dict__.update(state)
    return p


class _TypeMarker:
    """``torch.Tensor`` / ``torch.nn.Parameter`` as they appear in subclass records."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


_TENSOR_TYPE = _TypeMarker("torch.Tensor")
_PARAMETER_TYPE = _TypeMarker("torch.nn.Parameter")


def _rebuild_sparse_tensor(layout, data):
    """torch's pickled form of a sparse tensor: its component tensors."""
    from ._ops.sparse import sparse_coo_tensor, sparse_csr_tensor
    if layout is _SAFE["torch", "sparse_coo"]:
        indices, values, size = data[:3]
        return sparse_coo_tensor(indices, values, size,
                                 is_coalesced=data[3] if len(data) > 3 else None)
    if layout is _sparse_csr:
        crow, col, values, size = data
        return sparse_csr_tensor(crow, col, values, size)
    raise NotImplementedError(f"glasstorch: loading a sparse tensor of layout {layout} is not "
                              "supported (only sparse_coo and sparse_csr)")


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params,
                     requires_grad=False, backward_hooks=None):
    # torch's record of a quantized tensor: its integer storage plus the quantizer
    from ._ops import quantized
    buf, dtype = _bytes_of(storage)
    if not isinstance(dtype, _dt._QuantizedDtype):
        raise pickle.UnpicklingError(f"quantized tensor record over a {dtype} storage")
    if dtype is _dt.quint4x2:
        values = quantized.unpack_quint4x2(buf, storage_offset, size)
    else:
        values = _rebuild_tensor(storage, storage_offset, size, stride)._data
    return quantized.from_record(values, dtype, quantizer_params)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
                    _rebuild_parameter_with_state) \
            or new_type not in (_TENSOR_TYPE, _PARAMETER_TYPE) or type(args) is not tuple:
        raise pickle.UnpicklingError("unsupported tensor subclass record")
    t = func(*args)
    if new_type is _PARAMETER_TYPE:
        t = _make_parameter(t, t.requires_grad)
    return t


def _codecs_encode(text, encoding="utf-8"):
    # protocol 2 pickles bytes as _codecs.encode(str, 'latin1'); allow exactly that
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("only _codecs.encode(str, 'latin1') is allowed")
    return text.encode("latin1")


def _get_layout(name):
    layout = _LAYOUTS.get(name)
    if layout is None:
        raise pickle.UnpicklingError(f"glasstorch has no layout {name}")
    return layout


def _storage_types():
    table = {}
    for d, name in _STORAGE_NAMES.items():
        table["torch", name] = _StorageType(name, d)
    untyped = _StorageType("UntypedStorage", _dt.uint8)
    table["torch", "UntypedStorage"] = table["torch.storage", "UntypedStorage"] = untyped
    return table


_STORAGE_TYPES = _storage_types()
_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _codecs_encode,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch._utils", "_rebuild_qtensor"): _rebuild_qtensor,
    ("torch", "Tensor"): _TENSOR_TYPE,
    ("torch.nn.parameter", "Parameter"): _PARAMETER_TYPE,
    ("torch", "Size"): Size,
    ("torch", "device"): _device,
    ("torch.serialization", "_get_layout"): _get_layout,
    **_STORAGE_TYPES,
    **{("torch", d.name): d for d in _dt.all_dtypes + _dt.quantized_dtypes},
}
for _name in ("set", "frozenset", "bytearray", "complex"):  # protocol 2 spells builtins so
    _SAFE["__builtin__", _name] = _SAFE["builtins", _name]
for _name in ("strided", "sparse_coo", "contiguous_format", "channels_last",
              "channels_last_3d", "preserve_format"):
    from . import _tensor as _tensor_mod
    _SAFE["torch", _name] = getattr(_tensor_mod, _name)
_SAFE["torch", "sparse_csr"] = _sparse_csr
for _name in ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
              "per_channel_symmetric", "per_channel_affine_float_qparams"):
    from ._ops import quantized as _quantized_mod
    _SAFE["torch", _name] = getattr(_quantized_mod, _name)
_LAYOUTS = {str(x): x for x in (_SAFE["torch", "strided"], _SAFE["torch", "sparse_coo"],
                                _sparse_csr)}
del _name

# ============================================================================ safe globals

_user_safe = {}  # (module, qualname) -> object


# Where torch keeps what glasstorch defines in private modules: a function of
# glasstorch.nn._functional is torch.nn.functional's, an op of glasstorch._ops is torch's.
_PUBLIC_HOMES = (("glasstorch.nn._functional", "glasstorch.nn.functional"),
                 ("glasstorch.nn.modules._attention", "glasstorch.nn.modules.activation"),
                 ("glasstorch._ops", "glasstorch"))


def _torch_home(obj, name=None):
    """``(torch_module, qualname)`` naming glasstorch's ``obj`` as torch does, or None for
    objects outside glasstorch (and private ones with no public home)."""
    from . import _compat
    module = getattr(obj, "__module__", None)
    name = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not module or not name or not module.startswith("glasstorch"):
        return None
    if any(part.startswith("_") for part in module.split(".")[1:]):
        import importlib
        for private, public in _PUBLIC_HOMES:
            if module == private or module.startswith(private + "."):
                if getattr(importlib.import_module(public), name, None) is obj:
                    module = public
                    break
        else:
            return None
    torch_module = _compat._torch_name(module)
    return None if torch_module is None else (torch_module, name)


def _user_safe_by_torch_name(module, name):
    """A global allowed with add_safe_globals, met under torch's name for it."""
    for obj in _user_safe.values():
        if _torch_home(obj) == (module, name):
            return obj
    return None


def _global_key(obj):
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        obj, name = obj
        module, _, qual = name.rpartition(".")
        return (module, qual), obj
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module is None or qual is None:
        raise ValueError(f"cannot name {obj!r} as a global; pass (obj, 'module.name')")
    return (module, qual), obj


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in weights_only load."""
    for g in safe_globals:
        key, obj = _global_key(g)
        _user_safe[key] = obj


def get_safe_globals():
    """The globals added with ``add_safe_globals``."""
    return list(_user_safe.values())


def clear_safe_globals():
    """Forget every global added with ``add_safe_globals``."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: ``add_safe_globals`` for the duration of the block only."""
    saved = dict(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(saved)


# ============================================================================ saving

class _TorchGlobal:
    """A name in torch's namespace, pickled as a bare GLOBAL so torch resolves it."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # save_reduce insists that the function is callable
        raise TypeError(f"{self.module}.{self.name} is a placeholder used only when saving")


_G_REBUILD = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_G_REBUILD_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_G_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_G_SPARSE = _TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_G_QTENSOR = _TorchGlobal("torch._utils", "_rebuild_qtensor")
_G_GET_LAYOUT = _TorchGlobal("torch.serialization", "_get_layout")
_G_SIZE = _TorchGlobal("torch", "Size")
_G_DEVICE = _TorchGlobal("torch", "device")
_G_UNTYPED = _TorchGlobal("torch.storage", "UntypedStorage")
_G_STORAGE = {d: _TorchGlobal("torch", n) for d, n in _STORAGE_NAMES.items()}
_G_DTYPE = {d: _TorchGlobal("torch", d.name) for d in _dt.all_dtypes + _dt.quantized_dtypes}
_G_MISC = {id(_SAFE["torch", n]): _TorchGlobal("torch", n) for n in (
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format")}


class _StorageRecord:
    __slots__ = ("key", "dtype", "bytes", "numel", "owner")

    def __init__(self, key, dtype, byte_view, owner):
        self.key, self.dtype, self.bytes, self.owner = key, dtype, byte_view, owner
        self.numel = byte_view.nbytes // (1 if dtype is None else dtype.itemsize)


def _flat_bytes(root):
    """The root array's memory as flat uint8, or None when it is not one dense block."""
    if root.flags.c_contiguous or root.flags.f_contiguous:
        flat = root.reshape(-1, order="A")
        return flat.view(_U8) if flat.dtype != _U8 else flat
    return None


class _Pickler(pickle._Pickler):
    # The pure-Python pickler lets torch's names be written as plain GLOBAL opcodes
    # (the C pickler would try to import torch to check them).
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.records = {}  # id(root array) -> _StorageRecord (keeps the root alive)

    def _save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        if type(obj) is _TorchGlobal and id(obj) not in self.memo:
            self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def save_global(self, obj, name=None):
        # glasstorch's classes and functions are written under torch's names
        # (torch.nn.modules.linear.Linear), so that torch reads whole-model files and the
        # same safe_globals lists admit them in both libraries
        home = _torch_home(obj, name)
        if home is None:
            return super().save_global(obj, name)
        self._save_torch_global(_TorchGlobal(*home))
        self.memoize(obj)

    dispatch[types.FunctionType] = save_global  # the base table holds the base method

    def _save_dtype(self, obj):
        self._save_torch_global(_G_DTYPE[obj])

    dispatch[_dt.dtype] = _save_dtype
    dispatch[_dt._QuantizedDtype] = _save_dtype
    dispatch[_dt._MlDtype] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is _StorageRecord:
            # dtypes without a typed storage class (uint16, float8...) are saved untyped
            stype = _G_STORAGE.get(obj.dtype, _G_UNTYPED)
            numel = obj.numel if obj.dtype in _G_STORAGE else obj.bytes.nbytes
            return ("storage", stype, obj.key, "cpu", numel)
        return None

    def _record(self, root, flat, dtype):
        rec = self.records.get(id(root))
        if rec is None:
            rec = self.records[id(root)] = _StorageRecord(str(len(self.records)), dtype,
                                                          flat, root)
        elif rec.dtype is not dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same data as "
                f"different types: {rec.dtype} and {dtype}")
        return rec

    def _tensor_args(self, t, dtype=None):
        arr = t._data
        dtype = dtype or _dt._by_np[arr.dtype]
        item = arr.itemsize
        root = root_array(arr)
        flat = _flat_bytes(root)
        delta = data_ptr(arr) - data_ptr(root)
        if flat is None or delta % item or any(s < 0 or s % item for s in arr.strides):
            # not expressible as torch storage + strides: save a dense copy instead
            arr = xp.ascontiguousarray(arr)
            root, flat, delta = arr, arr.reshape(-1).view(_U8), 0
        rec = self._record(root, flat, dtype)
        stride = tuple(s // item for s in arr.strides) if arr.size else t.stride()
        return (rec, delta // item, tuple(arr.shape), stride)  # a tuple, as torch writes

    def reducer_override(self, obj):
        cls = type(obj)
        if cls is SparseCooTensor or cls is SparseCsrTensor:
            # torch's form: the component tensors, rebuilt on load
            return (_G_SPARSE, (obj.layout, obj._components()))
        if cls is _quantized_mod.QuantizedTensor:
            values, size, stride, params = _quantized_mod.save_record(obj)
            storage, offset, vsize, vstride = self._tensor_args(values, obj.dtype)
            return (_G_QTENSOR, (storage, offset, size or vsize, stride or vstride, params, False,
                                 collections.OrderedDict()))
        if cls is _quantized_mod.qscheme:
            return (_identity_global, (_TorchGlobal("torch", obj.name),))
        if cls is Tensor or isinstance(obj, Tensor):
            if cls is not Tensor and obj.is_nested:  # its placeholder array is no data
                raise RuntimeError("glasstorch: torch.save of a nested tensor is not supported "
                                   "yet; save its unbind() components")
            storage, offset, size, stride = self._tensor_args(obj)
            if storage.dtype in _G_STORAGE:
                args = (_G_REBUILD, (storage, offset, size, stride, obj._requires_grad,
                                     collections.OrderedDict()))
            else:  # torch's v3 record: untyped bytes and the dtype
                args = (_G_REBUILD_V3, (storage, offset, size, stride, obj._requires_grad,
                                        collections.OrderedDict(), storage.dtype))
            if cls.__name__ == "Parameter":  # glasstorch.nn.Parameter, once it exists
                return (_G_PARAMETER, (_TensorArgs(args), obj._requires_grad,
                                       collections.OrderedDict()))
            return args
        if cls is Size:
            return (_G_SIZE, (tuple(obj),))
        if cls is _device:
            return (_G_DEVICE, (str(obj),))
        if cls is UntypedStorage or cls is TypedStorage:
            root = root_array(obj._bytes)
            dtype = None if cls is UntypedStorage else obj.dtype
            rec = self._record(root, _flat_bytes(root), dtype)
            return (_identity, (rec,))  # replaced by its persistent id in save()
        if cls is _layout:  # torch writes layouts as a call naming them
            return (_G_GET_LAYOUT, (str(obj),))
        if cls is _memory_format:
            g = _G_MISC.get(id(obj))
            if g is not None:
                return (_identity_global, (g,))
        return NotImplemented

    def save_reduce(self, func, args, state=None, listitems=None, dictitems=None,
                    state_setter=None, *, obj=None):
        if func is _identity or func is _identity_global:
            # storages and layouts pickle as the object itself, not as a call
            self.save(args[0])
            if obj is not None:
                self.memoize(obj)
            return
        super().save_reduce(func, args, state, listitems, dictitems, state_setter, obj=obj)

    def save(self, obj, save_persistent_id=True):
        if type(obj) is _TensorArgs:
            func, args = obj.reduce
            return super().save_reduce(func, args)
        return super().save(obj, save_persistent_id)


def _identity(x):
    return x


def _identity_global(x):
    return x


class _TensorArgs:
    """A nested _rebuild_tensor_v2 call (inside _rebuild_parameter)."""

    __slots__ = ("reduce",)

    def __init__(self, reduce):
        self.reduce = reduce


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in stem)
        if name and name.isascii():
            return name
    return "archive"


def _write_zip(fileobj, prefix, data_pkl, records, extra_records=(), version=b"3\n"):
    zf = zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True)

    def put(name, data):
        info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        size = data.nbytes if hasattr(data, "nbytes") else len(data)
        info.file_size = size
        zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # what zipfile decides for stored entries
        # pad the local header's extra field so the record's bytes start 64-aligned
        head = fileobj.tell() + 30 + len(info.filename.encode("utf-8")) + 4 + \
            (20 if zip64 else 0)
        pad = (-head) % _ALIGN
        info.extra = struct.pack("<HH", 0x4246, pad) + b"\0" * pad  # id "FB", like torch
        with zf.open(info, "w", force_zip64=zip64) as out:
            if size:
                out.write(data)

    put("data.pkl", data_pkl)
    put(".format_version", b"1")
    put(".storage_alignment", str(_ALIGN).encode())
    put("byteorder", b"little")
    for rec in records:
        put(f"data/{rec.key}", memoryview(rec.bytes))
    for name, data in extra_records:  # TorchScript archives: code, constants, extra files
        put(name, data)
    put("version", version)
    put(".data/serialization_id", uuid.uuid4().hex.encode() + b"0" * 8)
    zf.close()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def save(obj: object, f: str | os.PathLike | typing.IO[bytes], pickle_module=None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` in PyTorch's checkpoint format to a path or binary file object.

    A path is written through a temporary file in the same directory that is synced and
    then atomically renamed, so the target is always either the old or the new file. The
    temporaries of killed saves of the same path are removed by the next save or load.
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("glasstorch.save supports only the standard pickle module")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("glasstorch.save writes only the zip format (torch >= 1.6); "
                                  "the legacy format can be loaded but not written")
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    records = list(pickler.records.values())
    prefix = _archive_name(f)
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), lambda fh, _: _write_zip(fh, prefix, buf.getbuffer(), records))
    else:
        if not hasattr(f, "write"):
            raise AttributeError(f"expected a path or a writable binary file, got "
                                 f"{type(f).__name__}")
        _write_zip(f, prefix, buf.getbuffer(), records)
        if hasattr(f, "flush"):
            f.flush()


def _temporary_prefix(path):
    """Temporaries are hidden and named after the target, then the writing process's id:
    ``.ckpt.pt.<pid>.<random>.tmp``."""
    return f".{os.path.basename(path)}."


def _remove_stale_temporaries(path):
    """Delete the temporaries a killed save of ``path`` left behind: those whose writing
    process no longer exists (a live process's save in progress is never touched). Only
    this machine's processes can be told apart, so on a shared network directory a
    temporary of another host's live save may look stale; its save then fails cleanly."""
    if os.name != "posix":  # os.kill(pid, 0) is a probe only on POSIX
        return
    directory = os.path.dirname(os.path.abspath(path))
    prefix = _temporary_prefix(path)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, name))


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _atomic_write(path, write):
    directory = os.path.dirname(os.path.abspath(path))
    _remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f"{_temporary_prefix(path)}{os.getpid()}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh, tmp)
            fh.flush()
            os.fsync(fh.fileno())
            try:
                mode = os.stat(path).st_mode & 0o7777
            except FileNotFoundError:
                mode = 0o666 & ~_UMASK
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


# ============================================================================ loading

def _refuse(module, name):
    raise pickle.UnpicklingError(
        f"Weights only load failed: unsupported global GLOBAL {module}.{name} is not an "
        f"allowed global by default. Nothing from the file was executed. If you trust the "
        f"source of this checkpoint, allow it with glasstorch.serialization.add_safe_globals"
        f"([{name}]) or the safe_globals([...]) context manager, or load with "
        f"weights_only=False (which can run arbitrary code).")


class _Unpickler(pickle._Unpickler):
    """The pure-Python unpickler, whose opcodes can be overridden: under weights_only, BUILD
    (setting an object's state) applies only to objects of the kinds torch allows, so a file
    can never change a class, a function, a dtype or any other process-wide object."""

    def __init__(self, file, storages, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._file = file
        self._buildable = _buildable_types() if weights_only else frozenset()
        self._storages = storages
        self._weights_only = weights_only

    def find_class(self, module, name):
        obj = _SAFE.get((module, name))
        if obj is not None:
            return obj
        obj = _user_safe.get((module, name))
        if obj is None and module.startswith("torch"):
            obj = _user_safe_by_torch_name(module, name)
        if obj is not None:
            return obj
        if self._weights_only:
            _refuse(module, name)
        if module == "torch" or module.startswith("torch."):
            return _torch_global(module, name, dotted=self.proto >= 4)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._storages(pid, self._weights_only)

    def _load_build(self):
        if not self._weights_only:
            return pickle._Unpickler.load_build(self)
        state = self.stack.pop()
        inst = self.stack[-1]
        cls = type(inst)
        if cls is collections.OrderedDict:
            if type(state) is not dict:
                raise pickle.UnpicklingError("OrderedDict state must be a dict")
            inst.__dict__.update(state)  # a state_dict's _metadata
        elif cls in self._buildable:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slots = None
            if type(state) is tuple and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            if slots:
                for k, v in slots.items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(
                f"Weights only load failed: can only build Tensor, Parameter, OrderedDict or "
                f"types allowlisted via add_safe_globals, but got {cls}")

    def _load_bytearray8(self):
        # the pure-Python unpickler allocates the declared length before reading it
        n, = struct.unpack("<Q", self.read(8))
        if n > self._stream_left():
            raise pickle.UnpicklingError(f"BYTEARRAY8 of {n} bytes is longer than the data "
                                         f"left in the pickle")
        self.append(bytearray(self.read(n)))

    def _stream_left(self):
        f = self._file
        if not isinstance(f, io.BytesIO):
            return sys.maxsize
        left = len(f.getbuffer()) - f.tell()
        frame = self._unframer.current_frame  # protocol >= 4: bytes already read from f
        if frame is not None:
            left += len(frame.getbuffer()) - frame.tell()
        return left

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = _load_build
    dispatch[pickle.BYTEARRAY8[0]] = _load_bytearray8


def _buildable_types():
    """Classes whose new instances a weights_only load may give state: the allow-listed
    classes (a class object itself, a function or a dtype is an instance of none of them)."""
    return {obj for obj in (*_SAFE.values(), *_user_safe.values())
            if isinstance(obj, type) and obj is not collections.OrderedDict}


def _torch_global(module, name, dotted):
    """A torch name in a full (weights_only=False) pickle: its glasstorch counterpart. As in
    pickle itself, a dotted name is walked only in protocol >= 4 pickles, and never into a
    module outside glasstorch (``torch.serialization.os.system`` is not a torch name)."""
    import importlib
    gmodule = "glasstorch" + module[len("torch"):]
    try:
        obj = importlib.import_module(gmodule)
        parts = name.split(".") if dotted else [name]
        for part in parts:
            obj = getattr(obj, part)
            if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("glasstorch"):
                raise AttributeError(part)
        return obj
    except (ImportError, AttributeError):
        raise pickle.UnpicklingError(
            f"the checkpoint refers to {module}.{name}, which glasstorch does not "
            f"provide") from None


def _check_pid(pid, n):
    if type(pid) is not tuple or len(pid) < n or pid[0] != "storage" \
            or type(pid[1]) is not _StorageType or type(pid[4]) is not int or pid[4] < 0:
        raise pickle.UnpicklingError(f"invalid storage record in checkpoint: {pid!r}")
    return pid[1], str(pid[2]), str(pid[3]), pid[4]


class _Locations:
    """Applies map_location to each storage's saved location."""

    def __init__(self, map_location):
        self.map_location = map_location

    def place(self, arr_bytes, dtype, location):
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, _device)):
            res = ml(TypedStorage(arr_bytes, dtype), location)
            if res is not None:
                if isinstance(res, (TypedStorage, UntypedStorage)):
                    return res._bytes
                raise TypeError(f"map_location returned {type(res).__name__}, expected a "
                                f"storage or None")
            target = location
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        elif ml is None:
            target = location
        else:
            target = ml
        dev = target if isinstance(target, _device) else _device(str(target))
        if dev.type != "cpu":
            if ml is None and dev.type == "cuda":
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but glasstorch runs "
                    "on the CPU only. Use glasstorch.load with "
                    "map_location=glasstorch.device('cpu') to map your storages to the CPU.")
            raise RuntimeError(f"glasstorch cannot place storages on device '{dev}': only "
                               f"'cpu' is supported; pass map_location='cpu'")
        return arr_bytes


def _storage_from(buf, dtype, stype):
    return UntypedStorage(buf) if stype.name == "UntypedStorage" else TypedStorage(buf, dtype)


def _open_path(f):
    return isinstance(f, (str, os.PathLike))


_TRUE = ("1", "y", "yes", "true")


def _weights_only_from_environment(weights_only, pickle_module):
    """torch's switches: ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` forces a restricted load always;
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` lifts it only where the call did not choose."""
    forced = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    lifted = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if forced and lifted:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were "
                           "set.")
    if forced:
        return True
    if weights_only is None:
        if lifted:
            warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, "
                          "since the `weights_only` argument was not explicitly passed to "
                          "`torch.load`, forcing weights_only=False.", UserWarning, stacklevel=3)
            return False
        return pickle_module is None
    return weights_only


def load(f: str | os.PathLike | typing.IO[bytes], map_location=None, pickle_module=None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args) -> typing.Any:
    """Read an object saved with ``torch.save`` or ``glasstorch.save``.

    ``weights_only`` (default True) admits only tensors, containers, primitive values and
    allow-listed globals; ``mmap=True`` maps storages from the file instead of reading them.
    """
    weights_only = _weights_only_from_environment(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("glasstorch.load supports only the standard pickle module")
    pickle_load_args.setdefault("encoding", "utf-8")
    locations = _Locations(map_location)
    if mmap and not _open_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with contextlib.ExitStack() as stack:
        if _open_path(f):
            fh = stack.enter_context(open(f, "rb"))
            _remove_stale_temporaries(os.fspath(f))
        else:
            fh = f
        start = fh.tell() if hasattr(fh, "tell") else 0
        magic = fh.read(4)
        fh.seek(start)
        if not magic:
            raise EOFError("Ran out of input: the checkpoint file is empty")
        if magic == b"PK\x03\x04":
            return _load_zip(fh, f, locations, weights_only, bool(mmap), pickle_load_args)
        if mmap:
            raise RuntimeError(
                "mmap can only be used with files saved with the zip format "
                "(torch.save(..., _use_new_zipfile_serialization=True)); re-save the "
                "checkpoint with it to use mmap.")
        return _load_legacy(fh, locations, weights_only, pickle_load_args)


class _Archive:
    """A checkpoint's zip archive opened with torch's checks (readable directory, no name held
    twice, everything in one folder, no ``../`` or absolute names); records are read with
    their sizes checked against the directory before any byte is read."""

    def __init__(self, fh):
        try:
            zf = zipfile.ZipFile(fh)
            infos = {i.filename: i for i in zf.infolist()}
            if len(infos) != len(zf.infolist()):
                names = [i.filename for i in zf.infolist()]
                twice = sorted({n for n in names if names.count(n) > 1})
                raise RuntimeError(f"PytorchStreamReader failed: the archive holds {twice} "
                                   f"more than once; readers disagree on which copy counts, "
                                   f"so the checkpoint is refused")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}. The "
                               f"checkpoint is truncated or corrupted.") from None
        pkl = [n for n in infos if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: the zip "
                               "archive is not a PyTorch checkpoint")
        prefix = pkl[0][:-len("data.pkl")]
        for name in infos:  # as torch: one folder holds everything (no ../ or absolute names)
            if not name.startswith(prefix) or ".." in name.split("/"):
                raise RuntimeError(f"PytorchStreamReader failed: file in archive is not in a "
                                   f"subdirectory {prefix}: {name}")
        self.fh, self.zf, self.infos, self.prefix = fh, zf, infos, prefix
        self.file_size = fh.seek(0, os.SEEK_END)

    def names(self):
        """The record names, relative to the archive's folder."""
        return [n[len(self.prefix):] for n in self.infos]

    def info(self, name):
        """The directory entry of record ``name`` (torch's error if there is none)."""
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found")
        return info

    def read(self, name):
        """The bytes of a small record (data.pkl, byteorder, ...)."""
        try:
            return self.zf.read(self.info(name))
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading {name}: {e}. The "
                               f"checkpoint is corrupted.") from None

    def data_offset(self, name):
        """Where a stored (uncompressed) record's bytes start in the file."""
        info = self.info(name)
        self.fh.seek(info.header_offset)
        head = self.fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading {name}: bad local header; "
                               f"the checkpoint is corrupted")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def storage_bytes(self, name, nbytes, mapped=None):
        """Storage record ``name`` as a uint8 array of exactly ``nbytes`` (a view of the
        memory map ``mapped`` when given and the record is stored uncompressed)."""
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: the "
                               f"checkpoint is missing a storage record")
        if info.file_size != nbytes:  # from the zip directory, before reading anything
            raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected "
                               f"size ({nbytes} bytes) of storage {name}; the checkpoint "
                               f"is corrupted")
        if info.compress_type != zipfile.ZIP_STORED:
            # streamed, and never past the declared size however far the data would inflate
            with self.zf.open(info) as member:
                data = member.read(nbytes + 1)
            if len(data) != nbytes:
                raise RuntimeError(f"record {name} inflates to a size other than the "
                                   f"{nbytes} bytes its directory entry declares; the "
                                   f"checkpoint is corrupted")
            return xp.frombuffer(bytearray(data), _U8)
        off = self.data_offset(name)
        if off + info.file_size > self.file_size:
            raise RuntimeError(f"PytorchStreamReader failed reading {name}: the "
                               f"checkpoint is truncated")
        if mapped is not None:
            return xp.frombuffer(mapped, _U8, count=info.file_size, offset=off) \
                if info.file_size else xp.empty(0, _U8)
        arr = xp.empty(info.file_size, _U8)
        self.fh.seek(off)
        if _read_into(self.fh, arr) != info.file_size:
            raise RuntimeError(f"unexpected EOF reading {name}; the checkpoint is truncated")
        return arr


def _load_zip(fh, f, locations, weights_only, use_mmap, pickle_args):
    archive = _Archive(fh)
    order = archive.infos.get(archive.prefix + "byteorder")
    swap = order is not None and archive.read("byteorder").strip() == b"big"
    data_pkl = archive.read("data.pkl")
    mapped = None
    if use_mmap:
        mapped = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
    loaded = {}

    def storages(pid, _weights_only):
        stype, key, location, numel = _check_pid(pid, 5)
        dtype = stype.dtype
        buf = loaded.get(key)
        if buf is None:
            buf = archive.storage_bytes(f"data/{key}", numel * dtype.itemsize, mapped)
            if swap and dtype.itemsize > 1:
                buf = _byteswapped(buf, dtype)
            buf = loaded[key] = locations.place(buf, dtype, location)
        return _storage_from(buf, dtype, stype)

    return _unpickle(io.BytesIO(data_pkl), storages, weights_only, pickle_args)


class PyTorchFileReader:
    """``torch.PyTorchFileReader``: the records of a checkpoint archive (a path or a binary
    file), read by name with the same checks ``load`` makes."""

    def __init__(self, file):
        self._own = _open_path(file)
        fh = open(file, "rb") if self._own else file
        self._archive = _Archive(fh)

    def __del__(self):
        if getattr(self, "_own", False) and hasattr(self, "_archive"):
            self._archive.fh.close()

    def get_all_records(self):
        """The names of every record."""
        return self._archive.names()

    def has_record(self, name):
        """Whether the archive holds record ``name``."""
        return self._archive.prefix + name in self._archive.infos

    def get_record(self, name):
        """The bytes of record ``name``."""
        return self._archive.read(name)

    def get_record_size(self, name):
        """The size in bytes of record ``name``."""
        return self._archive.info(name).file_size

    def get_record_offset(self, name):
        """Where record ``name``'s bytes start in the file."""
        return self._archive.data_offset(name)

    def get_record_header_offset(self, name):
        """Where record ``name``'s local zip header starts in the file."""
        return self._archive.info(name).header_offset

    def serialization_id(self):
        """The archive's serialization id ('' when it has none)."""
        if not self.has_record(".data/serialization_id"):
            return ""
        return self.get_record(".data/serialization_id").decode()

    def get_storage_from_record(self, name, numel, dtype):
        """A tensor over a storage of ``numel`` elements of ``dtype`` read from record
        ``name`` (torch's error if the record's size differs)."""
        size = self.get_record_size(name)
        if size != numel * dtype.itemsize:
            raise RuntimeError(
                f"record size ({size} bytes) does not match expected size "
                f"({numel * dtype.itemsize} bytes = {numel} elements * {dtype.itemsize} "
                f"bytes/element) for dtype {_dt.scalar_type_name(dtype)}")
        typed = self._archive.storage_bytes(name, size).view(dtype.np)
        return _wrap(typed[:0])


def _byteswapped(buf, dtype):
    n = buf.nbytes // dtype.itemsize
    typed = buf[:n * dtype.itemsize].view(dtype.np)
    # complex values swap each component
    if dtype.is_complex:
        typed = typed.view(dtype.to_real().np)
    return typed.byteswap().view(_U8)


def _read_into(fh, arr):
    view = memoryview(arr).cast("B")
    total = 0
    readinto = getattr(fh, "readinto", None)
    while total < len(view):
        if readinto is not None:
            n = readinto(view[total:])
        else:
            chunk = fh.read(len(view) - total)
            n = len(chunk)
            view[total:total + n] = chunk
        if not n:
            break
        total += n
    return total


def _unpickle(fileobj, storages, weights_only, pickle_args):
    up = _Unpickler(fileobj, storages, weights_only, **pickle_args)
    try:
        return up.load()
    except pickle.UnpicklingError:
        raise
    except (EOFError, struct.error, KeyError, IndexError, ValueError, TypeError,
            AttributeError) as e:
        if weights_only or isinstance(e, (EOFError, struct.error)):
            raise pickle.UnpicklingError(
                f"the checkpoint's pickle data is truncated or corrupted "
                f"({type(e).__name__}: {e})") from None
        raise


class _PrimitiveUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        _refuse(module, name)


def _load_legacy(fh, locations, weights_only, pickle_args):
    """The pre-1.6 stream: magic, protocol, sys info, data pickle, storage keys, raw bytes."""
    def primitive():
        try:
            return _PrimitiveUnpickler(fh, **pickle_args).load()
        except (EOFError, pickle.UnpicklingError, ValueError, struct.error) as e:
            raise pickle.UnpicklingError(f"not a PyTorch checkpoint (or it is corrupted): "
                                         f"{type(e).__name__}: {e}") from None

    if primitive() != _LEGACY_MAGIC:
        raise pickle.UnpicklingError("Invalid magic number; corrupt file?")
    protocol = primitive()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    sys_info = primitive()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)
    pending = {}  # key -> (uint8 buffer, dtype)

    def storages(pid, _weights_only):
        if type(pid) is tuple and pid and pid[0] == "module":
            if _weights_only:
                raise pickle.UnpicklingError("legacy module records are refused under "
                                             "weights_only=True")
            return pid[1]
        stype, key, location, numel = _check_pid(pid, 5)
        dtype = stype.dtype
        entry = pending.get(key)
        if entry is None:
            buf = xp.empty(numel * dtype.itemsize, _U8)
            entry = pending[key] = (buf, dtype, location)
        buf = entry[0]
        view = pid[5] if len(pid) > 5 else None
        if view is not None:  # (view_key, element offset, view size) of an older torch
            _vkey, voff, vsize = view
            item = entry[1].itemsize
            buf = buf[voff * item:(voff + vsize) * item]
        return _storage_from(buf, dtype, stype)

    result = _unpickle(fh, storages, weights_only, pickle_args)
    keys = primitive()
    if type(keys) is not list:
        raise pickle.UnpicklingError("corrupted legacy checkpoint: bad storage key list")
    for key in keys:
        entry = pending.get(str(key))
        if entry is None:
            raise RuntimeError(f"legacy checkpoint lists unknown storage {key!r}")
        buf, dtype = entry[:2]
        head = fh.read(8)
        if len(head) < 8:
            raise RuntimeError("unexpected EOF, expected 8 more bytes. The file might be "
                               "corrupted.")
        (numel,) = struct.unpack("<q" if little else ">q", head)
        if numel * dtype.itemsize != buf.nbytes:
            raise RuntimeError(f"legacy checkpoint storage {key} holds {numel} elements, "
                               f"{buf.nbytes // dtype.itemsize} expected; corrupted file")
        got = _read_into(fh, buf)
        if got != buf.nbytes:
            raise RuntimeError(f"unexpected EOF, expected {buf.nbytes - got} more bytes. "
                               f"The file might be corrupted.")
        if not little and dtype.itemsize > 1:
            buf[:] = _byteswapped(buf, dtype)
    # map_location for legacy storages is applied after their bytes are in place
    for buf, dtype, location in pending.values():
        locations.place(buf, dtype, location)
    return result
