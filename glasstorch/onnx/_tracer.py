"""Recording the operators a model runs, for the duration of one export.

While an export runs, the callables model code reaches are replaced by thin wrappers
(``glasstorch._callable_patch``, shared with the profiler): Tensor methods and operators,
the functions of the flat ``glasstorch`` namespace, ``torch.nn.functional`` and ``linalg``,
every reference to those functions in loaded modules' globals (``from torch import
flatten``), in the model's modules (``self.activation = F.relu``) and in their classes
(``_fn = staticmethod(F.tanh)``); and, for the tracer only, Tensor properties, sizes and
``Module.__call__`` (for torch's scope-based node names). Everything is put back in a
``finally``, so an op costs nothing extra when no export runs: the hot path has no check
for it.

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
import warnings

from .._callable_patch import CallablePatch, aten_name
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
                raise graph.unsupported(aten_name(key))
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
                raise self.graph.unsupported(aten_name(key))
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
                raise graph.unsupported(f"{aten_name(key)} (an in-place write into a view)")
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


def new_patch(lookup):
    """A CallablePatch whose wrappers record calls into the running Tracer, translated by
    the symbolics ``lookup(key)`` gives."""
    return CallablePatch(lambda fn, key: _wrapper(key, lookup(key), fn))


def install(patch, lookup, model):
    """Wrap every op entry point ``model`` can reach (``patch.restore()`` undoes it);
    ``lookup(key)`` gives symbolics."""
    from ..nn.modules.module import Module

    patch.wrap_operators(_PYTHON_VALUES.union(_TENSOR_EXTRAS))
    for m in model.modules():
        patch.cover_object(m)
    for name in _TENSOR_PROPERTIES:
        prop = vars(Tensor).get(name)
        if isinstance(prop, property):
            fget = _wrapper(name, lookup(name), prop.fget)
            patch.set_attr(Tensor, name, property(fget, prop.fset, prop.fdel, prop.__doc__))
    _install_sizes(patch)
    module_call = Module.__call__

    def scoped_call(self, *args, **kwargs):
        tracer = _state[0]
        if tracer is None or tracer.depth:
            return module_call(self, *args, **kwargs)
        return tracer.module_call(module_call, self, args, kwargs)
    patch.set_attr(Module, "__call__", scoped_call)


def _install_sizes(patch):
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

    patch.set_attr(Tensor, "shape", property(traced_shape, doc=vars(Tensor)["shape"].__doc__))
    patch.set_attr(Tensor, "size", traced_size)
