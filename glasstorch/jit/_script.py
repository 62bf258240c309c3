"""TorchScript's module and function types, and ``script``.

glasstorch has no TorchScript compiler yet, so these are the classes as torch defines them when
its compiler is off: ``ScriptModule`` is an ``nn.Module`` (code checks ``isinstance(m,
torch.jit.ScriptModule)`` to treat compiled models specially, and no glasstorch model is one
unless it subclasses it), ``script`` refuses to compile unless ``PYTORCH_JIT=0`` asks for
eager fallthrough, exactly where torch would return the object unchanged.
"""

from __future__ import annotations

import collections
import pickle
import warnings

from ..nn.modules.module import Module
from ._state import _enabled

__all__ = ["ScriptModule", "RecursiveScriptModule", "ScriptFunction", "Attribute", "script",
           "script_method"]


class ScriptModule(Module):
    """The type of TorchScript-compiled modules (``torch.jit.ScriptModule``): an ``nn.Module``.
    Nothing in glasstorch produces compiled ones yet; subclassing it gives an ordinary module."""

    def __init__(self, arg=None):
        super().__init__()


class RecursiveScriptModule(ScriptModule):
    """The type ``torch.jit.script`` gives a scripted ``nn.Module`` (a ``ScriptModule``)."""

    def __init__(self, arg=None):
        super().__init__()


class ScriptFunction:
    """The type of a TorchScript-compiled function (``torch.jit.ScriptFunction``); only the
    compiler makes them, so it has no constructor, as in torch."""

    def __init__(self, *args, **kwargs):
        raise TypeError("ScriptFunction: No constructor defined!")

    def __reduce__(self):
        raise pickle.PickleError("ScriptFunction cannot be pickled")


ScriptFunction.__module__ = "torch.jit"

if _enabled:
    class Attribute(collections.namedtuple("Attribute", ["value", "type"])):
        """``self.x = torch.jit.Attribute(value, type)`` in a ScriptModule's ``__init__``
        declares the attribute's TorchScript type; in Python it is a (value, type) pair."""
        __slots__ = ()
else:
    def Attribute(value, type):  # noqa: N802 (torch's name)
        """With the JIT disabled, ``torch.jit.Attribute(value, type)`` is just ``value``."""
        return value


def _deprecated(name):
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or "
                  f"`torch.export`.", DeprecationWarning, stacklevel=3)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Compile a function or module to TorchScript. glasstorch has no TorchScript compiler:
    with ``PYTORCH_JIT=0`` set before import, ``obj`` is returned unchanged (torch's eager
    fallthrough); otherwise this raises NotImplementedError. Calling ``obj`` directly runs
    it eagerly."""
    _deprecated("script")
    if not _enabled:
        return obj
    raise NotImplementedError("torch.jit.script: glasstorch has no TorchScript compiler; the "
                              "object runs eagerly if you call it directly (or set "
                              "PYTORCH_JIT=0 to make script() return it unchanged).")


def script_method(fn):
    """Mark a ScriptModule method for compilation: with ``PYTORCH_JIT=0`` ``fn`` itself;
    otherwise NotImplementedError (no TorchScript compiler)."""
    warnings.warn("`torch.jit.script_method` is deprecated. Please switch to `torch.compile` "
                  "or `torch.export`.", DeprecationWarning, stacklevel=2)
    if not _enabled:
        return fn
    raise NotImplementedError("torch.jit.script_method: glasstorch has no TorchScript compiler; "
                              "set PYTORCH_JIT=0 to run the method as plain Python.")
