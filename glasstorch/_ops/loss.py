"""Loss kernels: nll_loss, mse/smooth_l1/huber, binary cross entropy (with logits),
soft/multi/multilabel margin losses, CTC, and the composite losses torch exposes as
``torch.xxx`` (kl_div, poisson_nll_loss, hinge/margin-ranking/cosine-embedding/triplet).

Forward passes are whole-array NumPy computations (no loops over samples). Backward
formulas are written with glasstorch ops on the saved tensors, so they can be
differentiated again; the margin losses and CTC compute their gradient at the NumPy
level (their backward is not itself differentiable).

Every kernel takes ``reduction`` as torch's string ('none', 'mean', 'sum') or as the
integer enum of the ``torch.xxx`` entry points (0, 1, 2); like torch's bindings, those
entry points default to no reduction.
"""

from __future__ import annotations

import math

from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    Tensor,
    binary_operands,
    broadcast_error,
    compute_dtype,
    needs_grad,
    not_implemented_for,
    record,
    result_array,
    wrap,
    xp,
)

__all__ = [
    "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum"}
_int64 = xp.dtype(xp.int64)
_uint8 = xp.dtype(xp.uint8)


def reduction_name(reduction):
    """'none' | 'mean' | 'sum' from torch's string or integer reduction."""
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _reduce(arr, reduction, dt):
    """Reduce a computed loss array; round once to ``dt``."""
    with xp.errstate(all="ignore"):
        if reduction == "mean":
            arr = arr.mean() if arr.size else xp.asarray(xp.nan, arr.dtype)
        elif reduction == "sum":
            arr = arr.sum()
    return wrap(result_array(xp.asarray(arr), dt))


def _grad_scale(grad, reduction, n):
    # gradient of the reduction: mean divides by the element count
    return grad / n if reduction == "mean" and n else grad


def _not_differentiable(t, fname, argname):
    if isinstance(t, Tensor) and needs_grad(t):
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                           f"argument '{argname}'. This input cannot have requires_grad True.")


def _needs(node, i):
    return node.next_functions[i][0] is not None


def _float_operands(input, target, name):
    x, y, dt = binary_operands(input, target)
    if dt._category < 2 or dt.is_complex:
        raise not_implemented_for(name, dt)
    cd = compute_dtype(dt)
    x = x if x.dtype == cd else x.astype(cd)
    y = y.astype(cd) if isinstance(y, xp.ndarray) and y.dtype != cd else y
    try:
        xp.broadcast_shapes(xp.shape(x), xp.shape(y))
    except ValueError:
        raise broadcast_error(input, target) from None
    return x, y, dt


# ----------------------------------------------------------------------------- regression

def mse_loss(input, target, reduction="mean"):
    """Mean squared error (kernel of ``F.mse_loss``)."""
    reduction = reduction_name(reduction)
    x, y, dt = _float_operands(input, target, "mse")
    with xp.errstate(all="ignore"):
        d = x - y
        r = _reduce(d * d, reduction, dt)
    if needs_grad(input, target):
        record(r, MseLossBackward0, (input, target), self=input, target=target,
               reduction=reduction, numel=d.size)
    return r


class MseLossBackward0(Node):
    def backward(self, grad):
        d = self._saved_self - self._saved_target
        g = d * (_grad_scale(grad, self._saved_reduction, self._saved_numel) * 2)
        return (g if _needs(self, 0) else None), (-g if _needs(self, 1) else None)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Smooth L1: quadratic below ``beta``, linear above (kernel of ``F.smooth_l1_loss``)."""
    reduction = reduction_name(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y, dt = _float_operands(input, target, "smooth_l1")
    with xp.errstate(all="ignore"):
        d = xp.abs(x - y)
        loss = d - 0.5 * beta if beta == 0 else xp.where(d < beta, 0.5 * d * d / beta,
                                                         d - 0.5 * beta)
        r = _reduce(loss.astype(d.dtype, copy=False), reduction, dt)
    if needs_grad(input, target):
        record(r, SmoothL1LossBackward0, (input, target), self=input, target=target,
               reduction=reduction, beta=beta, numel=d.size)
    return r


class SmoothL1LossBackward0(Node):
    def backward(self, grad):
        import glasstorch as gt
        d = self._saved_self - self._saved_target
        beta = self._saved_beta
        slope = d.sign() if beta == 0 else gt.where(d.abs() < beta, d / beta, d.sign())
        g = slope * _grad_scale(grad, self._saved_reduction, self._saved_numel)
        return (g if _needs(self, 0) else None), (-g if _needs(self, 1) else None)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """Huber loss: quadratic below ``delta``, ``delta``-sloped above (``F.huber_loss``)."""
    reduction = reduction_name(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, y, dt = _float_operands(input, target, "huber")
    with xp.errstate(all="ignore"):
        d = xp.abs(x - y)
        loss = xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(d.dtype)
        r = _reduce(loss, reduction, dt)
    if needs_grad(input, target):
        record(r, HuberLossBackward0, (input, target), self=input, target=target,
               reduction=reduction, delta=delta, numel=d.size)
    return r


class HuberLossBackward0(Node):
    def backward(self, grad):
        d = self._saved_self - self._saved_target
        delta = self._saved_delta
        g = d.clamp(-delta, delta) * _grad_scale(grad, self._saved_reduction, self._saved_numel)
        return (g if _needs(self, 0) else None), (-g if _needs(self, 1) else None)


def soft_margin_loss(input, target, reduction="mean"):
    """``log(1 + exp(-target * input))`` (kernel of ``F.soft_margin_loss``)."""
    reduction = reduction_name(reduction)
    _not_differentiable(target, "soft_margin_loss", "target")
    x, y, dt = _float_operands(input, target, "soft_margin")
    with xp.errstate(all="ignore"):
        z = -y * x
        loss = xp.logaddexp(xp.zeros((), z.dtype), z)
        r = _reduce(loss, reduction, dt)
    if needs_grad(input, target):
        record(r, SoftMarginLossBackward0, (input, target), self=input, target=target,
               reduction=reduction, numel=loss.size)
    return r


class SoftMarginLossBackward0(Node):
    def backward(self, grad):
        x, y = self._saved_self, self._saved_target
        s = (-(x * y)).sigmoid() * _grad_scale(grad, self._saved_reduction, self._saved_numel)
        return (-(y * s) if _needs(self, 0) else None), (-(x * s) if _needs(self, 1) else None)


# ----------------------------------------------------------------------------- binary CE

def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-w (t log x + (1 - t) log(1 - x))``, logs clamped at -100."""
    reduction = reduction_name(reduction)
    if input.dtype is not target.dtype:
        raise RuntimeError(f"Found dtype {_SHORT[target.dtype]} but expected "
                           f"{_SHORT[input.dtype]}")
    dt = input.dtype
    if dt._category < 2 or dt.is_complex:
        raise not_implemented_for("binary_cross_entropy", dt)
    cd = compute_dtype(dt)
    x = input._data.astype(cd, copy=False)
    y = target._data.astype(cd, copy=False)
    if x.size and ((x < 0).any() or (x > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with xp.errstate(all="ignore"):
        loss = -(y * xp.maximum(xp.log(x), -100) + (1 - y) * xp.maximum(xp.log1p(-x), -100))
        if weight is not None:
            loss = loss * weight._data.astype(cd, copy=False)
        r = _reduce(loss.astype(cd, copy=False), reduction, dt)
    if needs_grad(input, target, weight):
        record(r, BinaryCrossEntropyBackward0, (input, target, weight), self=input,
               target=target, weight=weight, reduction=reduction, numel=loss.size)
    return r


class BinaryCrossEntropyBackward0(Node):
    def backward(self, grad):
        x, y, w = self._saved_self, self._saved_target, self._saved_weight
        g = _grad_scale(grad, self._saved_reduction, self._saved_numel)
        if w is not None:
            g = g * w
        gi = gt_ = None
        if _needs(self, 0):
            gi = g * (x - y) / ((1 - x) * x).clamp_min(1e-12)
        if _needs(self, 1):
            gt_ = g * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
        if _needs(self, 2):
            raise RuntimeError("the derivative for 'weight' is not implemented.")
        return gi, gt_, None


def _log_sigmoid(x):
    # log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|))), stable and differentiable
    return -((-x).clamp_min(0) + (-x.abs()).exp().log1p())


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    """Sigmoid + binary cross entropy in one numerically stable step."""
    reduction = reduction_name(reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _not_differentiable(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    if target.dtype is _dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if not target.dtype.is_floating_point and not target.dtype.is_complex:
        # torch computes into a tensor of the target's dtype, which cannot take the loss
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_SHORT[target.dtype]}")
    x, y, dt = _float_operands(input, target, "binary_cross_entropy_with_logits")
    cd = x.dtype
    with xp.errstate(all="ignore"):
        # log(1 + exp(-x)) computed without overflow
        sp = xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))
        if pos_weight is not None:
            lw = 1 + (pos_weight._data.astype(cd, copy=False) - 1) * y
            loss = (1 - y) * x + lw * sp
        else:
            loss = (1 - y) * x + sp
        if weight is not None:
            loss = loss * weight._data.astype(cd, copy=False)
        loss = xp.asarray(loss, cd)
        r = _reduce(loss, reduction, dt)
    if needs_grad(input, target, weight, pos_weight):
        record(r, BinaryCrossEntropyWithLogitsBackward0, (input, target, weight, pos_weight),
               self=input, target=target, weight=weight, pos_weight=pos_weight,
               reduction=reduction, numel=loss.size)
    return r


class BinaryCrossEntropyWithLogitsBackward0(Node):
    def backward(self, grad):
        x, y = self._saved_self, self._saved_target
        w, pw = self._saved_weight, self._saved_pos_weight
        g = _grad_scale(grad, self._saved_reduction, self._saved_numel)
        if w is not None:
            g = g * w
        gi = gt_ = gpw = None
        if _needs(self, 0):
            if pw is None:
                gi = (x.sigmoid() - y) * g
            else:
                gi = (x.sigmoid() * ((pw - 1) * y + 1) - pw * y) * g
        if _needs(self, 1):
            gt_ = -x * g if pw is None else -(x + (pw - 1) * _log_sigmoid(x)) * g
        if _needs(self, 3):
            gpw = -(y * _log_sigmoid(x)) * g
        if _needs(self, 2):
            raise RuntimeError("the derivative for 'weight' is not implemented.")
        return gi, gt_, None, gpw


# ----------------------------------------------------------------------------- nll

def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """Negative log likelihood of class indices (kernel of ``F.nll_loss``).

    Inputs ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)`` with targets ``()``, ``(N)``,
    ``(N, d1, ...)``; 3-d and >4-d inputs are viewed as 4-d, as torch does.
    """
    reduction = reduction_name(reduction)
    nd = input.dim()
    if target.dtype is not _dt.int64 and target.dtype is not _dt.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_SHORT[target.dtype]}")
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if not (nd == 1 and target.dim() == 0) and (
            target.dim() == 0 or input.shape[0] != target.shape[0]):
        bt = target.shape[0] if target.dim() else 1
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({bt}).")
    if nd == 3 or nd > 4:
        n, c = input.shape[0], input.shape[1]
        if tuple(target.shape) != (n,) + tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {[n] + list(input.shape[2:])}, got "
                               f"{list(target.shape)}")
        empty = input.numel() == 0
        x4 = input.contiguous().view(n, c, 0, 0) if empty else input.contiguous().view(n, c, 1, -1)
        t3 = target.contiguous().view(n, 0, 0) if target.numel() == 0 else \
            target.contiguous().view(n, 1, -1)
        out = _nll(x4, t3, weight, reduction, ignore_index)
        return out.view((n,) + tuple(input.shape[2:])) if reduction == "none" else out
    return _nll(input, target, weight, reduction, ignore_index)


def _nll(input, target, weight, reduction, ignore_index):
    nd = input.dim()
    if nd == 4 and tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    if nd <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    dt = input.dtype
    if dt._category < 2 or dt.is_complex:
        raise not_implemented_for("nll_loss", dt)
    c = input.shape[1] if nd >= 2 else input.shape[0]
    cd = compute_dtype(dt)
    if weight is not None:
        if weight.dtype is not dt:
            raise RuntimeError(f"expected scalar type {_SHORT[dt]} but found "
                               f"{_SHORT[weight.dtype]}")
        if weight.numel() != c:
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    t = target._data.astype(_int64, copy=False)
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    safe = xp.where(keep, t, 0)
    x = xp.moveaxis(input._data, 1, -1) if nd >= 2 else input._data
    picked = xp.take_along_axis(x, safe[..., None], -1)[..., 0].astype(cd, copy=False)
    w = keep.astype(cd) if weight is None else \
        weight._data.astype(cd, copy=False)[safe] * keep
    with xp.errstate(all="ignore"):
        loss = -picked * w
        if reduction == "none":
            r = wrap(result_array(loss, dt))
            total = None
        else:
            total = w.sum()
            s = loss.sum()
            r = wrap(result_array(xp.asarray(s / total if reduction == "mean" else s), dt))
    if needs_grad(input, weight):
        cls = NllLoss2DBackward0 if nd == 4 else NllLossBackward0
        record(r, cls, (input, target, weight), target=safe, w=w, total=total,
               reduction=reduction, ndim=nd)
    return r


class NllLossBackward0(Node):
    def backward(self, grad):
        if _needs(self, 2):
            raise RuntimeError("the derivative for 'weight' is not implemented.")
        shape, np_dt = self._input_meta[0]
        nd = self._saved_ndim
        t, w = self._saved_target, self._saved_w
        coef = -w
        if self._saved_reduction == "mean":
            with xp.errstate(all="ignore"):
                coef = coef / self._saved_total
        # d loss / d input is -w[t] / total at the target class, zero elsewhere
        onehot = xp.zeros(shape, coef.dtype)
        view = xp.moveaxis(onehot, 1, -1) if nd >= 2 else onehot
        xp.put_along_axis(view, t[..., None], coef[..., None], -1)
        g = grad.unsqueeze(1) if self._saved_reduction == "none" and nd >= 2 else grad
        return wrap(onehot.astype(np_dt, copy=False)) * g, None, None


class NllLoss2DBackward0(NllLossBackward0):
    pass


# ----------------------------------------------------------------------------- margin losses

def _class_targets(target, n, c, name):
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_SHORT[target.dtype]}")
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"{name}: target tensor should be 1-D with size equal to the number "
                           f"of input samples (batch size). Expected target of size [{n}], but "
                           f"got {list(target.shape)}")
    t = target._data.reshape(n)
    if t.size and ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    return t


_LOW_FLOATS = (_dt.float16, _dt.bfloat16)


def _as_2d(input, name):
    nd = input.dim()
    if nd > 2 or (nd == 2 and input.shape[1] == 0) or (nd < 2 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    dt = input.dtype
    if dt._category < 2 or dt.is_complex or dt in _LOW_FLOATS:
        raise NotImplementedError(f'"{name}" not implemented for \'{_SHORT[dt]}\'')
    x = input._data.reshape(-1, input.shape[-1] if nd else 1)
    return x.astype(compute_dtype(dt), copy=False), dt


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """Multi-class hinge loss ``sum_i max(0, margin - x[y] + x[i])^p / C`` per sample."""
    reduction = reduction_name(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, dt = _as_2d(input, "multi_margin_loss_cpu_kernel")
    n, c = x.shape
    t = _class_targets(target, n, c, "multi_margin_loss")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    with xp.errstate(all="ignore"):
        z = margin - xp.take_along_axis(x, t[:, None], 1) + x
        active = z > 0
        active[xp.arange(n), t] = False
        zp = xp.where(active, z if p == 1 else z * z, 0)
        scale = xp.ones(n, x.dtype) if weight is None else \
            weight._data.astype(x.dtype, copy=False)[t]
        per = zp.sum(1) * scale / c
    if reduction == "none":
        r = wrap(result_array(per.reshape(tuple(target.shape)), dt))
    else:
        r = _reduce(per, reduction, dt)
    if needs_grad(input):
        # d/dx_i = (p * z^(p-1)) * scale / C for active i; the target class gets minus the sum
        gz = (active * (1.0 if p == 1 else 2 * z)) * (scale / c)[:, None]
        gz[xp.arange(n), t] = -gz.sum(1)
        record(r, MultiMarginLossBackward0, (input, target, weight), gz=gz.astype(x.dtype),
               reduction=reduction, n=n)
    return r


class _ArrayGradBackward(Node):
    """Backward of a kernel whose per-element gradient was computed in forward."""

    def backward(self, grad):
        shape, np_dt = self._input_meta[0]
        gz = self._saved_gz
        red = self._saved_reduction
        if red == "mean":
            grad = grad / self._saved_n if self._saved_n else grad
        g = grad.reshape(-1, 1) if red == "none" else grad
        out = (wrap(gz.astype(np_dt, copy=False)) * g).reshape(shape)
        return (out,) + (None,) * (len(self._input_meta) - 1)


class MultiMarginLossBackward0(_ArrayGradBackward):
    pass


def multilabel_margin_loss(input, target, reduction="mean"):
    """Multi-label hinge loss; each target row lists class indices up to the first -1."""
    reduction = reduction_name(reduction)
    x, dt = _as_2d(input, "multilabel_margin_loss_forward_out_frame")
    n, c = x.shape
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_SHORT[target.dtype]}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    t = target._data.reshape(n, c)
    # valid targets are the prefix before the first -1
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)
    if (valid & (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    safe = xp.where(valid, t, 0)
    is_target = xp.zeros((n, c), bool)
    rows = xp.nonzero(valid)
    is_target[rows[0], safe[rows]] = True
    with xp.errstate(all="ignore"):
        xy = xp.take_along_axis(x, safe, 1)                    # (n, j)
        z = 1 - xy[:, :, None] + x[:, None, :]                 # (n, j, i)
        active = (z > 0) & valid[:, :, None] & ~is_target[:, None, :]
        per = xp.where(active, z, 0).sum((1, 2)) / c
    out_shape = () if input.dim() < 2 else (n,)
    if reduction == "none":
        r = wrap(result_array(per.astype(x.dtype).reshape(out_shape), dt))
    else:
        r = _reduce(per.astype(x.dtype), reduction, dt)
    if needs_grad(input):
        gz = active.sum(1).astype(x.dtype) / c                 # + for each non-target i
        neg = active.sum(2).astype(x.dtype) / c                # - for each target slot j
        xp.add.at(gz, (xp.repeat(xp.arange(n), c), safe.reshape(-1)), -neg.reshape(-1))
        record(r, MultilabelMarginLossBackward0, (input, target), gz=gz, reduction=reduction,
               n=n)
    return r


class MultilabelMarginLossBackward0(_ArrayGradBackward):
    pass


# ----------------------------------------------------------------------------- composites

def scalar_mul(t, value):
    """``t * value`` for a Python number, recorded as torch's Scalar overload (MulBackward1)."""
    r = t * value
    if r.grad_fn is not None:
        r = wrap(r._data)
        record(r, MulBackward1, (t,), other=value)
    return r


def scalar_div(t, value):
    """``t / value`` for a Python number, recorded as torch's Scalar overload (DivBackward1)."""
    r = t / value
    if r.grad_fn is not None:
        r = wrap(r._data)
        record(r, DivBackward1, (t,), other=value)
    return r


class MulBackward1(Node):
    def backward(self, grad):
        return grad * self._saved_other


class DivBackward1(Node):
    def backward(self, grad):
        return grad / self._saved_other


def _reduce_t(loss, reduction):
    reduction = reduction_name(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def kl_div(input, target, reduction=0, *, log_target=False):
    """Pointwise KL divergence ``target * (log target - input)`` (input is log-probabilities)."""
    import glasstorch as gt
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or \
            not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = gt.xlogy(target, target) - target * input
    return _reduce_t(loss, reduction)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """Poisson negative log likelihood (with the Stirling term when ``full``)."""
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce_t(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1."""
    import glasstorch as gt
    zeros = gt.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    out_margin = gt.where(target != 1, margin_clamp, zeros)
    out_self = gt.where(target != -1, input, zeros)
    return _reduce_t(out_margin + out_self, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``max(0, -target * (input1 - input2) + margin)``."""
    return _reduce_t((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``1 - cos`` for target 1, ``max(0, cos - margin)`` for target -1 (cos over the last dim)."""
    import glasstorch as gt
    t_dim = target.dim()
    if input1.dim() != input2.dim() or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(f"cosine_embedding_loss : input1 and input2 should have the same "
                           f"shape, but got {list(input1.shape)} and {list(input2.shape)}")
    if input1.dim() != t_dim + 1:
        raise RuntimeError(f"{input1.dim()}D target tensor expects {t_dim + 1}D input tensors, "
                           f"but found inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + eps
    mag2 = (input2 * input2).sum(-1) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = gt.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = gt.where(target == 1, pos, zeros) + gt.where(target == -1, neg, zeros)
    return _reduce_t(out, reduction)


def _pairwise(x1, x2, p, eps):
    return (x1 - x2 + eps).norm(p, -1)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction=0):
    """``max(0, margin + d(a, p) - d(a, n))`` with the p-norm distance."""
    import glasstorch as gt
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    d_pos = _pairwise(anchor, positive, p, eps)
    d_neg = _pairwise(anchor, negative, p, eps)
    if swap:
        d_neg = gt.minimum(d_neg, _pairwise(positive, negative, p, eps))
    return _reduce_t((margin + d_pos - d_neg).clamp_min(0), reduction)


# ----------------------------------------------------------------------------- CTC

def _lengths(v):
    if isinstance(v, Tensor):
        return v._data.astype(_int64).reshape(-1)
    return xp.asarray(list(v), _int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """Connectionist temporal classification loss (forward algorithm in log space).

    ``log_probs`` is ``(T, N, C)`` (or ``(T, C)`` unbatched); ``targets`` is ``(N, S)``
    padded or 1-d concatenated. Vectorised over the batch; loops over time only.
    """
    import glasstorch as gt
    reduction = reduction_name(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    per = _ctc_raw(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        per = gt.where(per == math.inf, gt.zeros((), dtype=per.dtype), per)
    if reduction == "none":
        return per.squeeze(0) if unbatched else per
    tl = _lengths(target_lengths)
    tl_t = wrap(xp.maximum(tl, 1).astype(per._data.dtype))
    if reduction == "mean":
        return (per / tl_t).mean()
    return per.sum()


def _ctc_raw(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    dt = log_probs.dtype
    if dt._category < 2 or dt.is_complex:
        raise not_implemented_for("ctc_loss", dt)
    lp = log_probs._data.astype(compute_dtype(dt), copy=False)
    tlen, n, c = lp.shape
    il = _lengths(input_lengths)
    tl = _lengths(target_lengths)
    if il.size != n:
        raise RuntimeError(f"input_lengths must be of size batch_size ({il.size} vs {n})")
    if tl.size != n:
        raise RuntimeError(f"target_lengths must be of size batch_size ({tl.size} vs {n})")
    if (il > tlen).any():
        raise RuntimeError(f"Expected input_lengths to have value at most {tlen}, but got "
                           f"value {int(il.max())}")
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    tg = targets._data.astype(_int64)
    if tg.ndim == 1:  # concatenated targets
        offs = xp.concatenate([[0], xp.cumsum(tl)[:-1]]).astype(_int64)
        smax = int(tl.max()) if n else 0
        idx = offs[:, None] + xp.arange(smax)[None, :]
        lab = tg[xp.minimum(idx, max(tg.size - 1, 0))] if tg.size else xp.zeros((n, smax), _int64)
    else:
        lab = tg
        if (tl > lab.shape[1]).any():
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at "
                               f"dimension 1, but got size {lab.shape[1]}")
    smax = int(tl.max()) if n else 0
    lab = lab[:, :smax]
    ls = 2 * smax + 1
    # extended labels: blank, l1, blank, l2, ..., blank
    ext = xp.full((n, ls), blank, _int64)
    ext[:, 1::2] = lab
    pos = xp.arange(ls)
    valid = pos[None, :] < (2 * tl[:, None] + 1)
    # a skip from s-2 to s is allowed when s is a label differing from the previous label
    skip = xp.zeros((n, ls), bool)
    skip[:, 3::2] = lab[:, 1:] != lab[:, :-1]
    neg = -xp.inf
    bidx = xp.arange(n)[:, None]
    emit = lp[:, bidx, ext]                                   # (T, n, ls)
    alpha = xp.full((tlen, n, ls), neg, lp.dtype)
    with xp.errstate(all="ignore"):
        if tlen:
            alpha[0, :, 0] = emit[0, :, 0]
            if ls > 1:
                alpha[0, :, 1] = xp.where(tl > 0, emit[0, :, 1], neg)
        for t in range(1, tlen):
            prev = alpha[t - 1]
            a1 = xp.full_like(prev, neg)
            a1[:, 1:] = prev[:, :-1]
            a2 = xp.full_like(prev, neg)
            a2[:, 2:] = xp.where(skip[:, 2:], prev[:, :-2], neg)
            alpha[t] = xp.logaddexp(xp.logaddexp(prev, a1), a2) + emit[t]
        alpha = xp.where(valid[None], alpha, neg)
        last = xp.maximum(il - 1, 0)
        end = 2 * tl
        a_last = alpha[last, xp.arange(n)]                     # (n, ls)
        ll = xp.logaddexp(xp.take_along_axis(a_last, end[:, None], 1)[:, 0],
                          xp.where(tl > 0, xp.take_along_axis(
                              a_last, xp.maximum(end - 1, 0)[:, None], 1)[:, 0], neg))
        ll = xp.where(il > 0, ll, xp.where(tl == 0, 0.0, neg))
        loss = -ll
        inf = xp.isinf(loss)
    per = wrap(result_array(loss.astype(lp.dtype), dt))
    if needs_grad(log_probs):
        grad = _ctc_grad(lp, ext, skip, valid, alpha, emit, il, tl, ll, bidx)
        if zero_infinity:
            grad = xp.where(inf[None, :, None], 0, grad)
        record(per, CtcLossBackward0, (log_probs,), gz=grad)
    return per


def _ctc_grad(lp, ext, skip, valid, alpha, emit, il, tl, ll, bidx):
    """d(-log p)/d log_probs via the backward variables (beta), all in log space."""
    tlen, n, ls = alpha.shape
    neg = -xp.inf
    beta = xp.full((tlen, n, ls), neg, lp.dtype)
    skip_next = xp.zeros((n, ls), bool)
    skip_next[:, :-2] = skip[:, 2:]
    with xp.errstate(all="ignore"):
        # beta[t, s]: log prob of emitting the rest from (t, s), including emit[t, s]
        end = 2 * tl
        init = xp.full((n, ls), neg, lp.dtype)
        rows = xp.arange(n)
        for t in range(tlen - 1, -1, -1):
            starts = il - 1 == t                               # sequences ending here
            cur = xp.full((n, ls), neg, lp.dtype)
            if t + 1 < tlen:
                nxt = beta[t + 1]
                b1 = xp.full_like(nxt, neg)
                b1[:, :-1] = nxt[:, 1:]
                b2 = xp.full_like(nxt, neg)
                b2[:, :-2] = xp.where(skip_next[:, :-2], nxt[:, 2:], neg)
                cur = xp.logaddexp(xp.logaddexp(nxt, b1), b2)
            fresh = init.copy()
            fresh[rows, xp.maximum(end - 1, 0)] = xp.where(tl > 0, 0.0, neg)
            fresh[rows, end] = 0.0
            cur = xp.where(starts[:, None], fresh, cur)
            cur = xp.where((t < il)[:, None] & valid, cur + emit[t], neg)
            beta[t] = cur
        # occupancy: alpha * beta / emit, summed per class
        ab = alpha + beta - emit                                # log(alpha*beta/y)
        ab = xp.where(xp.isfinite(ab), ab, neg)
        mx = ab.max(2, keepdims=True)
        mx = xp.where(xp.isfinite(mx), mx, 0)
        occ = xp.exp(ab - mx)                                  # (T, n, ls)
        c = lp.shape[2]
        per_class = xp.zeros((tlen, n, c), lp.dtype)
        flat = (xp.arange(tlen)[:, None, None] * n * c + bidx[None] * c + ext[None]).reshape(-1)
        per_class_flat = per_class.reshape(-1)
        xp.add.at(per_class_flat, flat, occ.reshape(-1))
        # grad wrt log_probs = prob - occupancy / p(l|x)
        log_occ = xp.log(per_class) + mx
        grad = xp.exp(lp) - xp.exp(log_occ - ll[None, :, None])
        grad = xp.where((xp.arange(tlen)[:, None] < il[None, :])[:, :, None], grad, 0)
        grad = xp.where(xp.isfinite(ll)[None, :, None], grad, xp.nan)
    return grad


class CtcLossBackward0(Node):
    once_differentiable = True

    def backward(self, grad):
        shape, np_dt = self._input_meta[0]
        g = grad.reshape(1, -1, 1)
        return wrap(self._saved_gz.astype(np_dt, copy=False)) * g
