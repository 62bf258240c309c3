"""transforms.v2.functional: v1's functions, plus v2's own and the v2 kernels that take any
image dtype (float images included) where v1 takes uint8 only."""
import numpy as np

import glasstorch

from ..._pil import is_pil
from .. import functional as _v1
from ..functional import *  # noqa: F401,F403
from ..functional import __all__ as _v1_all

__all__ = [*_v1_all, "to_image", "to_dtype", "grayscale_to_rgb", "permute_channels",
           "gaussian_noise", "horizontal_flip", "vertical_flip", "get_size",
           "get_num_channels"]

horizontal_flip = _v1.hflip
vertical_flip = _v1.vflip
get_num_channels = _v1.get_image_num_channels


def get_size(inpt):
    """``[height, width]`` of a PIL image or tensor."""
    return _v1.get_dimensions(inpt)[1:]


def to_image(inpt):
    """PIL image, HWC ndarray or tensor -> a ``[..., C, H, W]`` tensor (no rescaling)."""
    if isinstance(inpt, np.ndarray):
        out = glasstorch.from_numpy(np.ascontiguousarray(np.atleast_3d(inpt)
                                                         .transpose(2, 0, 1)))
    elif is_pil(inpt):
        out = _v1.pil_to_tensor(inpt)
    elif isinstance(inpt, glasstorch.Tensor):
        out = inpt
    else:
        raise TypeError("Input can either be a pure Tensor, a numpy array, or a PIL image, but "
                        f"got {type(inpt)} instead.")
    return out.unsqueeze(0) if out.dim() == 2 else out


def to_dtype(inpt, dtype=glasstorch.float32, scale=False):
    """Cast a tensor image to ``dtype``; ``scale`` also maps the value range (0..255 <->
    0..1 for uint8 <-> float)."""
    if not isinstance(inpt, glasstorch.Tensor):
        raise TypeError(f"F.to_dtype supports tensor inputs, but got {type(inpt)} instead.")
    if not scale:
        return inpt.to(dtype)
    return _v1._to_dtype_scaled(inpt, dtype)


def posterize(inpt, bits):
    """Keep ``bits`` bits per channel; float images are quantised to ``2**bits`` levels."""
    if not isinstance(bits, int) or not 0 <= bits <= 8:
        raise TypeError(f"bits must be a positive integer in the range [0, 8], got {bits} "
                        "instead.")
    return _v1.posterize(inpt, bits) if is_pil(inpt) else _v1._posterize_tensor(inpt, bits)


def equalize(inpt):
    """Histogram-equalise each channel (float images on 8-bit levels)."""
    return _v1.equalize(inpt) if is_pil(inpt) else _v1._equalize_tensor(inpt)


def solarize(inpt, threshold):
    """Invert the pixels at or above ``threshold`` (in the dtype's value range)."""
    if not is_pil(inpt) and threshold > _v1._max_value(inpt.dtype.np):
        raise TypeError("Threshold should be less or equal the maximum value of the dtype, but "
                        f"got {threshold}")
    return _v1.solarize(inpt, threshold)


def grayscale_to_rgb(inpt):
    """Repeat a single channel three times (RGB input is returned as is)."""
    if is_pil(inpt):
        return inpt.convert(mode="RGB")
    if inpt.shape[-3] >= 3:
        return inpt
    return _v1.rgb_to_grayscale(inpt, num_output_channels=3)


def permute_channels(inpt, permutation):
    """Reorder the channels: output channel ``i`` is input channel ``permutation[i]``."""
    if is_pil(inpt):
        return _v1.to_pil_image(permute_channels(_v1.pil_to_tensor(inpt), permutation))
    if len(permutation) != inpt.shape[-3]:
        raise ValueError("Length of permutation does not match number of channels: "
                         f"{len(permutation)} != {inpt.shape[-3]}")
    return inpt[..., list(permutation), :, :]


def gaussian_noise(inpt, mean=0.0, sigma=0.1, clip=True):
    """Add N(``mean``, ``sigma``) noise (on the 0..1 scale; uint8 images are scaled by 255)
    from glasstorch's generator, clamped to the value range when ``clip``."""
    if sigma < 0:
        raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
    if inpt.is_floating_point():
        out = inpt + (mean + glasstorch.randn_like(inpt) * sigma)
        return out.clamp(0, 1) if clip else out
    if inpt.dtype != glasstorch.uint8:
        raise ValueError("Input tensor is expected to be in uint8 or float dtype, got "
                         f"dtype={inpt.dtype}")
    # int16 noise, as torchvision: truncated towards zero, then added without rounding
    noise = (mean * 255 + glasstorch.randn_like(inpt, dtype=glasstorch.float32) * (sigma * 255))
    out = inpt + noise.to(glasstorch.int16)
    return (out.clamp(0, 255) if clip else out).to(glasstorch.uint8)
