"""entmax: sparsemax/entmax15/entmax_bisect and their losses, forward and backward."""

from importlib.metadata import version as _dist_version

import torch
from entmax import (
    Entmax15,
    EntmaxBisect,
    Sparsemax,
    entmax15,
    entmax15_loss,
    entmax_bisect,
    sparsemax,
    sparsemax_loss,
)

from .._support import case, randint, randn


def version():
    """The version of the library under test."""
    return _dist_version("entmax")


@case
def mappings(ctx):
    """The sparse probability mappings along two dims, with gradients."""
    x = randn(0, 4, 7).mul(2).requires_grad_()
    alpha = torch.full((4, 1), 1.3, requires_grad=True)
    out = {"sparsemax": sparsemax(x, dim=-1), "entmax15": entmax15(x, dim=0),
           "bisect": entmax_bisect(x, alpha, dim=-1, n_iter=30),
           "layers": Sparsemax(dim=1)(x) + Entmax15(dim=1)(x)
           + EntmaxBisect(alpha=1.7, dim=1)(x)}
    loss = sum((v * randn(i + 1, 4, 7)).sum() for i, v in enumerate(out.values()))
    loss.backward()
    out["grad.x"] = x.grad
    out["grad.alpha"] = alpha.grad
    return out


@case
def losses(ctx):
    """sparsemax/entmax15 losses against integer targets."""
    x = randn(3, 5, 6).requires_grad_()
    target = randint(4, 6, 5)
    a = sparsemax_loss(x, target)
    b = entmax15_loss(x, target)
    (a.sum() + b.mean()).backward()
    return {"sparsemax_loss": a, "entmax15_loss": b, "grad.x": x.grad}
