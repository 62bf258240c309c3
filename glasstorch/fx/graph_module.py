"""torch.fx.graph_module: ``GraphModule``, a Module whose ``forward`` is Python code generated
from a Graph (``gm.code``), recompiled whenever the graph is replaced or ``recompile()``d."""

from __future__ import annotations

import copy
import itertools
import linecache
import sys
from pathlib import Path

from .._tensor import Tensor
from ..nn import Module, Parameter
from ._compatibility import compatibility
from .graph import Graph, _custom_builtins

__all__ = ["GraphModule", "reduce_graph_module"]

_next_id = itertools.count()


def _exec_with_source(src: str, globals_: dict) -> None:
    # a unique file name registered in linecache, so tracebacks and inspect show the code
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec", dont_inherit=True), globals_)


def _forward_from_src(src: str, globals_: dict):
    scope = dict(globals_)
    _exec_with_source(src, scope)
    return scope.pop("forward")


def _format_import_statement(name: str, obj) -> str:
    builtins_ = {"inf": "from math import inf", "nan": "from math import nan",
                 "NoneType": "NoneType = type(None)", "torch": "import glasstorch as torch",
                 "device": "from glasstorch import device",
                 "pytree": "import glasstorch.utils._pytree as pytree"}
    if name in builtins_ and _custom_builtins().get(name) is obj:
        return builtins_[name]
    if getattr(sys.modules.get("builtins"), name, None) is obj:
        return ""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module is None or qualname is None or "<" in qualname:
        raise RuntimeError(f"cannot write an import for global {name!r} ({obj!r}) of the "
                           f"generated code")
    if module == "_operator":
        module = "operator"
    head, _, rest = qualname.partition(".")
    if rest:
        return f"from {module} import {head} as _{name}_owner\n{name} = _{name}_owner.{rest}"
    return f"from {module} import {qualname} as {name}"


def _format_import_block(globals_: dict) -> str:
    lines = {_format_import_statement(n, o) for n, o in globals_.items()}
    return "\n".join(sorted(line for line in lines if line))


def reduce_graph_module(body: dict, import_block: str):
    """Unpickle a GraphModule: rebuild its graph by re-tracing its generated code."""
    fn_src = body.get("_code")
    forward = _forward_from_src(import_block + fn_src, {})
    return _deserialize_graph_module(forward, body)


def _deserialize_graph_module(forward, body: dict):
    from ._symbolic_trace import Tracer

    class _CodeOnlyModule(Module):
        def __init__(self, body):
            super().__init__()
            self.__dict__ = body
    _CodeOnlyModule.forward = forward
    tracer_cls = body.get("_tracer_cls") or Tracer
    cls_name = body.get("_graphmodule_cls_name", "GraphModule")

    class KeepModules(tracer_cls):
        # every submodule call stays one node, as it was in the pickled graph
        def is_leaf_module(self, m, qualname):
            return True
    com = _CodeOnlyModule(body)
    graph = KeepModules().trace(com, **(body.get("_tracer_extras") or {}))
    graph._tracer_cls = tracer_cls
    gm = GraphModule(com, graph, class_name=cls_name)
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


def _copy_attr(from_module, to_module, target: str) -> None:
    # copy ``target`` ('a.b.weight') over, making the intermediate plain Modules it needs
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((" " * n) + ln if ln.strip() else "" for ln in lines)


@compatibility(is_backward_compatible=True)
class GraphModule(Module):
    """A Module made from a Graph: it holds the submodules, parameters and buffers the graph
    reads (copied from ``root``, a Module or a dict of them) and runs the graph's generated
    code as its ``forward``."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so its generated forward and its name are its own
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        # the name only: the qualname stays ...GraphModuleImpl, which accelerate's hooks test
        # for (str(type(module))) before patching forward on the class
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node.name} referenced target "
                                           f"{node.target} but that target was not provided "
                                           f"in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if graph._tracer_cls is not None and "<locals>" not in graph._tracer_cls.__qualname__:
            self._tracer_cls = graph._tracer_cls
        self._tracer_extras = {}
        if graph._tracer_extras and graph._tracer_extras.get("leaf_modules"):
            self._tracer_extras = graph._tracer_extras
        self.meta = {}

    @property
    def graph(self) -> Graph:
        """The Graph this module runs; assigning one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from the graph."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate ``code`` and ``forward`` from the graph (call after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False):
        """The generated code as a class definition (nested GraphModules included), printed
        unless ``print_output`` is False; returns it."""
        return self._print_readable(self, type(self).__name__, print_output)

    @staticmethod
    def _print_readable(module, module_name, print_output=True):
        src = module.graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
        code = _addindent(f"class {module_name}(torch.nn.Module):\n" + src, 4)
        subs = [""]
        for name, sub in module.named_children():
            if isinstance(sub, GraphModule):
                subs.append(GraphModule._print_readable(sub, name, False))
        output = code + _addindent("\n".join(subs), 4)
        if print_output:
            print(output)
        return output

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    # ---- editing the module around the graph
    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at ``target`` ('a.b.c'), making plain Modules for missing parents;
        False when a parent on the path is not a Module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none (or the path is not
        made of Modules)."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule the graph neither calls nor reads (parents of used ones
        stay)."""
        used = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.extend(".".join(fullpath[:i]) for i in range(1, len(fullpath) + 1))
                if node.op == "call_module":
                    try:
                        sub = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    used.extend(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        used_set = set(used)
        to_delete = [name for name, _ in self.named_modules() if name and name not in used_set]
        for name in to_delete:
            self.delete_submodule(name)

    # ---- copying and pickling
    def __reduce__(self):
        body = self.__dict__.copy()
        python_code = self.recompile()
        import_block = _format_import_block(python_code.globals)
        del body["_graph"]
        return (reduce_graph_module, (body, import_block + "\n"))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        state = copy.deepcopy(self.__dict__, memo)
        fake = Module()
        fake.__dict__ = state
        GraphModule.__init__(res, fake, state["_graph"])
        for attr in ("_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_forward_hooks", "_forward_pre_hooks"):
            if attr in state:
                setattr(res, attr, state[attr])
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def to_folder(self, folder, module_name: str = "FxModule"):
        """Write this module as a Python package in ``folder``: ``module.py`` with a class
        ``module_name`` (the generated code, its submodules written inline or saved), its
        parameters and buffers in ``state_dict.pt``, and an ``__init__.py``."""
        import glasstorch
        folder = Path(folder)
        folder.mkdir(exist_ok=True)
        glasstorch.save(self.state_dict(), folder / "state_dict.pt")
        tab = " " * 4
        custom_builtins = "\n".join(
            _format_import_statement(n, o) for n, o in _custom_builtins().items())
        model_str = f"import glasstorch as torch\n{custom_builtins}\n\n" \
                    f"from glasstorch.nn import *\n\n\nclass {module_name}(torch.nn.Module):\n" \
                    f"    def __init__(self):\n        super().__init__()\n"

        def module_repr(module):
            # a module we can rebuild from its repr (torch.nn's own), else None
            if type(module).__module__.startswith("glasstorch.nn") and \
                    not list(module.children()):
                return repr(module)
            return None
        blobified = []
        for name, module in self.named_children():
            r = module_repr(module)
            if r is None:
                (folder / f"{name}.pt").parent.mkdir(exist_ok=True)
                glasstorch.save(module, folder / f"{name}.pt")
                blobified.append(name)
                r = f"torch.load(r'{folder / (name + '.pt')}', weights_only=False)"
            model_str += f"{tab * 2}self.{name} = {r}\n"
        for name, buf in self._buffers.items():
            if buf is None:
                continue
            model_str += f"{tab * 2}self.register_buffer('{name}', " \
                         f"torch.empty({list(buf.shape)}, dtype={buf.dtype}))\n"
        for name, p in self._parameters.items():
            if p is None:
                continue
            model_str += f"{tab * 2}self.{name} = torch.nn.Parameter(" \
                         f"torch.empty({list(p.shape)}, dtype={p.dtype}))\n"
        model_str += f"{tab * 2}self.load_state_dict(torch.load(r'{folder}/state_dict.pt'))\n"
        globals_block = _format_import_block(self.graph.python_code("self").globals)
        model_str = globals_block + "\n" + model_str
        model_str += f"{_addindent(self.code, 4)}\n"
        (folder / "module.py").write_text(model_str)
        (folder / "__init__.py").write_text("from .module import *")
        if blobified:
            import warnings
            warnings.warn(f"Was not able to save the following children modules as "
                          f"reprs -saved as pickled files instead: {blobified}",
                          stacklevel=2)

