"""lion-pytorch: the Lion optimizer training a small MLP."""

from importlib.metadata import version as _dist_version

import torch
from lion_pytorch import Lion

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("lion-pytorch")


@case
def train(ctx):
    """Ten Lion steps with weight decay; losses and final weights."""
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    ctx.weights(model, "mlp")
    opt = Lion(model.parameters(), lr=1e-2, weight_decay=1e-2, betas=(0.9, 0.99))
    x, y = randn(0, 16, 5), randn(1, 16, 2)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    out = {"losses": torch.stack(losses), "weight": model[0].weight,
           "exp_avg": opt.state[model[0].weight]["exp_avg"]}
    return out
