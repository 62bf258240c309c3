"""torch.compile: capture, guards, graph breaks, backends; compiled == eager (values and
gradients), Python side effects kept, recompilation and its limit, logs."""

import logging

import numpy as np
import pytest

import glasstorch as torch
from glasstorch import nn
from glasstorch._inductor import compile_fx
from glasstorch._inductor import config as inductor_config

F = nn.functional
BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(params=["numba", "numpy"])
def kernels(request, monkeypatch):
    """Run with numba kernels (when installed) and with the NumPy fallback."""
    if request.param == "numba":
        pytest.importorskip("numba")
    monkeypatch.setattr(inductor_config, "use_numba", request.param == "numba")
    return request.param


class Block(nn.Module):
    """A small pre-norm transformer block written out (user code the capture traces)."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1) * (1.0 / (d // self.heads) ** 0.5)).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        h = self.fc1(self.ln2(x))
        return x + self.fc2(F.gelu(h) * torch.sigmoid(h) + h.tanh() * 0.5)


def _models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(),
                        nn.Linear(16, 4))
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(4 * 3 * 3, 5))
    return [("mlp", mlp, (6, 8)), ("cnn", cnn, (2, 1, 8, 8)), ("block", Block(), (2, 5, 16))]


def _grads(model, out):
    model.zero_grad()
    (out * out).sum().backward()
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_models_match_eager_forward_and_gradients(backend, kernels):
    for name, model, shape in _models():
        x = torch.randn(*shape)
        compiled = torch.compile(model, backend=backend)
        want = model(x)
        want_g = _grads(model, want)
        got = compiled(x)
        got_g = _grads(model, got)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
        for a, b in zip(got_g, want_g):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6,
                                       err_msg=name)
        assert compiled(x).shape == want.shape


def test_mlp_matches_real_torch():
    real = pytest.importorskip("torch")
    model = _models()[0][1]
    ref = real.nn.Sequential(real.nn.Linear(8, 16), real.nn.ReLU(), real.nn.Linear(16, 16),
                             real.nn.GELU(), real.nn.Linear(16, 4))
    ref.load_state_dict({k: real.tensor(v.numpy()) for k, v in model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    got = torch.compile(model)(torch.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), ref(real.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert got.grad_fn.name() == "AddmmBackward0" or got.grad_fn is not None


def test_fused_kernels_pass_gradcheck_in_float64(kernels):
    def f(x, b):
        y = torch.sigmoid(x * b - b / (x.exp() + 1)).relu() * x
        return F.silu(y).sqrt() + (y.sin() - y.cos()).abs() * F.gelu(x) - (-0.5 * y).log1p()
    cf = torch.compile(f)
    x = torch.rand(4, 3, dtype=torch.float64, requires_grad=True) + 0.5
    b = torch.rand(3, dtype=torch.float64, requires_grad=True)
    np.testing.assert_allclose(cf(x, b).detach().numpy(), f(x, b).detach().numpy(),
                               rtol=1e-12)
    assert torch.autograd.gradcheck(cf, (x, b))


def test_pointwise_chain_is_one_fused_region_with_a_generated_backward(kernels):
    seen = {}

    def backend(gm, example_inputs):
        run = compile_fx(gm, example_inputs)
        seen["code"] = run.__self__.code
        return run

    def f(x):
        return (F.gelu(x * 1.5 + 0.5).tanh() * x).sum()
    x = torch.randn(100, requires_grad=True)
    y = torch.compile(f, backend=backend)(x)
    assert seen["code"].count("inductor_kernels_fused_0(") == 1
    assert "gelu" not in seen["code"] and "tanh" not in seen["code"]
    y.backward()
    assert x.grad.grad_fn is None
    g = x.grad.clone()
    x.grad = None
    f(x).backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_inference_runs_kernels_without_autograd(kernels):
    cf = torch.compile(lambda x: (x * 2).exp() + x)
    with torch.no_grad():
        out = cf(torch.ones(3, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.exp(2.0) + 1, rtol=1e-6)


def test_mixed_dtypes_and_int_inputs_fall_back_to_the_original_ops():
    def f(x, y):
        return (x * y + 1) * 2
    cf = torch.compile(f)
    for x, y in [(torch.arange(4), torch.arange(4)), (torch.ones(3), torch.ones(3,
                                                                             dtype=torch.float64))]:
        want = f(x, y)
        got = cf(x, y)
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_custom_backend_gets_graph_module_and_example_inputs():
    calls = []

    def my_backend(gm, example_inputs):
        calls.append((type(gm).__name__, [tuple(t.shape) for t in example_inputs],
                      [n.op for n in gm.graph.nodes]))
        return gm.forward

    def f(x, y):
        return torch.relu(x) + y * 2
    cf = torch.compile(f, backend=my_backend)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(cf(x, y), f(x, y))
    cf(x, y)
    assert calls == [("GraphModule", [(2, 3), (2, 3)],
                      ["placeholder", "placeholder", "call_function", "call_function",
                       "call_function", "output"])]


def test_side_effects_stay_correct(capsys):
    log = []

    def prints(x):
        print("called")
        return x + 1

    def appends(x):
        log.append(x.shape)
        return x * 2

    def branches(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    for fn in (prints, appends, branches):
        cf = torch.compile(fn)
        for x in (torch.ones(2), -torch.ones(2), torch.ones(2)):
            assert torch.equal(cf(x), fn(x))
    assert capsys.readouterr().out.count("called") == 6
    assert len(log) == 6


SCALE = 2.0
OFFSET = torch.ones(2)


def test_globals_read_are_guarded():
    global SCALE, OFFSET

    def f(x):
        return x * SCALE + OFFSET
    cf = torch.compile(f)
    x = torch.ones(2)
    assert cf(x).tolist() == [3.0, 3.0]
    SCALE = 3.0
    assert cf(x).tolist() == [4.0, 4.0]
    OFFSET = torch.zeros(2)
    assert cf(x).tolist() == [3.0, 3.0]
    OFFSET.add_(1)                       # the same tensor, changed in place: seen too
    assert cf(x).tolist() == [4.0, 4.0]
    SCALE, OFFSET = 2.0, torch.ones(2)


def test_unsound_frames_are_graph_breaks_and_fullgraph_raises():
    state = {"n": 0}

    def stores_global(x):
        global SCALE
        SCALE = 2.0
        return x

    def reads_item(x):
        return x * x.sum().item()

    def mutates_outside(x):
        state["n"] += 1
        return x

    def with_block(x):
        with torch.no_grad():
            return x * 2

    for fn in (stores_global, reads_item, mutates_outside, with_block):
        x = torch.ones(2, requires_grad=True)
        out = torch.compile(fn)(x)
        assert torch.equal(out, fn(x)) and out.requires_grad == fn(x).requires_grad
        expl = torch._dynamo.explain(fn)(x)
        assert (expl.graph_count, expl.graph_break_count) == (0, 1), fn.__name__
        with pytest.raises(torch._dynamo.exc.Unsupported):
            torch.compile(fn, fullgraph=True)(x)
    assert state["n"] == 4       # compiled, twice eager, explain; fullgraph raised first


def test_explain_counts_ops_of_a_clean_function():
    expl = torch._dynamo.explain(lambda x: (x + 1).relu() * 2)(torch.ones(3))
    assert (expl.graph_count, expl.graph_break_count, expl.op_count) == (1, 0, 3)
    assert "Graph Count: 1" in str(expl)


def test_recompiles_on_shape_change_and_dynamic_avoids_it():
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x):
        return x.sin() + x.shape[0]
    static = torch.compile(f, backend=counting, dynamic=False)
    for n in (2, 3, 4, 3):
        assert torch.allclose(static(torch.ones(n)), f(torch.ones(n)))
    assert len(graphs) == 3
    graphs.clear()
    dyn = torch.compile(f, backend=counting, dynamic=True)
    for n in (2, 3, 4):
        assert torch.allclose(dyn(torch.ones(n)), f(torch.ones(n)))
    assert len(graphs) == 1
    dyn(torch.ones(2, dtype=torch.float64))             # a dtype change still recompiles
    assert len(graphs) == 2
    graphs.clear()
    auto = torch.compile(f, backend=counting)            # automatic dynamic after one miss
    for n in (2, 3, 4, 5):
        auto(torch.ones(n))
    assert len(graphs) == 2
    graphs.clear()
    marked = torch.compile(f, backend=counting, dynamic=False)
    for n in (2, 3, 4):
        t = torch.ones(n)
        torch._dynamo.mark_dynamic(t, 0)
        marked(t)
    assert len(graphs) == 1


def test_guards_on_dtype_requires_grad_grad_mode_training_and_parameters():
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    cm = torch.compile(model, backend=counting)
    x = torch.ones(2, 3)
    cm(x)
    cm(x)
    model.eval()
    assert torch.equal(cm(x), model(x))
    with torch.no_grad():
        cm(x)
    cm(x.double().float().requires_grad_())
    model[0] = nn.Linear(3, 3)                         # parameter identity changes
    assert torch.equal(cm(x), model(x))
    assert len(graphs) == 5


def test_recompile_limit_falls_back_to_eager_with_torchs_warning(caplog):
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, n):
        return x * n
    cf = torch.compile(f, backend=counting)
    with torch._dynamo.config.patch(cache_size_limit=2), \
            caplog.at_level(logging.WARNING, logger="glasstorch._dynamo.convert_frame"):
        for n in range(5):
            assert cf(torch.ones(2), n).tolist() == [n, n]
    assert len(graphs) == 2
    assert "hit config.recompile_limit (2)" in caplog.text
    assert "function: 'f'" in caplog.text


def test_is_compiling_is_true_while_capturing():
    def f(x):
        return x + 1 if torch.compiler.is_compiling() else x - 1
    assert torch.compile(f)(torch.zeros(1)).item() == 1.0
    assert f(torch.zeros(1)).item() == -1.0
    assert not torch._dynamo.is_compiling()


def test_disable_inside_a_compiled_function_is_a_graph_break():
    @torch._dynamo.disable
    def helper(x):
        return x * 3

    def f(x):
        return helper(x) + 1
    assert torch.compile(f)(torch.ones(1)).item() == 4.0
    assert torch._dynamo.explain(f)(torch.ones(1)).graph_break_count == 1


def test_optimized_module_matches_torch_names():
    real = pytest.importorskip("torch")
    mine = torch.compile(nn.Sequential(nn.Linear(2, 2)))
    theirs = real.compile(real.nn.Sequential(real.nn.Linear(2, 2)))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert type(mine).__name__ == type(theirs).__name__ == "OptimizedModule"
    assert isinstance(mine._orig_mod, nn.Sequential)
    with pytest.raises(torch._dynamo.exc.InvalidBackend):
        torch.compile(lambda x: x, backend="nope")


def test_torch_logs_print_graph_code_recompiles_breaks_and_output_code(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_LOGS", "graph_code,recompiles,graph_breaks,output_code")

    def f(x):
        return (x * 2).tanh()
    cf = torch.compile(f, dynamic=False)
    cf(torch.ones(2))
    cf(torch.ones(3))

    def g(x):
        print("x")
        return x
    torch.compile(g)(torch.ones(1))
    err = capsys.readouterr().err
    assert "TRACED GRAPH" in err and "__compiled_fn_" in err
    assert "tensor 'x' size mismatch at index 0. expected 2, actual 3" in err
    assert "def fused_0_fwd" in err and "def fused_0_bwd0" in err
    assert "Graph Break Reason: call to builtin 'print'" in err


def test_reset_clears_the_cache():
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    cf = torch.compile(lambda x: x + 1, backend=counting)
    cf(torch.ones(1))
    torch._dynamo.reset()
    cf(torch.ones(1))
    assert len(graphs) == 2
