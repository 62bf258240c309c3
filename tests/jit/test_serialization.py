"""torch.jit.save / torch.jit.load in TorchScript's archive format, across libraries: a model
traced or scripted in glasstorch and saved loads in real torch's ``torch.jit.load`` and gives
the same outputs, and archives written by real torch load in glasstorch."""

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import glasstorch
from tests.jit import _twin

torch = pytest.importorskip("torch")

SOURCE = '''
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 8)
        self.l2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(y, 1))


def branchy(x, n: int):
    y = x
    for i in range(n):
        if bool(y.sum() > 0):
            y = y * 2.0 - i
        else:
            y = y + 1.0
    return y


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.k = 2

    def forward(self, x, n: int):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        i = 0
        while i < n:
            if bool(x.mean() > 0):
                x = x * self.k
            else:
                x = x - 1.0
            i += 1
        return x


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.wx = nn.Linear(3, 5)
        self.wh = nn.Linear(5, 5, bias=False)

    def forward(self, x):
        h = torch.zeros_like(self.wx(x[0]))
        outs = []
        for t in range(x.size(0)):
            h = torch.tanh(self.wx(x[t]) + self.wh(h))
            outs.append(h)
        return torch.stack(outs), h


class Offset(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))
        self.offset = torch.tensor([1.0, -1.0])    # a plain tensor: a trace constant

    def forward(self, x):
        return (x + self.offset) * self.scale, x * 2.0


class SeqNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Dropout(0.1), nn.Linear(4, 2))
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x, y: Optional[torch.Tensor] = None):
        z = torch.softmax(self.bn(self.seq(x)), -1)
        if y is not None:
            z = z + y
        return z


class Containers(nn.Module):
    def forward(self, x):
        out: List[torch.Tensor] = []
        d: Dict[str, torch.Tensor] = {}
        for i in range(3):
            out.append(x * i)
            d[str(i)] = x + i
        t = (x.shape[0], x.sum())
        return torch.cat(out, 0), d["1"], t[1]


class EmbedGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)
        self.norm = nn.LayerNorm(3)
        self.cell = nn.GRUCell(3, 4)

    def forward(self, idx):
        e = self.norm(self.emb(idx))
        h = torch.zeros(idx.shape[1], 4)
        for t in range(e.size(0)):
            h = self.cell(e[t], h)
        return torch.log_softmax(h, -1)


class LSTMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x):
        return self.lstm(x)[0]


class Attrs(nn.Module):
    def __init__(self):
        super().__init__()
        self.sizes = [1, 2]
        self.scale = 0.5
        self.name = "hi"
        self.table = {"a": 1.5}
        self.flag = True

    def forward(self, x):
        y = x * self.scale * self.table["a"]
        if self.flag and self.name == "hi":
            y = y + self.sizes[1]
        return y


class Ignored(nn.Module):
    @torch.jit.ignore
    def helper(self, x):
        return x + 1

    def forward(self, x):
        return self.helper(x) * 2


@torch.jit.interface
class Doubler(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class Impl(nn.Module):
    def forward(self, x):
        return x * 2.0


class WithInterface(nn.Module):
    part: Doubler

    def __init__(self):
        super().__init__()
        self.part = Impl()

    def forward(self, x):
        return self.part.forward(x) + 1.0


class Functionals(nn.Module):
    def forward(self, x):
        y = F.leaky_relu(F.gelu(x), 0.1) + F.elu(x) + F.softplus(x) + F.hardtanh(x)
        y = F.layer_norm(F.pad(y, (1, 1)), (6,))
        z = F.normalize(F.avg_pool1d(y.unsqueeze(0), 2).squeeze(0))
        return F.log_softmax(z, -1), F.cross_entropy(y, torch.tensor([0, 1, 2]))


def first_in_branches(x, flag: bool):
    if flag:
        y = x * 2.0
    else:
        y = None
    if y is None:
        return x
    return y + 1.0


class Calls(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, n: int):
        return branchy(self.lin(x), n)
'''

CASES = {   # name: (what, how, example inputs as numpy, extra int args)
    "mlp_trace": ("MLP", "trace", [(2, 3)], []),
    "mlp_script": ("MLP", "script", [(2, 3)], []),
    "cnn_trace": ("CNN", "trace", [(2, 1, 8, 8)], []),
    "cnn_script": ("CNN", "script", [(2, 1, 8, 8)], []),
    "branchy_script": ("branchy", "script", [(3,)], [3]),
    "stack_script": ("Stack", "script", [(2, 4)], [3]),
    "recurrent_trace": ("Recurrent", "trace", [(4, 2, 3)], []),
    "recurrent_script": ("Recurrent", "script", [(4, 2, 3)], []),
    "calls_script": ("Calls", "script", [(2, 3)], [2]),
    "offset_trace": ("Offset", "trace", [(3, 2)], []),
    "seqnorm_trace": ("SeqNorm", "trace", [(2, 3)], []),
    "seqnorm_script": ("SeqNorm", "script", [(2, 3)], []),
    "containers_script": ("Containers", "script", [(2, 3)], []),
    "embedgru_trace": ("EmbedGRU", "trace", [(4, 2)], []),
    "lstm_trace": ("LSTMNet", "trace", [(5, 2, 3)], []),
    "attrs_script": ("Attrs", "script", [(2,)], []),
    "interface_script": ("WithInterface", "script", [(2,)], []),
    "functionals_trace": ("Functionals", "trace", [(3, 4)], []),
}


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    return _twin.load(tmp_path_factory.mktemp("ser"), "serial_models", SOURCE)


def _build(lib, mod, case, seed=0):
    what, how, shapes, ints = CASES[case]
    rng = np.random.default_rng(seed)
    if what == "EmbedGRU":
        xs = [lib.from_numpy(rng.integers(0, 10, shapes[0]))]
    else:
        xs = [lib.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    lib.manual_seed(seed)
    obj = getattr(mod, what)
    if isinstance(obj, type):
        obj = obj().eval()
    if how == "trace":
        compiled = lib.jit.trace(obj, tuple(xs))
    else:
        compiled = lib.jit.script(obj)
    return compiled, xs + ints


def _np(out):
    if isinstance(out, (tuple, list)):
        return [_np(o) for o in out]
    return out.detach().numpy()


def _assert_close(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y)
        return
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _to(lib, args):
    return [lib.from_numpy(a.detach().numpy().copy()) if hasattr(a, "detach") else a
            for a in args]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", sorted(CASES))
def test_glasstorch_archive_loads_in_torch(twins, tmp_path, case):
    gt_mod, _ = twins
    m, args = _build(glasstorch, gt_mod, case)
    path = tmp_path / "m.pt"
    glasstorch.jit.save(m, path)
    loaded = torch.jit.load(str(path))
    _assert_close(_np(loaded(*_to(torch, args))), _np(m(*args)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_archive_loads_in_glasstorch(twins, tmp_path, case):
    _, th_mod = twins
    m, args = _build(torch, th_mod, case)
    path = tmp_path / "m.pt"
    torch.jit.save(m, str(path))
    loaded = glasstorch.jit.load(path)
    _assert_close(_np(loaded(*_to(glasstorch, args))), _np(m(*args)))
    # and back: what glasstorch loaded saves again in a form torch reads
    buf = io.BytesIO()
    glasstorch.jit.save(loaded, buf)
    buf.seek(0)
    _assert_close(_np(torch.jit.load(buf)(*_to(torch, args))), _np(m(*args)))


def _np_out(out):
    return [_np(o) for o in out] if isinstance(out, tuple) else _np(out)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_archive_layout_and_extra_files(twins, tmp_path):
    gt_mod, _ = twins
    m, args = _build(glasstorch, gt_mod, "offset_trace")
    path = tmp_path / "model.pt"
    m.save(path, _extra_files={"meta.txt": "hello", "raw": b"\x00\x01"})
    names = set(zipfile.ZipFile(path).namelist())
    for rec in ("data.pkl", "constants.pkl", "version", "byteorder", "data/0", "constants/0",
                "extra/meta.txt", "extra/raw", "code/__torch__/serial_models_gt.py"):
        assert f"model/{rec}" in names
    extra = {"meta.txt": "", "raw": "", "missing": ""}
    torch.jit.load(str(path), _extra_files=extra)
    assert extra == {"meta.txt": b"hello", "raw": b"\x00\x01", "missing": b""}
    extra = {"meta.txt": "", "missing": ""}
    back = glasstorch.jit.load(path, map_location="cpu", _extra_files=extra)
    assert extra == {"meta.txt": b"hello", "missing": b""}
    assert [n for n, _ in back.named_buffers()] == ["scale"]
    _assert_close(_np_out(back(*args)), _np_out(m(*args)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_loaded_module_has_torch_parameters(twins, tmp_path):
    _, th_mod = twins
    m, _ = _build(torch, th_mod, "stack_script")
    path = tmp_path / "m.pt"
    m.save(str(path))
    got = glasstorch.jit.load(path)
    want = torch.jit.load(str(path))
    assert [(n, p.shape[0], p.requires_grad) for n, p in got.named_parameters()] == \
        [(n, p.shape[0], p.requires_grad) for n, p in want.named_parameters()]
    assert got.k == 2 and isinstance(got, glasstorch.jit.ScriptModule)
    assert "def forward" in got.code


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_script_function_archives(twins, tmp_path):
    gt_mod, th_mod = twins
    x = np.array([0.5, -1.0, 2.0], np.float32)
    sf = glasstorch.jit.script(gt_mod.branchy)
    sf.save(tmp_path / "f.pt")
    out = torch.jit.load(str(tmp_path / "f.pt"))(torch.from_numpy(x), 3)
    _assert_close(out.numpy(), _np(sf(glasstorch.from_numpy(x), 3)))
    torch.jit.script(th_mod.branchy).save(str(tmp_path / "g.pt"))
    back = glasstorch.jit.load(tmp_path / "g.pt")
    _assert_close(_np(back(glasstorch.from_numpy(x), 3)), out.numpy())


def _rewrite(path, name, edit):
    """A copy of archive ``path`` with record ``name`` passed through ``edit``."""
    src = zipfile.ZipFile(path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, edit(data) if info.filename.endswith(name) else data)
    buf.seek(0)
    return buf


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_loading_never_runs_archive_python(twins, tmp_path):
    gt_mod, _ = twins
    m, _ = _build(glasstorch, gt_mod, "mlp_trace")
    path = tmp_path / "m.pt"
    glasstorch.jit.save(m, path)
    marker = tmp_path / "pwned"
    bad_code = [
        f"    __import__('os').system('touch {marker}')\n",
        f"    torch.save(x, '{marker}')\n",
        f"    open('{marker}', 'w')\n",
        "    x.__class__.__init__(x)\n",
    ]
    for line in bad_code:
        def edit(data, line=line):
            text = data.decode()
            head, sep, rest = text.partition("x: Tensor) -> Tensor:\n")
            return (head + sep + line + rest).encode()
        with pytest.raises(RuntimeError):
            glasstorch.jit.load(_rewrite(path, "serial_models_gt.py", edit))
        assert not marker.exists()
    evil = pickle.dumps(os.system)            # a GLOBAL the unpickler must refuse
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        glasstorch.jit.load(_rewrite(path, "/data.pkl", lambda data: evil))


def test_load_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        glasstorch.jit.load(tmp_path / "nope.pt")
    glasstorch.save({"a": glasstorch.ones(2)}, tmp_path / "ck.pt")
    with pytest.raises(RuntimeError, match="constants.pkl"):
        glasstorch.jit.load(tmp_path / "ck.pt")
    with pytest.raises(AttributeError):
        glasstorch.jit.save(glasstorch.nn.Linear(2, 2), tmp_path / "x.pt")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_freeze_traced_module_folds_parameters(twins, tmp_path):
    gt_mod, th_mod = twins
    m, args = _build(glasstorch, gt_mod, "seqnorm_trace")
    with pytest.raises(RuntimeError, match="eval mode"):
        glasstorch.jit.freeze(m.train())
    m.eval()
    frozen = glasstorch.jit.freeze(m)
    want = _np(m(*args))
    assert list(frozen.named_parameters()) == [] and "CONSTANTS.c0" in frozen.code
    with glasstorch.no_grad():               # a snapshot: later changes do not reach it
        m.seq[0].weight.add_(1.0)
    _assert_close(_np(frozen(*args)), want)
    frozen.save(tmp_path / "f.pt")           # constants go to constants.pkl, torch reads it
    _assert_close(_np(torch.jit.load(str(tmp_path / "f.pt"))(*_to(torch, args))), want)
    # torch's frozen archives load in glasstorch too
    tm, targs = _build(torch, th_mod, "seqnorm_trace")
    torch.jit.freeze(tm.eval()).save(str(tmp_path / "tf.pt"))
    _assert_close(_np(glasstorch.jit.load(tmp_path / "tf.pt")(*_to(glasstorch, targs))),
                  _np(tm(*targs)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_optimize_for_inference(twins):
    gt_mod, _ = twins
    m, args = _build(glasstorch, gt_mod, "seqnorm_script")
    opt = glasstorch.jit.optimize_for_inference(m.train())
    assert not m.training and not opt.training     # as torch: mod.eval() first
    _assert_close(_np(opt(*args)), _np(m(*args)))
    with pytest.raises(RuntimeError, match="expects a ScriptModule"):
        glasstorch.jit.optimize_for_inference(gt_mod.MLP())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torch_scripted_rnn_cell_loop_loads(twins, tmp_path):
    # torch's scripted nn.GRUCell code: Optional refinement, unchecked_cast, uninitialized
    # values on raising paths and a name first assigned in each branch with its own type
    _, th_mod = twins
    m, args = _build(torch, th_mod, "embedgru_trace")
    scripted = torch.jit.script(m)
    scripted.save(str(tmp_path / "g.pt"))
    back = glasstorch.jit.load(tmp_path / "g.pt")
    _assert_close(_np(back(*_to(glasstorch, args))), _np(scripted(*args)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_branch_local_names_unify_as_in_torch(twins):
    gt_mod, th_mod = twins
    g = glasstorch.jit.script(gt_mod.first_in_branches)
    t = torch.jit.script(th_mod.first_in_branches)
    x = np.array([1.0, -2.0], np.float32)
    for flag in (True, False):
        _assert_close(_np(g(glasstorch.from_numpy(x), flag)),
                      _np(t(torch.from_numpy(x), flag)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_python_calls_cannot_be_saved(twins):
    for lib, mod in zip((glasstorch, torch), twins):
        m = lib.jit.script(mod.Ignored())
        with pytest.raises(RuntimeError, match="Could not export Python function call 'helper'"):
            lib.jit.save(m, io.BytesIO())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_interface_marks_classes_only(twins):
    gt_mod, th_mod = twins
    assert gt_mod.Doubler.__torch_script_interface__ == \
        th_mod.Doubler.__torch_script_interface__.replace("_th", "_gt")
    for lib in (glasstorch, torch):
        with pytest.raises(RuntimeError, match="interface must be applied to a class"):
            lib.jit.interface(lambda x: x)
