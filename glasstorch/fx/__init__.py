"""glasstorch.fx: torch.fx, the toolkit that captures a Module or function as a Graph of
Nodes (by symbolic tracing on Proxies), lets passes rewrite it, and turns it back into
Python code (``GraphModule``)."""

from . import _symbolic_trace, graph, graph_module, immutable_collections, node, proxy
from ._compatibility import compatibility
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import CodeGen, Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Node", "Proxy",
           "Interpreter", "Transformer", "replace_pattern", "map_arg", "has_side_effect",
           "CodeGen", "PH", "compatibility", "graph", "graph_module", "node", "proxy",
           "immutable_collections", "_symbolic_trace"]
