"""AutoAugment (ImageNet policy), RandAugment and TrivialAugmentWide.

Tensor images should be uint8 (Posterize/Equalize/Solarize work on 8-bit levels)."""
import math
from enum import Enum

import numpy as np

import glasstorch
from glasstorch import nn

from . import functional as F
from .functional import InterpolationMode, _interp

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    if op_name == "ShearX":
        # shear about the top-left corner, as in the AutoAugment reference implementation
        return F.affine(img, 0.0, [0, 0], 1.0, [math.degrees(math.atan(magnitude)), 0.0],
                        interpolation, fill, center=[0, 0])
    if op_name == "ShearY":
        return F.affine(img, 0.0, [0, 0], 1.0, [0.0, math.degrees(math.atan(magnitude))],
                        interpolation, fill, center=[0, 0])
    if op_name == "TranslateX":
        return F.affine(img, 0.0, [int(magnitude), 0], 1.0, [0.0, 0.0], interpolation, fill)
    if op_name == "TranslateY":
        return F.affine(img, 0.0, [0, int(magnitude)], 1.0, [0.0, 0.0], interpolation, fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation, fill=fill)
    if op_name == "Brightness":
        return F.adjust_brightness(img, 1.0 + magnitude)
    if op_name == "Color":
        return F.adjust_saturation(img, 1.0 + magnitude)
    if op_name == "Contrast":
        return F.adjust_contrast(img, 1.0 + magnitude)
    if op_name == "Sharpness":
        return F.adjust_sharpness(img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    if op_name == "AutoContrast":
        return F.autocontrast(img)
    if op_name == "Equalize":
        return F.equalize(img)
    if op_name == "Invert":
        return F.invert(img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _randint(n):
    return int(glasstorch.randint(n, (1,)).item())


def _posterize_bits(num_bins, spread):
    return 8 - np.round(np.arange(num_bins) / ((num_bins - 1) / spread)).astype(np.int64)


class AutoAugmentPolicy(Enum):
    """Learned policies (only the ImageNet policy is provided)."""
    IMAGENET = "imagenet"


_IMAGENET = (
    (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
    (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
    (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
    (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
    (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
    (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
    (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
    (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
    (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
    (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
    (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
    (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
    (("Invert", 0.6, None), ("Equalize", 1.0, None)),
    (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
    (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
    (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
    (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
    (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
    (("Color", 0.4, 0), ("Equalize", 0.6, None)),
    (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
    (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
    (("Invert", 0.6, None), ("Equalize", 1.0, None)),
    (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
    (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
)


def _fill_for(img, fill):
    if isinstance(img, glasstorch.Tensor) and isinstance(fill, (int, float)):
        return [float(fill)] * F.get_image_num_channels(img)
    if isinstance(img, glasstorch.Tensor) and fill is not None:
        return [float(f) for f in fill]
    return fill


class AutoAugment(nn.Module):
    """AutoAugment (Cubuk et al., 2018): a random learned sub-policy of two operations."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        if policy != AutoAugmentPolicy.IMAGENET:
            raise ValueError(f"The provided policy {policy} is not recognized (glasstorch ships "
                             "the ImageNet policy only).")
        self.policy, self.policies = policy, _IMAGENET
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def _augmentation_space(num_bins, image_size):
        h, w = image_size
        lin = np.linspace
        return {
            "ShearX": (lin(0.0, 0.3, num_bins), True),
            "ShearY": (lin(0.0, 0.3, num_bins), True),
            "TranslateX": (lin(0.0, 150.0 / 331.0 * w, num_bins), True),
            "TranslateY": (lin(0.0, 150.0 / 331.0 * h, num_bins), True),
            "Rotate": (lin(0.0, 30.0, num_bins), True),
            "Brightness": (lin(0.0, 0.9, num_bins), True),
            "Color": (lin(0.0, 0.9, num_bins), True),
            "Contrast": (lin(0.0, 0.9, num_bins), True),
            "Sharpness": (lin(0.0, 0.9, num_bins), True),
            "Posterize": (_posterize_bits(num_bins, 4), False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
            "Invert": (None, False),
        }

    @staticmethod
    def get_params(transform_num):
        policy_id = _randint(transform_num)
        probs = glasstorch.rand((2,)).tolist()
        signs = glasstorch.randint(2, (2,)).tolist()
        return policy_id, probs, signs

    def forward(self, img):
        _, h, w = F.get_dimensions(img)
        fill = _fill_for(img, self.fill)
        policy_id, probs, signs = self.get_params(len(self.policies))
        space = self._augmentation_space(10, (h, w))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[policy_id]):
            if probs[i] <= p:
                magnitudes, signed = space[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img


class RandAugment(nn.Module):
    """RandAugment (Cubuk et al., 2019): ``num_ops`` random operations at ``magnitude``."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops, self.magnitude = num_ops, magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def _augmentation_space(num_bins, image_size):
        h, w = image_size
        lin = np.linspace
        return {
            "Identity": (None, False),
            "ShearX": (lin(0.0, 0.3, num_bins), True),
            "ShearY": (lin(0.0, 0.3, num_bins), True),
            "TranslateX": (lin(0.0, 150.0 / 331.0 * w, num_bins), True),
            "TranslateY": (lin(0.0, 150.0 / 331.0 * h, num_bins), True),
            "Rotate": (lin(0.0, 30.0, num_bins), True),
            "Brightness": (lin(0.0, 0.9, num_bins), True),
            "Color": (lin(0.0, 0.9, num_bins), True),
            "Contrast": (lin(0.0, 0.9, num_bins), True),
            "Sharpness": (lin(0.0, 0.9, num_bins), True),
            "Posterize": (_posterize_bits(num_bins, 4), False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        }

    def forward(self, img):
        _, h, w = F.get_dimensions(img)
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins, (h, w))
        names = list(space)
        for _ in range(self.num_ops):
            op_name = names[_randint(len(names))]
            magnitudes, signed = space[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes is not None else 0.0
            if signed and _randint(2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img


class TrivialAugmentWide(nn.Module):
    """TrivialAugment (Müller and Hutter, 2021): one random operation at a random magnitude."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def _augmentation_space(num_bins):
        lin = np.linspace
        return {
            "Identity": (None, False),
            "ShearX": (lin(0.0, 0.99, num_bins), True),
            "ShearY": (lin(0.0, 0.99, num_bins), True),
            "TranslateX": (lin(0.0, 32.0, num_bins), True),
            "TranslateY": (lin(0.0, 32.0, num_bins), True),
            "Rotate": (lin(0.0, 135.0, num_bins), True),
            "Brightness": (lin(0.0, 0.99, num_bins), True),
            "Color": (lin(0.0, 0.99, num_bins), True),
            "Contrast": (lin(0.0, 0.99, num_bins), True),
            "Sharpness": (lin(0.0, 0.99, num_bins), True),
            "Posterize": (_posterize_bits(num_bins, 6), False),
            "Solarize": (lin(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        }

    def forward(self, img):
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        names = list(space)
        op_name = names[_randint(len(names))]
        magnitudes, signed = space[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))]) \
            if magnitudes is not None else 0.0
        if signed and _randint(2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)
