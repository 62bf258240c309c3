"""Adam (and, through ``decoupled_weight_decay``, AdamW)."""

from __future__ import annotations

from .._core.backend import xp
from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _blocks,
    _call_closure,
    _check_capturable,
    _check_differentiable,
    _check_fused_foreach,
    _no_grad_step,
    _real,
    _scalar_tensor,
    _scratch,
    _to_scalar,
    _zeros_like,
)

__all__ = ["Adam", "adam"]


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Adam(Optimizer):
    """Adam (torch.optim.Adam), with AMSGrad and decoupled weight decay options."""

    _group_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, decoupled_weight_decay=False, fused=None)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if b.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() else b for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)
        _check_differentiable(differentiable)


    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps):
        amsgrad = group["amsgrad"]
        state_of = self.state
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            params.append(p)
            grads.append(g)
            state = state_of[p]
            if len(state) == 0:
                state["step"] = _scalar_tensor(0.0)
                state["exp_avg"] = _zeros_like(p)
                state["exp_avg_sq"] = _zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = _zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if amsgrad:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            steps.append(state["step"])

    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps)
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], capturable=group["capturable"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """Functional Adam: one in-place update of every tensor in ``params``."""
    _check_capturable(capturable)
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    coupled_wd = weight_decay != 0 and not decoupled_weight_decay
    for i, param in enumerate(params):
        step_t = state_steps[i]
        step_t._data += 1
        step = step_t._data.item()
        p = _real(param._data)
        f = p.dtype.type
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = f(lr / bias_correction1)
        bc2_sqrt = f(bias_correction2 ** 0.5)
        w1 = f(1 - beta1)
        b2, w2, eps_, wd = f(beta2), f(1 - beta2), f(eps), f(weight_decay)
        shrink = f(1 - lr * weight_decay)
        arrays = [p, _real(grads[i]._data), _real(exp_avgs[i]._data),
                  _real(exp_avg_sqs[i]._data)]
        if amsgrad:
            arrays.append(_real(max_exp_avg_sqs[i]._data))
        for blk in _blocks(arrays):
            bp, g, ea, eas = blk[:4]
            t1, t2 = _scratch(bp)
            if coupled_wd:
                # grad + weight_decay * param (on the negated grad when maximizing)
                xp.multiply(bp, wd, out=t2)
                if maximize:
                    t2 -= g
                else:
                    t2 += g
                g = t2
            elif maximize:
                g = xp.negative(g, out=t2)
            if weight_decay != 0 and decoupled_weight_decay:
                bp *= shrink
            # exp_avg.lerp_(grad, 1 - beta1)
            xp.subtract(g, ea, out=t1)
            if w1 < 0.5:
                t1 *= w1
                ea += t1
            else:
                t1 *= f(1) - w1
                xp.subtract(g, t1, out=ea)
            # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            eas *= b2
            xp.multiply(g, g, out=t1)
            t1 *= w2
            eas += t1
            if amsgrad:
                xp.maximum(blk[4], eas, out=blk[4])
                xp.sqrt(blk[4], out=t1)
            else:
                xp.sqrt(eas, out=t1)
            # param.addcdiv_(exp_avg, sqrt(v) / bc2_sqrt + eps, value=-step_size)
            t1 /= bc2_sqrt
            t1 += eps_
            xp.divide(ea, t1, out=t1)
            t1 *= step_size
            bp -= t1
        param._bump_version()
