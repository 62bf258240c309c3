"""The v2 names that coincide with the v1 transforms (same classes)."""
from ..autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from ..transforms import *  # noqa: F401,F403
from ..transforms import __all__ as _all
from . import functional

__all__ = ["functional", *_all, "AutoAugment", "AutoAugmentPolicy", "RandAugment",
           "TrivialAugmentWide"]
