"""TorchScript classes: plain Python classes used from scripted code (``@torch.jit.script class``,
an annotation naming a class, or a module attribute holding an instance) and ``NamedTuple``s.

A class is compiled once: ``__init__`` first, whose assignments to ``self.<name>`` (with their
annotations, or the class-level ones) fix the attributes' types, then every other method. Its
instances stay the Python objects they are; compiled code reads and sets their attributes and
calls the compiled methods, so Python and TorchScript share them as torch's script objects are
shared. A ``NamedTuple`` class is a tuple type with field names (``p.x`` is ``p[0]``).
"""

from __future__ import annotations

import enum
import inspect
import typing

from .._tensor import Tensor
from ..nn.modules.module import Module
from . import _ir

__all__ = []

_classes = {}            # qualified name -> _ClassInfo
_enums = {}              # qualified name -> Enum class


def qualified_name(cls):
    """torch's name for a class type (``__torch__.pkg.mod.Cls``)."""
    mod = cls.__module__
    name = f"__torch__.{mod}.{cls.__qualname__}" if mod != "__main__" else \
        f"__torch__.{cls.__qualname__}"
    return name.replace(".<locals>", "")


def is_named_tuple(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def named_tuple_type(cls):
    """The tuple type of a ``NamedTuple`` class (fields typed by its annotations)."""
    from ._compiler import type_from_python
    hints = typing.get_type_hints(cls)
    return _ir.TupleT([type_from_python(hints.get(f, Tensor)) for f in cls._fields],
                      tuple(cls._fields), name=qualified_name(cls))


def enum_type(cls):
    """The TorchScript type of Enum class ``cls`` (its members are constants of it)."""
    name = qualified_name(cls)
    _enums[name] = cls
    return _ir.JitType("Enum", name=name)


def enum_class(t):
    return _enums.get(t.name) if t.kind == "Enum" else None


def enum_attr_type(t, attr):
    """The type of ``member.value`` / ``member.name`` for a value of Enum type ``t``."""
    if attr == "name":
        return _ir.StrT
    if attr == "value":
        from ._compiler import type_of_value
        members = list(enum_class(t))
        return type_of_value(members[0].value) if members else None
    return None


def scriptable_class(cls):
    """Whether ``cls`` is a user class TorchScript compiles as a class type (not a module,
    tensor, exception, builtin or library type)."""
    if not inspect.isclass(cls) or is_named_tuple(cls) or issubclass(
            cls, (Module, Tensor, BaseException, type, enum.Enum)):
        return False
    mod = cls.__module__ or ""
    if mod in ("builtins", "typing", "enum") or mod.split(".")[0] in ("glasstorch", "numpy"):
        return False
    init = cls.__dict__.get("__init__")
    return inspect.isfunction(init)


def class_info(cls):
    """The compiled class for ``cls`` (compiling it on first use)."""
    name = qualified_name(cls)
    info = _classes.get(name)
    if info is not None and info.cls is cls:
        return info
    info = _ClassInfo(cls, name)
    _classes[name] = info
    try:
        info.compile()
    except BaseException:
        del _classes[name]
        raise
    return info


def info_for(t):
    """The class behind class type ``t``, or None (module types, archive classes)."""
    return _classes.get(t.name) if t.kind == "Class" else None


class _ClassInfo:
    """A TorchScript class: its attributes' types and compiled methods."""

    is_class = True

    def __init__(self, cls, name):
        self.cls = cls
        self.class_name = name
        self.jit_type = _ir.JitType("Class", name=name)
        self.attrs = {}
        self.defining = False       # True while __init__ compiles: assignments define attributes
        self.methods = {}
        self.compiling = set()
        from ._compiler import type_from_python
        for nm, h in (getattr(cls, "__annotations__", None) or {}).items():
            if isinstance(h, str):
                continue
            self.attrs[nm] = type_from_python(h)

    def method_names(self):
        return [nm for nm, fn in vars(self.cls).items()
                if inspect.isfunction(fn) and not getattr(fn, "_torchscript_modifier", None)]

    def compile(self):
        self.defining = True
        try:
            self.method("__init__")
        finally:
            self.defining = False
        for nm in self.method_names():
            self.method(nm)

    def attr_type(self, attr):
        return self.attrs.get(attr)

    def define(self, attr, t):
        """An attribute first assigned in ``__init__``: its type is the value's (or its
        annotation's)."""
        self.attrs[attr] = t

    def method(self, name, e=None):
        got = self.methods.get(name)
        if got is not None:
            return got
        fn = self.cls.__dict__.get(name)
        if not inspect.isfunction(fn):
            raise RuntimeError(f"Tried to access nonexistent attribute or method '{name}' of "
                               f"type '{self.class_name}'.")
        if name in self.compiling:
            raise RuntimeError(f"Recursive calls are not supported in TorchScript: method "
                               f"'{name}' calls itself")
        from ._script import ScriptFunction
        self.compiling.add(name)
        try:
            got = ScriptFunction._make(fn, self, name)
        finally:
            self.compiling.discard(name)
        self.methods[name] = got
        return got


def construct(cls, init, *args):
    """``Cls(...)`` in compiled code: a new instance whose compiled ``__init__`` runs."""
    obj = cls.__new__(cls)
    init._run(obj, *args)
    return obj
