"""The TorchScript IR that ``jit.script`` and ``jit.trace`` produce: typed values, nodes with
aten-like kinds (``aten::add``, ``prim::If``, ``prim::Loop``, ``prim::Constant``) and nested
blocks, printed as torch prints ``.graph``; ``.code`` is printed from it, and the program runs
as Python source generated from it (so its control flow is exactly the graph's).
"""

from __future__ import annotations

import enum
import math

from .._tensor import Tensor

__all__ = []


# --------------------------------------------------------------------------- types
class JitType:
    """A TorchScript type: ``kind`` (Tensor, int, List, Optional, ...) and element types."""

    __slots__ = ("kind", "args", "name", "fields")

    def __init__(self, kind, args=(), name=None, fields=None):
        self.kind = kind
        self.args = tuple(args)
        self.name = name            # class types: the qualified name
        self.fields = fields        # a named tuple's field names (``values``, ``indices``)

    def __eq__(self, other):
        return (isinstance(other, JitType) and self.kind == other.kind
                and self.args == other.args and self.name == other.name)

    def __hash__(self):
        return hash((self.kind, self.args, self.name))

    def ir(self):
        """The spelling in ``.graph`` (``int[]``, ``Tensor?``, ``(Tensor, int)``)."""
        k = self.kind
        if k == "List":
            return self.args[0].ir() + "[]"
        if k == "Optional":
            return self.args[0].ir() + "?"
        if k == "Tuple" and self.name and self.fields:    # a NamedTuple class
            return "NamedTuple(" + ", ".join(f"{f} : {a.ir()}" for f, a in
                                             zip(self.fields, self.args)) + ")"
        if k == "Tuple":
            return "(" + ", ".join(a.ir() for a in self.args) + ")"
        if k == "Dict":
            return f"Dict({self.args[0].ir()}, {self.args[1].ir()})"
        if k == "Union":
            return "Union(" + ", ".join(a.ir() for a in self.args) + ")"
        if k == "Future":
            return f"Future({self.args[0].ir()})"
        if k == "Enum":
            return f"Enum<{self.name}>"
        if k in ("Class", "Tensor") and self.name:
            return self.name      # a class's qualified name; a traced tensor's shape type
        return k

    def py(self):
        """The spelling in ``.code`` and schemas' Python form (``List[int]``)."""
        k = self.kind
        if k in ("List", "Optional", "Tuple", "Dict", "Future", "Union"):
            return f"{k}[" + ", ".join(a.py() for a in self.args) + "]"
        if k in ("Class", "Enum"):
            return self.name
        return k

    def __repr__(self):
        return self.py()


TensorT = JitType("Tensor")
IntT = JitType("int")
FloatT = JitType("float")
BoolT = JitType("bool")
StrT = JitType("str")
NoneT = JitType("NoneType")
NumberT = JitType("Scalar")
DeviceT = JitType("Device")
AnyT = JitType("Any")
DTypeT = JitType("int")        # TorchScript spells a dtype (ScalarType) as int


def ListT(t):  # noqa: N802 (type constructor)
    return JitType("List", (t,))


def OptionalT(t):  # noqa: N802
    if t.kind in ("Optional", "NoneType"):
        return t
    return JitType("Optional", (t,))


def TupleT(ts, fields=None, name=None):  # noqa: N802
    return JitType("Tuple", ts, name=name, fields=fields)


def DictT(k, v):  # noqa: N802
    return JitType("Dict", (k, v))


# the order torch keeps a union's members in (its type kinds' order)
_UNION_ORDER = ("Any", "Enum", "Tensor", "Tuple", "List", "Dict", "Scalar", "float", "complex",
                "Future", "int", "NoneType", "str", "bool", "Optional", "Device", "Class")


def UnionT(ts):  # noqa: N802
    """``Union[A, B]``: nested unions flatten, one member is itself."""
    flat = []
    for t in ts:
        for m in (t.args if t.kind == "Union" else (t,)):
            if m not in flat:
                flat.append(m)
    flat.sort(key=lambda t: _UNION_ORDER.index(t.kind) if t.kind in _UNION_ORDER else
              len(_UNION_ORDER))
    return flat[0] if len(flat) == 1 else JitType("Union", flat)


def is_subtype(a, b):
    """Whether a value of type ``a`` may stand where ``b`` is expected."""
    if a == b or b.kind == "Any" or (a.kind == b.kind and not b.args and a.kind in
                                     ("List", "Tuple", "Dict")):
        return True           # a bare container type (``isinstance(x, list)``) matches any
    if a.kind == "Union":
        return all(is_subtype(m, b) for m in a.args)
    if b.kind == "Union":
        return any(is_subtype(a, m) for m in b.args) or (
            a.kind == "Optional" and NoneT in b.args and is_subtype(a.args[0], b))
    if b.kind == "Optional":
        return a.kind == "NoneType" or is_subtype(a, b.args[0]) or (
            a.kind == "Optional" and is_subtype(a.args[0], b.args[0]))
    if b.kind == "Scalar":
        return a.kind in ("int", "float", "bool")
    if a.kind == b.kind == "Tuple":
        return len(a.args) == len(b.args) and all(map(is_subtype, a.args, b.args))
    if a.kind == b.kind == "List":
        # an empty literal is List[Tensor] until annotated; the element types must agree
        return a.args[0] == b.args[0] or b.args[0].kind == "Any"
    return False


def unify(a, b):
    """The type a variable has after two branches gave it ``a`` and ``b``; None if none."""
    if a == b:
        return a
    if a.kind == "NoneType":
        return OptionalT(b)
    if b.kind == "NoneType":
        return OptionalT(a)
    if a.kind in ("Optional", "Union") and is_subtype(b, a):
        return a
    if b.kind in ("Optional", "Union") and is_subtype(a, b):
        return b
    if a.kind == b.kind == "Tuple" and len(a.args) == len(b.args):
        parts = [unify(x, y) for x, y in zip(a.args, b.args)]
        return None if None in parts else TupleT(parts)
    return None


# --------------------------------------------------------------------------- graph
class Value:
    """One SSA value: its debug name (``x.1``), type and producing node."""

    __slots__ = ("graph", "uid", "base", "type", "node", "uses", "exact")

    def __init__(self, graph, type_, base=None, exact=False):
        self.graph = graph
        self.uid = graph._next_uid()
        self.base = base
        self.type = type_
        self.node = None
        self.uses = 0
        self.exact = exact          # printed as ``%self`` rather than ``%self.1``

    def debug_name(self):
        if self.exact and self.base:
            return self.base
        return f"{self.base}.{self.uid}" if self.base else str(self.uid)

    def __repr__(self):
        return f"%{self.debug_name()} : {self.type.ir()}"


class Node:
    """One operation. ``kind`` is its aten/prim name; ``tpl`` the Python expression that runs it
    (``{0}``, ``{1}`` stand for the inputs, constants live in the graph's table); ``code`` the
    expression printed in ``.code``; ``blocks`` the nested blocks of If/Loop."""

    __slots__ = ("kind", "inputs", "outputs", "blocks", "attrs", "loc", "tpl", "code", "pure")

    def __init__(self, kind, inputs=(), tpl=None, code=None, loc=None, attrs=None, pure=True):
        self.kind = kind
        self.inputs = list(inputs)
        self.outputs = []
        self.blocks = []
        self.attrs = attrs or {}
        self.loc = loc
        self.tpl = tpl
        self.code = code
        self.pure = pure
        for v in self.inputs:
            v.uses += 1

    def output(self):
        return self.outputs[0]


class Block:
    """A list of nodes with block parameters and returned values (``-> (...)``)."""

    __slots__ = ("params", "nodes", "returns")

    def __init__(self):
        self.params = []
        self.nodes = []
        self.returns = []


class Graph:
    """A function body: ``inputs`` (the parameters), a top block, and the table of Python
    objects (callables, constants) the generated code refers to."""

    def __init__(self):
        self._uid = 0
        self.block = Block()
        self.consts = []

    @property
    def inputs(self):
        return self.block.params

    def _next_uid(self):
        self._uid += 1
        return self._uid

    def const_ref(self, obj):
        """``_K[i]``: a reference to ``obj`` from generated code."""
        for i, o in enumerate(self.consts):
            if o is obj:
                return f"_K[{i}]"
        self.consts.append(obj)
        return f"_K[{len(self.consts) - 1}]"

    # -- printing -------------------------------------------------------------
    def __str__(self):
        params = [repr(v) for v in self.inputs]
        lines = ["graph(" + ",\n      ".join(params) + "):"]
        _print_block_nodes(self.block, lines, 1)
        lines.append("  return (" + ", ".join("%" + v.debug_name()
                                               for v in self.block.returns) + ")")
        return "\n".join(lines) + "\n"

    def nodes(self):
        """The top-level nodes (torch's ``graph.nodes()``)."""
        return iter(self.block.nodes)

    def findAllNodes(self, kind):  # noqa: N802 (torch's name)
        """Every node of ``kind``, nested blocks included."""
        found = []

        def walk(block):
            for n in block.nodes:
                if n.kind == kind:
                    found.append(n)
                for b in n.blocks:
                    walk(b)
        walk(self.block)
        return found


def schema_literal(v):
    """A default or constant as torch's C++ printer writes it (``1.`` for 1.0, ``None``)."""
    if v is None:
        return "None"
    if isinstance(v, float) and math.isfinite(v):
        r = repr(v)
        return r[:-1] if r.endswith(".0") else r
    if isinstance(v, bool):
        return str(v)
    return repr(v)


def _attr_str(node):
    if "value" in node.attrs:
        v = node.attrs["value"]
        if v is None:
            return ""
        if isinstance(v, bool):
            return f"[value={int(v)}]"
        if isinstance(v, str):
            return '[value="' + v.replace('"', '\\"') + '"]'
        if isinstance(v, (int, float)):
            return f"[value={schema_literal(v)}]"
        if isinstance(v, Tensor):
            return "[value=<Tensor>]"
        return f"[value={v}]"
    if "name" in node.attrs:
        return f'[name="{node.attrs["name"]}"]'
    return ""


def _print_block_nodes(block, lines, depth):
    pad = "  " * depth
    for n in block.nodes:
        outs = ", ".join(repr(v) for v in n.outputs)
        args = ", ".join("%" + v.debug_name() for v in n.inputs)
        loc = f" # {n.loc.short()}" if n.loc is not None else ""
        lines.append(f"{pad}{outs} = {n.kind}{_attr_str(n)}({args}){loc}")
        for i, b in enumerate(n.blocks):
            bp = ", ".join(repr(v) for v in b.params)
            lines.append(f"{pad}  block{i}({bp}):")
            _print_block_nodes(b, lines, depth + 2)
            lines.append(f"{pad}    -> (" + ", ".join("%" + v.debug_name() for v in b.returns)
                         + ")")


def eliminate_dead_code(graph):
    """Drop pure nodes whose results nothing uses (torch runs this pass on every graph), and
    recount each value's uses (the ``.code`` printer inlines single-use expressions)."""
    def count(block, uses):
        for n in block.nodes:
            for v in n.inputs:
                uses[v] = uses.get(v, 0) + 1
            for b in n.blocks:
                count(b, uses)
        for v in block.returns:
            uses[v] = uses.get(v, 0) + 1

    def sweep(block, uses):
        changed = False
        kept = []
        for n in block.nodes:
            for b in n.blocks:
                changed |= sweep(b, uses)
            if n.pure and n.outputs and not n.blocks and all(uses.get(o, 0) == 0
                                                             for o in n.outputs):
                changed = True
                continue
            kept.append(n)
        block.nodes = kept
        return changed

    while True:
        uses = {}
        count(graph.block, uses)
        if not sweep(graph.block, uses):
            break

    def store(block):
        for n in block.nodes:
            for v in n.outputs:
                v.uses = uses.get(v, 0)
            for b in n.blocks:
                for p in b.params:
                    p.uses = uses.get(p, 0)
                store(b)
    for p in graph.inputs:
        p.uses = uses.get(p, 0)
    store(graph.block)


# --------------------------------------------------------------------------- code generation
class _Namer:
    """Names for values in generated source: variables keep their name (with a counter for
    later versions, as torch's ``.code`` does), temporaries are ``_0``, ``_1``."""

    def __init__(self, reserved=(), constants=None):
        self.names = {}
        self.used = set(reserved)
        self.tmp = 0
        self.n_consts = 0
        self.constants = constants    # an archive's table: CONSTANTS.c<i> index it

    def name(self, v):
        n = self.names.get(v)
        if n is not None:
            return n
        if v.base and v.base.isidentifier():
            cand, i = v.base, 0
            while cand in self.used:
                cand = f"{v.base}{i}"
                i += 1
        else:
            cand = f"_{self.tmp}"
            self.tmp += 1
            while cand in self.used:
                cand = f"_{self.tmp}"
                self.tmp += 1
        self.used.add(cand)
        self.names[v] = cand
        return cand

    def bind(self, v, name):
        self.names[v] = name
        self.used.add(name)


def _literal(graph, v):
    """Python source for a constant value (a table reference when it has no literal form)."""
    if isinstance(v, enum.Enum):
        return graph.const_ref(v)
    if v is None or isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float) and math.isfinite(v):
        return repr(v)
    return graph.const_ref(v)


def python_source(graph, fname, param_names):
    """The Python source of a function that runs ``graph`` (names are ``v<uid>``)."""
    out = [f"def {fname}({', '.join(param_names)}):"]
    env = {}
    for v, p in zip(graph.inputs, param_names):
        env[v] = p
    _emit_block(graph, graph.block, env, out, 1)
    if graph.block.returns:
        out.append("    return " + env_ref(env, graph.block.returns[0]))
    return "\n".join(out) + "\n"


def env_ref(env, v):
    return env.get(v) or f"v{v.uid}"


def _emit_block(graph, block, env, out, depth):
    pad = "    " * depth
    emitted = False
    for n in block.nodes:
        emitted = True
        args = [env_ref(env, v) for v in n.inputs]
        k = n.kind
        if k == "prim::Constant":
            val = n.attrs.get("value")
            out.append(f"{pad}v{n.outputs[0].uid} = {_literal(graph, val)}")
        elif k == "prim::If":
            out.append(f"{pad}if {args[0]}:")
            for bi, b in enumerate(n.blocks):
                if bi == 1:
                    out.append(f"{pad}else:")
                _emit_block(graph, b, env, out, depth + 1)
                for o, r in zip(n.outputs, b.returns):
                    out.append(f"{pad}    v{o.uid} = {env_ref(env, r)}")
                out.append(f"{pad}    pass")
        elif k == "prim::Loop":
            _emit_loop(graph, n, args, env, out, depth)
        elif k == "prim::With":
            out.append(f"{pad}with {args[0]}:")
            _emit_block(graph, n.blocks[0], env, out, depth + 1)
        elif k == "prim::ReturnStmt":
            out.append(f"{pad}return {args[0]}")
        elif k in ("prim::BreakStmt", "prim::ContinueStmt"):
            loop = n.attrs["loop"]
            body = loop.blocks[-1]
            for p, a in zip(body.params[loop.attrs["n_index"]:], args):
                out.append(f"{pad}{env_ref(env, p)} = {a}")
            out.append(f"{pad}{'break' if k == 'prim::BreakStmt' else 'continue'}")
        else:
            expr = n.tpl.format(*args)
            if not n.outputs and n.kind not in _UNPACKS:
                out.append(f"{pad}{expr}")
            elif len(n.outputs) == 1 and n.kind not in _UNPACKS:
                out.append(f"{pad}v{n.outputs[0].uid} = {expr}")
            elif not n.outputs:                 # unpacking an empty tuple
                out.append(f"{pad}() = {expr}")
            else:
                names = ", ".join(f"v{o.uid}" for o in n.outputs)
                out.append(f"{pad}{names}, = {expr}")
    if not emitted:
        out.append(f"{pad}pass")


_UNPACKS = ("prim::TupleUnpack", "prim::ListUnpack")


def _emit_loop(graph, n, args, env, out, depth):
    """``prim::Loop``: for a counted loop the inputs are (trip count, carried...), block params
    (index, carried...); for ``while`` (attrs while=True) there is no index and the first block
    computes the condition from the carried values."""
    pad = "    " * depth
    body = n.blocks[-1]
    n_index = n.attrs["n_index"]
    carried_params = body.params[n_index:]
    init = args[n_index:] if n_index else args
    for p, a in zip(carried_params, init):
        out.append(f"{pad}v{p.uid} = {a}")
    if n.attrs.get("while"):
        cond_b = n.blocks[0]
        for p_c, p in zip(cond_b.params, carried_params):
            env[p_c] = f"v{p.uid}"
        out.append(f"{pad}while True:")
        _emit_block(graph, cond_b, env, out, depth + 1)
        out.append(f"{pad}    if not {env_ref(env, cond_b.returns[0])}:")
        out.append(f"{pad}        break")
    else:
        out.append(f"{pad}for v{body.params[0].uid} in range({args[0]}):")
    _emit_block(graph, body, env, out, depth + 1)
    for p, r in zip(carried_params, body.returns):
        out.append(f"{pad}    v{p.uid} = {env_ref(env, r)}")
    for o, p in zip(n.outputs, carried_params):
        out.append(f"{pad}v{o.uid} = v{p.uid}")


# --------------------------------------------------------------------------- .code
def code_source(graph, header, constants=None, form=None):
    """TorchScript's Python-like ``.code``: one statement per effectful node, constants and
    single-use pure expressions inlined (as torch's printer does). With ``constants`` (a
    list) the source is for an archive: tensor constants are appended to it, and dtypes and
    devices are spelled as torch's parser reads them."""
    namer = _Namer({"torch", "ops", "annotate", "unchecked_cast"}, constants)
    namer.graph = graph
    namer.form = form         # archives: (graph, node, args) -> torch's spelling, or None
    exprs = {}
    params = graph.inputs
    for v in params:
        namer.bind(v, v.base or namer.name(v))
    out = [header]
    _code_block(graph.block, namer, exprs, out, 1)
    if graph.block.returns:
        out.append("  return " + _code_ref(graph.block.returns[0], namer, exprs))
    return "\n".join(out) + "\n"


def _code_ref(v, namer, exprs):
    e = exprs.get(v)
    return e if e is not None else namer.name(v)


def _code_literal(val, archive=False):
    if isinstance(val, enum.Enum):
        return None               # an Enum member: CONSTANTS.c<i>
    if archive and _is_simple(val):
        if type(val).__name__ == "dtype":      # TorchScript holds a dtype as its code
            from ..library import _SCALAR_TYPE_CODES
            return str(_SCALAR_TYPE_CODES[str(val).replace("torch.", "")])
        return f'torch.device("{val}")'
    if archive and isinstance(val, list):
        return "[" + ", ".join(_code_literal(x, True) for x in val) + "]"
    if archive and isinstance(val, tuple):
        return "(" + "".join(_code_literal(x, True) + ", " for x in val)[:-2] + \
            ("," if len(val) == 1 else "") + ")"
    if isinstance(val, float):
        if math.isinf(val):
            return "inf" if val > 0 else "-inf"
        if math.isnan(val):
            return "nan"
    if val is not None and not isinstance(val, (bool, int, float, str, tuple)) and \
            not _is_simple(val):
        return None               # a tensor or object constant: CONSTANTS.c<i>
    return repr(val)


def _is_simple(val):
    return type(val).__name__ in ("dtype", "device")


def _code_block(block, namer, exprs, out, depth):
    pad = "  " * depth
    start = len(out)
    for n in block.nodes:
        args = [_code_ref(v, namer, exprs) for v in n.inputs]
        k = n.kind
        if k == "prim::Constant":
            archive = namer.constants is not None
            lit = _code_literal(n.attrs.get("value"), archive)
            if lit is None and archive:
                lit = f"CONSTANTS.c{len(namer.constants)}"
                namer.constants.append(n.attrs.get("value"))
            elif lit is None:
                lit = f"CONSTANTS.c{namer.n_consts}"
                namer.n_consts += 1
            exprs[n.outputs[0]] = lit
            continue
        if k == "prim::If":
            outs = n.outputs
            out.append(f"{pad}if {args[0]}:")
            for bi, b in enumerate(n.blocks):
                if bi == 1:
                    out.append(f"{pad}else:")
                mark = len(out)
                _code_block(b, namer, exprs, out, depth + 1)
                for o, r in zip(outs, b.returns):
                    out.append(f"{pad}  {namer.name(o)} = {_code_ref(r, namer, exprs)}")
                if len(out) == mark:
                    out.append(f"{pad}  pass")
            continue
        if k == "prim::Loop":
            body = n.blocks[-1]
            ni = n.attrs["n_index"]
            carried = body.params[ni:]
            init = args[ni:]
            for p, a in zip(carried, init):
                out.append(f"{pad}{namer.name(p)} = {a}")
            if n.attrs.get("while"):
                cond_b = n.blocks[0]
                for pc, p in zip(cond_b.params, carried):
                    namer.bind(pc, namer.name(p))
                c_lines = []
                _code_block(cond_b, namer, exprs, c_lines, depth + 1)
                cond = _code_ref(cond_b.returns[0], namer, exprs)
                if c_lines:
                    out.append(f"{pad}while True:")
                    out.extend(c_lines)
                    out.append(f"{pad}  if not {cond}:")
                    out.append(f"{pad}    break")
                else:
                    out.append(f"{pad}while {cond}:")
            else:
                out.append(f"{pad}for {namer.name(body.params[0])} in range({args[0]}):")
            mark = len(out)
            _code_block(body, namer, exprs, out, depth + 1)
            for p, r in zip(carried, body.returns):
                rr = _code_ref(r, namer, exprs)
                if rr != namer.name(p):
                    out.append(f"{pad}  {namer.name(p)} = {rr}")
            if len(out) == mark:
                out.append(f"{pad}  pass")
            for o, p in zip(n.outputs, carried):
                namer.bind(o, namer.name(p))
            continue
        if k == "prim::ReturnStmt":
            out.append(f"{pad}return {args[0]}")
            continue
        if k == "prim::With":
            out.append(f"{pad}with {args[0]}:")
            mark = len(out)
            _code_block(n.blocks[0], namer, exprs, out, depth + 1)
            if len(out) == mark:
                out.append(f"{pad}  pass")
            continue
        if k in ("prim::BreakStmt", "prim::ContinueStmt"):
            loop = n.attrs["loop"]
            for p, a in zip(loop.blocks[-1].params[loop.attrs["n_index"]:], args):
                if a != namer.name(p):
                    out.append(f"{pad}{namer.name(p)} = {a}")
            out.append(f"{pad}{'break' if k == 'prim::BreakStmt' else 'continue'}")
            continue
        expr = (n.code or n.kind).format(*args)
        if namer.form is not None:
            expr = namer.form(namer.graph, n, args) or expr
        if not n.outputs:
            out.append(f"{pad}{expr}")
        elif len(n.outputs) == 1 and n.kind in _UNPACKS:
            out.append(f"{pad}{namer.name(n.outputs[0])}, = {expr}")
        elif len(n.outputs) == 1:
            o = n.outputs[0]
            if n.pure and o.uses == 1 and (not o.base or n.kind == "prim::GetAttr"):
                exprs[o] = expr
            else:
                out.append(f"{pad}{namer.name(o)} = {expr}")
        else:
            names = ", ".join(namer.name(o) for o in n.outputs)
            out.append(f"{pad}{names} = {expr}")
    return len(out) > start
