"""Call a module with some of its parameters and buffers replaced (``functional_call``).

The given tensors are swapped into the module's ``_parameters``/``_buffers``
(or set as attributes) for the duration of the call and swapped back after,
even when the call raises. Nothing is copied, so gradients flow to the tensors
passed in.
"""

from __future__ import annotations

import contextlib
import warnings

from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _swap_tensor(module, name, tensor):
    """Put ``tensor`` (or nothing, for _MISSING) at ``module.<name>``; return what was there."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return orig
    orig = getattr(module, name, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


class _Accessor:
    """Resolves dotted names (``"layer.0.weight"``) to (submodule, attribute)."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def submodule(self, path):
        if not path:
            return self.module
        sub = self.memo.get(path)
        if sub is None:
            prefix, _, attr = path.rpartition(".")
            parent = self.submodule(prefix)
            try:
                sub = getattr(parent, attr)
            except AttributeError as e:
                raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from e
            if not isinstance(sub, Module):
                raise TypeError(f"submodule `{path}`: {sub} is not an instance of "
                                "torch.nn.Module")
            self.memo[path] = sub
        return sub

    def swap(self, name, tensor):
        prefix, _, attr = name.rpartition(".")
        return _swap_tensor(self.submodule(prefix), attr, tensor)

    def swap_dict(self, named):
        done = {}
        try:
            for name, tensor in named.items():
                done[name] = self.swap(name, tensor)
        except Exception:
            for name, orig in done.items():
                self.swap(name, orig)
            raise
        return done


def _untie(module, named):
    """Extend ``named`` to every name tied (same tensor) to a name it gives."""
    groups = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        groups.setdefault(id(t), set()).add(name)
    tied = {n: g for g in groups.values() if len(g) > 1 for n in g}
    given_tied = [n for n in named if n in tied]
    for name in given_tied:
        names = tied[name]
        if len(names.intersection(given_tied)) > 1 and \
                len({id(named[n]) for n in names if n in named}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(named)
    for name in given_tied:
        for other in tied[name]:
            out[other] = named[name]
    return out


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    named = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = _Accessor(module)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(named)), sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    orig = {}
    try:
        orig = accessor.swap_dict(named)
        yield
    finally:
        new = accessor.swap_dict(orig)
        # a module that rebinds a tensor during the call (self.x = self.x + 1) reports it back
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated alias of ``torch.func.functional_call`` (one dict only)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
