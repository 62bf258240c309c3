"""torch-ema: an exponential moving average of a model's parameters through training."""

from importlib.metadata import version as _dist_version

import torch
from torch_ema import ExponentialMovingAverage

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("torch-ema")


@case
def ema(ctx):
    """update() after each step, average_parameters() to evaluate, state_dict round trip."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 1))
    ctx.weights(model, "mlp")
    ema = ExponentialMovingAverage(model.parameters(), decay=0.9, use_num_updates=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = randn(0, 12, 4), randn(1, 12, 1)
    for _ in range(5):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        ema.update()
    with torch.no_grad():  # as users evaluate: store() then clones no graph
        raw = model(x)
        with ema.average_parameters():
            averaged = model(x)
        restored = model(x)
    state = ema.state_dict()
    other = ExponentialMovingAverage(model.parameters(), decay=0.5)
    other.load_state_dict(state)
    other.copy_to()
    return {"raw": raw, "averaged": averaged, "restored": restored,
            "copied": model(x), "num_updates": state["num_updates"]}
