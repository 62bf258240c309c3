"""Adagrad: per-coordinate learning rates from the running sum of squared gradients."""

from __future__ import annotations

from .._core.backend import xp
from .._tensor import _wrap
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_differentiable,
    _check_fused_foreach,
    _check_lr,
    _no_grad_step,
    _real,
    _scalar_tensor,
    _to_scalar,
)

__all__ = ["Adagrad", "adagrad"]


def _full_like(p, value):
    a = xp.empty_like(p._data)
    _real(a)[...] = value
    return _wrap(a)


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad). State is created eagerly, at construction, like torch."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)
        _check_differentiable(differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_tensor(0.0)
                state["sum"] = _full_like(p, initial_accumulator_value)


    def share_memory(self):
        """Kept for API compatibility: numpy state lives in this process."""

    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, lambda p, group: {
                "step": _scalar_tensor(0.0),
                "sum": _full_like(p, self.defaults["initial_accumulator_value"]),
            })
            sums = [st["sum"] for st in states]
            steps = [st["step"] for st in states]
            adagrad(params, grads, sums, steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """Functional Adagrad."""
    lr = _to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t._data += 1
        step = step_t._data.item()
        p = _real(param._data)
        g = _real(grad._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            g = g + p * f(weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        s = _real(state_sum._data)
        tmp = xp.multiply(g, g)
        s += tmp
        xp.sqrt(s, out=tmp)
        tmp += f(eps)
        xp.divide(g, tmp, out=tmp)
        tmp *= f(clr)
        p -= tmp
        param._bump_version()
