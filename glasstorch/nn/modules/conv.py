"""Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy variants (torch.nn.modules.conv)."""

from __future__ import annotations

import math

from ... import empty, no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter, is_lazy
from .module import Module
from .utils import _as_tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _ConvNd(Module):
    """Shared state of every convolution module: geometry, weight, bias, padding mode."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order: last dim first, (left, right) each
        if isinstance(padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i] = total // 2
                    rev[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in (0, 1)]
        if transposed:
            shape = (in_channels, out_channels // groups) + tuple(kernel_size)
        else:
            shape = (out_channels, in_channels // groups) + tuple(kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize as torch does: weight kaiming_uniform(a=sqrt(5)), bias U(-1/sqrt(fan_in),
        1/sqrt(fan_in))."""
        # kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), torch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = ("{in_channels}, {out_channels}, kernel_size={kernel_size}"
             ", stride={stride}")
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None) -> None:
        n = self._nd
        super().__init__(in_channels, out_channels, _as_tuple(kernel_size, n),
                         _as_tuple(stride, n),
                         padding if isinstance(padding, str) else _as_tuple(padding, n),
                         _as_tuple(dilation, n), False, _as_tuple(0, n), groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice,
                            mode=self.padding_mode),
                      weight, bias, self.stride, _as_tuple(0, self._nd), self.dilation,
                      self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` (or unbatched ``(C_in, L)``)."""
    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``)."""
    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)`` (or unbatched ``(C_in, D, H, W)``)."""
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{self.__class__.__name__}')
        n = self._nd
        super().__init__(in_channels, out_channels, _as_tuple(kernel_size, n),
                         _as_tuple(stride, n), _as_tuple(padding, n), _as_tuple(dilation, n), True,
                         _as_tuple(output_padding, n), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return _as_tuple(self.output_padding, num_spatial_dims)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.shape[d + num_non_spatial_dims] - 1) * stride[d] -
                        2 * padding[d] + (dilation[d] if dilation is not None else 1) *
                        (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            size, lo, hi = output_size[i], min_sizes[i], max_sizes[i]
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{list(input.shape)[2:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        n = self._nd
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, n, self.dilation)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d w.r.t. its input)."""
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of Conv2d w.r.t. its input)."""
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the gradient of Conv3d w.r.t. its input)."""
    _nd = 3


class _LazyConvMixin:
    """in_channels taken from the first input; the module then becomes its plain class."""

    cls_to_become = None

    def _lazy_init(self, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = self.out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_hook = self.register_forward_pre_hook(_LazyConvMixin._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter is still an uninitialized placeholder (before the first
        forward)."""
        return any(is_lazy(p) for p in self._parameters.values() if p is not None)

    def reset_parameters(self) -> None:
        """Re-initialize the parameters, once they have a shape."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        n = self._nd
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Infer the missing input size from the first input, allocate the parameters and initialize
        them (called by a pre-forward hook on the first call)."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups)
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args)
        if not module.has_uninitialized_params():
            module._lazy_hook.remove()
            del module._lazy_hook
            module.__class__ = module.cls_to_become


def _lazy(base, doc):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *args, bias=True,
                 device=None, dtype=None, **kwargs):
        # in_channels=0 and no bias while building, like torch's lazy convs
        base.__init__(self, 0, 0, kernel_size, stride, padding, *args, bias=False, **kwargs)
        self.out_channels = out_channels
        self._lazy_init(bias, device, dtype)

    name = "Lazy" + base.__name__
    return type(name, (_LazyConvMixin, base), {"__init__": __init__, "__doc__": doc,
                                               "cls_to_become": base,
                                               "__module__": __name__})


LazyConv1d = _lazy(Conv1d, "A Conv1d whose in_channels is inferred from the first input.")
LazyConv2d = _lazy(Conv2d, "A Conv2d whose in_channels is inferred from the first input.")
LazyConv3d = _lazy(Conv3d, "A Conv3d whose in_channels is inferred from the first input.")
LazyConvTranspose1d = _lazy(ConvTranspose1d, "A ConvTranspose1d whose in_channels is "
                                             "inferred from the first input.")
LazyConvTranspose2d = _lazy(ConvTranspose2d, "A ConvTranspose2d whose in_channels is "
                                             "inferred from the first input.")
LazyConvTranspose3d = _lazy(ConvTranspose3d, "A ConvTranspose3d whose in_channels is "
                                             "inferred from the first input.")
