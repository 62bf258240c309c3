"""Stochastic gradient descent with optional momentum, dampening and Nesterov momentum."""

from __future__ import annotations

from .._core.backend import xp
from .._tensor import _wrap
from .optimizer import (
    Optimizer,
    _blocks,
    _call_closure,
    _check_differentiable,
    _check_fused_foreach,
    _no_grad_step,
    _real,
    _scratch,
    _to_scalar,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent (torch.optim.SGD)."""

    _group_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False,
                           fused=False)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(self, fused, foreach, differentiable)
        _check_differentiable(differentiable)


    @_no_grad_step
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            use_momentum = group["momentum"] != 0
            for p in group["params"]:
                if p._grad is not None:
                    params.append(p)
                    grads.append(p._grad)
                    if use_momentum:
                        bufs.append(self.state[p].get("momentum_buffer"))
            sgd(params, grads, bufs, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if use_momentum:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    """Functional SGD: updates ``params`` in place; fills ``momentum_buffer_list`` entries that
    are None with new buffers."""
    lr = _to_scalar(lr)
    weight_decay = _to_scalar(weight_decay)
    for i, param in enumerate(params):
        p = _real(param._data)
        f = p.dtype.type
        lr_, wd, mom, damp = f(lr), f(weight_decay), f(momentum), f(1 - dampening)
        arrays = [p, _real(d_p_list[i]._data)]
        fresh = False
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                # the first step's buffer is the (decayed, negated) gradient itself
                buf = momentum_buffer_list[i] = _wrap(d_p_list[i]._data.copy(order="K"))
                fresh = True
            arrays.append(_real(buf._data))
        for blk in _blocks(arrays):
            bp, g = blk[0], blk[1]
            t1, t2 = _scratch(bp)
            if weight_decay != 0:
                xp.multiply(bp, wd, out=t2)
                if maximize:
                    t2 -= g
                else:
                    t2 += g
                g = t2
            elif maximize:
                g = xp.negative(g, out=t2)
            if momentum != 0:
                b = blk[2]
                if fresh:
                    if g is not blk[1]:
                        b[...] = g
                else:
                    b *= mom
                    if dampening != 0:
                        xp.multiply(g, damp, out=t1)
                        b += t1
                    else:
                        b += g
                if nesterov:
                    xp.multiply(b, mom, out=t1)
                    t1 += g
                    g = t1
                else:
                    g = b
            # param.add_(grad, alpha=-lr)
            xp.multiply(g, lr_, out=t1)
            bp -= t1
        param._bump_version()
