"""The autograd half of Tensor's API: backward, hooks, retain_grad.

Attached to Tensor here so that ``_tensor.py`` stays free of the engine.
"""

from __future__ import annotations

import weakref

from .._tensor import Tensor
from .engine import tensor_backward
from .graph import _RemovableHandle, grad_accumulator


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor w.r.t. graph leaves into their ``.grad``."""
    tensor_backward(self, gradient, retain_graph, create_graph, inputs)


def _hook_node(t):
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return grad_accumulator(t), 0


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one."""
    node, nr = _hook_node(self)
    hooks = node.__dict__.setdefault("_tensor_hooks", {})
    return _RemovableHandle(hooks.setdefault(nr, {}), hook)


def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after a leaf's ``.grad`` has been accumulated."""
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _RemovableHandle(self.__dict__.setdefault("_post_accumulate_grad_hooks", {}), hook)


def retain_grad(self):
    """Keep ``.grad`` for this non-leaf tensor after backward."""
    if self.grad_fn is None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return  # leaves always keep their grad
    self.grad_fn.__dict__.setdefault("_retained", {})[self._output_nr] = weakref.ref(self)
    self.__dict__["_retains_grad"] = True


def retains_grad(self):
    """Whether ``retain_grad()`` was called on this non-leaf (always False for leaves)."""
    return self.__dict__.get("_retains_grad", False) if self.grad_fn is not None else False


Tensor.backward = backward
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.retain_grad = retain_grad
Tensor.retains_grad = property(retains_grad)
Tensor._output_nr = 0
