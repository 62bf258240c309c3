"""Evaluation presets that pretrained weights carry (torchvision.transforms._presets).

Reach them through a weights entry, as with torchvision: ``preprocess = weights.transforms()``.
"""

import glasstorch
from glasstorch import nn

from .._pil import is_pil
from . import functional as F
from .functional import InterpolationMode

__all__ = ["ImageClassification"]


class ImageClassification(nn.Module):
    """Resize the shorter edge, center crop, scale to [0, 1] floats, normalize per channel.

    Takes a PIL image, a ``(C, H, W)`` tensor or a batched ``(B, C, H, W)`` tensor, integer
    (e.g. uint8) or float, and returns float32.

    Example::

        >>> preset = ImageClassification(crop_size=224)   # resnet18's ImageNet preset
        >>> preset(glasstorch.zeros(3, 300, 400, dtype=glasstorch.uint8)).shape
        torch.Size([3, 224, 224])
    """

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if is_pil(img):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, glasstorch.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        fields = (f"crop_size={self.crop_size}", f"resize_size={self.resize_size}",
                  f"mean={self.mean}", f"std={self.std}", f"interpolation={self.interpolation}")
        return self.__class__.__name__ + "(" + "".join(f"\n    {f}" for f in fields) + "\n)"

    def describe(self):
        """One paragraph saying what the preset does (torchvision's model docs show it)."""
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
                "``torch.Tensor`` objects. The images are resized to "
                f"``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``, followed by a central crop of "
                f"``crop_size={self.crop_size}``. Finally the values are first rescaled to "
                f"``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``.")
