"""Muon: momentum SGD whose 2-D updates are orthogonalised by Newton-Schulz iterations.

The iterations run in bfloat16 like torch's: each matrix product is computed in float32
and rounded to bfloat16 once."""

from __future__ import annotations

import math

from .._core import dtype as _dt
from .._core.backend import xp
from .._tensor import Tensor
from .optimizer import Optimizer, _call_closure, _lerp_, _no_grad_step, _to_scalar, _zeros_like

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.775
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5

def _bf(a):
    return a.astype(_dt.bfloat16.np).astype(xp.float32)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf(grad.astype(xp.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = float(_bf(xp.array(math.sqrt(float(xp.vdot(x.ravel(), x.ravel()))),
                              dtype=xp.float32)))
    x = _bf(x / xp.float32(_bf(xp.array(max(norm, eps), dtype=xp.float32))))
    for _ in range(ns_steps):
        gram = _bf(x @ x.T)
        gram_update = _bf(xp.float32(b) * gram + xp.float32(c) * (gram @ gram))
        x = _bf(xp.float32(a) * x + gram_update @ x)
    if tall:
        x = x.T
    return x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon (torch.optim.Muon): only for 2-D parameters."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            for param in group["params"]:
                grad = param._grad
                if grad is None:
                    continue
                if param.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                state = self.state[param]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = _zeros_like(grad)
                g = grad._data
                buf = state["momentum_buffer"]._data
                momentum = group["momentum"]
                _lerp_(buf, g, 1 - momentum)
                if group["nesterov"]:
                    update = g.copy()
                    _lerp_(update, buf, momentum)
                else:
                    update = buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                     group["ns_steps"], group["eps"])
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], param.shape)
                p = param._data
                p *= p.dtype.type(1 - lr * group["weight_decay"])
                p -= (update * xp.float32(adjusted_lr)).astype(p.dtype)
                param._bump_version()
        return loss
