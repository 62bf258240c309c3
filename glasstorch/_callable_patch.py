"""Wrapping every operator model code can reach, for a while, then putting everything back.

The profiler (to time ops) and the ONNX exporter (to trace them) watch a model run by
replacing the operator functions with thin wrappers while they are active. Model code
reaches an operator in several ways, and each has to meet the wrapper:

- a namespace: ``torch.add``, ``F.relu``, ``torch.linalg.norm``, ``x.add``, ``x + y``;
- a module global: ``from torch import flatten`` at the top of any loaded module;
- an instance attribute: ``self.activation = F.relu``;
- a class attribute: ``_fn = staticmethod(F.tanh)``.

A ``CallablePatch`` makes one wrapper per function and puts it wherever the function is
found; ``restore`` puts back what was there. Nothing stays behind, so an op costs nothing
extra when no watcher runs: the op path has no check for one.
"""

from __future__ import annotations

import inspect
import sys

# Modules of the watchers themselves: their own calls are not model code.
_WATCHERS = ("glasstorch.onnx", "glasstorch.profiler", __name__)
# Where operators are defined: the ops themselves and nn.functional's Python-level ones.
_OP_MODULES = ("glasstorch._ops.", "glasstorch.nn._functional.")
# Namespaces whose functions are keyed with a prefix: their names clash with flat ones.
_NAMESPACES = {"glasstorch.linalg": "linalg.", "glasstorch.special": "special.",
               "glasstorch.fft": "fft."}
_MISSING = object()


def origin(fn):
    """The module that defines ``fn``, looking through ``functools.wraps`` layers."""
    return getattr(inspect.unwrap(fn), "__module__", None) or ""


def is_op(name, fn):
    """Whether ``fn``, found under ``name``, is a public operator function."""
    return (inspect.isfunction(fn) and not name.startswith("_")
            and origin(fn).startswith(_OP_MODULES))


def op_key(namespace, name, fn, prefix, flat):
    """The key naming ``fn`` (found as ``namespace[name]``): its own name when the namespace
    has it under that name (``Tensor.__iadd__`` is ``add_``), prefixed where the flat
    namespace has a different function of that name (``F.batch_norm``)."""
    fn = _definition(fn)
    key = fn.__name__ if _definition(namespace.get(fn.__name__)) is fn else name
    other = _definition(flat.get(key))
    return prefix + key if inspect.isfunction(other) and other is not fn else key


def _definition(fn):
    """The function behind ``fn``'s wrappers (public dispatch points, amp's, watchers'): the
    Tensor method, its operator alias and the flat function are one operator."""
    return inspect.unwrap(fn) if callable(fn) else fn


# Python operators named after the aten operator they run.
_BINARY = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                     "and", "or", "xor", "lshift", "rshift"})
_ATEN = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder",
         "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
         "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
         "invert": "bitwise_not", "getitem": "index", "setitem": "index_put_"}


def aten_name(key):
    """torch's name for the operator behind key ``key``: ``'aten::add'`` for ``__radd__``,
    ``'aten::add_'`` for ``__iadd__``, ``'aten::linalg_norm'`` for ``linalg.norm``."""
    if key.startswith(("F.", "Tensor.")):
        key = key.split(".", 1)[1]
    if key.startswith("__") and key.endswith("__"):
        key = _dunder_op(key[2:-2])
    return "aten::" + key.replace(".", "_")


def _dunder_op(core):
    """The aten name of Python operator ``__core__``."""
    if core in _BINARY:
        return _ATEN.get(core, core)
    if core[:1] == "r" and core[1:] in _BINARY:    # 2 - x runs aten::rsub, 2 * x aten::mul
        return core if core == "rsub" else _ATEN.get(core[1:], core[1:])
    if core[:1] == "i" and core[1:] in _BINARY:
        return _ATEN.get(core[1:], core[1:]) + "_"
    return _ATEN.get(core, core)


class CallablePatch:
    """Replaces attributes and dict entries, and puts back what was there.

    ``make_wrapper(fn, key)`` builds the wrapper of an operator; ``wrap_operators`` puts one
    in every namespace and loaded module, ``cover_object`` in an object, its classes and
    their modules (for objects met later: model modules). After ``restore`` the patch can
    be used again: it keeps the wrappers it made.
    """

    def __init__(self, make_wrapper):
        self._make_wrapper = make_wrapper
        self._wrappers = {}     # id(operator function) -> its wrapper
        self._covered = {}      # id -> class or module already patched (held: ids stay theirs)
        self._saved = []        # (owner, key, old value), in patching order

    # -- one replacement
    def set_item(self, mapping, key, value):
        """``mapping[key] = value`` until ``restore``."""
        self._saved.append((mapping, key, mapping[key]))
        mapping[key] = value

    def set_attr(self, owner, attr, value):
        """``setattr(owner, attr, value)`` (a class or module attribute) until ``restore``."""
        self._saved.append((owner, attr, vars(owner).get(attr, _MISSING)))
        setattr(owner, attr, value)

    def restore(self):
        """Put back exactly what was there, last replacement first."""
        for owner, key, old in reversed(self._saved):
            if isinstance(owner, dict):
                owner[key] = old
            elif old is _MISSING:
                delattr(owner, key)
            else:
                setattr(owner, key, old)
        self._saved.clear()
        self._covered.clear()

    # -- operators
    def wrapper(self, fn, key):
        """The one wrapper of ``fn`` (made on first request, named by ``key``)."""
        w = self._wrappers.get(id(fn))
        if w is None:
            w = self._wrappers[id(fn)] = self._make_wrapper(fn, key)
            inner = getattr(fn, "__wrapped__", None)
            if getattr(fn, "_torch_dispatch_point", False) and id(inner) not in self._wrappers:
                # a public dispatch point (glasstorch.overrides): module globals still name
                # the definition behind it, and ops call each other through those
                self._wrappers[id(inner)] = self._make_wrapper(inner, key)
        return w

    def wrap_operators(self, tensor_extras=()):
        """Wrap every operator: Tensor methods and operators (and the Tensor methods named in
        ``tensor_extras``), the functions of the flat namespace, ``nn.functional`` and
        ``linalg``; then replace every reference to them in loaded modules."""
        import glasstorch

        from ._tensor import Tensor
        from .nn import functional as F

        flat = vars(glasstorch)
        for name, fn in list(vars(Tensor).items()):
            if inspect.isfunction(fn) and (origin(fn).startswith(_OP_MODULES)
                                           or name in tensor_extras):
                key = op_key(vars(Tensor), name, fn, "Tensor.", flat)
                self.set_attr(Tensor, name, self.wrapper(fn, key))
        self._register(flat, "")
        self._register(vars(F), "F.", flat)
        for module_name, prefix in _NAMESPACES.items():
            if module_name in sys.modules:
                self._register(vars(sys.modules[module_name]), prefix)
        for name in list(sys.modules):
            self._cover_module(name)

    def _register(self, namespace, prefix, flat=None):
        """Make the wrappers of ``namespace``'s operators, keyed with ``prefix``: always, or
        given ``flat``, where it has another function of that name."""
        for name, fn in list(namespace.items()):
            if id(fn) not in self._wrappers and is_op(name, fn):
                key = (prefix + op_key(namespace, name, fn, "", {}) if flat is None
                       else op_key(namespace, name, fn, prefix, flat))
                self.wrapper(fn, key)

    # -- references held elsewhere
    def cover_object(self, obj):
        """Replace the operators ``obj`` holds as attributes and, once per class of ``obj``,
        those its classes hold as static methods and their modules as globals."""
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            self._cover_dict(attrs)
        for cls in type(obj).__mro__:
            if id(cls) not in self._covered:
                self._covered[id(cls)] = cls
                self._cover_class(cls)

    def _cover_class(self, cls):
        for name, value in list(vars(cls).items()):
            if isinstance(value, staticmethod) and id(value.__func__) in self._wrappers:
                self.set_attr(cls, name, staticmethod(self._wrappers[id(value.__func__)]))
        self._cover_module(cls.__module__)

    def _cover_module(self, name):
        mod = sys.modules.get(name)
        if mod is None or name.startswith(_WATCHERS) or id(mod) in self._covered:
            return
        self._covered[id(mod)] = mod
        attrs = getattr(mod, "__dict__", None)
        if isinstance(attrs, dict):
            self._cover_dict(attrs)

    def _cover_dict(self, mapping):
        if self._wrappers.keys().isdisjoint(map(id, mapping.values())):  # the common case
            return
        for name, value in list(mapping.items()):
            w = self._wrappers.get(id(value))
            if w is not None:
                self.set_item(mapping, name, w)
