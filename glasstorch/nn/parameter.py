"""Parameter, Buffer and the uninitialised placeholders used by lazy modules."""

from __future__ import annotations

from .._core import dtype as _dt
from .._core.backend import xp
from .._tensor import Tensor, _wrap
from ..overrides import DisableTorchFunctionSubclass, _disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.

    It shares memory (and the version counter) with the tensor it wraps, and
    requires grad unless told otherwise. Results of operations on it are plain tensors.
    """

    # Parameters (and their subclasses) take no part in __torch_function__ dispatch, as in
    # torch: operations on them see plain tensors and return plain tensors.
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _wrap(xp.empty(0, dtype=_dt.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        if hasattr(type(data), "_as_parameter"):     # a DTensor stays one, as in torch
            return data._as_parameter(requires_grad)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data.copy() if self._base is not None else self._data,
                                     self._requires_grad, type(self)))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_wrap(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


def _rebuild_parameter(arr, requires_grad, cls=Parameter):
    return cls(_wrap(arr), requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.__dict__.get("_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor so that assigning it to a Module attribute registers a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _wrap(xp.empty(0, dtype=_dt.get_default_dtype().np))
        data.__dict__["_is_buffer"] = True
        data.__dict__["_buffer_persistent"] = persistent
        return data


class _Uninitialized:
    """Mixin for placeholders whose shape is known only at the first forward."""

    cls_to_become = None
    # what may touch a placeholder (torch's list): conversions, size, copy_, and properties
    # (their descriptors' method-wrappers, so that Module.to can set .data)
    _allowed = frozenset({"__hash__", "size", "copy_", "is_complex", "is_floating_point", "half",
                          "float", "double", "char", "short", "int", "long", "cuda", "cpu",
                          "to", "get_device", "_has_compatible_shallow_copy_type"})

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # any other op would compute on the empty placeholder data: refuse it, as torch does
        if (getattr(func, "__name__", None) in cls._allowed
                or type(func).__name__ == "method-wrapper"):
            with DisableTorchFunctionSubclass():
                return func(*args, **(kwargs or {}))
        raise ValueError(f"Attempted to use an uninitialized parameter in {func}. This error "
                         f"happens when you are using a `LazyModule` or explicitly manipulating "
                         f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules "
                         f"Call `forward` with a dummy batch to initialize the parameters before "
                         f"calling torch functions")

    def materialize(self, shape, device=None, dtype=None):
        """Allocate (uninitialized) memory of ``shape`` and turn into a regular Parameter or
        buffer."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = self.dtype if dtype is None else dtype
        self._data = xp.empty(shape, dtype=dt.np)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        """Raises RuntimeError: the shape is unknown until the first forward."""
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to load "
                           "an uninitialized parameter into an initialized one. Call "
                           "`forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter of a lazy module (``LazyLinear``...) before its first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        dt = dtype or _dt.get_default_dtype()
        p = _wrap(xp.empty(0, dtype=dt.np), cls)
        p._requires_grad = requires_grad
        return p


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer of a lazy module before its first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        dt = dtype or _dt.get_default_dtype()
        b = _wrap(xp.empty(0, dtype=dt.np), cls)
        b.__dict__["_is_buffer"] = True
        b.__dict__["_buffer_persistent"] = persistent
        return b


def is_lazy(param) -> bool:
    return isinstance(param, _Uninitialized)
