"""Pictures of the backward graph: Graphviz DOT text, rendered files, terminal trees.

The graph is the one the engine runs: ``tensor.grad_fn`` and, through
``next_functions``, every node gradients flow into, down to the leaves'
``AccumulateGrad`` sinks. Every walk here is iterative (a stack, a visited set
keyed by node identity), so graphs of many thousands of nodes, and a node
reached along several paths, cost time linear in the graph's size.
"""

from __future__ import annotations

import sys

from .._tensor import Tensor
from .graph import AccumulateGrad, SavedTensor, grad_accumulator

__all__ = ["to_dot", "render", "print_graph"]


# ----------------------------------------------------------------------------- helpers
def _as_tensors(tensor_or_tensors):
    if isinstance(tensor_or_tensors, Tensor):
        return [tensor_or_tensors]
    if isinstance(tensor_or_tensors, dict):
        tensors = list(tensor_or_tensors.values())
    else:
        try:
            tensors = list(tensor_or_tensors)
        except TypeError:
            raise TypeError("expected a Tensor or a sequence of Tensors, got "
                            f"{type(tensor_or_tensors).__name__}") from None
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor or a sequence of Tensors, got an element of "
                            f"type {type(t).__name__}")
    return tensors


def _param_names(params):
    """``id(tensor) -> name`` from ``named_parameters()`` pairs or a name -> tensor dict."""
    if params is None:
        return {}
    items = params.items() if isinstance(params, dict) else params
    names = {}
    for item in items:
        if isinstance(item, Tensor):
            raise TypeError("params must be a dict name -> Tensor or an iterable of (name, "
                            "Tensor) pairs such as model.named_parameters(), got a Tensor")
        try:
            name, p = item
        except (TypeError, ValueError):
            raise TypeError("params must be a dict name -> Tensor or an iterable of (name, "
                            "Tensor) pairs such as model.named_parameters()") from None
        if not isinstance(p, Tensor):
            raise TypeError(f"params[{name!r}] is a {type(p).__name__}, not a Tensor")
        names.setdefault(id(p), str(name))
    return names


def _root_node(t):
    """The node a root tensor's gradient enters: its grad_fn, or its AccumulateGrad."""
    if t.grad_fn is not None:
        return t.grad_fn
    if t._requires_grad:
        return grad_accumulator(t)
    return None


def _shape_dtype(t):
    return f"{list(t._data.shape)} {str(t.dtype).replace('torch.', '')}"


def _leaf_text(node, names):
    var = node.variable
    name = names.get(id(var))
    return (f"{name}: " if name else "") + _shape_dtype(var)


def _saved_lines(node):
    """``name: shape dtype`` (or a short value) for what the node keeps for backward."""
    saved = node._saved
    if not saved:
        return []
    lines = []
    for key, value in saved.items():
        if isinstance(value, SavedTensor):
            t = value._tensor
            if t is not None:
                desc = _shape_dtype(t)
            elif value._unpack_hook is not None:
                desc = "(packed by a saved-tensor hook)"
            else:
                desc = "(freed after backward)"
        else:
            desc = repr(value)
            if len(desc) > 40:
                desc = desc[:37] + "..."
        lines.append(f"{key}: {desc}")
    return lines


def _walk(roots):
    """Every node reachable from ``roots``, each once, in discovery order (iterative)."""
    seen = set()
    order = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return order


def _dot_quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# ----------------------------------------------------------------------------- DOT
def to_dot(tensor_or_tensors, params=None, show_saved=False) -> str:
    """Graphviz DOT text of the backward graph that ends in the given tensor(s).

    Boxes are backward nodes (their torch class names); light blue boxes are the
    leaves' ``AccumulateGrad`` sinks, labelled with the parameter name when
    ``params`` (``model.named_parameters()`` or a dict name -> tensor) names
    them, and their shape and dtype; green boxes are the root tensors. With
    ``show_saved`` each node also lists the tensors (shape, dtype) and values
    it keeps for backward. Edges point the way the forward pass ran.
    """
    tensors = _as_tensors(tensor_or_tensors)
    names = _param_names(params)
    out = ["digraph backward_graph {",
           '  graph [rankdir=TB, fontname="Helvetica"];',
           '  node [shape=box, style="filled,rounded", fillcolor=lightgrey, '
           'fontname="Helvetica", fontsize=11];']
    ids = {}
    roots = []
    for i, t in enumerate(tensors):
        node = _root_node(t)
        label = "output" if len(tensors) == 1 else f"output {i}"
        tid = f"t{i}"
        text = f"{label}\n{_shape_dtype(t)}"
        if node is None:
            text += "\n(does not require grad)"
        out.append(f"  {tid} [label={_dot_quote(text)}, fillcolor=darkolivegreen1];")
        if node is not None:
            roots.append(node)
    nodes = _walk(roots)
    for k, node in enumerate(nodes):
        ids[id(node)] = f"n{k}"
    for node in nodes:
        nid = ids[id(node)]
        if isinstance(node, AccumulateGrad):
            text = f"{node.name()}\n{_leaf_text(node, names)}"
            color = "lightblue"
        else:
            text = node.name()
            color = "lightgrey"
        if show_saved:
            lines = _saved_lines(node)
            if lines:
                text += "\n" + "\n".join(lines)
        out.append(f"  {nid} [label={_dot_quote(text)}, fillcolor={color}];")
    for node in nodes:
        nid = ids[id(node)]
        for nxt, _ in node.next_functions:
            if nxt is not None:
                out.append(f"  {ids[id(nxt)]} -> {nid};")
    for i, t in enumerate(tensors):
        node = _root_node(t)
        if node is not None:
            out.append(f"  {ids[id(node)]} -> t{i} [style=dashed];")
    out.append("}")
    return "\n".join(out) + "\n"


def render(dot_or_tensor, path, format="svg", params=None, show_saved=False, engine="dot"):
    """Write a picture of a graph (DOT text, or tensor(s) passed to ``to_dot``) to ``path``.

    Needs the ``graphviz`` Python package and Graphviz's programs (``dot``).
    Returns the path written.
    """
    if isinstance(dot_or_tensor, str):
        dot = dot_or_tensor
    else:
        dot = to_dot(dot_or_tensor, params=params, show_saved=show_saved)
    try:
        import graphviz
    except ImportError:
        raise ImportError("render needs the 'graphviz' Python package: pip install graphviz "
                          "(or write the text of to_dot(...) to a .dot file and run Graphviz "
                          "yourself)") from None
    try:
        data = graphviz.Source(dot, engine=engine).pipe(format=format)
    except graphviz.ExecutableNotFound:
        raise RuntimeError(f"Graphviz's '{engine}' program was not found on PATH: install "
                           "Graphviz (apt-get install graphviz, brew install graphviz, or "
                           "https://graphviz.org/download/)") from None
    path = str(path)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ----------------------------------------------------------------------------- text tree
def _line_text(node, names):
    if isinstance(node, AccumulateGrad):
        return f"{node.name()} ({_leaf_text(node, names)})"
    return node.name()


def print_graph(tensor, file=None, max_depth=None, *, params=None):
    """Print the backward graph of ``tensor`` (or several) as a text tree.

    Each node's inputs are listed below it; a node with a single input is
    followed by that input on the same column, so long chains stay flat. A node
    reached along several paths is printed once, tagged ``[#k]``; later
    occurrences read ``(see #k)``. ``max_depth`` cuts the tree after that many
    nodes from the root (``...`` marks what was left out). ``params`` names
    leaves as in ``to_dot``.
    """
    if max_depth is not None and max_depth < 1:
        raise ValueError(f"max_depth must be a positive integer or None, got {max_depth}")
    if file is None:
        file = sys.stdout
    names = _param_names(params)
    tensors = _as_tensors(tensor)
    roots = [_root_node(t) for t in tensors]
    # How many edges enter each node: those entered more than once get a tag.
    indegree = {}
    for node in _walk([r for r in roots if r is not None]):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                indegree[id(nxt)] = indegree.get(id(nxt), 0) + 1
    for r in roots:
        if r is not None:
            indegree[id(r)] = indegree.get(id(r), 0) + 1
    tags = {}
    lines = []
    deferred = []  # (node, continuation number, depth): subtrees moved out of deep indentation
    for t, root in zip(tensors, roots):
        if len(tensors) > 1:
            lines.append(f"output {_shape_dtype(t)}")
        if root is None:
            lines.append("(no backward graph: the tensor does not require grad)")
            continue
        # (node, prefix of this line, prefix for its children's lines, depth)
        stack = [(root, "", "", 1)]
        while True:
            while stack:
                node, head, cont, depth = stack.pop()
                tag = tags.get(id(node))
                if tag is not None:
                    lines.append(f"{head}{node.name()} (see #{tag})")
                    continue
                text = _line_text(node, names)
                if indegree.get(id(node), 0) > 1:
                    tag = tags[id(node)] = len(tags) + 1
                    text += f" [#{tag}]"
                inputs = [n for n, _ in node.next_functions if n is not None]
                if inputs and max_depth is not None and depth >= max_depth:
                    lines.append(head + text)
                    lines.append(f"{cont}...")
                    continue
                if len(inputs) > 1 and len(cont) > _MAX_INDENT:
                    # Keep lines short (and the output linear in the graph's size):
                    # this node's inputs are printed after the current tree.
                    deferred.append((node, inputs, len(deferred) + 1, depth))
                    lines.append(f"{head}{text} (inputs at [cont {len(deferred)}])")
                    continue
                lines.append(head + text)
                _push_inputs(stack, inputs, cont, depth)
            if not deferred:
                break
            node, inputs, k, depth = deferred.pop(0)
            lines.append(f"[cont {k}] inputs of {node.name()}:")
            _push_inputs(stack, inputs, "", depth)
    print("\n".join(lines), file=file)


# Deepest indentation (characters) before a subtree is continued further down.
_MAX_INDENT = 60


def _push_inputs(stack, inputs, cont, depth):
    if len(inputs) == 1:
        stack.append((inputs[0], cont, cont, depth + 1))
        return
    last = len(inputs) - 1
    for i in range(last, -1, -1):  # pushed in reverse: printed in order
        if i == last:
            stack.append((inputs[i], cont + "`-- ", cont + "    ", depth + 1))
        else:
            stack.append((inputs[i], cont + "|-- ", cont + "|   ", depth + 1))
