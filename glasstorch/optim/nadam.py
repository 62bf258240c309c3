"""NAdam: Adam with Nesterov momentum (and the momentum-decay schedule of Dozat)."""

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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam (torch.optim.NAdam)."""

    _group_defaults = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                           decoupled_weight_decay=False)
    _scalar_state_keys = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, lambda p, group: {
                "step": _scalar_tensor(0.0),
                "mu_product": _scalar_tensor(1.0),
                "exp_avg": _zeros_like(p),
                "exp_avg_sq": _zeros_like(p),
            })
            exp_avgs = [st["exp_avg"] for st in states]
            exp_avg_sqs = [st["exp_avg_sq"] for st in states]
            mu_products = [st["mu_product"] for st in states]
            steps = [st["step"] for st in states]
            beta1, beta2 = group["betas"]
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  capturable=group["capturable"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """Functional NAdam."""
    _check_capturable(capturable)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step_t = state_steps[i]
        step_t._data += 1
        step = step_t._data.item()
        p = _real(param._data)
        g = _real(grads[i]._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= f(1 - lr * weight_decay)
            else:
                g = g + p * f(weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mp = mu_products[i]._data
        mp *= mp.dtype.type(mu)  # the running product is kept in the state's float32
        mu_product = mp.item()
        ea = _real(exp_avgs[i]._data)
        eas = _real(exp_avg_sqs[i]._data)
        _lerp_(ea, g, 1 - beta1)
        eas *= f(beta2)
        tmp = xp.multiply(g, g)
        tmp *= f(1 - beta2)
        eas += tmp
        denom = xp.divide(eas, f(bias_correction2), out=tmp)
        xp.sqrt(denom, out=denom)
        denom += f(eps)
        mu_product_next = mu_product * mu_next
        upd = xp.divide(g, denom)
        upd *= f(-lr * (1.0 - mu) / (1.0 - mu_product))
        p += upd
        xp.divide(ea, denom, out=upd)
        upd *= f(-lr * mu_next / (1.0 - mu_product_next))
        p += upd
        param._bump_version()
