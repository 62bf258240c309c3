"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from .._core.backend import xp
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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop)."""

    _group_defaults = dict(momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False, capturable=False)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, states = self._params_with_grad(group, _new_state)
            square_avgs = [st["square_avg"] for st in states]
            steps = [st["step"] for st in states]
            bufs = [st["momentum_buffer"] for st in states] if group["momentum"] > 0 else []
            grad_avgs = [st["grad_avg"] for st in states] if group["centered"] else []
            rmsprop(params, grads, square_avgs, grad_avgs, bufs, steps, lr=group["lr"],
                    alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"], centered=group["centered"],
                    maximize=group["maximize"], capturable=group["capturable"])
        return loss


def _new_state(p, group):
    state = {"step": _scalar_tensor(0.0), "square_avg": _zeros_like(p)}
    if group["momentum"] > 0:
        state["momentum_buffer"] = _zeros_like(p)
    if group["centered"]:
        state["grad_avg"] = _zeros_like(p)
    return state


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """Functional RMSprop."""
    _check_capturable(capturable)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        state_steps[i]._data += 1
        p = _real(param._data)
        g = _real(grads[i]._data)
        f = p.dtype.type
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            g = g + p * f(weight_decay)
        sa = _real(square_avgs[i]._data)
        sa *= f(alpha)
        tmp = xp.multiply(g, g)
        tmp *= f(1 - alpha)
        sa += tmp
        if centered:
            ga = _real(grad_avgs[i]._data)
            _lerp_(ga, g, 1 - alpha)
            xp.multiply(ga, ga, out=tmp)
            xp.subtract(sa, tmp, out=tmp)
            avg = xp.sqrt(tmp, out=tmp)
        else:
            avg = xp.sqrt(sa, out=tmp)
        avg += f(eps)
        if momentum > 0:
            buf = _real(momentum_buffer_list[i]._data)
            buf *= f(momentum)
            xp.divide(g, avg, out=avg)
            buf += avg
            xp.multiply(buf, f(lr), out=avg)
        else:
            xp.divide(g, avg, out=avg)
            avg *= f(lr)
        p -= avg
        param._bump_version()
