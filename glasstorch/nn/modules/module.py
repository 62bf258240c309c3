"""Module: the base class of every layer and model.

Registration happens in ``__setattr__``: assigning a Parameter, a Module or a
Buffer puts it in its own ordered dict, so users never opt in. ``__call__``
goes straight to ``forward`` unless some hook is registered.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ... import debug as _debug
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter, is_lazy

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_buffer_registration_hook",
           "register_module_parameter_registration_hook",
           "register_module_module_registration_hook"]

_M = TypeVar("_M", bound="Module")
# the state_dict key suffix of get_extra_state()'s entry (transformers' loader reads it)
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _add_hook(hooks, hook, prepend=False, *extra):
    handle = RemovableHandle(hooks, extra_dict=list(extra))
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# global hooks (torch.nn.modules.module.register_module_*)
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    if with_kwargs:
        raise NotImplementedError("global forward hooks with kwargs are not supported")
    handle = _add_hook(_global_forward_hooks, hook, False, _global_forward_hooks_always_called)
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_hook(hook):
    return _add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_buffer_registration_hook(hook):
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    return _add_hook(_global_module_registration_hooks, hook)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


def _describe(value):
    """How torch names a value in registration errors: 'torch.FloatTensor' or its type."""
    if isinstance(value, Tensor):
        from ..._tensor import _legacy_type_name
        return _legacy_type_name(value.dtype)
    return type(value).__name__


class Module:
    """Base class for all neural network modules (torch.nn.Module).

    Example::

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)   # registered as a submodule

            def forward(self, x):
                return self.fc(x).relu()
    """

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    _compiled_call_impl = None

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and (args or kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'" if kwargs else
                            f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        for name in ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            d[name] = OrderedDict()
        d["_is_full_backward_hook"] = None

    # ------------------------------------------------------------------ forward
    def forward(self, *input):
        """The computation of this module; every subclass defines it. Call the module
        (``model(x)``), not ``forward``, so that hooks (and the pitfall detector) run."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        if _debug._on:
            return _debug._impl().module_call(self, args, kwargs)
        return self._call_undebugged(args, kwargs)

    _call_impl = __call__

    def _call_undebugged(self, args, kwargs):
        d = self.__dict__
        if not (d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"] or
                d["_backward_pre_hooks"] or _global_forward_hooks or
                _global_forward_pre_hooks or _global_backward_hooks or
                _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        d = self.__dict__
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                             d["_forward_pre_hooks"].items()):
            if hook_id in d["_forward_pre_hooks_with_kwargs"]:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        backward = None
        if d["_backward_hooks"] or d["_backward_pre_hooks"] or _global_backward_hooks or \
                _global_backward_pre_hooks:
            from ._backward_hooks import BackwardHook
            backward = BackwardHook(self)
            args = backward.setup_input_hook(args)
        called = set()
        try:
            result = self.forward(*args, **kwargs)
            for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                                 d["_forward_hooks"].items()):
                called.add(hook_id)
                if hook_id in d["_forward_hooks_with_kwargs"]:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
        except Exception:
            for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                                 d["_forward_hooks"].items()):
                always = (hook_id in d["_forward_hooks_always_called"] or
                          hook_id in _global_forward_hooks_always_called)
                if always and hook_id not in called:
                    try:
                        if hook_id in d["_forward_hooks_with_kwargs"]:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:
                        warnings.warn(f"forward hook with ``always_call=True`` raised an "
                                      f"exception that was silenced as another error was "
                                      f"raised in forward: {e}", stacklevel=2)
            raise
        if backward is not None:
            result = backward.setup_output_hook(result)
        return result

    # ------------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` before each forward (``hook(module, args, kwargs)`` with
        ``with_kwargs=True``); a non-None result replaces the inputs. Returns a handle whose
        ``remove()`` unregisters it."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend,
                           self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Call ``hook(module, args, output)`` after each forward (``hook(module, args, kwargs,
        output)`` with ``with_kwargs=True``); a non-None result replaces the output.
        ``always_call=True`` also calls it when forward raises. Returns a removable handle."""
        handle = _add_hook(self._forward_hooks, hook, prepend, self._forward_hooks_with_kwargs,
                           self._forward_hooks_always_called)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are known,
        before its inputs' gradients are computed; a non-None result replaces ``grad_output``.
        Returns a removable handle."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` once the gradients with respect to the
        module's inputs are computed; a non-None result replaces ``grad_input``. Returns a removable
        handle."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated in torch; here it behaves like ``register_full_backward_hook``."""
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes is deprecated and will be removed in future versions. "
                      "This hook will be missing some grad_input. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=2)
        return _add_hook(self._backward_hooks, hook)

    def register_state_dict_pre_hook(self, hook):
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict()`` collects this module's
        entries. Returns a removable handle."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict()``
        collected this module's entries; it may edit the dict in place. Returns a removable
        handle."""
        return _add_hook(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before ``load_state_dict`` loads this module's entries.
        Returns a removable handle."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return _add_hook(self._load_state_dict_pre_hooks,
                             lambda *a, **k: hook(self, *a, **k))
        return _add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict``; the hook may edit the
        missing/unexpected key lists. Returns a removable handle."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is part of the state (saved in state_dict if ``persistent``)
        but is not a parameter (e.g. BatchNorm's running mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a Parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_describe(param)}' object to parameter '{name}' "
                            f"(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (as attribute assignment does)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__module__}.{type(module).__name__} is not a "
                            f"Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    register_module = add_module

    def _get_target(self, target, kind):
        if target == "":
            return self, ""
        *path, last = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod, last

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``'encoder.layers.0'``); ``''`` is the module itself.
        Raises AttributeError naming the missing part."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, without ``strict``, add) the submodule at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent, last = self._get_target(target, "module")
        if strict and not hasattr(parent, last):
            raise AttributeError(f"{parent._get_name()} has no attribute `{last}`")
        setattr(parent, last, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (``'layers.0.weight'``)."""
        mod, name = self._get_target(target, "parameter")
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path (``'bn.running_mean'``)."""
        mod, name = self._get_target(target, "buffer")
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        """Override to put extra, non-tensor state into ``state_dict()`` under ``'_extra_state'``;
        only called when a subclass overrides it."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        """Override to restore what ``get_extra_state`` returned, from ``load_state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, "_buffers", "_modules", "_non_persistent_buffers_set")
            d.pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_describe(value)}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, "_parameters", "_buffers", "_non_persistent_buffers_set")
            d.pop(name, None)
            for hook in _global_module_registration_hooks.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__module__}."
                                f"{type(value).__name__}' as child module '{name}' "
                                f"(torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Tensor) and value.__dict__.get("_is_buffer"):
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            persistent = value.__dict__.pop("_buffer_persistent", True)
            value.__dict__.pop("_is_buffer", None)
            self._remove_from(name, d, "_parameters", "_modules")
            d.pop(name, None)
            self.register_buffer(name, value, persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__module__}."
                                f"{type(value).__name__}' as buffer '{name}' (torch.Tensor or "
                                f"None expected)")
            for hook in _global_buffer_registration_hooks.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            d["_buffers"][name] = value
        else:
            if _debug._on:
                _debug._impl().module_setattr(self, name, value)
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, d, *dict_names):
        for dn in dict_names:
            container = d.get(dn)
            if container is None:
                continue
            if isinstance(container, set):
                container.discard(name)
            else:
                container.pop(name, None)

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d.get("_modules", ()):
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = set(object.__dir__(self))
        keys.update(self._parameters, self._modules, self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ------------------------------------------------------------------ traversal
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (of submodules too, by default), each shared one once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, Parameter)`` pairs of this module and (with ``recurse``) its submodules;
        a shared parameter appears once unless ``remove_duplicate=False``."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module and (with ``recurse``) its submodules, each once."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(dotted_name, buffer)`` pairs of this module and (with ``recurse``) its submodules."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        """The direct child modules, each once."""
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` pairs of the direct child modules, each once."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self) -> Iterator[Module]:
        """This module and every module below it, depth first, each once."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and all below it, depth first, as ``(qualified_name, module)``."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            pre, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield pre, module
            children = [(pre + ("." if pre else "") + name, m)
                        for name, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    # ------------------------------------------------------------------ modes
    def train(self: _M, mode: bool = True) -> _M:
        """Set training mode (``mode=True``) or evaluation mode on this module and all below it;
        Dropout and BatchNorm behave differently in each. Returns the module."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self: _M) -> _M:
        """Evaluation mode: ``train(False)``. It does not turn off autograd; use ``no_grad()`` for
        that. Returns the module."""
        return self.train(False)

    def requires_grad_(self: _M, requires_grad: bool = True) -> _M:
        """Set ``requires_grad`` on every parameter (``False`` freezes the module). Returns the
        module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def share_memory(self):
        """Move parameters, their gradients and buffers into shared memory
        (``Tensor.share_memory_``), so processes forked afterwards update the same weights."""
        return self._apply(lambda t: t.share_memory_())

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            if new is not param:
                param.data = new
            if param.grad is not None:
                with no_grad():
                    new_grad = fn(param.grad)
                if new_grad is not param.grad:
                    param._grad = new_grad.requires_grad_(param.grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self: _M, fn: Callable[[Module], None]) -> _M:
        """Call ``fn`` on every submodule (children first), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self: _M, *args: Any, **kwargs: Any) -> _M:
        """Move/cast parameters and buffers; dtype changes apply to floating ones only."""
        from ..._ops.copying import _parse_to
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        dtype, device = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                t = t.to(dtype)
            if device is None:
                return t
            try:
                return t.to(device)
            except NotImplementedError as e:
                if t.is_meta:
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of "
                        f"torch.nn.Module.to() when moving module from meta to a different "
                        f"device.") from None
                raise
        return self._apply(convert)

    def cpu(self):
        """Move parameters and buffers to the CPU (where they already are). Returns the module."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move to a CUDA device: raises RuntimeError, as glasstorch runs on the CPU only."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type`` (a dtype or a legacy type name). Returns
        the module."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self: _M) -> _M:
        """Cast floating-point parameters and buffers to float32. Returns the module."""
        from ... import float32
        return self._cast(float32)

    def double(self: _M) -> _M:
        """Cast floating-point parameters and buffers to float64. Returns the module."""
        from ... import float64
        return self._cast(float64)

    def half(self: _M) -> _M:
        """Cast floating-point parameters and buffers to float16. Returns the module."""
        from ... import float16
        return self._cast(float16)

    def bfloat16(self: _M) -> _M:
        """Cast floating-point parameters and buffers to bfloat16. Returns the module."""
        from ... import bfloat16
        return self._cast(bfloat16)

    def to_empty(self, *, device=None, recurse=True):
        """Replace every parameter and buffer by an uninitialized tensor of the same shape and dtype
        on ``device`` (the way out of the meta device). Returns the module."""
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                # a lazy placeholder goes in as it is (it refuses detach, as in torch)
                destination[prefix + name] = (param if keep_vars or is_lazy(param)
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = (buf if keep_vars or is_lazy(buf)
                                              else buf.detach())
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ordered dict of every parameter and persistent buffer, by qualified name."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(input_param)}')
                continue
            if is_lazy(param):
                param.materialize(input_param.shape)
            if not is_lazy(param) and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = input_param if isinstance(input_param, Parameter) else \
                                Parameter(input_param, requires_grad=param.requires_grad)
                            setattr(self, name, new)
                        else:
                            setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f'in the model are {param.shape} and whose dimensions in the '
                                  f'checkpoint are {input_param.shape}, an exception occurred : '
                                  f'{ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] not in self._modules and input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False):
        """Copy parameters and buffers from ``state_dict``; returns missing/unexpected keys."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        stack = [(self, "")]
        visited = []
        while stack:
            module, prefix = stack.pop()
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            visited.append(module)
            children = [(child, prefix + name + ".") for name, child in module._modules.items()
                        if child is not None]
            stack.extend(reversed(children))
        result = _IncompatibleKeys(missing, unexpected)
        for module in visited:
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, result)
                if out is not None:
                    raise RuntimeError("Hooks registered with "
                                       "``register_load_state_dict_post_hook`` are not expected "
                                       "to return new values, if incompatible_keys need to be "
                                       "modified, it should be done inplace.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        if not strict:
            return _IncompatibleKeys(missing, unexpected)
        return result

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """Extra text inside this module's repr (override in subclasses)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def compile(self, *args, **kwargs):
        """Accepted for compatibility; glasstorch runs modules eagerly."""
        return None
