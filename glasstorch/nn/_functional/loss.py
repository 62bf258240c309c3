"""torch.nn.functional losses (torch's signatures, defaults, warnings and errors).

The kernels live in ``glasstorch/_ops/loss.py``; composite losses are written here
with glasstorch ops, in the same order as torch's so the autograd graph matches.
"""

from __future__ import annotations

import math

import glasstorch as _gt
from glasstorch import debug as _debug

from ..._core.warn import warn_user
from ..._ops import loss as _L

__all__ = [
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss", "ctc_loss",
]


def _legacy_reduction(size_average, reduce, reduction):
    """torch's mapping of the deprecated ``size_average``/``reduce`` flags."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warn_user(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", UserWarning)
    return ret


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _warn_size(input, target):
    if _debug._on:
        _debug._impl().loss_shapes(input, target)
    if tuple(target.shape) != tuple(input.shape):
        warn_user(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning)


def _weighted(loss, weight, input, reduction, mean_by_weight):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


# ----------------------------------------------------------------------------- classification

def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of the target classes given log-probabilities."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if _debug._on:
        _debug._impl().nll_loss_input(input, target, ignore_index)
        return _debug._impl().track_loss(_L.nll_loss(input, target, weight, reduction,
                                                     ignore_index))
    return _L.nll_loss(input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim followed by nll_loss (class indices), or the
    cross entropy against class probabilities when ``target`` has the input's shape."""
    if _debug._on:
        _debug._impl().cross_entropy_input(input, target, ignore_index)
        return _debug._impl().track_loss(_cross_entropy(
            input, target, weight, size_average, ignore_index, reduce, reduction,
            label_smoothing))
    return _cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction,
                          label_smoothing)


def _cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction,
                   label_smoothing):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    if input.dim() == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    logp = _gt.log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, logp, target, weight, reduction, label_smoothing,
                                    class_dim, n_classes)
    loss = _L.nll_loss(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0.0:
        return loss
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        smooth = -(logp * weight.view(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignore = target == ignore_index
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            keep = target.masked_select(~ignore).flatten()
            ret = smooth.sum() / weight.gather(0, keep).sum()
        else:
            ret = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return _L.scalar_mul(loss, 1 - label_smoothing) + _L.scalar_mul(ret, label_smoothing /
                                                                    n_classes)


def _cross_entropy_probs(input, logp, target, weight, reduction, label_smoothing, class_dim,
                         n_classes):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                           f"got {_L._SHORT[target.dtype]}")
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    if weight is not None:
        if weight.dim() != 1 or weight.numel() != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        logp = logp * weight.view(shape)
    if reduction == "mean":
        return _L.scalar_div(-(logp * target).sum(),
                             input.numel() // n_classes if n_classes else 0)
    if reduction == "sum":
        return -(logp * target).sum()
    return -(logp * target).sum(class_dim)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _L.multi_margin_loss(input, target, p, margin, weight, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss over the listed target classes."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _L.multilabel_margin_loss(input, target, reduction)


def _logsigmoid(x):
    from . import activation
    return activation.logsigmoid(x)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Multi-label one-versus-all logistic loss, averaged over classes."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _L.soft_margin_loss(input, target, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities ``input`` against ``target``."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = weight.expand(_gt.broadcast_shapes(target.shape, weight.shape))
    return _L.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy, numerically stable; ``pos_weight`` weighs positives."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _L.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


# ----------------------------------------------------------------------------- regression

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (optionally weighted)."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, y = _gt.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - y).pow(2), weight, input, reduction, True)
    return _L.mse_loss(x, y, _check_reduction(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error (optionally weighted)."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, y = _gt.broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((x - y).abs(), weight, input, reduction, True)
    return _l1(x, y, _check_reduction(reduction))


def _l1(x, y, reduction):
    return _reduce((x - y).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, L1 above."""
    _warn_size(input, target)
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    x, y = _gt.broadcast_tensors(input, target)
    if beta == 0.0:
        return _l1(x, y, reduction)
    return _L.smooth_l1_loss(x, y, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta``, ``delta``-sloped linear above (optionally weighted)."""
    _warn_size(input, target)
    x, y = _gt.broadcast_tensors(input, target)
    if weight is None:
        return _L.huber_loss(x, y, _check_reduction(reduction), delta)
    return _weighted(_L.huber_loss(x, y, "none", delta), weight, input, reduction, False)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence; ``input`` holds log-probabilities."""
    if size_average is not None or reduce is not None:
        red = _legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warn_user("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          UserWarning)
        red = "sum" if reduction == "batchmean" else _check_reduction(reduction)
    reduced = _L.kl_div(input, target, red, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log likelihood."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _L.poisson_nll_loss(input, target, log_input, full, eps, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood with (homo- or heteroscedastic) variance ``var``."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _gt.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _gt.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- embeddings

def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos - margin)`` for target -1."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _L.cosine_embedding_loss(input1, input2, target, margin, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _L.margin_ranking_loss(input1, input2, target, margin, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` for target 1, ``max(0, margin - x)`` for target -1."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _L.hinge_embedding_loss(input, target, margin, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with the p-norm pairwise distance."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """Triplet loss with a custom distance (default: pairwise L2 distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        def distance_function(x1, x2):
            return _L._pairwise(x1, x2, 2, 1e-6)
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _gt.minimum(dist_neg, distance_function(positive, negative))
    return _reduce(_gt.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss."""
    return _L.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                       _check_reduction(reduction), zero_infinity)
