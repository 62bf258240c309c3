"""``torch.jit.script``: TorchScript functions and modules compiled by glasstorch's frontend
(``_compiler``), and the ``ScriptModule``/``ScriptFunction`` types.

A scripted function is a ``ScriptFunction`` with ``.graph`` (the typed IR), ``.code`` and
``.schema``; calling it checks the arguments against the schema and runs Python generated from
the graph. A scripted module is a ``RecursiveScriptModule`` that shares its parameters and
buffers with the original (as torch's does), has scripted submodules, and compiled ``forward``
and the methods it calls (plus ``@torch.jit.export`` ones). Submodules from glasstorch's own
``nn`` library stand for torch's builtin modules: their Python ``forward`` runs against the
scripted module's shared parameters.
"""

from __future__ import annotations

import collections
import inspect
import pickle
import types
import warnings
import weakref

from .._tensor import Tensor
from ..nn.modules.module import Module
from . import _ir
from ._internal import FunctionModifiers
from ._state import _enabled

__all__ = ["ScriptModule", "RecursiveScriptModule", "ScriptFunction", "Attribute", "script",
           "script_method", "freeze", "optimize_for_inference", "interface"]


class FunctionSchema:
    """A TorchScript signature (``f(Tensor x, int n=3) -> Tensor``): ``name``, ``arguments``
    (name, type, default) and the return type; ``str()`` is torch's spelling."""

    def __init__(self, name, names, types_, defaults, ret):
        self.name = name
        self.arguments = list(zip(names, types_, defaults))
        self.returns = ret

    def __str__(self):
        parts = []
        for nm, t, d in self.arguments:
            s = f"{t.ir()} {nm}"
            if d is not inspect.Parameter.empty:
                s += "=" + _ir.schema_literal(d)
            parts.append(s)
        ret = self.returns.ir()
        if self.returns.kind == "Tuple" and self.returns.name:
            ret = self.returns.name        # a NamedTuple is named by its class in schemas
        elif self.returns.kind == "Tuple":   # torch parenthesises a tuple return once more
            ret = f"({ret})"
        return f"{self.name}({', '.join(parts)}) -> {ret}"

    __repr__ = __str__


class ScriptFunction:
    """A TorchScript-compiled function (``torch.jit.ScriptFunction``): call it like the original;
    ``.graph``, ``.code``, ``.schema``, ``.name``. Only ``torch.jit.script`` makes them."""

    def __init__(self, *args, **kwargs):
        raise TypeError("ScriptFunction: No constructor defined!")

    def __reduce__(self):
        raise pickle.PickleError("ScriptFunction cannot be pickled")

    @classmethod
    def _make(cls, fn, self_info=None, name=None, compiler=None):
        """Compile Python function ``fn``, or with ``compiler`` (a FunctionCompiler over an
        archive's source) the function that compiler holds."""
        from ._compiler import FunctionCompiler
        obj = object.__new__(cls)
        obj._fn = fn
        obj.__name__ = obj.name = name or fn.__name__
        obj.__doc__ = getattr(fn, "__doc__", None)
        obj.__wrapped__ = fn
        obj._has_self = self_info is not None
        obj.compiled = True
        comp = compiler or FunctionCompiler(fn, self_info, obj.name)
        graph, names, types_, defaults, ret = comp.compile()
        _ir.eliminate_dead_code(graph)
        obj.graph = graph
        obj._names, obj._types, obj._defaults = names, types_, defaults
        obj._return_type = ret
        obj.schema = FunctionSchema(obj.name, names, types_, defaults, ret)
        mod = getattr(fn, "__module__", "") or ""
        obj.qualified_name = obj.name if fn is None else (
            f"__torch__.{mod}.{fn.__qualname__}" if mod != "__main__"
            else f"__torch__.{fn.__qualname__}").replace(".<locals>", "")
        params = ["self"] if obj._has_self else []
        params += [f"a{i}" for i in range(len(names))]
        src = _ir.python_source(graph, "_fn", params)
        from ._compiler import _raise
        ns = {"_K": graph.consts, "_raise": _raise}
        exec(compile(src, f"<torchscript {obj.name}>", "exec"), ns)  # noqa: S102
        obj._run = ns["_fn"]
        obj._source = src
        return obj

    @property
    def code(self):
        """TorchScript's Python-like source of the compiled function."""
        args = []
        if self._has_self:
            args.append("self")
        for nm, t, d in zip(self._names, self._types, self._defaults):
            default = "" if d is inspect.Parameter.empty else "=" + repr(d)
            args.append(f"{nm}: {t.py()}{default}")
        header = f"def {self.name}(" + ",\n    ".join(args) + f") -> {self._return_type.py()}:"
        return _ir.code_source(self.graph, header)

    @property
    def inlined_graph(self):
        """The graph (calls to other script functions are kept as ``prim::CallFunction``)."""
        return self.graph

    def _bind(self, args, kwargs, self_obj=None):
        from ._compiler import check_value, python_type_name
        n = len(self._names)
        if len(args) > n:
            raise RuntimeError(f"{self.name}() expected at most {n} argument(s) but received "
                               f"{len(args)} argument(s). Declaration: {self.schema}")
        out = list(args) + [inspect.Parameter.empty] * (n - len(args))
        for k, v in kwargs.items():
            if k not in self._names:
                raise RuntimeError(f"{self.name}() got an unexpected keyword argument '{k}'. "
                                   f"Declaration: {self.schema}")
            i = self._names.index(k)
            if out[i] is not inspect.Parameter.empty:
                raise RuntimeError(f"{self.name}() got multiple values for argument '{k}'. "
                                   f"Declaration: {self.schema}")
            out[i] = v
        for i, (nm, t, d) in enumerate(zip(self._names, self._types, self._defaults)):
            if out[i] is inspect.Parameter.empty:
                if d is inspect.Parameter.empty:
                    raise RuntimeError(f"{self.name}() is missing value for argument '{nm}'. "
                                       f"Declaration: {self.schema}")
                out[i] = d
            v = out[i]
            if t.kind in ("int", "float") and isinstance(v, Tensor) and v.numel() == 1 and \
                    not v.requires_grad:
                # torch's argument parser turns a one-element tensor into the number
                v = out[i] = int(v) if t.kind == "int" else float(v)
            if not check_value(v, t):
                raise RuntimeError(f"{self.name}() Expected a value of type '{t.py()}' for "
                                   f"argument '{nm}' but instead found type "
                                   f"'{python_type_name(v)}'.\nPosition: "
                                   f"{i + (1 if self._has_self else 0)}\nValue: {v!r}\n"
                                   f"Declaration: {self.schema}")
            if t.kind == "float" and isinstance(v, int):
                out[i] = float(v)    # TorchScript converts an int argument to float
        return out

    def __call__(self, *args, **kwargs):
        from . import _trace
        if _trace._tracing[0]:
            return _trace._call_script_in_trace(self, args, kwargs)
        return _to_python(self._run(*self._bind(args, kwargs)))

    def _bind_static(self, args, kws, e, comp, skip_self=False):
        """Match compile-time argument values to this function's schema (for calls from other
        scripted code); defaults become constants."""
        from ._ir import is_subtype
        n = len(self._names)
        if len(args) > n:
            raise comp.type_err(e, f"{self.name}() expected at most {n} argument(s) but "
                                   f"received {len(args)} argument(s). Declaration: "
                                   f"{self.schema}")
        out = list(args) + [None] * (n - len(args))
        for k, v in kws.items():
            if k not in self._names:
                raise comp.type_err(e, f"Keyword argument {k} unknown. Declaration: "
                                       f"{self.schema}")
            out[self._names.index(k)] = v
        for i, (nm, t, d) in enumerate(zip(self._names, self._types, self._defaults)):
            if out[i] is None:
                if d is inspect.Parameter.empty:
                    raise comp.type_err(e, f"Argument {nm} not provided. Declaration: "
                                           f"{self.schema}")
                out[i] = comp.const(d, e, t if d is None else None)
                continue
            out[i] = comp.convert(out[i], t, e)
            if not is_subtype(out[i].type, t) and out[i].type.kind != "Any" and not (
                    t.kind == "float" and out[i].type.kind == "int"):
                raise comp.type_err(e, f"Expected a value of type '{t.py()}' for argument "
                                       f"'{nm}' but instead found type '{out[i].type.py()}'."
                                       f"\nDeclaration: {self.schema}")
        return out

    def save(self, f, _extra_files=None):
        """Write the function as a TorchScript archive (``torch.jit.save``)."""
        from ._serialization import save
        save(self, f, _extra_files)

    def __repr__(self):
        return f"<torch.jit.ScriptFunction object at {hex(id(self))}>"


ScriptFunction.__module__ = "torch.jit"


def _to_python(v):
    """A TorchScript value as Python receives it: a dtype is its ScalarType code (int), as
    torch's interpreter hands it back; containers are converted element by element."""
    from ..library import _SCALAR_TYPE_CODES
    from ._compiler import _is_dtype
    if _is_dtype(v):
        return _SCALAR_TYPE_CODES[str(v).replace("torch.", "")]
    if type(v) is tuple:
        return tuple(_to_python(x) for x in v)
    if type(v) is list and v and any(_is_dtype(x) or isinstance(x, (list, tuple)) for x in v):
        return [_to_python(x) for x in v]
    if type(v) is dict:
        return {k: _to_python(x) for k, x in v.items()}
    return v


class _BoundMethod:
    """A compiled method bound to its scripted module: ``m.forward(x)``, ``m.forward.graph``."""

    def __init__(self, method, owner):
        self._method = method
        self._owner = owner

    def __call__(self, *args, **kwargs):
        m = self._method
        return _to_python(m._run(self._owner, *m._bind(args, kwargs)))

    def __getattr__(self, name):
        return getattr(self._method, name)


class _PythonMethod:
    """A method the compiler leaves as Python: a submodule from glasstorch's nn library, or an
    ``@torch.jit.ignore``d method. Calls run the Python method on the scripted module."""

    compiled = False

    def __init__(self, fn, ret):
        self._fn = fn
        self._return_type = ret
        self._sig = inspect.signature(fn)

    def _bind_static(self, args, kws, e, comp, skip_self=False):
        params = list(self._sig.parameters.values())[1:]
        out = list(args)
        for p in params[len(args):]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                break
            if p.name in kws:
                out.append(kws[p.name])
            elif p.default is not inspect.Parameter.empty:
                out.append(comp.const(p.default, e))
            else:
                raise comp.type_err(e, f"forward() is missing value for argument '{p.name}'")
        return out


class _ModuleInfo:
    """What the compiler knows about one module being scripted: its attributes' TorchScript
    types, submodules and compiled methods."""

    def __init__(self, module, sm):
        self.module = module
        self.sm = sm
        from ..nn.modules.container import ModuleDict, ModuleList, Sequential
        # a Sequential subclass with its own forward is an ordinary module
        self.kind = ("list" if isinstance(module, ModuleList) or (
            isinstance(module, Sequential) and type(module).forward is Sequential.forward) else
                     "dict" if isinstance(module, ModuleDict) else "module")
        cls = type(module)
        mod = cls.__module__.replace("glasstorch", "torch", 1) if cls.__module__.startswith(
            "glasstorch") else cls.__module__
        self.class_name = (f"__torch__.{mod}.{cls.__qualname__}" if mod != "__main__"
                           else f"__torch__.{cls.__qualname__}").replace(".<locals>", "")
        self.jit_type = _ir.JitType("Class", name=self.class_name)
        # library modules (and user subclasses that keep the library's forward) run their
        # Python forward, standing for torch's builtin modules
        fwd_mod = getattr(getattr(cls, "forward", None), "__module__", "") or ""
        self.builtin = cls.__module__.startswith("glasstorch.") or (
            fwd_mod.startswith("glasstorch.") and cls.forward is not Module.forward)
        self.frozen = False
        self.methods = {}
        self.compiling = set()
        hints = {}
        for klass in reversed(cls.__mro__):
            hints.update(getattr(klass, "__annotations__", {}) or {})
        self.hints = hints
        consts = set(getattr(cls, "__constants__", ()) or ())
        for nm, h in hints.items():
            if h is __import__("typing").Final or getattr(h, "__origin__", None) is \
                    __import__("typing").Final or (isinstance(h, str) and "Final" in h):
                consts.add(nm)
        self.constants = consts

    def submodule_names(self):
        return [k for k, v in self.module._modules.items() if v is not None]

    def module_names(self):
        return self.submodule_names()

    def submodule_info(self, name):
        return self.sm._modules[name]._info

    def attr_kind(self, attr):
        if attr in self.constants:
            return "constant"
        fn = inspect.getattr_static(type(self.module), attr, None)
        if isinstance(fn, (types.FunctionType, staticmethod)):
            return "method"
        return "attr"

    def attr_type(self, attr):
        from ._compiler import type_from_python, type_of_value
        m = self.module
        if attr in m._parameters:
            return _ir.TensorT if m._parameters[attr] is not None else _ir.NoneT
        if attr in m._buffers:
            return _ir.TensorT if m._buffers[attr] is not None else _ir.NoneT
        if attr == "training":
            return _ir.BoolT
        if attr in m.__dict__ or hasattr(type(m), attr):
            val = getattr(m, attr)
            if isinstance(Attribute, type) and isinstance(val, Attribute):  # jit.Attribute(v, t)
                return type_from_python(val.type)
            h = self.hints.get(attr)
            if h is not None and not isinstance(h, str):
                try:
                    return type_from_python(h)
                except Exception:
                    pass
            return type_of_value(getattr(m, attr))
        return None

    def missing_attr_message(self, attr):
        m = self.module
        if attr in m.__dict__ or hasattr(type(m), attr):
            return (f"Module '{type(m).__name__}' has no attribute '{attr}' (This attribute "
                    f"exists on the Python module, but we failed to convert Python type: "
                    f"'{type(getattr(m, attr)).__name__}' to a TorchScript type.)")
        return f"Module '{type(m).__name__}' has no attribute '{attr}' "

    def method(self, name, e=None):
        got = self.methods.get(name)
        if got is not None:
            return got
        cls = type(self.module)
        fn = inspect.getattr_static(cls, name, None)
        if fn is None or not callable(fn):
            raise RuntimeError(f"Module '{cls.__name__}' has no method '{name}'")
        modifier = getattr(fn, "_torchscript_modifier", None)
        if self.builtin or modifier == FunctionModifiers.IGNORE:
            from ._compiler import TensorT
            ret = _BUILTIN_RETURNS.get(cls.__name__, TensorT) if self.builtin else _ann_ret(fn)
            got = _PythonMethod(fn, ret)
        elif modifier == FunctionModifiers.UNUSED:
            got = _PythonMethod(_unused_stub(name), _ann_ret(fn))
        else:
            if name in self.compiling:
                raise RuntimeError(f"Recursive calls are not supported in TorchScript: "
                                   f"method '{name}' calls itself")
            self.compiling.add(name)
            try:
                got = ScriptFunction._make(fn, self, name)
            finally:
                self.compiling.discard(name)
            self.sm._script_methods[name] = got
        self.methods[name] = got
        return got


def _ann_ret(fn):
    import typing

    from ._compiler import TensorT, type_from_python
    try:
        h = typing.get_type_hints(fn)
    except Exception:
        return TensorT
    return type_from_python(h["return"]) if "return" in h else TensorT


def _unused_stub(name):
    def stub(self, *args, **kwargs):
        from ._compiler import _raise
        _raise(f"This Python function ({name}) is annotated to be ignored and cannot be run",
               "builtins.RuntimeError", None)
    return stub


def _builtin_returns():
    from ._ir import OptionalT, TensorT, TupleT
    pair = TupleT([TensorT, TensorT])
    return {"LSTM": TupleT([TensorT, pair]), "GRU": pair, "RNN": pair, "LSTMCell": pair,
            "MultiheadAttention": TupleT([TensorT, OptionalT(TensorT)])}


_BUILTIN_RETURNS = _builtin_returns()


class ScriptModule(Module):
    """The type of TorchScript-compiled modules (``torch.jit.ScriptModule``): an ``nn.Module``.
    ``torch.jit.script(module)`` returns a ``RecursiveScriptModule``, a subclass."""

    def __init__(self, arg=None):
        super().__init__()

    def save(self, f, _extra_files=None):
        """Write the module as a TorchScript archive (``torch.jit.save``) that PyTorch's
        ``torch.jit.load`` reads."""
        from ._serialization import save
        save(self, f, _extra_files)


_MODULE_INTERNALS = frozenset(Module().__dict__)


class RecursiveScriptModule(ScriptModule):
    """A scripted ``nn.Module``: the original's parameters and buffers (the same tensors),
    scripted submodules, compiled ``forward`` and methods (``.code``, ``.graph``)."""

    def __init__(self, arg=None):
        super().__init__()
        self.__dict__["_script_methods"] = {}

    @property
    def code(self):
        """TorchScript source of ``forward``."""
        return self.forward.code

    @property
    def graph(self):
        """The IR graph of ``forward``."""
        return self.forward.graph

    @property
    def inlined_graph(self):
        """The IR graph of ``forward``."""
        return self.forward.graph

    @property
    def original_name(self):
        """The class name of the module that was scripted."""
        return self.__dict__.get("_original_name", type(self).__name__)

    def __getattr__(self, name):
        d = self.__dict__
        try:
            return super().__getattr__(name)
        except AttributeError:
            info = d.get("_info")
            if info is not None:
                # Python code of the original class (library forwards, ignored methods)
                # reads class attributes and helper methods through the scripted module
                missing = object()
                fn = inspect.getattr_static(type(info.module), name, missing)
                if isinstance(fn, types.FunctionType):
                    return types.MethodType(fn, self)
                if isinstance(fn, property) and fn.fget is not None:
                    return fn.fget(self)
                if isinstance(fn, (staticmethod, classmethod)):
                    return getattr(type(info.module), name)
                if fn is not missing:
                    return fn
            raise

    def __iter__(self):
        return iter(m for m in self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, idx):
        if isinstance(idx, str):
            return self._modules[idx]
        return list(self._modules.values())[idx]

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """Names of the submodules (scripted ``ModuleDict``)."""
        return self._modules.keys()

    def items(self):
        """(name, submodule) pairs (scripted ``ModuleDict``)."""
        return self._modules.items()

    def values(self):
        """The submodules (scripted ``ModuleDict``)."""
        return self._modules.values()

    def extra_repr(self):
        return "original_name=" + self.original_name


def _sequential_forward(self, input):
    for m in self._modules.values():
        input = m(input)
    return input


def _script_module(m, memo, frozen=False):
    if id(m) in memo:
        return memo[id(m)]
    sm = RecursiveScriptModule()
    memo[id(m)] = sm
    d = sm.__dict__
    d["_parameters"] = dict(m._parameters)
    d["_buffers"] = dict(m._buffers)
    d["_non_persistent_buffers_set"] = set(m._non_persistent_buffers_set)
    d["training"] = m.training
    d["_original_name"] = type(m).__name__
    for k, v in m.__dict__.items():
        if k not in _MODULE_INTERNALS:
            d[k] = v.value if isinstance(Attribute, type) and isinstance(v, Attribute) else v
    for name, sub in m._modules.items():
        sm._modules[name] = None if sub is None else _script_module(sub, memo, frozen)
    info = _ModuleInfo(m, sm)
    info.frozen = frozen and not info.builtin
    d["_info"] = info
    if frozen and info.builtin:     # a library module runs as Python: on a snapshot
        d["_parameters"] = {k: None if v is None else v.detach().clone()
                            for k, v in m._parameters.items()}
        d["_buffers"] = {k: None if v is None else v.detach().clone()
                         for k, v in m._buffers.items()}
        d["training"] = False
    from ..nn.modules.container import Sequential
    cls = type(m)
    if isinstance(m, Sequential) and info.kind == "list":
        d["forward"] = types.MethodType(_sequential_forward, sm)
        return sm
    if info.kind != "module":
        return sm
    if info.builtin:
        if cls.forward is not Module.forward:
            d["forward"] = types.MethodType(cls.forward, sm)
        return sm
    names = []
    if cls.forward is not Module.forward:
        names.append("forward")
    for nm, fn in inspect.getmembers(cls, inspect.isfunction):
        if getattr(fn, "_torchscript_modifier", None) == FunctionModifiers.EXPORT:
            names.append(nm)
    for nm in names:
        meth = info.method(nm)
        d[nm] = _BoundMethod(meth, sm) if meth.compiled else types.MethodType(meth._fn, sm)
    for nm, meth in sm._script_methods.items():
        if nm not in d:
            d[nm] = _BoundMethod(meth, sm)
    if info.frozen:
        # everything the compiled code needs is folded into it: no parameters, buffers or
        # submodules remain visible, as in torch's frozen modules
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_modules"] = {}
    return sm


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """``torch.jit.freeze``: a copy of scripted module ``mod`` (in eval mode) with its
    parameters, buffers, submodules and attributes folded into the compiled code as constants
    (a snapshot: later changes to ``mod`` do not reach it). ``preserved_attrs`` names methods
    to compile and keep besides ``forward``."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    info = mod.__dict__.get("_info")
    if info is None:
        from ._trace import freeze_traced
        return freeze_traced(mod, preserved_attrs)
    orig = info.module
    was = orig.training
    orig.train(False)
    try:
        frozen = _script_module(orig, {}, frozen=True)
        for nm in preserved_attrs or ():
            if callable(getattr(type(orig), nm, None)):
                meth = frozen._info.method(nm)
                frozen.__dict__[nm] = _BoundMethod(meth, frozen) if meth.compiled else \
                    types.MethodType(meth._fn, frozen)
    finally:
        orig.train(was)
    frozen.__dict__["training"] = False
    return frozen


def interface(obj):
    """``@torch.jit.interface``: mark class ``obj`` as a TorchScript interface type, the
    methods (signatures only) that a module attribute annotated with it must have. Scripted
    code calls the module the attribute holds; the class stays a plain Python class."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    mod = obj.__module__
    obj.__torch_script_interface__ = (f"__torch__.{mod}.{obj.__qualname__}" if mod != "__main__"
                                      else f"__torch__.{obj.__qualname__}")
    return obj


def optimize_for_inference(mod, other_methods=None):
    """``torch.jit.optimize_for_inference``: ``mod`` put in eval mode and frozen (keeping
    ``other_methods``). glasstorch runs no further graph passes: its frozen graphs already
    hold the parameters as constants and its kernels are the eager ones."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please "
                           "use torch.jit.script or torch.jit.trace to script your "
                           "'nn.Module'.")
    return freeze(mod.eval(), preserved_attrs=other_methods or [])


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


_function_cache = weakref.WeakKeyDictionary()
_in_progress = set()


def _compile_function(fn):
    """The ScriptFunction for plain function ``fn`` (compiled once, then cached)."""
    got = _function_cache.get(fn)
    if got is not None:
        return got
    if fn in _in_progress:
        raise RuntimeError(f"Recursive calls are not supported in TorchScript: "
                           f"'{fn.__qualname__}' calls itself")
    _in_progress.add(fn)
    try:
        sf = ScriptFunction._make(fn)
    finally:
        _in_progress.discard(fn)
    _function_cache[fn] = sf
    return sf


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Compile a function or ``nn.Module`` to TorchScript: a ``ScriptFunction`` or a
    ``RecursiveScriptModule`` whose ``.graph``/``.code`` show the compiled program, which runs
    with its control flow intact. With ``PYTORCH_JIT=0`` set before import, ``obj`` is
    returned unchanged (torch's eager fallthrough)."""
    _deprecated("script")
    if not _enabled:
        return obj
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return _script_module(obj, {})
    if isinstance(obj, type):
        from . import _classes
        if issubclass(obj, Module):
            raise RuntimeError(f"Type '{obj}' cannot be compiled since it inherits from "
                               f"nn.Module, pass an instance instead")
        if _classes.is_named_tuple(obj):
            _classes.named_tuple_type(obj)
        elif _classes.scriptable_class(obj):
            _classes.class_info(obj)    # compiles every method now; the class stays usable
        else:
            raise RuntimeError(f"torch.jit.script cannot compile class {obj.__qualname__}")
        return obj
    if isinstance(obj, dict):
        raise RuntimeError("Dict[...] objects cannot be scripted in glasstorch")
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if not inspect.isfunction(obj):
        raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled since it inherits "
                           f"from nn.Module, pass an instance instead" if isinstance(obj, type)
                           else f"torch.jit.script cannot compile object of type "
                                f"{type(obj).__name__}")
    return _compile_function(obj)


def script_method(fn):
    """Mark a method of a ``ScriptModule`` subclass for compilation (``@torch.jit.script_method``);
    glasstorch compiles it when the module is scripted, as an exported method."""
    warnings.warn("`torch.jit.script_method` is deprecated. Please switch to `torch.compile` "
                  "or `torch.export`.", DeprecationWarning, stacklevel=2)
    if not _enabled:
        return fn
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn
