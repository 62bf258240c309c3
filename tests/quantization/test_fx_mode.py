"""FX graph-mode quantization (prepare_fx / convert_fx / QConfigMapping) against torch: the
same model, weights and calibration data give the same quantized outputs and graphs of the
same shape; the quantized:: operators the graphs call."""

import warnings

import numpy as np
import pytest

import glasstorch as gt
import glasstorch.ao.quantization.quantize_fx as gfx

torch = pytest.importorskip("torch")
import torch.ao.quantization.quantize_fx as tfx  # noqa: E402

warnings.filterwarnings("ignore", message="torch.quantize_per_tensor")
warnings.filterwarnings("ignore", message="Please use quant_min")


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(64, 10)
            self.head = nn.Linear(10, 10)
            self.sig = nn.Sigmoid()

        def forward(self, x):
            y = self.relu(self.bn(self.conv(x)))
            y = self.pool(y + y)
            z = self.fc(lib.flatten(y, 1))
            return self.sig(self.head(z)), lib.exp(z)

    return Net()


def _pair():
    torch.manual_seed(0)
    tm = _net(torch).eval()
    with torch.no_grad():
        tm.bn.running_mean.uniform_(-0.5, 0.5)
        tm.bn.running_var.uniform_(0.5, 1.5)
    gm = _net(gt).eval()
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, gm


def _quantize(lib, fx, model, mapping, data):
    prepared = fx.prepare_fx(model, mapping, (lib.from_numpy(data[:1]),))
    prepared(lib.from_numpy(data))
    return fx.convert_fx(prepared)


def _calls(gm):
    def name(n):
        if n.op == "call_function":
            return str(getattr(n.target, "__name__", n.target)).split(".")[-1]
        return n.target if n.op != "call_module" else type(gm.get_submodule(n.target)).__name__
    return [(n.op, name(n)) for n in gm.graph.nodes if n.op not in ("get_attr", "output")]


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_prepare_convert_matches_torch(backend):
    tm, gm = _pair()
    data = np.random.default_rng(0).standard_normal((8, 1, 8, 8)).astype(np.float32)
    tq = _quantize(torch, tfx, tm, torch.ao.quantization.get_default_qconfig_mapping(backend),
                   data)
    gq = _quantize(gt, gfx, gm, gt.ao.quantization.get_default_qconfig_mapping(backend), data)
    assert _calls(gq) == _calls(tq)
    assert repr(gq.conv) == repr(tq.conv) and repr(gq.fc) == repr(tq.fc)
    x = data[::-1].copy()
    (ts, te), (gs, ge) = tq(torch.from_numpy(x)), gq(gt.from_numpy(x))
    np.testing.assert_array_equal(gs.numpy(), ts.numpy())
    np.testing.assert_allclose(ge.numpy(), te.numpy(), rtol=1e-6)  # float exp after dequantize
    # the original model is left alone
    assert type(gm.conv) is gt.nn.Conv2d


def test_qconfig_mapping_selects_what_is_quantized():
    tm, gm = _pair()
    data = np.random.default_rng(1).standard_normal((4, 1, 8, 8)).astype(np.float32)
    maps = []
    for lib in (torch, gt):
        q = lib.ao.quantization
        maps.append(q.QConfigMapping().set_global(q.get_default_qconfig("x86"))
                    .set_module_name("head", None).set_object_type(lib.nn.Sigmoid, None))
    tq = _quantize(torch, tfx, tm, maps[0], data)
    gq = _quantize(gt, gfx, gm, maps[1], data)
    assert _calls(gq) == _calls(tq)
    assert type(gq.head) is gt.nn.Linear
    for t, g in zip(tq(torch.from_numpy(data)), gq(gt.from_numpy(data)), strict=True):
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_qconfig_mapping_api():
    q = gt.ao.quantization
    qc = q.get_default_qconfig("x86")
    m = q.QConfigMapping().set_global(qc).set_module_name("a.b", None) \
        .set_module_name_regex("enc.*", qc).set_object_type(gt.nn.Linear, qc)
    back = q.QConfigMapping.from_dict(m.to_dict())
    assert back.to_dict() == m.to_dict()
    assert m._qconfig_for("a.b.c", gt.nn.Linear) is None          # a parent's name wins
    assert m._qconfig_for("x", gt.nn.Linear) is qc
    assert list(m.to_dict()) == list(torch.ao.quantization.QConfigMapping().to_dict())
    with pytest.warns(FutureWarning, match="QConfigMapping"):
        gfx.prepare_fx(gt.nn.Sequential(gt.nn.Linear(2, 2)).eval(), {"": qc},
                       (gt.randn(1, 2),))
    with pytest.raises(RuntimeError, match="eval mode"):
        gfx.prepare_fx(gt.nn.Sequential(gt.nn.Linear(2, 2)), m, (gt.randn(1, 2),))


def test_fuse_fx_folds_batchnorm():
    tm, gm = _pair()
    fused = gfx.fuse_fx(gm)
    assert type(fused.conv).__name__ == "ConvReLU2d" and not hasattr(fused, "bn")
    assert type(tfx.fuse_fx(tm).conv).__name__ == "ConvReLU2d"
    x = gt.randn(2, 1, 8, 8)
    for a, b in zip(fused(x), gm(x), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_quantized_operators():
    x = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    tq = torch.quantize_per_tensor(torch.from_numpy(x), 0.05, 120, torch.quint8)
    gq = gt.quantize_per_tensor(gt.from_numpy(x), 0.05, 120, gt.quint8)
    for name in ("add", "add_relu", "mul"):
        t = getattr(torch.ops.quantized, name)(tq, tq, 0.1, 100)
        g = getattr(gt.ops.quantized, name)(gq, gq, 0.1, 100)
        np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())
    t = torch.ops.quantized.cat([tq, tq], 0, None, None)
    g = gt.ops.quantized.cat([gq, gq], 0, None, None)
    assert g.q_scale() == t.q_scale()
    np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())
    assert str(gt.ops.quantized.add.default._schema).startswith(
        "quantized::add(Tensor qa, Tensor qb, float scale, int zero_point)")
