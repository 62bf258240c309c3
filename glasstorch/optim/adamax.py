"""Adamax: Adam with the infinity norm of past gradients."""

from __future__ import annotations

from .._core.backend import xp
from .adam import _check_betas
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_capturable,
    _check_differentiable,
    _check_lr,
    _lerp_,
    _no_grad_step,
    _real,
    _scalar_tensor,
    _to_scalar,
    _zeros_like,
)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax (torch.optim.Adamax)."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, lambda p, group: {
                "step": _scalar_tensor(0.0),
                "exp_avg": _zeros_like(p),
                "exp_inf": _zeros_like(p),
            })
            exp_avgs = [st["exp_avg"] for st in states]
            exp_infs = [st["exp_inf"] for st in states]
            steps = [st["step"] for st in states]
            beta1, beta2 = group["betas"]
            adamax(params, grads, exp_avgs, exp_infs, steps, eps=group["eps"], beta1=beta1,
                   beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                   maximize=group["maximize"], capturable=group["capturable"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2, lr,
           weight_decay):
    """Functional Adamax."""
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
        ea = _real(exp_avgs[i]._data)
        ei = _real(exp_infs[i]._data)
        _lerp_(ea, g, 1 - beta1)
        ei *= f(beta2)
        a = xp.abs(g)
        a += f(eps)
        xp.maximum(ei, a, out=ei)
        clr = lr / (1 - beta1 ** step_t._data.item())
        xp.divide(ea, ei, out=a)
        a *= f(clr)
        p -= a
        param._bump_version()
