"""torch-optimizer: its optimizers by name, each training the same small MLP."""

from importlib.metadata import version as _dist_version

import torch
import torch_optimizer as optim

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("torch-optimizer")


# the ones torch_optimizer.get knows by name, and those it exports only as classes
NAMED = ("accsgd", "adabelief", "adabound", "adamod", "adamp", "aggmo", "diffgrad", "lamb",
         "novograd", "pid", "qhadam", "qhm", "radam", "sgdp", "sgdw", "swats", "yogi",
         "madgrad", "lars", "ranger", "rangerqh", "rangerva")
CLASSES = ("A2GradUni", "A2GradInc", "A2GradExp", "Apollo")


def _model(ctx):
    model = torch.nn.Sequential(torch.nn.Linear(6, 10), torch.nn.Tanh(),
                                torch.nn.Linear(10, 3))
    return ctx.weights(model, "mlp")


def _data():
    return randn(0, 20, 6), randn(1, 20, 3)


@case
def optimizers(ctx):
    """Five steps of each optimizer from torch_optimizer.get(name) or its class."""
    x, y = _data()
    out = {}
    for name in NAMED + CLASSES:
        model = _model(ctx)
        cls = getattr(optim, name) if name in CLASSES else optim.get(name)
        opt = cls(model.parameters(), **({} if name.startswith("A2") else {"lr": 1e-2}))
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        out[f"{name}.losses"] = torch.stack(losses)
        out[f"{name}.weight"] = model[0].weight
    return out


@case
def second_order(ctx):
    """Shampoo (matrix roots), Lookahead around Yogi, and Adahessian (Hessian diagonals)."""
    x, y = _data()
    out = {}
    # float64: the inverse fourth root of a near-singular preconditioner magnifies round-off
    model = _model(ctx).double()
    opts = {"shampoo": optim.Shampoo(model.parameters(), lr=0.1, update_freq=2)}
    m2 = _model(ctx)
    opts["lookahead"] = optim.Lookahead(optim.Yogi(m2.parameters(), lr=1e-2), k=2, alpha=0.5)
    models = {"shampoo": model, "lookahead": m2}
    for name, opt in opts.items():
        for _ in range(4):
            opt.zero_grad()
            pred = models[name](x.to(models[name][0].weight.dtype))
            torch.nn.functional.mse_loss(pred, y.to(pred.dtype)).backward()
            opt.step()
        out[f"{name}.weight"] = models[name][0].weight
    m3 = _model(ctx)
    ada = optim.Adahessian(m3.parameters(), lr=0.1, seed=0)
    for _ in range(2):
        ada.zero_grad()
        torch.nn.functional.mse_loss(m3(x), y).backward(create_graph=True)
        ada.step()
    out["adahessian.finite"] = torch.isfinite(m3[0].weight).all()
    return out
