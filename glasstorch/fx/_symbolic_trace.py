"""torch.fx._symbolic_trace: ``Tracer`` and ``symbolic_trace``. Tracing runs the module's
``forward`` once on Proxies: torch functions and Tensor methods reach the Proxies through the
``__torch_function__`` dispatch point, Python operators through the Proxy's dunders, and
submodule calls and attribute reads through ``Module.__call__``/``__getattr__``, which the
tracer takes over for the duration of the trace (leaf modules become ``call_module`` nodes).
Python control flow runs for real, so it can only depend on non-traced values."""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
import types

from ..nn import Module as _Module
from ._compatibility import compatibility
from .graph import Graph
from .node import base_types, map_aggregate
from .proxy import (
    ParameterProxy,
    Proxy,
    Scope,
    ScopeContextManager,
    TracerBase,
    _proxy_dispatch,
)

__all__ = ["Tracer", "symbolic_trace", "wrap", "is_fx_tracing", "PH", "PHBase",
           "PHWithMeta"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_orig_module_call = _Module.__call__
_orig_module_getattr = _Module.__getattr__

_is_fx_tracing_flag = False

# (id of a module's globals, function name) -> those globals: what ``wrap`` registered
_wrapped_fns_to_patch: dict = {}


def is_fx_tracing() -> bool:
    """Whether symbolic tracing is running (code can take a trace-friendly path)."""
    return _is_fx_tracing_flag


def _modules():
    from .. import nn
    return nn


@compatibility(is_backward_compatible=True)
class PHBase:
    """Marks a concrete argument as a placeholder input that keeps being traced."""

    def __repr__(self):
        return "PH"


PH = PHBase()


@compatibility(is_backward_compatible=False)
class PHWithMeta(PHBase):
    """A PH that carries a user value, copied into the placeholder node's meta."""

    def __init__(self, ph_key=None):
        super().__init__()
        self.ph_key = ph_key


def _assert_is_none(value, msg):
    """Generated code's check that an argument specialised to None still is None."""
    assert value is None, msg


def _assert(condition, message):
    """Generated code's check that an argument specialised to a constant still has it."""
    if not condition:
        raise AssertionError(message)


def _patch_function(fn, nargs):
    # a copy of ``fn`` taking its *args/**kwargs (already placeholders) positionally
    co = fn.__code__
    new_code = co.replace(co_flags=co.co_flags & ~HAS_VARSTUFF, co_argcount=nargs,
                          co_kwonlyargcount=0)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, None, fn.__closure__)


class _Patcher:
    """Replaces attributes for the duration of a trace and restores them afterwards."""

    def __init__(self):
        self.patches = []
        self.visited = set()

    def patch(self, frame_dict, name, new_fn):
        """``frame_dict[name] = new_fn`` until exit (deleted again if it was absent)."""
        missing = name not in frame_dict
        self.patches.append((frame_dict, name, None if missing else frame_dict[name],
                             missing))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn):
        """``setattr(cls, name, new_fn)`` until exit."""
        self.patches.append((cls, name, getattr(cls, name), None))
        setattr(cls, name, new_fn)

    def visit_once(self, thing) -> bool:
        """True the first time ``thing`` is seen in this trace."""
        if id(thing) in self.visited:
            return False
        self.visited.add(id(thing))
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches:
            target, name, orig, missing = self.patches.pop()
            if missing is None:
                setattr(target, name, orig)
            elif missing:
                target.pop(name, None)
            else:
                target[name] = orig


def _find_proxy(*objects):
    found = []

    def look(x):
        if isinstance(x, Proxy) and not found:
            found.append(x)
    map_aggregate(objects, look)
    return found[0] if found else None


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            out.node.meta["is_wrapped"] = True
            return out
        return orig_fn(*args, **kwargs)
    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))


def _autowrap_check(patcher, frame_dict, function_ids):
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


@compatibility(is_backward_compatible=True)
class Tracer(TracerBase):
    """Turns a Module or function into a Graph by running it on Proxies. Subclass it to
    change which modules stay leaves (``is_leaf_module``), how module calls and attribute
    reads are recorded (``call_module``, ``getattr``), or how values become nodes."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant: bool = False):
        super().__init__()
        # functions of these modules (math.sqrt...) are recorded when called on Proxies
        self._autowrap_function_ids = {
            id(value) for m in autowrap_modules for name, value in m.__dict__.items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_modules = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self.node_name_to_scope = {}

    def create_arg(self, a):
        """As TracerBase's, and tensors, parameters and modules of the root become
        ``get_attr`` nodes (other tensors are stored on the root as ``_tensor_constantN``)."""
        from .._tensor import Tensor
        nn = _modules()
        if isinstance(a, nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", n, (), {})
        elif isinstance(a, nn.Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*[self.create_arg(e) for e in a])
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix: str) -> str:
        """An attribute name ``prefix<N>`` the root does not have yet."""
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """Whether a call of ``m`` is recorded as one ``call_module`` node (True for
        torch.nn's own modules, except Sequential) instead of being traced through."""
        nn = _modules()
        module = type(m).__module__ or ""
        return module.startswith(("glasstorch.nn", "glasstorch.ao.nn", "torch.nn",
                                  "torch.ao.nn")) and not isinstance(m, nn.Sequential)

    def path_of_module(self, mod) -> str:
        """The qualified name of submodule ``mod`` of the root (NameError if it is not
        one)."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A call of submodule ``m``: a ``call_module`` node for leaves, else its forward
        traced through."""
        qualname = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(qualname, type(m))) as scope:
            self.module_stack[scope.module_path] = (qualname, scope.module_type)
            try:
                if not self.is_leaf_module(m, qualname):
                    ret = forward(*args, **kwargs)
                else:
                    ret = self.create_proxy("call_module", qualname, args, kwargs)
            finally:
                self.module_stack.popitem(last=True)
        return ret

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        """A module attribute read during tracing: parameters of the root become (cached)
        ``get_attr`` Proxies; other values are returned as they are."""
        nn = _modules()

        def proxy_for(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node, n=n):
                                return ParameterProxy(self, node, n, attr_val)
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, nn.Parameter):
            found = proxy_for(self.root.named_parameters())
            if found is not None:
                return found
        from .._tensor import Tensor
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = proxy_for(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def _proxy_placeholder(self, name, concrete_args, sig, fn):
        if concrete_args is not None and name in concrete_args:
            count = [0]

            def replace_ph(x):
                count[0] += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy("placeholder", f"{name}_{count[0]}", default, {})
                if isinstance(x, PHBase):
                    if isinstance(x, PHWithMeta) and x.ph_key is not None:
                        out.node.meta["ph_key"] = x.ph_key
                    return out
                if type(x) is bool or (type(x) in base_types and type(x) is not type(None)):
                    self.create_proxy("call_function", _assert_fn(),
                                      (out == x, f"{name} has been specialized to have value "
                                                 f"{x} but got another value"), {})
                elif x is None:
                    self.create_proxy("call_function", _assert_is_none,
                                      (out, f"{name} has been specialized to have value None "
                                            f"but got another value"), {})
                else:
                    import warnings
                    warnings.warn(f"Was not able to add assertion to guarantee correct input "
                                  f"{name} to specialized function. It is up to the user to "
                                  f"make sure that your inputs match the inputs you "
                                  f"specialized the function with.", stacklevel=3)
                return x
            from ..utils import _pytree
            return _pytree.tree_map(replace_ph, concrete_args[name])
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=getattr(fn, "__annotations__", {}).get(name))

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The placeholders for ``root_fn``'s parameters (``*args``/``**kwargs`` included),
        and the function to call with them."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names_iter) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(n, concrete_args, sig, fn) for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args,
                                                    sig, fn))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args,
                                                    sig, fn))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def trace(self, root, concrete_args=None) -> Graph:
        """Trace ``root`` (a Module: its ``forward``; or a function) into a Graph;
        ``concrete_args`` fixes some arguments to constants (or ``PH``)."""
        global _is_fx_tracing_flag
        old_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        nn = _modules()
        from .._tensor import Tensor
        try:
            if isinstance(root, nn.Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = type(root).__name__
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = nn.Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            self.tensor_attrs = {}

            def collect_tensor_attrs(m, prefix):
                for k, v in m.__dict__.items():
                    if isinstance(v, Tensor):
                        self.tensor_attrs[v] = ".".join(prefix + [k])
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix + [k])
            collect_tensor_attrs(self.root, [])
            fn_globals = fn.__globals__
            with _proxy_dispatch():
                fn, args = self.create_args_for_root(fn, isinstance(root, nn.Module),
                                                     concrete_args)
            parameter_proxy_cache = {}
            # the originals, even when this trace runs inside another one
            orig_getattr = _orig_module_getattr
            orig_call = _orig_module_call

            @functools.wraps(orig_getattr)
            def module_getattr_wrapper(mod, attr):
                return self.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)
                _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__",
                                                 {}), self._autowrap_function_ids)
                return self.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher, _proxy_dispatch():
                patcher.patch_method(nn.Module, "__getattr__", module_getattr_wrapper)
                patcher.patch_method(nn.Module, "__call__", module_call_wrapper)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_modules:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                                 type_expr=fn.__annotations__.get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph


def _assert_fn():
    import glasstorch
    return getattr(glasstorch, "_assert", _assert)


@compatibility(is_backward_compatible=True)
def wrap(fn_or_name):
    """At module level, ``wrap('name')`` or ``@wrap``: calls of that module-global function
    on Proxies are recorded as one ``call_function`` node instead of being traced through."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


@compatibility(is_backward_compatible=True)
def symbolic_trace(root, concrete_args=None):
    """Trace a Module or function into a GraphModule (see ``Tracer``)."""
    from .graph_module import GraphModule
    nn = _modules()
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

