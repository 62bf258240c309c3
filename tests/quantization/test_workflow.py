"""The eager-mode workflow against torch's x86/fbgemm engine: fuse, prepare, calibrate,
convert a small CNN (same int8 outputs), quantized kernels bit for bit, quantize_dynamic,
quantized state dicts moving between the two libraries."""

import io
import warnings

import numpy as np
import pytest

import glasstorch as gt
import glasstorch.ao.nn.quantized as gnnq
import glasstorch.ao.quantization as gq
import glasstorch.nn.intrinsic  # noqa: F401 - torch imports these aliases with torch.nn
import glasstorch.nn.quantized  # noqa: F401

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Please use quant_min")
warnings.filterwarnings("ignore", message="torch.quantize_per_tensor")


def _cnn(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = lib.quantization.QuantStub()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu1 = nn.ReLU()
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.relu2 = nn.ReLU()
            self.fc1 = nn.Linear(32, 16)
            self.relu3 = nn.ReLU()
            self.fc2 = nn.Linear(16, 10)
            self.dequant = lib.quantization.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            x = self.pool(self.relu1(self.bn1(self.conv1(x))))
            x = self.relu2(self.conv2(x))
            x = lib.flatten(x, 1)
            x = self.relu3(self.fc1(x))
            return self.dequant(self.fc2(x))

        def fuse_model(self):
            lib.quantization.fuse_modules(
                self, [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]],
                inplace=True)

    return Net()


def _pair_models(backend):
    torch.manual_seed(0)
    tm = _cnn(torch)
    with torch.no_grad():
        tm.bn1.running_mean.uniform_(-0.5, 0.5)
        tm.bn1.running_var.uniform_(0.5, 2)
    gm = _cnn(gt)
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    calib = [rng.normal(0, 1, (8, 1, 8, 8)).astype(np.float32) for _ in range(4)]
    out = []
    for lib, m in ((torch, tm), (gt, gm)):
        m.eval()
        m.fuse_model()
        m.qconfig = lib.quantization.get_default_qconfig(backend)
        p = lib.quantization.prepare(m)
        for c in calib:
            p(lib.tensor(c))
        out.append(lib.quantization.convert(p))
    return out


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_static_workflow_matches_torch(backend):
    # qnnpack's qconfig (per-tensor weights, full range) run on torch's x86 engine
    tq, gqm = _pair_models(backend)
    assert repr(gqm) == repr(tq)
    x = np.random.default_rng(1).normal(0, 1, (16, 1, 8, 8)).astype(np.float32)
    ty, gy = tq(torch.tensor(x)), gqm(gt.tensor(x))
    assert gy.dtype is gt.float32
    np.testing.assert_array_equal(gy.numpy(), ty.numpy())
    # intermediate quantized activations are the same integers
    tx = tq.conv1(tq.quant(torch.tensor(x)))
    gx = gqm.conv1(gqm.quant(gt.tensor(x)))
    np.testing.assert_array_equal(gx.int_repr().numpy(), tx.int_repr().numpy())
    assert gx.q_scale() == tx.q_scale() and gx.q_zero_point() == tx.q_zero_point()
    assert not hasattr(gqm.conv1, "qconfig") and not hasattr(gqm.quant, "activation_post_process")


def test_quantized_state_dict_both_ways():
    tq, gqm = _pair_models("x86")
    assert list(gqm.state_dict()) == list(tq.state_dict())
    x = np.random.default_rng(2).normal(0, 1, (4, 1, 8, 8)).astype(np.float32)
    want = tq(torch.tensor(x)).numpy()
    buf = io.BytesIO()
    torch.save(tq.state_dict(), buf)
    _, fresh = _pair_models("x86")
    fresh.load_state_dict(gt.load(io.BytesIO(buf.getvalue())))
    np.testing.assert_array_equal(fresh(gt.tensor(x)).numpy(), want)
    buf = io.BytesIO()
    gt.save(gqm.state_dict(), buf)
    t_fresh, _ = _pair_models("x86")
    t_fresh.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    np.testing.assert_array_equal(t_fresh(torch.tensor(x)).numpy(), want)


def _g(t):
    """glasstorch copy of a torch quantized tensor."""
    if t.qscheme() == torch.per_tensor_affine:
        return gt._make_per_tensor_quantized_tensor(gt.tensor(t.int_repr().numpy()),
                                                    t.q_scale(), t.q_zero_point())
    return gt._make_per_channel_quantized_tensor(
        gt.tensor(t.int_repr().numpy()), gt.tensor(t.q_per_channel_scales().numpy()),
        gt.tensor(t.q_per_channel_zero_points().numpy()), t.q_per_channel_axis())


@pytest.mark.parametrize("engine", ["x86", "fbgemm"])
def test_int8_kernels_bit_for_bit(engine):
    from glasstorch.ao.nn.quantized import _kernels as K
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        rng = np.random.default_rng(3)
        for trial in range(12):
            n, k, o = int(rng.integers(1, 6)), int(rng.integers(1, 50)), int(rng.integers(1, 12))
            xq = torch.quantize_per_tensor(torch.randn(n, k) * 2, float(rng.uniform(0.01, 0.1)),
                                           int(rng.integers(0, 256)), torch.quint8)
            if trial % 2:
                wq = torch.quantize_per_channel(
                    torch.randn(o, k) * 0.3, torch.tensor(rng.uniform(0.001, 0.01, o)),
                    torch.zeros(o, dtype=torch.long), 0, torch.qint8)
            else:
                wq = torch.quantize_per_tensor(torch.randn(o, k) * 0.3, 0.005, 0, torch.qint8)
            b = torch.randn(o) if trial % 3 else None
            osc, ozp = float(rng.uniform(0.02, 0.5)), int(rng.integers(0, 256))
            relu = trial % 4 == 0
            packed = torch.ops.quantized.linear_prepack(wq, b)
            op = torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear
            ty = op(xq, packed, osc, ozp)
            gb = None if b is None else gt.tensor(b.numpy())
            gy = K.linear(_g(xq), _g(wq), gb, osc, ozp, relu)
            np.testing.assert_array_equal(gy.int_repr().numpy(), ty.int_repr().numpy())
            # dynamic: float in, float out
            td = torch.ops.quantized.linear_dynamic(xq.dequantize(), packed, True)
            gd = K.linear_dynamic(gt.tensor(xq.dequantize().numpy()), _g(wq), gb, True)
            np.testing.assert_array_equal(gd.numpy(), td.numpy())
        for _ in range(6):
            c, o, h = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(5, 9))
            xq = torch.quantize_per_tensor(torch.randn(2, c, h, h), 0.05, int(rng.integers(0, 256)),
                                           torch.quint8)
            wq = torch.quantize_per_channel(
                torch.randn(o, c, 3, 3) * 0.3, torch.tensor(rng.uniform(0.001, 0.01, o)),
                torch.zeros(o, dtype=torch.long), 0, torch.qint8)
            b = torch.randn(o)
            stride, pad = int(rng.integers(1, 3)), int(rng.integers(0, 2))
            packed = torch.ops.quantized.conv2d_prepack(wq, b, [stride] * 2, [pad] * 2, [1, 1], 1)
            ty = torch.ops.quantized.conv2d(xq, packed, 0.2, 64)
            gy = K.conv(_g(xq), _g(wq), gt.tensor(b.numpy()), stride, pad, 1, 1, 0.2, 64)
            np.testing.assert_array_equal(gy.int_repr().numpy(), ty.int_repr().numpy())
    finally:
        torch.backends.quantized.engine = old


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(12, 20), nn.ReLU(), nn.Linear(20, 20), nn.GELU(),
                         nn.Linear(20, 5))


def test_quantize_dynamic_matches_torch():
    torch.manual_seed(1)
    tm = _mlp(torch)
    gm = _mlp(gt)
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tdq = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.Linear}, dtype=torch.qint8)
    gdq = gq.quantize_dynamic(gm, {gt.nn.Linear}, dtype=gt.qint8)
    assert repr(gdq) == repr(tdq)
    assert isinstance(gm[0], gt.nn.Linear)  # not in place by default
    x = np.random.default_rng(4).normal(0, 2, (7, 12)).astype(np.float32)
    np.testing.assert_array_equal(gdq(gt.tensor(x)).numpy(), tdq(torch.tensor(x)).numpy())
    buf = io.BytesIO()
    torch.save(tdq.state_dict(), buf)
    again = gq.quantize_dynamic(_mlp(gt))
    again.load_state_dict(gt.load(io.BytesIO(buf.getvalue())))
    np.testing.assert_array_equal(again(gt.tensor(x)).numpy(), tdq(torch.tensor(x)).numpy())


def test_fuse_modules_matches_torch_float():
    torch.manual_seed(2)
    tm = _cnn(torch).eval()
    with torch.no_grad():
        tm.bn1.running_mean.uniform_(-0.5, 0.5)
        tm.bn1.running_var.uniform_(0.5, 2)
    gm = _cnn(gt).eval()
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tf = torch.ao.quantization.fuse_modules(tm, [["conv1", "bn1", "relu1"], ["fc1", "relu3"]])
    gf = gq.fuse_modules(gm, [["conv1", "bn1", "relu1"], ["fc1", "relu3"]])
    assert repr(gf) == repr(tf)
    assert type(gm.bn1) is gt.nn.BatchNorm2d  # the original is untouched
    np.testing.assert_array_equal(gf.conv1[0].weight.detach().numpy(),
                                  tf.conv1[0].weight.detach().numpy())
    x = np.random.default_rng(5).normal(0, 1, (2, 1, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(gf(gt.tensor(x)).detach().numpy(),
                               tf(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="fuser method"):
        gq.fuse_modules(gm, ["conv1", "pool"])


def test_quantized_modules_errors_and_repr():
    lin = gnnq.Linear(4, 3)
    assert repr(lin) == repr(torch.ao.nn.quantized.Linear(4, 3))
    assert repr(gnnq.Conv2d(2, 3, 3, padding=1, bias=False)) == \
        repr(torch.ao.nn.quantized.Conv2d(2, 3, 3, padding=1, bias=False))
    with pytest.raises(NotImplementedError, match="quantized tensor"):
        lin(gt.randn(2, 4))
    assert gt.nn.quantized.Linear is gnnq.Linear
    assert gt.nn.intrinsic.LinearReLU is gt.ao.nn.intrinsic.LinearReLU
    q = gnnq.Quantize(0.1, 2, gt.quint8)
    assert repr(q) == repr(torch.ao.nn.quantized.Quantize(0.1, 2, torch.quint8))
    x = gt.tensor([0.5, -0.3])
    want = torch.ao.nn.quantized.DeQuantize()(torch.ao.nn.quantized.Quantize(0.1, 2, torch.quint8)(
        torch.tensor([0.5, -0.3])))
    np.testing.assert_array_equal(gnnq.DeQuantize()(q(x)).numpy(), want.numpy())


def test_backend_engine():
    qb = gt.backends.quantized
    assert qb.engine == "x86" and "fbgemm" in qb.supported_engines
    qb.engine = "fbgemm"
    assert qb.engine == "fbgemm"
    qb.engine = "x86"
    with pytest.raises(RuntimeError, match="not a valid value"):
        qb.engine = "foo"


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "batch_first": True},
                                {"bidirectional": True, "num_layers": 2}])
def test_quantize_dynamic_rnn(mode, kw):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(getattr(torch.nn, mode)(6, 10, **kw))
    gm = gt.nn.Sequential(getattr(gt.nn, mode)(6, 10, **kw))
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tdq = torch.ao.quantization.quantize_dynamic(tm)  # default spec includes LSTM and GRU
    gdq = gq.quantize_dynamic(gm)
    assert repr(gdq) == repr(tdq)
    x = np.random.default_rng(6).normal(0, 1, (5, 3, 6)).astype(np.float32)
    to, tstate = tdq(torch.tensor(x))
    go, gstate = gdq(gt.tensor(x))
    if mode == "GRU":
        tstate, gstate = (tstate,), (gstate,)
    # the int8 products match exactly; glasstorch's float32 sigmoid/tanh differ from torch's
    # by at most an ulp, which is all that remains
    for g, t in zip((go, *gstate), (to, *tstate), strict=True):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0, atol=1e-6)
    h0 = np.random.default_rng(7).normal(0, 1, tstate[0].shape).astype(np.float32)
    if mode == "GRU":
        np.testing.assert_allclose(gdq[0](gt.tensor(x), gt.tensor(h0))[0].numpy(),
                                   tdq[0](torch.tensor(x), torch.tensor(h0))[0].numpy(),
                                   rtol=0, atol=1e-6)
    sd = gdq.state_dict()
    fresh = gq.quantize_dynamic(gt.nn.Sequential(getattr(gt.nn, mode)(6, 10, **kw)))
    fresh.load_state_dict(sd)
    np.testing.assert_array_equal(fresh(gt.tensor(x))[0].numpy(), go.numpy())


@pytest.mark.parametrize("cell,kw", [("LSTMCell", {}), ("GRUCell", {}),
                                     ("RNNCell", {"nonlinearity": "relu"})])
def test_quantize_dynamic_cells(cell, kw):
    torch.manual_seed(1)
    tm = torch.nn.Sequential(getattr(torch.nn, cell)(6, 8, **kw))
    gm = gt.nn.Sequential(getattr(gt.nn, cell)(6, 8, **kw))
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tdq, gdq = torch.ao.quantization.quantize_dynamic(tm), gq.quantize_dynamic(gm)
    assert repr(gdq) == repr(tdq)
    x = np.random.default_rng(3).normal(0, 1, (4, 6)).astype(np.float32)
    h = np.random.default_rng(4).normal(0, 1, (4, 8)).astype(np.float32)
    state = (((torch.tensor(h), torch.tensor(h)),), ((gt.tensor(h), gt.tensor(h)),)) \
        if cell == "LSTMCell" else ((torch.tensor(h),), (gt.tensor(h),))
    for t_args, g_args in (((), ()), state):
        to = tdq[0](torch.tensor(x), *t_args)
        go = gdq[0](gt.tensor(x), *g_args)
        to, go = (to, go) if cell == "LSTMCell" else ((to,), (go,))
        for g, t in zip(go, to, strict=True):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=0, atol=1e-6)
    with pytest.raises(RuntimeError, match="inconsistent input_size"):
        gdq[0](gt.zeros(4, 5))
    with pytest.raises(AssertionError, match="bias must be True"):
        gq.quantize_dynamic(gt.nn.Sequential(getattr(gt.nn, cell)(6, 8, bias=False)))
    fresh = gq.quantize_dynamic(gt.nn.Sequential(getattr(gt.nn, cell)(6, 8, **kw)))
    fresh.load_state_dict(gdq.state_dict())
    np.testing.assert_array_equal(fresh(gt.tensor(x))[0].numpy(), gdq(gt.tensor(x))[0].numpy())


def _qat_net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = lib.ao.quantization.QuantStub()
            self.conv = nn.Conv2d(1, 4, 3)
            self.relu = nn.ReLU()
            self.fc = nn.Linear(4 * 6 * 6, 5)
            self.dequant = lib.ao.quantization.DeQuantStub()

        def forward(self, x):
            x = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(lib.flatten(x, 1)))

    return Net()


@pytest.mark.parametrize("backend,version", [("x86", 0), ("qnnpack", 0), ("x86", 1)])
def test_qat_workflow_matches_torch(backend, version):
    torch.manual_seed(0)
    tm = _qat_net(torch)
    gm = _qat_net(gt)
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(8)
    data = [(rng.normal(0, 1, (4, 1, 8, 8)).astype(np.float32), rng.integers(0, 5, 4))
            for _ in range(3)]
    res = []
    for lib, m in ((torch, tm), (gt, gm)):
        m.train()
        lib.ao.quantization.fuse_modules_qat(m, [["conv", "relu"]], inplace=True)
        m.qconfig = lib.ao.quantization.get_default_qat_qconfig(backend, version)
        p = lib.ao.quantization.prepare_qat(m)
        prepared = repr(p)
        opt = lib.optim.SGD(p.parameters(), lr=0.1)
        losses = []
        for x, y in data:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(p(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        p.eval()
        res.append((losses, prepared, lib.ao.quantization.convert(p)))
    (tl, tr, tq), (gl, gr, gqm) = res
    assert gr == tr
    np.testing.assert_allclose(gl, tl, rtol=1e-5)
    # training itself (float conv/linear backward, SGD) may differ from torch by float32
    # ulps, which can move a requantization tie: outputs agree within one output quantum
    x = data[0][0]
    tc, gc = tq.conv(tq.quant(torch.tensor(x))), gqm.conv(gqm.quant(gt.tensor(x)))
    ti, gi = tc.int_repr().numpy().astype(int), gc.int_repr().numpy().astype(int)
    assert np.abs(gi - ti).max() <= 1 and (gi == ti).mean() >= 0.95
    ty, gy = tq(torch.tensor(x)).numpy(), gqm(gt.tensor(x)).numpy()
    np.testing.assert_allclose(gy, ty, rtol=0, atol=tq.fc.scale * 1.001)


def test_fake_quantize_module_and_switches():
    t = torch.ao.quantization.default_per_channel_weight_fake_quant()
    g = gq.default_per_channel_weight_fake_quant()
    w = np.random.default_rng(9).normal(0, 1, (3, 5)).astype(np.float32)
    np.testing.assert_array_equal(g(gt.tensor(w)).numpy(), t(torch.tensor(w)).numpy())
    assert repr(g) == repr(t)
    m = gt.nn.Sequential(gq.FakeQuantize())
    m.apply(gq.disable_fake_quant)
    x = gt.randn(4)
    assert m(x) is x


@pytest.mark.parametrize("per_channel", [False, True])
def test_fused_moving_avg_fake_quantize_matches_torch(per_channel):
    def make(lib):
        q = lib.ao.quantization
        return (q.default_fused_per_channel_wt_fake_quant if per_channel
                else q.default_fused_act_fake_quant)()
    t, g = make(torch), make(gt)
    rng = np.random.default_rng(12)
    for step in range(4):
        x = rng.normal(0.2, 1 + step, (3, 7)).astype(np.float32)
        np.testing.assert_array_equal(g(gt.tensor(x)).numpy(), t(torch.tensor(x)).numpy())
        np.testing.assert_array_equal(g.scale.numpy(), t.scale.numpy())
        np.testing.assert_array_equal(g.zero_point.numpy(), t.zero_point.numpy())
    assert repr(g) == repr(t)
    for a, b in zip(g.calculate_qparams(), t.calculate_qparams()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _residual(lib):
    nn = lib.nn
    nnq = lib.ao.nn.quantized

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = lib.ao.quantization.QuantStub()
            self.conv = nn.Conv2d(3, 3, 3, padding=1)
            self.relu = nn.ReLU()
            self.skip = nnq.FloatFunctional()
            self.join = nnq.FloatFunctional()
            self.dequant = lib.ao.quantization.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            y = self.skip.add_relu(self.relu(self.conv(x)), x)
            return self.dequant(self.join.cat([y, x], 1))

    return Block()


def test_float_functional_add_cat_match_torch():
    torch.manual_seed(3)
    tm = _residual(torch).eval()
    gm = _residual(gt).eval()
    gm.load_state_dict({k: gt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(10)
    # 5x11x11 per image: the elementwise kernels' vector part and scalar tail both run
    xs = [rng.normal(0, 1, (2, 3, 11, 11)).astype(np.float32) for _ in range(3)]
    out = []
    for lib, m in ((torch, tm), (gt, gm)):
        m.qconfig = lib.ao.quantization.get_default_qconfig("x86")
        p = lib.ao.quantization.prepare(m)
        for x in xs:
            p(lib.tensor(x))
        out.append(lib.ao.quantization.convert(p))
    tq, gqm = out
    assert repr(gqm) == repr(tq)
    np.testing.assert_array_equal(gqm(gt.tensor(xs[0])).numpy(), tq(torch.tensor(xs[0])).numpy())
    with pytest.raises(RuntimeError, match="forward"):
        gnnq.FloatFunctional()(gt.ones(1))


def test_quantized_add_kernel_ties():
    from glasstorch.ao.nn.quantized import _kernels as K
    rng = np.random.default_rng(11)
    for trial in range(30):
        n = int(rng.integers(1, 150))
        s = float(rng.choice([0.1, 0.05, 1 / 3, 0.07]))
        za, zb, zo = (int(v) for v in rng.integers(0, 256, 3))
        a = torch.quantize_per_tensor(torch.randn(n) * 3, s, za, torch.quint8)
        b = torch.quantize_per_tensor(torch.randn(n) * 3, s, zb, torch.quint8)
        relu = trial % 2 == 0
        op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
        # output scale 2s: every odd sum is a rounding tie
        t = op(a, b, 2 * s, zo)
        g = K.add(_g(a), _g(b), 2 * s, zo, relu)
        np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())
