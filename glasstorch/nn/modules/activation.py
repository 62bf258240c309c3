"""Activation modules (torch.nn.modules.activation): thin wrappers over nn.functional."""

from __future__ import annotations

from ... import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
           "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


class _Inplace(Module):
    """An activation whose only option is ``inplace`` (repr ``inplace=True`` when set)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Plain(Module):
    """An activation without options."""

    def forward(self, input):
        return self._fn(input)


class Threshold(Module):
    """y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class ReLU(_Inplace):
    """max(x, 0)."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    """Randomized leaky relu: random negative slopes in training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class Hardtanh(Module):
    """Clamp to [min_val, max_val]."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None) -> None:
        super().__init__()
        if min_value is not None:
            import warnings
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            import warnings
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val "
                                 f"({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(_Plain):
    """1 / (1 + exp(-x))."""
    _fn = staticmethod(F.sigmoid)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Tanh(_Plain):
    """Hyperbolic tangent."""
    _fn = staticmethod(F.tanh)


class SiLU(_Inplace):
    """x * sigmoid(x)."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x))."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """Scaled elu with the self-normalising constants."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """First half of the input along ``dim`` times sigmoid of the second half."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x) (or its tanh approximation)."""

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """x if |x| > lambd else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class LogSigmoid(_Plain):
    """log(sigmoid(x))."""
    _fn = staticmethod(F.logsigmoid)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class PReLU(Module):
    """Leaky relu with a learned negative slope (one, or one per channel)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Set every slope to the ``init`` value given at construction."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(_Plain):
    """x / (1 + |x|)."""
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """x - tanh(x)."""
    _fn = staticmethod(F.tanhshrink)


class _SoftmaxLike(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxLike):
    """softmax(-x) along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxLike):
    """exp(x) / sum(exp(x)) along ``dim``."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_SoftmaxLike):
    """log(softmax(x)) along ``dim``."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


from ._attention import MultiheadAttention  # noqa: E402,F401
