"""ema-pytorch: EMA of a model's weights (warmup schedule, buffers) and post-hoc EMA."""

from importlib.metadata import version as _dist_version

import torch
from ema_pytorch import EMA, PostHocEMA

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("ema-pytorch")


def _model():
    # no bias before the norm: its gradient is round-off, which Adam amplifies
    return torch.nn.Sequential(torch.nn.Linear(4, 8, bias=False), torch.nn.BatchNorm1d(8),
                               torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _train(model, opt, hook, steps):
    x, y = randn(0, 16, 4), randn(1, 16, 2)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        hook()
    return x


@case
def ema(ctx):
    """EMA.update() with the inverse-gamma warmup, the ema model's output and its state."""
    model = ctx.weights(_model(), "mlp")
    ema = EMA(model, beta=0.99, update_after_step=2, update_every=1, power=3 / 4)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x = _train(model, opt, ema.update, 8)
    ema.eval()
    model.eval()
    state = ema.state_dict()
    out = {"online": model(x), "ema": ema(x), "step": ema.step,
           "ema_weight": ema.ema_model[0].weight,
           "ema_running_mean": ema.ema_model[1].running_mean,
           "state_keys": "\n".join(sorted(state))}
    return out


@case
def post_hoc(ctx):
    """PostHocEMA: two power-function EMAs, checkpoints, and a synthesized EMA profile."""
    model = ctx.weights(_model(), "mlp")
    folder = ctx.tmpdir("post_hoc")
    ph = PostHocEMA(model, sigma_rels=(0.05, 0.28), update_every=1,
                    checkpoint_every_num_steps=3, checkpoint_folder=folder)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = _train(model, opt, ph.update, 9)
    synth = ph.synthesize_ema_model(sigma_rel=0.15)
    synth.eval()
    return {"synthesized": synth(x), "weight": synth.ema_model[0].weight}
