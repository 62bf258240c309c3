"""A model and optimizer trained a few steps in one library, saved, and resumed in the other
continue identically (issue: checkpoints move between glasstorch and PyTorch both ways)."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def make(L):
    L.manual_seed(0)
    nn = L.nn
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    opt = L.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    return model, opt


DATA = np.random.default_rng(0).standard_normal((5, 8, 1, 6, 6)).astype(np.float32)
TARGETS = np.random.default_rng(1).integers(0, 3, (5, 8))


def steps(L, model, opt, start, stop):
    losses = []
    for i in range(start, stop):
        opt.zero_grad()
        x = L.from_numpy(DATA[i].copy())
        y = L.from_numpy(TARGETS[i].copy())
        loss = L.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("first,second", [(torch, glasstorch), (glasstorch, torch)])
def test_checkpoint_resumes_in_the_other_library(tmp_path, first, second):
    path = tmp_path / "ckpt.pt"
    model_a, opt_a = make(first)
    steps(first, model_a, opt_a, 0, 2)
    first.save({"model": model_a.state_dict(), "optimizer": opt_a.state_dict(), "epoch": 2},
               path)
    reference = steps(first, model_a, opt_a, 2, 5)

    model_b, opt_b = make(second)
    ckpt = second.load(path, weights_only=True)
    assert ckpt["epoch"] == 2
    model_b.load_state_dict(ckpt["model"])
    opt_b.load_state_dict(ckpt["optimizer"])
    resumed = steps(second, model_b, opt_b, 2, 5)
    np.testing.assert_allclose(resumed, reference, rtol=1e-4, atol=1e-5)
    for (name, pa), (_, pb) in zip(model_a.state_dict().items(), model_b.state_dict().items()):
        np.testing.assert_allclose(pb.detach().numpy(), pa.detach().numpy(), rtol=1e-3,
                                   atol=1e-5, err_msg=name)
