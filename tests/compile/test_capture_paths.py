"""Capture judges the path a call takes (as Dynamo does), and Python may branch on the metadata
the guards fix (dtype, rank, static shapes): what timm's and accelerate's own suites compile
with ``fullgraph=True``. Each case runs under real torch too (the oracle: torch compiles it)."""

from collections.abc import Mapping

import numpy as np
import pytest
import torch as real

import glasstorch as torch

LIBS = [torch, real]


def _compiled(lib, fn, **kw):
    lib._dynamo.reset()
    return lib.compile(fn, backend="eager", fullgraph=True, **kw)


def _apply(fn, data):
    """accelerate's recursively_apply, in miniature."""
    if isinstance(data, (tuple, list)):
        return type(data)(_apply(fn, d) for d in data)
    if isinstance(data, Mapping):
        return type(data)({k: _apply(fn, v) for k, v in data.items()})
    return fn(data)


@pytest.mark.parametrize("lib", LIBS, ids=["glasstorch", "torch"])
def test_isinstance_of_an_abc_and_dtype_tests_compile_fullgraph(lib):
    def to_fp32(data):
        def convert(t):
            if t.dtype in (lib.float16, lib.bfloat16):
                return t.float()
            return t
        return _apply(convert, data)
    f = _compiled(lib, to_fp32)
    out = f({"a": lib.ones(2, dtype=lib.bfloat16), "b": [lib.zeros(1, dtype=lib.int64)]})
    assert out["a"].dtype == lib.float32 and out["b"][0].dtype == lib.int64


def _cache_module(lib):
    class Resampler(lib.nn.Module):
        """timm's PatchEmbedResampler shape: a Python cache filled before compiling, read in
        forward; the miss branch (a context manager and a store) is not taken."""

        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(4, 3))
            self.cache = {}

        def matrix(self, n):
            m = self.cache.get(n)
            if m is not None:
                return m
            with lib.no_grad():
                m = lib.full((3, n), 0.5)
            self.cache[n] = m
            return m

        def forward(self, x, n):
            assert len(x.shape) == 2 and x.ndim == 2
            w = self.weight.reshape(2, 6).permute(1, 0)
            assert tuple(w.shape) == (6, 2)
            return (x @ self.weight @ self.matrix(n)).to(dtype=lib.float32)
    return Resampler


@pytest.mark.parametrize("lib", LIBS, ids=["glasstorch", "torch"])
def test_an_untaken_branch_is_no_graph_break(lib):
    mod = _cache_module(lib)()
    mod.matrix(5)                          # prewarm, as timm's test does
    x = lib.ones(2, 4)
    expected = mod(x, 5)
    out = _compiled(lib, mod)(x, 5)
    assert np.allclose(out.detach().numpy(), expected.detach().numpy())


def test_a_taken_unsound_branch_breaks_before_it_runs():
    mod = _cache_module(torch)()
    x = torch.ones(2, 4)
    with pytest.raises(torch._dynamo.exc.Unsupported, match="context manager"):
        _compiled(torch, mod)(x, 7)
    assert mod.cache == {}                 # stopped before the store
    expl = torch._dynamo.explain(mod)(x, 7)
    assert (expl.graph_count, expl.graph_break_count) == (0, 1)
    assert list(mod.cache) == [7]          # the eager run filled it, once
    expl = torch._dynamo.explain(mod)(x, 7)     # now the hit path: one graph
    assert (expl.graph_count, expl.graph_break_count) == (1, 0)


def test_a_users_except_clause_cannot_swallow_the_break():
    calls = []

    def f(x):
        try:
            calls.append(1)
        except Exception:
            pass
        return x + 1
    out = torch.compile(f, backend="eager")(torch.ones(2))
    assert out.tolist() == [2.0, 2.0] and calls == [1]


def test_an_exception_arm_not_taken_is_not_judged():
    def f(x):
        try:
            return x.to(torch.float64)
        except AssertionError:
            print("not reached")
            raise
    out = _compiled(torch, f)(torch.ones(2))
    assert out.dtype == torch.float64


def test_metadata_branches_are_guarded_and_recompile():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x):
        if x.dtype == torch.float64 and x.shape[0] > 2:
            return x * 2
        return x - 1
    torch._dynamo.reset()
    cf = torch.compile(f, backend=backend, fullgraph=True)
    assert cf(torch.ones(3, dtype=torch.float64)).tolist() == [2.0] * 3
    assert cf(torch.ones(3)).tolist() == [0.0] * 3
    assert cf(torch.ones(1, dtype=torch.float64)).tolist() == [0.0]
    assert len(graphs) == 3                # one graph per dtype/shape branch


def test_dynamic_shapes_keep_sizes_symbolic():
    def f(x):
        return x.reshape(x.shape[0], -1) * x.dim()
    torch._dynamo.reset()
    cf = torch.compile(f, backend="eager", dynamic=True)
    for n in (2, 5):
        assert torch.equal(cf(torch.ones(n, 2, 3)), f(torch.ones(n, 2, 3)))


def test_module_to_in_a_user_module_is_not_a_break():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x).to(torch.float64)
    m = M()
    expl = torch._dynamo.explain(m)(torch.ones(1, 3))
    assert (expl.graph_count, expl.graph_break_count) == (1, 0)


def test_explain_gives_the_user_frame_of_each_break():
    def f(x):
        y = x + 1
        print("side effect")
        return y

    def g(x):
        if x.sum() > 0:
            return x + 1
        return x
    for fn, line in ((f, 2), (g, 1)):
        torch._dynamo.reset()
        (r,) = torch._dynamo.explain(fn)(torch.ones(2)).break_reasons
        top = r.user_stack[-1]
        assert (top.name, top.lineno) == (fn.__name__, fn.__code__.co_firstlineno + line)
