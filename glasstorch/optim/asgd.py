"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from .._core.backend import xp
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_capturable,
    _check_differentiable,
    _check_lr,
    _no_grad_step,
    _real,
    _scalar_tensor,
    _to_scalar,
    _zeros_like,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """ASGD (torch.optim.ASGD)."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state_keys = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, lambda p, group: {
                "step": _scalar_tensor(0.0),
                "eta": _scalar_tensor(_to_scalar(group["lr"])),
                "mu": _scalar_tensor(1.0),
                "ax": _zeros_like(p),
            })
            mus = [st["mu"] for st in states]
            axs = [st["ax"] for st in states]
            etas = [st["eta"] for st in states]
            steps = [st["step"] for st in states]
            asgd(params, grads, axs, mus, etas, steps, lambd=group["lambd"], lr=group["lr"],
                 t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"], capturable=group["capturable"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """Functional ASGD."""
    _check_capturable(capturable)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step_t = state_steps[i]
        step_t._data += 1
        p = _real(param._data)
        g = _real(grads[i]._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            g = g + p * f(weight_decay)
        eta = etas[i]._data
        mu = mus[i]._data
        eta_value = eta.item()
        p *= f(1 - lambd * eta_value)
        p -= g * f(eta_value)
        ax = _real(axs[i]._data)
        if mu.item() != 1:
            d = xp.subtract(p, ax)
            d *= f(mu.item())
            ax += d
        else:
            ax[...] = p
        step = step_t._data.item()
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - t0)
        param._bump_version()
