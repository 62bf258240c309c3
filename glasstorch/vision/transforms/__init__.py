"""Image transforms (torchvision.transforms)."""
from . import functional
from .autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _all

__all__ = ["functional", *_all, "AugMix", "AutoAugment", "AutoAugmentPolicy", "RandAugment",
           "TrivialAugmentWide"]
