"""glasstorch.profiler: events, nesting, tables, chrome trace, schedule, restoration."""

import collections
import json
import sys
import types

import pytest
import torch as real_torch

import glasstorch as torch
from glasstorch import profiler
from glasstorch.autograd import engine
from glasstorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function
from glasstorch.utils.data import DataLoader, TensorDataset


def _train(prof, steps=3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(4 * steps, 8), torch.randint(0, 3, (4 * steps,)))
    for x, y in DataLoader(data, batch_size=4):
        with record_function("forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        prof.step()


def _nested(outer, inner):
    return outer.thread == inner.thread and outer.start_us <= inner.start_us and \
        inner.end_us <= outer.end_us + 1e-3


def test_events_nesting_and_restoration(tmp_path):
    saved = (torch.add, torch.Tensor.__add__, torch.Tensor.sum, torch.nn.functional.linear,
             engine._call_node, torch.optim.SGD.step)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 profile_memory=True) as prof:
        _train(prof)
    assert saved == (torch.add, torch.Tensor.__add__, torch.Tensor.sum,
                     torch.nn.functional.linear, engine._call_node, torch.optim.SGD.step)
    assert profiler.profiler._recorder[0] is None
    events = prof.events()
    names = {e.name for e in events}
    for expected in ("aten::linear", "aten::cross_entropy", "AddmmBackward0",
                     "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
                     "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                     "forward", "ProfilerStep#0", "ProfilerStep#2"):
        assert expected in names, expected
    fwd = [e for e in events if e.name == "forward"]
    lin = [e for e in events if e.name == "aten::linear"]
    assert len(fwd) == 3 and len(lin) == 6
    assert all(any(_nested(f, a) for f in fwd) for a in lin)
    step0 = next(e for e in events if e.name == "ProfilerStep#0")
    assert any(_nested(step0, e) for e in events if e.name == "AddmmBackward0")
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9
    assert lin[0].input_shapes == [[4, 8], [16, 8], [16]]

    avg = {a.key: a for a in prof.key_averages()}
    assert avg["aten::linear"].count == 6
    assert avg["forward"].cpu_time_total >= avg["aten::linear"].cpu_time_total
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    for col in ("Self CPU %", "CPU total", "# of Calls", "CPU Mem", "Self CPU time total"):
        assert col in table
    rows = [ln for ln in table.splitlines() if ln.strip() and not ln.startswith("-")]
    assert len(rows) == 1 + 5 + 1  # header, 5 rows, footer
    shaped = prof.key_averages(group_by_input_shape=True).table(row_limit=3)
    assert "Input Shapes" in shaped

    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    xs = [ev for ev in doc["traceEvents"] if ev["ph"] == "X"]
    assert len(xs) == len(events)
    for ev in xs:
        assert {"name", "ts", "dur", "pid", "tid", "cat"} <= set(ev)
        assert isinstance(ev["ts"], (int, float)) and ev["dur"] >= 0
    assert {"cpu_op", "autograd", "user_annotation", "dataloader"} <= {ev["cat"] for ev in xs}


def test_no_recording_outside_and_nested_record_function():
    a = torch.ones(3)
    with record_function("outside"):  # no profiler: a no-op
        a + a
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                (a * 2).sum()
    ev = {e.name: e for e in prof.events()}
    assert _nested(ev["outer"], ev["inner"]) and _nested(ev["inner"], ev["aten::sum"])
    assert "outside" not in ev
    assert ev["outer"].self_cpu_time_total < ev["outer"].cpu_time_total

    @record_function("decorated")
    def f(t):
        return t.exp()
    with profile() as prof:
        f(a)
    ev = {e.name: e for e in prof.events()}
    assert _nested(ev["decorated"], ev["aten::exp"])


def test_schedule_matches_torch():
    kw = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    ours = profiler.schedule(**kw)
    theirs = real_torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(14)] == [theirs(i).name for i in range(14)]
    ours = profiler.schedule(wait=0, warmup=1, active=1)
    theirs = real_torch.profiler.schedule(wait=0, warmup=1, active=1)
    assert [ours(i).name for i in range(7)] == [theirs(i).name for i in range(7)]
    assert ours(1) is ProfilerAction.RECORD_AND_SAVE


def test_schedule_cycles_and_trace_handler(tmp_path):
    traces = []

    def on_ready(p):
        traces.append(sorted({e.name for e in p.events() if e.name.startswith("ProfilerStep")}))
        profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")(p)

    sched = profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=on_ready) as prof:
        _train(prof, steps=10)
    assert traces == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    files = sorted(tmp_path.glob("w.*.pt.trace.json"))
    assert len(files) == 2
    assert json.loads(files[0].read_text())["traceEvents"]


def test_only_one_profiler_and_restoration_on_error():
    orig = torch.Tensor.__mul__
    try:
        with profile():
            try:
                with profile():
                    pass
            except RuntimeError:
                pass
            else:
                raise AssertionError("nested profile must raise")
            raise ValueError("boom")
    except ValueError:
        pass
    assert torch.Tensor.__mul__ is orig
    assert profiler.profiler._recorder[0] is None


# A model's module written against ``torch``: it reaches ops through a module global, an
# instance attribute and a static method, none of which a namespace patch replaces.
_TWIN_SOURCE = """
flatten = torch.flatten
F = torch.nn.functional


class Net(torch.nn.Module):
    pool = staticmethod(F.adaptive_avg_pool2d)

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4, 2)
        self.act = F.relu

    def forward(self, x):
        return self.fc(flatten(self.pool(self.act(self.conv(x)), 1), 1))
"""


def _twin_module(lib, name):
    mod = types.ModuleType(name)
    mod.torch = lib
    exec(_TWIN_SOURCE, vars(mod))
    return mod


def _counts(prof):
    return {a.key: a.count for a in prof.key_averages()}


def test_ops_reached_through_references_match_torch_counts(monkeypatch):
    ours_mod = _twin_module(torch, "_profiled_twin_glasstorch")
    theirs_mod = _twin_module(real_torch, "_profiled_twin_torch")
    ours_net, theirs_net = ours_mod.Net(), theirs_mod.Net()
    with profile() as prof:
        # imported while profiling: the profiler finds the module at the model's first call
        monkeypatch.setitem(sys.modules, ours_mod.__name__, ours_mod)
        for _ in range(2):
            ours_net(torch.randn(2, 3, 8, 8))
    with real_torch.profiler.profile() as real_prof:
        for _ in range(2):
            theirs_net(real_torch.randn(2, 3, 8, 8))
    ours, theirs = _counts(prof), _counts(real_prof)
    shared = ours.keys() & theirs.keys()
    assert {"aten::conv2d", "aten::relu", "aten::adaptive_avg_pool2d", "aten::flatten",
            "aten::linear"} <= shared
    assert {k: ours[k] for k in shared} == {k: theirs[k] for k in shared}
    # every reference is put back
    assert ours_mod.flatten is torch.flatten and ours_net.act is torch.nn.functional.relu
    assert vars(ours_mod.Net)["pool"].__func__ is torch.nn.functional.adaptive_avg_pool2d


def test_resnet18_profile_counts_every_layer_call():
    from glasstorch.vision.models import resnet, resnet18

    model = resnet18(num_classes=10).eval()
    calls = collections.Counter()
    for m in model.modules():
        m.register_forward_hook(lambda mod, args, out: calls.update([type(mod).__name__]))
    with torch.no_grad(), profile() as prof:
        model(torch.randn(1, 3, 32, 32))
    ours = _counts(prof)
    assert ours["aten::flatten"] == calls["ResNet"] == 1   # `from ... import flatten`
    for op, layer in (("conv2d", "Conv2d"), ("batch_norm", "BatchNorm2d"), ("relu_", "ReLU"),
                      ("max_pool2d", "MaxPool2d"), ("adaptive_avg_pool2d", "AdaptiveAvgPool2d"),
                      ("linear", "Linear")):
        assert ours["aten::" + op] == calls[layer], op
    assert ours["aten::add_"] == calls["BasicBlock"]   # out += identity
    assert "aten::flatten" in prof.key_averages().table()
    assert resnet.flatten is torch.flatten


_OPERATOR_EXPRESSIONS = [
    "a + b", "2 + a", "2 - a", "a - 2", "a * 2", "2 * a", "a / b", "a // b", "2 // a", "a % b",
    "2 % a", "a ** 2", "2 ** a", "a @ b", "-a", "+a", "abs(a)", "a < b", "a == b", "a != b",
    "~m", "1 & m", "1 | m", "1 ^ m", "1 << m", "1 >> m", "a.sum(0)", "a.t()"]
_OPERATOR_STATEMENTS = [
    "c += 1", "c -= 1", "c *= 2", "c /= 2", "c //= 2", "c %= 2", "c **= 2", "c.add_(b)"]


def _outermost_op(lib, profile_cls, code):
    a = lib.tensor([[1.0, -2.0], [3.0, 4.0]])
    names = {"a": a, "b": lib.tensor([[2.0, 5.0], [1.0, 3.0]]), "c": a.clone(),
             "m": lib.tensor([1, 6])}
    with profile_cls() as prof:
        exec(code, {}, names)
    ops = [e for e in prof.events() if e.name.startswith("aten::")]
    return min(ops, key=lambda e: e.time_range.start if lib is real_torch else e.start_us).name


@pytest.mark.parametrize("code", _OPERATOR_EXPRESSIONS + _OPERATOR_STATEMENTS)
def test_python_operators_are_named_as_torch_names_them(code):
    assert (_outermost_op(torch, profile, code)
            == _outermost_op(real_torch, real_torch.profiler.profile, code))
