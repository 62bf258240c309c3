"""Weight initialisation (torch.nn.init): in-place fills with torch's distributions."""

from __future__ import annotations

import math
import warnings

from .. import _ops
from .._core.warn import warn_user
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (e.g. sqrt(2) for ReLU)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b], by torch's rejection sampling (so the
    draws and values match torch's for the seed)."""
    from .. import where

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if tensor.is_meta:
        return tensor
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warn_user("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution "
                  "of values may be incorrect.")
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # most of the mass is inside: redraw (whole tensors) until nothing is outside,
            # comparing with the bounds as the tensor's dtype holds them
            lo = tensor.new_tensor(a).item()
            hi = tensor.new_tensor(b).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = where(mask, _ops.creation.empty_like(result).normal_(
                    mean, std, generator=generator), result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        # a thin slice of the normal: uniform proposals on [a, b], accepted against the pdf
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = _ops.creation.empty_like(tensor)
        accept_buf = _ops.creation.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = where(pending, accept_buf.uniform_(generator=generator).log_().gt(
                    candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val`` in place, without recording autograd history; returns it."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones in place, without recording autograd history; returns it."""
    with no_grad():
        return tensor.fill_(1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros in place, without recording autograd history; returns it."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_ops.creation.eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3,4,5}-D conv weight so the convolution is the identity (per group)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                index = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[index] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He initialisation)."""
    if 0 in tensor.shape:
        warn_user("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He initialisation)."""
    if 0 in tensor.shape:
        warn_user("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _ops.random.randn(rows, cols, dtype=tensor.dtype, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    from .. import linalg
    q, r = linalg.qr(flattened)
    q = q * r.diagonal().sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Each column gets ``sparsity`` of its entries zeroed, the rest N(0, std^2)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = _ops.random.randperm(rows, generator=generator)
            zero_indices = row_indices[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


# the deprecated un-suffixed names
def _deprecated(fn, name):
    def wrapper(*args, **kwargs):
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__name__ = name
    return wrapper


uniform = _deprecated(uniform_, "uniform")
normal = _deprecated(normal_, "normal")
constant = _deprecated(constant_, "constant")
xavier_uniform = _deprecated(xavier_uniform_, "xavier_uniform")
xavier_normal = _deprecated(xavier_normal_, "xavier_normal")
kaiming_uniform = _deprecated(kaiming_uniform_, "kaiming_uniform")
kaiming_normal = _deprecated(kaiming_normal_, "kaiming_normal")
orthogonal = _deprecated(orthogonal_, "orthogonal")
sparse = _deprecated(sparse_, "sparse")
eye = _deprecated(eye_, "eye")
dirac = _deprecated(dirac_, "dirac")
