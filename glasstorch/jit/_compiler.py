"""The TorchScript frontend: Python source (``inspect.getsource`` + ``ast``) to the typed IR of
``_ir``, with TorchScript's subset and type rules.

Types follow TorchScript: unannotated parameters are Tensor, a local's type is fixed by its
first assignment (an ``if`` may widen it to ``Optional``), ``is None``/``isinstance`` refine
types in their branches, ``is_scripting()`` is a compile-time True (its dead branch is not
compiled). Loops over ``ModuleList``/``Sequential``/tuples are unrolled. Every statement becomes
nodes in structured blocks (``prim::If``, ``prim::Loop`` with loop-carried values), so the
generated Python keeps the function's control flow and calls the same operators eager code
calls: scripting never changes results.
"""

from __future__ import annotations

import ast
import builtins
import enum
import inspect
import math
import operator
import textwrap
import typing

from .. import _tensor
from ..nn.modules.module import Module
from . import _classes, _ir
from ._internal import FunctionModifiers
from ._ir import (
    AnyT,
    BoolT,
    DeviceT,
    DictT,
    DTypeT,
    FloatT,
    IntT,
    JitType,
    ListT,
    Node,
    NoneT,
    NumberT,
    OptionalT,
    StrT,
    TensorT,
    TupleT,
    UnionT,
    Value,
    is_subtype,
    unify,
)
from .frontend import NotSupportedError, SourceRange, UnsupportedNodeError, _type_error

Tensor = _tensor.Tensor

__all__ = []


class Error(Exception):
    """An exception raised by TorchScript code (``torch.jit.Error``): ``raise`` in a scripted
    function surfaces as this, naming the Python exception class and the source line."""


Error.__module__ = "torch.jit"


def _raise(msg, cls_name, loc):
    where = loc.highlight() if loc is not None else ""
    raise Error("The following operation failed in the TorchScript interpreter.\n"
                "Traceback of TorchScript (most recent call last):\n"
                f"{where}{cls_name}: {msg}\n")


# --------------------------------------------------------------------------- annotations
def _glasstorch():
    import glasstorch
    return glasstorch


def type_from_python(obj, where=None):
    """The TorchScript type named by an annotation object (``List[int]``, ``Optional[Tensor]``)."""
    gt = _glasstorch()
    if obj is None or obj is type(None):
        return NoneT
    if isinstance(obj, JitType):      # a class of a loaded archive
        return obj
    if isinstance(obj, type):
        if issubclass(obj, Tensor):
            return TensorT
        if issubclass(obj, enum.Enum):
            return _classes.enum_type(obj)
        simple = {bool: BoolT, int: IntT, float: FloatT, str: StrT}
        if obj in simple:
            return simple[obj]
        if obj is gt.device:
            return DeviceT
        if obj is gt.dtype:
            return DTypeT
        if _classes.is_named_tuple(obj):
            return _classes.named_tuple_type(obj)
        if _classes.scriptable_class(obj):
            return _classes.class_info(obj).jit_type
        if obj in (list, tuple, dict):
            raise _type_error(where, f"Unknown type annotation: '{obj.__name__}' needs contained "
                                     f"types, e.g. {obj.__name__.capitalize()}[int]")
    if obj is typing.Any:
        return AnyT
    origin = typing.get_origin(obj)
    args = typing.get_args(obj)
    if origin is list and args:
        return ListT(type_from_python(args[0], where))
    if origin is tuple:
        if args == ((),):
            return TupleT(())
        return TupleT([type_from_python(a, where) for a in args])
    if origin is dict and len(args) == 2:
        return DictT(type_from_python(args[0], where), type_from_python(args[1], where))
    if origin is typing.Union or type(obj).__name__ == "UnionType":
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return OptionalT(type_from_python(rest[0], where))
        return UnionT([type_from_python(a, where) for a in args])
    if origin is typing.Final:
        return type_from_python(args[0], where) if args else AnyT
    raise _type_error(where, f"Unknown type annotation: '{obj}'")


def type_of_value(v):
    """The TorchScript type of a Python value (module attributes, constants); None if none."""
    gt = _glasstorch()
    if v is None:
        return NoneT
    if isinstance(v, enum.Enum):          # before str/int: an Enum may mix them in
        return _classes.enum_type(type(v))
    if isinstance(v, bool):
        return BoolT
    if isinstance(v, int):
        return IntT
    if isinstance(v, float):
        return FloatT
    if isinstance(v, str):
        return StrT
    if isinstance(v, Tensor):
        return TensorT
    if isinstance(v, gt.device):
        return DeviceT
    if isinstance(v, gt.dtype):
        return DTypeT
    if isinstance(v, (list, tuple)):
        ts = [type_of_value(x) for x in v]
        if None in ts:
            return None
        if _classes.is_named_tuple(type(v)):
            return TupleT(ts, tuple(type(v)._fields), _classes.qualified_name(type(v)))
        if isinstance(v, tuple):
            return TupleT(ts)
        if not ts:
            return ListT(TensorT)
        t = ts[0]
        return ListT(t) if all(x == t for x in ts) else None
    if isinstance(v, dict):
        if not v:
            return DictT(StrT, TensorT)
        ks = {type_of_value(k) for k in v}
        vs = {type_of_value(x) for x in v.values()}
        if len(ks) == 1 and len(vs) == 1 and None not in ks | vs:
            return DictT(ks.pop(), vs.pop())
        return None
    if _classes.scriptable_class(type(v)):
        try:                  # an instance of a user class: its class compiles as TorchScript
            return _classes.class_info(type(v)).jit_type
        except Exception:
            return None
    return None


def check_value(v, t):
    """Whether Python value ``v`` may be passed where TorchScript type ``t`` is expected."""
    k = t.kind
    if k == "Any":
        return True
    if k == "Tensor":
        return isinstance(v, Tensor)
    if k == "int":
        return isinstance(v, int) or _is_dtype(v)      # torch accepts a bool for int
    if k == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if k == "bool":
        return isinstance(v, bool)
    if k == "str":
        return isinstance(v, str)
    if k == "NoneType":
        return v is None
    if k == "Scalar":
        return isinstance(v, (int, float, bool, complex))
    if k == "Optional":
        return v is None or check_value(v, t.args[0])
    if k == "Union":
        return any(check_value(v, m) for m in t.args)
    if k == "List":
        return isinstance(v, (list, tuple)) and all(check_value(x, t.args[0]) for x in v)
    if k == "Tuple":
        return (isinstance(v, tuple) and len(v) == len(t.args)
                and all(check_value(x, a) for x, a in zip(v, t.args)))
    if k == "Dict":
        return isinstance(v, dict) and all(check_value(a, t.args[0]) and check_value(b, t.args[1])
                                           for a, b in v.items())
    if k == "Device":
        return isinstance(v, (_glasstorch().device, str))
    if k == "Enum":
        return isinstance(v, _classes.enum_class(t))
    if k == "Class":
        info = _classes.info_for(t)
        return isinstance(v, info.cls) if info is not None else isinstance(v, Module)
    return True


def _is_dtype(v):
    return isinstance(v, _glasstorch().dtype)


def python_type_name(v):
    """How torch names the type of a Python argument in a mismatch message."""
    t = type_of_value(v)
    return t.py() if t is not None else type(v).__name__


# --------------------------------------------------------------------------- op result types
_INT_RESULT = {"dim", "ndimension", "numel", "nelement", "element_size", "get_device",
               "storage_offset", "__len__", "_dim", "dense_dim", "sparse_dim"}
_BOOL_RESULT = {"is_floating_point", "is_complex", "is_contiguous", "equal", "allclose",
                "is_nonzero", "is_same_size", "is_signed", "is_tensor", "is_pinned",
                "is_grad_enabled", "is_inference", "is_set_to", "is_shared", "is_conj",
                "is_neg", "is_storage", "are_deterministic_algorithms_enabled"}
_LIST_TENSOR_RESULT = {"split", "chunk", "unbind", "tensor_split", "split_with_sizes",
                       "broadcast_tensors", "meshgrid", "unsafe_chunk", "unsafe_split", "hsplit",
                       "vsplit", "dsplit", "unsafe_split_with_sizes"}
_PAIR = TupleT([TensorT, TensorT])


def _named(*fields):
    """The type of an operator's named-tuple result (``torch.return_types.max``)."""
    return TupleT([TensorT] * len(fields), fields)


_VALUES_INDICES = _named("values", "indices")
_TUPLE_RESULT = {"sort": _VALUES_INDICES, "topk": _VALUES_INDICES,
                 "kthvalue": _VALUES_INDICES, "mode": _VALUES_INDICES, "std_mean": _PAIR,
                 "var_mean": _PAIR, "aminmax": _named("min", "max"),
                 "cummax": _VALUES_INDICES, "cummin": _VALUES_INDICES,
                 "slogdet": _named("sign", "logabsdet"), "frexp": _named("mantissa", "exponent"),
                 "qr": _named("Q", "R"), "eigh": _named("eigenvalues", "eigenvectors"),
                 "eig": _named("eigenvalues", "eigenvectors"), "lu_factor": _named("LU", "pivots"),
                 "svd": _named("U", "S", "V"),
                 "lstsq": _named("solution", "residuals", "rank", "singular_values"),
                 "histogram": _named("hist", "bin_edges")}


def op_result_type(name, arg_types, kw_names):
    """The static type of a call to builtin operator ``name``; Tensor unless known otherwise."""
    if name in _INT_RESULT:
        return IntT
    if name in ("size", "stride"):
        return IntT if len(arg_types) > 1 or "dim" in kw_names else ListT(IntT)
    if name in _BOOL_RESULT:
        return BoolT
    if name == "item":
        return NumberT
    if name == "tolist":
        return AnyT
    if name in _LIST_TENSOR_RESULT:
        return ListT(TensorT)
    if name in ("max", "min", "median", "nanmedian"):
        if "dim" in kw_names or (len(arg_types) > 1 and arg_types[1] == IntT):
            return _VALUES_INDICES
        return TensorT
    if name in ("where", "nonzero") and (len(arg_types) == 1 and name == "where"
                                          or "as_tuple" in kw_names):
        return ListT(TensorT)
    if name == "get_default_dtype":
        return DTypeT
    if name in _TUPLE_RESULT:
        return _TUPLE_RESULT[name]
    return TensorT


_TENSOR_ATTRS = {"shape": ("aten::size", ListT(IntT)), "dtype": ("prim::dtype", DTypeT),
                 "device": ("prim::device", DeviceT), "ndim": ("aten::dim", IntT),
                 "requires_grad": ("prim::requires_grad", BoolT),
                 "is_cuda": ("prim::is_cuda", BoolT), "is_leaf": ("aten::is_leaf", BoolT),
                 "is_sparse": ("prim::is_sparse", BoolT), "is_meta": ("prim::is_meta", BoolT),
                 "is_quantized": ("prim::is_quantized", BoolT),
                 "grad": ("prim::grad", OptionalT(TensorT)), "data": ("prim::data", TensorT),
                 "T": ("aten::numpy_T", TensorT), "mT": ("aten::mT", TensorT),
                 "H": ("aten::adjoint", TensorT), "mH": ("aten::mH", TensorT),
                 "real": ("aten::real", TensorT), "imag": ("aten::imag", TensorT),
                 "layout": ("prim::layout", IntT), "is_mkldnn": ("prim::is_mkldnn", BoolT),
                 "itemsize": ("aten::itemsize", IntT), "nbytes": ("aten::nbytes", IntT)}

_BINOPS = {ast.Add: ("add", "+"), ast.Sub: ("sub", "-"), ast.Mult: ("mul", "*"),
           ast.Div: ("div", "/"), ast.FloorDiv: ("floordiv", "//"), ast.Mod: ("remainder", "%"),
           ast.Pow: ("pow", "**"), ast.MatMult: ("matmul", "@"), ast.BitAnd: ("__and__", "&"),
           ast.BitOr: ("__or__", "|"), ast.BitXor: ("__xor__", "^"),
           ast.LShift: ("__lshift__", "<<"), ast.RShift: ("__rshift__", ">>")}
_INPLACE = {"+": "iadd", "-": "isub", "*": "imul", "/": "itruediv", "//": "ifloordiv",
            "%": "imod", "**": "ipow", "@": "imatmul", "&": "iand", "|": "ior", "^": "ixor",
            "<<": "ilshift", ">>": "irshift"}
_CMPOPS = {ast.Eq: ("eq", "=="), ast.NotEq: ("ne", "!="), ast.Lt: ("lt", "<"),
           ast.LtE: ("le", "<="), ast.Gt: ("gt", ">"), ast.GtE: ("ge", ">=")}
_UNSUPPORTED_NODES = {ast.Lambda: "Lambda", ast.Try: "try blocks", ast.Global: "global variables",
                      ast.Nonlocal: "nonlocal variables", ast.Yield: "yield statements",
                      ast.YieldFrom: "yield from statements", ast.Await: "await expressions",
                      ast.AsyncFunctionDef: "async function definitions",
                      ast.AsyncFor: "async for loops", ast.AsyncWith: "async with statements",
                      ast.ClassDef: "class definitions", ast.Import: "import statements",
                      ast.ImportFrom: "import statements", ast.Set: "set literals",
                      ast.SetComp: "set comprehensions", ast.GeneratorExp: "generator expressions",
                      ast.NamedExpr: "assignment expressions", ast.Match: "match statements",
                      ast.FunctionDef: "function definitions",
                      ast.Starred: "starred expressions"}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_NODES[ast.TryStar] = "try blocks"
_START_TOKENS = {ast.FunctionDef: "def", ast.ClassDef: "class", ast.Try: "try",
                 ast.Import: "import", ast.ImportFrom: "from", ast.Global: "global",
                 ast.AsyncFunctionDef: "def"}


# --------------------------------------------------------------------------- sugared values
class _Sugar:
    """A compile-time value that is not a graph value: a Python module, a function, a type,
    a submodule, a bound method."""

    def __init__(self, kind, obj=None, **extra):
        self.kind = kind
        self.obj = obj
        self.__dict__.update(extra)


class _Terminated(Exception):
    """Internal: statements after a return/raise/break/continue are unreachable."""


class _Scope:
    """Names visible in a block: values or sugar, plus the branch-only names for messages.
    ``local`` holds the names assigned in this block itself: these may be rebound to a value
    of another type, names of enclosing blocks may not (torch's environment frames)."""

    def __init__(self, env=None, missing=None):
        self.env = dict(env or {})
        self.missing = dict(missing or {})
        self.local = set()

    def copy(self):
        return _Scope(self.env, self.missing)


# --------------------------------------------------------------------------- function compiler
class FunctionCompiler:
    """Compiles one Python function (or method, with ``self_info`` for the module) to a Graph."""

    def __init__(self, fn, self_info=None, name=None, resolver=None, archive=None):
        self.fn = fn
        self.self_info = self_info
        self.resolver = resolver
        self.archive = archive is not None
        if archive is not None:
            self._init_archive(archive, name)
            return
        self.name = name or fn.__name__
        try:
            src_lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            raise OSError(f"Can't get source for {fn}. TorchScript requires source access in "
                          f"order to carry out compilation, make sure original .py files are "
                          f"available.") from exc
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        source = textwrap.dedent("".join(src_lines))
        self.indent = len(src_lines[0]) - len(src_lines[0].lstrip())
        self.lines = source.splitlines()
        self.first_line = first
        tree = ast.parse(source)       # a SyntaxError propagates, as in torch
        self.lines = source.splitlines()
        self.first_line = first
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            lam = next((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)), None)
            self.name = fn.__name__
            self.fdef = tree
            raise UnsupportedNodeError(self.loc(lam) if lam is not None else None, "Lambda")
        self.fdef = defs[0]
        self.globals = fn.__globals__
        self.closure = {}
        if fn.__closure__:
            for nm, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.closure[nm] = cell.cell_contents
                except ValueError:
                    pass
        self.graph = _ir.Graph()
        self.decl = {}
        self.return_types = []
        self.loops = []
        self.tmp = 0

    def _init_archive(self, archive, name):
        """Compile a function of a loaded archive: ``archive`` is (function AST, source lines,
        file name, namespace). Its names resolve only in the namespace, and annotations and
        defaults are read without evaluating code."""
        self.fdef, self.lines, self.filename, self.globals = archive
        self.name = name or self.fdef.name
        self.first_line = 1
        self.indent = 0
        self.closure = {}
        self.graph = _ir.Graph()
        self.decl = {}
        self.return_types = []
        self.loops = []
        self.tmp = 0

    def _defaults(self):
        if not self.archive:
            sig = inspect.signature(self.fn)
            return {k: p.default for k, p in sig.parameters.items()}
        a = self.fdef.args
        pos = a.posonlyargs + a.args
        return {p.arg: ast.literal_eval(d) for p, d in zip(pos[len(pos) - len(a.defaults):],
                                                           a.defaults)}

    # -- locations and errors
    def loc(self, node):
        line = getattr(node, "lineno", None) or getattr(self.fdef, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", None) if getattr(node, "end_lineno", line) == line \
            else None
        return SourceRange(self.filename, self.lines, self.first_line + line - 1,
                           col, end, self.first_line, self.name)

    def type_err(self, node, msg):
        return _type_error(self.loc(node), msg)

    # -- building nodes
    def emit(self, kind, inputs, out_types, tpl=None, code=None, node=None, attrs=None,
             pure=True, base=None):
        n = Node(kind, inputs, tpl=tpl, code=code, loc=self.loc(node) if node is not None
                 else None, attrs=attrs, pure=pure)
        for t in out_types:
            v = Value(self.graph, t, base)
            v.node = n
            n.outputs.append(v)
        self.block.nodes.append(n)
        return n

    def const(self, value, node=None, type_=None):
        t = type_ or type_of_value(value) or AnyT
        return self.emit("prim::Constant", [], [t], node=node, attrs={"value": value}).output()

    def call(self, kind, inputs, out_type, tpl, code, node, pure=True):
        return self.emit(kind, inputs, [out_type], tpl, code, node, pure=pure).output()

    # -- entry
    def compile(self, signature_types=None):
        """Build the graph; returns (graph, param names, param types, defaults, return type)."""
        a = self.fdef.args
        if a.vararg or a.kwarg:
            raise NotSupportedError(self.loc(a.vararg or a.kwarg),
                                    "Compiled functions can't take variable number of arguments "
                                    "or use keyword-only arguments with defaults")
        if a.kwonlyargs and any(d is not None for d in a.kw_defaults):
            raise NotSupportedError(self.loc(a.kwonlyargs[0]),
                                    "Compiled functions can't take variable number of arguments "
                                    "or use keyword-only arguments with defaults")
        params = a.posonlyargs + a.args + a.kwonlyargs
        given = self._defaults()
        scope = _Scope()
        self.block = self.graph.block
        names, types, defaults = [], [], []
        for i, p in enumerate(params):
            if i == 0 and self.self_info is not None:
                v = Value(self.graph, self.self_info.jit_type, "self", exact=True)
                self.graph.block.params.append(v)
                # a module's ``self`` is sugar (submodules, constants); a class's a value
                scope.env[p.arg] = v if getattr(self.self_info, "is_class", False) else \
                    _Sugar("module", self.self_info, value=v)
                continue
            if p.annotation is not None:
                t = self.annotation(p.annotation)
            else:
                t = TensorT
            default = given.get(p.arg, inspect.Parameter.empty)
            if default is not inspect.Parameter.empty and not check_value(default, t):
                if p.annotation is None:
                    raise self.type_err(self.fdef, f'Expected a default value of type Tensor '
                                                   f'(inferred) on parameter "{p.arg}".Because '
                                                   f'"{p.arg}" was not annotated with an '
                                                   f'explicit type it is assumed to be type '
                                                   f"'Tensor'.")
                raise self.type_err(self.fdef, f'Expected a default value of type {t.py()} on '
                                               f'parameter "{p.arg}"')
            v = Value(self.graph, t, p.arg)
            self.graph.block.params.append(v)
            scope.env[p.arg] = v
            scope.local.add(p.arg)
            self.decl[p.arg] = t
            names.append(p.arg)
            types.append(t)
            defaults.append(default)
        self.ret_ann = self.annotation(self.fdef.returns) if self.fdef.returns is not None \
            else None
        try:
            self.stmts(self.fdef.body, scope)
            self.do_return(None, scope, self.fdef)   # falling off the end returns None
        except _Terminated:
            pass
        ret = self.ret_ann
        if ret is None:
            ret = self.return_types[0] if self.return_types else NoneT
            for t in self.return_types[1:]:
                ret = unify(ret, t) or ret
        # the final top-level return becomes the graph's return, as torch prints it
        top = self.graph.block
        if top.nodes and top.nodes[-1].kind == "prim::ReturnStmt":
            last = top.nodes.pop()
            top.returns = [last.inputs[0]]
        return self.graph, names, types, defaults, ret

    # -- annotations: evaluated from the source, so BroadcastingList and strings work
    def annotation(self, ann):
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            ann = ast.parse(ann.value, mode="eval").body
        if isinstance(ann, ast.Subscript):
            base = ann.value
            nm = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if nm.startswith("BroadcastingList"):
                return ListT(self.annotation(ann.slice))
        if isinstance(ann, ast.Constant) and ann.value is None:
            return NoneT
        obj = self.eval_py(ann)
        return type_from_python(obj, self.loc(ann))

    def eval_py(self, expr):
        if self.archive:
            return _archive_eval(expr, self.globals, self)
        ns = dict(self.globals)
        ns.update(self.closure)
        try:
            return eval(compile(ast.Expression(expr), self.filename, "eval"), ns)  # noqa: S307
        except Exception as exc:
            raise self.type_err(expr, f"Unknown type annotation: '{ast.unparse(expr)}' "
                                      f"({exc})") from None

    # -- statements
    def stmts(self, body, scope):
        for s in body:
            self.stmt(s, scope)

    def stmt(self, s, scope):
        t = type(s)
        if t in _UNSUPPORTED_NODES and t is not ast.Starred:
            loc = self.loc(s)        # torch marks the statement's first keyword
            loc.end_col = loc.col + len(_START_TOKENS.get(t, " "))
            raise UnsupportedNodeError(loc, _UNSUPPORTED_NODES[t])
        handler = getattr(self, "s_" + t.__name__, None)
        if handler is None:
            raise UnsupportedNodeError(self.loc(s), t.__name__ + " statements")
        handler(s, scope)

    def s_Pass(self, s, scope):  # noqa: N802 (ast visitor names)
        pass

    def s_Expr(self, s, scope):  # noqa: N802
        if isinstance(s.value, ast.Constant):      # docstrings and bare constants
            return
        self.expr(s.value, scope)

    def s_Return(self, s, scope):  # noqa: N802
        self.do_return(s.value, scope, s)

    def do_return(self, expr, scope, node):
        hint = self.ret_ann
        v = self.const(None, node) if expr is None else self.value(expr, scope, hint)
        if self.ret_ann is not None:
            v = self.convert(v, self.ret_ann, node)
            if not is_subtype(v.type, self.ret_ann):
                raise self.type_err(node, f"Return value was annotated as having type "
                                          f"{self.ret_ann.py()} but is actually of type "
                                          f"{v.type.py()}")
        elif self.return_types:
            prev = self.return_types[0]
            if unify(prev, v.type) is None:
                raise self.type_err(node, f"Previous return statement returned a value of type "
                                          f"{prev.py()} but this return statement returns a "
                                          f"value of type {v.type.py()}")
        self.return_types.append(v.type)
        self.emit("prim::ReturnStmt", [v], [], node=node, pure=False)
        raise _Terminated

    def s_Raise(self, s, scope):  # noqa: N802
        exc = s.exc
        cls_name, msg = "builtins.Exception", None
        if exc is not None:
            call = exc if isinstance(exc, ast.Call) else None
            target = self.expr(call.func if call else exc, scope)
            if isinstance(target, _Sugar) and isinstance(target.obj, type) \
                    and issubclass(target.obj, BaseException):
                c = target.obj
                cls_name = f"{'builtins' if c.__module__ == 'builtins' else c.__module__}." \
                           f"{c.__qualname__}"
                if call is not None and call.args:
                    msg = self.value(call.args[0], scope)
            else:
                raise NotSupportedError(self.loc(exc), "exceptions must be raised as calls to "
                                                       "exception classes")
        if msg is None:
            msg = self.const("", s)
        lr = self.graph.const_ref(self.loc(s))
        self.emit("prim::RaiseException", [msg], [],
                  tpl=f"_raise({{0}}, {cls_name!r}, {lr})",
                  code=f"ops.prim.RaiseException({{0}}, {cls_name!r})", node=s, pure=False)
        raise _Terminated

    def s_Assert(self, s, scope):  # noqa: N802
        cond, ref_t, _ = self.cond(s.test, scope)
        if cond is True:
            return
        msg = "AssertionError: "
        saved = self.block
        if cond is not False:
            n = self.emit("prim::If", [cond], [], node=s, pure=False)
            b_ok, b_fail = _ir.Block(), _ir.Block()
            n.blocks = [b_ok, b_fail]
            self.block = b_fail
        if s.msg is not None:
            m = self.value(s.msg, scope)
            if m.type != StrT:
                m = self.call("aten::str", [m], StrT, "str({0})", "str({0})", s)
        else:
            m = self.const("", s)
        lr = self.graph.const_ref(self.loc(s))
        self.emit("prim::RaiseException", [m], [], tpl=f"_raise({{0}}, 'builtins.AssertionError'"
                  f", {lr})", code=f"ops.prim.RaiseException({msg!r} + {{0}})", node=s,
                  pure=False)
        if cond is False:             # ``assert False``: the code after it is unreachable
            raise _Terminated
        self.block = saved
        self.refine(scope, ref_t, s)

    def s_Assign(self, s, scope):  # noqa: N802
        hint = None
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and s.targets[0].id in self.decl and s.targets[0].id in scope.env:
            hint = self.decl[s.targets[0].id]
        v = self.expr(s.value, scope, hint)
        for t in s.targets:
            self.assign(t, v, scope, s)

    def s_AnnAssign(self, s, scope):  # noqa: N802
        t = self.annotation(s.annotation)
        if s.value is None:
            return
        v = self.value(s.value, scope, t)
        if not is_subtype(v.type, t):
            raise self.type_err(s, f"Variable '{ast.unparse(s.target)}' is annotated with type "
                                   f"{t.py()} but is being assigned to a value of type "
                                   f"{v.type.py()}")
        if isinstance(s.target, ast.Name):
            if s.target.id not in self.decl:
                self.decl[s.target.id] = t
            if v.type != t and t.kind == "Optional":
                v = self.call("prim::unchecked_cast", [v], t, "{0}", "{0}", s)
        if isinstance(s.target, ast.Attribute):
            self.assign_attr(s.target, v, scope, s, declared=t)
            return
        self.assign(s.target, v, scope, s)

    def s_AugAssign(self, s, scope):  # noqa: N802
        name, sym = _BINOPS[type(s.op)]
        cur = self.value(s.target if not isinstance(s.target, ast.Name)
                         else ast.Name(s.target.id, ast.Load(), lineno=s.lineno,
                                       col_offset=s.col_offset), scope)
        rhs = self.value(s.value, scope)
        if cur.type == TensorT:
            kind, rtype = f"aten::{name}_", TensorT
        else:
            rtype = self.binop_type(sym, cur.type, rhs.type, s)
            kind = f"aten::{name}"
        if cur.type.kind == "List":
            kind, rtype = "aten::add_", cur.type
        ref = self.graph.const_ref(getattr(operator, _INPLACE[sym]))
        v = self.call(kind, [cur, rhs], rtype, f"{ref}({{0}}, {{1}})",
                      f"torch.{kind[6:]}({{0}}, {{1}})", s, pure=False)
        self.assign(s.target, v, scope, s)

    def assign(self, target, v, scope, node):
        if isinstance(target, ast.Name):
            nm = target.id
            if isinstance(v, _Sugar):
                scope.env[nm] = v
                return
            # a name not visible here (it lived only in an earlier loop or branch) is new
            prev = self.decl.get(nm) if isinstance(scope.env.get(nm), Value) else None
            if prev is not None and not is_subtype(v.type, prev) and v.type.kind != "Any":
                v = self.convert(v, prev, node, numbers=False)
            if prev is not None and not is_subtype(v.type, prev) and v.type.kind != "Any":
                if nm not in scope.local:
                    raise self.type_err(target, f"Variable '{nm}' previously had type "
                                                f"{prev.py()} but is now being assigned to a "
                                                f"value of type {v.type.py()}")
                prev = None            # rebound in its own block: the name takes the new type
            if prev is None:
                self.decl[nm] = v.type
            scope.local.add(nm)
            if v.base is None and (v.node is None or v.node.kind != "prim::Constant"):
                v.base = nm
            scope.env[nm] = v
            scope.missing.pop(nm, None)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise NotSupportedError(self.loc(target), "Starred unpacking is not supported")
            n = len(target.elts)
            t = v.type if isinstance(v, Value) else None
            if t is not None and t.kind == "Tuple":
                if len(t.args) != n:
                    raise self.type_err(node, f"Expected tuple of length {n}, got tuple of "
                                              f"length {len(t.args)}")
                types = list(t.args)
                kind = "prim::TupleUnpack"
            elif t is not None and t.kind == "List":
                types, kind = [t.args[0]] * n, "prim::ListUnpack"
            elif t is not None and t.kind in ("Tensor", "Any"):
                types = [TensorT if t.kind == "Tensor" else AnyT] * n
                kind = "prim::ListUnpack"
            else:
                raise self.type_err(node, f"cannot unpack a value of type "
                                          f"{t.py() if t else 'module'}")
            nd = self.emit(kind, [v], types, tpl="{0}", code="{0}", node=node)
            for el, out in zip(target.elts, nd.outputs):
                self.assign(el, out, scope, node)
            return
        if isinstance(target, ast.Subscript):
            obj = self.value(target.value, scope)
            if obj.type == TensorT:
                idx_vals, idx_tpl = self.index_parts(target.slice, scope, len([obj]) + 1)
                n_in = len(idx_vals) + 1
                tpl = f"{{0}}.__setitem__(({idx_tpl}), {{{n_in}}})" if idx_vals or idx_tpl else \
                    f"{{0}}.__setitem__((), {{{n_in}}})"
                self.emit("aten::index_put_", [obj, *idx_vals, v], [], tpl=tpl,
                          code=f"{{0}}[{idx_tpl}] = {{{n_in}}}", node=node, pure=False)
                return
            key = self.value(target.slice, scope)
            if obj.type.kind == "List" and not is_subtype(v.type, obj.type.args[0]):
                raise self.type_err(node, f"Expected a value of type {obj.type.args[0].py()} "
                                          f"for list element, found {v.type.py()}")
            self.emit("aten::_set_item", [obj, key, v], [], tpl="{0}.__setitem__({1}, {2})",
                      code="{0}[{1}] = {2}", node=node, pure=False)
            return
        if isinstance(target, ast.Attribute):
            self.assign_attr(target, v, scope, node)
            return
        raise NotSupportedError(self.loc(target), f"unsupported assignment target "
                                                  f"{type(target).__name__}")

    def assign_attr(self, target, v, scope, node, declared=None):
        """``obj.attr = v`` on a module or a class instance; in a class's ``__init__`` the
        first assignment defines the attribute (typed ``declared`` or by ``v``)."""
        obj = self.expr(target.value, scope)
        info = _classes.info_for(obj.type) if isinstance(obj, Value) else None
        if info is not None:
            t = info.attr_type(target.attr)
            if t is None and info.defining:
                t = declared or v.type
                info.define(target.attr, t)
            if t is None:
                raise self.type_err(target, f"Tried to set nonexistent attribute: "
                                            f"{target.attr}. Did you forget to initialize "
                                            f"it in __init__()?")
            v = self.convert(v, t, node)
            if not is_subtype(v.type, t):
                raise self.type_err(target, f"Wrong type for attribute assignment. Expected "
                                            f"{t.py()} but got {v.type.py()}")
            self.emit("prim::SetAttr", [obj, v], [], attrs={"name": target.attr},
                      tpl=f"setattr({{0}}, {target.attr!r}, {{1}})",
                      code=f"{{0}}.{target.attr} = {{1}}", node=node, pure=False)
            return
        if isinstance(obj, _Sugar) and obj.kind == "module":
            info = obj.obj
            t = info.attr_type(target.attr)
            if t is None:
                raise self.type_err(target, f"Module '{info.class_name}' has no attribute "
                                            f"'{target.attr}'")
            if not is_subtype(v.type, t):
                raise self.type_err(target, f"Wrong type for attribute assignment. Expected "
                                            f"{t.py()} but got {v.type.py()}")
            self.emit("prim::SetAttr", [obj.value, v], [], attrs={"name": target.attr},
                      tpl=f"setattr({{0}}, {target.attr!r}, {{1}})",
                      code=f"{{0}}.{target.attr} = {{1}}", node=node, pure=False)
            return
        raise NotSupportedError(self.loc(target), "attribute assignment is only supported "
                                                  "on modules and class instances")

    def s_Delete(self, s, scope):  # noqa: N802
        for t in s.targets:
            if not isinstance(t, ast.Subscript):
                raise NotSupportedError(self.loc(t), "del is only supported on list and dict "
                                                     "items")
            obj = self.value(t.value, scope)
            key = self.value(t.slice, scope)
            self.emit("aten::Delete", [obj, key], [], tpl="{0}.__delitem__({1})",
                      code="del {0}[{1}]", node=s, pure=False)

    # -- conditions and refinement
    def cond(self, test, scope):
        """Compile a condition: (bool Value or Python bool when known at compile time,
        refinements when true, refinements when false)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            c, rt, rf = self.cond(test.operand, scope)
            if isinstance(c, bool):
                return (not c), rf, rt
            return self.call("aten::__not__", [c], BoolT, "(not {0})", "torch.__not__({0})",
                             test), rf, rt
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], (ast.Is, ast.IsNot)) and \
                isinstance(test.comparators[0], ast.Constant) and \
                test.comparators[0].value is None:
            v = self.expr(test.left, scope)
            is_op = isinstance(test.ops[0], ast.Is)
            if isinstance(v, _Sugar) and v.kind in ("module", "modlist", "moddict"):
                return (not is_op), {}, {}        # a submodule is never None
            if isinstance(v, Value):
                # a None attribute (``self.norm = None``) or a non-Optional value decides the
                # test at compile time, so the dead branch is not compiled (as in torch)
                if v.type.kind == "NoneType":
                    return is_op, {}, {}
                if v.type.kind not in ("Optional", "Any"):
                    return (not is_op), {}, {}
                # only local names are refined; ``self.x`` stays Optional, as in torch
                inner = {test.left.id: v.type.args[0]} if isinstance(test.left, ast.Name) and \
                    v.type.kind == "Optional" else {}
                none = self.const(None, test.comparators[0])
                kind = "aten::__is__" if is_op else "aten::__isnot__"
                sym = "is" if is_op else "is not"
                c = self.call(kind, [v, none], BoolT, f"({{0}} {sym} {{1}})",
                              f"torch.{kind[6:]}({{0}}, {{1}})", test)
                return (c, {}, inner) if is_op else (c, inner, {})
        if isinstance(test, ast.BoolOp):
            return self.boolop(test, scope)
        if isinstance(test, ast.Call) and isinstance(test.func, (ast.Name, ast.Attribute)):
            f = self.expr(test.func, scope)
            if isinstance(f, _Sugar) and f.kind == "py" and \
                    f.obj in (builtins.isinstance, _jit_isinstance()):
                v = self.expr(test.args[0], scope)
                classes = self.eval_py(test.args[1])
                if isinstance(v, _Sugar) and v.kind in ("module", "modlist", "moddict"):
                    # a submodule's class is known when compiling: decided statically
                    return builtins.isinstance(v.obj.module, classes), {}, {}
                target = self.isinstance_types(test.args[1])
                if isinstance(v, Value):
                    ok = any(is_subtype(v.type, t) for t in target)
                    if ok:
                        return True, {}, {}
                    if v.type.kind == "Optional":
                        hit = [t for t in target if is_subtype(v.type.args[0], t)]
                        if hit:
                            c = self.call("prim::isinstance", [v], BoolT,
                                          "({0} is not None)", "isinstance({0}, "
                                          + hit[0].py() + ")", test)
                            ref = {test.args[0].id: v.type.args[0]} \
                                if isinstance(test.args[0], ast.Name) else {}
                            return c, ref, {}
                    if v.type.kind == "Union":
                        # the members the test admits, and those left for the other branch
                        hit = [m for m in v.type.args if any(is_subtype(m, t) for t in target)]
                        if not hit:
                            return False, {}, {}
                        rest = [m for m in v.type.args if m not in hit]
                        ref = self.graph.const_ref(lambda x, ts=tuple(hit): any(
                            check_value(x, t) for t in ts))
                        c = self.call("prim::isinstance", [v], BoolT, f"{ref}({{0}})",
                                      "isinstance({0}, " + UnionT(hit).py() + ")", test)
                        if not isinstance(test.args[0], ast.Name):
                            return c, {}, {}
                        nm = test.args[0].id
                        return c, {nm: UnionT(hit)}, {nm: UnionT(rest)}
                    if v.type.kind == "Any":
                        ref = self.graph.const_ref(lambda x, ts=tuple(target): any(
                            check_value(x, t) for t in ts))
                        c = self.call("prim::isinstance", [v], BoolT, f"{ref}({{0}})",
                                      "isinstance({0})", test)
                        return c, {}, {}
                    return False, {}, {}
                raise self.type_err(test, "isinstance() of a Python value that is not a "
                                          "TorchScript value is not supported")
        v = self.expr(test, scope)
        if isinstance(v, _Sugar):
            raise self.type_err(test, "cannot use a module or function as a condition")
        if v.node is not None and v.node.kind == "prim::Constant" and \
                isinstance(v.node.attrs.get("value"), bool):
            return v.node.attrs["value"], {}, {}
        return self.to_bool(v, test), {}, {}

    def convert(self, v, t, node, numbers=True):
        """``v`` converted where type ``t`` is expected, as torch's implicit conversions do: a
        tuple whose elements fit becomes a list (``List[int]`` given ``(2, 3)``), a Tensor a
        number (not when rebinding a variable: ``numbers=False``); anything else is returned
        unchanged, for the caller's type check."""
        target = t.args[0] if t.kind == "Optional" else t
        if target.kind == "List" and v.type.kind == "Tuple" and \
                all(is_subtype(a, target.args[0]) for a in v.type.args):
            if v.node is not None and v.node.kind == "prim::TupleConstruct":
                elts = v.node.inputs
            else:
                elts = self.emit("prim::TupleUnpack", [v], list(v.type.args), tpl="{0}",
                                 code="{0}", node=node).outputs
            inner = ", ".join(f"{{{i}}}" for i in range(len(elts)))
            return self.call("prim::ListConstruct", list(elts), target, "[" + inner + "]",
                             "[" + inner + "]", node, pure=False)
        return self.implicit(v, target, node) if numbers and target in (IntT, FloatT) else v

    def implicit(self, v, t, node):
        """TorchScript's implicit Tensor -> int/float conversion (``aten::IntImplicit``) where
        a number is expected; other values pass through unchanged."""
        if v.type == TensorT and t in (IntT, FloatT):
            kind = "aten::IntImplicit" if t == IntT else "aten::FloatImplicit"
            py = "int" if t == IntT else "float"
            return self.call(kind, [v], t, f"{py}({{0}})", f"{py}({{0}})", node)
        return v

    def to_bool(self, v, node):
        if v.type == BoolT:
            return v
        if v.type in (TensorT, IntT, FloatT, NumberT, AnyT):
            return self.call("aten::Bool", [v], BoolT, "bool({0})", "bool({0})", node)
        if v.type.kind in ("List", "Dict", "str"):
            return self.call("aten::Bool", [v], BoolT, "bool({0})", "bool({0})", node)
        if v.type.kind == "Optional":
            return self.call("aten::__isnot__", [v, self.const(None, node)], BoolT,
                             "({0} is not None)", "torch.__isnot__({0}, None)", node)
        raise self.type_err(node, f"Could not cast value of type {v.type.py()} to bool")

    def isinstance_types(self, node):
        if isinstance(node, ast.Tuple):
            out = []
            for e in node.elts:
                out += self.isinstance_types(e)
            return out
        if isinstance(node, ast.Constant) and node.value is None:
            return [NoneT]
        obj = self.eval_py(node)
        if obj in (list, tuple, dict):
            return [JitType({list: "List", tuple: "Tuple", dict: "Dict"}[obj], ())]
        return [type_from_python(obj, self.loc(node))]

    def refine(self, scope, refinements, node):
        for nm, t in refinements.items():
            cur = scope.env.get(nm)
            if isinstance(cur, Value) and cur.type != t:
                scope.env[nm] = self.call("prim::unchecked_cast", [cur], t, "{0}",
                                          f"unchecked_cast({t.py()}, {{0}})", node)

    def boolop(self, test, scope):
        """``a and b`` / ``a or b``: short-circuit, as a prim::If (torch's lowering)."""
        is_and = isinstance(test.op, ast.And)
        first, *rest = test.values
        c, rt, rf = self.cond(first, scope)
        if isinstance(c, bool):
            if c is is_and and rest:          # the known part does not decide: go on
                sub = ast.BoolOp(test.op, rest) if len(rest) > 1 else rest[0]
                inner = self.cond(sub, self._refined(scope, rt if is_and else rf, test))
                return inner
            return c, rt, rf
        if not rest:
            return c, rt, rf
        sub = ast.BoolOp(test.op, rest) if len(rest) > 1 else rest[0]
        ast.copy_location(sub, rest[0])
        n = self.emit("prim::If", [c], [BoolT], node=test)
        b1, b2 = _ir.Block(), _ir.Block()
        n.blocks = [b1, b2]
        saved = self.block
        self.block = b1 if is_and else b2
        s2 = self._refined(scope, rt if is_and else rf, test)
        c2, rt2, rf2 = self.cond(sub, s2)
        if c2 is (not is_and):       # ``x and False`` / ``x or True``: known at compile time
            self.block = saved
            saved.nodes.remove(n)
            return c2, {}, {}
        if isinstance(c2, bool):
            c2 = self.const(c2, test)
        self.block.returns = [c2]
        self.block = b2 if is_and else b1
        self.block.returns = [self.const(not is_and, test)]
        self.block = saved
        if is_and:
            return n.output(), {**rt, **rt2}, {}
        return n.output(), {}, {**rf, **rf2}

    def _refined(self, scope, refinements, node):
        s = scope.copy()
        self.refine(s, refinements, node)
        return s

    # -- if
    def s_If(self, s, scope):  # noqa: N802
        c, rt, rf = self.cond(s.test, scope)
        if isinstance(c, bool):             # decided at compile time: only that branch exists
            self.refine(scope, rt if c else rf, s)
            self.stmts(s.body if c else s.orelse, scope)
            return
        self.branch(c, s.body, s.orelse, scope, rt, rf, s)

    def branch(self, c, body_t, body_f, scope, rt, rf, s):
        n = self.emit("prim::If", [c], [], node=s, pure=False)
        saved = self.block
        results = []
        decl0 = self.decl
        for body, ref in ((body_t, rt), (body_f, rf)):
            b = _ir.Block()
            n.blocks.append(b)
            self.block = b
            self.decl = dict(decl0)    # a name first assigned in one branch is not declared
            sc = scope.copy()          # in the other: the branches' types unify after the if
            self.refine(sc, ref, s)
            term = False
            try:
                self.stmts(body, sc)
            except _Terminated:
                term = True
            results.append((b, sc, term, self.decl))
        self.block = saved
        self.decl = decl0
        new_names = {}
        for d in (results[0][3], results[1][3]):
            for k, t in d.items():
                if k not in decl0:
                    prev = new_names.get(k)
                    new_names[k] = t if prev is None else unify(prev, t) or prev
        self.decl.update(new_names)
        (bt, st, tt, _), (bf, sf, tf, _) = results
        if tt and tf:
            raise _Terminated
        names = []
        for nm in dict.fromkeys(list(st.env) + list(sf.env)):
            vt, vf = st.env.get(nm), sf.env.get(nm)
            if isinstance(vt, _Sugar) or isinstance(vf, _Sugar):
                if not tt and not tf and vt is not vf:
                    # a module or function bound differently by the branches (a loop
                    # variable over submodules) is not visible after the if, as in torch
                    scope.env.pop(nm, None)
                    scope.missing[nm] = "true" if vt is None else "false"
                    continue
                scope.env[nm] = vt if not tt else vf
                continue
            before = scope.env.get(nm)
            if (vt is None and not tt) or (vf is None and not tf):
                if before is None:
                    scope.missing[nm] = "true" if vt is None else "false"
                continue
            if vt is before and vf is before:
                continue
            names.append(nm)
        for nm in names:
            vt, vf = st.env.get(nm), sf.env.get(nm)
            if tt:
                t = vf.type
            elif tf:
                t = vt.type
            else:
                t = unify(vt.type, vf.type)
                decl = self.decl.get(nm)
                if t is None:
                    raise self.type_err(s, f"Type mismatch: {nm} is set to type {vt.type.py()} "
                                           f"in the true branch and type {vf.type.py()} in the "
                                           f"false branch")
                if decl is not None and is_subtype(t, decl) and t != vt.type and t != vf.type:
                    t = decl
            o = Value(self.graph, t, nm)
            o.node = n
            n.outputs.append(o)
            for blk, term, v in ((bt, tt, vt), (bf, tf, vf)):
                if term:
                    self.block = blk
                    v = self.emit("prim::Uninitialized", [], [t], tpl="None",
                                  code="uninitialized(" + t.py() + ")").output()
                    self.block = saved
                blk.returns.append(v)
                v.uses += 1
            scope.env[nm] = o
            scope.missing.pop(nm, None)
        for nm, v in (sf.env if tt else st.env if tf else {}).items():
            if nm not in scope.env and not isinstance(v, Value):
                scope.env[nm] = v
        if tt or tf:
            live = sf if tt else st
            for nm in live.missing:
                scope.missing.setdefault(nm, live.missing[nm])

    # -- loops
    def _assigned(self, body):
        names = set()
        for s in body:
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    names.add(n.id)
                elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                    names.add(n.target.id)
        return names

    def s_While(self, s, scope):  # noqa: N802
        if s.orelse:
            raise NotSupportedError(self.loc(s), "else branches of while loops aren't supported")
        carried = [nm for nm in sorted(self._assigned(s.body))
                   if isinstance(scope.env.get(nm), Value)]
        init = [scope.env[nm] for nm in carried]
        n = self.emit("prim::Loop", init, [], node=s, attrs={"while": True, "n_index": 0},
                      pure=False)
        saved = self.block
        cond_b, body_b = _ir.Block(), _ir.Block()
        n.blocks = [cond_b, body_b]
        types = [self.decl.get(nm) or v.type for nm, v in zip(carried, init)]
        sc = scope.copy()
        for nm, t in zip(carried, types):
            p = Value(self.graph, t, nm)
            cond_b.params.append(p)
            sc.env[nm] = p
        self.block = cond_b
        c, rt, _ = self.cond(s.test, sc)
        if isinstance(c, bool):
            c = self.const(c, s.test)
        cond_b.returns = [c]
        self.loop_body(n, body_b, carried, types, s.body, scope, s, 0, rt)
        self.block = saved

    def loop_body(self, n, body_b, carried, types, body, scope, s, n_index, refine=None,
                  bind=None):
        sc = scope.copy()
        for nm, t in zip(carried, types):
            p = Value(self.graph, t, nm)
            body_b.params.append(p)
            sc.env[nm] = p
        self.block = body_b
        if refine:
            self.refine(sc, refine, s)
        if bind is not None:
            bind(sc)
        self.loops.append((n, carried))
        try:
            self.stmts(body, sc)
            self.close_loop_iteration(n, carried, sc, s)
        except _Terminated:
            pass
        self.loops.pop()
        for nm, t in zip(carried, types):
            o = Value(self.graph, t, nm)
            o.node = n
            n.outputs.append(o)
            scope.env[nm] = o

    def close_loop_iteration(self, n, carried, sc, s, target=None):
        vals = []
        body = n.blocks[-1]
        for nm, p in zip(carried, body.params[n.attrs["n_index"]:]):
            v = sc.env.get(nm)
            if not isinstance(v, Value):
                raise self.type_err(s, f"{nm} is not defined in the loop body")
            if not is_subtype(v.type, p.type) and v.type.kind != "Any":
                raise self.type_err(s, f"Variable '{nm}' previously had type {p.type.py()} but "
                                       f"is now being assigned to a value of type {v.type.py()}")
            vals.append(v)
        if target is None:
            body.returns = vals
            for v in vals:
                v.uses += 1
        return vals

    def s_Break(self, s, scope):  # noqa: N802
        self.loop_exit("prim::BreakStmt", s, scope)

    def s_Continue(self, s, scope):  # noqa: N802
        self.loop_exit("prim::ContinueStmt", s, scope)

    def loop_exit(self, kind, s, scope):
        if not self.loops:
            raise NotSupportedError(self.loc(s), "break/continue outside of a loop")
        loop, carried = self.loops[-1]
        if loop is None:
            raise NotSupportedError(self.loc(s), "Because we emit iteration over modulelists or "
                                                 "tuples as unrolled loops, we do not support "
                                                 "break or continue inside the body of these "
                                                 "loops")
        vals = self.close_loop_iteration(loop, carried, scope, s, target=True)
        self.emit(kind, vals, [], node=s, attrs={"loop": loop}, pure=False)
        raise _Terminated

    def s_For(self, s, scope):  # noqa: N802
        if s.orelse:
            raise NotSupportedError(self.loc(s), "else branches of for loops aren't supported")
        it = s.iter
        # unrolled: module containers and tuples
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id in ("enumerate", "zip") and self._py_name(it.func.id, scope) in \
                (builtins.enumerate, builtins.zip):
            kind = it.func.id
            inner = it.args[0] if it.args else None
            if kind == "enumerate" and isinstance(inner, ast.Call) and \
                    isinstance(inner.func, ast.Name) and inner.func.id == "zip" and \
                    self._py_name("zip", scope) is builtins.zip:
                # ``enumerate(zip(a, b))``: the index, then the zipped elements as a group
                srcs = [self.expr(a, scope) for a in inner.args]
                if any(self._unrollable(x) for x in srcs):
                    lists = [self._unrolled_items(x, it) for x in srcs]
                    self.unroll(s, [(self.const(i, it), tuple(x))
                                    for i, x in enumerate(zip(*lists))], scope, pack=True)
                    return
                self.counted_loop(s, scope, srcs, enumerate_=True, group=True)
                return
            srcs = [self.expr(a, scope) for a in it.args]
            if kind == "enumerate":
                src = srcs[0]
                if self._unrollable(src):
                    items = self._unrolled_items(src, it)
                    self.unroll(s, [(self.const(i, it), x) for i, x in enumerate(items)], scope,
                                pack=True)
                    return
                self.counted_loop(s, scope, [src], enumerate_=True)
                return
            if any(self._unrollable(x) for x in srcs):
                lists = [self._unrolled_items(x, it) for x in srcs]
                self.unroll(s, list(zip(*lists)), scope, pack=True)
                return
            self.counted_loop(s, scope, srcs)
            return
        src = self.expr(it, scope) if not (isinstance(it, ast.Call) and
                                           isinstance(it.func, ast.Name) and it.func.id ==
                                           "range" and self._py_name("range", scope) is
                                           builtins.range) else None
        if src is None:
            args = [self.value(a, scope) for a in it.args]
            for a in args:
                if a.type not in (IntT, AnyT):
                    raise self.type_err(it, f"range() expected int arguments, found "
                                            f"{a.type.py()}")
            if len(args) == 1:
                start, stop, step = None, args[0], None
            else:
                start, stop = args[0], args[1]
                step = args[2] if len(args) > 2 else self.const(1, it)
            self.range_loop(s, scope, start, stop, step)
            return
        if self._unrollable(src):
            self.unroll(s, [(x,) for x in self._unrolled_items(src, it)], scope)
            return
        self.counted_loop(s, scope, [src])

    def _py_name(self, nm, scope):
        v = scope.env.get(nm)
        if v is not None:
            return None
        return self.lookup_global(nm)

    @staticmethod
    def _container_kind(src):
        """``modlist``/``moddict`` for a module container (a subclass with its own forward
        included: ``for m in self`` in it), else the sugar's kind."""
        if src.kind == "module":
            from ..nn.modules.container import ModuleDict, ModuleList, Sequential
            m = src.obj.module
            if isinstance(m, (ModuleList, Sequential)):
                return "modlist"
            if isinstance(m, ModuleDict):
                return "moddict"
        return src.kind

    def _unrollable(self, src):
        if isinstance(src, _Sugar):
            return self._container_kind(src) in ("modlist", "moddict")
        return src.type.kind == "Tuple"

    def _unrolled_items(self, src, node):
        if isinstance(src, _Sugar):
            kind = self._container_kind(src)
            if kind == "modlist":
                return [self.submodule_value(src.value, src.obj, nm, node)
                        for nm in src.obj.module_names()]
            if kind == "moddict":
                return [self.const(nm, node) for nm in src.obj.module_names()]
        if src.type.kind == "Tuple":
            return [self.call("prim::TupleIndex", [src, self.const(i, node)], t,
                              "{0}[{1}]", "{0}[{1}]", node) for i, t in enumerate(src.type.args)]
        raise self.type_err(node, "cannot iterate over this value")

    def unroll(self, s, items, scope, pack=False):
        self.loops.append((None, []))
        try:
            for item in items:
                if pack:
                    self.assign_loop_target(s.target, list(item), scope, s)
                else:
                    self.assign(s.target, item[0], scope, s)
                self.stmts(s.body, scope)
        finally:
            self.loops.pop()

    def assign_loop_target(self, target, vals, scope, s):
        if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(vals):
            for t, v in zip(target.elts, vals):
                if isinstance(v, tuple):          # a zipped group (``i, (a, b)`` or ``i, ab``)
                    self.assign_loop_target(t, list(v), scope, s)
                else:
                    self.assign(t, v, scope, s)
            return
        if len(vals) == 1:
            self.assign(target, vals[0], scope, s)
            return
        tup = self.call("prim::TupleConstruct", vals, TupleT([v.type for v in vals]),
                        "(" + ", ".join(f"{{{i}}}" for i in range(len(vals))) + ",)",
                        "(" + ", ".join(f"{{{i}}}" for i in range(len(vals))) + ")", s)
        self.assign(target, tup, scope, s)

    def range_loop(self, s, scope, start, stop, step):
        if start is None:
            trip = stop
        else:
            trip = self.call("aten::__range_length", [start, stop, step], IntT,
                             "len(range({0}, {1}, {2}))", "torch.__range_length({0}, {1}, {2})",
                             s.iter)

        def bind(sc):
            idx = self.block.params[0]
            if start is None:
                self.assign(s.target, idx, sc, s)
            else:
                v = self.call("aten::__derive_index", [idx, start, step], IntT,
                              "({1} + {0} * {2})", "torch.__derive_index({0}, {1}, {2})", s.iter)
                self.assign(s.target, v, sc, s)
        self.generic_loop(s, scope, trip, bind)

    def generic_loop(self, s, scope, trip, bind):
        carried = [nm for nm in sorted(self._assigned(s.body))
                   if isinstance(scope.env.get(nm), Value)]
        init = [scope.env[nm] for nm in carried]
        n = self.emit("prim::Loop", [trip, *init], [], node=s, attrs={"n_index": 1},
                      pure=False)
        body_b = _ir.Block()
        n.blocks = [body_b]
        idx = Value(self.graph, IntT)
        body_b.params.append(idx)
        saved = self.block
        types = [self.decl.get(nm) or v.type for nm, v in zip(carried, init)]
        self.loop_body(n, body_b, carried, types, s.body, scope, s, 1, bind=bind)
        self.block = saved

    def counted_loop(self, s, scope, srcs, enumerate_=False, group=False):
        lens, elems = [], []
        for src in srcs:
            if isinstance(src, _Sugar):
                raise self.type_err(s.iter, "cannot iterate over a module or function")
            t = src.type
            if t.kind == "List":
                elems.append((t.args[0], "aten::__getitem__", "{0}[{1}]"))
                lens.append(self.call("aten::len", [src], IntT, "len({0})", "torch.len({0})",
                                      s.iter))
            elif t.kind == "str":
                elems.append((StrT, "aten::__getitem__", "{0}[{1}]"))
                lens.append(self.call("aten::len", [src], IntT, "len({0})", "torch.len({0})",
                                      s.iter))
            elif t.kind == "Tensor":
                elems.append((TensorT, "aten::select", "{0}[{1}]"))
                lens.append(self.call("aten::len", [src], IntT, "len({0})", "torch.len({0})",
                                      s.iter))
            elif t.kind == "Dict":
                keys = self.call("aten::keys", [src], ListT(t.args[0]), "list({0}.keys())",
                                 "torch.keys({0})", s.iter)
                srcs[srcs.index(src)] = keys
                src = keys
                elems.append((t.args[0], "aten::__getitem__", "{0}[{1}]"))
                lens.append(self.call("aten::len", [keys], IntT, "len({0})", "torch.len({0})",
                                      s.iter))
            else:
                raise self.type_err(s.iter, f"'{t.py()}' object is not iterable")
        trip = lens[0]
        for ln in lens[1:]:
            trip = self.call("prim::min", [trip, ln], IntT, "min({0}, {1})",
                             "min({0}, {1})", s.iter)
        sources = list(srcs)

        def bind(sc):
            idx = self.block.params[0]
            vals = [self.call(kind, [src, idx], t, tpl, tpl, s.iter)
                    for src, (t, kind, tpl) in zip(sources, elems)]
            if group:
                vals = [tuple(vals)]
            self.assign_loop_target(s.target, [idx, *vals] if enumerate_ else vals, sc, s)
        self.generic_loop(s, scope, trip, bind)

    def s_With(self, s, scope):  # noqa: N802
        """``with torch.no_grad():`` (and the other grad-mode context managers): the body is
        one block of a ``prim::With`` node that runs it inside the context."""
        if len(s.items) != 1:
            raise NotSupportedError(self.loc(s), "with statements with more than one item are "
                                                 "not supported")
        item = s.items[0]
        ctx_e = item.context_expr
        target = self.expr(ctx_e.func if isinstance(ctx_e, ast.Call) else ctx_e, scope)
        gt = _glasstorch()
        allowed = tuple(c for c in (getattr(gt, "no_grad", None), getattr(gt, "enable_grad", None),
                                    getattr(gt, "set_grad_enabled", None),
                                    getattr(gt, "inference_mode", None)) if c is not None)
        if not (isinstance(target, _Sugar) and target.kind == "py" and target.obj in allowed):
            raise NotSupportedError(self.loc(s), "with statements are only supported for "
                                                 "torch.no_grad(), torch.enable_grad(), "
                                                 "torch.set_grad_enabled() and "
                                                 "torch.inference_mode()")
        cls = target.obj
        args, kws = self.args_of(ctx_e, scope) if isinstance(ctx_e, ast.Call) else ([], {})
        ref = self.graph.const_ref(cls)
        at = self.arg_tpl(0, len(args), list(kws))
        ctx = self.call("prim::CreateObject", [*args, *kws.values()], AnyT, f"{ref}({at})",
                        f"torch.{cls.__name__}({at})", ctx_e, pure=False)
        if item.optional_vars is not None:
            self.assign(item.optional_vars, ctx, scope, s)
        n = self.emit("prim::With", [ctx], [], node=s, pure=False)
        b = _ir.Block()
        n.blocks = [b]
        saved = self.block
        self.block = b
        try:
            self.stmts(s.body, scope)
        finally:
            self.block = saved

    # -- expressions
    def value(self, e, scope, hint=None):
        """Compile an expression that must be a graph value."""
        v = self.expr(e, scope, hint)
        if isinstance(v, _Sugar):
            if v.kind == "module":
                return v.value
            if v.kind == "py" and _is_constant_like(v.obj):
                return self.const(v.obj, e)
            raise self.type_err(e, f"python value of type '{type(v.obj).__name__}' cannot be "
                                   f"used as a value. Perhaps it is a closed over global "
                                   f"variable? If so, please consider passing it in as an "
                                   f"argument or use a local varible instead.")
        return v

    def expr(self, e, scope, hint=None):
        t = type(e)
        if t in _UNSUPPORTED_NODES:
            raise UnsupportedNodeError(self.loc(e), _UNSUPPORTED_NODES[t])
        handler = getattr(self, "e_" + t.__name__, None)
        if handler is None:
            raise UnsupportedNodeError(self.loc(e), t.__name__ + " expressions")
        return handler(e, scope, hint)

    def e_Constant(self, e, scope, hint):  # noqa: N802
        if e.value is Ellipsis or isinstance(e.value, (bytes, complex)):
            raise NotSupportedError(self.loc(e), f"{type(e.value).__name__} literals aren't "
                                                 f"supported")
        return self.const(e.value, e)

    def e_Name(self, e, scope, hint):  # noqa: N802
        v = scope.env.get(e.id)
        if v is not None:
            return v
        if e.id in scope.missing:
            raise self.type_err(e, f"{e.id} is not defined in the {scope.missing[e.id]} branch")
        if e.id in self.decl:
            raise self.type_err(e, f"{e.id} is not defined in this scope (it is assigned only "
                                   f"inside a loop or branch)")
        obj = self.lookup_global(e.id, e)
        return self.sugar_for(obj, e)

    def lookup_global(self, nm, node=None):
        if nm in self.closure:
            return self.closure[nm]
        if nm in self.globals:
            return self.globals[nm]
        b = self.globals.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if nm in b:
            return b[nm]
        if node is None:
            return None
        raise self.type_err(node, f"undefined value {nm}")

    def sugar_for(self, obj, node):
        if isinstance(obj, enum.Enum):
            return self.const(obj, node)
        if isinstance(obj, (bool, int, float, str)) or obj is None or _is_dtype(obj) or \
                isinstance(obj, _glasstorch().device):
            return self.const(obj, node)
        if isinstance(obj, tuple) and all(_is_constant_like(x) for x in obj):
            return self.const(obj, node)
        if isinstance(obj, Tensor) and self.archive:    # an archive's CONSTANTS.c<i>
            return self.const(obj, node, TensorT)
        if isinstance(obj, Tensor):
            raise self.type_err(node, "python value of type 'Tensor' cannot be used as a value. "
                                      "Perhaps it is a closed over global variable? If so, "
                                      "please consider passing it in as an argument or use a "
                                      "local varible instead.")
        return _Sugar("py", obj)

    def e_Attribute(self, e, scope, hint):  # noqa: N802
        base = self.expr(e.value, scope)
        if isinstance(base, _Sugar):
            if base.kind == "module":
                return self.module_attr(base, e.attr, e)
            if base.kind in ("modlist", "moddict") and e.attr in base.obj.submodule_names():
                return self.submodule_value(base.value, base.obj, e.attr, e)   # seq.name
            if base.kind == "py":
                try:
                    obj = getattr(base.obj, e.attr)
                except AttributeError:
                    raise self.type_err(e, f"Module '{getattr(base.obj, '__name__', base.obj)}' "
                                           f"has no attribute '{e.attr}'") from None
                if isinstance(base.obj, type(math)) and base.obj is math and \
                        isinstance(obj, float):
                    return self.const(obj, e)
                return self.sugar_for(obj, e)
            raise self.type_err(e, f"unknown attribute {e.attr}")
        t = base.type
        if t.kind in ("Tensor", "Any"):
            if e.attr in _TENSOR_ATTRS:
                kind, rt = _TENSOR_ATTRS[e.attr]
                tpl = "list({0}.shape)" if e.attr == "shape" else f"{{0}}.{e.attr}"
                return self.call(kind, [base], rt, tpl,
                                 f"{{0}}.{e.attr}" if kind.startswith("prim") else
                                 f"torch.{kind[6:]}({{0}})", e)
            if hasattr(Tensor, e.attr) and callable(getattr(Tensor, e.attr)):
                return _Sugar("method", base, name=e.attr)
            raise self.type_err(e, f"Tried to access nonexistent attribute or method "
                                   f"'{e.attr}' of type 'Tensor'.")
        if t.kind in ("List", "Dict", "str", "Device", "int", "float"):
            return _Sugar("method", base, name=e.attr)
        if t.kind == "Enum" and _classes.enum_attr_type(t, e.attr) is not None:
            return self.call("prim::EnumValue" if e.attr == "value" else "prim::EnumName",
                             [base], _classes.enum_attr_type(t, e.attr), f"{{0}}.{e.attr}",
                             f"{{0}}.{e.attr}", e)
        info = _classes.info_for(t)
        if info is not None:
            if e.attr in info.method_names():
                return _Sugar("method", base, name=e.attr)
            at = info.attr_type(e.attr)
            if at is None:
                raise self.type_err(e, f"Tried to access nonexistent attribute or method "
                                       f"'{e.attr}' of type '{t.py()}'.")
            return self.emit("prim::GetAttr", [base], [at], f"{{0}}.{e.attr}", f"{{0}}.{e.attr}",
                             e, attrs={"name": e.attr}).output()
        if t.kind == "Tuple" and t.fields and e.attr in t.fields:
            i = t.fields.index(e.attr)
            return self.call("prim::TupleIndex", [base, self.const(i, e)], t.args[i],
                             "{0}[{1}]", f"{{0}}.{e.attr}", e)
        raise self.type_err(e, f"Tried to access nonexistent attribute or method '{e.attr}' of "
                               f"type '{t.py()}'.")

    def e_BinOp(self, e, scope, hint):  # noqa: N802
        a = self.value(e.left, scope)
        b = self.value(e.right, scope)
        name, sym = _BINOPS[type(e.op)]
        rt = self.binop_type(sym, a.type, b.type, e)
        tpl = f"({{0}} {sym} {{1}})"
        if rt == FloatT and sym == "**":
            tpl = f"float{tpl}"          # TorchScript's int ** int is a float
        return self.call(f"aten::{name}", [a, b], rt, tpl, f"torch.{name}({{0}}, {{1}})", e)

    def binop_type(self, sym, ta, tb, e):
        ks = {ta.kind, tb.kind}
        if "Tensor" in ks:
            return TensorT
        if "Any" in ks:
            return AnyT
        if ks <= {"int", "float", "bool", "Scalar"}:
            if sym == "/" or (sym == "**" and "Scalar" not in ks):
                return FloatT
            if sym in ("&", "|", "^") and ks == {"bool"}:
                return BoolT
            if "Scalar" in ks:
                return NumberT
            return FloatT if "float" in ks else IntT
        if ta == tb and ta.kind in ("str", "List") and sym == "+":
            return ta
        if sym == "*" and ks == {"List", "int"}:
            return ta if ta.kind == "List" else tb
        if sym == "%" and ta.kind == "str":
            return StrT
        raise self.type_err(e, f"Arguments for call are not valid: unsupported operand types "
                               f"for {sym}: '{ta.py()}' and '{tb.py()}'")

    def e_UnaryOp(self, e, scope, hint):  # noqa: N802
        if isinstance(e.op, ast.Not):
            c, _, _ = self.cond(e, scope)
            return self.const(c, e) if isinstance(c, bool) else c
        if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant) and \
                isinstance(e.operand.value, (int, float)) and \
                not isinstance(e.operand.value, bool):
            return self.const(-e.operand.value, e)
        v = self.value(e.operand, scope)
        if isinstance(e.op, ast.UAdd):
            return v
        if isinstance(e.op, ast.USub):
            if v.node is not None and v.node.kind == "prim::Constant" and \
                    isinstance(v.node.attrs["value"], (int, float)):
                return self.const(-v.node.attrs["value"], e)
            return self.call("aten::neg", [v], v.type, "(-{0})", "torch.neg({0})", e)
        return self.call("aten::bitwise_not", [v], v.type, "(~{0})", "torch.bitwise_not({0})", e)

    def e_BoolOp(self, e, scope, hint):  # noqa: N802
        c, _, _ = self.cond(e, scope)
        return self.const(c, e) if isinstance(c, bool) else c

    def e_Compare(self, e, scope, hint):  # noqa: N802
        if len(e.ops) > 1:                  # a < b < c is (a < b) and (b < c)
            parts = []
            left = e.left
            for op, right in zip(e.ops, e.comparators):
                parts.append(ast.copy_location(ast.Compare(left, [op], [right]), e))
                left = right
            return self.e_BoolOp(ast.copy_location(ast.BoolOp(ast.And(), parts), e), scope,
                                 hint)
        op = e.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            comp = e.comparators[0]
            if isinstance(comp, ast.Constant) and comp.value is None:
                c, _, _ = self.cond(e, scope)       # ``x is None``: may be known statically
                return self.const(c, e) if isinstance(c, bool) else c
            a, b = self.value(e.left, scope), self.value(e.comparators[0], scope)
            sym = "is" if isinstance(op, ast.Is) else "is not"
            kind = "aten::__is__" if isinstance(op, ast.Is) else "aten::__isnot__"
            return self.call(kind, [a, b], BoolT, f"({{0}} {sym} {{1}})",
                             f"torch.{kind[6:]}({{0}}, {{1}})", e)
        a, b = self.value(e.left, scope), self.value(e.comparators[0], scope)
        if isinstance(op, (ast.In, ast.NotIn)):
            sym = "in" if isinstance(op, ast.In) else "not in"
            v = self.call("aten::__contains__", [b, a], BoolT, f"({{1}} {sym} {{0}})",
                          "torch.__contains__({0}, {1})", e)
            return v
        name, sym = _CMPOPS[type(op)]
        rt = TensorT if TensorT in (a.type, b.type) else BoolT
        return self.call(f"aten::{name}", [a, b], rt, f"({{0}} {sym} {{1}})",
                         f"torch.{name}({{0}}, {{1}})", e)

    def e_IfExp(self, e, scope, hint):  # noqa: N802
        c, rt, rf = self.cond(e.test, scope)
        if isinstance(c, bool):
            return self.value(e.body if c else e.orelse, self._refined(scope, rt if c else rf, e))
        n = self.emit("prim::If", [c], [], node=e)
        saved = self.block
        vals = []
        for expr_, ref in ((e.body, rt), (e.orelse, rf)):
            b = _ir.Block()
            n.blocks.append(b)
            self.block = b
            v = self.value(expr_, self._refined(scope, ref, e), hint)
            b.returns = [v]
            v.uses += 1
            vals.append(v)
        self.block = saved
        t = unify(vals[0].type, vals[1].type)
        if t is None:
            raise self.type_err(e, f"Type mismatch: the true branch of the expression has type "
                                   f"{vals[0].type.py()} and the false branch has type "
                                   f"{vals[1].type.py()}")
        o = Value(self.graph, t)
        o.node = n
        n.outputs.append(o)
        return o

    def e_Tuple(self, e, scope, hint):  # noqa: N802
        hints = hint.args if hint is not None and hint.kind == "Tuple" and \
            len(hint.args) == len(e.elts) else [None] * len(e.elts)
        vals = [self.value(x, scope, h) for x, h in zip(e.elts, hints)]
        inner = ", ".join(f"{{{i}}}" for i in range(len(vals)))
        return self.call("prim::TupleConstruct", vals, TupleT([v.type for v in vals]),
                         "(" + inner + ("," if vals else "") + ")",
                         "(" + inner + ("," if len(vals) == 1 else "") + ")", e)

    def e_List(self, e, scope, hint):  # noqa: N802
        elt_hint = hint.args[0] if hint is not None and hint.kind == "List" else None
        vals = [self.value(x, scope, elt_hint) for x in e.elts]
        if elt_hint is not None:
            t = elt_hint
            for v in vals:
                if not is_subtype(v.type, t):
                    raise self.type_err(e, f"List type annotation `{hint.py()}` did not match "
                                           f"the types of the given list elements, which were "
                                           f"{v.type.py()}")
        elif vals:
            t = vals[0].type
            for v in vals[1:]:
                if v.type != t:
                    u = unify(t, v.type)
                    if u is None:
                        raise self.type_err(e, f"Lists must contain only a single type, "
                                               f"found {t.py()} and {v.type.py()}")
                    t = u
        else:
            t = TensorT
        inner = ", ".join(f"{{{i}}}" for i in range(len(vals)))
        code = "[" + inner + "]" if vals else f"annotate(List[{t.py()}], [])"
        return self.call("prim::ListConstruct", vals, ListT(t), "[" + inner + "]", code, e,
                         pure=False)

    def e_Dict(self, e, scope, hint):  # noqa: N802
        if any(k is None for k in e.keys):
            raise NotSupportedError(self.loc(e), "Dict expansion (**) isn't supported")
        kh, vh = (hint.args if hint is not None and hint.kind == "Dict" else (None, None))
        ks = [self.value(k, scope, kh) for k in e.keys]
        vs = [self.value(v, scope, vh) for v in e.values]
        kt = kh or (ks[0].type if ks else StrT)
        vt = vh or (vs[0].type if vs else TensorT)
        for v in vs:
            if not is_subtype(v.type, vt):
                raise self.type_err(e, f"Dict values must contain only a single type, expected: "
                                       f"{vt.py()} but found {v.type.py()} instead")
        ins = []
        for k, v in zip(ks, vs):
            ins += [k, v]
        inner = ", ".join(f"{{{2 * i}}}: {{{2 * i + 1}}}" for i in range(len(ks)))
        code = "{{" + inner + "}}" if ks else f"annotate(Dict[{kt.py()}, {vt.py()}], {{{{}}}})"
        return self.call("prim::DictConstruct", ins, DictT(kt, vt), "{{" + inner + "}}", code, e,
                         pure=False)

    def e_ListComp(self, e, scope, hint):  # noqa: N802
        return self.comprehension(e, scope, hint, dict_=False)

    def e_DictComp(self, e, scope, hint):  # noqa: N802
        return self.comprehension(e, scope, hint, dict_=True)

    def comprehension(self, e, scope, hint, dict_):
        if len(e.generators) != 1 or e.generators[0].is_async:
            raise NotSupportedError(self.loc(e), "Only a single generator is currently "
                                                 "supported")
        gen = e.generators[0]
        if gen.ifs:                           # as torch 2.13's frontend
            raise NotSupportedError(self.loc(e), "Comprehension ifs are not supported yet")
        self.tmp += 1
        acc = f"$comp{self.tmp}"
        kind = "Dict" if dict_ else "List"
        hint = hint if hint is not None and hint.kind == kind else None
        if dict_:
            holder = self.call("prim::DictConstruct", [], hint or DictT(StrT, TensorT), "{{}}",
                               "{{}}", e, pure=False)
        else:
            holder = self.call("prim::ListConstruct", [], hint or ListT(TensorT), "[]", "[]", e,
                               pure=False)
        holder.base = None
        inner = scope.copy()
        inner.env[acc] = holder
        first = {"typed": hint is not None}

        def add(sc):
            if dict_:
                k = self.value(e.key, sc)
                v = self.value(e.value, sc)
                if not first["typed"]:
                    holder.type = DictT(k.type, v.type)
                    first["typed"] = True
                self.emit("aten::_set_item", [holder, k, v], [], tpl="{0}.__setitem__({1}, {2})",
                          code="{0}[{1}] = {2}", node=e, pure=False)
            else:
                v = self.value(e.elt, sc)
                if not first["typed"]:
                    holder.type = ListT(v.type)
                    first["typed"] = True
                self.emit("aten::append", [holder, v], [], tpl="{0}.append({1})",
                          code="torch.append({0}, {1})", node=e, pure=False)
        body = [_CompStep(add)]
        loop = ast.copy_location(ast.For(gen.target, gen.iter, body, []), e)
        saved_decl = dict(self.decl)
        self.s_For(loop, inner)
        for nm in list(self.decl):           # the comprehension's variables stay inside it
            if nm not in saved_decl:
                del self.decl[nm]
        return holder

    def s__CompStep(self, s, scope):  # noqa: N802
        s.fn(scope)

    def e_JoinedStr(self, e, scope, hint):  # noqa: N802
        fmt, vals = [], []
        for part in e.values:
            if isinstance(part, ast.Constant):
                fmt.append(part.value.replace("{", "{{").replace("}", "}}"))
            else:
                if part.conversion != -1 or part.format_spec is not None:
                    raise NotSupportedError(self.loc(part), "Don't support conversion in "
                                                            "JoinedStr")
                fmt.append("{}")
                vals.append(self.value(part.value, scope))
        f = self.const("".join(fmt), e)
        ins = [f, *vals]
        args = ", ".join(f"{{{i}}}" for i in range(1, len(ins)))
        return self.call("aten::format", ins, StrT, "{0}.format(" + args + ")",
                         "torch.format({0}" + "".join(f", {{{i}}}" for i in range(1, len(ins)))
                         + ")", e)

    def e_Subscript(self, e, scope, hint):  # noqa: N802
        base = self.expr(e.value, scope)
        if isinstance(base, _Sugar):
            if base.kind in ("modlist", "moddict"):
                key = self.value(e.slice, scope)
                if key.node is None or key.node.kind != "prim::Constant":
                    raise self.type_err(e, "Index of a ModuleList/ModuleDict must be a constant")
                k = key.node.attrs["value"]
                names = base.obj.module_names()
                nm = names[k] if base.kind == "modlist" else k
                return self.submodule_value(base.value, base.obj, str(nm), e)
            raise self.type_err(e, "cannot subscript this value")
        t = base.type
        if t.kind in ("Tensor", "Any"):
            vals, tpl = self.index_parts(e.slice, scope, 1)
            kind = "aten::select" if isinstance(e.slice, (ast.Constant, ast.Name, ast.UnaryOp)) \
                else "aten::slice" if isinstance(e.slice, ast.Slice) else "aten::index"
            return self.call(kind, [base, *vals], TensorT if t.kind == "Tensor" else AnyT,
                             "{0}[" + tpl + "]", "{0}[" + tpl + "]", e)
        if t.kind == "Tuple":
            if isinstance(e.slice, ast.Slice):
                lo, hi = self._const_int(e.slice.lower), self._const_int(e.slice.upper)
                types = list(t.args)[slice(lo, hi)]
                return self.call("prim::TupleSlice", [base], TupleT(types),
                                 f"{{0}}[{lo}:{hi}]", f"{{0}}[{lo}:{hi}]", e)
            idx = self.value(e.slice, scope)
            if idx.node is None or idx.node.kind != "prim::Constant":
                raise self.type_err(e, "tuple indices must be integer constants")
            i = idx.node.attrs["value"]
            if not -len(t.args) <= i < len(t.args):
                raise self.type_err(e, f"Tuple index out of range. Tuple is length "
                                       f"{len(t.args)} and index is {i}")
            return self.call("prim::TupleIndex", [base, idx], t.args[i], "{0}[{1}]",
                             "{0}[{1}]", e)
        if t.kind in ("List", "str"):
            if isinstance(e.slice, ast.Slice):
                vals, tpl = self.index_parts(e.slice, scope, 1)
                return self.call("aten::slice", [base, *vals], t, "{0}[" + tpl + "]",
                                 "{0}[" + tpl + "]", e)
            idx = self.value(e.slice, scope)
            return self.call("aten::__getitem__", [base, idx], t.args[0] if t.kind == "List"
                             else StrT, "{0}[{1}]", "{0}[{1}]", e)
        if t.kind == "Dict":
            key = self.value(e.slice, scope)
            return self.call("aten::__getitem__", [base, key], t.args[1], "{0}[{1}]", "{0}[{1}]",
                             e)
        raise self.type_err(e, f"'{t.py()}' object is not subscriptable")

    def _const_int(self, node):
        if node is None:
            return None
        v = self.eval_py(node)
        return v

    def index_parts(self, sl, scope, first):
        """The index of a subscript as inputs plus a template (``{1}:{2}, None, ...``)."""
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        vals, parts = [], []

        def add(node):
            v = self.value(node, scope)
            vals.append(v)
            return f"{{{first + len(vals) - 1}}}"
        for el in elts:
            if isinstance(el, ast.Slice):
                lo = add(el.lower) if el.lower is not None else ""
                hi = add(el.upper) if el.upper is not None else ""
                st = (":" + add(el.step)) if el.step is not None else ""
                parts.append(f"{lo}:{hi}{st}")
            elif isinstance(el, ast.Constant) and el.value is Ellipsis:
                parts.append("...")
            elif isinstance(el, ast.Constant) and el.value is None:
                parts.append("None")
            else:
                parts.append(add(el))
        tpl = ", ".join(parts) + ("," if len(parts) == 1 and isinstance(sl, ast.Tuple) else "")
        return vals, tpl

    # -- calls
    def e_Call(self, e, scope, hint):  # noqa: N802
        if any(isinstance(a, ast.Starred) for a in e.args) or any(k.arg is None
                                                                  for k in e.keywords):
            raise NotSupportedError(self.loc(e), "Starred/keyword-expanded arguments aren't "
                                                 "supported")
        f = self.expr(e.func, scope)
        if isinstance(f, Value):
            raise self.type_err(e, f"Cannot call a value of type {f.type.py()}")
        if f.kind == "method":
            return self.call_method(f.obj, f.name, e, scope, hint)
        if f.kind in ("module", "modlist", "moddict"):
            return self.call_module_method(f, "forward", e, scope)
        if f.kind == "modmethod":
            return self.call_module_method(f.module, f.name, e, scope)
        return self.call_python(f.obj, e, scope, hint)

    def args_of(self, e, scope, skip=0):
        args = [self.value(a, scope) for a in e.args[skip:]]
        kws = {k.arg: self.value(k.value, scope) for k in e.keywords}
        return args, kws

    @staticmethod
    def arg_tpl(n_first, n_args, kw_names):
        parts = [f"{{{n_first + i}}}" for i in range(n_args)]
        parts += [f"{k}={{{n_first + n_args + i}}}" for i, k in enumerate(kw_names)]
        return ", ".join(parts)

    def call_method(self, obj, name, e, scope, hint=None):
        args, kws = self.args_of(e, scope)
        ins = [obj, *args, *kws.values()]
        at = self.arg_tpl(1, len(args), list(kws))
        tpl = f"{{0}}.{name}({at})"
        code = f"torch.{name}({{0}}{', ' if at else ''}{at})"
        t = obj.type
        info = _classes.info_for(t)
        if info is not None:
            method = info.method(name, e)
            bound = method._bind_static(args, kws, e, self)
            ref = self.graph.const_ref(method)
            at = self.arg_tpl(1, len(bound), [])
            return self.emit("prim::CallMethod", [obj, *bound], [method._return_type],
                             f"{ref}._run({{0}}{', ' if at else ''}{at})",
                             f"({{0}}).{name}({at})", e, attrs={"name": name},
                             pure=False).output()
        if t.kind in ("Tensor", "Any"):
            if name == "tolist":
                if hint is None:
                    raise self.type_err(e, "Expected type hint for result of tolist()")
                return self.call("prim::tolist", ins, hint, tpl, code, e)
            rt = op_result_type(name, [t] + [a.type for a in args], set(kws))
            if rt == ListT(IntT) and name in ("size", "stride"):
                tpl = f"list({tpl})"      # TorchScript's sizes are List[int], not torch.Size
            if t.kind == "Any":
                rt = AnyT
            return self.call(f"aten::{name}", ins, rt, tpl, code, e, pure=not name.endswith("_"))
        if t.kind == "List":
            el = t.args[0]
            if name == "append":
                if not is_subtype(args[0].type, el):
                    raise self.type_err(e, f"Arguments for call are not valid.\nExpected a value "
                                           f"of type '{el.py()}' for argument 'el' but instead "
                                           f"found type '{args[0].type.py()}'")
                self.emit("aten::append", ins, [], tpl, code, e, pure=False)
                return self.const(None, e)
            rt = {"pop": el, "index": IntT, "count": IntT, "copy": t}.get(name, NoneT)
            if name not in ("append", "extend", "insert", "pop", "remove", "index", "count",
                            "clear", "reverse", "sort", "copy"):
                raise self.type_err(e, f"Tried to access nonexistent attribute or method "
                                       f"'{name}' of type '{t.py()}'.")
        elif t.kind == "Dict":
            kt, vt = t.args
            rt = {"keys": ListT(kt), "values": ListT(vt), "items": ListT(TupleT([kt, vt])),
                  "get": vt if len(args) > 1 else OptionalT(vt), "pop": vt, "setdefault": vt,
                  "copy": t, "update": NoneT, "clear": NoneT, "popitem": TupleT([kt, vt])}.get(
                name)
            if name in ("keys", "values", "items"):
                tpl = f"list({{0}}.{name}())"
        elif t.kind == "str":
            rt = {"split": ListT(StrT), "startswith": BoolT, "endswith": BoolT, "find": IntT,
                  "count": IntT, "index": IntT, "rfind": IntT, "isdigit": BoolT,
                  "isalpha": BoolT, "isspace": BoolT, "islower": BoolT, "isupper": BoolT,
                  "splitlines": ListT(StrT), "rsplit": ListT(StrT)}.get(name, StrT)
        else:
            rt = None
        if rt is None:
            raise self.type_err(e, f"Tried to access nonexistent attribute or method '{name}' "
                                   f"of type '{t.py()}'.")
        return self.call(f"aten::{name}", ins, rt, tpl, code, e, pure=False)

    def call_python(self, obj, e, scope, hint):
        gt = _glasstorch()
        jit = gt.jit
        if obj is jit.annotate:
            t = self.annotation(e.args[0])
            v = self.value(e.args[1], scope, t)
            if not is_subtype(v.type, t):
                raise self.type_err(e, f"annotate: expected {t.py()}, got {v.type.py()}")
            if v.type != t:
                v = self.call("prim::unchecked_cast", [v], t, "{0}", "{0}", e)
            return v
        if obj is unchecked_cast:
            t = self.annotation(e.args[0])
            return self.call("prim::unchecked_cast", [self.value(e.args[1], scope)], t, "{0}",
                             f"unchecked_cast({t.py()}, {{0}})", e)
        if obj is uninitialized:
            t = self.annotation(e.args[0])
            return self.emit("prim::Uninitialized", [], [t], tpl="None",
                             code=f"uninitialized({t.py()})", node=e).output()
        if obj in (jit.is_scripting, _glasstorch_internal_is_scripting()):
            return self.const(True, e)
        if obj is jit.is_tracing:
            return self.const(False, e)
        if obj in (builtins.isinstance, jit.isinstance):
            c, _, _ = self.cond(e, scope)
            return self.const(c, e) if isinstance(c, bool) else c
        if obj is jit._unwrap_optional:
            v = self.value(e.args[0], scope)
            t = v.type.args[0] if v.type.kind == "Optional" else v.type
            return self.call("aten::_unwrap_optional", [v], t, "{0}", "{0}", e)
        if obj is jit.wait or obj is jit.fork:
            return self.fork_wait(obj, e, scope)
        if isinstance(obj, type) and obj in (int, float, bool, str):
            return self.cast(obj, e, scope)
        if obj is gt.device:
            args, kws = self.args_of(e, scope)
            ref = self.graph.const_ref(obj)
            at = self.arg_tpl(0, len(args), list(kws))
            return self.call("aten::device", [*args, *kws.values()], DeviceT, f"{ref}({at})",
                             f"torch.device({at})", e)
        if obj in _BUILTIN_FUNCS:
            return self.call_builtin(obj, e, scope)
        if _classes.is_named_tuple(obj) or _classes.scriptable_class(obj):
            return self.construct(obj, e, scope)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            raise NotSupportedError(self.loc(e), "exceptions can only be constructed in a raise "
                                                 "statement")
        mod = getattr(obj, "__module__", None) or ""
        if obj in _MATH_FUNCS:
            args, kws = self.args_of(e, scope)
            ref = self.graph.const_ref(obj)
            rt = IntT if obj in (math.floor, math.ceil, math.factorial, math.gcd) else \
                BoolT if obj in (math.isnan, math.isinf, math.isfinite) else FloatT
            return self.call(f"aten::{obj.__name__}", args, rt,
                             f"{ref}({self.arg_tpl(0, len(args), [])})",
                             f"math.{obj.__name__}({self.arg_tpl(0, len(args), [])})", e)
        from ._script import ScriptFunction
        if isinstance(obj, ScriptFunction):
            return self.call_script_function(obj, e, scope)
        if callable(obj) and (mod == "glasstorch" or mod.startswith("glasstorch.")) and \
                not isinstance(obj, type) and not getattr(obj, "_torchscript_modifier", None):
            return self.call_op(obj, e, scope)
        if inspect.isfunction(obj):
            mod_ = getattr(obj, "_torchscript_modifier", None)
            if mod_ in (FunctionModifiers.IGNORE, FunctionModifiers.UNUSED):
                return self.call_ignored(obj, e, scope, mod_)
            from ._script import _compile_function
            return self.call_script_function(_compile_function(obj), e, scope)
        raise self.type_err(e, f"Python builtin {obj!r} is currently not supported in "
                               f"Torchscript")

    def construct(self, cls, e, scope):
        """``Cls(...)``: a NamedTuple is a tuple construction; a class instance is created
        and its compiled ``__init__`` called (prim::CreateObject + CallMethod, as torch)."""
        args, kws = self.args_of(e, scope)
        ref = self.graph.const_ref(cls)
        if _classes.is_named_tuple(cls):
            t = _classes.named_tuple_type(cls)
            vals = list(args) + [None] * (len(t.fields) - len(args))
            for k, v in kws.items():
                if k not in t.fields:
                    raise self.type_err(e, f"Unknown keyword argument '{k}' for {cls.__name__}")
                vals[t.fields.index(k)] = v
            for i, (nm, ft) in enumerate(zip(t.fields, t.args)):
                if vals[i] is None:
                    if nm not in cls._field_defaults:
                        raise self.type_err(e, f"Argument {nm} not provided for "
                                               f"{cls.__name__}")
                    vals[i] = self.const(cls._field_defaults[nm], e, ft)
                vals[i] = self.convert(vals[i], ft, e)
                if not is_subtype(vals[i].type, ft):
                    raise self.type_err(e, f"Expected a value of type '{ft.py()}' for field "
                                           f"'{nm}', but found '{vals[i].type.py()}'")
            at = self.arg_tpl(0, len(vals), [])
            return self.call("prim::TupleConstruct", vals, t, f"{ref}({at})",
                             f"{t.name}({at})", e)
        info = _classes.class_info(cls)
        init = info.method("__init__")
        bound = init._bind_static(args, kws, e, self)
        obj = self.call("prim::CreateObject", [], info.jit_type, f"{ref}.__new__({ref})",
                        f"{info.class_name}.__new__({info.class_name})", e, pure=False)
        iref = self.graph.const_ref(init)
        at = self.arg_tpl(1, len(bound), [])
        self.emit("prim::CallMethod", [obj, *bound], [NoneT], f"{iref}._run({{0}}, {at})",
                  f"({{0}}).__init__({at})", e, attrs={"name": "__init__"}, pure=False)
        return obj

    def call_op(self, fn, e, scope):
        args, kws = self.args_of(e, scope)
        name = getattr(fn, "__name__", "op")
        mod = getattr(fn, "__module__", "")
        aten = name
        if mod.endswith("linalg") and not name.startswith("linalg_"):
            aten = "linalg_" + name
        ref = self.graph.const_ref(fn)
        at = self.arg_tpl(0, len(args), list(kws))
        rt = op_result_type(name, [a.type for a in args], set(kws))
        prefix = "torch"          # torch's .code spells builtin ops (F.relu too) as torch.<op>
        # dead-code elimination may drop a pure call whose result is unused: in-place and
        # stateful operators are not pure
        pure = not (name.endswith("_") or "out" in kws or "inplace" in kws or
                    name in _IMPURE_OPS)
        return self.call(f"aten::{aten}", [*args, *kws.values()], rt, f"{ref}({at})",
                         f"{prefix}.{name}({at})", e, pure=pure)

    def call_script_function(self, sf, e, scope):
        args, kws = self.args_of(e, scope)
        bound = sf._bind_static(args, kws, e, self)
        ref = self.graph.const_ref(sf)
        at = self.arg_tpl(0, len(bound), [])
        return self.emit("prim::CallFunction", bound, [sf._return_type], f"{ref}._run({at})",
                         f"{sf.qualified_name}({at})", e, attrs={"fn": sf},
                         pure=False).output()

    def call_ignored(self, fn, e, scope, modifier):
        args, kws = self.args_of(e, scope)
        try:
            hints = typing.get_type_hints(fn)
        except Exception:
            hints = {}
        rt = type_from_python(hints["return"], self.loc(e)) if "return" in hints else TensorT
        if modifier == FunctionModifiers.UNUSED:
            msg = self.const("This Python function is annotated to be ignored and cannot be run",
                             e)
            lr = self.graph.const_ref(self.loc(e))
            self.emit("prim::RaiseException", [msg], [],
                      tpl=f"_raise({{0}}, 'builtins.RuntimeError', {lr})",
                      code="ops.prim.RaiseException({0})", node=e, pure=False)
            return self.emit("prim::Uninitialized", [], [rt], tpl="None",
                             code="uninitialized(" + rt.py() + ")").output()
        ref = self.graph.const_ref(fn)
        at = self.arg_tpl(0, len(args), list(kws))
        return self.call("prim::PythonOp", [*args, *kws.values()], rt, f"{ref}({at})",
                         f"^{fn.__name__}()({at})", e, pure=False)

    def cast(self, cls, e, scope):
        if not e.args:
            return self.const(cls(), e)
        v = self.value(e.args[0], scope)
        t = {int: IntT, float: FloatT, bool: BoolT, str: StrT}[cls]
        kind = {int: "aten::Int", float: "aten::Float", bool: "aten::Bool", str: "aten::str"}[cls]
        if v.type == t and cls is not str:
            return v
        return self.call(kind, [v], t, f"{cls.__name__}({{0}})", f"{cls.__name__}({{0}})", e)

    def call_builtin(self, fn, e, scope):
        name = fn.__name__
        if name in ("getattr", "hasattr"):
            obj = self.expr(e.args[0], scope)
            attr = self.eval_py(e.args[1])
            if isinstance(obj, _Sugar) and obj.kind == "module":
                if name == "hasattr":
                    return self.const(obj.obj.attr_type(attr) is not None or
                                      attr in obj.obj.submodule_names(), e)
                return self.module_attr(obj, attr, e)
            if name == "hasattr":
                return self.const(hasattr(Tensor, attr) if isinstance(obj, Value) and
                                  obj.type == TensorT else False, e)
            return self.e_Attribute(ast.copy_location(ast.Attribute(e.args[0], attr, ast.Load()),
                                                      e), scope, None)
        if name == "len":
            obj = self.expr(e.args[0], scope)
            if isinstance(obj, _Sugar) and obj.kind in ("modlist", "moddict"):
                return self.const(len(obj.obj.module_names()), e)
            v = self.value(e.args[0], scope)
            if v.type.kind == "Tuple":
                return self.const(len(v.type.args), e)
            return self.call("aten::len", [v], IntT, "len({0})", "torch.len({0})", e)
        if name == "list" and len(e.args) == 1 and isinstance(e.args[0], ast.Call) and \
                isinstance(e.args[0].func, ast.Name) and e.args[0].func.id == "range":
            # ``list(range(...))`` is the comprehension ``[i for i in range(...)]``
            self.tmp += 1
            var = f"$range{self.tmp}"
            comp = ast.copy_location(ast.ListComp(
                ast.Name(var, ast.Load()), [ast.comprehension(ast.Name(var, ast.Store()),
                                                              e.args[0], [], 0)]), e)
            return self.comprehension(comp, scope, ListT(IntT), dict_=False)
        args, kws = self.args_of(e, scope)
        ref = self.graph.const_ref(fn)
        at = self.arg_tpl(0, len(args), list(kws))
        tpl = f"{ref}({at})"
        code = f"{name}({at})"
        ts = [a.type for a in args]
        if name == "print":
            self.emit("prim::Print", [*args, *kws.values()], [], tpl, code, e, pure=False)
            return self.const(None, e)
        if name in ("min", "max"):
            if len(args) == 1 and ts[0].kind == "List":
                rt = ts[0].args[0]
            else:
                rt = ts[0]
                for x in ts[1:]:
                    rt = FloatT if {rt.kind, x.kind} == {"int", "float"} else rt
            return self.call(f"prim::{name}", args, rt, tpl, code, e)
        if name == "abs":
            return self.call("prim::abs", args, ts[0], tpl, code, e)
        if name == "round":            # aten::round gives a float, also for one argument
            return self.call("aten::round", args, FloatT, f"float({tpl})", code, e)
        if name == "divmod":
            rt = IntT if ts == [IntT, IntT] else FloatT
            return self.call("aten::divmod", args, TupleT([rt, rt]), tpl, code, e)
        if name == "sum":
            return self.call("aten::sum", args, ts[0].args[0] if ts[0].kind == "List"
                             else TensorT, tpl, code, e)
        if name in ("any", "all"):
            return self.call(f"aten::{name}", args, BoolT, tpl, code, e)
        if name in ("list", "sorted"):
            if not args:
                return self.call("prim::ListConstruct", [], ListT(TensorT), "[]", "[]", e,
                                 pure=False)
            t = ts[0] if ts[0].kind == "List" else ListT(StrT if ts[0] == StrT else TensorT)
            return self.call(f"aten::{name}", args, t, tpl, code, e, pure=False)
        if name == "range":
            raise NotSupportedError(self.loc(e), "range() is only supported in for loops")
        if name in ("ord", "hash", "id"):
            return self.call(f"aten::{name}", args, IntT, tpl, code, e)
        if name == "chr":
            return self.call("aten::chr", args, StrT, tpl, code, e)
        raise NotSupportedError(self.loc(e), f"Python builtin {name} is currently not supported "
                                             f"in Torchscript")

    def fork_wait(self, obj, e, scope):
        gt = _glasstorch()
        if obj is gt.jit.wait:
            fut = self.value(e.args[0], scope)
            t = fut.type.args[0] if fut.type.kind == "Future" else AnyT
            return self.call("aten::wait", [fut], t, "{0}.wait()", "torch.jit._wait({0})", e,
                             pure=False)
        # fork runs the call at once (eager futures, as glasstorch's jit.fork does); its value
        # is wrapped in a completed Future
        inner = ast.copy_location(ast.Call(e.args[0], e.args[1:], e.keywords), e)
        v = self.value(inner, scope)
        ref = self.graph.const_ref(_completed_future)
        return self.call("prim::fork", [v], JitType("Future", (v.type,)), f"{ref}({{0}})",
                         "torch.jit._fork({0})", e, pure=False)

    # -- modules
    def module_attr(self, sugar, attr, e):
        info = sugar.obj
        mod = info.module
        if attr in info.submodule_names():
            return self.submodule_value(sugar.value, info, attr, e)
        kind = info.attr_kind(attr)
        if kind == "constant" or (info.frozen and kind == "attr"):
            # frozen modules fold parameters, buffers and attributes into the graph
            if attr == "training":
                return self.const(False, e)
            val = info.sm.__dict__.get(attr, getattr(mod, attr))
            if isinstance(val, Tensor):
                val = val.detach().clone()
                return self.const(val, e, TensorT)
            if info.attr_type(attr) is None:
                raise self.type_err(e, info.missing_attr_message(attr))
            return self.const(val, e, info.attr_type(attr))
        if kind == "method":
            fn = inspect.getattr_static(type(mod), attr, None)
            if isinstance(fn, staticmethod):    # compiled as a plain function
                return _Sugar("py", fn.__func__)
            return _Sugar("modmethod", None, module=sugar, name=attr)
        t = info.attr_type(attr)
        if t is None:
            raise self.type_err(e, info.missing_attr_message(attr))
        if t == NoneT:
            return self.const(None, e)
        return self.emit("prim::GetAttr", [sugar.value], [t], f"{{0}}.{attr}", f"{{0}}.{attr}",
                         e, attrs={"name": attr}).output()

    def submodule_value(self, parent_value, info, name, e):
        sub = info.submodule_info(name)
        if info.frozen:           # a frozen module holds its (frozen) submodules as constants
            v = self.const(sub.sm, e, sub.jit_type)
            kind = {"list": "modlist", "dict": "moddict"}.get(sub.kind, "module")
            return _Sugar(kind, sub, value=v)
        n = self.emit("prim::GetAttr", [parent_value], [sub.jit_type] if sub.kind == "module"
                      else [JitType("Class", name=sub.class_name)], attrs={"name": name},
                      base=name if name.isidentifier() else None,
                      tpl=f"getattr({{0}}, {name!r})", code=f"{{0}}.{name}"
                      if name.isidentifier() else f"getattr({{0}}, {name!r})", node=e)
        v = n.output()
        if sub.kind == "list":
            return _Sugar("modlist", sub, value=v)
        if sub.kind == "dict":
            return _Sugar("moddict", sub, value=v)
        return _Sugar("module", sub, value=v)

    def call_module_method(self, sugar, name, e, scope):
        info = sugar.obj
        if name == "children" and not e.args and not e.keywords and \
                inspect.getattr_static(type(info.module), name, None) is Module.children:
            return _Sugar("modlist", info, value=sugar.value)   # iterated as unrolled
        args, kws = self.args_of(e, scope)
        from ..nn.modules.container import Sequential
        if info.kind != "module" and not isinstance(info.module, Sequential):
            raise self.type_err(e, f"'{type(info.module).__name__}' object is not callable")
        if info.kind == "list" and (kws or len(args) != 1):
            raise self.type_err(e, "Sequential takes one input")
        return self._invoke(sugar, name, args, kws, e)

    def _invoke(self, sugar, name, args, kws, e):
        info = sugar.obj
        if info.kind == "list" and name == "forward":   # Sequential: call each in turn
            cur = args[0]
            for nm in info.module_names():
                sub = self.submodule_value(sugar.value, info, nm, e)
                cur = self._invoke(sub, "forward", [cur], {}, e)
            return cur
        if info.kind != "module":
            raise self.type_err(e, f"cannot call a {info.kind} of modules")
        method = info.method(name, e)
        bound = method._bind_static(args, kws, e, self, skip_self=True)
        at = self.arg_tpl(1, len(bound), [])
        sep = ", " if at else ""
        return self.emit("prim::CallMethod", [sugar.value, *bound], [method._return_type],
                         f"{{0}}._script_methods[{name!r}]._run({{0}}{sep}{at})"
                         if method.compiled else
                         f"{self.graph.const_ref(method._fn)}({{0}}{sep}{at})",
                         f"({{0}}).{name}({at})", e, attrs={"name": name},
                         pure=False).output()


class _CompStep(ast.stmt):
    """Internal statement: the body of a comprehension (append / set item)."""

    _fields = ()

    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.lineno = self.col_offset = 0


def _archive_eval(expr, ns, comp):
    """The value of a name, attribute chain, subscript (``List[int]``) or literal in an
    archive's code, looked up in namespace ``ns``: nothing is called or executed."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name) and expr.id in ns:
        return ns[expr.id]
    if isinstance(expr, ast.Attribute):
        base = _archive_eval(expr.value, ns, comp)
        if not expr.attr.startswith("_") or getattr(base, "_archive_namespace", False):
            return getattr(base, expr.attr)
    if isinstance(expr, ast.Tuple):
        return tuple(_archive_eval(e, ns, comp) for e in expr.elts)
    if isinstance(expr, ast.Subscript):
        base = _archive_eval(expr.value, ns, comp)
        if base in (list, dict, tuple, typing.Optional, typing.Final, typing.Union):
            return base[_archive_eval(expr.slice, ns, comp)]
    raise comp.type_err(expr, f"unknown name or type in archive code: '{ast.unparse(expr)}'")


def uninitialized(type_):
    """``uninitialized(T)`` in TorchScript source: a value of type ``T`` on a path that
    raises before using it (compiled to ``prim::Uninitialized``; never called)."""
    raise RuntimeError("uninitialized() is TorchScript's and runs only compiled")


def unchecked_cast(type_, value):
    """``unchecked_cast(T, v)`` in TorchScript source: ``v`` taken as type ``T`` (an
    Optional known to hold a value); never called."""
    raise RuntimeError("unchecked_cast() is TorchScript's and runs only compiled")


def _completed_future(value):
    from ..futures import Future
    fut = Future()
    fut.set_result(value)
    return fut


def _is_constant_like(obj):
    return obj is None or isinstance(obj, (bool, int, float, str)) or _is_dtype(obj) or \
        isinstance(obj, _glasstorch().device) or (isinstance(obj, tuple) and
                                                  all(_is_constant_like(x) for x in obj))


def _jit_isinstance():
    return _glasstorch().jit.isinstance


def _glasstorch_internal_is_scripting():
    from . import _internal
    return _internal.is_scripting


_IMPURE_OPS = {"manual_seed", "seed", "set_grad_enabled", "set_default_dtype", "set_printoptions",
               "dropout", "alpha_dropout", "feature_alpha_dropout", "rrelu", "bernoulli",
               "multinomial", "normal", "rand", "randn", "randint", "randperm", "rand_like",
               "randn_like", "randint_like", "poisson", "batch_norm", "instance_norm",
               "use_deterministic_algorithms", "set_num_threads", "empty", "empty_like"}
_BUILTIN_FUNCS = {builtins.len, builtins.print, builtins.min, builtins.max, builtins.abs,
                  builtins.round, builtins.divmod, builtins.sum, builtins.any, builtins.all,
                  builtins.list, builtins.sorted, builtins.getattr, builtins.hasattr,
                  builtins.range, builtins.ord, builtins.chr, builtins.hash}
_MATH_FUNCS = {getattr(math, n) for n in ("sqrt", "exp", "log", "log2", "log10", "log1p",
                                          "expm1", "floor", "ceil", "sin", "cos", "tan", "asin",
                                          "acos", "atan", "atan2", "sinh", "cosh", "tanh", "pow",
                                          "fabs", "isnan", "isinf", "isfinite", "erf", "erfc",
                                          "gamma", "lgamma", "copysign", "factorial", "gcd",
                                          "hypot", "degrees", "radians", "trunc", "fmod")}
