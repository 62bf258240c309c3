"""Adafactor: factored second-moment estimates (row and column variances for matrices)."""

from __future__ import annotations

import math

from .._core.backend import xp
from .._tensor import _wrap
from .optimizer import (
    Optimizer,
    _call_closure,
    _lerp_,
    _no_grad_step,
    _scalar_tensor,
    _to_scalar,
)

__all__ = ["Adafactor", "adafactor"]


def _norm(a):
    # float32 sum of squares, then the square root, as torch's 2-norm on the CPU
    return math.sqrt(float(xp.vdot(a.ravel(), a.ravel())))


class Adafactor(Optimizer):
    """Adafactor (torch.optim.Adafactor)."""

    _group_defaults = dict(foreach=None)

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                params.append(p)
                grads.append(g)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_tensor(0.0)
                    if g.dim() > 1:
                        shape = list(g.shape)
                        shape[-1] = 1
                        state["row_var"] = _wrap(xp.zeros(shape, dtype=g._data.dtype))
                        shape = list(g.shape)
                        shape[-2] = 1
                        state["col_var"] = _wrap(xp.zeros(shape, dtype=g._data.dtype))
                    else:
                        state["variance"] = _wrap(xp.zeros_like(g._data))
                row_vars.append(state.get("row_var"))
                col_vars.append(state.get("col_var"))
                variances.append(state.get("variance"))
                steps.append(state["step"])
            eps1, eps2 = group["eps"]
            adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"],
                      lr=group["lr"], beta2_decay=group["beta2_decay"],
                      weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None,
              grad_scale=None, found_inf=None, has_complex=False, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize):
    """Functional Adafactor."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        p = param._data
        f = p.dtype.type
        g = grads[i]._data
        if maximize:
            g = xp.negative(g)
        e1 = float(xp.finfo(p.dtype).eps) if eps1 is None else eps1
        step_t = state_steps[i]
        step_t._data += 1
        step = step_t._data.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, _norm(p) / p.size ** 0.5) * rho_t
        if weight_decay != 0:
            p *= f(1 - lr * weight_decay)
        if g.ndim > 1:
            rv = row_vars[i]._data
            cv = col_vars[i]._data
            sq = xp.multiply(g, g)
            row_mean = sq.sum(axis=-1, keepdims=True)
            row_mean /= f(g.shape[-1])
            _lerp_(rv, row_mean, one_minus_beta2_t)
            col_mean = sq.sum(axis=-2, keepdims=True)
            col_mean /= f(g.shape[-2])
            _lerp_(cv, col_mean, one_minus_beta2_t)
            var_estimate = xp.matmul(rv, cv)
            var_estimate /= xp.maximum(rv.mean(axis=-2, keepdims=True), f(e1))
        else:
            v = variances[i]._data
            _lerp_(v, xp.multiply(g, g), one_minus_beta2_t)
            var_estimate = v.copy()
        xp.maximum(var_estimate, f(e1 * e1), out=var_estimate)
        update = xp.sqrt(var_estimate, out=var_estimate)
        xp.divide(g, update, out=update)
        denom = max(1.0, _norm(update) / (update.size ** 0.5 * d))
        update *= f(alpha / denom)
        p -= update
        param._bump_version()
