"""torch.export: ExportedProgram's graph, signature, state dict, module(), Dim and save/load,
compared with real torch where the two agree by design."""

import pytest

import glasstorch as torch
from glasstorch import nn
from glasstorch.export import Dim, export

real = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")


def _model(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = L.nn.Linear(3, 2)
            self.register_buffer("b", L.ones(2))

        def forward(self, x):
            return self.fc(x).relu() + self.b
    L.manual_seed(0)
    return M()


def test_signature_and_state_dict_match_torch():
    mine = export(_model(torch), (torch.ones(4, 3),))
    theirs = real.export.export(_model(real), (real.ones(4, 3),))
    assert str(mine.graph_signature) == str(theirs.graph_signature)
    assert list(mine.state_dict) == list(theirs.state_dict)
    assert [n.name for n in mine.graph.nodes if n.op == "placeholder"] == \
        [n.name for n in theirs.graph.nodes if n.op == "placeholder"]
    assert mine.graph_signature.parameters == theirs.graph_signature.parameters
    assert mine.graph_signature.buffers == theirs.graph_signature.buffers
    with pytest.raises(RuntimeError, match="exported_program.module"):
        mine(torch.ones(4, 3))


def test_module_computes_the_program_and_checks_shapes():
    model = _model(torch)
    ep = export(model, (torch.ones(4, 3),))
    m = ep.module()
    x = torch.randn(4, 3)
    assert torch.equal(m(x), model(x))
    assert sorted(m.state_dict()) == sorted(model.state_dict())
    lifted = ep.graph_module(*[ep.state_dict[s.target] for s in ep.graph_signature.input_specs
                               if s.target], x)
    assert isinstance(lifted, tuple) and torch.equal(lifted[0], model(x))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 4"):
        m(torch.ones(5, 3))


def test_dim_allows_a_range_of_sizes():
    model = _model(torch)
    batch = Dim("batch", min=2, max=10)
    ep = export(model, (torch.ones(4, 3),), dynamic_shapes={"x": {0: batch}})
    assert ep.range_constraints == {"batch": (2, 10)}
    assert ep.module()(torch.ones(6, 3)).shape == (6, 2)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] <= 10"):
        ep.module()(torch.ones(11, 3))
    assert repr(batch) == repr(real.export.Dim("batch", min=2, max=10))


def test_data_dependent_control_flow_is_unsupported():
    class M(nn.Module):
        def forward(self, x):
            return x + 1 if x.sum() > 0 else x - 1
    with pytest.raises(torch._dynamo.exc.Unsupported):
        export(M(), (torch.ones(2),))


def test_is_exporting_while_capturing():
    class M(nn.Module):
        def forward(self, x):
            return x + 1 if torch.compiler.is_exporting() else x - 1
    assert export(M(), (torch.zeros(1),)).module()(torch.zeros(1)).item() == 1.0


def test_save_load_round_trip_and_decompositions(tmp_path):
    model = _model(torch)
    ep = export(model, (torch.ones(4, 3),))
    path = tmp_path / "m.pt2"
    torch.export.save(ep, path)
    back = torch.export.load(path)
    x = torch.randn(4, 3)
    assert torch.equal(back.module()(x), model(x))
    assert str(back.graph_signature) == str(ep.graph_signature)
    assert torch.equal(ep.run_decompositions().module()(x), model(x))
