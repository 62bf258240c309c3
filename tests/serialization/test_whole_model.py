"""Whole-model checkpoints (``torch.save(model)``) move both ways between torch and glasstorch,
loaded under the ``safe_globals`` list torch's own warning recommends."""

import io
import sys

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

_X = np.random.default_rng(0).standard_normal((2, 5, 4)).astype("float32")


def doubling_hook(module, inputs, output):
    return output * 2


def _net_class(lib):
    """The same user model class, written against either library (as a user's file is)."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 8, batch_first=True)
            self.gru = nn.GRU(8, 8, num_layers=2, bidirectional=True, batch_first=True)
            self.enc = nn.TransformerEncoderLayer(16, 2, 16, batch_first=True, dropout=0.0)
            self.seq = nn.Sequential(nn.Linear(16, 8), nn.ReLU())
            self.heads = nn.ModuleList([nn.Linear(8, 2)])
            self.norms = nn.ModuleDict({"ln": nn.LayerNorm(2), "bn": nn.BatchNorm1d(2)})
            self.register_buffer("steps", lib.arange(3.0))

        def forward(self, x):
            h, _ = self.rnn(x)
            h, _ = self.gru(h)
            h = self.heads[0](self.seq(self.enc(h)))
            return self.norms["bn"](self.norms["ln"](h).transpose(1, 2)) + self.steps.sum()

    Net.__qualname__ = "Net"
    return Net


def _allowed(lib):
    nn = lib.nn
    return [Net, nn.LSTM, nn.GRU, nn.TransformerEncoderLayer, nn.MultiheadAttention,
            nn.modules.linear.NonDynamicallyQuantizableLinear, nn.Linear, nn.Sequential, nn.ReLU,
            nn.ModuleList, nn.ModuleDict, nn.LayerNorm, nn.BatchNorm1d, nn.Dropout,
            nn.functional.relu, doubling_hook, set]


Net = None  # the class pickles as this module's Net; each library gets its own


def _use(lib):
    global Net
    Net = _net_class(lib)
    Net.__module__ = __name__
    return Net


@pytest.mark.parametrize("src,dst", [(torch, gt), (gt, torch), (gt, gt)],
                         ids=["torch-to-glasstorch", "glasstorch-to-torch", "glasstorch"])
def test_whole_model_moves_between_libraries(src, dst):
    _use(src)
    src.manual_seed(0)
    model = Net().eval()
    model.enc.register_forward_hook(doubling_hook)
    with src.no_grad():
        expected = model(src.from_numpy(_X)).numpy()
    buf = io.BytesIO()
    src.save(model, buf)
    _use(dst)
    with pytest.raises(Exception, match="GLOBAL"):  # not allowed by default in either
        dst.load(io.BytesIO(buf.getvalue()))
    with dst.serialization.safe_globals(_allowed(dst)):
        loaded = dst.load(io.BytesIO(buf.getvalue()))
    assert type(loaded) is Net and len(loaded.enc._forward_hooks) == 1
    with dst.no_grad():
        got = loaded(dst.from_numpy(_X)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-6)


def test_glasstorch_pickles_name_only_torchs_globals():
    import pickletools
    import zipfile
    _use(gt)
    model = Net()
    opt = gt.optim.Adam(model.parameters())
    sched = gt.optim.lr_scheduler.StepLR(opt, 2)
    for obj in (model, opt, sched):
        buf = io.BytesIO()
        gt.save(obj, buf)
        with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
            data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
        names = {str(arg).split()[0] for op, arg, _ in pickletools.genops(data)
                 if op.name == "GLOBAL"}
        assert all(n == __name__ or n.split(".")[0] in ("torch", "collections", "__builtin__")
                   for n in names), names


@pytest.mark.filterwarnings("ignore:Detected call of")
def test_optimizer_and_scheduler_objects_load_in_torch():
    _use(gt)
    model = gt.nn.Linear(3, 2)
    opt = gt.optim.Adam(model.parameters(), lr=0.1)
    model(gt.ones(1, 3)).sum().backward()
    opt.step()
    sched = gt.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    sched.step()
    buf = io.BytesIO()
    gt.save({"opt": opt, "sched": sched}, buf)
    theirs = torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(theirs["opt"]) is torch.optim.Adam
    assert theirs["sched"].last_epoch == 1 and theirs["opt"].param_groups[0]["lr"] == 0.1
    state = next(iter(theirs["opt"].state.values()))
    assert state["exp_avg"].shape == (2, 3)


def teardown_module():
    sys.modules[__name__].Net = None
