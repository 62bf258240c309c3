"""The pitfall detector: each mistake warns with its code, the correct program stays silent."""

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
