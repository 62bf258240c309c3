"""Inductor's NumPy kernels keep the intermediates that cost a call (erf, exp, tanh) for the
backward instead of recomputing them; gradients stay eager's, and an output saved that way
is still checked for in-place changes."""

import pytest

import glasstorch as torch
from glasstorch._inductor import config as inductor_config

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _numpy_kernels(monkeypatch):
    monkeypatch.setattr(inductor_config, "use_numba", False)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _region(compiled):
    gm = compiled._glasstorch_frame.cache[-1].run.__self__
    return next(n.target for n in gm.graph.nodes if n.op == "call_function"
                and type(n.target).__name__ == "FusedRegion")


def test_backward_takes_saved_transcendentals_and_matches_eager():
    def f(x):
        return F.gelu(x * 1.5 + 0.5).tanh() * x
    x = torch.randn(50, dtype=torch.float64, requires_grad=True)
    g = torch.compile(f)
    out = g(x)
    (gx,) = torch.autograd.grad(out.sum(), x)
    (ex,) = torch.autograd.grad(f(x).sum(), x)
    assert torch.allclose(gx, ex, atol=1e-12)
    src = _region(g).sources["fused_0_bwd0"]
    assert "erf(" not in src and "np.tanh(" not in src
    assert torch.autograd.gradcheck(g, (x,))


def test_a_saved_output_changed_in_place_is_caught():
    def f(x):
        y = x.exp()
        return y * 2, y
    x = torch.randn(4, requires_grad=True)
    g = torch.compile(f)
    z, y = g(x)
    region = _region(g)
    assert "v0" in region.out_refs and "v0" in region._saved("array")   # exp's result
    with torch.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
