"""transforms.v2: the v1 classes (shared, taking one image) plus v2's own transforms."""
from ..autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from ..transforms import *  # noqa: F401,F403
from ..transforms import __all__ as _v1_all
from . import functional
from ._transforms import *  # noqa: F401,F403
from ._transforms import __all__ as _v2_all

__all__ = ["functional", *_v1_all, *_v2_all, "AugMix", "AutoAugment", "AutoAugmentPolicy",
           "RandAugment", "TrivialAugmentWide"]
