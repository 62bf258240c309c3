"""torchvision.models.feature_extraction: turn a model into one that returns intermediate
values, chosen by node name, using torch.fx (``create_feature_extractor``), and list the
names that can be chosen (``get_graph_node_names``).

A node's name is the qualified name of the module it was recorded in, then the node's own
name for operations that are not module calls (``layer1.0.add``, ``layer1.0.relu_1``);
module calls are named by the module (``layer1.0.conv1``)."""

from __future__ import annotations

import copy
import re
import warnings
from collections import OrderedDict
from itertools import chain

from ... import fx, nn
from ...fx.graph_module import _copy_attr

__all__ = ["create_feature_extractor", "get_graph_node_names"]


class LeafModuleAwareTracer(fx.Tracer):
    """An fx Tracer that also keeps the module types listed in ``leaf_modules`` as leaves."""

    def __init__(self, *args, **kwargs):
        self.leaf_modules = kwargs.pop("leaf_modules", {})
        super().__init__(*args, **kwargs)

    def is_leaf_module(self, m, module_qualname: str) -> bool:
        """Leaf if its type is one of ``leaf_modules``, else as fx.Tracer decides."""
        if self.leaf_modules and isinstance(m, tuple(self.leaf_modules)):
            return True
        return super().is_leaf_module(m, module_qualname)


class NodePathTracer(LeafModuleAwareTracer):
    """Records, for each node it creates, the name users select it by
    (``node_to_qualname``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.current_module_qualname = ""
        self.node_to_qualname = OrderedDict()

    def call_module(self, m, forward, args, kwargs):
        """As fx.Tracer's, remembering which module the nodes are recorded in."""
        previous = self.current_module_qualname
        try:
            qualname = self.path_of_module(m)
            self.current_module_qualname = qualname
            if not self.is_leaf_module(m, qualname):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", qualname, args, kwargs)
        finally:
            self.current_module_qualname = previous

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """As fx.Tracer's, naming the new node for feature extraction."""
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                     proxy_factory_fn)
        self.node_to_qualname[proxy.node] = self._get_node_qualname(
            self.current_module_qualname, proxy.node)
        return proxy

    def _get_node_qualname(self, module_qualname: str, node) -> str:
        qualname = module_qualname
        if node.op != "call_module":
            qualname = f"{qualname}.{node}" if qualname else str(node)
        # fx's own _N suffix is dropped and renumbered within the module's names
        if re.match(r".+_[0-9]+$", qualname) is not None:
            qualname = qualname.rsplit("_", 1)[0]
        for existing in reversed(self.node_to_qualname.values()):
            if re.match(rf"{re.escape(qualname)}(_[0-9]+)?$", existing) is not None:
                postfix = existing[len(qualname):]
                qualname += f"_{int(postfix[1:]) + 1 if postfix else 1}"
                break
        return qualname


def _is_subseq(x, y) -> bool:
    # whether y is a subsequence of x
    it = iter(x)
    return all(any(a == b for b in it) for a in y)


def _warn_graph_differences(train_tracer, eval_tracer):
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    if train_nodes == eval_nodes:
        return
    hint = ("When choosing nodes for feature extraction, you may need to specify output "
            "nodes for train and eval mode separately.")
    if _is_subseq(train_nodes, eval_nodes):
        msg = ("NOTE: The nodes obtained by tracing the model in eval mode are a subsequence "
               "of those obtained in train mode. ")
    elif _is_subseq(eval_nodes, train_nodes):
        msg = ("NOTE: The nodes obtained by tracing the model in train mode are a subsequence "
               "of those obtained in eval mode. ")
    else:
        msg = ("The nodes obtained by tracing the model in train mode are different to those "
               "obtained in eval mode. ")
    warnings.warn(msg + hint, stacklevel=3)


def get_graph_node_names(model, tracer_kwargs=None, suppress_diff_warning: bool = False,
                         concrete_args=None):
    """The names of the nodes of ``model``'s graph in train mode and in eval mode (two
    lists), as ``create_feature_extractor`` accepts them."""
    tracer_kwargs = tracer_kwargs or {}
    was_training = model.training
    train_tracer = NodePathTracer(**tracer_kwargs)
    train_tracer.trace(model.train(), concrete_args=concrete_args)
    eval_tracer = NodePathTracer(**tracer_kwargs)
    eval_tracer.trace(model.eval(), concrete_args=concrete_args)
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    if not suppress_diff_warning:
        _warn_graph_differences(train_tracer, eval_tracer)
    model.train(was_training)
    return train_nodes, eval_nodes


class DualGraphModule(fx.GraphModule):
    """A GraphModule with one graph for train mode and one for eval mode; ``train()`` and
    ``eval()`` switch between them."""

    def __init__(self, root, train_graph, eval_graph, class_name: str = "GraphModule"):
        nn.Module.__init__(self)
        self.__class__.__name__ = class_name
        self.train_graph = train_graph
        self.eval_graph = eval_graph
        for node in chain(train_graph.nodes, eval_graph.nodes):
            if node.op in ("get_attr", "call_module"):
                if not isinstance(node.target, str):
                    raise TypeError(f"node.target should be of type str instead of "
                                    f"{type(node.target)}")
                _copy_attr(root, self, node.target)
        self.train()
        self.graph = train_graph
        self._tracer_cls = None
        self._tracer_extras = {}
        self.meta = {}

    def train(self, mode: bool = True):
        """Switch to the train (or eval) graph, then set the mode as Module.train does."""
        if mode and not self.training:
            self.graph = self.train_graph
        elif not mode and self.training:
            self.graph = self.eval_graph
        return super().train(mode=mode)


def create_feature_extractor(model, return_nodes=None, train_return_nodes=None,
                             eval_return_nodes=None, tracer_kwargs=None,
                             suppress_diff_warning: bool = False, concrete_args=None):
    """A GraphModule computing ``model`` up to the chosen nodes and returning them as a dict.
    ``return_nodes`` is a list of node names or a {node name: output key} dict (a module
    name selects its last node); ``train_return_nodes``/``eval_return_nodes`` choose per
    mode instead."""
    tracer_kwargs = tracer_kwargs or {}
    was_training = model.training
    if all(a is None for a in (return_nodes, train_return_nodes, eval_return_nodes)):
        raise ValueError("Either `return_nodes` or `train_return_nodes` and "
                         "`eval_return_nodes` together, should be specified")
    if (train_return_nodes is None) ^ (eval_return_nodes is None):
        raise ValueError("If any of `train_return_nodes` and `eval_return_nodes` are "
                         "specified, then both should be specified")
    if not ((return_nodes is None) ^ (train_return_nodes is None)):
        raise ValueError("If `train_return_nodes` and `eval_return_nodes` are specified, "
                         "then both should be specified")

    def to_strdict(n):
        if isinstance(n, list):
            return {str(i): str(i) for i in n}
        return {str(k): str(v) for k, v in n.items()}
    if train_return_nodes is None:
        return_nodes = to_strdict(return_nodes)
        train_return_nodes = copy.deepcopy(return_nodes)
        eval_return_nodes = copy.deepcopy(return_nodes)
    else:
        train_return_nodes = to_strdict(train_return_nodes)
        eval_return_nodes = to_strdict(eval_return_nodes)
    tracers, graphs = {}, {}
    wanted = {"train": train_return_nodes, "eval": eval_return_nodes}
    name = "GraphModule"
    for mode in ("train", "eval"):
        model.train(mode == "train")
        tracer = NodePathTracer(**tracer_kwargs)
        graph = tracer.trace(model, concrete_args=concrete_args)
        name = model.__class__.__name__ if isinstance(model, nn.Module) else model.__name__
        gm = fx.GraphModule(tracer.root, graph, name)
        available = list(tracer.node_to_qualname.values())
        if len(set(available)) != len(available):
            raise ValueError("There are duplicate nodes! Please raise an issue "
                             "https://github.com/pytorch/vision/issues")
        for query in wanted[mode]:
            if not any(re.match(rf"^{re.escape(query)}(\.|$)", n) for n in available):
                raise ValueError(f"node: '{query}' is not present in model. Hint: use "
                                 f"`get_graph_node_names` to make sure the `return_nodes` you "
                                 f"specified are present. It may even be that you need to "
                                 f"specify `train_return_nodes` and `eval_return_nodes` "
                                 f"separately.")
        outputs = [n for n in reversed(gm.graph.nodes) if n.op == "output"]
        if not outputs:
            raise ValueError("No output nodes found in graph_module.graph.nodes")
        for n in outputs:
            gm.graph.erase_node(n)
        nodes = list(gm.graph.nodes)
        pending = dict(wanted[mode])
        chosen = OrderedDict()
        # the last node recorded under a name (or inside a module) is the one returned
        for n in reversed(nodes):
            qualname = tracer.node_to_qualname.get(n)
            if qualname is None:
                continue
            for query in list(pending):
                depth = query.count(".")
                if ".".join(qualname.split(".")[:depth + 1]) == query:
                    chosen[pending.pop(query)] = n
                    break
        chosen = OrderedDict(reversed(list(chosen.items())))
        with gm.graph.inserting_after(nodes[-1]):
            gm.graph.output(chosen)
        gm.graph.eliminate_dead_code()
        gm.recompile()
        tracers[mode] = tracer
        graphs[mode] = graph
    if not suppress_diff_warning:
        _warn_graph_differences(tracers["train"], tracers["eval"])
    out = DualGraphModule(model, graphs["train"], graphs["eval"], class_name=name)
    model.train(was_training)
    out.train(was_training)
    return out
