"""torch.nn.functional: linear/bilinear, dropout family, embedding(-bag), one_hot,
normalize, distances, gumbel_softmax (torch's signatures)."""

from __future__ import annotations

from ..._core.warn import warn_user
from ..._ops import nn_basic as _B
from ..._ops.activation import softmax as _softmax
from ...autograd.grad_mode import no_grad

__all__ = ["linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout", "embedding", "embedding_bag", "one_hot",
           "normalize", "cosine_similarity", "pairwise_distance", "pdist", "gumbel_softmax"]

linear = _B.linear
bilinear = _B.bilinear
one_hot = _B.one_hot
cosine_similarity = _B.cosine_similarity
pairwise_distance = _B.pairwise_distance
pdist = _B.pdist


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability p, scale the rest by 1 / (1 - p) (when training)."""
    _check_p(p)
    return (_B.dropout_ if inplace else _B.dropout)(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps selu activations' mean and variance."""
    _check_p(p)
    return (_B.alpha_dropout_ if inplace else _B.alpha_dropout)(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    return (_B.feature_alpha_dropout_ if inplace else _B.feature_alpha_dropout)(input, p,
                                                                                training)


def _feature(input, p, training, inplace, batched):
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = (_B.feature_dropout_ if inplace else _B.feature_dropout)(input, p, training)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) input."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature(input, p, training, inplace, nd == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input (3-D: treated as (N, C, L))."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warn_user(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", UserWarning)
    if nd == 3:
        warn_user("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", UserWarning)
    return _feature(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warn_user(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", UserWarning)
    return _feature(input, p, training, inplace, nd == 5)


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    with no_grad():
        _B.embedding_renorm_(weight, input, max_norm, norm_type)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight``; ``padding_idx`` rows get no gradient; ``max_norm``
    renormalises the rows used (in place)."""
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _B.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums/means/maxes over bags of embeddings, without building the per-index rows."""
    from ... import arange
    if weight.dtype.is_floating_point is False and input.is_floating_point():
        warn_user("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return _B.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                            per_sample_weights, include_last_offset, padding_idx)[0]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along ``dim``."""
    from ... import div
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return div(input, denom, out=out)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of (logits + Gumbel noise) / tau; ``hard`` gives one-hot samples whose
    gradient is the soft sample's (straight-through)."""
    from ... import empty_like, zeros_like
    if eps != 1e-10:
        warn_user("`eps` parameter is deprecated and has no effect.")
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = _softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
