"""glasstorch.library: user-defined operators (torch.library), and ``torch.ops``.

An operator has a schema (``"mylib::scale(Tensor x, float a=1.) -> Tensor"``) and kernels
registered per dispatch key. Calling ``torch.ops.mylib.scale(x)`` binds the arguments to the
schema (with torch's errors for a missing, unknown or mistyped argument), then picks the
kernel the way torch's dispatcher does for CPU tensors:

1. the autograd layer: a ``CompositeImplicitAutograd`` kernel (differentiable by being built
   from ops) or an ``Autograd``/``AutogradCPU`` kernel runs as is; an op with a formula from
   ``register_autograd`` runs through a generated ``autograd.Function``
   (``GeneratedBackwardFor_<ns>_<op>_<overload>``) whose backward is the user's; a
   ``custom_op`` without one gets a node that refuses to backpropagate, as torch's does;
2. the backend: the ``CPU`` kernel, else ``CompositeExplicitAutograd`` (``custom_op``'s
   function for every device); without one, torch's NotImplementedError.

``torch.ops.aten.<name>`` resolves to glasstorch's own implementation of that aten operator
(``torch.ops.aten.add.Tensor`` is ``glasstorch.add``); built-in operators do not dispatch
through this registry, so kernels cannot be registered for them.
"""

from __future__ import annotations

# The typing spellings (Optional[...], List[...]) below are data, not annotations: torch's
# infer_schema accepts exactly those objects, so they must not be rewritten to X | None.
# ruff: noqa: UP006, UP007, UP045
import importlib.machinery
import inspect
import re
import sys
import types
import typing
import warnings

from ._core import dtype as _dt
from ._core.device import device as _device
from ._core.storage import root_array
from ._tensor import Tensor
from .autograd.function import Function

__all__ = ["Library", "impl", "define", "register_fake", "register_autograd",
           "register_kernel", "impl_abstract", "custom_op", "CustomOpDef", "infer_schema",
           "FunctionSchema", "Argument", "parse_schema", "OpOverload", "OpOverloadPacket",
           "ops"]

_NO_DEFAULT = object()

# ---------------------------------------------------------------------------- schemas
_BASE_TYPES = {"Tensor", "int", "SymInt", "float", "SymFloat", "bool", "SymBool", "str",
               "Scalar", "ScalarType", "Device", "Layout", "MemoryFormat", "Generator",
               "Dimname", "Storage", "Stream", "complex", "QScheme", "Any", "t"}
# TorchScript spellings of schema types, used in torch's error messages
_TS_NAMES = {"SymInt": "int", "SymFloat": "float", "SymBool": "bool", "Scalar": "number",
             "ScalarType": "int", "Layout": "int", "MemoryFormat": "int"}
# torch's integer codes of ScalarType defaults, as its schema printer shows them
_SCALAR_TYPE_CODES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                      "float32": 6, "float64": 7, "complex32": 8, "complex64": 9,
                      "complex128": 10, "bool": 11, "bfloat16": 15}


class AliasInfo:
    """An argument's alias annotation: ``Tensor(a!)`` is in alias set ``a`` and written."""

    def __init__(self, before_set, is_write):
        self.before_set = set(before_set)
        self.after_set = set(before_set)
        self.is_write = is_write

    def __str__(self):
        return "(" + "|".join(sorted(self.before_set)) + ("!" if self.is_write else "") + ")"


class Argument:
    """One argument (or return) of a ``FunctionSchema``."""

    def __init__(self, name, type, default_value=_NO_DEFAULT, kwarg_only=False,
                 alias_info=None, size=None):
        self.name = name
        self.type = type                 # the schema spelling: "Tensor?", "int[]", ...
        self._default = default_value
        self.kwarg_only = kwarg_only
        self.alias_info = alias_info
        self.N = size

    @property
    def default_value(self):
        """The default (None when there is none; see ``has_default_value``)."""
        return None if self._default is _NO_DEFAULT else self._default

    def has_default_value(self) -> bool:
        """Whether the argument has a default."""
        return self._default is not _NO_DEFAULT

    @property
    def is_write(self) -> bool:
        """Whether the operator writes into this argument (``Tensor(a!)``)."""
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def base(self) -> str:
        """The element type without ``?``/``[]``: ``Tensor`` for ``Tensor?[]``."""
        return re.match(r"\w+", self.type).group(0)

    def _type_str(self):
        if self.alias_info is None:
            return self.type
        # the annotation follows the element type: Tensor(a!), Tensor(a!)[], Tensor(a)?
        return self.base + str(self.alias_info) + self.type[len(self.base):]

    def __str__(self):
        out = self._type_str()
        if self.name:
            out += " " + self.name
        if self._default is not _NO_DEFAULT:
            out += "=" + _format_default(self._default, self.base)
        return out

    def __repr__(self):
        return str(self)


def _format_float(v):
    """A float as torch's schema printer writes it: 17 significant digits, and a trailing
    dot on integral values (``1.``)."""
    s = f"{v:.17g}"
    if not any(c in s for c in ".eni"):
        s += "."
    return s


def _format_default(value, base):
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, str):
        if base == "ScalarType":
            return str(_SCALAR_TYPE_CODES.get(value, value))
        if base == "Device":
            return value
        return '"' + value + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_default(v, base) for v in value) + "]"
    return str(value)


class FunctionSchema:
    """An operator's signature, parsed from torch's schema language:
    ``ns::name.overload(Tensor x, *, float alpha=1.) -> Tensor``."""

    def __init__(self, name, overload_name, arguments, returns):
        self.name = name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns

    @property
    def is_mutable(self) -> bool:
        """Whether an argument is written to."""
        return any(a.is_write for a in self.arguments)

    def __str__(self):
        head = self.name + ("." + self.overload_name if self.overload_name else "")
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if len(self.returns) == 1 and not self.returns[0].name:
            ret = str(self.returns[0])
        else:
            ret = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{head}({', '.join(parts)}) -> {ret}"

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class _SchemaParser:
    """A small recursive-descent parser for torch's schema strings."""

    _TOKEN = re.compile(r"\s*(->|::|[A-Za-z_][\w]*|-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d*\.\d+"
                        r"(?:[eE][-+]?\d+)?|-?\d+(?:[eE][-+]?\d+)?|\"[^\"]*\"|'[^']*'|"
                        r"[()\[\],=*?!|.])")

    def __init__(self, text):
        self.text = text
        self.tokens = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = self._TOKEN.match(text, pos)
            if not m:
                self._fail(f"unexpected character {text[pos]!r}", pos)
            self.tokens.append((m.group(1), m.start(1)))
            pos = m.end()
        self.i = 0

    def _fail(self, message, pos=None):
        if pos is None:
            pos = self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)
        raise RuntimeError(f"{message} here:\n{self.text}\n{' ' * pos}~ <--- HERE\n")

    def peek(self):
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        tok = self.peek()
        if expected is not None and tok != expected:
            found = {"->": "arrow", None: "end of string"}.get(tok, repr(tok))
            self._fail(f"expected {expected} but found {found}")
        self.i += 1
        return tok

    def parse(self):
        name, overload = "", ""
        if self.peek() != "(":
            name = self.take()
            if self.peek() == "::":
                self.take()
                name += "::" + self.take()
            if self.peek() == ".":
                self.take()
                overload = self.take()
        else:
            self._fail("expected an operator name")
        self.take("(")
        arguments, kwarg_only = [], False
        while self.peek() != ")":
            if self.peek() == "*":
                self.take()
                kwarg_only = True
            else:
                arguments.append(self.argument(kwarg_only))
            if self.peek() == ",":
                self.take()
            elif self.peek() != ")":
                self.take(")")
        self.take(")")
        self.take("->")
        returns = []
        if self.peek() == "(":
            self.take()
            while self.peek() != ")":
                returns.append(self.argument(False))
                if self.peek() == ",":
                    self.take()
            self.take(")")
        else:
            returns.append(self.argument(False))
        if self.peek() is not None:
            self._fail(f"unexpected {self.peek()!r} after the returns")
        return FunctionSchema(name, overload, arguments, returns)

    def argument(self, kwarg_only):
        start = self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)
        base = self.take()
        if base is None:
            self._fail("expected a type but found end of string")
        if base not in _BASE_TYPES:
            raise RuntimeError(
                f"\nunknown type specifier. Common valid schema types include Tensor, SymInt, "
                f"int, float, bool, Scalar; for a full list, please see "
                f"https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
                f"#func :\n{self.text}\n{' ' * start}{'~' * len(base)} <--- HERE\n")
        alias, size, suffix = None, None, ""
        while self.peek() in ("(", "[", "?"):
            tok = self.take()
            if tok == "(":
                sets = [self.take()]
                while self.peek() == "|":
                    self.take()
                    sets.append(self.take())
                write = self.peek() == "!"
                if write:
                    self.take()
                self.take(")")
                alias = AliasInfo(sets, write)
            elif tok == "[":
                if self.peek() != "]":
                    size = int(self.take())
                self.take("]")
                suffix += "[]" if size is None else f"[{size}]"
            else:
                suffix += "?"
        name = ""
        if self.peek() not in (",", ")", "=", None):
            name = self.take()
        default = _NO_DEFAULT
        if self.peek() == "=":
            self.take()
            default = self.default_value(base)
        return Argument(name, base + suffix, default, kwarg_only, alias, size)

    def default_value(self, base):
        tok = self.peek()
        if tok == "[":
            self.take()
            items = []
            while self.peek() != "]":
                items.append(self.scalar(base))
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return items
        return self.scalar(base)      # also int[2] k=1: the scalar is kept, as torch prints it

    def scalar(self, base):
        pos = self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)
        tok = self.take()
        if tok is None:
            self._fail("expected a default value but found end of string")
        if tok in ("True", "False"):
            return tok == "True"
        if tok == "None":
            return None
        if tok[0] in "\"'":
            return tok[1:-1]
        if re.fullmatch(r"-?[\d.]+(?:[eE][-+]?\d+)?", tok):
            if base in ("float", "SymFloat") or re.search(r"[.eE]", tok):
                return float(tok)
            return int(tok)
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            return tok              # an enum name: float32, contiguous_format, strided
        raise RuntimeError(f"\ninvalid numeric default value:\n{self.text}\n{' ' * pos}~ "
                           f"<--- HERE\n")


def parse_schema(schema: str) -> FunctionSchema:
    """Parse a schema string (``"ns::op.overload(Tensor x) -> Tensor"``) into a
    ``FunctionSchema``; RuntimeError, pointing at the position, when it is malformed."""
    return _SchemaParser(schema).parse()


# ---------------------------------------------------------------------------- infer_schema
def _typing_table():
    """Python annotation -> schema type, as torch's infer_schema accepts them."""
    import collections.abc as abc
    from typing import List, Optional, Sequence, Union  # noqa: UP035

    number = Union[int, float, bool]
    table = {}

    def with_lists(py, name, optional_list=True):
        table[py] = name
        table[Optional[py]] = name + "?"
        for seq in (Sequence, List, abc.Sequence, list):
            table[seq[py]] = name + "[]"
            if optional_list:
                table[Optional[seq[py]]] = name + "[]?"

    table[Tensor] = "Tensor"
    table[Optional[Tensor]] = "Tensor?"
    for seq in (Sequence, List, abc.Sequence, list):
        table[seq[Tensor]] = "Tensor[]"
        table[seq[Optional[Tensor]]] = "Tensor?[]"
    with_lists(int, "SymInt")
    with_lists(float, "float")
    with_lists(bool, "bool")
    table[str] = "str"
    table[Optional[str]] = "str?"
    table[number] = "Scalar"
    table[Optional[number]] = "Scalar?"
    for seq in (Sequence, List, abc.Sequence, list):
        table[seq[number]] = "Scalar[]"
    table[_dt.dtype] = "ScalarType"
    table[Optional[_dt.dtype]] = "ScalarType?"
    table[_device] = "Device"
    table[Optional[_device]] = "Device?"
    returns = {Tensor: "Tensor", List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",
               int: "SymInt", float: "float", bool: "bool", number: "Scalar"}
    return table, returns


_TYPE_TABLES = []


def _tables():
    if not _TYPE_TABLES:
        _TYPE_TABLES.append(_typing_table())
    return _TYPE_TABLES[0]


def _schema_default(value, param_name, error):
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float):
            return repr(value) if value == value and abs(value) != float("inf") else str(value)
        return f'"{value}"' if isinstance(value, str) else str(value)
    if isinstance(value, _dt.dtype):
        return str(value).split(".", 1)[-1]
    if isinstance(value, _device):
        return f'"{value}"'
    error(f"Parameter {param_name} has an unsupported default value type {type(value)}. "
          f"Please file an issue on GitHub so we can prioritize this.")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None) -> str:
    """The schema string of a Python function from its type hints, as torch writes it:
    ``def f(x: Tensor, y: float) -> Tensor`` gives ``"(Tensor x, float y) -> Tensor"``.
    ``mutates_args`` names the Tensor arguments written in place (or is ``"unknown"``);
    ``op_name`` prefixes the name."""
    sig = inspect.signature(prototype_function)
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    table, return_table = _tables()
    if mutates_args != "unknown" and (isinstance(mutates_args, str)
                                      or not isinstance(mutates_args, (list, tuple, set,
                                                                       frozenset, dict))):
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    params, seen_kwonly, mutated_seen = [], False, set()
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = hints.get(name, p.annotation)
        schema_type = table.get(ann) if isinstance(ann, typing.Hashable) else None
        if schema_type is None:
            error(f"Parameter {name} has unsupported type {ann}. The valid types are: "
                  f"{table.keys()}.")
        if p.kind == p.KEYWORD_ONLY and not seen_kwonly:
            params.append("*")
            seen_kwonly = True
        mutated = name in mutates_args if mutates_args != "unknown" else \
            schema_type.startswith("Tensor")        # "unknown": every Tensor may be written
        if mutated:
            mutated_seen.add(name)
            if not schema_type.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections "
                      f"of Tensors can be mutated")
            schema_type = "Tensor" + f"(a{idx}!)" + schema_type[len("Tensor"):]
        text = f"{schema_type} {name}"
        if p.default is not inspect.Parameter.empty:
            text += "=" + _schema_default(p.default, name, error)
        params.append(text)
    if mutates_args != "unknown":
        missing = set(mutates_args) - mutated_seen
        if missing:
            error(f"{missing} in mutates_args were not found in the custom op's signature. "
                  f"mutates_args should contain the names of all args that the custom op "
                  f"mutates, or just the string 'unknown' if you don't know.")
    if sig.return_annotation is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    ret = hints.get("return", sig.return_annotation)
    ret_text = _return_schema(ret, return_table, error)
    return f"{op_name or ''}({', '.join(params)}) -> {ret_text}"


def _return_schema(ret, table, error):
    if ret is None or ret is type(None):
        return "()"
    origin = typing.get_origin(ret)
    if origin is tuple:
        args = typing.get_args(ret)
        if args == () or args == ((),):
            return "()"
        if Ellipsis in args:
            error(f"Return has unsupported type {ret}. The valid types are: {table}.")
        return "(" + ", ".join(_return_schema(a, table, error) for a in args) + ")"
    out = table.get(ret) if isinstance(ret, typing.Hashable) else None
    if out is None:
        error(f"Return has unsupported type {ret}. The valid types are: {table}.")
    return out


# ---------------------------------------------------------------------------- the registry
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "mps": "MPS", "xpu": "XPU"}
_DISPATCH_KEYS = {"CPU", "CUDA", "Meta", "MPS", "XPU", "HIP", "XLA", "Lazy", "MTIA", "HPU",
                  "PrivateUse1", "CompositeExplicitAutograd", "CompositeImplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU",
                  "AutogradCUDA", "AutogradMeta", "AutogradOther", "BackendSelect", "Python",
                  "Functionalize", "ADInplaceOrView", "AutocastCPU", "AutocastCUDA",
                  "FuncTorchBatched", "Undefined"}
_AUTOGRAD_KEYS = ("CompositeImplicitAutograd", "AutogradCPU", "Autograd")
_BACKEND_KEYS = ("CPU", "CompositeExplicitAutograd")
_RESERVED_NAMESPACES = ("prim",)


class _OpEntry:
    """One overload of an operator: its schema and what is registered for it."""

    def __init__(self, qualname, overload, schema, lib):
        self.qualname = qualname
        self.overload = overload or "default"
        self.schema = schema
        self.lib = lib
        self.fake = None
        self.backward = None
        self.setup_context = None
        self.custom = None           # the CustomOpDef that defined it, if any
        self._function = None

    def kernels(self):
        return _KERNELS.setdefault((self.qualname, self.overload), {})

    @property
    def dotted(self):
        return self.qualname.replace("::", ".") + "." + self.overload


_DEFS: dict = {}       # qualname -> {overload: _OpEntry}, in definition order
_KERNELS: dict = {}    # (qualname, overload) -> {dispatch key: (fn, lib)}
_DEF_LIBS: dict = {}   # namespace -> the Library(ns, "DEF") that owns it


def _split_qualname(qualname):
    if not isinstance(qualname, str) or qualname.count("::") != 1:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got '
                         f'{qualname}. The qualname passed to the torch.library APIs must '
                         f'consist of a namespace and a name, e.g. aten::sin')
    ns, name = qualname.split("::")
    return ns, name


def _entry(qualname, overload="default"):
    return _DEFS.get(qualname, {}).get(overload)


def _resolve_op(op):
    """(qualname, overload) of an op given as "ns::name[.overload]", an OpOverload, an
    OpOverloadPacket or a CustomOpDef."""
    if isinstance(op, CustomOpDef):
        return op._qualname, "default"
    if isinstance(op, OpOverload):
        return op._qualname, op._overloadname
    if isinstance(op, OpOverloadPacket):
        return op._qualified_op_name, "default"
    ns, name = _split_qualname(op)
    name, _, overload = name.partition(".")
    return f"{ns}::{name}", overload or "default"


def _dispatch_key_for(device_type):
    if device_type in (None, "default"):
        return "CompositeExplicitAutograd"
    if device_type in _DISPATCH_KEYS:
        return device_type
    d = _device(device_type)
    return _DEVICE_KEYS.get(d.type, d.type)


def _device_types(device_types):
    if device_types is None or isinstance(device_types, str):
        return [device_types]
    return list(device_types)


def _clear_cache(qualname):
    ns, name = qualname.split("::")
    namespace = ops._namespaces.get(ns)
    if namespace is not None:
        namespace.__dict__.pop(name, None)


# ---------------------------------------------------------------------------- calling
def _ts_type(t):
    """The TorchScript name of schema type ``t`` (how torch's call errors name types)."""
    if t.endswith("?"):
        return f"Optional[{_ts_type(t[:-1])}]"
    m = re.fullmatch(r"(.*)\[\d*\]", t)
    if m:
        return f"List[{_ts_type(m.group(1))}]"
    return _TS_NAMES.get(t, t)


def _matches(value, t):
    """Whether ``value`` fits schema type ``t``; returns (ok, converted value)."""
    if t.endswith("?"):
        return (True, None) if value is None else _matches(value, t[:-1])
    m = re.fullmatch(r"(.*)\[(\d*)\]", t)
    if m:
        elem, size = m.group(1), m.group(2)
        if size and elem in ("int", "SymInt", "bool", "float") and _matches(value, elem)[0] \
                and not isinstance(value, (list, tuple)):
            return True, [value] * int(size)           # int[2] k=3 means [3, 3]
        if not isinstance(value, (list, tuple)):
            return False, value
        out = []
        for v in value:
            ok, v = _matches(v, elem)
            if not ok:
                return False, value
            out.append(v)
        return True, out
    if t == "Tensor":
        return isinstance(value, Tensor), value
    if t in ("int", "SymInt"):
        if isinstance(value, Tensor) and value.dim() == 0 and not value.is_floating_point():
            return True, int(value.item())
        return isinstance(value, int), value
    if t in ("float", "SymFloat"):
        if isinstance(value, Tensor) and value.dim() == 0:
            return True, float(value.item())
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if t in ("bool", "SymBool"):
        return isinstance(value, bool), value
    if t == "str":
        return isinstance(value, str), value
    if t == "Scalar":
        return isinstance(value, (int, float, complex)), value
    if t == "complex":
        return isinstance(value, (int, float, complex)), value
    if t == "ScalarType":
        return isinstance(value, _dt.dtype), value
    if t == "Device":
        if isinstance(value, (str, _device)):
            return True, _device(value)
        return False, value
    if t == "Generator":
        from ._core.random import Generator
        return isinstance(value, Generator), value
    return True, value          # Layout, MemoryFormat, Dimname, Any: taken as given


class _BindError(RuntimeError):
    pass


def _bind(entry, args, kwargs):
    """Bind a call to ``entry``'s schema: returns (positional args, keyword-only args), with
    torch's normalisation (keywords given for positional parameters become positional;
    trailing defaults are left out) or raises _BindError with torch's message."""
    schema = entry.schema
    decl = f"Declaration: {schema}"
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        n_kw = len(schema.arguments) - len(positional)
        if n_kw:
            raise _BindError(f"{entry.qualname}() takes {len(positional)} positional "
                             f"argument(s) but {len(args)} was/were given.  {decl}")
        raise _BindError(f"{entry.qualname}() expected at most {len(positional)} argument(s) "
                         f"but received {len(args)} argument(s). {decl}")
    names = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in names:
            raise _BindError(f"Unknown keyword argument '{k}' for operator '{entry.qualname}'"
                             f". Schema: {schema}")
    values = {}
    for a, v in zip(positional, args):
        if a.name in kwargs:
            raise _BindError(f"Argument '{a.name}' specified both as positional and keyword "
                             f"argument. Schema: {schema}")
        values[a.name] = v
    values.update(kwargs)
    for pos, a in enumerate(schema.arguments):
        if a.name not in values:
            if not a.has_default_value():
                raise _BindError(f"{entry.qualname}() is missing value for argument "
                                 f"'{a.name}'. {decl}")
            continue
        ok, converted = _matches(values[a.name], a.type)
        if not ok:
            v = values[a.name]
            raise _BindError(
                f"{entry.qualname}() Expected a value of type '{_ts_type(a.type)}' for "
                f"argument '{a.name}' but instead found type '{type(v).__name__}'.\n"
                f"Position: {pos}\nValue: {v!r}\n{decl}\nCast error details: Unable to cast "
                f"{v} to {_ts_type(a.type)}")
        values[a.name] = converted
    out_args = []
    last_given = max((i for i, a in enumerate(positional) if a.name in values), default=-1)
    for a in positional[:last_given + 1]:
        out_args.append(values[a.name] if a.name in values else a.default_value)
    out_kwargs = {a.name: values[a.name] for a in schema.arguments
                  if a.kwarg_only and a.name in values}
    return out_args, out_kwargs


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _call(entry, args, kwargs):
    """Run one overload: bind, pick the kernel, apply autograd and mutation rules."""
    args, kwargs = _bind(entry, args, kwargs)
    kernels = entry.kernels()
    for key in ("CompositeImplicitAutograd", "AutogradCPU", "Autograd"):
        if key in kernels:
            return kernels[key][0](*args, **kwargs)
    kernel = next((kernels[k][0] for k in _BACKEND_KEYS if k in kernels), None)
    if kernel is None:
        available = ", ".join(sorted(kernels)) or "none"
        raise NotImplementedError(
            f"Could not run '{entry.qualname}' with arguments from the 'CPU' backend. This "
            f"could be because the operator doesn't exist for this backend. "
            f"'{entry.qualname}' has kernels for: [{available}]; register one for 'cpu' "
            f"(torch.library.register_kernel / Library.impl(..., 'CPU')) or for all devices "
            f"('CompositeExplicitAutograd').")
    from .autograd.grad_mode import is_grad_enabled, no_grad
    needs_grad = is_grad_enabled() and any(t.requires_grad for t in
                                          _tensors_in(list(args) + list(kwargs.values())))
    differentiable_outputs = any(r.base == "Tensor" for r in entry.schema.returns)
    if needs_grad and differentiable_outputs and (entry.backward is not None
                                                  or entry.custom is not None):
        output = _autograd_function(entry).apply(_CallInfo(entry, kernel, args, kwargs),
                                                 *_flatten(args))
    elif entry.custom is not None:
        with no_grad():      # a custom op's kernel runs below autograd, as in torch
            output = kernel(*args, **kwargs)
    else:
        output = kernel(*args, **kwargs)
    if entry.custom is not None:
        _check_custom_output(entry, args, output)
    _bump_mutated(entry, args, kwargs)
    return output


def _bump_mutated(entry, args, kwargs):
    positional = [a for a in entry.schema.arguments if not a.kwarg_only]
    values = dict(zip((a.name for a in positional), args))
    values.update(kwargs)
    for a in entry.schema.arguments:
        if a.is_write and a.name in values:
            for t in _tensors_in([values[a.name]]):
                t._bump_version()


def _check_custom_output(entry, args, output):
    """A custom op's outputs must be new tensors: neither an input nor a view of one."""
    outs = output if isinstance(output, (tuple, list)) else (output,)
    expected = entry.schema.returns
    if len(expected) == 1 and expected[0].type == "Tensor" and not isinstance(output, Tensor):
        raise RuntimeError(f"Unable to cast {output!r} to Tensor")
    if len(expected) > 1 and not isinstance(output, (tuple, list)):
        raise TypeError(f"Object of type '{type(output).__name__}' is not an instance of "
                        f"'sequence'")
    inputs = list(_tensors_in(args))
    seen = []
    for out in outs:
        if not isinstance(out, Tensor):
            continue
        root = root_array(out._data)
        if any(out is t or (out.numel() and root is root_array(t._data)) for t in inputs) or \
                any(root is r for r in seen):
            raise RuntimeError(
                f"{entry.custom._name} (with implementation in "
                f"{inspect.getmodule(entry.custom._init_fn)}): The output of this custom "
                f"operator (1) must not also be an input to this custom operator and (2) may not "
                f"alias any inputs to this custom operator or other returns. The most common way "
                f"to trigger this error is if we have y = custom_op(x) and y and x are the same "
                f"Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
                f"return x.clone()) or refactor the custom operator to not return y.")
        if out.numel():
            seen.append(root)


# -- autograd through registered formulas
class _CallInfo:
    """What the generated Function needs about one call (passed through ``apply``)."""

    def __init__(self, entry, kernel, args, kwargs):
        self.entry, self.kernel, self.kwargs = entry, kernel, kwargs
        self.layout = [len(a) if _is_tensor_list(a) else None for a in args]
        self.args = args

    def unflatten(self, flat):
        out, i = [], 0
        for n in self.layout:
            if n is None:
                out.append(flat[i])
                i += 1
            else:
                out.append(list(flat[i:i + n]))
                i += n
        return out


def _is_tensor_list(a):
    return isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a)


def _flatten(args):
    flat = []
    for a in args:
        flat.extend(a) if _is_tensor_list(a) else flat.append(a)
    return flat


def _user_needs_input_grad(info):
    """``ctx.needs_input_grad`` as torch's generated Function reports it: one entry per input
    with tensor lists flattened, keyword-only inputs after the positional ones, and a last
    False for the (non-tensor) call state torch passes along."""
    flat = _flatten(list(info.args) + list(info.kwargs.values()))
    return tuple(isinstance(v, Tensor) and v.requires_grad for v in flat) + (False,)


def _autograd_function(entry):
    """The ``autograd.Function`` that runs ``entry``'s kernel and the user's backward; named
    like torch's (``GeneratedBackwardFor_<ns>_<name>_<overload>``)."""
    if entry._function is not None:
        return entry._function
    ns, name = entry.qualname.split("::")
    op_label = f"{ns}.{name}.{entry.overload}"

    def forward(ctx, info, *flat):
        args = info.unflatten(flat)
        output = info.kernel(*args, **info.kwargs)
        ctx._info = info
        if entry.setup_context is not None:
            flat_needs = ctx.needs_input_grad
            ctx.needs_input_grad = _user_needs_input_grad(info)
            try:
                if any(a.kwarg_only for a in entry.schema.arguments):
                    entry.setup_context(ctx, tuple(args), output,
                                        keyword_only_inputs=dict(info.kwargs))
                else:
                    entry.setup_context(ctx, tuple(args), output)
            finally:
                ctx.needs_input_grad = flat_needs
        return tuple(output) if isinstance(output, list) else output

    def backward(ctx, *grads):
        if entry.backward is None:
            raise RuntimeError(f"Trying to backward through {op_label} but no autograd "
                               f"formula was registered. Please use register_autograd to add "
                               f"one.")
        info = ctx._info
        flat_needs = ctx.needs_input_grad
        ctx.needs_input_grad = _user_needs_input_grad(info)
        try:
            result = entry.backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = flat_needs
        if not isinstance(result, tuple):
            result = (result,)
        # one gradient per positional input; keyword-only inputs get None (added here)
        n_args, n_kwonly = len(info.args), len(info.kwargs)
        if len(result) < n_args:
            raise RuntimeError(f"function {type(ctx).__name__} returned an incorrect number of "
                               f"gradients (expected {n_args + n_kwonly}, got "
                               f"{len(result) + n_kwonly})")
        if len(result) > n_args and (any(n is not None for n in info.layout)
                                     or any(g is not None for g in result[n_args:])):
            raise RuntimeError(f"Expected the return from backward of {op_label} to be of the "
                               f"same structure as the inputs: one gradient per positional "
                               f"input ({n_args}), got {len(result)}")
        flat = []
        for n, g in zip(info.layout, result[:n_args]):
            if n is None:
                flat.append(g)
            else:
                flat.extend(g if g is not None else [None] * n)
        return (None, *flat)

    cls_name = "GeneratedBackwardFor_" + op_label.replace(".", "_")
    entry._function = type(cls_name, (Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
        "__module__": "torch.autograd.function"})
    return entry._function


# ---------------------------------------------------------------------------- Library
class Library:
    """A set of operator definitions and kernels in one namespace (``torch.library.Library``).

    ``kind`` is ``"DEF"`` (defines the namespace: only one per namespace), ``"FRAGMENT"``
    (more definitions for it) or ``"IMPL"`` (kernels only, optionally all for
    ``dispatch_key``). ``define`` adds a schema, ``impl`` a kernel; ``_destroy`` takes back
    everything this library registered.
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             f"with another name.")
        if kind == "DEF":
            if ns == "aten" or _DEF_LIBS.get(ns) is not None:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    f"please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    f"you were trying to specify implementations, consider using "
                    f"TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    f"define operators for a single namespace in a distributed way, you can "
                    f"use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _DEF_LIBS[ns] = self
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs = set()
        self._op_impls = set()
        self._registrations = []          # (qualname, overload, what, key)
        self._destroyed = False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator of this namespace from its schema string
        (``"foo(Tensor x) -> Tensor"``); returns the name as written."""
        if self.kind == "IMPL":
            raise RuntimeError(f"def(\"{schema.split('(')[0]}\"): Cannot define an operator "
                               f"inside of a TORCH_LIBRARY_IMPL block.  All def()s should be "
                               f"placed in the (unique) TORCH_LIBRARY block for their "
                               f"namespace.")
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = parse_schema(schema)
        name = parsed.name
        if "::" in name:
            ns, bare = name.split("::")
            if ns != self.ns:
                raise RuntimeError(
                    f"Explicitly provided namespace ({ns}) in schema string does not match "
                    f"namespace of enclosing TORCH_LIBRARY block ({self.ns}).  Move this "
                    f"definition to the (unique) TORCH_LIBRARY block corresponding to this "
                    f"namespace (and consider deleting the namespace from your schema string.)")
        else:
            bare = name
            parsed.name = f"{self.ns}::{name}"
        qualname = f"{self.ns}::{bare}"
        overload = parsed.overload_name or "default"
        if _entry(qualname, overload) is not None:
            raise RuntimeError(f"Tried to register an operator ({parsed}) with the same name "
                               f"and overload name multiple times. Each overload's schema "
                               f"should only be registered with a single call to def().")
        _DEFS.setdefault(qualname, {})[overload] = _OpEntry(qualname, overload, parsed, self)
        self._op_defs.add(qualname + "." + overload)
        self._registrations.append((qualname, overload, "def", None))
        _clear_cache(qualname)
        return schema.split("(")[0]

    def impl(self, op_name, fn, dispatch_key="", *, allow_override=False):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` ("CPU",
        "CompositeExplicitAutograd", "Autograd", ...; default: the library's key, else
        CompositeImplicitAutograd). The operator may be defined later."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key or "CompositeImplicitAutograd"
        elif self.kind == "IMPL" and self.dispatch_key and dispatch_key != self.dispatch_key:
            raise RuntimeError(
                f"impl(\"{op_name}\", ...): Explicitly provided dispatch key ({dispatch_key}) is "
                f"inconsistent with the dispatch key of the enclosing TORCH_LIBRARY_IMPL block "
                f"({self.dispatch_key}).  Please declare a separate TORCH_LIBRARY_IMPL block "
                f"for this dispatch key and move your impl() there.")
        if dispatch_key not in _DISPATCH_KEYS:
            raise ValueError(f"could not parse dispatch key: {dispatch_key}")
        if isinstance(op_name, (OpOverload, OpOverloadPacket)):
            qualname, overload = _resolve_op(op_name)
        else:
            name = op_name.split("::", 1)[1] if "::" in op_name else op_name
            bare, _, overload = name.partition(".")
            qualname, overload = f"{self.ns}::{bare}", overload or "default"
        ns = qualname.split("::")[0]
        if ns == "aten" and _aten_function(qualname.split("::")[1]) is not None:
            raise NotImplementedError(
                f"glasstorch's built-in operator {qualname} does not dispatch through "
                f"torch.library, so a kernel registered for it would never run; define your "
                f"own operator (torch.library.custom_op) and call that instead.")
        kernels = _KERNELS.setdefault((qualname, overload), {})
        if dispatch_key in kernels and not allow_override:
            warnings.warn(f"Overriding a previously registered kernel for the same operator "
                          f"and the same dispatch key\n  operator: {qualname}.{overload}\n"
                          f"  dispatch key: {dispatch_key}", UserWarning, stacklevel=2)
        kernels[dispatch_key] = (fn, self)
        self._op_impls.add(f"{qualname}.{overload}/{dispatch_key}")
        self._registrations.append((qualname, overload, "impl", dispatch_key))

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        qualname, overload = _resolve_op(op_name if "::" in str(op_name)
                                         else f"{self.ns}::{op_name}")
        entry = _entry(qualname, overload)
        if entry is None:
            raise RuntimeError(f"operator {qualname} does not exist")
        entry.fake = fn
        self._registrations.append((qualname, overload, "fake", None))

    def _destroy(self):
        """Take back every definition and kernel this library registered."""
        for qualname, overload, what, key in reversed(self._registrations):
            if what == "def":
                overloads = _DEFS.get(qualname, {})
                if overloads.get(overload) is not None and overloads[overload].lib is self:
                    del overloads[overload]
                    if not overloads:
                        _DEFS.pop(qualname, None)
            elif what == "impl":
                kernels = _KERNELS.get((qualname, overload), {})
                if kernels.get(key, (None, None))[1] is self:
                    del kernels[key]
            elif what == "fake":
                entry = _entry(qualname, overload)
                if entry is not None:
                    entry.fake = None
            _clear_cache(qualname)
        self._registrations.clear()
        self._op_defs.clear()
        self._op_impls.clear()
        if _DEF_LIBS.get(self.ns) is self:
            del _DEF_LIBS[self.ns]
        self._destroyed = True


_FRAGMENTS: dict = {}


def _fragment(ns):
    """A long-lived FRAGMENT library for registrations made through the module functions."""
    lib = _FRAGMENTS.get(ns)
    if lib is None:
        lib = _FRAGMENTS[ns] = Library(ns, "FRAGMENT")
    return lib


def define(qualname, schema, *, lib=None, tags=()):
    """Define operator ``qualname`` (``"ns::name"``) with ``schema`` (``"(Tensor x) ->
    Tensor"``); kernels are added with ``impl``/``register_kernel``."""
    ns, name = _split_qualname(qualname)
    (lib or _fragment(ns)).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` as ``qualname``'s kernel for device ``types`` ("cpu", "cuda", a list
    of them, "default" for all) or a dispatch key name; usable as a decorator."""
    qual, overload = _resolve_op(qualname)
    keys = [_dispatch_key_for(t) for t in _device_types(types)]

    def register(fn):
        target = lib or _fragment(qual.split("::")[0])
        for key in keys:
            target.impl(qual.split("::")[1] + ("" if overload == "default" else
                                               "." + overload), fn, key)
        return fn
    if func is None:
        return register
    register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as ``op``'s kernel for ``device_types`` ("cpu", a list, or None for
    all devices); usable as a decorator. Returns ``func``."""
    if not isinstance(op, CustomOpDef):
        entry = _entry(*_resolve_op(op))
        op = entry.custom if entry is not None and entry.custom is not None else op
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op, device_types if device_types is not None else "default", func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Register ``func`` as ``op``'s fake (meta) implementation: it computes output shapes
    and dtypes for tracing. glasstorch keeps it with the op (no tracer calls it yet)."""
    if isinstance(op, CustomOpDef):
        return op.register_fake(func) if func is not None else op.register_fake

    def register(fn):
        qualname, overload = _resolve_op(op)
        entry = _entry(qualname, overload)
        if entry is None:
            raise RuntimeError(f"operator {qualname} does not exist")
        entry.fake = fn
        return fn
    return register if func is None else register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The former name of ``register_fake`` (deprecated in torch)."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`."
                  " Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Make ``op`` differentiable: ``setup_context(ctx, inputs, output)`` saves what is
    needed, ``backward(ctx, *grads)`` returns one gradient per input (runs through a
    generated ``autograd.Function``)."""
    qualname, overload = _resolve_op(op)
    entry = _entry(qualname, overload)
    if entry is None:
        raise RuntimeError(f"operator {qualname} does not exist")
    if entry.schema.is_mutable:
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                           f"{entry.custom if entry.custom is not None else qualname} with "
                           f"schema {entry.schema}. Please create a functional operator and "
                           f"register an autograd formula for that.")
    entry.backward = backward
    entry.setup_context = setup_context


# ---------------------------------------------------------------------------- custom_op
class CustomOpDef:
    """An operator made by ``custom_op``: callable like the function it wraps, with
    ``register_kernel``, ``register_fake`` and ``register_autograd`` to extend it."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._schema = schema
        self._init_fn = fn
        self._tags = tuple(tags)
        previous = _entry(self._qualname)
        if previous is not None and previous.custom is not None:
            previous.custom._lib._destroy()     # redefining a custom op replaces it
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema)
        entry = _entry(self._qualname)
        entry.custom = self
        self._opoverload = getattr(getattr(ops, namespace), name).default

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """Register ``fn`` as the kernel for ``device_types`` ("cpu", "cuda", a list, or None
        for all); usable as a decorator. Returns ``fn``."""
        def register(func):
            for d in _device_types(device_types):
                self._lib.impl(self._name, func, _dispatch_key_for(d), allow_override=True)
            return func
        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        """Register the fake (shape-only) implementation; returns ``fn``."""
        _entry(self._qualname).fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Make the op differentiable with ``backward`` (and ``setup_context``); see
        ``torch.library.register_autograd``."""
        register_autograd(self._qualname, backward, setup_context=setup_context)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap a Python function into an operator ``name`` (``"ns::op"``), usable as a
    decorator: the schema comes from its type hints (or ``schema``), ``mutates_args`` names
    the Tensor arguments it writes in place, and ``device_types`` limits its kernel to those
    devices. Returns a ``CustomOpDef``."""
    def inner(func):
        namespace, opname = _split_qualname(name)
        if schema is None:
            schema_str = infer_schema(func, mutates_args=mutates_args)
        else:
            schema_str = schema
        parsed = parse_schema(opname + schema_str)
        if any(a.kwarg_only and a.base == "Tensor" for a in parsed.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {opname}{schema_str}")
        result = CustomOpDef(namespace, opname, schema_str, func, tags or ())
        for d in _device_types(device_types):
            result._lib.impl(opname, func, _dispatch_key_for(d))
        return result
    return inner if fn is None else inner(fn)


# ---------------------------------------------------------------------------- torch.ops
class OpOverload:
    """One overload of an operator (``torch.ops.ns.op.default``): callable."""

    def __init__(self, packet, overload, fn=None):
        self.overloadpacket = packet
        self._overloadname = overload
        self._qualname = packet._qualified_op_name
        self.namespace = packet._namespace
        self._builtin = fn
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self._qualname

    @property
    def op(self):
        """The callable behind this overload."""
        return self

    @property
    def _schema(self):
        entry = _entry(self._qualname, self._overloadname)
        if entry is None:
            raise AttributeError(f"glasstorch keeps no schema for the built-in operator "
                                 f"{self.name()}")
        return entry.schema

    def name(self) -> str:
        """``"ns::op"`` for the default overload, ``"ns::op.overload"`` otherwise."""
        if self._overloadname == "default":
            return self._qualname
        return f"{self._qualname}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        if self._builtin is not None:
            return self._builtin(*args, **kwargs)
        entry = _entry(self._qualname, self._overloadname)
        if entry is None:
            raise RuntimeError(f"operator {self.name()} is no longer defined")
        try:
            return _call(entry, args, kwargs)
        except _BindError as e:
            raise RuntimeError(str(e)) from None

    def __repr__(self):
        return (f"<OpOverload(op='{self._qualname.replace('::', '.')}', "
                f"overload='{self._overloadname}')>")

    def __str__(self):
        return f"{self._qualname.replace('::', '.')}.{self._overloadname}"


class OpOverloadPacket:
    """All overloads of an operator (``torch.ops.ns.op``): calling it picks the overload
    whose schema fits the arguments; ``.default``/``.<overload>`` names one."""

    def __init__(self, qualname, overload_names, fn=None):
        self._qualified_op_name = qualname
        self._namespace, self.__name__ = qualname.split("::")
        self._overload_names = list(overload_names)
        self._builtin = fn
        self._cache = {}

    @property
    def op(self):
        """The callable behind the packet."""
        return self

    def overloads(self) -> list:
        """The names of this operator's overloads."""
        return list(self._overload_names)

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        if key in self._overload_names:
            cached = self.__dict__["_cache"].get(key)
            if cached is None:
                cached = self._cache[key] = OpOverload(self, key, self._builtin)
            return cached
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")

    def __call__(self, *args, **kwargs):
        if self._builtin is not None:
            return self._builtin(*args, **kwargs)
        entries = [e for e in (_entry(self._qualified_op_name, o) for o in self._overload_names)
                   if e is not None]
        if len(entries) == 1:
            return getattr(self, entries[0].overload)(*args, **kwargs)
        errors = []
        for e in entries:
            try:
                _bind(e, args, kwargs)
            except _BindError as err:
                errors.append(str(err))
                continue
            return _call(e, args, kwargs)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                           "schema:\n" + "\n\n".join(errors) + "\n")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self):
        return self._qualified_op_name.replace("::", ".")


class _OpNamespace(types.ModuleType):
    """``torch.ops.<ns>``: its operators as attributes (``torch.ops.mylib.scale``)."""

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qualname = f"{self.name}::{op_name}"
        if self.name == "quantized":
            from .ao.nn.quantized import _library  # noqa: F401 - defines quantized::*
        overloads = _DEFS.get(qualname)
        if overloads:
            packet = OpOverloadPacket(qualname, list(overloads))
        elif self.name == "aten" and _aten_function(op_name) is not None:
            packet = OpOverloadPacket(qualname, _aten_overloads()[op_name],
                                      _aten_function(op_name))
        else:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        self.__dict__[op_name] = packet      # cached until the op is redefined or destroyed
        return packet

    def __dir__(self):
        names = {q.split("::")[1] for q in _DEFS if q.split("::")[0] == self.name}
        return sorted(names | {"name"})

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


class _Ops(types.ModuleType):
    """``torch.ops``: one ``_OpNamespace`` per namespace, made on first access."""

    def __init__(self):
        super().__init__("torch.ops")
        self._namespaces = {}
        self.loaded_libraries = set()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        namespace = self._namespaces.get(name)
        if namespace is None:
            namespace = self._namespaces[name] = _OpNamespace(name)
        return namespace

    def __iter__(self):
        return iter(self._namespaces.values())

    def __repr__(self):
        return "<module 'torch.ops' from '_ops.py'>"


ops = _Ops()
# importable as a module (``import torch.ops``), like torch's
ops.__spec__ = importlib.machinery.ModuleSpec(__name__.rsplit(".", 1)[0] + ".ops", None)
sys.modules[ops.__spec__.name] = ops


# -- aten: glasstorch's own operators under their aten names
_ATEN_TABLE = {}


def _aten_overloads():
    if not _ATEN_TABLE:
        from ._C._aten_overloads import OVERLOADS
        name = None
        for line in OVERLOADS.splitlines():
            if not line.strip():
                continue
            if line.startswith(" "):
                _ATEN_TABLE[name].extend(line.split())
            else:
                name, *overloads = line.split()
                _ATEN_TABLE[name] = overloads
    return _ATEN_TABLE


def _aten_function(name):
    """glasstorch's implementation of aten operator ``name``: the flat function, the
    ``nn.functional`` one, or the Tensor method (in-place ``add_``...); None if none."""
    if name not in _aten_overloads():
        return None
    import glasstorch

    from ._callable_patch import is_op
    from .nn import functional as F
    for namespace in (vars(glasstorch), vars(F)):
        fn = namespace.get(name)
        if fn is not None and is_op(name, fn):
            return fn
    method = vars(Tensor).get(name)
    return method if inspect.isfunction(method) else None

