"""Hook helpers, as ``torch.utils.hooks``: the handle every ``register_*_hook`` returns, the
``unserializable_hook`` marker, and the wrapper behind nn.Module full backward hooks."""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

from ..nn.modules._backward_hooks import BackwardHook as _ModuleBackwardHook

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


class RemovableHandle:
    """Handle to a hook stored in ``hooks_dict`` under ``self.id``; ``remove()`` (or leaving a
    ``with`` block) deletes it there and from every ``extra_dict`` (a dict or a list of dicts).

    The dicts are held by weak reference, so a handle never keeps a module's hooks alive.
    Ids come from one counter shared by all handles (``RemovableHandle.next_id``).
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        elif not isinstance(extra_dict, list):
            extra_dict = []
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        """Unregister the hook (a no-op when already removed or its owner is gone)."""
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state):
        # a hooks dict that was already gone unpickles as a dead reference
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        # ids handed out later must not collide with the restored one
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.remove()


def unserializable_hook(f):
    """Decorator marking a tensor hook as not meant to be saved (silences
    :func:`warn_if_has_hooks`)."""
    f.__torch_unserializable__ = True
    return f


def _tensor_backward_hooks(tensor):
    """The hooks ``tensor.register_hook`` attached (torch keeps them in
    ``tensor._backward_hooks``; glasstorch keeps them on the tensor's graph node)."""
    own = getattr(tensor, "_backward_hooks", None)
    if own:
        return own
    node = tensor.grad_fn
    nr = tensor._output_nr if node is not None else 0
    if node is None:
        node = getattr(tensor, "_grad_accumulator", None)
    if node is None:
        return {}
    return node.__dict__.get("_tensor_hooks", {}).get(nr, {})


def warn_if_has_hooks(tensor):
    """Warn for every backward hook on ``tensor`` that would be lost by serialising it
    (hooks decorated with :func:`unserializable_hook` are skipped)."""
    for hook in _tensor_backward_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          f"is expected, you can decorate the function with "
                          f"@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


class BackwardHook(_ModuleBackwardHook):
    """Runs ``user_pre_hooks(module, grad_output)`` and ``user_hooks(module, grad_input,
    grad_output)`` around one forward call: pass the call's positional inputs through
    ``setup_input_hook`` and its output through ``setup_output_hook``.

    This is the machinery nn.Module's full backward hooks use, with the hook lists given
    explicitly instead of read from the module.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        super().__init__(module)
        self.hooks = list(user_hooks)
        self.pre_hooks = list(user_pre_hooks)

    @property
    def user_hooks(self):
        """The backward hooks this wrapper runs."""
        return self.hooks

    @property
    def user_pre_hooks(self):
        """The backward pre-hooks this wrapper runs."""
        return self.pre_hooks
