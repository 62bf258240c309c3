"""torch.fx.subgraph_rewriter: find every occurrence of a pattern graph in a GraphModule and
replace it by a replacement graph."""

from __future__ import annotations

from typing import NamedTuple

from ._compatibility import compatibility
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern", "ReplacedPatterns"]


@compatibility(is_backward_compatible=True)
class Match(NamedTuple):
    """One replaced occurrence: the graph node matched by the pattern's output value, and the
    pattern-node -> graph-node map."""

    anchor: Node
    nodes_map: dict


@compatibility(is_backward_compatible=False)
class ReplacedPatterns(NamedTuple):
    """A Match and the nodes that replaced it."""

    anchor: Node
    nodes_map: dict
    replacements: list


class _InternalMatch:
    def __init__(self, anchors):
        self.anchors = anchors
        self.nodes_map = {}
        self.placeholder_nodes = []
        self.returning_nodes = []


def _flatten_nodes(value):
    out = []

    def walk(v):
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            for e in v:
                walk(e)
        elif isinstance(v, dict):
            for e in v.values():
                walk(e)
    walk(value)
    return out


class _SubgraphMatcher:
    """Finds the non-overlapping places where ``pattern`` occurs in a graph: same ops and
    targets, wired the same way, pattern placeholders matching any value, and no value
    inside a match used outside it."""

    def __init__(self, pattern: Graph):
        self.pattern = pattern
        nodes = list(pattern.nodes)
        self.placeholders = [n for n in nodes if n.op == "placeholder"]
        outputs = [n for n in nodes if n.op == "output"]
        if len(outputs) != 1:
            raise AssertionError("the pattern graph must have exactly one output node")
        self.returning = _flatten_nodes(outputs[0].args[0])
        self.body = [n for n in nodes if n.op not in ("placeholder", "output")]

    def _match_arg(self, pa, ga, m):
        if isinstance(pa, Node):
            return self._match_node(pa, ga, m)
        if isinstance(pa, (tuple, list)):
            return (isinstance(ga, (tuple, list)) and len(pa) == len(ga) and
                    all(self._match_arg(p, g, m) for p, g in zip(pa, ga)))
        if isinstance(pa, dict):
            return (isinstance(ga, dict) and pa.keys() == ga.keys() and
                    all(self._match_arg(pa[k], ga[k], m) for k in pa))
        return type(pa) is type(ga) and pa == ga

    def _match_node(self, pn, gn, m):
        if pn in m:
            return m[pn] is gn
        if pn.op == "placeholder":
            # a pattern input matches any value, but each graph node binds one input
            if isinstance(gn, Node) and gn in m.values():
                return False
            m[pn] = gn
            return True
        if not isinstance(gn, Node) or gn.op != pn.op or gn in m.values():
            return False
        if pn.op in ("call_function", "call_method", "get_attr") and pn.target != gn.target:
            return False
        if pn.op == "call_module":
            pm = self.pattern.owning_module
            gm_ = gn.graph.owning_module
            if pm is not None and gm_ is not None:
                if type(pm.get_submodule(pn.target)) is not type(gm_.get_submodule(gn.target)):
                    return False
            elif pn.target != gn.target:
                return False
        if len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
            return False
        saved = dict(m)
        m[pn] = gn
        ok = all(self._match_arg(p, g, m) for p, g in zip(pn.args, gn.args)) and \
            all(self._match_arg(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs)
        if not ok:
            m.clear()
            m.update(saved)
        return ok

    def _valid(self, m):
        # values computed inside the match may only be used inside it (or be returned)
        inside = {m[p] for p in self.body}
        returning = {m[p] for p in self.returning}
        for p in self.body:
            g = m[p]
            if g in returning:
                continue
            if any(u not in inside for u in g.users):
                return False
        return len(inside) == len(self.body)

    def match(self, graph: Graph):
        """The matches in graph order, overlapping ones after the first dropped."""
        found = []
        if not self.returning:
            return found
        first = self.returning[0]
        for gn in graph.nodes:
            m = {}
            if not self._match_node(first, gn, m):
                continue
            ok = True
            for other in self.returning[1:]:
                if other in m:
                    continue
                for cand in graph.nodes:
                    trial = dict(m)
                    if self._match_node(other, cand, trial):
                        m = trial
                        break
                else:
                    ok = False
                    break
            if not ok or any(p not in m for p in self.body) or not self._valid(m):
                continue
            im = _InternalMatch(list(self.returning))  # anchored at the pattern's outputs
            im.nodes_map = {p: m[p] for p in self.pattern.nodes if p in m}
            im.placeholder_nodes = [m[p] for p in self.placeholders if p in m]
            im.returning_nodes = [m[r] for r in self.returning]
            found.append(im)
        kept, used = [], set()
        for im in found:
            nodes = {im.nodes_map[p] for p in self.body}
            if nodes & used:
                continue
            used |= nodes
            kept.append(im)
        return kept


def _as_graph(obj) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _replace_attributes(gm: GraphModule, replacement) -> None:
    # attributes the replacement reads that the module lacks are copied over
    gm.delete_all_unused_submodules()
    rgraph = replacement.graph if isinstance(replacement, GraphModule) else None
    if rgraph is None:
        return
    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            try:
                gm.get_submodule(node.target) if node.op == "call_module" else None
                has = True
                obj = gm
                for part in node.target.split("."):
                    if not hasattr(obj, part):
                        has = False
                        break
                    obj = getattr(obj, part)
            except AttributeError:
                has = False
            if not has:
                src = replacement
                for part in node.target.split("."):
                    src = getattr(src, part)
                if node.op == "call_module":
                    gm.add_submodule(node.target, src)
                else:
                    *prefix, field = node.target.split(".")
                    owner = gm
                    for part in prefix:
                        owner = getattr(owner, part)
                    setattr(owner, field, src)


def _replace_pattern(gm: GraphModule, pattern, replacement) -> list:
    original = gm.graph
    pattern_graph = _as_graph(pattern)
    matches = _SubgraphMatcher(pattern_graph).match(original)
    replacement_graph = _as_graph(replacement)
    changed = {}
    out = []
    for match in matches:
        r_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(r_placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} "
                                 f"vs {len(r_placeholders)}")
        val_map = {}
        for rn, gn in zip(r_placeholders, match.placeholder_nodes):
            val_map[rn] = changed.get(gn, gn) if isinstance(gn, Node) else gn
        users = set()
        for n in match.returning_nodes:
            users.update(n.users)
        insert_point = None
        if len(users) == 1:
            insert_point = next(iter(users))
        elif users:
            insert_point = next(n for n in original.nodes if n in users)
        else:
            nxt = None
            for n in reversed(original.nodes):
                if n in match.returning_nodes:
                    insert_point = nxt
                    break
                nxt = n
        if insert_point is None:
            raise AssertionError("The insert point can't be None")
        with original.inserting_before(insert_point):
            copied = original.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        replacements = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(f"Returning nodes count mismatch: "
                                 f"{len(match.returning_nodes)} vs {len(copied)}")
        for gn, cn in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(cn)
            changed[gn] = cn
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                original.erase_node(match.nodes_map[pn])
        out.append(ReplacedPatterns(match.anchors[0], match.nodes_map, replacements))
    gm.recompile()
    if isinstance(replacement, GraphModule) or hasattr(replacement, "named_modules"):
        _replace_attributes(gm, replacement if isinstance(replacement, GraphModule)
                            else symbolic_trace(replacement))
    return out


@compatibility(is_backward_compatible=True)
def replace_pattern(gm: GraphModule, pattern, replacement) -> list:
    """Replace every non-overlapping occurrence of ``pattern`` (a function, Graph or
    GraphModule, traced if needed) in ``gm`` by ``replacement``; the pattern's inputs are
    wired to the matched values. Returns the Matches; ``gm`` is recompiled."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map)
            for m in _replace_pattern(gm, pattern, replacement)]
