"""torch.fx.node: ``Node``, one operation of a ``Graph``, and the helpers that walk the nested
structures (tuples, lists, dicts, slices) its arguments are made of."""

from __future__ import annotations

import builtins
import functools
import operator
import types
from collections.abc import Callable
from typing import Any, Optional, Union

from ._compatibility import compatibility
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target",
           "base_types"]

# What an fx target may be: the qualified name of an attribute/submodule/method, or a callable
Target = Union[Callable[..., Any], str]  # noqa: UP007 (a runtime alias, as torch's)
# The scalar types an argument may hold besides Nodes and containers of them
base_types = (str, int, float, bool, complex, type(None), type(Ellipsis), slice, range)
Argument = Optional[Union[tuple, list, dict, slice, range, "Node", str, int, float,  # noqa: UP007, UP045
                          bool, complex]]

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")

# call_function targets that eliminate_dead_code must keep (has_side_effect adds to it)
_side_effectful_functions: set = {operator.setitem}


@functools.cache
def _random_ops():
    import glasstorch

    from .._ops import random as _random
    names = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like",
             "randint_like", "normal", "bernoulli", "multinomial", "poisson", "binomial")
    out = {getattr(glasstorch, n) for n in names if hasattr(glasstorch, n)}
    out.update(getattr(_random, n) for n in names if hasattr(_random, n))
    return out


@compatibility(is_backward_compatible=False)
def has_side_effect(fn):
    """Register ``fn`` as a function with side effects: dead code elimination keeps its calls."""
    _side_effectful_functions.add(fn)
    return fn


def _find_module_of(fn) -> str:
    module = getattr(fn, "__module__", None) or "builtins"
    if module.startswith("glasstorch.vision"):
        return "torchvision" + module[len("glasstorch.vision"):]
    if module.startswith("glasstorch"):
        module = "torch" + module[len("glasstorch"):]
    if module == "torch._tensor":
        module = "torch.Tensor"
    return module


def _get_qualified_name(func) -> str:
    """The dotted name a target prints as: ``getattr``, ``torch.add``,
    ``torch.nn.functional.relu``, ``torch.Tensor.add``, ``operator.add``..."""
    from ..library import OpOverload, OpOverloadPacket
    if isinstance(func, (OpOverloadPacket, OpOverload)):
        return f"torch.ops.{func}"                     # torch.ops.quantized.add
    name = func.__name__
    if getattr(builtins, name, None) is func:
        return name
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    module = _find_module_of(func)
    qualname = getattr(func, "__qualname__", name)
    if module == "torch._tensor" or qualname == f"Tensor.{name}":
        return f"torch.Tensor.{name}"
    return f"{module}.{name}"


def _type_repr(obj) -> str:
    """How a type annotation prints: ``torch.Tensor``, ``int``, ``List[int]``."""
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        if obj.__module__.startswith("glasstorch"):
            import glasstorch
            if getattr(glasstorch, obj.__name__, None) is obj:  # torch.Tensor, torch.dtype
                return f"torch.{obj.__name__}"
        return f"{_find_module_of(obj)}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj).replace("glasstorch", "torch")


def _format_arg(arg, max_list_len=float("inf")) -> str:
    """An argument as Graph printing shows it: nodes as ``%name``, containers spelled out."""
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, (list, tuple)):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        if isinstance(arg, list):
            return f"[{items}{more}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


@compatibility(is_backward_compatible=True)
class Node:
    """One operation of a Graph: ``op`` is its kind (placeholder, get_attr, call_function,
    call_method, call_module, output), ``target`` what it calls or reads, ``args``/``kwargs``
    its inputs (other Nodes among them), ``users`` the Nodes that read its value."""

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict,
                 return_type=None):
        if op not in _OPS:
            raise ValueError(f"Invalid op {op!r}: expected one of {_OPS[:-1]}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") and \
                not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta: dict = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # ---- linked-list position
    @property
    def next(self) -> Node:
        """The node after this one in the graph (the root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one in the graph."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move (or insert) node ``x`` just before this one."""
        if x is self:
            raise AssertionError("Cannot prepend self to self")
        if x.graph is not self.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move (or insert) node ``x`` just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        # the node keeps its own links, so an iteration standing on it can go on
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- inputs
    @property
    def args(self) -> tuple:
        """The positional arguments (may contain Nodes). Assigning updates the users."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments (may contain Nodes). Assigning updates the users."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """Every Node this one reads, in first-seen order, each once."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg) -> None:
        """Set positional argument ``idx`` to ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg) -> None:
        """Insert ``arg`` at position ``idx`` of the positional arguments."""
        if not 0 <= idx <= len(self.args):
            raise AssertionError(f"insert_args index must be between 0 and {len(self.args)}")
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key: str, arg) -> None:
        """Set keyword argument ``key`` to ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        found = {}

        def collect(n):
            found.setdefault(n)
            return n
        self._args = map_aggregate(new_args, lambda a: collect(a) if isinstance(a, Node) else a)
        self._kwargs = map_aggregate(new_kwargs,
                                     lambda a: collect(a) if isinstance(a, Node) else a)
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = found
        for new in found:
            new.users.setdefault(self)

    @property
    def stack_trace(self):
        """Where in user code this node was recorded (``meta['stack_trace']``), if known."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ---- rewriting
    def replace_all_uses_with(self, replace_with: Node, delete_user_cb=lambda user: True, *,
                              propagate_meta=False) -> list:
        """Make every user read ``replace_with`` instead of this node (those for which
        ``delete_user_cb(user)`` is true); returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     "meta keys")
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for use in to_process:
            def swap(n):
                return replace_with if n is self else n
            use._update_args_kwargs(map_arg(use._args, swap), map_arg(use._kwargs, swap))
        return to_process

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read ``new_input`` wherever this node read ``old_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def _rename(self, candidate: str) -> None:
        if candidate == self.name:
            return
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether removing this node could change the program: placeholders, outputs, calls
        with side effects (``operator.setitem``, asserts, random ops when ``impure_random``)
        and modules marked ``_is_impure``."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(mod.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            if self.target in _side_effectful_functions:
                return True
            return impure_random and self.target in _random_ops()
        return False

    # ---- printing
    def __repr__(self) -> str:
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target) -> str:
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None)
        if name is not None and module == "builtins":
            return f"builtins.{name}"
        if name is not None and module == "_operator":
            return f"operator.{name}"
        return _get_qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None, *,
                    include_tensor_metadata=False) -> str | None:
        """This node as one line of ``print(graph)``; for placeholders, with
        ``placeholder_names`` given, appends to it and returns None."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        users = f"[num_users={len(self.users)}]"
        if self.op == "placeholder":
            if placeholder_names:  # torch's Graph.__str__ passes an empty list: a line
                arg = self.target + (f": {_type_repr(self.type)}" if self.type else "")
                placeholder_names.append(arg)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : {typename}{users} = placeholder[target={self.target}]" \
                   f"{default}"
        if self.op == "get_attr":
            return f"%{self.name} : {typename}{users} = get_attr[target=" \
                   f"{self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}{users} = {self.op}[target="
                f"{self._pretty_print_target(self.target)}](args = {_format_arg(self.args)}"
                f", kwargs = {_format_arg(self.kwargs)})")


@compatibility(is_backward_compatible=True)
def map_arg(a, fn):
    """Apply ``fn`` to every Node inside the nested argument ``a`` (other leaves kept)."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


@compatibility(is_backward_compatible=True)
def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a``, rebuilding tuples (named ones too), lists and
    dicts (as immutable_list / immutable_dict) and slices around the results."""
    t = type(a)
    if t is tuple or isinstance(a, tuple):
        items = [map_aggregate(e, fn) for e in a]
        return t(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, list):
        return immutable_list([map_aggregate(e, fn) for e in a])
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)
