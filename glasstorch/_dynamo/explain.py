"""``torch._dynamo.explain(fn)(*args)``: compile ``fn`` once with a recording backend and report
the graphs captured, the graph breaks and their reasons."""

from __future__ import annotations

import dataclasses

__all__ = ["explain", "ExplainOutput"]


@dataclasses.dataclass
class GraphCompileReason:
    """Why a graph ended (a graph break)."""
    reason: str
    user_stack: list = dataclasses.field(default_factory=list)
    graph_break: bool = True


@dataclasses.dataclass
class ExplainOutput:
    """What ``explain`` found (field names as torch's)."""
    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list
    out_guards: list = dataclasses.field(default_factory=list)
    compile_times: str = ""

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {r.reason}"]
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines += [f"    {op}" for op in ops]
        if self.compile_times:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(f)(*args, **kwargs)`` runs ``f`` once compiled (backend ``eager``) and
    returns an ``ExplainOutput``."""
    if extra_args or extra_kwargs:
        raise TypeError("explain(f, *args) is no longer supported: use explain(f)(*args)")
    from ..nn import Module
    from .eval_frame import OptimizeContext

    def inner(*args, **kwargs):
        graphs = []

        def record(gm, example_inputs):
            graphs.append(gm)
            return gm.forward
        ctx = OptimizeContext(record)
        frame = ctx.frame(None, f) if isinstance(f, Module) else ctx.frame(f)
        frame(*args, **kwargs)
        reasons = [GraphCompileReason(r, stack) for r, stack in frame.graph_breaks]
        ops = [[n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method",
                                                            "call_module")] for gm in graphs]
        times = ", ".join(f"{t:.4f}" for t in frame.compile_times)
        return ExplainOutput(graphs, len(graphs), len(reasons), reasons,
                             sum(len(o) for o in ops), ops,
                             compile_times=f"capture + backend (s): {times}" if times else "")
    return inner
