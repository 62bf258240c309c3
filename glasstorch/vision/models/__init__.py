"""glasstorch.vision.models: torchvision's model architectures, state_dict-compatible.

``weights=`` takes a local state_dict file (or a dict); nothing is downloaded. The ``*_Weights``
enums carry torchvision's metadata (``meta["categories"]``, ``num_params``, ``min_size``) and
evaluation presets (``weights.transforms()``), so preprocessing and labels work as in tutorials.
"""

from ._api import Weights, WeightsEnum, get_model, get_model_builder, get_weight, list_models
from .mobilenetv2 import MobileNet_V2_Weights, MobileNetV2, mobilenet_v2
from .resnet import (
                     BasicBlock,
                     Bottleneck,
                     ResNet,
                     ResNet18_Weights,
                     ResNet34_Weights,
                     ResNet50_Weights,
                     resnet18,
                     resnet34,
                     resnet50,
)
from .vgg import (
                  VGG,
                  VGG11_BN_Weights,
                  VGG11_Weights,
                  VGG13_BN_Weights,
                  VGG13_Weights,
                  VGG16_BN_Weights,
                  VGG16_Weights,
                  VGG19_BN_Weights,
                  VGG19_Weights,
                  vgg11,
                  vgg11_bn,
                  vgg13,
                  vgg13_bn,
                  vgg16,
                  vgg16_bn,
                  vgg19,
                  vgg19_bn,
)
from .vision_transformer import VisionTransformer, ViT_B_16_Weights, vit_b_16

__all__ = [
    "Weights", "WeightsEnum", "get_model", "get_model_builder", "get_weight", "list_models",
    "ResNet", "BasicBlock", "Bottleneck", "ResNet18_Weights", "ResNet34_Weights",
    "ResNet50_Weights", "resnet18", "resnet34", "resnet50",
    "VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
    "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights",
    "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
    "MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2",
    "VisionTransformer", "ViT_B_16_Weights", "vit_b_16",
]
