"""The static half of capture: read a function's bytecode (``dis``) and say whether tracing it
once into a graph is sound, i.e. whether replaying the graph later does exactly what running
the Python again would do. glasstorch cannot rewrite frames as Dynamo does, so anything it
cannot prove harmless is a graph break: a call to an unknown Python callable (``print``,
``random.random``), a store outside the frame's own locals (globals, attributes, closure
cells, containers passed in), a value read out of a tensor (``.item()``, ``.tolist()``), a
context manager, a generator. What the frame only *reads* from outside (globals, closure
cells) is returned so the caller can guard on it."""

from __future__ import annotations

import builtins
import dis
import math
import operator
import types

__all__ = ["check_callable", "check_module", "Unsound"]

# builtins whose calls have no side effects and read no tensor value into Python
_PURE_BUILTINS = {
    "len", "range", "isinstance", "issubclass", "tuple", "list", "dict", "set", "frozenset",
    "int", "float", "bool", "str", "min", "max", "abs", "sum", "zip", "enumerate", "getattr",
    "hasattr", "super", "slice", "reversed", "sorted", "map", "filter", "any", "all", "type",
    "callable", "divmod", "round", "pow", "repr", "iter", "next", "ValueError", "TypeError",
    "RuntimeError", "AssertionError", "NotImplementedError", "IndexError", "KeyError",
}
_PURE_MODULES = (math, operator)
# Tensor methods that hand a tensor's values to Python (a data-dependent point)
_VALUE_READS = {"item", "tolist", "numpy", "data_ptr", "__bool__", "__int__", "__float__",
                "__index__"}
# container methods that change the container
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
             "add", "discard", "popitem", "sort", "reverse", "write", "__setitem__",
             "__delitem__"}
# glasstorch functions with effects outside the graph
_IMPURE_TORCH = {"manual_seed", "seed", "save", "load", "set_printoptions", "set_default_dtype",
                 "set_default_device", "set_grad_enabled", "set_num_threads",
                 "use_deterministic_algorithms", "graph_break"}
_BLOCKS = {"BEFORE_WITH", "SETUP_WITH", "BEFORE_ASYNC_WITH", "YIELD_VALUE", "SETUP_ASYNC_WITH",
           "GET_AWAITABLE", "RETURN_GENERATOR"}
_ALIASING_LOADS = {"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_ATTR", "LOAD_METHOD", "LOAD_CLOSURE",
                   "LOAD_NAME"}


class Unsound(Exception):
    """Why a frame cannot be captured (the graph-break reason)."""


def _producer(ins, k, depth):
    """The instruction that pushed the stack item ``depth`` below the top just before
    instruction ``k`` (walking back over straight-line code; None when unsure)."""
    for j in range(k - 1, -1, -1):
        i = ins[j]
        if i.is_jump_target:
            return None
        effect = dis.stack_effect(i.opcode, i.arg if i.opcode >= dis.HAVE_ARGUMENT else None,
                                  jump=False)
        if effect >= 1 and depth < effect:
            return i
        depth -= effect
    return None


def _where(code, ins):
    line = ins.positions.lineno if ins.positions is not None else code.co_firstlineno
    return f"{code.co_filename}:{line} in {code.co_name}"


def _is_glasstorch(obj) -> bool:
    if isinstance(obj, types.ModuleType):
        return obj.__name__.split(".")[0] == "glasstorch"
    mod = getattr(obj, "__module__", None) or ""
    if not mod and hasattr(obj, "__objclass__"):
        mod = getattr(obj.__objclass__, "__module__", "")
    return mod.split(".")[0] == "glasstorch"


class _Checker:
    def __init__(self):
        self.reads = {}       # (kind, owner id, name) -> (owner, name): outside values read
        self.seen = set()     # code objects already checked
        self.methods = set()  # attribute names used, to find user methods called on modules

    def code(self, code, globals_, closure=(), depth=0):
        if code in self.seen:
            return
        self.seen.add(code)
        if depth > 16:
            raise Unsound(f"call depth over 16 at {code.co_name}")
        if code.co_flags & (inspect_generator | inspect_coroutine):
            raise Unsound(f"generator or coroutine {code.co_name} is not captured")
        cells = dict(zip(code.co_freevars, closure or ()))
        args = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                    + bool(code.co_flags & 4) + bool(code.co_flags & 8)])
        ins = list(dis.get_instructions(code))
        aliased = {i.argval for k, i in enumerate(ins) if i.opname == "STORE_FAST" and k
                   and ins[k - 1].opname in _ALIASING_LOADS | {"LOAD_FAST"}}
        outside = args | aliased
        for k, i in enumerate(ins):
            op, name = i.opname, i.argval
            if op in _BLOCKS:
                what = "context manager" if "WITH" in op else "generator"
                raise Unsound(f"{what} at {_where(code, i)}")
            if op in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME"):
                raise Unsound(f"store to global {name!r} at {_where(code, i)}")
            if op in ("STORE_ATTR", "DELETE_ATTR"):
                raise Unsound(f"attribute store .{name} at {_where(code, i)}")
            if op == "STORE_DEREF" and name in code.co_freevars:
                raise Unsound(f"store to closure variable {name!r} at {_where(code, i)}")
            if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
                base = _producer(ins, k, 1)
                if not (base is not None and base.opname == "LOAD_FAST"
                        and base.argval not in outside):
                    raise Unsound(f"item store into an object from outside the frame at "
                                  f"{_where(code, i)}")
            if op in ("LOAD_ATTR", "LOAD_METHOD"):
                self.methods.add(name)
                if name in _VALUE_READS:
                    raise Unsound(f"Tensor.{name}() reads a tensor value into Python at "
                                  f"{_where(code, i)}")
                if name in _MUTATORS:
                    base = ins[k - 1]
                    if not (base.opname == "LOAD_FAST" and base.argval not in outside):
                        raise Unsound(f"call to .{name}() mutates an object from outside "
                                      f"the frame at {_where(code, i)}")
            if op in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"):
                if op == "LOAD_GLOBAL":
                    owner, present = globals_, name in globals_
                    value = globals_.get(name, getattr(builtins, name, None))
                    if not present:
                        if name not in _PURE_BUILTINS:
                            raise Unsound(f"call to builtin {name!r} at {_where(code, i)}")
                        continue
                elif name in cells:
                    owner = cells[name]
                    try:
                        value = owner.cell_contents
                    except ValueError:
                        continue
                else:
                    continue       # the frame's own cell: a local
                value = self._follow(value, ins, k)
                self.value(value, code, i, globals_, depth)
                self.reads[(op, id(owner), name)] = (owner, name)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const, globals_, (), depth + 1)

    @staticmethod
    def _follow(value, ins, k):
        """Resolve ``module.attr.attr`` chains that start at instruction ``k``."""
        j = k + 1
        while isinstance(value, types.ModuleType) and j < len(ins) and \
                ins[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):
            value = getattr(value, ins[j].argval, None)
            j += 1
        return value

    def value(self, value, code, ins, globals_, depth):
        if isinstance(value, types.ModuleType):
            if not (_is_glasstorch(value) or value in _PURE_MODULES):
                raise Unsound(f"call into module {value.__name__!r} at {_where(code, ins)}")
            return
        if getattr(value, "_torchdynamo_disable", False):
            raise Unsound(f"call to a function marked torch._dynamo.disable at "
                          f"{_where(code, ins)}")
        if _is_glasstorch(value):
            if getattr(value, "__name__", "") in _IMPURE_TORCH:
                raise Unsound(f"call to torch.{value.__name__} at {_where(code, ins)}")
            return
        if any(getattr(m, "__name__", None) == getattr(value, "__module__", 0)
               for m in _PURE_MODULES) or isinstance(value, (int, float, bool, str, complex,
                                                              type(None), tuple)):
            return
        if isinstance(value, types.FunctionType):
            self.code(value.__code__, value.__globals__, value.__closure__, depth + 1)
            return
        from ..nn import Module
        if isinstance(value, Module):
            self.module(value, depth + 1)
            return
        if isinstance(value, types.MethodType) and isinstance(value.__func__,
                                                               types.FunctionType):
            self.value(value.__self__, code, ins, globals_, depth)
            self.value(value.__func__, code, ins, globals_, depth)
            return
        if isinstance(value, (types.BuiltinFunctionType, type)) or callable(value):
            from .._tensor import Tensor
            if isinstance(value, Tensor) or (isinstance(value, type) and
                                             issubclass(value, Exception)):
                return
            raise Unsound(f"call to unknown callable {getattr(value, '__name__', value)!r} "
                          f"at {_where(code, ins)}")
        # plain data (lists, dicts, tensors): read only; the caller guards on it

    def module(self, mod, depth=0):
        """Check the forward of every module under ``mod`` whose class is user code, and the
        user methods its code names."""
        for m in mod.modules():
            if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks:
                raise Unsound(f"module hooks on {type(m).__name__}")
            cls = type(m)
            if _is_glasstorch(cls):
                continue
            fwd = getattr(cls, "forward", None)
            if isinstance(fwd, types.FunctionType):
                self.code(fwd.__code__, fwd.__globals__, fwd.__closure__, depth)
        changed = True
        while changed:
            changed = False
            for m in mod.modules():
                cls = type(m)
                if _is_glasstorch(cls):
                    continue
                for name in list(self.methods):
                    fn = getattr(cls, name, None)
                    if isinstance(fn, property):
                        fn = fn.fget
                    if isinstance(fn, types.FunctionType) and fn.__code__ not in self.seen:
                        self.code(fn.__code__, fn.__globals__, fn.__closure__, depth)
                        changed = True


inspect_generator = 0x20 | 0x200    # CO_GENERATOR | CO_ASYNC_GENERATOR
inspect_coroutine = 0x80 | 0x100    # CO_COROUTINE | CO_ITERABLE_COROUTINE


def check_callable(fn):
    """Raise ``Unsound`` with the reason if capturing ``fn`` (a Python function) could differ
    from running it; return the outside values it reads as ``[(owner, name)]``, where owner
    is a globals dict or a closure cell."""
    c = _Checker()
    fn = getattr(fn, "__func__", fn)
    c.code(fn.__code__, fn.__globals__, fn.__closure__)
    return list(c.reads.values())


def check_module(mod):
    """``check_callable`` for a module's call: its forward and every user submodule's."""
    c = _Checker()
    c.module(mod)
    return list(c.reads.values())
