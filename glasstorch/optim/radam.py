"""RAdam: Adam with a rectified adaptive learning rate."""

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

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """RAdam (torch.optim.RAdam)."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False,
                           decoupled_weight_decay=False, capturable=False)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
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
                "exp_avg_sq": _zeros_like(p),
            })
            exp_avgs = [st["exp_avg"] for st in states]
            exp_avg_sqs = [st["exp_avg_sq"] for st in states]
            steps = [st["step"] for st in states]
            beta1, beta2 = group["betas"]
            radam(params, grads, exp_avgs, exp_avg_sqs, steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  capturable=group["capturable"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """Functional RAdam."""
    _check_capturable(capturable)
    lr = _to_scalar(lr)
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        step_t = state_steps[i]
        step_t._data += 1
        step = step_t._data.item()
        p = _real(param._data)
        g = _real(grads[i]._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= f(1 - lr * weight_decay)
            else:
                g = g + p * f(weight_decay)
        ea = _real(exp_avgs[i]._data)
        eas = _real(exp_avg_sqs[i]._data)
        _lerp_(ea, g, 1 - beta1)
        eas *= f(beta2)
        tmp = xp.multiply(g, g)
        tmp *= f(1 - beta2)
        eas += tmp
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        upd = xp.divide(ea, f(bias_correction1))
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        upd *= f(lr)
        if rho_t > 5.0:
            # adaptive lr: sqrt(bc2) / (sqrt(v) + eps), then the rectification factor
            xp.sqrt(eas, out=tmp)
            tmp += f(eps)
            xp.divide(f(bias_correction2 ** 0.5), tmp, out=tmp)
            upd *= tmp
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            upd *= f(rect)
        p -= upd
        param._bump_version()
