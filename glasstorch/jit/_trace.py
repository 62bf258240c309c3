"""``torch.jit.trace`` / ``trace_module``: run a function or module once on example inputs
and record every operator it calls, through a ``TorchFunctionMode`` on glasstorch's dispatch
point, into the TorchScript IR of ``_ir``.

As in torch, a trace is one run: Python control flow is frozen at the path taken, and Python
values computed from tensors (``bool(x)``, ``x.item()``, sizes) become constants, with a
``TracerWarning`` when a tensor is turned into a Python value. The result runs the recorded
graph (Python generated from it), with the module's parameters and buffers shared.
"""

from __future__ import annotations

import functools
import inspect
import types
import warnings

from .._tensor import Tensor
from ..nn.modules.module import Module
from . import _ir
from ._state import _enabled

__all__ = ["is_tracing", "trace", "trace_module", "script_if_tracing", "TracerWarning",
           "TracedModule", "TopLevelTracedModule"]


class TracerWarning(Warning):
    """A trace may not generalise: a tensor became a Python value, or ``check_trace`` found
    the traced graph disagreeing with the Python function (``torch.jit.TracerWarning``)."""

    @staticmethod
    def ignore_lib_warnings():
        """Silence tracer warnings raised from inside the library itself (as torch does)."""
        warnings.filterwarnings("ignore", category=TracerWarning, module="glasstorch(.*)")


TracerWarning.__module__ = "torch.jit"

_tracing = [0]


def is_tracing() -> bool:
    """True while ``torch.jit.trace`` is recording a run (in the traced Python code)."""
    return _tracing[0] > 0


_DTYPE_LETTER = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}


def _tensor_type(t):
    """torch's traced tensor type: ``Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)``."""
    dt = _DTYPE_LETTER.get(str(t.dtype).replace("torch.", ""), "Tensor")
    dims = ", ".join(str(s) for s in t.shape)
    strides = ", ".join(str(s) for s in t.stride())
    sep = ", " if dims else ""
    return _ir.JitType("Tensor", name=f"{dt}({dims}{sep}strides=[{strides}], "
                                      f"requires_grad={int(t.requires_grad)}, device=cpu)")


_CONVERSIONS = {"__bool__": "a Python boolean", "item": "a Python number",
                "__int__": "a Python integer", "__float__": "a Python float",
                "__index__": "a Python index", "tolist": "a Python list",
                "__complex__": "a Python complex"}


class _Recorder:
    """The state of one trace: tensors seen (by identity) and their graph values."""

    def __init__(self, module):
        self.graph = _ir.Graph()
        self.values = {}     # id(tensor) -> Value
        self.keep = []       # the tensors, so ids stay unique during the trace
        self.module = module
        self.self_value = None
        self.attr_paths = {}
        if module is not None:
            self.self_value = _ir.Value(self.graph, _ir.JitType("Class", name=_class_name(
                module)), "self")
            self.graph.block.params.append(self.self_value)
            for path, t in list(module.named_parameters(remove_duplicate=False)) + \
                    list(module.named_buffers(remove_duplicate=False)):
                self.attr_paths.setdefault(id(t), (path, t))
        self.getattr_cache = {}

    def add_input(self, t, name):
        v = _ir.Value(self.graph, _tensor_type(t), name, exact=True)
        self.graph.block.params.append(v)
        self.bind(t, v)
        return v

    def bind(self, t, v):
        self.values[id(t)] = v
        self.keep.append(t)

    def emit(self, kind, inputs, out_types, tpl, code, attrs=None, base=None):
        n = _ir.Node(kind, inputs, tpl=tpl, code=code, attrs=attrs)
        for t in out_types:
            v = _ir.Value(self.graph, t, base)
            v.node = n
            n.outputs.append(v)
        self.graph.block.nodes.append(n)
        return n

    def const(self, value):
        t = _ir.TensorT if isinstance(value, Tensor) else (_const_type(value))
        return self.emit("prim::Constant", [], [t], None, None, attrs={"value": value}).output()

    def value_of(self, obj):
        """The graph value standing for argument ``obj`` (a constant if it is not a traced
        tensor; a parameter or buffer becomes a chain of ``prim::GetAttr``)."""
        if isinstance(obj, Tensor):
            v = self.values.get(id(obj))
            if v is not None:
                return v
            hit = self.attr_paths.get(id(obj))
            if hit is not None:
                return self.get_attr_path(hit[0])
            return self.const(obj)
        if isinstance(obj, (list, tuple)) and any(isinstance(x, Tensor) for x in obj):
            vals = [self.value_of(x) for x in obj]
            inner = ", ".join(f"{{{i}}}" for i in range(len(vals)))
            if isinstance(obj, tuple):
                return self.emit("prim::TupleConstruct", vals,
                                 [_ir.TupleT([v.type for v in vals])], "(" + inner + ",)",
                                 "(" + inner + ")").output()
            return self.emit("prim::ListConstruct", vals, [_ir.ListT(_ir.TensorT)],
                             "[" + inner + "]", "[" + inner + "]").output()
        return self.const(obj)

    def get_attr_path(self, path):
        cur = self.self_value
        parts = path.split(".")
        for i, p in enumerate(parts):
            key = ".".join(parts[:i + 1])
            got = self.getattr_cache.get(key)
            if got is None:
                last = i == len(parts) - 1
                t = _ir.TensorT if last else _ir.JitType("Class", name=_class_name(
                    self.module.get_submodule(key)))
                got = self.emit("prim::GetAttr", [cur], [t], f"getattr({{0}}, {p!r})",
                                f"{{0}}.{p}" if p.isidentifier() else f"getattr({{0}}, {p!r})",
                                attrs={"name": p}, base=p if last else None).output()
                self.getattr_cache[key] = got
            cur = got
        return cur

    def record(self, func, args, kwargs, out):
        name = getattr(func, "__name__", "op")
        if name in _CONVERSIONS:
            warnings.warn(f"Converting a tensor to {_CONVERSIONS[name]} might cause the trace to "
                          f"be incorrect. We can't record the data flow of Python values, so "
                          f"this value will be treated as a constant in the future. This means "
                          f"that the trace might not generalize to other inputs!", TracerWarning,
                          stacklevel=4)
            return
        flat_out = _tensors_in(out)
        if not flat_out:
            return                   # Python values (sizes, dtypes) are constants from here on
        if name == "__get__":          # a property (x.T, x.mT): named by its getter
            return self.record_property(func, args, out)
        ins = [self.value_of(a) for a in args]
        kin = [self.value_of(v) for v in kwargs.values()]
        aten = name[2:-2] if name.startswith("__") and name.endswith("__") else name
        mod = getattr(func, "__module__", "") or ""
        if mod.endswith("linalg") and not aten.startswith("linalg_"):
            aten = "linalg_" + aten
        n_args = len(ins)
        at = ", ".join([f"{{{i}}}" for i in range(n_args)] +
                       [f"{k}={{{n_args + i}}}" for i, k in enumerate(kwargs)])
        ref = self.graph.const_ref(func)
        tpl = f"{ref}({at})"
        code = f"torch.{aten}({at})"
        if aten == "getitem":           # x[idx]: torch's indexing ops print as indexing
            aten, code = "index", "{0}[{1}]"
        if isinstance(out, Tensor):
            n = self.emit(f"aten::{aten}", ins + kin, [_tensor_type(out)], tpl, code)
            n.pure = not aten.endswith("_") and "out" not in kwargs   # in-place ops stay
            self.bind(out, n.output())
            return
        types_ = [_tensor_type(t) if isinstance(t, Tensor) else _const_type(t) for t in out]
        seq_t = _ir.TupleT(types_) if isinstance(out, tuple) else _ir.ListT(_ir.TensorT)
        whole = self.emit(f"aten::{aten}", ins + kin, [seq_t], tpl, code).output()
        unpack = self.emit("prim::TupleUnpack" if isinstance(out, tuple) else "prim::ListUnpack",
                           [whole], types_, "{0}", "{0}")
        for t, v in zip(out, unpack.outputs):
            if isinstance(t, Tensor):
                self.bind(t, v)

    def record_call(self, sf, args, kwargs, out):
        """A call of a scripted function during the trace: one ``prim::CallFunction`` node, so
        the function's own control flow is kept (torch records it the same way)."""
        if not _tensors_in(out):
            return
        ins = [self.value_of(a) for a in args] + [self.value_of(v) for v in kwargs.values()]
        n_args = len(args)
        at = ", ".join([f"{{{i}}}" for i in range(n_args)] +
                       [f"{k}={{{n_args + i}}}" for i, k in enumerate(kwargs)])
        ref = self.graph.const_ref(sf)
        code = f"{sf.qualified_name}({at})"
        if isinstance(out, Tensor):
            n = self.emit("prim::CallFunction", ins, [_tensor_type(out)], f"{ref}({at})", code,
                          attrs={"fn": sf})
            n.pure = False
            self.bind(out, n.output())
            return
        types_ = [_tensor_type(t) if isinstance(t, Tensor) else _const_type(t) for t in out]
        whole = self.emit("prim::CallFunction", ins, [_ir.TupleT(types_)], f"{ref}({at})",
                          code, attrs={"fn": sf}).output()
        whole.node.pure = False
        unpack = self.emit("prim::TupleUnpack", [whole], types_, "{0}", "{0}")
        for t, v in zip(out, unpack.outputs):
            if isinstance(t, Tensor):
                self.bind(t, v)

    def record_property(self, func, args, out):
        owner = getattr(func, "__self__", None)
        fget = getattr(owner, "fget", None)
        pname = getattr(fget, "__name__", "property")
        if not isinstance(out, Tensor) or not args:
            return
        src = self.value_of(args[0])
        o = self.emit(f"aten::{pname}", [src], [_tensor_type(out)], f"{{0}}.{pname}",
                      f"{{0}}.{pname}").output()
        self.bind(out, o)


def _const_type(v):
    from ._compiler import type_of_value
    return type_of_value(v) or _ir.AnyT


def _class_name(m):
    cls = m if isinstance(m, type) else type(m)
    mod = cls.__module__.replace("glasstorch", "torch", 1) if cls.__module__.startswith(
        "glasstorch") else cls.__module__
    return (f"__torch__.{mod}.{cls.__qualname__}" if mod != "__main__"
            else f"__torch__.{cls.__qualname__}").replace(".<locals>", "")


def _tensors_in(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for t in out if isinstance(t, Tensor)]
    return []


def _mode_class():
    from ..overrides import TorchFunctionMode

    class _TraceMode(TorchFunctionMode):
        """Records each operator call of the traced run."""

        def __init__(self, recorder):
            super().__init__()
            self.recorder = recorder

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            self.recorder.record(func, args, kwargs, out)
            return out
    return _TraceMode


def _record(fn, module, inputs, kw_inputs, strict):
    rec = _Recorder(module)
    sig_names = _param_names(fn)
    names = []
    for i, x in enumerate(inputs):
        nm = sig_names[i] if i < len(sig_names) else f"input{i}"
        names.append(nm)
        _add_input(rec, x, nm)
    for k, x in kw_inputs.items():
        names.append(k)
        _add_input(rec, x, k)
    mode = _mode_class()(rec)
    _tracing[0] += 1
    try:
        with mode:
            out = fn(*inputs, **kw_inputs)
    finally:
        _tracing[0] -= 1
    rec.graph.block.returns = [_output_value(rec, out, strict)]
    _ir.eliminate_dead_code(rec.graph)
    return rec, names, out


def _add_input(rec, x, name):
    if isinstance(x, Tensor):
        rec.add_input(x, name)
        return
    if isinstance(x, (tuple, list)) and x and all(isinstance(t, Tensor) for t in x):
        t = _ir.TupleT([_tensor_type(a) for a in x]) if isinstance(x, tuple) else \
            _ir.ListT(_ir.TensorT)
        v = _ir.Value(rec.graph, t, name)
        rec.graph.block.params.append(v)
        n = rec.emit("prim::TupleUnpack" if isinstance(x, tuple) else "prim::ListUnpack", [v],
                     [_tensor_type(a) for a in x], "{0}", "{0}")
        for a, o in zip(x, n.outputs):
            rec.bind(a, o)
        return
    raise RuntimeError(f"Type '{type(x).__name__}' cannot be traced. Only Tensors and (possibly "
                       f"nested) Lists, Dicts, and Tuples of Tensors can be traced")


def _output_value(rec, out, strict):
    if isinstance(out, Tensor):
        return rec.value_of(out)
    if isinstance(out, (list, dict)) and strict:
        msg = (f"Encountering a {type(out).__name__} at the output of the tracer might cause the "
               f"trace to be incorrect, this is only valid if the container structure does not "
               f"change based on the module's inputs. Consider using a constant container "
               f"instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
               f"`NamedTuple` instead). If you absolutely need this and know the side effects, "
               f"pass strict=False to trace() to allow this behavior.")
        if isinstance(out, dict):      # torch refuses a dict, and only warns about a list
            raise RuntimeError(msg)
        warnings.warn(msg, TracerWarning, stacklevel=4)
    if isinstance(out, (tuple, list)):
        vals = [_output_value(rec, x, strict) for x in out]
        inner = ", ".join(f"{{{i}}}" for i in range(len(vals)))
        if isinstance(out, tuple):
            return rec.emit("prim::TupleConstruct", vals, [_ir.TupleT([v.type for v in vals])],
                            "(" + inner + ",)", "(" + inner + ")").output()
        return rec.emit("prim::ListConstruct", vals, [_ir.ListT(_ir.TensorT)],
                        "[" + inner + "]", "[" + inner + "]").output()
    if isinstance(out, dict):
        keys = list(out)
        vals = []
        for k in keys:
            vals += [rec.const(k), _output_value(rec, out[k], strict)]
        inner = ", ".join(f"{{{2 * i}}}: {{{2 * i + 1}}}" for i in range(len(keys)))
        return rec.emit("prim::DictConstruct", vals, [_ir.DictT(_ir.StrT, _ir.TensorT)],
                        "{{" + inner + "}}", "{{" + inner + "}}").output()
    return rec.const(out)        # a Python value: a constant of the trace, as in torch


def _param_names(fn):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


class _TracedFunction:
    """A recorded graph made callable: ``.graph``, ``.code``, ``__call__`` runs the graph."""

    def __init__(self, rec, names, name, has_self):
        self.graph = rec.graph
        self.name = self.__name__ = name
        self._names = names
        self._has_self = has_self
        params = (["self"] if has_self else []) + [f"a{i}" for i in range(len(names))]
        src = _ir.python_source(rec.graph, "_traced", params)
        ns = {"_K": rec.graph.consts}
        exec(compile(src, f"<traced {name}>", "exec"), ns)  # noqa: S102
        self._run = ns["_traced"]
        self._source = src

    @property
    def code(self):
        """TorchScript's Python-like source of the recorded graph."""
        args = (["self"] if self._has_self else []) + [f"{n}: Tensor" for n in self._names]
        header = f"def {self.name}(" + ",\n    ".join(args) + ")" + \
            f" -> {self.graph.block.returns[0].type.py()}:"
        return _ir.code_source(self.graph, header)

    @property
    def inlined_graph(self):
        """The recorded graph (already flat)."""
        return self.graph

    def _check_args(self, args, kwargs):
        n = len(self._names)
        out = list(args)
        for k in self._names[len(args):]:
            if k not in kwargs:
                raise RuntimeError(f"{self.name}() is missing value for argument '{k}'.")
            out.append(kwargs.pop(k))
        if kwargs or len(out) != n:
            raise RuntimeError(f"{self.name}() expected {n} argument(s) but received "
                               f"{len(args) + len(kwargs)} argument(s).")
        return out


class _TracedScriptFunction(_TracedFunction):
    """The result of tracing a plain function (torch gives a ``ScriptFunction``)."""

    def __call__(self, *args, **kwargs):
        return self._run(*self._check_args(args, dict(kwargs)))


def _bound(tf, owner):
    def forward(*args, **kwargs):
        return tf._run(owner, *tf._check_args(args, dict(kwargs)))
    forward.graph = tf.graph
    forward.code = tf.code
    forward.inlined_graph = tf.graph
    forward.__name__ = tf.name
    return forward


def _traced_module_classes():
    from ._script import ScriptModule

    class TracedModule(ScriptModule):
        """A traced ``nn.Module``: the original's parameters and buffers (the same tensors),
        traced submodules, and ``forward`` running the recorded graph."""

        @property
        def code(self):
            """TorchScript source of the traced ``forward``."""
            return self.__dict__["_traced"]["forward"].code

        @property
        def graph(self):
            """The recorded graph of ``forward``."""
            return self.__dict__["_traced"]["forward"].graph

        @property
        def inlined_graph(self):
            """The recorded graph of ``forward`` (flat)."""
            return self.graph

        @property
        def original_name(self):
            """The class name of the traced module."""
            return self.__dict__.get("_original_name", "Module")

        def extra_repr(self):
            return "original_name=" + self.original_name

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                cls = self.__dict__.get("_orig_class")
                if cls is not None:
                    fn = inspect.getattr_static(cls, name, None)
                    if isinstance(fn, types.FunctionType):
                        return types.MethodType(fn, self)
                    if fn is not None and not isinstance(fn, property):
                        return fn
                raise

        def __iter__(self):
            return iter(self._modules.values())

        def __len__(self):
            return len(self._modules)

        def __getitem__(self, idx):
            if isinstance(idx, str):
                return self._modules[idx]
            return list(self._modules.values())[idx]

    class TopLevelTracedModule(TracedModule):
        """The module ``torch.jit.trace`` returns for an ``nn.Module``."""

    TracedModule.__module__ = TopLevelTracedModule.__module__ = "torch.jit._trace"
    TracedModule.__qualname__ = "TracedModule"
    TopLevelTracedModule.__qualname__ = "TopLevelTracedModule"
    return TracedModule, TopLevelTracedModule


TracedModule, TopLevelTracedModule = _traced_module_classes()
_MODULE_INTERNALS = frozenset(Module().__dict__)


def _wrap_module(m, top):
    cls = TopLevelTracedModule if top else TracedModule
    tm = cls()
    d = tm.__dict__
    d["_parameters"] = dict(m._parameters)
    d["_buffers"] = dict(m._buffers)
    d["_non_persistent_buffers_set"] = set(m._non_persistent_buffers_set)
    d["training"] = m.training
    d["_original_name"] = type(m).__name__
    d["_orig_class"] = type(m)
    d["_traced"] = {}
    for k, v in m.__dict__.items():
        if k not in _MODULE_INTERNALS:
            d[k] = v
    for name, sub in m._modules.items():
        tm._modules[name] = None if sub is None else _wrap_module(sub, False)
    if type(m).forward is not Module.forward:
        d["forward"] = types.MethodType(type(m).forward, tm)   # submodules keep Python forward
    return tm


def _check(fn_eager, run_traced, inputs, kw_inputs, tol):
    from .. import allclose
    try:
        expect = fn_eager(*inputs, **kw_inputs)
        got = run_traced(*inputs, **kw_inputs)
    except Exception as exc:   # a failing re-run is reported, not raised, as torch does
        warnings.warn(f"Tracing failed sanity checks!\nEncountered an exception while running "
                      f"the trace with test inputs.\nException:\n{exc}", TracerWarning,
                      stacklevel=4)
        return
    a, b = _tensors_flat(expect), _tensors_flat(got)
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or not allclose(x.double(), y.double(), rtol=tol, atol=tol,
                                              equal_nan=True):
            warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                          f"corresponding output of the Python function. Detailed error:\n"
                          f"Tensor-likes are not close!\n", TracerWarning, stacklevel=4)
            return


def _tensors_flat(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for x in out for t in _tensors_flat(x)]
    if isinstance(out, dict):
        return [t for x in out.values() for t in _tensors_flat(x)]
    return []


def _inputs_tuple(example_inputs):
    if example_inputs is None:
        return ()
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Run ``func`` (a function or ``nn.Module``) once on ``example_inputs`` and record the
    operators it calls into a TorchScript graph; returns a ``ScriptFunction`` or a traced
    ``ScriptModule`` sharing the module's parameters. Control flow is frozen at the path the
    example took (a ``TracerWarning`` marks tensors turned into Python values); with
    ``check_trace`` the trace is re-run and compared with the Python function."""
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=2)
    if not _enabled:
        return func
    from ._script import ScriptFunction, ScriptModule
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    if isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs}, None, check_trace,
                            [{"forward": c} for c in check_inputs] if check_inputs else None,
                            check_tolerance, strict, example_inputs_is_kwarg=
                            example_kwarg_inputs is not None, _kwargs=example_kwarg_inputs)
    if isinstance(func, types.MethodType) and isinstance(func.__self__, Module):
        m = func.__self__
        return trace_module(m, {func.__name__: example_inputs}, None, check_trace, None,
                            check_tolerance, strict)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided.")
    inputs = _inputs_tuple(example_inputs)
    kw = dict(example_kwarg_inputs or {})
    rec, names, _ = _record(func, None, inputs, kw, strict)
    name = getattr(func, "__name__", "traced")
    tf = object.__new__(_TracedFunctionType)
    _TracedFunction.__init__(tf, rec, names, name, False)
    if check_trace:
        for inp in (check_inputs or [inputs]):
            _check(func, tf, _inputs_tuple(inp), kw, check_tolerance)
    return tf


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True,
                 _kwargs=None):
    """Trace methods of ``mod``: ``inputs`` maps a method name to its example inputs. Returns
    a traced module whose those methods run their recorded graphs."""
    if not _enabled:
        return mod
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    tm = _wrap_module(mod, True)
    for method_name, example in inputs.items():
        fn = getattr(mod, method_name)
        if example_inputs_is_kwarg or (_kwargs is not None and method_name == "forward"):
            kw = dict(example if isinstance(example, dict) else (_kwargs or {}))
            args = ()
        else:
            kw, args = {}, _inputs_tuple(example)
        rec, names, _ = _record(fn, mod, args, kw, strict)
        tf = _TracedFunction(rec, names, method_name, True)
        tm.__dict__["_traced"][method_name] = tf
        tm.__dict__[method_name] = _bound(tf, tm)
        if check_trace:
            checks = [c[method_name] for c in check_inputs] if check_inputs else [args]
            for c in checks:
                _check(fn, tm.__dict__[method_name], _inputs_tuple(c), kw, check_tolerance)
    return tm


class _Snapshot:
    """A recorded graph standing alone (what ``_TracedFunction`` is built from)."""

    def __init__(self, graph):
        self.graph = graph


def freeze_traced(tm, preserved_attrs=()):
    """``torch.jit.freeze`` of a traced module: a copy whose graphs read no attribute; each
    parameter and buffer they read is folded in as a constant (a snapshot of its value)."""
    import copy
    frozen = TopLevelTracedModule()
    d = frozen.__dict__
    d["training"] = False
    d["_original_name"] = tm.__dict__.get("_original_name", "Module")
    d["_orig_class"] = tm.__dict__.get("_orig_class")
    d["_traced"] = {}
    for name, tf in tm.__dict__["_traced"].items():
        # tensors are copied (the snapshot), the functions the graph calls are shared
        keep = {id(c): c for c in tf.graph.consts if not isinstance(c, Tensor)}
        graph = copy.deepcopy(tf.graph, keep)
        self_v = graph.inputs[0]
        objs = {self_v: tm}
        for n in graph.block.nodes:
            if n.kind == "prim::GetAttr" and n.inputs[0] in objs:
                val = getattr(objs[n.inputs[0]], n.attrs["name"])
                if isinstance(val, Tensor):
                    n.kind, n.attrs, n.tpl, n.code = "prim::Constant", {
                        "value": val.detach().clone()}, None, None
                    n.inputs[0].uses -= 1
                    n.inputs = []
                else:
                    objs[n.outputs[0]] = val
        _ir.eliminate_dead_code(graph)
        new = _TracedFunction(_Snapshot(graph), tf._names, tf.name, True)
        d["_traced"][name] = new
        d[name] = _bound(new, frozen)
    for nm in preserved_attrs or ():
        if nm not in d["_traced"] and hasattr(tm, nm):
            d[nm] = getattr(tm, nm)
    return frozen


def _traced_function_type():
    from ._script import ScriptFunction

    class TracedScriptFunction(_TracedScriptFunction, ScriptFunction):
        """A traced function (a ``ScriptFunction`` running the recorded graph)."""

    TracedScriptFunction.__name__ = TracedScriptFunction.__qualname__ = "ScriptFunction"
    TracedScriptFunction.__module__ = "torch.jit"
    return TracedScriptFunction


_TracedFunctionType = _traced_function_type()


def _call_script_in_trace(sf, args, kwargs):
    """Run scripted function ``sf`` from traced code: recorded as one call node (with the
    trace mode off inside it), so its control flow survives in the trace."""
    from ..overrides import _get_current_function_mode, _pop_mode_temporarily
    mode = _get_current_function_mode()
    rec = getattr(mode, "recorder", None)
    if not isinstance(rec, _Recorder):
        return sf._run(*sf._bind(args, kwargs))
    with _pop_mode_temporarily():
        out = sf._run(*sf._bind(args, kwargs))
    rec.record_call(sf, args, kwargs, out)
    return out


def script_if_tracing(fn):
    """Compile ``fn`` with ``torch.jit.script`` the first time it is called while tracing (so
    its control flow survives in the trace); otherwise call it as Python."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not is_tracing():
            return fn(*args, **kwargs)
        from ._script import _compile_function
        return _call_script_in_trace(_compile_function(fn), args, kwargs)
    wrapper.__original_fn = fn         # the attributes torch's wrapper carries
    wrapper.__script_if_tracing_wrapper = True
    return wrapper
