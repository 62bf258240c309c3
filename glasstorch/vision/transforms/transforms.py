"""Transform classes (torchvision.transforms v1 API). Randomness comes from glasstorch's
global generator, so ``glasstorch.manual_seed`` and DataLoader worker seeding apply."""
import math
import numbers
from collections.abc import Sequence

import glasstorch
from glasstorch import nn

from .._pil import is_pil
from . import functional as F
from .functional import InterpolationMode, _interp, _setup_size

__all__ = [
    "Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize",
    "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "FiveCrop", "TenCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomAffine",
    "RandomPerspective", "ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur", "Pad",
    "Lambda", "RandomApply", "RandomChoice", "RandomOrder", "RandomErasing", "RandomTransforms",
    "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
    "RandomAutocontrast", "RandomEqualize", "InterpolationMode",
]


def _uniform(a, b):
    return float(glasstorch.empty(1).uniform_(a, b).item())


def _randint(low, high):
    return int(glasstorch.randint(low, high, size=(1,)).item())


def _coin(p):
    return float(glasstorch.rand(1).item()) < p


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class ToTensor:
    """PIL image / HWC ndarray -> CHW float tensor in [0, 1] (for 8-bit data)."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image -> CHW tensor of the same dtype (no scaling)."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ToPILImage:
    """Tensor / ndarray -> PIL image."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{type(self).__name__}(mode={self.mode})"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to ``dtype`` and rescale its values."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """Normalise each channel: ``(x - mean[c]) / std[c]``."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def extra_repr(self):
        return f"mean={self.mean}, std={self.std}"


class Resize(nn.Module):
    """Resize to ``size`` (an int resizes the shorter edge)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = _interp(interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def extra_repr(self):
        return f"size={self.size}, interpolation={self.interpolation.value}"


class CenterCrop(nn.Module):
    """Crop the centre."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size)

    def forward(self, img):
        return F.center_crop(img, self.size)

    def extra_repr(self):
        return f"size={self.size}"


class RandomCrop(nn.Module):
    """Crop at a random location, optionally padding first."""

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size)
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = F.get_dimensions(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = F.pad(img, [tw - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = F.pad(img, [0, th - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def extra_repr(self):
        return f"size={self.size}, padding={self.padding}"


class RandomResizedCrop(nn.Module):
    """Crop a random area/aspect-ratio region and resize it to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            import warnings
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.scale, self.ratio, self.antialias = scale, ratio, antialias
        self.interpolation = _interp(interpolation)

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        in_ratio = width / height
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def extra_repr(self):
        return f"size={self.size}, scale={self.scale}, ratio={self.ratio}"


class FiveCrop(nn.Module):
    """Four corners and the centre."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size)

    def forward(self, img):
        return F.five_crop(img, self.size)


class TenCrop(nn.Module):
    """Five crops plus those of the flipped image."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size, self.vertical_flip = _setup_size(size), vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)


class RandomHorizontalFlip(nn.Module):
    """Flip left-right with probability ``p``."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if _coin(self.p) else img

    def extra_repr(self):
        return f"p={self.p}"


class RandomVerticalFlip(RandomHorizontalFlip):
    """Flip top-bottom with probability ``p``."""

    def forward(self, img):
        return F.vflip(img) if _coin(self.p) else img


def _range(value, name, center=0.0, bound=(0, float("inf")), clip_first_on_zero=True):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, but got {value}.")
    if value[0] == value[1] == center:
        return None
    return tuple(value)


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue, applied in random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = _range(brightness, "brightness", 1.0)
        self.contrast = _range(contrast, "contrast", 1.0)
        self.saturation = _range(saturation, "saturation", 1.0)
        self.hue = _range(hue, "hue", 0.0, (-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        order = glasstorch.randperm(4)
        b = None if brightness is None else _uniform(*brightness)
        c = None if contrast is None else _uniform(*contrast)
        s = None if saturation is None else _uniform(*saturation)
        h = None if hue is None else _uniform(*hue)
        return order, b, c, s, h

    def forward(self, img):
        order, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation,
                                            self.hue)
        for fn_id in order.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img


class Grayscale(nn.Module):
    """Convert to greyscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(nn.Module):
    """Greyscale (keeping the channel count) with probability ``p``."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        c = F.get_image_num_channels(img)
        return F.rgb_to_grayscale(img, c) if _coin(self.p) else img


def _degrees(degrees, name="degrees"):
    if isinstance(degrees, numbers.Number):
        if degrees < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        return [-float(degrees), float(degrees)]
    if len(degrees) != 2:
        raise ValueError(f"If {name} is a sequence, it must be of len 2.")
    return [float(d) for d in degrees]


class RandomRotation(nn.Module):
    """Rotate by an angle drawn uniformly from ``degrees``."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _degrees(degrees)
        self.interpolation = _interp(interpolation)
        self.expand, self.center, self.fill = expand, center, fill

    @staticmethod
    def get_params(degrees):
        return _uniform(float(degrees[0]), float(degrees[1]))

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class RandomAffine(nn.Module):
    """Random rotation, translation, scale and shear."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        self.degrees = _degrees(degrees)
        if translate is not None:
            if any(not 0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        if scale is not None and any(s <= 0 for s in scale):
            raise ValueError("scale values should be positive")
        if shear is not None:
            shear = _degrees(shear, "shear") if isinstance(shear, numbers.Number) or \
                len(shear) == 2 else [float(s) for s in shear]
            if len(shear) not in (2, 4):
                raise ValueError("shear should be a sequence of length 2 or 4")
        self.translate, self.scale, self.shear = translate, scale, shear
        self.interpolation = _interp(interpolation)
        self.fill, self.center = fill, center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        angle = _uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_uniform(-max_dx, max_dx)))
            ty = int(round(_uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = 1.0 if scale_ranges is None else _uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        w, h = F.get_image_size(img)
        angle, translations, scale, shear = self.get_params(
            self.degrees, self.translate, self.scale, self.shear, [w, h])
        return F.affine(img, angle, list(translations), scale, list(shear),
                        self.interpolation, self.fill, self.center)


class RandomPerspective(nn.Module):
    """Random perspective warp with probability ``p``."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__()
        self.distortion_scale, self.p = distortion_scale, p
        self.interpolation, self.fill = _interp(interpolation), fill

    @staticmethod
    def get_params(width, height, distortion_scale):
        hh, hw = height // 2, width // 2
        dx, dy = int(distortion_scale * hw), int(distortion_scale * hh)
        topleft = [_randint(0, dx + 1), _randint(0, dy + 1)]
        topright = [_randint(width - dx - 1, width), _randint(0, dy + 1)]
        botright = [_randint(width - dx - 1, width), _randint(height - dy - 1, height)]
        botleft = [_randint(0, dx + 1), _randint(height - dy - 1, height)]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [topleft, topright, botright, botleft]

    def forward(self, img):
        if _coin(self.p):
            w, h = F.get_image_size(img)
            start, end = self.get_params(w, h, self.distortion_scale)
            return F.perspective(img, start, end, self.interpolation, self.fill)
        return img


class GaussianBlur(nn.Module):
    """Gaussian blur with sigma drawn uniformly from ``sigma``."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "kernel_size")
        for k in self.kernel_size:
            if k <= 0 or k % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif not (isinstance(sigma, Sequence) and len(sigma) == 2
                  and 0.0 < sigma[0] <= sigma[1]):
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return _uniform(sigma_min, sigma_max)

    def forward(self, img):
        s = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [s, s])


class Pad(nn.Module):
    """Pad the borders."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or "
                             "symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Lambda:
    """Apply a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class RandomTransforms:
    """Base of RandomChoice / RandomOrder."""

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms


class RandomApply(nn.Module):
    """Apply all ``transforms`` with probability ``p``."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if not _coin(self.p):
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one transform picked at random (weights ``p``)."""

    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != "
                             f"{len(transforms)}")
        self.p = p

    def __call__(self, *args):
        weights = glasstorch.tensor(self.p if self.p is not None
                                    else [1.0] * len(self.transforms))
        idx = int(glasstorch.multinomial(weights, 1).item())
        return self.transforms[idx](*args)


class RandomOrder(RandomTransforms):
    """Apply the transforms in a random order."""

    def __call__(self, img):
        for i in glasstorch.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img


class RandomErasing(nn.Module):
    """Erase a random rectangle of a tensor image with probability ``p``."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            import warnings
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect)))
            w = int(round(math.sqrt(erase_area / aspect)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = glasstorch.empty((c, h, w), dtype=glasstorch.float32).normal_()
            else:
                v = glasstorch.tensor(value)[:, None, None]
            i = _randint(0, img_h - h + 1)
            j = _randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if not _coin(self.p):
            return img
        if isinstance(self.value, (int, float)):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = list(self.value)
        if value is not None and len(value) not in (1, img.shape[-3]):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{img.shape[-3]} (number of input channels)")
        x, y, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        return F.erase(img, x, y, h, w, v.to(img.dtype), self.inplace)


class _RandomColorOp(nn.Module):
    """Apply one colour operation with probability ``p``. The tensor kernels accept uint8 and
    float images alike, as torchvision.transforms.v2 does (v1 takes uint8 only for Posterize
    and Equalize)."""

    _args = ()  # the constructor arguments shown by repr, before p

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return self._op(img) if _coin(self.p) else img

    def __repr__(self):
        args = "".join(f"{name}={getattr(self, name)}," for name in self._args)
        return f"{type(self).__name__}({args}p={self.p})"


class RandomInvert(_RandomColorOp):
    """Invert the colours with probability ``p``."""

    def _op(self, img):
        return F.invert(img)


class RandomPosterize(_RandomColorOp):
    """Keep ``bits`` bits per channel with probability ``p``."""

    _args = ("bits",)

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _op(self, img):
        return F.posterize(img, self.bits) if is_pil(img) else F._posterize_tensor(img, self.bits)


class RandomSolarize(_RandomColorOp):
    """Invert the pixels at or above ``threshold`` with probability ``p``."""

    _args = ("threshold",)

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _op(self, img):
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomColorOp):
    """Adjust the sharpness by ``sharpness_factor`` with probability ``p``."""

    _args = ("sharpness_factor",)

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _op(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)


class RandomAutocontrast(_RandomColorOp):
    """Stretch each channel to the full range with probability ``p``."""

    def _op(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomColorOp):
    """Histogram-equalise with probability ``p``."""

    def _op(self, img):
        return F.equalize(img) if is_pil(img) else F._equalize_tensor(img)
