"""Tensor: a thin object over a backend array plus the autograd attributes.

The backend array *is* the storage view: its data pointer, shape and strides
are the tensor's, so views share memory for real. Operators live in
``glasstorch._ops`` and are attached to Tensor as methods there; this file
holds only metadata, conversions and the machinery to build results fast.
"""

from __future__ import annotations

import gc
import sys
import warnings

from . import debug as _debug
from ._core import dtype as _dt
from ._core import storage as _storage
from ._core.backend import xp
from ._core.device import CPU, META, as_device, device
from ._core.meta import MetaArray, meta_array
from ._core.storage import UntypedStorage, data_ptr, flat_bytes, root_array

_ndarray = xp.ndarray
_asarray = xp.asarray
_by_np = _dt._by_np
_new = object.__new__


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape has (the product of the sizes)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


class _VersionCounter:
    """Shared by a tensor and all views of its storage; bumped on in-place writes."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


# Set while an inference_mode block runs: tensors made then are inference tensors.
inference_mode_flag = [False]
# glasstorch.memory puts its allocation callback here while tracking is on (None when off).
alloc_hook = [None]


def _wrap(arr, cls=None):
    """Build a fresh (non-view) Tensor around a backend array, skipping __init__."""
    if type(arr) is not _ndarray and type(arr) is not MetaArray:
        arr = _asarray(arr)
    if cls is None:
        t = _new(Tensor)
    else:
        t = _new(cls)
        if cls not in _classes_built:
            _first_instance_of(cls)
    t._data = arr
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._base = None
    t._version_counter = None
    if inference_mode_flag[0]:
        t._inference = True
    if alloc_hook[0] is not None:
        alloc_hook[0](arr)
    return t


# Tensor subclasses glasstorch has built an instance of: the first instance of one that
# overrides __torch_function__ switches dispatch on (glasstorch.overrides).
_classes_built = set()


def _first_instance_of(cls):
    _classes_built.add(cls)
    if cls is not Tensor:
        from . import overrides
        overrides._note_type(cls)


def _version_counter_of(t) -> _VersionCounter:
    vc = t._version_counter
    if vc is None:
        vc = t._version_counter = _VersionCounter()
    return vc


def _view_of(src, arr, cls=None):
    """Wrap ``arr`` (a backend view into ``src``'s storage) as a view of ``src``."""
    t = _wrap(arr, cls)
    root = src._base
    if root is None:
        root = src
    t._base = root
    t._version_counter = _version_counter_of(root)
    return t


def _strided_array(src_arr, shape, strides, offset, dtype=None):
    """A backend view of ``src_arr``'s storage with torch-style element strides and offset
    (counted in elements of ``dtype``, by default ``src_arr``'s)."""
    dtype = src_arr.dtype if dtype is None else dtype
    if type(src_arr) is MetaArray:
        return meta_array(shape, dtype, strides, offset)
    flat = flat_bytes(root_array(src_arr))
    item = dtype.itemsize
    return _ndarray(tuple(shape), dtype, buffer=flat, offset=offset * item,
                    strides=tuple(s * item for s in strides))


def _contiguous_strides(shape):
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


class Tensor:
    """A multi-dimensional array with autograd metadata, laid out like a torch.Tensor."""

    # _grad_accumulator: a leaf's AccumulateGrad (autograd.graph), set on first use
    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_base",
                 "_version_counter", "_grad_accumulator", "__dict__", "__weakref__")

    __array_priority__ = 1000  # make numpy defer to our reflected operators

    def __new__(cls, *args, device=None, dtype=None):
        # Legacy constructor: Tensor(2, 3) is uninitialised, Tensor(data) copies data.
        dtype = dtype or _dt.get_default_dtype()
        as_device(device)
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _wrap(args[0]._data.astype(dtype.np), cls)
        if len(args) == 1 and not isinstance(args[0], int) and args[0] is not None and \
                not isinstance(args[0], Size):
            from ._ops.creation import _array_from_data
            return _wrap(_array_from_data(args[0], dtype), cls)
        shape = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
        return _wrap(xp.empty(shape if shape else (0,), dtype=dtype.np), cls)

    # ------------------------------------------------------------------ metadata
    @property
    def dtype(self):
        """The element type (``torch.float32``...)."""
        return _by_np[self._data.dtype]

    @property
    def shape(self):
        """The sizes of the dimensions, as a ``torch.Size``."""
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape (a ``torch.Size``), or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        """The number of dimensions (``ndimension()`` is the same)."""
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements (``nelement()`` is the same)."""
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``numel() * element_size()``; a view counts its own elements
        only)."""
        return self._data.nbytes

    @property
    def device(self) -> device:
        """The tensor's device: the CPU, or 'meta' for a tensor without data."""
        return META if type(self._data) is MetaArray else CPU

    @property
    def is_cuda(self) -> bool:
        """Always False (CPU only)."""
        return False

    @property
    def is_cpu(self) -> bool:
        """True unless the tensor is on the meta device."""
        return type(self._data) is not MetaArray

    @property
    def is_meta(self) -> bool:
        """Whether the tensor is on the meta device (shape, dtype and strides, no data)."""
        return type(self._data) is MetaArray

    @property
    def is_xpu(self) -> bool:
        """Always False (CPU only)."""
        return False

    @property
    def is_mps(self) -> bool:
        """Always False (CPU only)."""
        return False

    # torch's other device backends: a glasstorch tensor is never on one
    is_xla = is_ipu = is_maia = is_mtia = is_vulkan = is_mps
    is_mkldnn = property(is_mps.fget, doc="False: glasstorch has no MKL-DNN (opaque) layout.")
    is_nested = property(is_mps.fget, doc="False (True for a torch.nested tensor).")

    def is_conj(self) -> bool:
        """False: glasstorch materialises ``conj()`` instead of setting a lazy conj bit."""
        return False

    def is_neg(self) -> bool:
        """False: glasstorch materialises negation instead of setting a lazy neg bit."""
        return False

    @property
    def name(self):
        """None: glasstorch tensors are never named."""
        return None

    def sum_to_size(self, *sizes, size=None):
        """Sum over the dims broadcasting would have added or stretched, so the result has
        ``size`` (the reduction a broadcast's gradient needs)."""
        from ._ops._common import sizes_or_keyword
        size = tuple(sizes_or_keyword(sizes, size, "sum_to_size"))
        shape = tuple(self.shape)
        lead = len(shape) - len(size)
        if lead < 0 or any(s != 1 and s != d for s, d in zip(size, shape[lead:])):
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                               f"{{{list(shape)}}}.")
        dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                    if s == 1 and shape[lead + i] != 1]
        if not dims:
            return self
        if not size:
            return self.sum()
        out = self.sum(dims, keepdim=True)
        return out.view(size) if lead else out

    def is_distributed(self) -> bool:
        """False, as for every torch tensor (a leftover of THD)."""
        return False

    def const_data_ptr(self) -> int:
        """The address of the first element (``data_ptr``, promising not to write)."""
        return self.data_ptr()

    def is_set_to(self, tensor) -> bool:
        """Whether both tensors look at the same memory: one storage, offset, size, stride."""
        return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
                and self.storage_offset() == tensor.storage_offset()
                and tuple(self.shape) == tuple(tensor.shape)
                and self.stride() == tensor.stride())

    @property
    def volatile(self) -> bool:
        """False: volatile was removed from torch (use ``torch.no_grad()``)."""
        warnings.warn("volatile was removed and is always False; use torch.no_grad()",
                      UserWarning, stacklevel=2)
        return False

    def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                          pin_memory=False, requires_grad=False):
        """An uninitialised tensor with ``size`` and ``stride``, this tensor's dtype by
        default."""
        from ._ops.creation import empty_strided
        return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                             layout=layout, device=device, pin_memory=pin_memory,
                             requires_grad=requires_grad)

    def resize_as_(self, the_template, *, memory_format=None):
        """Resize in place to ``the_template``'s shape (see ``resize_``)."""
        return self.resize_(the_template.shape, memory_format=memory_format)

    def _map_elements(self, fn, others, name):
        """In place: each element becomes ``fn(element, *others' elements)`` (Python
        callables per element, CPU only, as torch's apply_/map_/map2_)."""
        if self._requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                               f"var.detach().{name}() instead.")
        arrays = [xp.broadcast_to(o._data, self._data.shape) for o in others]
        out = self._data
        caster = float if self.dtype.is_floating_point else (
            complex if self.dtype.is_complex else (bool if self.dtype is _dt.bool_ else int))
        for idx in xp.ndindex(out.shape):
            out[idx] = caster(fn(out[idx].item(), *(a[idx].item() for a in arrays)))
        return self  # torch leaves the version counter alone here too

    def apply_(self, callable):
        """Replace each element x by ``callable(x)`` in place (slow: a Python call each)."""
        return self._map_elements(callable, (), "apply_")

    def map_(self, other, callable):
        """Replace each element x by ``callable(x, y)``, y from ``other`` (broadcast)."""
        return self._map_elements(callable, (other,), "map_")

    def map2_(self, x, y, callable):
        """Replace each element a by ``callable(a, b, c)``, b and c from ``x`` and ``y``."""
        return self._map_elements(callable, (x, y), "map2_")

    def module_load(self, other, assign=False):
        """What ``load_state_dict`` loads into this parameter or buffer: ``other`` itself
        (detached) when ``assign``, else this tensor after copying ``other`` into it."""
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    def fill_diagonal_(self, fill_value, wrap=False):
        """Write ``fill_value`` on the main diagonal in place (all dims of equal length, or
        a matrix); ``wrap``: a tall matrix's diagonal restarts every ``ncols + 1`` rows."""
        if self.dim() < 2:
            raise RuntimeError("dimensions must larger than 1")
        if self.dim() > 2 and len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        if self.dim() > 2:
            n = self.shape[0]
            diag = self.as_strided((n,), (sum(self.stride()),), self.storage_offset())
            diag.fill_(fill_value)
            return self
        rows, cols = self.shape
        starts = range(0, rows, cols + 1) if wrap and rows > cols else (0,)
        for r0 in starts:
            self[r0:r0 + cols].diagonal().fill_(fill_value)
        return self

    def nonzero_static(self, *, size, fill_value=-1):
        """``nonzero()`` with a fixed number of rows: cut to ``size``, or padded with
        ``fill_value`` (a shape that does not depend on the values)."""
        idx = xp.argwhere(self._data)[:size]
        out = xp.full((size, self._data.ndim), fill_value, dtype=xp.int64)
        out[:len(idx)] = idx
        return _wrap(out)

    def _removed(self, name, instead):
        raise RuntimeError(f"Tensor.{name} was deprecated in torch 1.9 and is now removed; "
                           f"use {instead} instead.")

    def eig(self, eigenvectors=False):
        """Removed from torch (1.9): raises, pointing to ``torch.linalg.eig``."""
        self._removed("eig", "torch.linalg.eig / torch.linalg.eigvals (complex results)")

    def symeig(self, eigenvectors=False):
        """Removed from torch (1.9): raises, pointing to ``torch.linalg.eigh``."""
        self._removed("symeig", "torch.linalg.eigh / torch.linalg.eigvalsh (lower triangle "
                                "by default)")

    def lstsq(self, other):
        """Removed from torch (1.9): raises, pointing to ``torch.linalg.lstsq``."""
        self._removed("lstsq", "torch.linalg.lstsq(A, B) (arguments reversed)")

    def solve(self, other):
        """Removed from torch (1.9): raises, pointing to ``torch.linalg.solve``."""
        self._removed("solve", "torch.linalg.solve(A, B) (arguments reversed)")

    def reinforce(self, reward):
        """Removed from torch: raises, pointing to torch.distributions' score function."""
        raise RuntimeError("reinforce() was removed; sample from a torch.distributions "
                           "distribution and backpropagate -log_prob(action) * reward")

    def xpu(self, device=None, non_blocking=False, *, memory_format=None):
        """Fails as on a CPU-only torch build: there is no XPU."""
        raise AssertionError("Torch not compiled with XPU enabled")

    def mtia(self, device=None, non_blocking=False, *, memory_format=None):
        """Fails as on a CPU-only torch build: there is no MTIA."""
        raise AssertionError("Torch not compiled with MTIA enabled")

    def ipu(self, device=None, non_blocking=False, *, memory_format=None):
        """Fails as on a CPU-only torch build: there is no IPU."""
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def dim_order(self, *, ambiguity_check=False):
        """The dims from outermost to innermost in memory (by decreasing stride; ties keep
        the dims' order), as torch orders them.

        ``ambiguity_check``: True raises when the order is not unique (a size-1 dim, or two
        neighbouring dims with equal strides); a list of memory formats raises in that case
        unless the tensor is contiguous in exactly one of them.
        """
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        if not isinstance(ambiguity_check, (bool, list)) or not all(
                isinstance(f, memory_format) for f in formats):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                            "formats.")
        strides = self.stride()
        if ambiguity_check is not False:
            ambiguous = (any(a == b for a, b in zip(strides, strides[1:]))
                         or any(n == 1 for n in self.shape))
            matches = sum(bool(self.is_contiguous(memory_format=f)) for f in formats)
            if ambiguous and matches != 1:
                raise RuntimeError("The tensor does not have unique dim order, or cannot map "
                                   "to exact one of the given memory formats.")
        return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))

    @property
    def is_sparse(self) -> bool:
        """Whether the tensor has the sparse COO layout (False for dense tensors)."""
        return False

    @property
    def is_quantized(self) -> bool:
        """False: a plain tensor (quantized tensors are their own class, where it is True)."""
        return False

    @property
    def layout(self):
        """The memory layout: ``torch.strided`` for dense tensors."""
        return strided

    def get_device(self) -> int:
        """-1, torch's answer for a CPU (or meta) tensor."""
        return -1

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one."""
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is complex."""
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        """Whether the dtype can hold negative values."""
        return self.dtype.is_signed

    # ------------------------------------------------------------------ storage and strides
    def stride(self, dim=None):
        """The strides in elements (not bytes, unlike NumPy), or the stride of dimension ``dim``."""
        a = self._data
        item = a.itemsize
        if type(a) is MetaArray:
            strides = a.element_strides()
        elif a.size == 0 and not any(a.strides):
            strides = _contiguous_strides(a.shape)  # numpy gives fresh empty arrays 0 strides
        else:
            strides = tuple(s // item for s in a.strides)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, a.ndim)]

    def untyped_storage(self) -> UntypedStorage:
        """The flat bytes this tensor and its views share."""
        return UntypedStorage(self._data)

    def storage_offset(self) -> int:
        """Where the tensor starts in its storage, in elements."""
        if type(self._data) is MetaArray:
            layout = self._data.layout
            return 0 if layout is None else layout[1]
        return (data_ptr(self._data) - data_ptr(root_array(self._data))) // self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the tensor's first element (0 for a meta tensor, as torch's)."""
        if type(self._data) is MetaArray:
            return 0
        return data_ptr(self._data)

    def is_contiguous(self, *, memory_format=None) -> bool:
        """Whether the strides are the row-major ones for the shape (or those of ``memory_format``,
        e.g. ``channels_last``)."""
        if memory_format is None or memory_format is contiguous_format:
            return _is_contiguous_strides(self._data.shape, self.stride())
        if memory_format is channels_last:
            if self._data.ndim != 4:
                return False
            n, c, h, w = self._data.shape
            s = self.stride()
            return _is_contiguous_strides((n, h, w, c), (s[0], s[2], s[3], s[1]))
        if memory_format is channels_last_3d:
            if self._data.ndim != 5:
                return False
            n, c, d, h, w = self._data.shape
            s = self.stride()
            return _is_contiguous_strides((n, d, h, w, c), (s[0], s[2], s[3], s[4], s[1]))
        raise RuntimeError(f"unsupported memory format {memory_format}")

    def _is_view(self) -> bool:
        return self._base is not None

    def share_memory_(self):
        """Move the storage into shared memory (unless it is there already) and return self.

        Every tensor over the storage (views, detached aliases) moves with it, so processes
        forked afterwards write to memory this one sees. NumPy arrays taken earlier with
        ``numpy()`` keep the old memory, as in torch."""
        if _storage.is_shared(self._data):
            return self
        root, tensors = _tensors_sharing_storage(self)
        old = flat_bytes(root)
        new = _storage.shared_copy(old)
        for t in tensors:
            t._data = _storage.rebased(t._data, old, new)
        if alloc_hook[0] is not None:  # glasstorch.memory counts the new allocation
            alloc_hook[0](new)
        return self

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory (after ``share_memory_``)."""
        return _storage.is_shared(self._data)

    def pin_memory(self, device=None):
        """Raises RuntimeError, as torch does on a machine without an accelerator: pinned memory
        only exists to speed up copies to one."""
        if device is not None:
            _warn_device_argument("pin_memory")
            if as_device(device).type == "cpu":
                raise RuntimeError("CPU device type not an accelerator.")
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self, device=None) -> bool:
        """Always False: there is no pinned memory without an accelerator."""
        if device is not None:
            _warn_device_argument("is_pinned")
        return False

    @property
    def _version(self) -> int:
        vc = self._version_counter
        return 0 if vc is None else vc.value

    def _bump_version(self):
        # Views received their root's counter when created, so this reaches all of them.
        if self._inference and not inference_mode_flag[0]:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                               "allowed.You can make a clone to get a normal tensor before "
                               "doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                               "for more details.")
        _version_counter_of(self).value += 1

    _inference = False

    def is_inference(self) -> bool:
        """Whether this tensor was created inside ``inference_mode``."""
        return self._inference

    # ------------------------------------------------------------------ autograd attributes
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for autograd. Settable on leaves (floating
        and complex dtypes only)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return the tensor."""
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (None until then); filled only for leaves
        unless ``retain_grad()`` was called."""
        if self.grad_fn is not None and not self.__dict__.get("_retains_grad"):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: "
                                   f"{list(value.shape)} vs {list(self.shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: "
                                   f"{value.dtype} vs {self.dtype}")
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        """Whether the tensor has no ``grad_fn`` (created by the user, or not recorded)."""
        return self.grad_fn is None

    @property
    def data(self):
        """The same values with no autograd history (sharing storage); assigning replaces the values
        without autograd knowing."""
        t = _wrap(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    def detach(self):
        """A tensor sharing this one's storage (and version counter) with no history and
        ``requires_grad=False``."""
        t = _wrap(self._data)
        t._version_counter = _version_counter_of(self)
        return t

    def as_subclass(self, cls):
        """This tensor as an instance of ``cls``, a Tensor subclass: an alias sharing storage,
        version counter and autograd history (``AliasBackward0``); ``cls.__init__`` is not
        called."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        from ._ops.indexing import AliasBackward0
        from .autograd.graph import needs_grad, record
        t = _view_of(self, self._data[...], cls)
        if needs_grad(self):
            record(t, AliasBackward0, (self,))
        elif self._requires_grad:  # with grad mode off torch still hands back a leaf that does
            t._requires_grad = True
        return t

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """A ``cls`` instance sharing ``data``'s storage and version counter, with no history
        and ``requires_grad=require_grad`` (how ``nn.Parameter``-like subclasses are built)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, "
                            f"not {type(data).__name__}")
        if require_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t = _wrap(data._data, cls)
        t._version_counter = _version_counter_of(data)
        t._requires_grad = bool(require_grad)
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """torch's default: run ``func`` with subclass dispatch disabled and hand back tensor
        results as ``cls`` (so a subclass survives operations), unless some type in ``types``
        is not a base of ``cls`` (then NotImplemented)."""
        if kwargs is None:
            kwargs = {}
        for t in types:
            if not issubclass(cls, t):
                return NotImplemented
        from . import overrides
        with overrides.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in overrides.get_default_nowrap_functions() or overrides._is_plain(cls):
                return ret  # (sparse layouts are plain tensors: nothing to convert to)
            return _convert(ret, cls)

    def detach_(self):
        """Detach this tensor from the graph in place (RuntimeError for views of tensors that
        require grad)."""
        if self._base is not None and (self._requires_grad or self._base._requires_grad):
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        self.__dict__.pop("_output_nr", None)
        return self

    # ------------------------------------------------------------------ conversions
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _debug._on:
            _debug._impl().host_conversion(self)
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item() if self.dtype is not _dt.bfloat16 else \
            float(self._data.reshape(()))

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        if _debug._on:
            _debug._impl().host_conversion(self)
        if self.dtype in (_dt.bfloat16,):
            return self._data.astype(xp.float32).tolist()
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The underlying NumPy array, sharing memory; RuntimeError when the tensor requires grad
        unless ``force=True``, which detaches first. torch's ``force`` copies only when it must
        (another device, conjugate/negative bits): never here, so the memory is still shared."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if type(self._data) is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:  # as numpy(): the array would silently leave the graph
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if dtype is None:
            return self._data
        return self._data.astype(dtype, copy=bool(copy))

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # NumPy functions applied to a tensor (np.sin(t), scipy's ufuncs) hand back a tensor,
        # as in torch; boolean results become uint8, as torch's do
        array = _asarray(array)  # a scalar when NumPy reduced to one (return_scalar)
        if array.dtype == bool:
            array = array.astype("uint8")
        return _wrap(array)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous"
                               if self._data.size else
                               "Boolean value of Tensor with no values is ambiguous")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return bool(self._data.reshape(()))

    def __float__(self):
        if self._requires_grad and _grad_state().grad_enabled:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        value = self.item()
        return float(value.real if isinstance(value, complex) else value)

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to "
                            "an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __iter__(self):
        if self.dim() == 0:  # a method call, as torch's (a __torch_function__ sees it)
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        # an element test over every value, as torch's (not Python's row-by-row iteration)
        import numbers
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool((element == self).any().item())

    def __reversed__(self):
        return iter(self.flip(0)) if self._data.ndim else iter((self,))

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data.copy() if self._base is not None else self._data,
                           self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        t = _wrap(self._data.copy(), type(self))
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        d = getattr(self, "__dict__", None)
        if d:
            import copy
            t.__dict__.update(copy.deepcopy(d, memo))
        memo[id(self)] = t
        return t

    def __dir__(self):
        return sorted(set(object.__dir__(self)))

    # ------------------------------------------------------------------ device/dtype moves
    def cpu(self, *, memory_format=None):
        """The tensor itself: it is already on the CPU (a copy only where ``memory_format``
        asks for another layout). A meta tensor has no data to copy (NotImplementedError)."""
        if type(self._data) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if memory_format is None or memory_format is preserve_format:
            return self
        return self.to(memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, *, memory_format=None):
        """Raises RuntimeError: glasstorch has no CUDA device."""
        as_device("cuda" if device is None else
                  (f"cuda:{device}" if isinstance(device, int) else device))

    def type(self, dtype=None, non_blocking=False, *, memory_format=None):
        """Without ``dtype``, the legacy type name (``'torch.FloatTensor'``); with one (a dtype or
        such a name), the tensor cast to it (laid out as ``memory_format``, if given)."""
        if dtype is None:
            return _legacy_type_name(self.dtype)
        if isinstance(dtype, str):
            dtype = _legacy_name_to_dtype(dtype)
        elif isinstance(dtype, _LegacyTensorType):  # torch.LongTensor and friends
            dtype = dtype.dtype
        return self.to(dtype, memory_format=memory_format)

    def type_as(self, other):
        """The tensor cast to ``other``'s dtype."""
        return self.to(other.dtype)

    @property
    def T(self):
        """The dimensions reversed, as a view (for 2-d tensors, the transpose; torch deprecates
        other ranks)."""
        if self._data.ndim > 2:
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
                "to reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
        return self.permute(*reversed(range(self._data.ndim)))

    @property
    def mT(self):
        """The last two dimensions transposed, as a view."""
        if self._data.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self._data.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self):
        """The conjugate transpose of a 2-d tensor (``T``, conjugated when complex)."""
        return self.T.conj() if self.dtype.is_complex else self.T

    @property
    def mH(self):
        """The last two dimensions transposed and conjugated (when complex)."""
        return self.mT.conj() if self.dtype.is_complex else self.mT


def _convert(ret, cls):
    """``ret`` with its tensors (also inside tuples and lists) as ``cls`` instances."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        make = getattr(type(ret), "_make", None)  # named tuples (torch.return_types)
        return make(items) if make is not None else type(ret)(items)
    return ret


def _grad_state():
    from .autograd.grad_mode import _state
    return _state


def _warn_device_argument(method):
    warnings.warn(f"The argument 'device' of Tensor.{method}() is deprecated. Please do not pass "
                  f"this argument.", DeprecationWarning, stacklevel=3)


def _tensors_sharing_storage(tensor):
    """(root array, every Tensor whose array lies in that allocation). Only ``tensor`` when
    nothing else refers to its array; otherwise the heap is scanned (as torch's storage object
    would know them; glasstorch keeps no such list, to keep tensor creation cheap)."""
    arr = tensor._data
    # references: tensor._data, ``arr`` and getrefcount's argument
    if arr.base is None and sys.getrefcount(arr) <= 3:
        return arr, (tensor,)
    root = root_array(arr)
    return root, [o for o in gc.get_objects()
                  if issubclass(type(o), Tensor) and _in_allocation(o, root)]


def _in_allocation(t, root):
    arr = getattr(t, "_data", None)  # a Tensor still being built may have none yet
    return isinstance(arr, _ndarray) and root_array(arr) is root


def _rebuild(arr, requires_grad):
    t = _wrap(arr)
    t._requires_grad = requires_grad
    return t


def _wrap_dim(dim, ndim):
    """Normalise a possibly negative dim, with torch's IndexError when out of range."""
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _is_contiguous_strides(shape, strides):
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


class _NamedConstant:
    """Base of torch's named singletons (layouts, memory formats, qschemes): one instance per
    name, shown as ``torch.<name>``."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):  # pickles by name, so unpickling gives back the one instance
        return self.name


class layout(_NamedConstant):
    """A tensor layout (``torch.strided``, ``torch.sparse_coo``, ``torch.sparse_csr``)."""
    __slots__ = ()


class memory_format(_NamedConstant):
    """A memory format (``torch.contiguous_format``, ``torch.channels_last``...) for ``contiguous``,
    ``to`` and ``is_contiguous``."""
    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
# torch's defaults for methods defined above these constants existed
Tensor.is_contiguous.__kwdefaults__ = {"memory_format": contiguous_format}
Tensor.cpu.__kwdefaults__ = {"memory_format": preserve_format}

_LEGACY_NAMES = {
    _dt.float32: "FloatTensor", _dt.float64: "DoubleTensor", _dt.float16: "HalfTensor",
    _dt.bfloat16: "BFloat16Tensor", _dt.uint8: "ByteTensor", _dt.int8: "CharTensor",
    _dt.int16: "ShortTensor", _dt.int32: "IntTensor", _dt.int64: "LongTensor",
    _dt.bool_: "BoolTensor", _dt.complex64: "ComplexFloatTensor",
    _dt.complex128: "ComplexDoubleTensor",
}


def _legacy_type_name(d):
    return "torch." + _LEGACY_NAMES[d]


def _legacy_name_to_dtype(name):
    for d, n in _LEGACY_NAMES.items():
        if name in (n, "torch." + n):
            return d
    raise ValueError(f"invalid type: '{name}'")


class _LegacyTensorType(type):
    """``isinstance(t, FloatTensor)`` asks about the dtype, as in torch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_tensor_type(dtype):
    def __new__(cls, *args, device=None):
        return Tensor(*args, dtype=dtype, device=device)
    name = _LEGACY_NAMES[dtype]
    return _LegacyTensorType(name, (), {"__new__": __new__, "dtype": dtype,
                                        "__doc__": f"Legacy constructor for {dtype} tensors."})


legacy_tensor_types = {name: _legacy_tensor_type(d) for d, name in _LEGACY_NAMES.items()}
