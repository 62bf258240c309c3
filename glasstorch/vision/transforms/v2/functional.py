"""transforms.v2.functional: functionals that dispatch on what they are given.

Plain tensors, ``tv_tensors.Image`` / ``Video`` and PIL images go to the image kernels (v1's,
plus v2's own that take any image dtype); ``Mask`` to the mask kernels (nearest sampling);
``BoundingBoxes`` to the box kernels, which read and update ``format`` / ``canvas_size``.
The output keeps the input's type. The ``*_bounding_boxes`` / ``*_mask`` kernels are public
too, for plain tensors.

>>> import glasstorch
>>> from glasstorch.vision import tv_tensors
>>> from glasstorch.vision.transforms.v2 import functional as F
>>> boxes = tv_tensors.BoundingBoxes([[1, 2, 4, 6]], format="XYXY", canvas_size=(8, 10))
>>> F.horizontal_flip(boxes).tolist()
[[6, 2, 9, 6]]
"""
import numpy as np

import glasstorch
from glasstorch import Tensor

from ... import tv_tensors
from ..._pil import is_pil
from ...tv_tensors import BoundingBoxes, Image, Mask, Video
from .. import functional as _v1
from ..functional import (
    InterpolationMode,
    get_image_num_channels,
    get_image_size,
    pil_to_tensor,
    to_pil_image,
    to_tensor,
)
from . import _bounding_boxes as _boxes
from ._bounding_boxes import (
    affine_bounding_boxes,
    center_crop_bounding_boxes,
    crop_bounding_boxes,
    horizontal_flip_bounding_boxes,
    pad_bounding_boxes,
    perspective_bounding_boxes,
    resize_bounding_boxes,
    resized_crop_bounding_boxes,
    rotate_bounding_boxes,
    vertical_flip_bounding_boxes,
)
from ._utils import PIL_IMAGE, as_plain, is_pure_tensor, kernel_for, register_kernel
from ._utils import register_kernel_internal as _register

__all__ = [
    "InterpolationMode", "register_kernel", "is_pure_tensor",
    # geometry
    "horizontal_flip", "hflip", "vertical_flip", "vflip", "resize", "crop", "center_crop",
    "resized_crop", "pad", "rotate", "affine", "perspective", "five_crop", "ten_crop",
    "horizontal_flip_bounding_boxes", "vertical_flip_bounding_boxes", "resize_bounding_boxes",
    "crop_bounding_boxes", "center_crop_bounding_boxes", "resized_crop_bounding_boxes",
    "pad_bounding_boxes", "affine_bounding_boxes", "rotate_bounding_boxes",
    "perspective_bounding_boxes", "resize_mask", "pad_mask", "rotate_mask", "affine_mask",
    "perspective_mask", "resize_image", "pad_image", "rotate_image", "perspective_image",
    # meta
    "get_dimensions", "get_num_channels", "get_size", "get_num_frames", "get_image_size",
    "get_image_num_channels", "convert_bounding_box_format", "clamp_bounding_boxes",
    "sanitize_bounding_boxes",
    # colour and misc
    "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma",
    "adjust_sharpness", "invert", "posterize", "solarize", "autocontrast", "equalize",
    "rgb_to_grayscale", "to_grayscale", "grayscale_to_rgb", "permute_channels",
    "gaussian_blur", "gaussian_noise", "normalize", "erase", "to_dtype", "convert_image_dtype",
    # conversion
    "to_image", "pil_to_tensor", "to_pil_image", "to_tensor",
]

_IMAGE_TYPES = (Tensor, Image, Video, PIL_IMAGE)
_TENSOR_IMAGE_TYPES = (Tensor, Image, Video)


def _image_functional(kernel, types=_IMAGE_TYPES, name=None):
    """A v2 functional whose only kernel is ``kernel``, for images and videos (and PIL images
    unless ``types`` says otherwise); masks and boxes raise TypeError."""
    def functional(inpt, *args, **kwargs):
        return kernel_for(functional, inpt)(inpt, *args, **kwargs)
    functional.__name__ = functional.__qualname__ = name or kernel.__name__
    functional.__doc__, functional.__module__ = kernel.__doc__, __name__
    _register(functional, *types)(kernel)
    return functional


def _boxes_out(inpt, result):
    # box kernels return (boxes, canvas_size) when the canvas changes
    out, canvas_size = result
    return tv_tensors.wrap(out, like=inpt, canvas_size=canvas_size)


# ---------------------------------------------------------------------------- flips


def horizontal_flip(inpt):
    """Flip left-right (images, videos, masks; boxes move to their mirrored place)."""
    return kernel_for(horizontal_flip, inpt)(inpt)


def vertical_flip(inpt):
    """Flip top-bottom (images, videos, masks; boxes move to their mirrored place)."""
    return kernel_for(vertical_flip, inpt)(inpt)


hflip, vflip = horizontal_flip, vertical_flip

_register(horizontal_flip, *_IMAGE_TYPES, Mask)(_v1.hflip)
_register(vertical_flip, *_IMAGE_TYPES, Mask)(_v1.vflip)


@_register(horizontal_flip, BoundingBoxes, wrap=False)
def _horizontal_flip_boxes(inpt):
    out = horizontal_flip_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size)
    return tv_tensors.wrap(out, like=inpt)


@_register(vertical_flip, BoundingBoxes, wrap=False)
def _vertical_flip_boxes(inpt):
    out = vertical_flip_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size)
    return tv_tensors.wrap(out, like=inpt)


# ---------------------------------------------------------------------------- resize, crop, pad


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` (h, w), or make the shorter edge ``size`` (an int or [int]); with
    ``size=None`` the longer edge becomes ``max_size``. Masks use nearest sampling; boxes
    scale with the canvas."""
    return kernel_for(resize, inpt)(inpt, size, interpolation=interpolation, max_size=max_size,
                                    antialias=antialias)


@_register(resize, *_IMAGE_TYPES)
def resize_image(image, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
    """``resize`` for an image: v1's resize at v2's output size."""
    _, h, w = _v1.get_dimensions(image)
    out_size = _boxes.resized_output_size((h, w), size, max_size)
    return _v1.resize(image, out_size, interpolation, antialias=antialias)


@_register(resize, Mask)
def resize_mask(mask, size, interpolation=InterpolationMode.NEAREST, max_size=None, **kwargs):
    """``resize`` for a mask: nearest sampling (NEAREST_EXACT kept when asked for)."""
    interpolation = _v1._interp(interpolation)
    if interpolation != InterpolationMode.NEAREST_EXACT:
        interpolation = InterpolationMode.NEAREST
    return resize_image(mask, size, interpolation, max_size)


@_register(resize, BoundingBoxes, wrap=False)
def _resize_boxes(inpt, size, max_size=None, **kwargs):
    return _boxes_out(inpt, resize_bounding_boxes(as_plain(inpt), inpt.canvas_size, size,
                                                  max_size, inpt.format, inpt.clamping_mode))


def crop(inpt, top, left, height, width):
    """Crop the box at (top, left); outside the image is zero-padded, boxes are clamped."""
    return kernel_for(crop, inpt)(inpt, top, left, height, width)


_register(crop, *_IMAGE_TYPES, Mask)(_v1.crop)


@_register(crop, BoundingBoxes, wrap=False)
def _crop_boxes(inpt, top, left, height, width):
    return _boxes_out(inpt, crop_bounding_boxes(as_plain(inpt), inpt.format, top, left, height,
                                                width, inpt.clamping_mode))


def center_crop(inpt, output_size):
    """Crop the centre ``output_size`` (zero-padding an image smaller than it)."""
    return kernel_for(center_crop, inpt)(inpt, output_size)


_register(center_crop, *_IMAGE_TYPES, Mask)(_v1.center_crop)


@_register(center_crop, BoundingBoxes, wrap=False)
def _center_crop_boxes(inpt, output_size):
    return _boxes_out(inpt, center_crop_bounding_boxes(as_plain(inpt), inpt.format,
                                                       inpt.canvas_size, output_size,
                                                       inpt.clamping_mode))


def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    """``crop`` then ``resize``."""
    return kernel_for(resized_crop, inpt)(inpt, top, left, height, width, size,
                                          interpolation=interpolation, antialias=antialias)


_register(resized_crop, *_IMAGE_TYPES)(_v1.resized_crop)


@_register(resized_crop, Mask)
def _resized_crop_mask(mask, top, left, height, width, size, **kwargs):
    return resize_mask(_v1.crop(mask, top, left, height, width), size)


@_register(resized_crop, BoundingBoxes, wrap=False)
def _resized_crop_boxes(inpt, top, left, height, width, size, **kwargs):
    return _boxes_out(inpt, resized_crop_bounding_boxes(as_plain(inpt), inpt.format, top, left,
                                                        height, width, size,
                                                        inpt.clamping_mode))


def pad(inpt, padding, fill=None, padding_mode="constant"):
    """Pad the borders by ``padding`` (int, (lr, tb) or (l, t, r, b)) with ``fill`` or the
    ``padding_mode`` ("constant", "edge", "reflect", "symmetric"; boxes: constant only)."""
    return kernel_for(pad, inpt)(inpt, padding, fill=fill, padding_mode=padding_mode)


@_register(pad, *_IMAGE_TYPES)
def pad_image(image, padding, fill=None, padding_mode="constant"):
    """``pad`` for an image; a per-channel ``fill`` works on tensors too (constant mode)."""
    fill = 0 if fill is None else fill
    if isinstance(fill, (tuple, list)) and len(fill) == 1:
        fill = fill[0]
    if is_pil(image) or not isinstance(fill, (tuple, list)):
        return _v1.pad(image, padding, fill, padding_mode)
    if padding_mode != "constant":
        raise ValueError(f"Padding mode '{padding_mode}' is not supported if fill is not scalar")
    out = _v1.pad(image, padding, 0, padding_mode)
    left, top, right, bottom = _boxes.parse_padding(padding)
    values = glasstorch.tensor(fill).to(image.dtype).reshape(-1, 1, 1)
    for region, amount in (((slice(None, top), slice(None)), top),
                           ((slice(None), slice(None, left)), left),
                           ((slice(out.shape[-2] - bottom, None), slice(None)), bottom),
                           ((slice(None), slice(out.shape[-1] - right, None)), right)):
        if amount > 0:
            out[(..., *region)] = values
    return out


@_register(pad, Mask)
def pad_mask(mask, padding, fill=None, padding_mode="constant"):
    """``pad`` for a mask (a single fill value)."""
    if isinstance(fill, (tuple, list)):
        raise ValueError("Non-scalar fill value is not supported")
    return pad_image(mask, padding, fill, padding_mode)


@_register(pad, BoundingBoxes, wrap=False)
def _pad_boxes(inpt, padding, padding_mode="constant", **kwargs):
    return _boxes_out(inpt, pad_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size,
                                               padding, padding_mode, inpt.clamping_mode))


def five_crop(inpt, size):
    """The four corner crops and the centre crop of an image or video."""
    return kernel_for(five_crop, inpt)(inpt, size)


def ten_crop(inpt, size, vertical_flip=False):
    """``five_crop`` of the image and of its flipped copy."""
    return kernel_for(ten_crop, inpt)(inpt, size, vertical_flip)


_register(five_crop, *_IMAGE_TYPES)(_v1.five_crop)
_register(ten_crop, *_IMAGE_TYPES)(_v1.ten_crop)


# ---------------------------------------------------------------------------- warps


def rotate(inpt, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the centre);
    ``expand`` grows the canvas to hold the whole result."""
    return kernel_for(rotate, inpt)(inpt, angle, interpolation=interpolation, expand=expand,
                                    center=center, fill=fill)


@_register(rotate, *_IMAGE_TYPES)
def rotate_image(image, angle, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=None):
    """``rotate`` for an image: quarter turns about the centre are exact transposes."""
    if is_pil(image):
        return _v1.rotate(image, angle, interpolation, expand, center, fill)
    angle = angle % 360
    if center is None:
        if angle == 0:
            return image.clone()
        if angle == 180 or (angle in (90, 270) and (expand or image.shape[-1] ==
                                                    image.shape[-2])):
            return image.rot90(int(angle) // 90, (-2, -1))
    h, w = image.shape[-2:]
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, [w, h])]
    matrix = _v1._inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    out_size = _boxes.affine_output_size(matrix, w, h)[::-1] if expand else None
    return _v1._affine_tensor(image, matrix, _v1._interp(interpolation), fill, out_size)


@_register(rotate, Mask)
def rotate_mask(mask, angle, expand=False, center=None, fill=None, **kwargs):
    """``rotate`` for a mask (nearest sampling)."""
    return rotate_image(mask, angle, InterpolationMode.NEAREST, expand, center, fill)


@_register(rotate, BoundingBoxes, wrap=False)
def _rotate_boxes(inpt, angle, expand=False, center=None, **kwargs):
    return _boxes_out(inpt, rotate_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size,
                                                  angle, expand, center, inpt.clamping_mode))


def affine(inpt, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Affine warp: rotation ``angle`` (degrees, clockwise), ``translate`` (pixels), ``scale``,
    ``shear`` (degrees; a number or (x, y)) about ``center`` (default: the centre)."""
    return kernel_for(affine, inpt)(inpt, angle, translate, scale, shear,
                                    interpolation=interpolation, fill=fill, center=center)


_register(affine, *_IMAGE_TYPES)(_v1.affine)


@_register(affine, Mask)
def affine_mask(mask, angle, translate, scale, shear, fill=None, center=None, **kwargs):
    """``affine`` for a mask (nearest sampling)."""
    return _v1.affine(mask, angle, translate, scale, shear, InterpolationMode.NEAREST, fill,
                      center)


@_register(affine, BoundingBoxes, wrap=False)
def _affine_boxes(inpt, angle, translate, scale, shear, center=None, **kwargs):
    out = affine_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size, angle, translate,
                                scale, shear, center, inpt.clamping_mode)
    return tv_tensors.wrap(out, like=inpt)


def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None, coefficients=None):
    """Perspective warp taking the four ``startpoints`` to ``endpoints`` (or given by its 8
    ``coefficients``)."""
    return kernel_for(perspective, inpt)(inpt, startpoints, endpoints,
                                         interpolation=interpolation, fill=fill,
                                         coefficients=coefficients)


@_register(perspective, *_IMAGE_TYPES)
def perspective_image(image, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                      fill=None, coefficients=None):
    """``perspective`` for an image."""
    coeffs = _boxes.perspective_coefficients(startpoints, endpoints, coefficients)
    return _v1._perspective_by_coeffs(image, coeffs, _v1._interp(interpolation), fill)


@_register(perspective, Mask)
def perspective_mask(mask, startpoints, endpoints, fill=None, coefficients=None, **kwargs):
    """``perspective`` for a mask (nearest sampling)."""
    return perspective_image(mask, startpoints, endpoints, InterpolationMode.NEAREST, fill,
                             coefficients)


@_register(perspective, BoundingBoxes, wrap=False)
def _perspective_boxes(inpt, startpoints, endpoints, coefficients=None, **kwargs):
    out = perspective_bounding_boxes(as_plain(inpt), inpt.format, inpt.canvas_size, startpoints,
                                     endpoints, coefficients, inpt.clamping_mode)
    return tv_tensors.wrap(out, like=inpt)


# ---------------------------------------------------------------------------- meta


def _size_of_tensor(t):
    if t.dim() < 2:
        raise TypeError(f"Input tensor should have at least two dimensions, but got {t.dim()}")
    return list(t.shape[-2:])


def get_size(inpt):
    """``[height, width]`` of an image, video, mask or PIL image; a box set's canvas size."""
    return kernel_for(get_size, inpt)(inpt)


_register(get_size, Tensor, Image, Video, Mask, wrap=False)(_size_of_tensor)
_register(get_size, PIL_IMAGE)(lambda img: [img.height, img.width])
_register(get_size, BoundingBoxes, wrap=False)(lambda boxes: list(boxes.canvas_size))


def get_dimensions(inpt):
    """``[channels, height, width]`` of an image or video."""
    return kernel_for(get_dimensions, inpt)(inpt)


def get_num_channels(inpt):
    """The number of channels of an image or video."""
    return kernel_for(get_num_channels, inpt)(inpt)


def get_num_frames(inpt):
    """The number of frames of a video (``[..., T, C, H, W]``)."""
    return kernel_for(get_num_frames, inpt)(inpt)


_register(get_dimensions, *_IMAGE_TYPES, wrap=False)(_v1.get_dimensions)
_register(get_num_channels, *_IMAGE_TYPES, wrap=False)(_v1.get_image_num_channels)
_register(get_num_frames, Tensor, Video, wrap=False)(lambda video: video.shape[-4])


def convert_bounding_box_format(inpt, old_format=None, new_format=None, inplace=False):
    """Boxes in ``new_format``: BoundingBoxes carry their format, a plain tensor needs
    ``old_format``."""
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: "
                        "'new_format'")
    new_format = _boxes.as_format(new_format)
    if is_pure_tensor(inpt):
        if old_format is None:
            raise ValueError("For pure tensor inputs, `old_format` has to be passed.")
        out = _boxes.convert_bounding_box_format_tensor(inpt, old_format, new_format)
        return _in_place(inpt, out) if inplace else out
    if not isinstance(inpt, BoundingBoxes):
        raise TypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got "
                        f"{type(inpt)} instead.")
    if old_format is not None:
        raise ValueError("For bounding box tv_tensor inputs, `old_format` must not be passed.")
    out = _boxes.convert_bounding_box_format_tensor(as_plain(inpt), inpt.format, new_format)
    if inplace:
        out = _in_place(as_plain(inpt), out)
    return tv_tensors.wrap(out, like=inpt, format=new_format)


def _in_place(target, values):
    if values is not target:
        target.copy_(values)
    return target


def clamp_bounding_boxes(inpt, format=None, canvas_size=None, clamping_mode="auto"):
    """Clamp boxes to their canvas. "auto" uses the boxes' own ``clamping_mode``; a plain
    tensor needs ``format``, ``canvas_size`` and an explicit mode."""
    if clamping_mode not in (None, "soft", "hard", "auto"):
        raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
    if is_pure_tensor(inpt):
        if format is None or canvas_size is None or clamping_mode == "auto":
            raise ValueError("For pure tensor inputs, `format`, `canvas_size` and `clamping_mode`"
                             " have to be passed.")
        return _boxes.clamp_bounding_boxes_tensor(inpt, format, canvas_size, clamping_mode)
    if not isinstance(inpt, BoundingBoxes):
        raise TypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got "
                        f"{type(inpt)} instead.")
    if format is not None or canvas_size is not None:
        raise ValueError("For bounding box tv_tensor inputs, `format` and `canvas_size` must not "
                         "be passed.")
    mode = inpt.clamping_mode if clamping_mode == "auto" else clamping_mode
    out = _boxes.clamp_bounding_boxes_tensor(as_plain(inpt), inpt.format, inpt.canvas_size, mode)
    return tv_tensors.wrap(out, like=inpt)


def sanitize_bounding_boxes(bounding_boxes, format=None, canvas_size=None, min_size=1.0,
                            min_area=1.0):
    """Drop degenerate boxes (smaller than ``min_size`` / ``min_area``, or off the canvas);
    returns ``(boxes, valid)`` with ``valid`` the bool mask of the boxes kept."""
    if min_size < 1:
        raise ValueError(f"min_size must be >= 1, got {min_size}.")
    if min_area < 1:
        raise ValueError(f"min_area must be >= 1, got {min_area}.")
    if is_pure_tensor(bounding_boxes):
        if format is None or canvas_size is None:
            raise ValueError("format and canvas_size cannot be None if bounding_boxes is a pure "
                             f"tensor. Got format={format} and canvas_size={canvas_size}.Set "
                             "those to appropriate values or pass bounding_boxes as a "
                             "tv_tensors.BoundingBoxes object.")
        valid = _boxes.sanitize_mask(bounding_boxes, format, canvas_size, min_size, min_area)
        return bounding_boxes[valid], valid
    if not isinstance(bounding_boxes, BoundingBoxes):
        raise ValueError("bounding_boxes must be a tv_tensors.BoundingBoxes instance or a pure "
                         "tensor.")
    if format is not None or canvas_size is not None:
        raise ValueError("format and canvas_size must be None when bounding_boxes is a "
                         "tv_tensors.BoundingBoxes instance. Leave those to None or pass "
                         "bounding_boxes as a pure tensor.")
    valid = _boxes.sanitize_mask(as_plain(bounding_boxes), bounding_boxes.format,
                                 bounding_boxes.canvas_size, min_size, min_area)
    return tv_tensors.wrap(as_plain(bounding_boxes)[valid], like=bounding_boxes), valid


# ---------------------------------------------------------------------------- colour and misc


def _posterize_image(image, bits):
    """Keep ``bits`` bits per channel; float images are quantised to ``2**bits`` levels."""
    if not isinstance(bits, int) or not 0 <= bits <= 8:
        raise TypeError(f"bits must be a positive integer in the range [0, 8], got {bits} "
                        "instead.")
    return _v1.posterize(image, bits) if is_pil(image) else _v1._posterize_tensor(image, bits)


def _equalize_image(image):
    """Histogram-equalise each channel (float images on 8-bit levels)."""
    return _v1.equalize(image) if is_pil(image) else _v1._equalize_tensor(image)


def _solarize_image(image, threshold):
    """Invert the pixels at or above ``threshold`` (in the dtype's value range)."""
    if not is_pil(image) and threshold > _v1._max_value(image.dtype.np):
        raise TypeError("Threshold should be less or equal the maximum value of the dtype, but "
                        f"got {threshold}")
    return _v1.solarize(image, threshold)


def _grayscale_to_rgb_image(image):
    """Repeat a single channel three times (RGB input is returned as is)."""
    if is_pil(image):
        return image.convert(mode="RGB")
    if image.shape[-3] >= 3:
        return image
    return _v1.rgb_to_grayscale(image, num_output_channels=3)


def _permute_channels_image(image, permutation):
    """Reorder the channels: output channel ``i`` is input channel ``permutation[i]``."""
    if is_pil(image):
        return _v1.to_pil_image(_permute_channels_image(_v1.pil_to_tensor(image), permutation))
    if len(permutation) != image.shape[-3]:
        raise ValueError("Length of permutation does not match number of channels: "
                         f"{len(permutation)} != {image.shape[-3]}")
    return image[..., list(permutation), :, :]


def _gaussian_noise_image(image, mean=0.0, sigma=0.1, clip=True):
    """Add N(``mean``, ``sigma``) noise (on the 0..1 scale; uint8 images are scaled by 255)
    from glasstorch's generator, clamped to the value range when ``clip``."""
    if is_pil(image):
        raise TypeError("Gaussian noise is not supported for PIL images.")
    if sigma < 0:
        raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
    if image.is_floating_point():
        out = image + (mean + glasstorch.randn_like(image) * sigma)
        return out.clamp(0, 1) if clip else out
    if image.dtype != glasstorch.uint8:
        raise ValueError("Input tensor is expected to be in uint8 or float dtype, got "
                         f"dtype={image.dtype}")
    # int16 noise, as torchvision: truncated towards zero, then added without rounding
    noise = mean * 255 + glasstorch.randn_like(image, dtype=glasstorch.float32) * (sigma * 255)
    out = image + noise.to(glasstorch.int16)
    return (out.clamp(0, 255) if clip else out).to(glasstorch.uint8)


def _to_dtype_image(image, dtype=glasstorch.float32, scale=False):
    """Cast an image to ``dtype``; ``scale`` also maps the value range (0..255 <-> 0..1 for
    uint8 <-> float)."""
    if not scale:
        return image.to(dtype)
    return _v1._to_dtype_scaled(image, dtype)


adjust_brightness = _image_functional(_v1.adjust_brightness)
adjust_contrast = _image_functional(_v1.adjust_contrast)
adjust_saturation = _image_functional(_v1.adjust_saturation)
adjust_hue = _image_functional(_v1.adjust_hue)
adjust_gamma = _image_functional(_v1.adjust_gamma)
adjust_sharpness = _image_functional(_v1.adjust_sharpness)
invert = _image_functional(_v1.invert)
autocontrast = _image_functional(_v1.autocontrast)
rgb_to_grayscale = _image_functional(_v1.rgb_to_grayscale)
to_grayscale = rgb_to_grayscale
gaussian_blur = _image_functional(_v1.gaussian_blur)
posterize = _image_functional(_posterize_image, name="posterize")
equalize = _image_functional(_equalize_image, name="equalize")
solarize = _image_functional(_solarize_image, name="solarize")
grayscale_to_rgb = _image_functional(_grayscale_to_rgb_image, name="grayscale_to_rgb")
permute_channels = _image_functional(_permute_channels_image, name="permute_channels")
gaussian_noise = _image_functional(_gaussian_noise_image, name="gaussian_noise")
normalize = _image_functional(_v1.normalize, _TENSOR_IMAGE_TYPES)
erase = _image_functional(_v1.erase, _TENSOR_IMAGE_TYPES)
to_dtype = _image_functional(_to_dtype_image, _TENSOR_IMAGE_TYPES, name="to_dtype")
# masks and boxes change dtype without rescaling, keeping their type and metadata
_register(to_dtype, Mask, BoundingBoxes, wrap=False)(
    lambda inpt, dtype=glasstorch.float32, scale=False: inpt.to(dtype))


def convert_image_dtype(image, dtype=glasstorch.float32):
    """Convert an image to ``dtype``, rescaling its values (``to_dtype(..., scale=True)``)."""
    return _to_dtype_image(image, dtype, scale=True)


# ---------------------------------------------------------------------------- conversion


def to_image(inpt):
    """PIL image, HWC ndarray or tensor -> a ``tv_tensors.Image`` ``[..., C, H, W]`` (no
    rescaling)."""
    if isinstance(inpt, np.ndarray):
        out = glasstorch.from_numpy(np.ascontiguousarray(np.atleast_3d(inpt)
                                                         .transpose(2, 0, 1)))
    elif is_pil(inpt):
        out = _v1.pil_to_tensor(inpt)
    elif isinstance(inpt, Tensor):
        out = inpt
    else:
        raise TypeError("Input can either be a pure Tensor, a numpy array, or a PIL image, but "
                        f"got {type(inpt)} instead.")
    return Image(out)
