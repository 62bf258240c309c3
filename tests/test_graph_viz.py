"""Backward-graph pictures: DOT text, rendering through Graphviz, the terminal tree."""

import io
import shutil
import time

import pytest

import glasstorch as torch
from glasstorch import nn
from glasstorch.autograd.graph_viz import print_graph, render, to_dot


def _mlp_loss():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loss = (m(torch.randn(5, 3)) ** 2).sum()
    return m, loss


def test_dot_names_nodes_and_parameters():
    m, loss = _mlp_loss()
    dot = to_dot(loss, params=m.named_parameters())
    for name in ("SumBackward0", "PowBackward0", "AddmmBackward0", "ReluBackward0",
                 "TBackward0", "AccumulateGrad", "0.weight: [4, 3] float32",
                 "0.bias: [4] float32", "2.weight: [2, 4] float32", "2.bias: [2] float32"):
        assert name in dot, name
    assert dot.count("AccumulateGrad") == 4
    assert dot.count("AddmmBackward0") == 2
    # a dict names leaves the same way; without params leaves carry only shape and dtype
    assert "2.bias: [2]" in to_dot(loss, params=dict(m.named_parameters()))
    plain = to_dot(loss)
    assert "weight" not in plain and "[4, 3] float32" in plain
    # saved tensors only on request
    assert "mat1: [5, 4] float32" not in plain
    saved = to_dot(loss, show_saved=True)
    assert "mat1: [5, 4] float32" in saved and "mat1: [5, 3] float32" in saved


def test_dot_parses_and_edges_follow_the_graph():
    pydot = pytest.importorskip("pydot")
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    out = (a * b).exp()
    graphs = pydot.graph_from_dot_data(to_dot(out, params={"a": a, "b": b}, show_saved=True))
    assert len(graphs) == 1
    g = graphs[0]
    labels = {n.get_name(): n.get_label().strip('"') for n in g.get_nodes()
              if n.get_label() is not None}
    edges = {(labels[e.get_source()].split("\\n")[0], labels[e.get_destination()].split("\\n")[0])
             for e in g.get_edges()}
    assert ("AccumulateGrad", "MulBackward0") in edges
    assert ("MulBackward0", "ExpBackward0") in edges
    assert ("ExpBackward0", "output") in edges
    assert any(lbl.startswith("AccumulateGrad\\na: [3] float32") for lbl in labels.values())
    assert any("result: [3] float32" in lbl for lbl in labels.values())


def test_several_roots_and_leaves_and_no_grad():
    a = torch.randn(2, requires_grad=True)
    dot = to_dot([a * 2, a + 1])
    assert "output 0" in dot and "output 1" in dot and dot.count("AccumulateGrad") == 1
    assert "AccumulateGrad" in to_dot(a)
    assert "does not require grad" in to_dot(torch.ones(2))
    with pytest.raises(TypeError):
        to_dot([a, 3])
    with pytest.raises(TypeError):
        to_dot(a, params=[a])


def test_dot_escapes_quotes():
    a = torch.randn(2, requires_grad=True)
    dot = to_dot(a * 2, params={'we"ird\\name': a})
    assert 'we\\"ird\\\\name' in dot


def test_long_chain_is_fast():
    x = torch.randn(3, requires_grad=True)
    h = x
    for _ in range(5000):
        h = h * 1.0001
    t0 = time.perf_counter()
    dot = to_dot(h)
    buf = io.StringIO()
    print_graph(h, file=buf)
    assert time.perf_counter() - t0 < 2.0
    assert dot.count("MulBackward0") == 5000
    lines = buf.getvalue().splitlines()
    assert len(lines) == 5001 and lines[-1] == "AccumulateGrad ([3] float32)"


def test_deep_branching_graph_stays_linear():
    x = torch.randn(3, requires_grad=True)
    h = x
    for _ in range(3000):
        h = h + x * 2
    buf = io.StringIO()
    print_graph(h, file=buf)
    text = buf.getvalue()
    nodes = "\n".join(line for line in text.splitlines() if not line.startswith("[cont"))
    assert nodes.count("AddBackward0") == 3000 and nodes.count("MulBackward0") == 3000
    assert max(len(line) for line in text.splitlines()) < 120
    assert len(text) < 1_000_000
    assert "[cont 1] inputs of AddBackward0:" in text


def test_print_graph_text():
    m, loss = _mlp_loss()
    buf = io.StringIO()
    print_graph(loss, file=buf, params=m.named_parameters())
    assert buf.getvalue() == (
        "SumBackward0\n"
        "PowBackward0\n"
        "AddmmBackward0\n"
        "|-- AccumulateGrad (2.bias: [2] float32)\n"
        "|-- ReluBackward0\n"
        "|   AddmmBackward0\n"
        "|   |-- AccumulateGrad (0.bias: [4] float32)\n"
        "|   `-- TBackward0\n"
        "|       AccumulateGrad (0.weight: [4, 3] float32)\n"
        "`-- TBackward0\n"
        "    AccumulateGrad (2.weight: [2, 4] float32)\n")


def test_print_graph_shared_nodes_and_depth():
    a = torch.randn(3, requires_grad=True)
    b = a * 2
    c = b + b.exp()
    buf = io.StringIO()
    print_graph(c, file=buf)
    assert buf.getvalue() == ("AddBackward0\n"
                              "|-- MulBackward0 [#1]\n"
                              "|   AccumulateGrad ([3] float32)\n"
                              "`-- ExpBackward0\n"
                              "    MulBackward0 (see #1)\n")
    buf = io.StringIO()
    print_graph(c, file=buf, max_depth=1)
    assert buf.getvalue() == "AddBackward0\n...\n"
    buf = io.StringIO()
    print_graph(torch.ones(2), file=buf)
    assert "does not require grad" in buf.getvalue()
    with pytest.raises(ValueError):
        print_graph(c, max_depth=0)


def test_render_svg(tmp_path):
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    m, loss = _mlp_loss()
    path = render(loss, tmp_path / "g.svg", params=m.named_parameters())
    text = open(path).read()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "AddmmBackward0" in text and "0.weight" in text


def test_render_without_dot_program(tmp_path, monkeypatch):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="Graphviz"):
        render("digraph { a -> b }", tmp_path / "g.svg")
