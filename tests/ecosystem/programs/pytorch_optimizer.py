"""pytorch-optimizer: a dozen of its optimizers, Lookahead/SAM wrappers, losses, schedulers."""

from importlib.metadata import version as _dist_version

import pytorch_optimizer as po
import torch

from .._support import case, randint, randn


def version():
    """The version of the library under test."""
    return _dist_version("pytorch_optimizer")


# deterministic ones (no sampling inside the step), by their registry names; not SOAP, whose
# eigenbasis (linalg.eigh) is defined only up to signs, which LAPACK builds choose differently
OPTIMIZERS = {"adabelief": {}, "adamp": {}, "adan": {}, "lamb": {}, "madgrad": {},
              "ranger21": {"num_iterations": 20}, "lion": {}, "prodigy": {"lr": 1.0},
              "adai": {}, "adopt": {}, "schedulefreeadamw": {},
              "came": {}, "adashift": {}, "shampoo": {}}


def _model(ctx):
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.GELU(),
                                torch.nn.Linear(12, 3))
    return ctx.weights(model, "mlp")


def _steps(model, opt, n=5):
    x, y = randn(0, 20, 6), randn(1, 20, 3)
    losses = []
    for _ in range(n):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses)


@case
def optimizers(ctx):
    """Each optimizer by name from load_optimizer: five steps on the same MLP."""
    out = {}
    for name, kwargs in OPTIMIZERS.items():
        model = _model(ctx)
        opt = po.load_optimizer(name)(model.parameters(), **{"lr": 1e-2, **kwargs})
        out[f"{name}.losses"] = _steps(model, opt)
        out[f"{name}.weight"] = model[2].weight
    return out


@case
def wrappers(ctx):
    """Lookahead around AdamW, SAM's two-step update, and gradient centralization."""
    model = _model(ctx)
    opt = po.Lookahead(torch.optim.AdamW(model.parameters(), lr=1e-2), k=3, alpha=0.5)
    out = {"lookahead": _steps(model, opt, 7), "lookahead.weight": model[0].weight}
    model = _model(ctx)
    sam = po.SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
    x, y = randn(0, 20, 6), randn(1, 20, 3)
    for _ in range(3):
        torch.nn.functional.mse_loss(model(x), y).backward()
        sam.first_step(zero_grad=True)
        torch.nn.functional.mse_loss(model(x), y).backward()
        sam.second_step(zero_grad=True)
    out["sam.weight"] = model[0].weight
    g = randn(2, 4, 5)
    po.centralize_gradient(g, gc_conv_only=False)  # in place
    out["centralized"] = g
    return out


@case
def losses(ctx):
    """Focal, dice, soft-F1 and label-smoothing losses with gradients."""
    logits = randn(3, 8, 4).requires_grad_()
    target = randint(4, 4, 8)
    onehot = torch.nn.functional.one_hot(target, 4).float()
    out = {"focal": po.FocalLoss()(logits, onehot),
           "bce_focal": po.BCEFocalLoss()(logits, onehot),
           "dice": po.DiceLoss(mode="multiclass")(logits.unsqueeze(-1), target.unsqueeze(-1)),
           "soft_f1": po.SoftF1Loss()(logits.sigmoid(), onehot),
           "ldam": po.LDAMLoss([10, 20, 30, 40])(logits, target)}
    sum(out.values()).backward()
    out["grad.logits"] = logits.grad
    return out


@case
def schedulers(ctx):
    """Warmup-cosine-restarts and the linear/cosine/poly warmup schedulers' lr curves."""
    model = _model(ctx)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = po.CosineAnnealingWarmupRestarts(opt, first_cycle_steps=6, max_lr=0.1,
                                             min_lr=1e-3, warmup_steps=2, gamma=0.5)
    lrs = []
    for _ in range(15):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    out = {"cosine_restarts": torch.tensor(lrs, dtype=torch.float64)}
    for name in ("LinearScheduler", "CosineScheduler", "PolyScheduler"):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        kwargs = {"t_max": 10, "max_lr": 0.1, "min_lr": 1e-3, "init_lr": 1e-3,
                  "warmup_steps": 3}
        if name == "PolyScheduler":
            kwargs["poly_order"] = 2.0
        sched = getattr(po, name)(opt, **kwargs)
        out[name] = torch.tensor([sched.step() for _ in range(12)], dtype=torch.float64)
    return out
