"""VGG-11/13/16/19, with and without batch norm (Simonyan & Zisserman, 2014), torchvision's
layout."""

from functools import partial

from ... import flatten, nn
from ..transforms._presets import ImageClassification
from ._api import (
    IMAGENET1K_CATEGORIES,
    Weights,
    WeightsEnum,
    _load_weights,
    _register,
    _resolve_weights,
)

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "vgg11",
           "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

# channel counts of the 3x3 convolutions, "M" a 2x2 max pool; the paper's configurations
# A (VGG-11), B (VGG-13), D (VGG-16) and E (VGG-19)
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
          "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512,
          512, 512, 512, "M"],
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


_META = {"min_size": (32, 32), "categories": IMAGENET1K_CATEGORIES}
_PRESET = partial(ImageClassification, crop_size=224)
_URL = "https://download.pytorch.org/models/"


def _entry(file_name, num_params):
    return Weights(_URL + file_name, _PRESET, {**_META, "num_params": num_params})


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg11-8a719046.pth", 132863336)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg11_bn-6002323d.pth", 132868840)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg13-19584684.pth", 133047848)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg13_bn-abd245e5.pth", 133053736)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg16-397923af.pth", 138357544)
    # ported from the SSD repository (amdegroot/ssd.pytorch) for detection backbones: no
    # classifier categories, and inputs scaled to [0, 255] minus the Caffe means
    IMAGENET1K_FEATURES = Weights(
        _URL + "vgg16_features-amdegroot-88682ab5.pth",
        partial(ImageClassification, crop_size=224, mean=(0.48235, 0.45882, 0.40784),
                std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0)),
        {"min_size": (32, 32), "categories": None, "num_params": 138357544})
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg16_bn-6c64b313.pth", 138365992)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg19-dcbb9e9d.pth", 143667240)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _entry("vgg19_bn-c79401a0.pth", 143678248)
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


@_register
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13. ``weights``: None, or a local state_dict file / dict to load."""
    return _vgg("B", False, weights, VGG13_Weights, progress, kwargs)


@_register
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch normalization. ``weights``: None, or a local state_dict file / dict."""
    return _vgg("B", True, weights, VGG13_BN_Weights, progress, kwargs)


@_register
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16. ``weights``: None, or a local state_dict file / dict to load."""
    return _vgg("D", False, weights, VGG16_Weights, progress, kwargs)


@_register
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch normalization. ``weights``: None, or a local state_dict file / dict."""
    return _vgg("D", True, weights, VGG16_BN_Weights, progress, kwargs)


@_register
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19. ``weights``: None, or a local state_dict file / dict to load."""
    return _vgg("E", False, weights, VGG19_Weights, progress, kwargs)


@_register
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch normalization. ``weights``: None, or a local state_dict file / dict."""
    return _vgg("E", True, weights, VGG19_BN_Weights, progress, kwargs)
