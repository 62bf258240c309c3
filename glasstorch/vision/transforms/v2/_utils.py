"""The kernel registry behind transforms.v2.functional, and the input-type checks.

Each v2 functional looks its kernel up by the input's type: plain tensors and ``Image`` /
``Video`` share the image kernel, ``Mask`` and ``BoundingBoxes`` have their own, PIL images
theirs. Kernels see plain tensors; the tv_tensor type is put back on the way out.
"""
from glasstorch import Tensor

from ... import tv_tensors
from ..._pil import is_pil
from ...tv_tensors import TVTensor

PIL_IMAGE = "PIL.Image.Image"  # the registry key of PIL images (Pillow is imported lazily)

_KERNELS = {}  # functional -> {input type (or PIL_IMAGE): kernel}


def is_pure_tensor(inpt):
    """Whether ``inpt`` is a plain tensor (a Tensor but no tv_tensor)."""
    return isinstance(inpt, Tensor) and not isinstance(inpt, TVTensor)


def as_plain(tensor):
    """``tensor`` as a plain Tensor sharing its storage (kernels work on plain tensors)."""
    return Tensor.__getitem__(tensor, ...)


def _wrapping(kernel):
    def call(inpt, *args, **kwargs):
        out = kernel(as_plain(inpt), *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(tv_tensors.wrap(part, like=inpt) for part in out)
        return tv_tensors.wrap(out, like=inpt)
    return call


def register_kernel_internal(functional, *types, wrap=True):
    """Register ``kernel`` for ``types``; with ``wrap``, tv_tensor inputs reach it as plain
    tensors and its output gets the input's type back."""
    def decorator(kernel):
        table = _KERNELS.setdefault(functional, {})
        for cls in types:
            is_tv = isinstance(cls, type) and issubclass(cls, TVTensor)
            table[cls] = _wrapping(kernel) if wrap and is_tv else kernel
        return kernel
    return decorator


def _passthrough(inpt, *args, **kwargs):
    return inpt


def kernel_for(functional, inpt, allow_passthrough=False):
    """The kernel of ``functional`` for ``inpt``'s type (a user tv_tensor class never falls back
    on the plain-tensor kernel); inputs without one pass through when ``allow_passthrough``."""
    table = _KERNELS.get(functional, {})
    kernel = table.get(PIL_IMAGE) if is_pil(inpt) else _lookup(table, type(inpt))
    if kernel is not None:
        return kernel
    if allow_passthrough:
        return _passthrough
    names = [getattr(k, "__name__", k) for k in table]
    raise TypeError(f"Functional F.{functional.__name__} supports inputs of type {names}, but "
                    f"got {type(inpt)} instead.")


def _lookup(table, cls):
    for klass in cls.__mro__:
        if klass in table:
            return table[klass]
        if klass is TVTensor:
            return None
    return None


def register_kernel(functional, tv_tensor_cls):
    """Decorator registering a kernel of a v2 functional for a custom TVTensor subclass.

    The kernel gets the tv_tensor itself and the functional's arguments, and returns the
    result (wrap it with ``tv_tensors.wrap`` to keep the type).
    """
    if isinstance(functional, str):
        from . import functional as F
        if not callable(getattr(F, functional, None)):
            raise ValueError(f"Could not find functional with name '{functional}' in "
                             "glasstorch.vision.transforms.v2.functional.")
        functional = getattr(F, functional)
    if functional not in _KERNELS:
        raise ValueError("Kernels can only be registered on functionals from the "
                         f"transforms.v2.functional namespace, but got {functional}.")
    if not (isinstance(tv_tensor_cls, type) and issubclass(tv_tensor_cls, TVTensor)):
        raise ValueError("Kernels can only be registered for subclasses of tv_tensors.TVTensor, "
                         f"but got {tv_tensor_cls}.")
    if tv_tensor_cls.__module__ == tv_tensors.__name__:
        raise ValueError("Kernels cannot be registered for the builtin tv_tensor classes, but "
                         f"got {tv_tensor_cls}")
    return register_kernel_internal(functional, tv_tensor_cls, wrap=False)


def check_type(obj, types_or_checks):
    """Whether ``obj`` is an instance of one of the types or passes one of the checks
    (``is_pil`` for PIL images)."""
    return any(isinstance(obj, t) if isinstance(t, type) else t(obj) for t in types_or_checks)


def has_any(flat_inputs, *types_or_checks):
    """Whether some input matches one of ``types_or_checks``."""
    return any(check_type(inpt, types_or_checks) for inpt in flat_inputs)


def has_all(flat_inputs, *types_or_checks):
    """Whether each of ``types_or_checks`` matches some input."""
    return all(has_any(flat_inputs, t) for t in types_or_checks)
