"""Rprop: resilient backpropagation (sign-based steps with adaptive per-element sizes)."""

from __future__ import annotations

from .._core.backend import xp
from .._tensor import _wrap
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

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop (torch.optim.Rprop)."""

    _group_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, _new_state)
            prevs = [st["prev"] for st in states]
            step_sizes = [st["step_size"] for st in states]
            steps = [st["step"] for st in states]
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            rprop(params, grads, prevs, step_sizes, steps, step_size_min=smin,
                  step_size_max=smax, etaminus=etaminus, etaplus=etaplus,
                  maximize=group["maximize"], capturable=group["capturable"])
        return loss


def _new_state(p, group):
    step_size = xp.empty_like(p._grad._data)
    _real(step_size)[...] = _to_scalar(group["lr"])
    return {"step": _scalar_tensor(0.0), "prev": _zeros_like(p), "step_size": _wrap(step_size)}


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """Functional Rprop."""
    _check_capturable(capturable)
    for i, param in enumerate(params):
        state_steps[i]._data += 1
        p = _real(param._data)
        g = _real(grads[i]._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        prev = _real(prevs[i]._data)
        ss = _real(step_sizes[i]._data)
        prod = xp.multiply(g, prev)
        # the sign of grad*prev picks the factor: etaplus (same sign), etaminus (flip), 1 (zero)
        factor = xp.where(prod > 0, f(etaplus), xp.where(prod < 0, f(etaminus), f(1)))
        ss *= factor
        xp.clip(ss, f(step_size_min), f(step_size_max), out=ss)
        g = xp.where(prod < 0, f(0), g)
        upd = xp.sign(g)
        upd *= ss
        p -= upd
        prev[...] = g
        param._bump_version()
