"""Functional image transforms (torchvision.transforms.functional) for PIL images and tensors.

Tensors are ``[..., C, H, W]`` (batched too). Geometric warps on tensors (rotate, affine,
perspective) sample with align_corners=False pixel-centre geometry like torchvision's
grid_sample path; PIL images go through Pillow's own operations.
"""
import math
import numbers
from enum import Enum

import numpy as np

import glasstorch
import glasstorch.nn.functional as _F

from .._pil import is_pil, pil_image

__all__ = [
    "InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels",
    "to_tensor", "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize", "resize",
    "crop", "center_crop", "resized_crop", "pad", "hflip", "vflip", "five_crop", "ten_crop",
    "rgb_to_grayscale", "to_grayscale", "adjust_brightness", "adjust_contrast",
    "adjust_saturation", "adjust_hue", "adjust_gamma", "adjust_sharpness", "invert",
    "posterize", "solarize", "autocontrast", "equalize", "rotate", "affine", "perspective",
    "gaussian_blur", "erase",
]


class InterpolationMode(Enum):
    """Interpolation modes (values are the names torchvision uses)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil_resample(mode):
    Image = pil_image()
    return {
        InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.NEAREST_EXACT: Image.NEAREST,
        InterpolationMode.BILINEAR: Image.BILINEAR, InterpolationMode.BICUBIC: Image.BICUBIC,
        InterpolationMode.BOX: Image.BOX, InterpolationMode.HAMMING: Image.HAMMING,
        InterpolationMode.LANCZOS: Image.LANCZOS,
    }[mode]


def _interp(mode):
    # torchvision accepts the PIL integer constants too (0 nearest, 2 bilinear, 3 bicubic...).
    if isinstance(mode, InterpolationMode):
        return mode
    if isinstance(mode, int):
        table = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
                 3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
                 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}
        if mode in table:
            return table[mode]
    if isinstance(mode, str):
        return InterpolationMode(mode)
    raise TypeError(f"Argument interpolation should be an InterpolationMode, got {mode!r}")


def _is_tensor(img):
    return isinstance(img, glasstorch.Tensor)


def _check_img(img):
    if is_pil(img):
        return True
    if _is_tensor(img):
        if img.dim() < 2:
            raise TypeError(f"Tensor is not a torch image: expected at least 2 dims, "
                            f"got {img.dim()}")
        return False
    raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def _arr(t):
    return np.asarray(t.detach().numpy())


def _tensor(arr):
    return glasstorch.from_numpy(np.ascontiguousarray(arr))


def _max_value(np_dtype):
    if np_dtype == np.bool_:
        return 1
    if np.issubdtype(np_dtype, np.integer):
        return np.iinfo(np_dtype).max
    return 1.0


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image or tensor."""
    if _check_img(img):
        return [len(img.getbands()), img.height, img.width]
    if img.dim() == 2:
        return [1, *img.shape]
    return list(img.shape[-3:])


def get_image_size(img):
    """``[width, height]``."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    """Number of channels."""
    return get_dimensions(img)[0]


# ---------------------------------------------------------------------------- conversion


def pil_to_tensor(pic):
    """PIL image -> ``uint8``-like CHW tensor without scaling."""
    if not is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if pic.mode == "1":
        arr = arr.astype(np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return _tensor(arr.transpose(2, 0, 1))


def to_tensor(pic):
    """PIL image or HWC ndarray -> CHW tensor; 8-bit data is scaled to float in [0, 1]."""
    if is_pil(pic):
        if pic.mode == "1":
            return pil_to_tensor(pic).to(glasstorch.float32)
        t = pil_to_tensor(pic)
        if t.dtype == glasstorch.uint8:
            return t.to(glasstorch.get_default_dtype()).div(255)
        return t
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        t = _tensor(arr.transpose(2, 0, 1))
        if t.dtype == glasstorch.uint8:
            return t.to(glasstorch.get_default_dtype()).div(255)
        return t
    raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")


def to_pil_image(pic, mode=None):
    """CHW tensor or HWC ndarray -> PIL image (float data is scaled by 255 first)."""
    Image = pil_image()
    if _is_tensor(pic):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[0] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[0]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).to(glasstorch.uint8)
        arr = _arr(pic).transpose(1, 2, 0)
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        if arr.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    c = arr.shape[2]
    if c == 1:
        arr = arr[:, :, 0]
        defaults = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}
        expected = defaults.get(arr.dtype)
        if mode is not None and expected is not None and mode != expected and \
                not (expected == "L" and mode in ("L", "1")):
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {arr.dtype}. "
                             f"Should be {expected}")
        mode = mode or expected
        if mode is None:
            raise TypeError(f"Input type {arr.dtype} is not supported")
    else:
        if arr.dtype != np.uint8:
            raise TypeError(f"Input type {arr.dtype} is not supported for {c}-channel images")
        permitted = {2: ("LA",), 3: ("RGB", "YCbCr", "HSV"), 4: ("RGBA", "CMYK", "RGBX")}[c]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {list(permitted)} are supported for {c}D inputs")
        mode = mode or permitted[0]
    img = Image.fromarray(np.ascontiguousarray(arr))
    return img if img.mode == mode else img.convert(mode)


def convert_image_dtype(image, dtype=glasstorch.float32):
    """Convert a tensor image to ``dtype``, rescaling values to the new dtype's range."""
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    if image.dtype == dtype:
        return image
    src_float = image.is_floating_point()
    dst_float = dtype.is_floating_point
    if src_float and dst_float:
        return image.to(dtype)
    if src_float:
        if (image.dtype == glasstorch.float32 and dtype in (glasstorch.int32, glasstorch.int64)) \
                or (image.dtype == glasstorch.float64 and dtype == glasstorch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # 1 - eps keeps 1.0 inside the integer range while mapping [0, 1] evenly.
        return image.mul(_max_value(dtype.np) + 1.0 - 1e-3).to(dtype)
    in_max = _max_value(image.dtype.np)
    if dst_float:
        return image.to(dtype).div(in_max)
    out_max = _max_value(dtype.np)
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return image.div(factor, rounding_mode="floor").to(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return image.to(dtype).mul(factor)


def _to_dtype_scaled(image, dtype):
    # transforms.v2's rescaling: as convert_image_dtype, except that integer -> float
    # multiplies by 1 / max (v1 divides by max; the two differ in the last bit)
    if image.dtype != dtype and not image.is_floating_point() and dtype.is_floating_point:
        return image.to(dtype).mul(1.0 / _max_value(image.dtype.np))
    return convert_image_dtype(image, dtype)


def normalize(tensor, mean, std, inplace=False):
    """``(tensor - mean) / std`` per channel of a float CHW (or batched) tensor."""
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tuple(tensor.shape)}")
    mean = glasstorch.as_tensor(mean, dtype=tensor.dtype)
    std = glasstorch.as_tensor(std, dtype=tensor.dtype)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to "
                         "division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    if not inplace:
        tensor = tensor.clone()
    return tensor.sub_(mean).div_(std)


# ---------------------------------------------------------------------------- geometry


def _output_size(h, w, size, max_size):
    if isinstance(size, numbers.Number):
        size = [size]
    size = list(size)
    if len(size) == 1:
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = size[0], int(size[0] * long / short)
        if max_size is not None:
            if max_size <= size[0]:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)
    if max_size is not None:
        raise ValueError("max_size should only be passed if size specifies the length of the "
                         "smaller edge, i.e. size should be an int or a sequence of length 1")
    if len(size) != 2:
        raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not {size}")
    return size[0], size[1]


def _as_float_batch(img):
    # -> 4-D float tensor, the original leading shape and dtype (to undo afterwards)
    lead = img.shape[:-3] if img.dim() >= 3 else ()
    x = img if img.dim() >= 3 else img.unsqueeze(0)
    x = x.reshape(-1, *x.shape[-3:])
    dtype = img.dtype
    if not x.is_floating_point():
        x = x.to(glasstorch.float32)
    return x, lead, dtype


def _from_float_batch(x, img, lead, dtype):
    if not dtype.is_floating_point:
        x = x.round().clamp(0, _max_value(dtype.np)).to(dtype)
    out_shape = (*lead, *x.shape[-3:]) if img.dim() >= 3 else x.shape[-2:]
    return x.reshape(out_shape)


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` (an int resizes the shorter edge, keeping the aspect ratio)."""
    interpolation = _interp(interpolation)
    _, h, w = get_dimensions(img)
    oh, ow = _output_size(h, w, size, max_size)
    if is_pil(img):
        if (oh, ow) == (h, w):
            return img
        return img.resize((ow, oh), _pil_resample(interpolation))
    if (oh, ow) == (h, w):
        return img
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                             InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"Interpolation mode {interpolation} is unsupported with Tensor input")
    x, lead, dtype = _as_float_batch(img)
    mode = interpolation.value
    if mode in ("bilinear", "bicubic"):
        x = _F.interpolate(x, size=(oh, ow), mode=mode, align_corners=False,
                           antialias=bool(antialias))
    else:
        x = _F.interpolate(x, size=(oh, ow), mode=mode)
    return _from_float_batch(x, img, lead, dtype)


def crop(img, top, left, height, width):
    """Crop ``img`` to the box at (top, left); parts outside the image are zero-padded."""
    if is_pil(img):
        return img.crop((left, top, left + width, top + height))
    _check_img(img)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        pads = [max(-left, 0), max(right - w, 0), max(-top, 0), max(bottom - h, 0)]
        inner = img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)]
        return pad(inner, [pads[0], pads[2], pads[1], pads[3]], fill=0)
    return img[..., top:bottom, left:right]


def _setup_size(size, name="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    size = list(size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {name}.")
    return size[0], size[1]


def center_crop(img, output_size):
    """Crop the centre ``output_size`` region (padding with zeros when it is larger)."""
    ch, cw = _setup_size(output_size)
    _, h, w = get_dimensions(img)
    if ch > h or cw > w:
        pl, pt = (cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0
        pr, pb = (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0
        img = pad(img, [pl, pt, pr, pb], fill=0)
        _, h, w = get_dimensions(img)
        if (ch, cw) == (h, w):
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    """``crop`` then ``resize``."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def _parse_padding(padding):
    if isinstance(padding, numbers.Number):
        p = int(padding)
        return p, p, p, p
    padding = list(padding)
    if len(padding) == 1:
        return (padding[0],) * 4
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return tuple(padding)
    raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                     f"{len(padding)} element tuple")


_NP_PAD = {"constant": "constant", "edge": "edge", "reflect": "reflect",
           "symmetric": "symmetric"}


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the borders: ``padding`` is an int, (left/right, top/bottom) or (l, t, r, b)."""
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if padding_mode not in _NP_PAD:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = (int(p) for p in _parse_padding(padding))
    pil = _check_img(img)
    if pil:
        Image = pil_image()
        arr = np.asarray(img)
        palette = img.getpalette() if img.mode == "P" else None
    else:
        arr = _arr(img)
    # negative padding crops (torchvision allows it)
    h, w = arr.shape[0:2] if pil else arr.shape[-2:]
    ys = slice(max(-top, 0), h - max(-bottom, 0))
    xs = slice(max(-left, 0), w - max(-right, 0))
    arr = arr[ys, xs] if pil else arr[..., ys, xs]
    widths = [(max(top, 0), max(bottom, 0)), (max(left, 0), max(right, 0))]
    if pil:
        widths = widths + [(0, 0)] * (arr.ndim - 2)
    else:
        widths = [(0, 0)] * (arr.ndim - 2) + widths
    kwargs = {}
    if padding_mode == "constant":
        if pil:
            if isinstance(fill, (tuple, list)) and arr.ndim == 3:
                out = np.stack([np.pad(arr[..., c], widths[:2], constant_values=fill[c])
                                for c in range(arr.shape[2])], axis=-1)
                return Image.fromarray(out, mode=img.mode)
            kwargs["constant_values"] = fill if not isinstance(fill, (tuple, list)) else fill[0]
        else:
            if isinstance(fill, (tuple, list)):
                fill = fill[0] if len(fill) == 1 else fill
                if not isinstance(fill, numbers.Number):
                    raise ValueError("Non-scalar fill value is not supported for tensor padding")
            kwargs["constant_values"] = fill if fill is not None else 0
    out = np.pad(arr, widths, mode=_NP_PAD[padding_mode], **kwargs)
    if pil:
        res = Image.fromarray(np.ascontiguousarray(out), mode=img.mode)
        if palette is not None:
            res.putpalette(palette)
        return res
    return _tensor(out.astype(arr.dtype, copy=False))


def hflip(img):
    """Flip left-right."""
    if _check_img(img):
        return img.transpose(pil_image().FLIP_LEFT_RIGHT)
    return img.flip(-1)


def vflip(img):
    """Flip top-bottom."""
    if _check_img(img):
        return img.transpose(pil_image().FLIP_TOP_BOTTOM)
    return img.flip(-2)


def five_crop(img, size):
    """Four corner crops and the centre crop: ``(tl, tr, bl, br, center)``."""
    ch, cw = _setup_size(size)
    _, h, w = get_dimensions(img)
    if ch > h or cw > w:
        raise ValueError(f"Requested crop size {(ch, cw)} is bigger than input size {(h, w)}")
    return (crop(img, 0, 0, ch, cw), crop(img, 0, w - cw, ch, cw), crop(img, h - ch, 0, ch, cw),
            crop(img, h - ch, w - cw, ch, cw), center_crop(img, [ch, cw]))


def ten_crop(img, size, vertical_flip=False):
    """``five_crop`` of the image and of its flipped version."""
    first = five_crop(img, size)
    second = five_crop(vflip(img) if vertical_flip else hflip(img), size)
    return first + second


# ---------------------------------------------------------------------------- colour


def rgb_to_grayscale(img, num_output_channels=1):
    """ITU-R 601-2 luma; ``num_output_channels`` 1 or 3."""
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if _check_img(img):
        out = img.convert("L")
        return out.convert("RGB") if num_output_channels == 3 else out
    c = img.shape[-3] if img.dim() >= 3 else 1
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")
    if c == 3:
        r, g, b = img.unbind(dim=-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    if num_output_channels == 3:
        return gray.expand(*gray.shape[:-3], 3, *gray.shape[-2:]).clone()
    return gray


def to_grayscale(img, num_output_channels=1):
    """Alias of :func:`rgb_to_grayscale` (PIL images in torchvision's v1 API)."""
    return rgb_to_grayscale(img, num_output_channels)


def _blend(img1, img2, ratio):
    bound = _max_value(img1.dtype.np)
    out = (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound)
    return out.to(img1.dtype)


def _pil_enhance(img, name, factor):
    from PIL import ImageEnhance
    return getattr(ImageEnhance, name)(img).enhance(factor)


def _check_factor(factor, name):
    if factor < 0:
        raise ValueError(f"{name} ({factor}) is not non-negative.")


def adjust_brightness(img, brightness_factor):
    """Multiply intensities by ``brightness_factor``."""
    _check_factor(brightness_factor, "brightness_factor")
    if _check_img(img):
        return _pil_enhance(img, "Brightness", brightness_factor)
    return _blend(img, glasstorch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean grey level."""
    _check_factor(contrast_factor, "contrast_factor")
    if _check_img(img):
        return _pil_enhance(img, "Contrast", contrast_factor)
    c = img.shape[-3] if img.dim() >= 3 else 1
    gray = rgb_to_grayscale(img) if c == 3 else img
    dtype = img.dtype if img.is_floating_point() else glasstorch.float32
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image."""
    _check_factor(saturation_factor, "saturation_factor")
    if _check_img(img):
        return _pil_enhance(img, "Color", saturation_factor)
    if img.dim() >= 3 and img.shape[-3] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_sharpness(img, sharpness_factor):
    """Blend with a 3x3-smoothed copy (borders kept)."""
    _check_factor(sharpness_factor, "sharpness_factor")
    if _check_img(img):
        return _pil_enhance(img, "Sharpness", sharpness_factor)
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    x, lead, dtype = _as_float_batch(img)
    k = glasstorch.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13.0
    c = x.shape[1]
    blurred = _F.conv2d(x, k.expand(c, 1, 3, 3).contiguous(), groups=c)
    # the smoothed interior is stored in the image's dtype (rounded), then blended
    degenerate = img.clone()
    degenerate[..., 1:-1, 1:-1] = _from_float_batch(blurred, img, lead, dtype)
    return _blend(img, degenerate, sharpness_factor)


def _rgb_to_hsv(rgb):
    r, g, b = rgb[..., 0, :, :], rgb[..., 1, :, :], rgb[..., 2, :, :]
    maxc, minc = rgb.max(axis=-3), rgb.min(axis=-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = np.ones_like(maxc)
    s = cr / np.where(eqc, ones, maxc)
    cr_div = np.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_div, (maxc - g) / cr_div, (maxc - b) / cr_div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = np.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return np.stack([h, s, maxc], axis=-3)


def _hsv_to_rgb(hsv):
    h, s, v = hsv[..., 0, :, :], hsv[..., 1, :, :], hsv[..., 2, :, :]
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int64) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    table = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = [np.select([i == k for k in range(6)], [row[ch] for row in table]) for ch in range(3)]
    return np.stack(out, axis=-3)


def adjust_hue(img, hue_factor):
    """Shift the hue by ``hue_factor`` (in [-0.5, 0.5]) of a full turn."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    Image = pil_image() if is_pil(img) else None
    if _check_img(img):
        if img.mode in ("L", "1", "I", "F"):
            return img
        mode = img.mode
        h, s, v = img.convert("HSV").split()
        hue = np.array(h, dtype=np.uint8)
        hue += np.uint8(int(hue_factor * 255) % 256)
        out = Image.merge("HSV", (Image.fromarray(hue, "L"), s, v))
        return out.convert(mode)
    if img.dim() >= 3 and img.shape[-3] == 1:
        return img
    arr = _arr(img)
    floating = img.is_floating_point()
    x = arr.astype(np.float32) / 255.0 if not floating else arr
    hsv = _rgb_to_hsv(x)
    hsv[..., 0, :, :] = np.fmod(hsv[..., 0, :, :] + hue_factor, 1.0)
    hsv[..., 0, :, :] = np.where(hsv[..., 0, :, :] < 0, hsv[..., 0, :, :] + 1.0,
                                 hsv[..., 0, :, :])
    rgb = _hsv_to_rgb(hsv)
    if not floating:
        # back to uint8 the way convert_image_dtype does (scale by 256 - eps, truncate)
        rgb = np.clip(rgb * (255.0 + 1.0 - 1e-3), 0, 255)
    return _tensor(rgb.astype(arr.dtype))


def adjust_gamma(img, gamma, gain=1):
    """``gain * img ** gamma`` on [0, 1]-scaled intensities."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if _check_img(img):
        mode = img.mode
        table = [int((255 + 1 - 1e-3) * gain * pow(e / 255.0, gamma)) for e in range(256)]
        table = table * len(img.getbands())
        return img.convert("RGB").point(table).convert(mode) if mode != "RGB" \
            else img.point(table)
    x = img if img.is_floating_point() else convert_image_dtype(img, glasstorch.float32)
    x = (gain * x.pow(gamma)).clamp(0, 1)
    return convert_image_dtype(x, img.dtype)


def invert(img):
    """``max - img``."""
    if _check_img(img):
        from PIL import ImageOps
        return ImageOps.invert(img)
    if img.is_floating_point():
        return 1.0 - img
    return (_max_value(img.dtype.np) - img).to(img.dtype)


def posterize(img, bits):
    """Keep the ``bits`` highest bits of each uint8 channel."""
    if _check_img(img):
        from PIL import ImageOps
        return ImageOps.posterize(img, bits)
    if img.dtype != glasstorch.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    return _posterize_tensor(img, bits)


def _value_bits(dtype):
    return int(_max_value(dtype.np)).bit_length()


def _posterize_tensor(img, bits):
    # any dtype (transforms.v2): floats are quantised to 2**bits levels in [0, 1)
    if img.is_floating_point():
        levels = 1 << bits
        return img.mul(levels).floor().clamp(0, levels - 1).mul(1.0 / levels)
    value_bits = _value_bits(img.dtype)
    if bits >= value_bits:
        return img
    # the low bits cleared, written as a non-negative mask (torch would wrap a negative one)
    return img.bitwise_and(((1 << bits) - 1) << (value_bits - bits))


def solarize(img, threshold):
    """Invert the pixels at or above ``threshold``."""
    if _check_img(img):
        from PIL import ImageOps
        return ImageOps.solarize(img, threshold)
    if threshold > _max_value(img.dtype.np):
        raise TypeError("Threshold should be less than bound of img.")
    return glasstorch.where(img >= threshold, invert(img), img)


def autocontrast(img):
    """Stretch each channel to the full range."""
    if _check_img(img):
        from PIL import ImageOps
        return ImageOps.autocontrast(img)
    bound = _max_value(img.dtype.np)
    dtype = img.dtype if img.is_floating_point() else glasstorch.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    # torch evaluates `bound / t` as `t.reciprocal() * bound` (a different last bit)
    scale = (maximum - minimum).reciprocal() * bound
    eq = glasstorch.isfinite(scale).logical_not()
    minimum = glasstorch.where(eq, glasstorch.zeros_like(minimum), minimum)
    scale = glasstorch.where(eq, glasstorch.ones_like(scale), scale)
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def equalize(img):
    """Histogram-equalise each channel of a uint8 image."""
    if _check_img(img):
        from PIL import ImageOps
        return ImageOps.equalize(img)
    if img.dtype != glasstorch.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    return _equalize_uint8(img)


def _equalize_tensor(img):
    # any dtype (transforms.v2): equalised on 8-bit levels, then scaled back
    if img.dtype == glasstorch.uint8:
        return _equalize_uint8(img)
    return _to_dtype_scaled(_equalize_uint8(_to_dtype_scaled(img, glasstorch.uint8)), img.dtype)


def _equalize_uint8(img):
    arr = _arr(img)
    flat = arr.reshape(-1, arr.shape[-2] * arr.shape[-1])
    out = np.empty_like(flat)
    for k, ch in enumerate(flat):
        hist = np.bincount(ch, minlength=256)
        nonzero = hist[hist != 0]
        step = (nonzero[:-1].sum()) // 255 if nonzero.size else 0
        if step == 0:
            out[k] = ch
            continue
        lut = (np.cumsum(hist) + step // 2) // step
        lut = np.concatenate([[0], lut[:-1]]).clip(0, 255)
        out[k] = lut[ch]
    return _tensor(out.reshape(arr.shape).astype(np.uint8))


# ---------------------------------------------------------------------------- warps


def _inverse_affine_matrix(center, angle, translate, scale, shear):
    # Inverse of  T * C * R * S * Sh * C^-1  (rotation clockwise in image coords, as in
    # torchvision's documented convention for affine()).
    rot = math.radians(angle)
    sx, sy = (math.radians(s) for s in shear)
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m


def _fill_list(fill, c):
    if fill is None:
        return None
    if isinstance(fill, numbers.Number):
        return [float(fill)] * c
    fill = [float(f) for f in fill]
    if len(fill) == 1:
        return fill * c
    if len(fill) != c:
        raise ValueError(f"The number of elements in 'fill' ({len(fill)}) does not match the "
                         f"number of channels of the image ({c})")
    return fill


def _grid_dtype(img):
    # torchvision builds the sampling grid in the image's float dtype (float32 for integers);
    # its rounding decides which pixel nearest sampling picks at ties, so it is mirrored here
    return np.dtype(img.dtype.np).type if img.is_floating_point() else np.float32


def _grid_transform(img, grid, interpolation, fill):
    """grid_sample ``img`` ([..., C, H, W]) at ``grid`` (a [1, oh, ow, 2] array in [-1, 1])
    with zero padding; ``fill`` paints the outside through a sampled coverage mask."""
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
        raise ValueError(f"Interpolation mode {interpolation} is unsupported with Tensor input")
    x, lead, dtype = _as_float_batch(img)
    n, c = x.shape[:2]
    fills = _fill_list(fill, c)
    if fills is not None:
        x = glasstorch.cat([x, glasstorch.ones_like(x[:, :1])], dim=1)
    grid = _tensor(grid).to(x.dtype).expand(n, *grid.shape[1:])
    out = _F.grid_sample(x, grid, mode=interpolation.value, padding_mode="zeros",
                         align_corners=False)
    if fills is not None:
        out, mask = out[:, :-1], out[:, -1:].expand(n, c, *out.shape[2:])
        fill_img = glasstorch.tensor(fills, dtype=out.dtype).view(1, c, 1, 1).expand_as(out)
        if interpolation == InterpolationMode.NEAREST:
            out = glasstorch.where(mask < 0.5, fill_img, out)
        else:
            out = out * mask + (1.0 - mask) * fill_img
    return _from_float_batch(out, img, lead, dtype)


def _base_grid(oh, ow, dtype, offset):
    """x and y of the output pixel centres (flattened, row-major) minus ``offset``."""
    xs = np.arange(ow, dtype=dtype) + dtype(0.5 - offset[0])
    ys = np.arange(oh, dtype=dtype) + dtype(0.5 - offset[1])
    gx, gy = np.meshgrid(xs, ys)
    return gx.reshape(-1), gy.reshape(-1)


def _apply_rows(theta, gx, gy):
    # x * t0 + y * t1 + t2 in the grid's dtype, summed in the order torch's bmm does
    return [gx * row[0] + gy * row[1] + row[2] for row in theta]


def _affine_tensor(img, matrix, interpolation, fill, out_size=None):
    h, w = img.shape[-2:]
    oh, ow = out_size or (h, w)
    dtype = _grid_dtype(img)
    # the matrix maps centred output pixels to centred input pixels; divide by the half
    # input size to land in grid_sample's [-1, 1]
    theta = np.asarray(matrix, dtype).reshape(2, 3) / np.array([[0.5 * w], [0.5 * h]], dtype)
    gx, gy = _base_grid(oh, ow, dtype, (ow * 0.5, oh * 0.5))
    sx, sy = _apply_rows(theta, gx, gy)
    return _grid_transform(img, np.stack([sx, sy], -1).reshape(1, oh, ow, 2), interpolation,
                           fill)


def _pil_fill(img, fill):
    if fill is None:
        return None
    n = len(img.getbands())
    if isinstance(fill, (int, float)):
        return tuple([int(fill)] * n) if n > 1 else int(fill)
    fill = [int(f) for f in fill]
    if len(fill) == 1:
        fill = fill * n
    return tuple(fill) if n > 1 else fill[0]


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the centre)."""
    interpolation = _interp(interpolation)
    if _check_img(img):
        return img.rotate(angle, _pil_resample(interpolation), expand, center,
                          fillcolor=_pil_fill(img, fill))
    h, w = img.shape[-2:]
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    out_size = None
    if expand:
        pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                        [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]])
        theta = np.array(matrix).reshape(2, 3)
        new = pts @ theta.T
        tol = 1e-4
        cmax = np.ceil(np.trunc(new.max(axis=0) / tol) * tol)
        cmin = np.floor(np.trunc(new.min(axis=0) / tol) * tol)
        size = cmax - cmin
        out_size = (int(size[1]), int(size[0]))
    return _affine_tensor(img, matrix, interpolation, fill, out_size)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Affine warp: rotation ``angle`` (degrees, clockwise), ``translate`` (pixels), ``scale``,
    ``shear`` (degrees; a number or (x, y)), about ``center`` (default: image centre)."""
    interpolation = _interp(interpolation)
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, h, w = get_dimensions(img)
    if _check_img(img):
        c = [w * 0.5, h * 0.5] if center is None else list(center)
        matrix = _inverse_affine_matrix(c, angle, translate, scale, shear)
        return img.transform((w, h), pil_image().AFFINE, matrix, _pil_resample(interpolation),
                             fillcolor=_pil_fill(img, fill))
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine_matrix(center_f, angle, [float(t) for t in translate], scale, shear)
    return _affine_tensor(img, matrix, interpolation, fill)


def _perspective_coeffs(startpoints, endpoints):
    # coefficients mapping output (end) points to input (start) points
    a = np.zeros((8, 8))
    b = np.zeros(8)
    for i, ((sx, sy), (ex, ey)) in enumerate(zip(startpoints, endpoints)):
        a[2 * i] = [ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey]
        a[2 * i + 1] = [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]
        b[2 * i], b[2 * i + 1] = sx, sy
    # solved in float64, handed on rounded to float32 as torchvision does
    return np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32).tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None):
    """Perspective warp taking the four ``startpoints`` to ``endpoints`` ([x, y] corners)."""
    return _perspective_by_coeffs(img, _perspective_coeffs(startpoints, endpoints),
                                  _interp(interpolation), fill)


def _perspective_by_coeffs(img, coeffs, interpolation, fill):
    # the warp itself, from the 8 coefficients mapping output pixels to input pixels
    if _check_img(img):
        return img.transform(img.size, pil_image().PERSPECTIVE, coeffs,
                             _pil_resample(interpolation), fillcolor=_pil_fill(img, fill))
    h, w = img.shape[-2:]
    dtype = _grid_dtype(img)
    gx, gy = _base_grid(h, w, dtype, (0.0, 0.0))
    # numerator rows rescaled to [-1, 1] units first, then divided by the shared denominator
    num = np.asarray(coeffs[:6], dtype).reshape(2, 3) / np.array([[0.5 * w], [0.5 * h]], dtype)
    den = np.asarray([coeffs[6], coeffs[7], 1.0], dtype)
    (den_xy,) = _apply_rows(den[None], gx, gy)
    sx, sy = (v / den_xy - dtype(1.0) for v in _apply_rows(num, gx, gy))
    return _grid_transform(img, np.stack([sx, sy], -1).reshape(1, h, w, 2), interpolation, fill)


def _gaussian_kernel1d(ksize, sigma):
    half = (ksize - 1) * 0.5
    x = np.linspace(-half, half, ksize)
    pdf = np.exp(-0.5 * (x / sigma) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Separable Gaussian blur with reflect padding (odd positive ``kernel_size``)."""
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    kernel_size = list(kernel_size)
    if len(kernel_size) == 1:
        kernel_size = kernel_size * 2
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for k in kernel_size:
        if k % 2 == 0 or k < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if isinstance(sigma, numbers.Number):
        sigma = [float(sigma), float(sigma)]
    sigma = list(sigma)
    if len(sigma) == 1:
        sigma = sigma * 2
    if any(s <= 0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    pil = _check_img(img)
    t = pil_to_tensor(img) if pil else img
    arr = _arr(t)
    x = arr.astype(np.float32)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0]).astype(np.float32)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1]).astype(np.float32)
    px, py = kernel_size[0] // 2, kernel_size[1] // 2
    widths = [(0, 0)] * (x.ndim - 2) + [(py, py), (px, px)]
    xp_ = np.pad(x, widths, mode="reflect")
    h, w = x.shape[-2:]
    tmp = sum(kx[i] * xp_[..., :, i:i + w] for i in range(kernel_size[0]))
    out = sum(ky[i] * tmp[..., i:i + h, :] for i in range(kernel_size[1]))
    if not np.issubdtype(arr.dtype, np.floating):
        out = np.clip(np.round(out), 0, _max_value(arr.dtype))
    res = _tensor(out.astype(arr.dtype))
    return to_pil_image(res, mode=img.mode) if pil else res


def erase(img, i, j, h, w, v, inplace=False):
    """Set ``img[..., i:i+h, j:j+w] = v`` (tensor images only)."""
    if not _is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img
