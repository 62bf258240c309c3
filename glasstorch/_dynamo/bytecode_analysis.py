"""The soundness half of capture: while fx traces a call, watch the Python instructions it
actually runs (``sys.settrace`` with opcode events) and stop the trace, before it executes,
at the first one that would make replaying the graph differ from running the Python again:
a call to an unknown Python callable (``print``, ``random.random``), a store outside the
frame's own locals (globals, attributes, closure cells, containers passed in), a value read
out of a tensor (``.item()``, ``.tolist()``), a context manager, a generator. Only the path
taken counts, as in Dynamo: a cache-miss branch or an ``except`` arm that does not run is no
graph break. What the frame reads from outside (globals, closure cells) is collected so the
caller can guard on it.

Which frames are watched: user code only. glasstorch and NumPy are what the graph records;
the standard library is judged where user code reaches it (a module or function loaded from
a global), by whether its module is one of the side-effect-free ones."""

from __future__ import annotations

import dis
import gc
import os
import sys
import sysconfig
import traceback
import types

import numpy as np

__all__ = ["Unsound", "Watch", "check_hooks"]

# builtins whose calls have no side effects and read no tensor value into Python
_PURE_BUILTINS = {
    "len", "range", "isinstance", "issubclass", "tuple", "list", "dict", "set", "frozenset",
    "int", "float", "bool", "str", "min", "max", "abs", "sum", "zip", "enumerate", "getattr",
    "hasattr", "super", "slice", "reversed", "sorted", "map", "filter", "any", "all", "type",
    "callable", "divmod", "round", "pow", "repr", "iter", "next", "ValueError", "TypeError",
    "RuntimeError", "AssertionError", "NotImplementedError", "IndexError", "KeyError",
}
# standard-library modules whose functions and classes only build and inspect values
_PURE_STDLIB = {"abc", "_abc", "collections", "collections.abc", "_collections_abc",
                "_collections", "typing", "functools", "_functools", "itertools", "dataclasses",
                "enum", "numbers", "types", "copy", "operator", "_operator", "math", "string",
                "keyword"}
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
_GENERATOR = 0x20 | 0x200 | 0x80 | 0x100   # CO_(ASYNC_)GENERATOR, CO_(ITERABLE_)COROUTINE
_CELL_LOADS = ("LOAD_DEREF", "LOAD_CLASSDEREF")


class Unsound(Exception):
    """Why a call cannot be captured (the graph-break reason); ``user_stack``: the user
    frames at the break, outermost first, as ``traceback.FrameSummary``."""

    def __init__(self, reason, user_stack=()):
        super().__init__(reason)
        self.user_stack = list(user_stack)


class _Stop(BaseException):
    """Raised into the traced frame at an unsound instruction; a BaseException so that the
    user's own ``except Exception`` cannot swallow it."""


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


def _package_dir(mod):
    return os.path.dirname(os.path.abspath(mod.__file__)) + os.sep


_TRUSTED = (_package_dir(sys.modules[__name__.split(".")[0]]), _package_dir(np))
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
_ORIGIN = {}          # code -> "trusted" | "library" | "user"
_PLANS = {}           # code -> {offset: reason or ("load", instruction, attribute chain)}
_PARENT = {}          # nested code -> the code whose co_consts hold it


def _file_origin(f):
    if f.startswith(_TRUSTED) or f in ("<glasstorch compile>", "<eval_with_key>"):
        return "trusted"
    if f.startswith("<frozen ") or (f.startswith(_STDLIB) and "site-packages" not in f):
        return "library"
    return "user"


def _origin(code):
    o = _ORIGIN.get(code)
    if o is None:
        o = _ORIGIN[code] = _file_origin(code.co_filename)
    return o


def _plan(code):
    """Per instruction offset of ``code``: the reason it is unsound whenever it runs, or a
    ``("load", instruction, chain)`` whose loaded value is judged when it runs."""
    plan = _PLANS.get(code)
    if plan is not None:
        return plan
    plan = {}
    args = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                + bool(code.co_flags & 4) + bool(code.co_flags & 8)])
    ins = list(dis.get_instructions(code))
    aliased = {i.argval for k, i in enumerate(ins) if i.opname == "STORE_FAST" and k
               and ins[k - 1].opname in _ALIASING_LOADS | {"LOAD_FAST"}}
    outside = args | aliased
    genexpr = code.co_name == "<genexpr>"     # created and consumed by its enclosing frame
    for k, i in enumerate(ins):
        op, name = i.opname, i.argval
        reason = None
        if op in _BLOCKS and not (genexpr and op in ("YIELD_VALUE", "RETURN_GENERATOR")):
            what = "context manager" if "WITH" in op else "generator"
            reason = f"{what} at {_where(code, i)}"
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME"):
            reason = f"store to global {name!r} at {_where(code, i)}"
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            reason = f"attribute store .{name} at {_where(code, i)}"
        elif op == "STORE_DEREF" and name in code.co_freevars:
            reason = f"store to closure variable {name!r} at {_where(code, i)}"
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            base = _producer(ins, k, 1)
            if not (base is not None and base.opname == "LOAD_FAST"
                    and base.argval not in outside):
                reason = (f"item store into an object from outside the frame at "
                          f"{_where(code, i)}")
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            if name in _VALUE_READS:
                reason = f"Tensor.{name}() reads a tensor value into Python at {_where(code, i)}"
            elif name in _MUTATORS:
                base = ins[k - 1]
                if not (base.opname == "LOAD_FAST" and base.argval not in outside):
                    reason = (f"call to .{name}() mutates an object from outside the frame "
                              f"at {_where(code, i)}")
        elif op == "LOAD_GLOBAL" or (op in _CELL_LOADS and name in code.co_freevars):
            chain = []
            for j in range(k + 1, len(ins)):
                if ins[j].opname not in ("LOAD_ATTR", "LOAD_METHOD"):
                    break
                chain.append(ins[j].argval)
            reason = ("load", i, tuple(chain))
        if reason is not None:
            plan[i.offset] = reason
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _PARENT[const] = code
    _PLANS[code] = plan
    return plan


def _judge(value, called, code, ins):
    """The reason using the loaded ``value`` is unsound, or None. ``called``: the load
    pushes the callable of a call (a class merely named, as in ``isinstance(x, Mapping)``,
    is plain data)."""
    if isinstance(value, types.ModuleType):
        if not (_is_glasstorch(value) or value.__name__ in _PURE_STDLIB):
            return f"call into module {value.__name__!r} at {_where(code, ins)}"
        return None
    if getattr(value, "_torchdynamo_disable", False):
        return f"call to a function marked torch._dynamo.disable at {_where(code, ins)}"
    if _is_glasstorch(value):
        if getattr(value, "__name__", "") in _IMPURE_TORCH:
            return f"call to torch.{value.__name__} at {_where(code, ins)}"
        return None
    home = getattr(value, "__module__", None)
    if home in _PURE_STDLIB or isinstance(value, (int, float, bool, str, complex, type(None),
                                                  tuple)):
        return None
    if isinstance(value, (types.FunctionType, types.MethodType)):
        func = getattr(value, "__func__", value)
        if _origin(func.__code__) == "library":
            return f"call to {home}.{func.__name__} at {_where(code, ins)}"
        return None                   # its frame is watched when it runs
    from ..nn import Module
    if isinstance(value, Module):
        return check_hooks(value)
    if isinstance(value, type) and (not called or issubclass(value, BaseException)):
        return None
    if isinstance(value, (types.BuiltinFunctionType, type)) or callable(value):
        from .._tensor import Tensor
        if isinstance(value, Tensor):
            return None
        return (f"call to unknown callable {getattr(value, '__name__', value)!r} at "
                f"{_where(code, ins)}")
    return None                       # plain data (lists, dicts, tensors): guarded on


def check_hooks(mod):
    """The reason ``mod`` cannot be captured for hooks on it or a submodule, or None."""
    for m in mod.modules():
        if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks:
            return f"module hooks on {type(m).__name__}"
    return None


class Watch:
    """``with Watch(roots) as w:`` traces the calls made inside under the soundness watch;
    ``w.reads`` are the outside values read, as ``[(owner, name)]`` where owner is a globals
    dict or a closure cell. A frame found unsound stops with ``Unsound`` (raised on exit
    even when user code caught the stop). ``roots``: functions whose closure cells the
    watched frames may read (user functions reached as values are added as they load)."""

    def __init__(self, roots=()):
        self.reads = {}
        self.reason = None
        self.user_stack = []
        self.closures = {}
        for fn in roots:
            self._know(fn)

    def _know(self, fn):
        fn = getattr(fn, "__func__", fn)
        if isinstance(fn, types.FunctionType) and fn.__closure__:
            self.closures[fn.__code__] = dict(zip(fn.__code__.co_freevars, fn.__closure__))

    def know_module(self, mod):
        """Register the functions of ``mod``'s user module classes (their closure cells)."""
        for m in mod.modules():
            for cls in type(m).__mro__:
                if not _is_glasstorch(cls):
                    for v in vars(cls).values():
                        self._know(getattr(v, "fget", v))

    def __enter__(self):
        self._previous = sys.gettrace()
        # a cyclic collection would run other code's finalizers and weakref callbacks inside
        # the watched frames, and the watch would judge them as part of the program
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        sys.settrace(self._call)
        return self

    def __exit__(self, kind, value, tb):
        replaced = sys.gettrace() != self._call and self.reason is None
        sys.settrace(self._previous)
        if self._gc_was_enabled:
            gc.enable()
        if self.reason is not None:
            raise Unsound(self.reason, self.user_stack) from (value if kind is _Stop else None)
        if replaced:
            raise Unsound("the trace function was replaced while capturing")
        return False

    def _stop(self, reason, frame):
        self.reason = reason
        stack = traceback.extract_stack(frame)
        self.user_stack = [s for s in stack if _file_origin(s.filename) == "user"]
        raise _Stop(reason)

    # ------------------------------------------------------------------ trace functions
    def _call(self, frame, event, arg):
        code = frame.f_code
        origin = _origin(code)
        if origin != "user":
            return None
        if code.co_flags & _GENERATOR and code.co_name != "<genexpr>":
            self._stop(f"generator or coroutine {code.co_name} is not captured", frame)
        _plan(code)
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return self._op

    def _op(self, frame, event, arg):
        if event != "opcode":
            return self._op
        step = _PLANS[frame.f_code].get(frame.f_lasti)
        if step is None:
            return self._op
        if isinstance(step, str):
            self._stop(step, frame)
        _load, ins, chain = step
        code = frame.f_code
        name = ins.argval
        if ins.opname == "LOAD_GLOBAL":
            owner = frame.f_globals
            if name in owner:
                value = owner[name]
            else:
                if name not in _PURE_BUILTINS:
                    self._stop(f"call to builtin {name!r} at {_where(code, ins)}", frame)
                return self._op
        else:
            owner = self._cell(frame, name)
            if owner is None:
                return self._op          # a cell of an enclosing frame running now
            try:
                value = owner.cell_contents
            except ValueError:
                return self._op
        for attr in chain:               # module.attr.attr chains
            if not isinstance(value, types.ModuleType):
                break
            value = getattr(value, attr, None)
        called = ins.opname == "LOAD_GLOBAL" and ins.arg & 1 and not chain
        reason = _judge(value, called, code, ins)
        if reason is not None:
            self._stop(reason, frame)
        self._know(value)
        self.reads[(id(owner), name)] = (owner, name)
        return self._op

    def _cell(self, frame, name):
        """The closure cell ``frame`` reads as ``name``; None for a cell of the enclosing
        frame that created the function (a local there, nothing to guard)."""
        code = frame.f_code
        while True:
            cells = self.closures.get(code)
            if cells is not None and name in cells:
                return cells[name]
            parent = _PARENT.get(code)
            if parent is None:
                self._stop(f"closure variable {name!r} of {code.co_name}, a function the "
                           f"capture cannot see", frame)
            if name in parent.co_cellvars:
                return None
            code = parent
