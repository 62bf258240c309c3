"""torchvision.ops.misc: the building blocks torchvision's models share.

Conv-norm-activation stacks, the MLP of the vision transformer, Squeeze-and-Excitation,
``Permute`` and ``FrozenBatchNorm2d``. Child names and order are torchvision's, so
``state_dict`` keys and reprs match and torchvision checkpoints load.
"""

import warnings
from collections.abc import Sequence

from ... import nn, ones, permute, zeros
from ...nn.functional import interpolate  # noqa: F401  (torchvision keeps this old alias here)

__all__ = ["ConvNormActivation", "Conv2dNormActivation", "Conv3dNormActivation",
           "SqueezeExcitation", "MLP", "Permute", "FrozenBatchNorm2d"]


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with fixed statistics and affine parameters, all four kept as buffers.

    ``y = (x - running_mean) / sqrt(running_var + eps) * weight + bias`` per channel; nothing
    is learned or updated, in train mode too. Loading a BatchNorm2d's state_dict works: its
    ``num_batches_tracked`` entry is dropped.
    """

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", ones(num_features))
        self.register_buffer("bias", zeros(num_features))
        self.register_buffer("running_mean", zeros(num_features))
        self.register_buffer("running_var", ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # a BatchNorm2d checkpoint has a step counter this module has no use for
        state_dict.pop(prefix + "num_batches_tracked", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        """Normalise ``x`` (N, C, H, W) with the frozen per-channel statistics."""
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        # fold the four buffers into one scale and one shift: two ops on the big tensor
        scale = w * (rv + self.eps).rsqrt()
        shift = b - rm * scale
        return x * scale + shift

    def __repr__(self):
        return f"{type(self).__name__}({self.weight.shape[0]}, eps={self.eps})"


def _as_tuple(value, n):
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class ConvNormActivation(nn.Sequential):
    """A convolution, then an optional norm layer, then an optional activation.

    Children are numbered 0, 1, 2 as torchvision's. ``padding=None`` keeps the spatial size
    for odd kernels (``(kernel_size - 1) // 2 * dilation``); the convolution has a bias only
    when there is no norm layer, unless ``bias`` says otherwise. Use the 2d/3d subclasses:
    torchvision warns when this base class is built directly, and so does glasstorch.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None, conv_layer=nn.Conv2d):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                dims = len(kernel_size) if isinstance(kernel_size, Sequence) else len(dilation)
                kernel_size = _as_tuple(kernel_size, dims)
                dilation = _as_tuple(dilation, dims)
                padding = tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding,
                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels
        if type(self) is ConvNormActivation:
            warnings.warn("ConvNormActivation is not meant to be used directly: use "
                          "Conv2dNormActivation or Conv3dNormActivation instead.", stacklevel=2)


class Conv2dNormActivation(ConvNormActivation):
    """Conv2d, then an optional norm layer (BatchNorm2d), then an optional activation (ReLU).

    See ``ConvNormActivation`` for the padding and bias defaults.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(ConvNormActivation):
    """Conv3d, then an optional norm layer (BatchNorm3d), then an optional activation (ReLU).

    See ``ConvNormActivation`` for the padding and bias defaults.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm3d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (Hu et al., 2018): rescale each channel by a gate computed from
    the globally pooled input.

    ``scale = scale_activation(fc2(activation(fc1(avgpool(x)))))``, output ``scale * x``;
    ``fc1``/``fc2`` are 1x1 convolutions through ``squeeze_channels``.
    """

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                 scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.activation(self.fc1(scale))
        return self.scale_activation(self.fc2(scale))

    def forward(self, input):
        """``input`` times its per-channel gate (same shape as ``input``)."""
        return self._scale(input) * input


class MLP(nn.Sequential):
    """Linear layers of widths ``hidden_channels``; between them an optional norm layer, the
    activation and Dropout; after the last Linear only Dropout.

    ``inplace=None`` leaves the activation's and Dropout's own default.
    """

    def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=nn.ReLU,
                 inplace=None, bias=True, dropout=0.0):
        extra = {} if inplace is None else {"inplace": inplace}
        layers = []
        width = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(width, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers.append(activation_layer(**extra))
            layers.append(nn.Dropout(dropout, **extra))
            width = hidden
        layers.append(nn.Linear(width, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **extra))
        super().__init__(*layers)


class Permute(nn.Module):
    """Returns ``input.permute(dims)``: a view with its dimensions reordered."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        """The permuted view of ``x``."""
        return permute(x, self.dims)
