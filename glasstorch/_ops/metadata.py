"""Questions about tensors: is_tensor, numel, is_floating_point, is_nonzero..."""

from __future__ import annotations

from ._common import Tensor, register

__all__ = ["is_tensor", "is_storage", "numel", "is_floating_point", "is_complex", "is_nonzero",
           "is_same_size", "typename"]


def is_tensor(obj) -> bool:
    """True for glasstorch tensors (and Parameters)."""
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage (``UntypedStorage``)."""
    from .._core.storage import UntypedStorage
    return isinstance(obj, UntypedStorage)


def numel(input) -> int:
    """The number of elements of ``input``."""
    return input.numel()


def is_floating_point(input) -> bool:
    """Whether ``input``'s dtype is a floating-point one (float16, bfloat16, float32, float64)."""
    return input.dtype.is_floating_point


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is complex."""
    return input.dtype.is_complex


@register()
def is_nonzero(input) -> bool:
    """The truth value of a one-element tensor (torch's errors for other sizes)."""
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if
                           input.numel() == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@register()
def is_same_size(input, other) -> bool:
    """Whether the two tensors have the same shape."""
    return input.shape == other.shape


def typename(obj) -> str:
    """The type name torch prints: ``'torch.FloatTensor'`` for a float32 tensor, else the qualified
    class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module == "builtins" else f"{module}.{name}"
