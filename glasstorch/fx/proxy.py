"""torch.fx.proxy: ``Proxy``, the stand-in value symbolic tracing runs the program on. Each
operation on a Proxy (operators, attribute reads, method calls, torch functions through
``__torch_function__``) records a Node instead of computing."""

from __future__ import annotations

import collections
import contextlib
import copy
import dis
import functools
import inspect
import operator
import os
import traceback

from .. import overrides as _overrides
from ._compatibility import compatibility
from ._python_args import PYTHON_LEVEL_ARGS
from .graph import Graph, magic_methods, reflectable_magic_methods
from .node import Node, base_types, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute",
           "ParameterProxy", "Scope", "ScopeContextManager"]


@compatibility(is_backward_compatible=True)
class TraceError(ValueError):
    """Raised when a traced program needs a concrete value (control flow on a Proxy,
    iterating one)."""


@compatibility(is_backward_compatible=False)
class Scope:
    """Which module a traced operation was recorded in: its path and type."""

    def __init__(self, module_path: str, module_type):
        self.module_path = module_path
        self.module_type = module_type


@compatibility(is_backward_compatible=False)
class ScopeContextManager:
    """Sets the tracer's current Scope for the duration of a module call."""

    def __init__(self, scope: Scope, current_scope: Scope):
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


# frames from files under glasstorch/ are library internals, not user code
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _ProxyDispatchMode(_overrides.TorchFunctionMode):
    """Active while tracing: every dispatch point looks at its arguments, so calls given a
    Proxy reach ``Proxy.__torch_function__``; other calls run as they are. Once tracing ends
    the ops are back on their fast path."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Pass calls with Proxy arguments on to the Proxies; run the others."""
        if any(issubclass(t, Proxy) for t in types):
            return NotImplemented
        return func(*args, **(kwargs or {}))


_tracing_depth = 0


@contextlib.contextmanager
def _proxy_dispatch():
    """Route torch functions on Proxies to the tracer for the duration of the block."""
    global _tracing_depth
    _tracing_depth += 1
    try:
        with _ProxyDispatchMode():
            yield
    finally:
        _tracing_depth -= 1


@compatibility(is_backward_compatible=True)
class TracerBase:
    """What Proxies need from a tracer: a graph to append to, and how values become
    arguments of nodes."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope: Scope
    module_stack: collections.OrderedDict
    node_name_to_scope: dict

    def create_node(self, kind: str, target, args, kwargs, name=None, type_expr=None) -> Node:
        """Add a node to the graph; records the module stack it was made under in
        ``meta['nn_module_stack']``."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        scope = getattr(self, "scope", None)
        if scope is not None:
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        stack = getattr(self, "module_stack", None)
        if stack:
            node.meta["nn_module_stack"] = copy.copy(stack)
        if self.record_stack_traces and not node.stack_trace:
            frames = self._filter_traceback_frames(traceback.extract_stack())
            if frames:
                node.stack_trace = "".join(traceback.StackSummary.from_list(frames)
                                           .format()).strip()
        return node

    def _filter_traceback_frames(self, frames):
        """The user frames a node's stack trace keeps: from the first ``forward`` on, without
        glasstorch's own (override to choose differently)."""
        for i, frame in enumerate(frames):
            if frame.name == "forward":
                frames = frames[i:]
                break
        return [f for f in frames if not f.filename.startswith(_PACKAGE_DIR)]

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for ``node``'s value."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Record a node (its arguments turned into graph values by ``create_arg``) and
        return its Proxy (built by ``proxy_factory_fn`` when given)."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_arg must keep args a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Turn a Python value into a node argument: Proxies become their nodes, containers
        are rebuilt around converted elements, plain constants stay. Objects may define
        ``__fx_create_arg__(tracer)``."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(type(a), "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*[self.create_arg(e) for e in a])
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(e) for e in a)
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, base_types) or a is None or a is ...:
            return a
        if isinstance(a, Node):
            return a
        import glasstorch
        if isinstance(a, (glasstorch.dtype, glasstorch.device, glasstorch.layout,
                          glasstorch.memory_format)):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """``bool(proxy)``: control flow on a traced value cannot be recorded."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy):
        """``iter(proxy)`` where the length is not known from the calling code."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed "
                         "explanation of what types of control flow can be traced, and check "
                         "out the Proxy docstring for help troubleshooting Proxy iteration "
                         "errors")

    def keys(self, obj: Proxy):
        """``proxy.keys()`` (as ``**proxy`` calls it): a call_method node."""
        return Attribute(obj, "keys")()


@compatibility(is_backward_compatible=True)
class GraphAppendingTracer(TracerBase):
    """The tracer of Proxies made directly on a Graph (``Proxy(node)``): appends to it."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


@compatibility(is_backward_compatible=True)
class Proxy:
    """A traced value: operations on it append Nodes to its tracer's graph and return new
    Proxies. ``bool()``, ``len()`` and iteration of unknown length need concrete values and
    raise."""

    def __init__(self, node: Node, tracer: TracerBase = None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node
        if not _tracing_depth:
            # a Proxy used outside a trace: from now on every op checks its arguments for
            # __torch_function__ (the dispatch point's one-way switch)
            _overrides._note_type(Proxy)

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k) -> Attribute:
        # a method call or an attribute read, told apart when it is called or used
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        # a deep copy of a traced value is a copy node in the same graph
        new = {}
        for k, v in self.__dict__.items():
            new[k] = v if k in ("node", "tracer") else copy.deepcopy(v, memo)
        p = Proxy.__new__(Proxy)
        p.__dict__ = new
        return p

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy``: the calling code says how many values it unpacks
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset >= frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self):
        """``proxy.keys()``: recorded as a method call."""
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        """A torch function or Tensor method called on Proxies: recorded as call_method
        (Tensor methods) or call_function (everything else), named after the function."""
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers))
        args, kwargs = _as_torch_passes_them(orig_method, args, kwargs)
        if _overrides.is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


@compatibility(is_backward_compatible=True)
class Attribute(Proxy):
    """``proxy.name``: a method call node when called, a ``getattr`` node when used as a
    value."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        """The ``getattr`` node, made on first use."""
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


@compatibility(is_backward_compatible=False)
class ParameterProxy(Proxy):
    """The Proxy of a parameter when the tracer treats parameter shapes as constants:
    ``shape``, ``size()``, ``dim()``, ``numel()`` answer from the real parameter."""

    def __init__(self, tracer: TracerBase, node: Node, name, param):
        super().__init__(node, tracer)
        if not _is_tensor(param):
            raise AssertionError(f"Expected a Parameter, got {type(param)}")
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        """The parameter's shape."""
        return self.param.shape

    def size(self, dim=None):
        """The parameter's size (of ``dim``)."""
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        """The parameter's number of dimensions."""
        return self.param.dim()

    @property
    def ndim(self):
        """The parameter's number of dimensions."""
        return self.param.ndim

    def numel(self):
        """The parameter's number of elements."""
        return self.param.numel()

    def nelement(self):
        """The parameter's number of elements."""
        return self.param.nelement()


@functools.cache
def _signature(func):
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _as_torch_passes_them(func, args, kwargs):
    """The arguments of a call as torch's Python-level function of that name hands them to
    ``__torch_function__``: some positionally, the rest by keyword with their defaults."""
    try:
        spec = PYTHON_LEVEL_ARGS.get(_overrides.resolve_name(func))
    except TypeError:
        return args, kwargs
    if spec is None:
        return args, kwargs
    n_pos, kw_names = spec
    sig = _signature(func)
    if sig is None:
        return args, kwargs
    params = list(sig.parameters.values())
    if len(params) < n_pos or any(p.kind in _VARIADIC for p in params):
        return args, kwargs
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    bound.apply_defaults()
    values = bound.arguments
    pos_names = [p.name for p in params[:n_pos]]
    new_kwargs = {k: values[k] for k in kw_names if k in values}
    for k, v in kwargs.items():  # keywords torch's function would not list: kept
        if k not in new_kwargs and k not in pos_names:
            new_kwargs[k] = v
    return tuple(values[n] for n in pos_names), new_kwargs


def _define_magic(method):
    target = getattr(operator, method)

    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", target, args, kwargs)
    impl.__name__ = method
    impl.__doc__ = f"Record ``operator.{method}`` on this Proxy."
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflected(orig):
    target = getattr(operator, orig)

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    name = f"__r{orig.strip('_')}__"
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"Record ``operator.{orig}`` with this Proxy on the right."
    setattr(Proxy, name, impl)


for _m in magic_methods:
    if hasattr(operator, _m):  # ``div`` is Python 2's
        _define_magic(_m)
for _m in reflectable_magic_methods:
    if hasattr(operator, _m) and _m != "getitem":
        _define_reflected(_m)
