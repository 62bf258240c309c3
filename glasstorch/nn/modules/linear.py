"""Identity, Linear, Bilinear, LazyLinear (torch.nn.modules.linear)."""

from __future__ import annotations

import math

from ... import empty, no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter, is_lazy
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize weight and bias as torch does: U(-1/sqrt(in_features), 1/sqrt(in_features))
        (kaiming_uniform with a=sqrt(5) for the weight)."""
        # kaiming_uniform with a=sqrt(5) is U(-1/sqrt(in), 1/sqrt(in)), torch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight (out_features, in1_features, in2_features)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got "
                             f"(in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A Linear whose in_features is taken from the first input; it then becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_hook = self.register_forward_pre_hook(LazyLinear._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter is still an uninitialized placeholder (before the first
        forward)."""
        return any(is_lazy(p) for p in self._parameters.values() if p is not None)

    def reset_parameters(self) -> None:
        """Re-initialize the parameters, once they have a shape."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """Infer the missing input size from the first input, allocate the parameters and initialize
        them (called by a pre-forward hook on the first call)."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if not module.has_uninitialized_params():
            module._lazy_hook.remove()
            del module._lazy_hook
            module.__class__ = module.cls_to_become


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear that quantization tooling leaves alone (MultiheadAttention.out_proj)."""
