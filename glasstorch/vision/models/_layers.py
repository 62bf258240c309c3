"""Building blocks shared by the models (torchvision.ops.misc names and layouts)."""

from ... import nn

__all__ = ["Conv2dNormActivation", "MLP"]


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, then an optional norm layer, then an optional activation, as one Sequential.

    Children are numbered 0, 1, 2 like torchvision's, so state_dict keys match. The padding
    defaults to "same" for odd kernels; the convolution has a bias only without a norm layer.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None, conv_layer=nn.Conv2d):
        if padding is None:
            ks = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
            dl = (dilation,) * len(ks) if isinstance(dilation, int) else tuple(dilation)
            pads = tuple((k - 1) // 2 * d for k, d in zip(ks, dl))
            padding = pads[0] if isinstance(kernel_size, int) and isinstance(dilation, int) \
                else pads
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


class MLP(nn.Sequential):
    """Linear layers of widths ``hidden_channels``; between them norm, activation, dropout.

    The last Linear is followed by Dropout only.
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
