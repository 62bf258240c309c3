"""The pitfall detector: each mistake warns with its code, the correct program stays silent."""

import inspect
import random
import warnings

import numpy as np
import pytest

import glasstorch as torch
import glasstorch.nn as nn
import glasstorch.nn.functional as F
from glasstorch import debug
from glasstorch.debug import GlasstorchPitfallWarning
from glasstorch.utils.data import DataLoader, Dataset, DistributedSampler, TensorDataset


@pytest.fixture(autouse=True)
def detector():
    was = debug.is_enabled()
    debug.enable()
    debug.reset()
    yield
    debug.reset()
    if not was:
        debug.disable()


def codes(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [w.message.code for w in rec if issubclass(w.category, GlasstorchPitfallWarning)]


def _data(n=32):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 4, generator=g)
    y = (x.sum(1) > 0).long()
    return x, y


def _train(steps=8, zero=True, accumulate=False, model=None):
    torch.manual_seed(0)
    model = model or nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = _data()
    total = 0.0
    for _ in range(steps):
        if zero:
            opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total = total + loss if accumulate else total + loss.item()
    model.eval()
    with torch.no_grad():
        model(x)
    return total


def test_correct_training_loop_is_silent():
    assert codes(_train) == []


def test_correct_cnn_loop_is_silent():
    def run():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        x = torch.randn(16, 1, 6, 6)
        y = torch.randint(0, 3, (16,))
        loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
        for _ in range(2):
            for xb, yb in loader:
                opt.zero_grad(set_to_none=False)
                F.nll_loss(F.log_softmax(model(xb), 1), yb).backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            model(x)
    assert codes(run) == []


def test_gt001_missing_zero_grad():
    assert "GT001" in codes(lambda: _train(zero=False))


def test_gt001_manual_zero_is_silent():
    def run():
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = _data()
        for _ in range(3):
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.zero_()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    assert codes(run) == []


def test_gt002_loss_accumulated_with_graph():
    assert "GT002" in codes(lambda: _train(accumulate=True))


def test_gt003_eval_in_training_mode():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))

    def run():
        with torch.no_grad():
            model(torch.randn(2, 4))
    assert codes(run) == ["GT003"]
    model.eval()
    debug.reset()
    assert codes(run) == []


def test_gt004_gt005_unregistered_attributes():
    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(3, requires_grad=True)
            self.blocks = [nn.Linear(3, 3), nn.Linear(3, 3)]

    class Good(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(3))
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
            self.sizes = [1, 2]
            self.const = torch.ones(2)

    assert codes(Bad) == ["GT004", "GT005"]
    assert codes(Good) == []


def test_gt006_gt007_frozen_parameters():
    def no_trainable():
        model = nn.Linear(4, 2)
        model.requires_grad_(False)
        torch.optim.SGD(model.parameters(), lr=0.1).step()
    assert codes(no_trainable) == ["GT006"]

    def frozen_later():
        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model[0].requires_grad_(False)
        x, y = _data()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    assert codes(frozen_later) == ["GT007"]


def test_gt008_softmax_before_cross_entropy():
    x, y = _data()
    logits = nn.Linear(4, 3)(x)
    assert codes(lambda: F.cross_entropy(logits.softmax(1), y)) == ["GT008"]
    assert codes(lambda: nn.CrossEntropyLoss()(F.log_softmax(logits, 1), y)) == ["GT008"]
    assert codes(lambda: F.cross_entropy(logits, y)) == []


def test_gt009_nll_loss_on_logits():
    x, y = _data()
    logits = nn.Linear(4, 3)(x) * 5
    assert codes(lambda: F.nll_loss(logits, y)) == ["GT009"]
    assert codes(lambda: F.nll_loss(logits.log_softmax(1), y)) == []


def test_gt010_gt011_targets():
    x, y = _data()
    logits = nn.Linear(4, 3)(x)
    onehot = F.one_hot(y, 3).float()
    assert codes(lambda: F.cross_entropy(logits, onehot)) == ["GT010"]

    def float_labels():
        with pytest.raises(RuntimeError):
            F.cross_entropy(logits, y.float())
    assert codes(float_labels) == ["GT010"]

    def one_based():
        with pytest.raises((IndexError, RuntimeError)):
            F.cross_entropy(logits, y + 2)
    assert codes(one_based) == ["GT011"]
    # soft labels and ignore_index stay silent
    soft = torch.full((32, 3), 1 / 3)
    assert codes(lambda: F.cross_entropy(logits, soft)) == []
    assert codes(lambda: F.cross_entropy(logits, torch.where(y == 0, -100, y))) == []


def test_gt012_broadcasting_loss_shapes():
    pred = torch.randn(8, 1)
    target = torch.randn(8)
    assert codes(lambda: F.mse_loss(pred, target)) == ["GT012"]
    assert codes(lambda: F.mse_loss(pred.squeeze(-1), target)) == []


def test_gt013_nonfinite_output_names_module():
    class Log(nn.Module):
        def forward(self, x):
            return x.log()

    model = nn.Sequential(nn.Linear(2, 2), Log())
    with torch.no_grad():
        model[0].weight.fill_(-1.0)
        model[0].bias.zero_()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model(torch.ones(1, 2))
    found = [w.message for w in rec if issubclass(w.category, GlasstorchPitfallWarning)]
    assert [w.code for w in found] == ["GT013"]
    assert "Log" in str(found[0]) and "test_pitfalls.py" in str(found[0])
    assert codes(lambda: model(torch.full((1, 2), float("nan")))) == []


def test_gt014_distributed_sampler_without_set_epoch():
    ds = TensorDataset(torch.arange(10))

    def run(set_epoch):
        sampler = DistributedSampler(ds, num_replicas=2, rank=0)
        for epoch in range(3):
            if set_epoch:
                sampler.set_epoch(epoch)
            list(sampler)
    assert codes(lambda: run(False)) == ["GT014"]
    assert codes(lambda: run(True)) == []


def test_gt015_dataset_reseeding():
    class Reseeding(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            np.random.seed(0)
            random.seed(0)
            return torch.tensor(np.random.rand())

    class Fine(Reseeding):
        def __getitem__(self, i):
            return torch.tensor(np.random.rand())

    got = codes(lambda: list(DataLoader(Reseeding(), batch_size=2)))
    assert got == ["GT015", "GT015"]  # one per offending line
    assert codes(lambda: list(DataLoader(Fine(), batch_size=2))) == []
    assert np.random.seed.__module__ != __name__  # the spies were removed


def test_warns_once_per_call_site_and_points_at_user_line():
    x, y = _data()
    logits = nn.Linear(4, 3)(x).softmax(1)

    def run():
        for _ in range(3):
            F.cross_entropy(logits, y)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run()
    found = [w for w in rec if issubclass(w.category, GlasstorchPitfallWarning)]
    assert len(found) == 1
    assert found[0].filename == __file__
    assert "F.cross_entropy(logits, y)" in str(found[0].message)


def test_disabled_is_silent():
    debug.disable()
    assert codes(lambda: _train(zero=False, accumulate=True)) == []


def test_digits_example_is_silent():
    from glasstorch.examples import digits
    if not hasattr(digits, "main"):
        pytest.skip("digits example has no main()")
    assert codes(lambda: digits.main(["--epochs", "1", "--out", "/tmp/_gt_pitfall_digits"])) \
        == []


# ---------------------------------------------------------------------------- GT016
class _HeldRng(Dataset):
    """Draws from a generator made in __init__: every worker gets a copy in the same state."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor(self.rng.random())


class _GlobalNumpy(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor(np.random.rand())


class _TorchRng(_GlobalNumpy):
    def __getitem__(self, i):
        return torch.rand(())


def _epochs(ds, n=2, **kw):
    """Each epoch's batches, split by worker (batch k comes from worker k % num_workers)."""
    loader = DataLoader(ds, batch_size=2, **kw)
    return [[b.tolist() for b in loader] for _ in range(n)]


def _found(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [w for w in rec if issubclass(w.category, GlasstorchPitfallWarning)]


def _line_of(fn, text):
    """The line number of ``fn``'s source line that contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_gt016_workers_copy_the_datasets_generator():
    seen = []
    found = _found(lambda: seen.extend(_epochs(_HeldRng(), num_workers=2)))
    assert [(w.message.code, w.lineno) for w in found] == \
        [("GT016", _line_of(_epochs, "for b in loader"))]  # the user's loop over the loader
    assert "workers 0 and 1" in str(found[0].message) and "dataset.rng" in str(found[0].message)
    first, second = seen
    assert first[0] == first[1] and first[2] == first[3]  # the mistake is real: workers agree
    assert first == second                                # and every epoch repeats


def test_gt016_worker_init_fn_reseeding_numpy_alike():
    parent = np.random.get_state()   # as if the workers inherited NumPy's state unchanged
    for init in (lambda _: np.random.set_state(parent), lambda _: np.random.seed(0)):
        debug.reset()
        seen = []
        assert codes(lambda: seen.extend(_epochs(_GlobalNumpy(), 1, num_workers=2,
                                                 worker_init_fn=init))) == ["GT016"]
        assert seen[0][0] == seen[0][1]


class _Jitter:
    def __init__(self):
        self.rng = random.Random(0)

    def __call__(self, x):
        return x + self.rng.random()


class _NestedRng(_GlobalNumpy):
    """The generator sits in a transform inside a list, as in a Compose."""

    def __init__(self):
        self.transforms = [_Jitter()]

    def __getitem__(self, i):
        return torch.tensor(self.transforms[0](float(i)))


def test_gt016_one_worker_repeats_the_datasets_generator_every_epoch():
    seen = []
    found = _found(lambda: seen.extend(_epochs(_NestedRng(), num_workers=1)))
    assert [w.message.code for w in found] == ["GT016"]
    assert "Random dataset.transforms[0].rng starts every epoch" in str(found[0].message)
    assert seen[0] == seen[1]


def test_gt016_silent_when_workers_draw_distinct_streams():
    from glasstorch.utils.data import get_worker_info

    def reseed(_):
        info = get_worker_info()
        info.dataset.rng = np.random.default_rng(info.seed)

    def seed_numpy(_):
        np.random.seed(get_worker_info().seed % 2**32)

    cases = [(_HeldRng(), {"num_workers": 2, "worker_init_fn": reseed}),
             (_HeldRng(), {"num_workers": 0}),
             (_GlobalNumpy(), {"num_workers": 2}),        # DataLoader reseeds NumPy per worker
             (_GlobalNumpy(), {"num_workers": 1}),
             (_GlobalNumpy(), {"num_workers": 2, "worker_init_fn": seed_numpy}),
             (_TorchRng(), {"num_workers": 2}),
             (_TorchRng(), {"num_workers": 2, "persistent_workers": True}),
             (_HeldRng(), {"num_workers": 1, "persistent_workers": True})]  # stream goes on
    for ds, kw in cases:
        seen = []
        assert codes(lambda: seen.extend(_epochs(ds, **kw))) == [], kw
        flat = [v for epoch in seen for batch in epoch for v in batch]
        assert len(set(flat)) == len(flat), kw  # and the data really differs
    # two datasets seeded alike (train and val), one epoch each: no epoch is repeated
    train, val = _HeldRng(), _HeldRng()
    assert codes(lambda: [_epochs(ds, 1, num_workers=1) for ds in (train, val)]) == []


# ---------------------------------------------------------------------------- GT017
def _steps_with(copy_line, n_steps=3, **extra):
    """A training loop of ``n_steps`` steps that runs ``copy_line(w, h)`` each step."""
    torch.manual_seed(0)
    model = nn.Linear(512, 512)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    w = torch.randn(1024, 512)  # 2 MB of float32
    for _ in range(n_steps):
        opt.zero_grad()
        h = model(torch.randn(1024, 512))
        copy_line(w, h)
        h.sum().backward()
        opt.step()


def test_gt017_large_copy_of_the_same_tensor_every_step():
    found = _found(lambda: _steps_with(lambda w, h: w.t().reshape(-1)))
    assert [w.message.code for w in found] == ["GT017"]
    text = str(found[0].message)
    assert "reshape()" in text and "(512, 1024)" in text and "strides (1, 512)" in text
    assert "2.0 MB" in text and "same data" in text and "w.t().reshape(-1)" in text
    assert found[0].lineno == _line_of(test_gt017_large_copy_of_the_same_tensor_every_step,
                                       "w.t().reshape(-1)))")


def test_gt017_fresh_activation_copied_every_step():
    found = [w.message for w in _found(lambda: _steps_with(lambda w, h: h.t().contiguous()))]
    assert [m.code for m in found] == ["GT017"]
    assert "contiguous()" in str(found[0]) and "layout" in found[0].fix


def test_gt017_silent_for_hoisted_small_rare_or_internal_copies():
    w = torch.randn(1024, 512)
    wt = w.t().contiguous()                                         # once, before the loop
    assert codes(lambda: _steps_with(lambda _, h: wt.reshape(-1))) == []   # a view
    assert codes(lambda: _steps_with(lambda w, h: w[:256].t().reshape(-1))) == []  # 0.5 MB
    assert codes(lambda: _steps_with(lambda w, h: w.t().reshape(-1), n_steps=2)) == []
    mha = nn.MultiheadAttention(128, 4, batch_first=True)  # copies inside glasstorch
    x = torch.randn(8, 256, 128)
    assert codes(lambda: _steps_with(lambda w, h: mha(x, x, x))) == []


# ---------------------------------------------------------------------------- GT018
def _loop_reading(read, n_steps=2, batch=32):
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(batch, 4, generator=g), torch.randn(batch, generator=g)
    for _ in range(n_steps):
        opt.zero_grad()
        out = model(x).squeeze(-1)
        loss = F.mse_loss(out, y)
        read(out, loss)
        loss.backward()
        opt.step()


def test_gt018_item_per_element_of_an_output_that_requires_grad():
    found = _found(lambda: _loop_reading(lambda out, loss: [v.item() for v in out]))
    assert [w.message.code for w in found] == ["GT018"]
    assert found[0].lineno == _line_of(
        test_gt018_item_per_element_of_an_output_that_requires_grad, "[v.item() for v in out]")
    assert ".item()" in str(found[0].message) and "(32, 1)" in str(found[0].message)


def test_gt018_float_of_parameter_elements_fed_back_into_the_graph():
    gates = nn.Parameter(torch.rand(20))

    def read(out, loss):
        total = loss
        for i in range(20):
            total = total + float(gates[i]) * out[i]   # gates gets no gradient this way
        return total
    found = [w.message for w in _found(lambda: _loop_reading(read))]
    assert [m.code for m in found] == ["GT018"] and "float()" in str(found[0])


def test_gt018_silent_for_idiomatic_reads():
    logged = []

    def read(out, loss):
        logged.append(loss.item())                        # once per step
        logged.append(f"{loss:.3f}")
        logged.append(out.detach().tolist())              # the batch in one conversion
        logged.append([v.item() for v in out.detach()])   # elements of a detached tensor
        with torch.no_grad():
            logged.append([v.item() for v in out * 2])    # made without a graph
        logged.append([out[c].item() for c in range(10)])  # a handful of metrics
    assert codes(lambda: _loop_reading(read, n_steps=3)) == []
    # one scalar per step from the same parameter, over many steps, is logging, not a loop
    p = nn.Parameter(torch.ones(1))
    assert codes(lambda: _loop_reading(lambda out, loss: p.item(), n_steps=20)) == []


# ---------------------------------------------------------------------------- no false alarms
def test_benchmark_models_are_silent():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from benchmarks import models
    finally:
        sys.path.pop(0)

    def run():
        for _, make, _ in models.cases():
            step = make(torch)
            for _ in range(3):
                step()
    assert codes(run) == []
