"""torch.fx.graph: ``Graph``, the ordered list of Nodes that fx programs are made of, and the
code generator that turns it into the Python source of a ``forward``."""

from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import math
import re
import warnings
from dataclasses import dataclass

from ._compatibility import compatibility
from .node import Node, _get_qualified_name, _type_repr, map_arg

__all__ = ["Graph", "PythonCode", "CodeGen"]

# Names generated code may not shadow, unless the name stands for that very object
_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")

# Operator functions that generated code writes as Python operators
reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods,
}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


def _snake_case(s: str) -> str:
    """``pascalCase`` -> ``pascal_case``: node names from targets."""
    return _snake_case_sub.sub(r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


def _custom_builtins():
    """Names every generated forward can use, with the objects they stand for."""
    import glasstorch

    from ..utils import _pytree
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": glasstorch,
            "device": glasstorch.device, "pytree": _pytree}


def _is_from_torch(obj) -> bool:
    module = getattr(obj, "__module__", None)
    if module is not None:
        # torchvision's functions are written through globals, as torch writes them
        return (module == "glasstorch" or module.startswith("glasstorch.")) and \
            not module.startswith("glasstorch.vision")
    name = getattr(obj, "__name__", None)
    if name is not None and name != "torch":
        import glasstorch
        for guess in (glasstorch, glasstorch.nn.functional):
            if getattr(guess, name, None) is obj:
                return True
    return False


class _Namespace:
    """Unique names for objects: each object one name, no name twice, no builtin shadowed
    unless the object is that builtin."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate: str, obj) -> str:
        """A fresh name based on ``candidate`` (``add`` -> ``add_1`` when taken)."""
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj) -> None:
        """Record that ``obj`` is called ``name``."""
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@compatibility(is_backward_compatible=True)
@dataclass
class PythonCode:
    """The source of a generated ``forward`` and the globals it runs with."""

    src: str
    globals: dict
    _lineno_map: dict | None = None


def _format_target(base: str, target: str) -> str:
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


class _InsertPoint:
    """Context manager: new nodes go to a given place while it is active."""

    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, tb):
        self.graph._insert = self.orig_insert


class _NodeList:
    """The nodes of a graph in order (forwards or reversed); safe against erasing the node
    being visited."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self):
        return _NodeList(self.graph, "_prev" if self.direction == "_next" else "_next")

    def __repr__(self):
        return repr(list(self))


@compatibility(is_backward_compatible=True)
class CodeGen:
    """Writes a Graph as the Python source of a function (``def forward(self, ...)``)."""

    def gen_fn_def(self, free_vars: list, maybe_return_annotation: str) -> str:
        """The ``def forward(...)`` line."""
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args) -> str:
        """The return statement."""
        return f"return {repr(output_args)}"

    def _gen_python_code(self, nodes, root_module: str, namespace: _Namespace,
                         verbose: bool = False) -> PythonCode:
        free_vars, body = [], []
        globals_ = {}
        wrapped_fns = {}
        maybe_return_annotation = [""]

        def add_global(name_hint, obj):
            if _is_from_torch(obj) and obj is not _custom_builtins()["device"]:
                # written as torch.x.y: ``torch`` is in every generated module's globals
                return _qualified_torch_name(obj)
            name = namespace.create_name(name_hint, obj)
            if name in globals_ and globals_[name] is not obj:
                raise AssertionError(f"Global name {name} already assigned to different "
                                     f"object")
            globals_[name] = obj
            return name

        for name, obj in _custom_builtins().items():
            add_global(name, obj)

        def type_repr(o):
            if o == ():
                return "()"
            if isinstance(o, type):
                if _is_from_torch(o):
                    return _type_repr(o)
                return add_global(_type_repr(o), o)
            return _type_repr(o)

        def get_repr(arg):
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                name = add_global(_get_qualified_name(type(arg)), type(arg))
                return f"{name}{repr(tuple(arg))}"
            if _is_tensor(arg):
                dtype = str(arg.dtype).split(".")[-1]
                return f"torch.Tensor(size={list(arg.size())}, dtype={dtype})"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({get_repr(arg[0])},)"
                return "(" + ", ".join(get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                return f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, " \
                       f"{get_repr(arg.step)})"
            if isinstance(arg, dict):
                return "{" + ", ".join(f"{get_repr(k)}: {get_repr(v)}"
                                       for k, v in arg.items()) + "}"
            if isinstance(arg, (type, type(len))) or inspect.isfunction(arg):
                return add_global(getattr(arg, "__name__", "obj"), arg)
            text = repr(arg)
            return text.replace("glasstorch.", "torch.") if _is_from_torch(type(arg)) else text

        def format_args(args, kwargs):
            parts = [get_repr(a) for a in args]
            parts += [f"{k} = {get_repr(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        # each value is freed right after its last use, as torch's generated code does
        last_use, user_to_last_uses = {}, {}
        for node in reversed(nodes):
            for inp in node._input_nodes:
                if inp not in last_use:
                    last_use[inp] = node
                    user_to_last_uses.setdefault(node, []).append(inp)

        def delete_unused_values(user):
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(user_to_last_uses.get(user, []))
            if len(user.users) == 0:
                to_delete.append(user)
            if to_delete:
                body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) +
                            "\n")
            else:
                body.append("\n")

        def emit_node(node):
            annotation = "" if node.type is None else f" : {type_repr(node.type)}"
            if verbose:
                # shapes known from ShapeProp (or a ``val`` example) annotate the code
                meta_val = node.meta.get("val", node.meta.get("tensor_meta",
                                                              node.meta.get("example_value")))
                if _is_tensor(meta_val) or _is_tensor_metadata(meta_val):
                    shape = ", ".join(str(s) for s in meta_val.shape)
                    annotation = f': "{_dtype_abbr(meta_val.dtype)}[{shape}]"'
            if node.op == "placeholder":
                default = "" if not node.args else f" = {get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{annotation}{default}")
                raw = node.target.replace("*", "")
                if raw != repr(node):
                    body.append(f"{repr(node)} = {raw}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(repr(node.args[0]), node.target)}"
                            f"({format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                target = node.target
                tname = getattr(target, "__name__", "")
                if getattr(target, "__module__", "") == "_operator" and tname in magic_methods:
                    expr = magic_methods[tname].format(*(get_repr(a) for a in node.args))
                    body.append(f"{repr(node)}{annotation} = {expr}")
                    return
                if getattr(target, "__module__", "") == "_operator" and \
                        tname in inplace_methods:
                    stmt = inplace_methods[tname].format(*(get_repr(a) for a in node.args))
                    body.append(f"{stmt};  {repr(node)}{annotation} = {get_repr(node.args[0])}")
                    return
                global_name = add_global(_get_qualified_name(target), target)
                if (global_name == "getattr" and isinstance(node.args, tuple) and
                        len(node.args) == 2 and isinstance(node.args[1], str) and
                        node.args[1].isidentifier()):
                    body.append(f"{repr(node)}{annotation} = "
                                f"{_format_target(repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{annotation} = {global_name}("
                            f"{format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(root_module, node.target)}"
                            f"({format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{annotation} = "
                            f"{_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0]))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        prev_summary = [None]

        def append_stacktrace_summary(node):
            if node.op in ("placeholder", "output"):
                return
            trace = node.stack_trace
            where = _summarize_stack(trace) if trace else \
                "No stacktrace found for following nodes"
            summary = f"\n# {where}\n"
            if summary != prev_summary[0]:
                prev_summary[0] = summary
                body.append(summary)

        for node in nodes:
            if verbose:
                append_stacktrace_summary(node)
            emit_node(node)
            delete_unused_values(node)
        if not body:
            body.append("pass\n")
        if wrapped_fns:
            from ._symbolic_trace import wrap
            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        else:
            wrap_stmts = ""
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        src = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
        return PythonCode(src, globals_, {})


def _summarize_stack(trace: str) -> str:
    # the innermost frame of a recorded traceback: "File: path:line in fn, code: text"
    lines = [ln for ln in trace.strip().split("\n") if ln.strip()]
    for i in range(len(lines) - 1, -1, -1):
        m = re.match(r'\s*File "(.+)", line (\d+), in (.+)', lines[i])
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: {code}"
    return lines[-1].strip() if lines else ""


_DTYPE_ABBRS = {"uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                "float16": "f16", "float32": "f32", "float64": "f64", "complex32": "c32",
                "complex64": "c64", "complex128": "c128", "bool": "b8", "bfloat16": "bf16",
                "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def _dtype_abbr(dtype) -> str:
    name = str(dtype).split(".")[-1]
    return _DTYPE_ABBRS.get(name, name)


def _is_tensor_metadata(x) -> bool:
    return type(x).__name__ == "TensorMetadata" and hasattr(x, "_fields")


def _is_tensor(x) -> bool:
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _qualified_torch_name(obj) -> str:
    name = _get_qualified_name(obj) if hasattr(obj, "__name__") else repr(obj)
    return name


def _tabulate(rows, headers) -> str:
    """A plain-text table, columns left-aligned and two spaces apart, a dashed rule under
    the headers (the layout of tabulate's default format)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(items):
        return "  ".join(s.ljust(w) for s, w in zip(items, widths)).rstrip()
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(out)


@compatibility(is_backward_compatible=True)
class Graph:
    """The IR of torch.fx: a doubly linked list of Nodes, in program order, ending in one
    ``output`` node. Build it with ``placeholder``/``call_function``/... or by tracing."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields = {}

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to (None when free-standing)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """The nodes in order; ``reversed(graph.nodes)`` walks backwards."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        """The nodes with this ``op`` (and ``target`` when given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building
    def create_node(self, op: str, target, args=None, kwargs=None, name=None,
                    type_expr=None) -> Node:
        """Insert a new node at the insertion point; ``name`` (or one derived from the
        target) is made unique."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr=None, default_value=inspect.Signature.empty):
        """An input of the graph called ``name`` (optionally with a default value)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        """A read of attribute ``qualified_name`` (``'layer.weight'``) of the owning module;
        warns when the module has no such attribute."""
        mod = self.owning_module
        if mod is not None and not _has_qualified_attr(mod, qualified_name):
            warnings.warn("Attempted to insert a get_attr Node with no underlying reference "
                          "in the owning GraphModule! Call GraphModule.add_submodule to add "
                          "the necessary submodule, GraphModule.add_parameter to add the "
                          "necessary Parameter, or nn.Module.register_buffer to add the "
                          "necessary buffer", stacklevel=2)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        """A call of submodule ``module_name`` of the owning module."""
        mod = self.owning_module
        if mod is not None and _get_qualified_attr(mod, module_name) is None:
            warnings.warn("Attempted to insert a call_module Node with no underlying reference "
                          "in the owning GraphModule! Call GraphModule.add_submodule to add "
                          "the necessary submodule", stacklevel=2)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        """A call of method ``method_name`` on ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None,
                      name=None) -> Node:
        """A call of the free function ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        """The graph's output node, returning ``result``."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) inserted here, its Node arguments mapped
        through ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = copy.copy(node.meta)
        return new

    def graph_copy(self, g: Graph, val_map: dict, return_output_node=False):
        """Copy every node of ``g`` but its output into this graph; ``val_map`` maps ``g``'s
        nodes to ours (prefilled entries are reused). Returns the value ``g``'s output
        returns, in our nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            rv, old_out = output_vals
            new_out = g.output(rv, type_expr=getattr(old_out, "type", None))
            new_out.meta = copy.copy(old_out.meta)
        return g

    def inserting_before(self, n: Node | None = None):
        """Context manager: nodes created inside go just before ``n`` (the start of the
        graph when None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None):
        """Context manager: nodes created inside go just after ``n`` (the end of the graph
        when None), each after the previous one."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nothing uses any more (RuntimeError otherwise)."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: "
                               f"{to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node=None) -> bool:
        """Erase the nodes whose values nothing uses and that have no side effects (last to
        first); returns whether the graph changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def _target_to_str(self, target) -> str:
        op = target.__name__ if callable(target) else target
        if not isinstance(op, str):
            raise AssertionError(f"Expected target to be str, got {type(op)}")
        if _is_magic(op):
            op = op[2:-2]
        return _snake_case(op)

    # ---- checking
    def lint(self) -> None:
        """Check the graph's invariants: each node's inputs come earlier and belong to this
        graph, users and inputs agree, names are unique, targets of get_attr/call_module
        exist in the owning module."""
        seen_names, seen = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for inp in node._input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' does not belong to "
                                       f"this Graph!")
                if inp not in seen:
                    raise RuntimeError(f"Argument '{inp}' of Node '{node}' was used before it "
                                       f"has been defined! Please check that Nodes in the "
                                       f"graph are topologically ordered\n{self}")
                if node not in inp.users:
                    raise RuntimeError(f"Node {node} uses {inp} but is not in its users")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"Node {node} lists {user} as a user, but {user} does "
                                       f"not read it")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen.add(node)
            mod = self.owning_module
            if mod is not None and node.op in ("get_attr", "call_module"):
                parts = node.target.split(".")
                obj = mod
                for i, part in enumerate(parts):
                    if not hasattr(obj, part):
                        where = ".".join(parts[:i])
                        msg = "submodule" if node.op == "call_module" else "attribute"
                        warnings.warn(f"Node {node} target {node.target} references "
                                      f"nonexistent {msg} {part} of {where or 'the root'}",
                                      stacklevel=2)
                        break
                    obj = getattr(obj, part)
                else:
                    from ..nn import Module
                    if node.op == "call_module" and not isinstance(obj, Module):
                        raise RuntimeError(f"Node {node} target {node.target} {part} is not "
                                           f"a Module")

    # ---- printing and code
    def __str__(self) -> str:
        placeholder_names = []
        maybe_return_typename = [""]
        # (torch never fills the return type in here)
        lines = [n.format_node(placeholder_names) for n in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for line in lines:
            if line:
                s += "\n    " + line
        return s

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs."""
        rows = [[n.op, n.name, n.target if isinstance(n.target, str)
                 else Node._pretty_print_target(n.target), n.args, n.kwargs]
                for n in self.nodes]
        print(_tabulate(rows, ["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """The Python source of this graph as a function of ``root_module`` (``'self'``) and
        the globals it needs; ``verbose`` adds where each run of nodes came from."""
        namespace = _Namespace()

        def node_repr(n):
            return namespace.create_name(n.name, n)
        nodes = list(self.nodes)
        saved = [(n, n._repr_fn) for n in nodes]
        for n in nodes:
            n._repr_fn = node_repr
        try:
            return self._codegen._gen_python_code(nodes, root_module, namespace, verbose=verbose)
        finally:
            for n, fn in saved:
                n._repr_fn = fn

    def set_codegen(self, codegen: CodeGen) -> None:
        """Use ``codegen`` to write this graph's code."""
        self._codegen = codegen


def _get_qualified_attr(obj, target: str):
    for part in target.split("."):
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def _has_qualified_attr(obj, target: str) -> bool:
    for part in target.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True
