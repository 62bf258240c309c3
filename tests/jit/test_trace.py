"""torch.jit.trace in glasstorch against real torch: the same functions and modules traced by
both, compared on outputs, warnings and graph contents."""

import warnings

import pytest

import glasstorch

from ._twin import close, copy_weights, load, to_torch

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SOURCE = '''
def branchy(x, y):
    if bool(x.sum() > 0):
        return torch.relu(x) + y, x * 2
    return x - y, x


def item_user(x):
    return x * x.sum().item()


def list_out(x):
    return [x, x + 1]


def dict_out(x):
    return {"a": x}


def noisy(x):
    return x + torch.rand_like(x)


def probe(x):
    return x + 1 if torch.jit.is_tracing() else x - 1


@torch.jit.script
def signed(x):
    if bool(x.sum() > 0):
        return x * 2
    return x * 2 - 0.0 + x * 0 + x


def uses_signed(x):
    return signed(x) + 0


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.layers = nn.ModuleList([nn.Linear(12, 12), nn.Linear(12, 12)])
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2).flatten(1)
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return self.fc(x)


class TwoInputs(nn.Module):
    def forward(self, x, y):
        return x * y + x


class Methods(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x)

    def pair(self, p: Tuple[torch.Tensor, torch.Tensor]):
        a, b = p
        return a * b + self.lin.bias
'''


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    return load(tmp_path_factory.mktemp("jit_trace"), "trace_src", SOURCE)


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [x for x in w if x.category.__name__ == "TracerWarning"]


def test_function_trace_freezes_the_branch_taken_and_warns(twins):
    g, t = twins
    args_g = (glasstorch.ones(2, 3), glasstorch.ones(2, 3))
    args_t = (torch.ones(2, 3), torch.ones(2, 3))
    tg, wg = caught(lambda: glasstorch.jit.trace(g.branchy, args_g))
    tt, wt = caught(lambda: torch.jit.trace(t.branchy, args_t))
    assert isinstance(tg, glasstorch.jit.ScriptFunction)
    assert any("Converting a tensor to a Python boolean" in str(x.message) for x in wt)
    assert any("Converting a tensor to a Python boolean" in str(x.message) for x in wg)
    assert all(issubclass(x.category, glasstorch.jit.TracerWarning) for x in wg)
    neg_g, neg_t = -glasstorch.ones(2, 3), -torch.ones(2, 3)
    # the traced path is the positive one, even for inputs that would take the other
    assert close(tg(neg_g, args_g[1]), tt(neg_t, args_t[1]))
    assert not close(tg(neg_g, args_g[1]), g.branchy(neg_g, args_g[1]))
    graph = str(tg.graph)
    header = "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),"
    assert graph.startswith(header) and str(tt.graph).startswith(header)
    assert "aten::relu" in graph and "prim::TupleConstruct" in graph
    assert "aten::sum" not in graph          # dead code of the condition is removed
    assert tg.code.startswith("def branchy(x: Tensor,\n    y: Tensor) -> Tuple[Tensor, Tensor]:")


def test_item_becomes_a_constant_with_a_warning(twins):
    g, t = twins
    tg, wg = caught(lambda: glasstorch.jit.trace(g.item_user, (glasstorch.ones(2),)))
    tt, wt = caught(lambda: torch.jit.trace(t.item_user, (torch.ones(2),)))
    needle = "Converting a tensor to a Python number"
    assert any(needle in str(x.message) for x in wg) and any(needle in str(x.message) for x in wt)
    assert close(tg(glasstorch.ones(2) * 2), tt(torch.ones(2) * 2))


def test_cnn_module_trace_matches_torch_and_shares_parameters(twins):
    g, t = twins
    mg, mt = g.CNN().eval(), t.CNN().eval()
    copy_weights(mg, mt)
    x = glasstorch.randn(2, 1, 6, 6)
    tg = glasstorch.jit.trace(mg, x)
    tt = torch.jit.trace(mt, to_torch(x))
    assert isinstance(tg, glasstorch.jit.ScriptModule)
    assert type(tg).__name__ == type(tt).__name__ == "TopLevelTracedModule"
    x2 = glasstorch.randn(3, 1, 6, 6)
    assert close(tg(x2), tt(to_torch(x2)))
    assert tg.conv.weight is mg.conv.weight
    assert list(tg.state_dict()) == list(tt.state_dict())
    graph = str(tg.graph)
    assert graph.startswith("graph(%self.1 : __torch__.CNN,") or "__torch__" in graph
    for kind in ("aten::conv2d", "aten::batch_norm", "aten::linear", 'prim::GetAttr[name="fc"]'):
        assert kind in graph
    assert tg.code.startswith("def forward(self,\n    x: Tensor) -> Tensor:")
    with glasstorch.no_grad():
        mg.fc.bias.add_(1.0)                   # the traced module reads the same tensors
    assert close(tg(x2), mg(x2))


def test_lstm_trace(twins):
    lg = glasstorch.nn.LSTM(3, 4)
    lt = torch.nn.LSTM(3, 4)
    copy_weights(lg, lt)
    x = glasstorch.randn(5, 2, 3)
    tg = glasstorch.jit.trace(lg, x)
    tt = torch.jit.trace(lt, to_torch(x))
    x2 = glasstorch.randn(5, 2, 3)
    assert close(tg(x2), tt(to_torch(x2)))
    assert close(tg(x2), lg(x2))


def test_container_outputs_and_strict(twins):
    g, t = twins
    x = glasstorch.ones(2)
    for lib, mod, inp in ((glasstorch, g, x), (torch, t, torch.ones(2))):
        with pytest.raises(RuntimeError, match="Encountering a dict at the output"):
            lib.jit.trace(mod.dict_out, (inp,))
        out, w = caught(lambda lib=lib, mod=mod, inp=inp: lib.jit.trace(mod.list_out, (inp,)))
        assert any("Encountering a list at the output" in str(m.message) for m in w)
        assert close(list(out(inp)), [inp, inp + 1]) if lib is glasstorch else True
        loose = lib.jit.trace(mod.dict_out, (inp,), strict=False)
        assert list(loose(inp)) == ["a"]


def test_check_trace_reports_nondeterminism(twins):
    g, t = twins
    _, wg = caught(lambda: glasstorch.jit.trace(g.noisy, (glasstorch.ones(2),)))
    _, wt = caught(lambda: torch.jit.trace(t.noisy, (torch.ones(2),)))
    needle = "does not match the corresponding output of the Python function"
    assert any(needle in str(x.message) for x in wt)
    assert any(needle in str(x.message) for x in wg)
    _, quiet = caught(lambda: glasstorch.jit.trace(g.noisy, (glasstorch.ones(2),),
                                                   check_trace=False))
    assert not quiet


def test_is_tracing_during_the_recorded_run_only(twins):
    g, t = twins
    tg = glasstorch.jit.trace(g.probe, (glasstorch.zeros(1),))
    tt = torch.jit.trace(t.probe, (torch.zeros(1),))
    assert close(tg(glasstorch.zeros(1)), tt(torch.zeros(1)))
    assert tg(glasstorch.zeros(1)).item() == 1.0
    assert not glasstorch.jit.is_tracing()
    assert g.probe(glasstorch.zeros(1)).item() == -1.0


def test_trace_module_several_methods_and_tuple_inputs(twins):
    g, t = twins
    mg, mt = g.Methods(), t.Methods()
    copy_weights(mg, mt)
    ex_g = {"forward": glasstorch.ones(1, 2), "pair": ((glasstorch.ones(2), glasstorch.ones(2)),)}
    ex_t = {"forward": torch.ones(1, 2), "pair": ((torch.ones(2), torch.ones(2)),)}
    tg, tt = glasstorch.jit.trace_module(mg, ex_g), torch.jit.trace_module(mt, ex_t)
    a, b = glasstorch.randn(2), glasstorch.randn(2)
    assert close(tg.pair((a, b)), tt.pair((to_torch(a), to_torch(b))))
    x = glasstorch.randn(3, 2)
    assert close(tg(x), tt(to_torch(x)))
    assert "prim::TupleUnpack" in str(tg.pair.graph)


def test_example_kwarg_inputs(twins):
    g, t = twins
    kg = {"x": glasstorch.ones(2) * 2, "y": glasstorch.ones(2) * 3}
    kt = {"x": torch.ones(2) * 2, "y": torch.ones(2) * 3}
    tg = glasstorch.jit.trace(g.TwoInputs(), example_kwarg_inputs=kg)
    tt = torch.jit.trace(t.TwoInputs(), example_kwarg_inputs=kt)
    assert close(tg(glasstorch.ones(2), glasstorch.ones(2) * 5),
                 tt(torch.ones(2), torch.ones(2) * 5))
    assert close(tg(x=glasstorch.ones(2), y=glasstorch.ones(2)),
                 tt(x=torch.ones(2), y=torch.ones(2)))


def test_scripted_code_called_while_tracing_keeps_its_control_flow(twins):
    g, t = twins
    outs = []
    for lib, mod in ((glasstorch, g), (torch, t)):
        sf = lib.jit.script(mod.signed)
        traced = lib.jit.trace(mod.uses_signed, (lib.ones(2),))
        outs.append([traced(lib.ones(2) * k) for k in (3.0, -3.0)])
        assert "prim::CallFunction" in str(traced.graph) or lib is torch
        assert sf(-lib.ones(2)).tolist() == [-3.0, -3.0]
    assert close(outs[0], outs[1])
    assert outs[0][1].tolist() == [-9.0, -9.0]          # the other branch, after tracing


def test_script_if_tracing():
    @glasstorch.jit.script_if_tracing
    def pick(x):
        return x + 1

    assert pick(glasstorch.zeros(1)).item() == 1.0
    assert pick.__script_if_tracing_wrapper
