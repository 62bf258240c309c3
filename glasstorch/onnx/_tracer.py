"""Recording the operators a model runs, for the duration of one export.

While an export runs, the callables model code reaches are replaced by thin wrappers:
Tensor methods, operators and properties, the functions of the flat ``glasstorch``
namespace, ``torch.nn.functional`` and ``linalg``, every module-global and module-instance
reference to those functions (``from torch import flatten``; ``self.activation = F.relu``)
in glasstorch and in the modules that define the model's classes, static-method references
in the model's classes (``_fn = staticmethod(F.tanh)``), and ``Module.__call__``
(for torch's scope-based node names). Everything is put back in a ``finally``, so an op
costs nothing extra when no export runs: the hot path has no check for it.

A wrapped call made by model code (not from inside another recorded call) is translated
by the symbolic registered under the function's name: the real function runs first, then
the symbolic appends ONNX nodes for it, knowing the actual result (its dtype and shape).
A call without a symbolic runs unhidden instead, so the calls it makes are recorded in its
place; if its result is still not in the graph, the operator is unsupported. Calls on
constants only (parameters, buffers, literals) are folded into constants.

``x.shape`` and ``x.size()`` of a traced tensor give model code SymInts (``_symint``), so
shapes computed from them (``x.view(x.size(0), -1)``) stay dynamic, as under torch's tracer.

Tensors made outside any recorded call (through a reference the wrappers cannot replace)
are noted through ``glasstorch._tensor.alloc_hook`` and refused where they are used, so an
untraced computation fails loudly rather than being frozen into the graph.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings

from .._tensor import Tensor
from ._symint import has_sym_int
from .errors import OnnxExporterWarning

# The running Tracer, or None.
_state = [None]

# Tensor members (defined outside glasstorch._ops) that compute a tensor from a tensor.
_TENSOR_EXTRAS = ("detach", "type", "type_as", "cpu", "cuda")
# Members that hand a traced value to Python: the graph keeps the value seen while tracing.
_PYTHON_VALUES = frozenset({
    "item", "tolist", "numpy", "__array__", "__bool__", "__float__", "__int__", "__index__",
    "__complex__", "equal", "allclose", "is_nonzero"})
_TENSOR_PROPERTIES = ("T", "mT", "H", "mH", "data", "real", "imag")
# Namespaces whose functions are keyed with a prefix: their names clash with flat ones.
_NAMESPACES = {"glasstorch.linalg": "linalg.", "glasstorch.special": "special.",
               "glasstorch.fft": "fft."}
_OWN_MODULES = ("glasstorch.onnx", "glasstorch.profiler")


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running (the model's forward is being traced)."""
    return _state[0] is not None


class Tracer:
    """Turns wrapped calls into graph nodes."""

    def __init__(self, graph, fold, module_names):
        self.graph = graph
        self.fold = fold
        self.module_names = module_names    # id(module) -> qualified name
        self.depth = 0                      # > 0 while a recorded call runs

    def call(self, key, symbolic, fn, args, kwargs):
        graph = self.graph
        tensors = _tensors_in(args, kwargs)
        traced = [t for t in tensors if graph.is_traced(t)]
        # Sizes read from traced tensors keep an op in the graph if it has a translation;
        # without one it runs hidden, its result fixed at the traced size.
        if not traced and (symbolic is None or (self.fold and not has_sym_int((args, kwargs)))):
            return self._hidden(fn, args, kwargs)
        if symbolic is None:
            if _writes_in_place(key):   # the write would go unrecorded
                raise graph.unsupported(op_name(key))
            return self._decomposed(key, fn, args, kwargs)
        result = self._hidden(fn, args, kwargs)
        self.depth += 1
        try:
            names = symbolic(graph, result, *args, **kwargs)
        finally:
            self.depth -= 1
        self._bind(key, result, names, tensors)
        return result

    def _hidden(self, fn, args, kwargs):
        self.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            self.depth -= 1

    def _decomposed(self, key, fn, args, kwargs):
        result = fn(*args, **kwargs)
        if key in _PYTHON_VALUES:
            warnings.warn(f"{key}() turned a traced tensor into a Python value; the exported "
                          "graph uses the value seen while tracing and will not follow the "
                          "inputs there", OnnxExporterWarning, stacklevel=4)
            return result
        for t in _tensors_in(result):
            if not self.graph.has(t):
                raise self.graph.unsupported(op_name(key))
        return result

    def _bind(self, key, result, names, inputs):
        graph = self.graph
        tensors = _tensors_in(result)
        names = [names] if isinstance(names, str) else list(names or ())
        if len(names) != len(tensors):
            raise RuntimeError(f"ONNX translation of {key} gave {len(names)} values for "
                               f"{len(tensors)} tensors")
        for t, name in zip(tensors, names):
            if t._base is not None and any(t is i for i in inputs) and \
                    graph.name_of(t) != name:
                # an in-place write into a view: the viewed tensor's value would go stale
                raise graph.unsupported(f"{op_name(key)} (an in-place write into a view)")
            graph.bind(t, name)

    def module_call(self, call, module, args, kwargs):
        name = self.module_names.get(id(module))
        if name is None:
            return call(module, *args, **kwargs)
        self.graph.scopes.append(name)
        try:
            return call(module, *args, **kwargs)
        finally:
            self.graph.scopes.pop()


def _writes_in_place(key):
    return key == "__setitem__" or (key.endswith("_") and not key.endswith("__"))


_DUNDER_OPS = {"getitem": "index", "setitem": "index_put_", "truediv": "div",
               "floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
               "or": "bitwise_or", "xor": "bitwise_xor", "invert": "bitwise_not"}


def op_name(key):
    """torch's name for the operator behind function ``key`` (``'aten::index'``)."""
    if key.startswith(("F.", "Tensor.")):
        key = key.split(".", 1)[1]
    if key.startswith("__") and key.endswith("__"):
        key = _DUNDER_OPS.get(key[2:-2], key[2:-2])
    return "aten::" + key.replace(".", "_")


def _tensors_in(*objs):
    """The tensors in ``objs``, looking into tuples, lists and dicts."""
    found = []
    for obj in objs:
        if isinstance(obj, Tensor):
            found.append(obj)
        elif isinstance(obj, (tuple, list)):
            found.extend(_tensors_in(*obj))
        elif isinstance(obj, dict):
            found.extend(_tensors_in(*obj.values()))
    return found


# ---------------------------------------------------------------------------- patching
def _wrapper(key, symbolic, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tracer = _state[0]
        if tracer is None or tracer.depth:
            return fn(*args, **kwargs)
        return tracer.call(key, symbolic, fn, args, kwargs)
    return wrapper


def _key(namespace, name, fn, prefix, flat):
    """The key naming ``fn`` (found as ``namespace[name]``) for translation lookup: its own
    name when the namespace has it under that name (``__radd__`` is ``add``), prefixed where
    the flat namespace has a different function of that name (``F.batch_norm``)."""
    key = fn.__name__ if namespace.get(fn.__name__) is fn else name
    other = flat.get(key)
    return prefix + key if inspect.isfunction(other) and other is not fn else key


def _origin(fn):
    return getattr(inspect.unwrap(fn), "__module__", None) or ""


def _is_op(fn):
    return (inspect.isfunction(fn) and _origin(fn).startswith("glasstorch")
            and not _origin(fn).startswith(_OWN_MODULES))


class _Patcher:
    """Replaces entries of namespaces (dicts, classes) and puts back exactly what was there."""

    _MISSING = object()

    def __init__(self):
        self.saved = []

    def set_item(self, mapping, key, value):
        self.saved.append((mapping, key, mapping[key]))
        mapping[key] = value

    def set_attr(self, owner, attr, value):
        self.saved.append((owner, attr, owner.__dict__.get(attr, self._MISSING)))
        setattr(owner, attr, value)

    def restore(self):
        for owner, key, old in reversed(self.saved):
            if isinstance(owner, dict):
                owner[key] = old
            elif old is self._MISSING:
                delattr(owner, key)
            else:
                setattr(owner, key, old)
        self.saved.clear()


def install(patcher, lookup, model):
    """Wrap every op entry point ``model`` can reach; ``lookup(key)`` gives symbolics."""
    import glasstorch

    from ..nn import functional as F
    from ..nn.modules.module import Module

    wrappers = {}
    flat = vars(glasstorch)

    def wrap(fn, key):
        w = wrappers.get(id(fn))
        if w is None:
            w = wrappers[id(fn)] = _wrapper(key, lookup(key), fn)
        return w

    for name, fn in list(vars(Tensor).items()):
        if inspect.isfunction(fn) and (_origin(fn).startswith("glasstorch._ops")
                                       or name in _TENSOR_EXTRAS or name in _PYTHON_VALUES):
            patcher.set_attr(Tensor, name, wrap(fn, _key(vars(Tensor), name, fn, "Tensor.", flat)))
    for name in _TENSOR_PROPERTIES:
        prop = vars(Tensor).get(name)
        if isinstance(prop, property):
            patcher.set_attr(Tensor, name, property(_wrapper(name, lookup(name), prop.fget),
                                                    prop.fset, prop.fdel, prop.__doc__))
    for name, fn in list(flat.items()):
        if _is_op(fn):
            wrap(fn, _key(flat, name, fn, "", {}))
    for name, fn in list(vars(F).items()):
        if _is_op(fn):
            wrap(fn, _key(vars(F), name, fn, "F.", flat))
    for module_name, prefix in _NAMESPACES.items():
        ns = vars(sys.modules[module_name]) if module_name in sys.modules else {}
        for name, fn in list(ns.items()):
            if _is_op(fn):
                wrap(fn, prefix + _key(ns, name, fn, "", {}))
    for mapping in _reference_holders(model):
        for name, value in list(mapping.items()):
            w = wrappers.get(id(value))
            if w is not None and value is not w:
                patcher.set_item(mapping, name, w)
    for cls in {c for m in model.modules() for c in type(m).__mro__}:
        for name, value in list(vars(cls).items()):   # _fn = staticmethod(F.logsigmoid)
            if isinstance(value, staticmethod) and id(value.__func__) in wrappers:
                patcher.set_attr(cls, name, staticmethod(wrappers[id(value.__func__)]))
    _install_sizes(patcher, Tensor)
    module_call = Module.__call__

    def scoped_call(self, *args, **kwargs):
        tracer = _state[0]
        if tracer is None or tracer.depth:
            return module_call(self, *args, **kwargs)
        return tracer.module_call(module_call, self, args, kwargs)
    patcher.set_attr(Module, "__call__", scoped_call)


def _install_sizes(patcher, Tensor):
    """``x.shape`` and ``x.size()`` of a traced tensor read in model code give SymInts."""
    shape_of = vars(Tensor)["shape"].fget
    size = vars(Tensor)["size"]

    def traced_shape(self):
        shape = shape_of(self)
        tracer = _state[0]
        if tracer is None or tracer.depth or not tracer.graph.has(self):
            return shape
        return tracer.graph.sym_sizes(self, shape)

    @functools.wraps(size)
    def traced_size(self, dim=None):
        if dim is None:
            return traced_shape(self)
        size(self, dim)   # torch's errors for a bad dim
        return traced_shape(self)[dim]

    patcher.set_attr(Tensor, "shape", property(traced_shape, doc=vars(Tensor)["shape"].__doc__))
    patcher.set_attr(Tensor, "size", traced_size)


def _reference_holders(model):
    """The dicts that may hold references to op functions: the globals of glasstorch's
    modules and of the modules defining the model's classes, and the model's modules'
    instance dicts."""
    module_names = {type(m).__module__ for m in model.modules()}
    seen = set()
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "glasstorch" or name.startswith("glasstorch.")
                               or name in module_names):
            continue
        if name.startswith(_OWN_MODULES) or id(mod) in seen:
            continue
        seen.add(id(mod))
        yield vars(mod)
    for m in model.modules():
        yield m.__dict__
