"""VGG-11 with and without batch norm (Simonyan & Zisserman, 2014), torchvision's layout."""

from ... import flatten, nn
from ._api import Weights, WeightsEnum, _load_weights, _register, _resolve_weights

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "vgg11", "vgg11_bn"]

# "A" is VGG-11: channel counts of the 3x3 convolutions, "M" a 2x2 max pool
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
}


class VGG(nn.Module):
    """``features`` (convolutions), a 7x7 adaptive average pool, and a 3-layer ``classifier``."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def make_layers(cfg, batch_norm=False):
    """The ``features`` Sequential for a configuration list (see ``cfgs``)."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


_META = {"min_size": (32, 32), "num_classes": 1000}


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights("https://download.pytorch.org/models/vgg11-8a719046.pth",
                            {**_META, "num_params": 132863336})
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights("https://download.pytorch.org/models/vgg11_bn-6002323d.pth",
                            {**_META, "num_params": 132868840})
    DEFAULT = IMAGENET1K_V1


def _vgg(cfg, batch_norm, weights, enum_cls, progress, kwargs):
    member, source = _resolve_weights(weights, enum_cls, kwargs)
    if member is not None or source is not None:
        # pretrained weights replace the initialisation, so skip computing it
        kwargs["init_weights"] = False
    model = VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)
    return _load_weights(model, member, source, progress)


@_register
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11. ``weights``: None, or a local state_dict file / dict to load."""
    return _vgg("A", False, weights, VGG11_Weights, progress, kwargs)


@_register
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch normalization. ``weights``: None, or a local state_dict file / dict."""
    return _vgg("A", True, weights, VGG11_BN_Weights, progress, kwargs)
