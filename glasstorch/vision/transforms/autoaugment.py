"""AutoAugment (ImageNet, CIFAR10 and SVHN policies), RandAugment, TrivialAugmentWide, AugMix.

They take PIL images and tensors ``[..., C, H, W]`` (the same ops for the whole batch).
Float tensors are handled as torchvision.transforms.v2 does (v1 raises on them): Solarize
thresholds scale to the dtype's range, Posterize quantises to ``2**bits`` levels in [0, 1)
and Equalize works on 8-bit levels.
"""
import math
from enum import Enum

import numpy as np

import glasstorch
from glasstorch import nn

from .._pil import is_pil
from . import functional as F
from .functional import InterpolationMode, _interp

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix"]


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
        return F.posterize(img, int(magnitude)) if is_pil(img) \
            else F._posterize_tensor(img, int(magnitude))
    if op_name == "Solarize":
        # magnitudes are on the 8-bit scale; other tensor dtypes rescale them to their range
        bound = 255 if is_pil(img) else F._max_value(img.dtype.np)
        return F.solarize(img, magnitude if bound == 255 else magnitude / 255.0 * bound)
    if op_name == "AutoContrast":
        return F.autocontrast(img)
    if op_name == "Equalize":
        return F.equalize(img) if is_pil(img) else F._equalize_tensor(img)
    if op_name == "Invert":
        return F.invert(img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _randint(n):
    return int(glasstorch.randint(n, (1,)).item())


def _bins(start, end, num_bins):
    """The magnitude bins: ``linspace(start, end, num_bins)`` as Python floats (float32
    values, equal to torch's to the last bit)."""
    return glasstorch.linspace(start, end, num_bins).tolist()


def _posterize_bits(num_bins, top, spread):
    # ``top`` bits down to ``top - spread``, rounding half to even like torch.round
    return (top - np.round(np.arange(num_bins) / ((num_bins - 1) / spread))).astype(int).tolist()


def _fill_for(img, fill):
    if isinstance(img, glasstorch.Tensor) and isinstance(fill, (int, float)):
        return [float(fill)] * F.get_image_num_channels(img)
    if isinstance(img, glasstorch.Tensor) and fill is not None:
        return [float(f) for f in fill]
    return fill


def _signed(magnitude, signed):
    """Negate a signed op's magnitude on a fair coin."""
    return -magnitude if signed and _randint(2) else magnitude


class AutoAugmentPolicy(Enum):
    """The learned policies of the AutoAugment paper, by the dataset they were learned on."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# Each sub-policy is two (op, probability, magnitude bin) steps; None for ops without one.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: (
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
    ),
    AutoAugmentPolicy.CIFAR10: (
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ),
    AutoAugmentPolicy.SVHN: (
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ),
}


def _affine_and_color_space(num_bins, shear, translate, rotate, enhance):
    """The magnitude bins (op -> (list or None, signed)) shared by the first three transforms;
    ``translate`` is (height, width) in pixels."""
    return {
        "ShearX": (_bins(0.0, shear, num_bins), True),
        "ShearY": (_bins(0.0, shear, num_bins), True),
        "TranslateX": (_bins(0.0, translate[1], num_bins), True),
        "TranslateY": (_bins(0.0, translate[0], num_bins), True),
        "Rotate": (_bins(0.0, rotate, num_bins), True),
        "Brightness": (_bins(0.0, enhance, num_bins), True),
        "Color": (_bins(0.0, enhance, num_bins), True),
        "Contrast": (_bins(0.0, enhance, num_bins), True),
        "Sharpness": (_bins(0.0, enhance, num_bins), True),
    }


def _autoaugment_space(num_bins, image_size, posterize_spread=4):
    h, w = image_size
    translate = (150.0 / 331.0 * h, 150.0 / 331.0 * w)
    space = _affine_and_color_space(num_bins, 0.3, translate, 30.0, 0.9)
    space.update({
        "Posterize": (_posterize_bits(num_bins, 8, posterize_spread), False),
        "Solarize": (_bins(255.0, 0.0, num_bins), False),
        "AutoContrast": (None, False),
        "Equalize": (None, False),
    })
    return space


def _repr(module, *names):
    args = ", ".join(f"{n}={getattr(module, n)}" for n in names)
    return f"{type(module).__name__}({args})"


class AutoAugment(nn.Module):
    """AutoAugment (Cubuk et al., 2018): a random learned sub-policy of two operations.

    Example::

        >>> aug = AutoAugment(AutoAugmentPolicy.CIFAR10)
        >>> out = aug(torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8))
    """

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        self.policy, self.policies = policy, _POLICIES[policy]
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def _augmentation_space(num_bins, image_size):
        space = _autoaugment_space(num_bins, image_size)
        space["Invert"] = (None, False)
        return space

    @staticmethod
    def get_params(transform_num):
        """(sub-policy index, the two steps' probability draws, their sign coins)."""
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

    def __repr__(self):
        return _repr(self, "policy", "fill")


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
        return {"Identity": (None, False), **_autoaugment_space(num_bins, image_size)}

    def forward(self, img):
        _, h, w = F.get_dimensions(img)
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins, (h, w))
        names = list(space)
        for _ in range(self.num_ops):
            op_name = names[_randint(len(names))]
            magnitudes, signed = space[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes is not None else 0.0
            img = _apply_op(img, op_name, _signed(magnitude, signed), self.interpolation, fill)
        return img

    def __repr__(self):
        return _repr(self, "num_ops", "magnitude", "num_magnitude_bins", "interpolation",
                     "fill")


class TrivialAugmentWide(nn.Module):
    """TrivialAugment (Müller and Hutter, 2021): one random operation at a random magnitude."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def _augmentation_space(num_bins):
        space = _affine_and_color_space(num_bins, 0.99, (32.0, 32.0), 135.0, 0.99)
        space.update({
            "Posterize": (_posterize_bits(num_bins, 8, 6), False),
            "Solarize": (_bins(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        })
        return {"Identity": (None, False), **space}

    def forward(self, img):
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        names = list(space)
        op_name = names[_randint(len(names))]
        magnitudes, signed = space[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))]) \
            if magnitudes is not None else 0.0
        return _apply_op(img, op_name, _signed(magnitude, signed), self.interpolation, fill)

    def __repr__(self):
        return _repr(self, "num_magnitude_bins", "interpolation", "fill")


class AugMix(nn.Module):
    """AugMix (Hendrycks et al., 2020): a convex mix of the image and ``mixture_width`` chains
    of ``chain_depth`` random ops (1 to 3 when negative) at up to ``severity`` (1..10).

    The chain weights are Dirichlet(``alpha``) and the image/chains split is Beta(``alpha``,
    ``alpha``), drawn per image of a batch from glasstorch's generator; the op chains are shared
    by the batch. PIL images are mixed as uint8 tensors and returned as PIL images.
    """

    _PARAMETER_MAX = 10

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__()
        if not 1 <= severity <= self._PARAMETER_MAX:
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got "
                             f"{severity} instead.")
        self.severity, self.mixture_width, self.chain_depth = severity, mixture_width, chain_depth
        self.alpha, self.all_ops = alpha, all_ops
        self.interpolation, self.fill = _interp(interpolation), fill

    def _augmentation_space(self, num_bins, image_size):
        h, w = image_size
        space = _affine_and_color_space(num_bins, 0.3, (h / 3.0, w / 3.0), 30.0, 0.9)
        enhance = {k: space.pop(k) for k in ("Brightness", "Color", "Contrast", "Sharpness")}
        space.update({
            "Posterize": (_posterize_bits(num_bins, 4, 4), False),
            "Solarize": (_bins(255.0, 0.0, num_bins), False),
            "AutoContrast": (None, False),
            "Equalize": (None, False),
        })
        if self.all_ops:
            space.update(enhance)
        return space

    def _sample_dirichlet(self, params):
        """One Dirichlet draw per row of ``params`` (the concentrations)."""
        return glasstorch.distributions.Dirichlet(params).sample()

    def _sample_chain(self, space):
        """The (op name, magnitude) steps of one augmentation chain."""
        depth = self.chain_depth if self.chain_depth > 0 else \
            int(glasstorch.randint(1, 4, (1,)).item())
        names = list(space)
        steps = []
        for _ in range(depth):
            op_name = names[_randint(len(names))]
            magnitudes, signed = space[op_name]
            magnitude = float(magnitudes[_randint(self.severity)]) \
                if magnitudes is not None else 0.0
            steps.append((op_name, _signed(magnitude, signed)))
        return steps

    def forward(self, orig_img):
        pil = is_pil(orig_img)
        img = F.pil_to_tensor(orig_img) if pil else orig_img
        if not isinstance(img, glasstorch.Tensor):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(orig_img)}")
        _, h, w = F.get_dimensions(img)
        fill = _fill_for(img, self.fill)
        space = self._augmentation_space(self._PARAMETER_MAX, (h, w))
        batch = img.reshape([1] * max(4 - img.dim(), 0) + list(img.shape))
        n = batch.shape[0]
        per_image = [n] + [1] * (batch.dim() - 1)
        split = self._sample_dirichlet(glasstorch.tensor([self.alpha] * 2).expand(n, -1))
        weights = self._sample_dirichlet(
            glasstorch.tensor([self.alpha] * self.mixture_width).expand(n, -1))
        weights = weights * split[:, 1].reshape(n, 1)
        mix = split[:, 0].reshape(per_image) * batch
        for i in range(self.mixture_width):
            aug = batch
            for op_name, magnitude in self._sample_chain(space):
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix = mix + weights[:, i].reshape(per_image) * aug
        mix = mix.reshape(img.shape).to(img.dtype)
        return F.to_pil_image(mix) if pil else mix

    def __repr__(self):
        return _repr(self, "severity", "mixture_width", "chain_depth", "alpha", "all_ops",
                     "interpolation", "fill")
