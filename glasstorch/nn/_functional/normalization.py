"""torch.nn.functional normalisations over the kernels in ``glasstorch/_ops/normalization.py``."""

from __future__ import annotations

from ..._ops import normalization as _N

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm",
           "rms_norm"]


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size):
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalisation; in training, running stats are updated in place."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _N.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                         eps, True)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Per-sample, per-channel normalisation."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _N.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                            momentum, eps, True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalisation over the trailing ``normalized_shape`` dims."""
    return _N.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalisation over groups of channels."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _N.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalisation over the trailing dims."""
    return _N.rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each channel by the (zero-padded) mean of squares of ``size`` neighbouring
    channels: ``x / (k + alpha * mean(x^2))^beta``."""
    import glasstorch as gt
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input.mul(input)
    c = input.shape[1]
    lo, hi = size // 2, (size - 1) // 2
    pad_shape = list(input.shape)
    # zero-pad the channel dim, then sum the `size` shifted windows (size is small)
    parts = []
    if lo:
        pad_shape[1] = lo
        parts.append(gt.zeros(pad_shape, dtype=input.dtype))
    parts.append(sq)
    if hi:
        pad_shape[1] = hi
        parts.append(gt.zeros(pad_shape, dtype=input.dtype))
    padded = gt.cat(parts, 1) if len(parts) > 1 else sq
    div = padded.narrow(1, 0, c)
    for i in range(1, size):
        div = div + padded.narrow(1, i, c)
    div = (div / size).mul(alpha).add(k).pow(beta)
    return input / div
