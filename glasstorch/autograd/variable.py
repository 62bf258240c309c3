"""The legacy ``Variable`` wrapper: since torch 0.4 it just returns the tensor."""

from __future__ import annotations

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)`` returns ``t`` itself, as torch does today."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from .. import _ops
            data = _ops.creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            data.requires_grad_()
        return data
