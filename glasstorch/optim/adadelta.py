"""Adadelta: unit-corrected adaptive steps from running averages of squared grads/updates."""

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

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta)."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, lambda p, group: {
                "step": _scalar_tensor(0.0),
                "square_avg": _zeros_like(p),
                "acc_delta": _zeros_like(p),
            })
            square_avgs = [st["square_avg"] for st in states]
            acc_deltas = [st["acc_delta"] for st in states]
            steps = [st["step"] for st in states]
            adadelta(params, grads, square_avgs, acc_deltas, steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     maximize=group["maximize"], capturable=group["capturable"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """Functional Adadelta."""
    _check_capturable(capturable)
    lr = _to_scalar(lr)
    for param, grad, square_avg, acc_delta, step_t in zip(params, grads, square_avgs,
                                                          acc_deltas, state_steps):
        step_t._data += 1
        p = _real(param._data)
        g = _real(grad._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            g = g + p * f(weight_decay)
        sa = _real(square_avg._data)
        ad = _real(acc_delta._data)
        sa *= f(rho)
        tmp = xp.multiply(g, g)
        tmp *= f(1 - rho)
        sa += tmp
        std = xp.add(sa, f(eps), out=tmp)
        xp.sqrt(std, out=std)
        delta = xp.add(ad, f(eps))
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= g
        ad *= f(rho)
        xp.multiply(delta, delta, out=std)
        std *= f(1 - rho)
        ad += std
        delta *= f(lr)
        p -= delta
        param._bump_version()
