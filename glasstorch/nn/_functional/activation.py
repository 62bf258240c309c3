"""torch.nn.functional activations and the softmax family (torch's signatures)."""

from __future__ import annotations

from ... import _ops
from ..._core.warn import warn_user
from ..._ops import activation as _A

__all__ = ["threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6",
           "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
           "prelu", "rrelu", "rrelu_", "glu", "gelu", "logsigmoid", "hardshrink",
           "tanhshrink", "softsign", "softplus", "softmin", "softmax", "log_softmax",
           "softshrink", "tanh", "sigmoid", "hardsigmoid", "silu", "mish", "hardswish"]


def _pick(out_of_place, in_place, input, inplace, *args):
    return in_place(input, *args) if inplace else out_of_place(input, *args)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value."""
    return _pick(_A.threshold, _A.threshold_, input, inplace, threshold, value)


threshold_ = _A.threshold_


def relu(input, inplace=False):
    """max(input, 0)."""
    return _A.relu_(input) if inplace else _A.relu(input)


relu_ = _A.relu_


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _pick(_A.hardtanh, _A.hardtanh_, input, inplace, min_val, max_val)


hardtanh_ = _A.hardtanh_


def relu6(input, inplace=False):
    """min(max(input, 0), 6)."""
    return _pick(_A.relu6, _A.relu6_, input, inplace)


def elu(input, alpha=1.0, inplace=False):
    """input where positive, alpha * (exp(input) - 1) elsewhere."""
    return _pick(_A.elu, _A.elu_, input, inplace, alpha)


elu_ = _A.elu_


def selu(input, inplace=False):
    """Scaled elu with the self-normalising constants."""
    return _pick(_A.selu, _A.selu_, input, inplace)


selu_ = _A.selu_


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return _pick(_A.celu, _A.celu_, input, inplace, alpha)


celu_ = _A.celu_


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where positive, negative_slope * input elsewhere."""
    return _pick(_A.leaky_relu, _A.leaky_relu_, input, inplace, negative_slope)


leaky_relu_ = _A.leaky_relu_
prelu = _A.prelu


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky relu (random slopes in training, their mean in eval)."""
    return _pick(_A.rrelu, _A.rrelu_, input, inplace, lower, upper, training)


rrelu_ = _A.rrelu_
glu = _A.glu
gelu = _A.gelu
logsigmoid = _A.logsigmoid
hardshrink = _A.hardshrink
softplus = _A.softplus
softshrink = _A.softshrink


def tanhshrink(input):
    """input - tanh(input)."""
    return input - input.tanh()


def softsign(input):
    """input / (1 + |input|)."""
    return input / (input.abs() + 1)


def _get_softmax_dim(name, ndim):
    # at the user's line, wherever the call came through (torch's _stacklevel counts frames
    # that dispatch points change)
    warn_user(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
              "include dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along ``dim``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim())
    return _A.softmax(-input, dim) if dtype is None else _A.softmax(-input.to(dtype), dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim())
    return _A.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim())
    return _A.log_softmax(input, dim, dtype)


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input):
    """1 / (1 + exp(-input))."""
    return input.sigmoid()


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _pick(_A.hardsigmoid, _A.hardsigmoid_, input, inplace)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    out = _A.silu(input)
    return _ops._common.assign_inplace(input, out) if inplace else out


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    out = _A.mish(input)
    return _ops._common.assign_inplace(input, out) if inplace else out


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _pick(_A.hardswish, _A.hardswish_, input, inplace)
