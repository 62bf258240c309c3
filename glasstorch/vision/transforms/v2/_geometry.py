"""Geometric v2 transforms: images, videos, masks and bounding boxes of one sample move
together, with one draw of the random parameters per call."""
import math
import numbers
import warnings
from collections.abc import Sequence

import glasstorch

from ..._pil import is_pil
from ...ops import box_iou
from ...tv_tensors import BoundingBoxes, Image
from ..functional import _interp, _setup_size
from ..transforms import _degrees, _randint, _uniform
from . import functional as F
from ._bounding_boxes import (
    convert_bounding_box_format_tensor,
    parse_padding,
    perspective_coefficients,
)
from ._transform import (
    Transform,
    _RandomApplyTransform,
    get_bounding_boxes,
    get_fill,
    query_size,
    setup_fill_arg,
)
from ._utils import as_plain, has_all, has_any, is_pure_tensor

__all__ = ["RandomHorizontalFlip", "RandomVerticalFlip", "Resize", "CenterCrop", "RandomCrop",
           "RandomResizedCrop", "Pad", "RandomZoomOut", "RandomRotation", "RandomAffine",
           "RandomPerspective", "ScaleJitter", "RandomShortestSize", "RandomResize",
           "RandomIoUCrop"]


def _checked(interpolation):
    # kept as given (torchvision's reprs show it so), validated now rather than at first use
    _interp(interpolation)
    return interpolation


class RandomHorizontalFlip(_RandomApplyTransform):
    """Flip left-right with probability ``p`` (boxes and masks too)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.horizontal_flip, inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    """Flip top-bottom with probability ``p`` (boxes and masks too)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.vertical_flip, inpt)


class Resize(Transform):
    """Resize to ``size`` (h, w), or the shorter edge to ``size`` (an int or [int]); with
    ``size=None`` the longer edge becomes ``max_size``. Masks use nearest sampling."""

    def __init__(self, size, interpolation="bilinear", max_size=None,
                 antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in (1, 2):
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got "
                                 f"{max_size} instead.")
        else:
            raise ValueError("size can be an integer, a sequence of one or two integers, or None,"
                             f" but got {size} instead.")
        self.size, self.interpolation = size, _checked(interpolation)
        self.max_size, self.antialias = max_size, antialias

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, self.size, interpolation=self.interpolation,
                                 max_size=self.max_size, antialias=self.antialias)


class CenterCrop(Transform):
    """Crop the centre ``size`` (h, w) region."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size)

    def transform(self, inpt, params):
        return self._call_kernel(F.center_crop, inpt, output_size=self.size)


def _check_padding(padding):
    message = f"Padding must be an int or a 1, 2, or 4 element of tuple or list, got {padding}."
    if isinstance(padding, (tuple, list)):
        if len(padding) not in (1, 2, 4) or not all(isinstance(p, int) for p in padding):
            raise ValueError(message)
    elif not isinstance(padding, int):
        raise ValueError(message)


def _check_padding_mode(padding_mode):
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


class RandomCrop(Transform):
    """Crop a random ``size`` (h, w) region, after optional ``padding`` (and, with
    ``pad_if_needed``, padding on both sides of a dimension smaller than the crop)."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size)
        if pad_if_needed or padding is not None:
            if padding is not None:
                _check_padding(padding)
            _check_padding_mode(padding_mode)
        # stored as [left, right, top, bottom]
        self.padding = None
        if padding:
            left, top, right, bottom = parse_padding(padding)
            self.padding = [left, right, top, bottom]
        self.pad_if_needed, self.fill, self._fill = pad_if_needed, fill, setup_fill_arg(fill)
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        left, right, top, bottom = self.padding or [0, 0, 0, 0]
        height, width = height + top + bottom, width + left + right
        crop_h, crop_w = self.size
        if self.pad_if_needed and height < crop_h:
            diff = crop_h - height
            top, bottom, height = top + diff, bottom + diff, height + 2 * diff
        if self.pad_if_needed and width < crop_w:
            diff = crop_w - width
            left, right, width = left + diff, right + diff, width + 2 * diff
        if height < crop_h or width < crop_w:
            padded = "padded " if self.padding is not None else ""
            raise ValueError(f"Required crop size {(crop_h, crop_w)} is larger than {padded}input "
                             f"image size {(height, width)}.")
        padding = [left, top, right, bottom]
        crop_top = _randint(0, height - crop_h + 1) if height > crop_h else 0
        crop_left = _randint(0, width - crop_w + 1) if width > crop_w else 0
        return {"needs_crop": height > crop_h or width > crop_w, "top": crop_top,
                "left": crop_left, "height": crop_h, "width": crop_w,
                "needs_pad": any(padding), "padding": padding}

    def transform(self, inpt, params):
        if params["needs_pad"]:
            inpt = self._call_kernel(F.pad, inpt, padding=params["padding"],
                                     fill=get_fill(self._fill, type(inpt)),
                                     padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = self._call_kernel(F.crop, inpt, params["top"], params["left"],
                                     params["height"], params["width"])
        return inpt


class RandomResizedCrop(Transform):
    """Crop a random region (area fraction in ``scale``, aspect ratio in ``ratio``) and
    resize it to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation="bilinear", antialias=True):
        super().__init__()
        self.size = _setup_size(size)
        if not isinstance(scale, Sequence) or len(scale) != 2:
            raise TypeError("Scale should be a sequence of two floats.")
        if not isinstance(ratio, Sequence) or len(ratio) != 2:
            raise TypeError("Ratio should be a sequence of two floats.")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.scale, self.ratio = scale, ratio
        self.interpolation, self.antialias = _checked(interpolation), antialias

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        area = height * width
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(self.scale[0], self.scale[1])
            aspect = math.exp(_uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return {"top": _randint(0, height - h + 1), "left": _randint(0, width - w + 1),
                        "height": h, "width": w}
        # fall back to the largest centred crop within the ratio bounds
        in_ratio = width / height
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h, w = height, int(round(height * max(self.ratio)))
        else:
            w, h = width, height
        return {"top": (height - h) // 2, "left": (width - w) // 2, "height": h, "width": w}

    def transform(self, inpt, params):
        return self._call_kernel(F.resized_crop, inpt, **params, size=self.size,
                                 interpolation=self.interpolation, antialias=self.antialias)


class Pad(Transform):
    """Pad the borders by ``padding``; ``fill`` may be a dict giving each input type its own
    (e.g. ``{tv_tensors.Mask: 255, "others": 0}``)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _check_padding(padding)
        _check_padding_mode(padding_mode)
        self.padding = padding if isinstance(padding, int) else list(padding)
        self.fill, self._fill, self.padding_mode = fill, setup_fill_arg(fill), padding_mode

    def transform(self, inpt, params):
        return self._call_kernel(F.pad, inpt, padding=self.padding,
                                 fill=get_fill(self._fill, type(inpt)),
                                 padding_mode=self.padding_mode)


class RandomZoomOut(_RandomApplyTransform):
    """Place the input at a random spot of a canvas ``side_range`` times larger (filled with
    ``fill``), with probability ``p``."""

    def __init__(self, fill=0, side_range=(1.0, 4.0), p=0.5):
        super().__init__(p=p)
        self.fill, self._fill = fill, setup_fill_arg(fill)
        if len(side_range) != 2:
            raise ValueError(f"side_range should be a sequence of length 2. Got {side_range}")
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError(f"Invalid side range provided {side_range}.")
        self.side_range = side_range

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        low, high = self.side_range
        r = low + float(glasstorch.rand(1).item()) * (high - low)
        canvas_w, canvas_h = int(width * r), int(height * r)
        rx, ry = glasstorch.rand(2).tolist()
        left, top = int((canvas_w - width) * rx), int((canvas_h - height) * ry)
        return {"padding": [left, top, canvas_w - (left + width), canvas_h - (top + height)]}

    def transform(self, inpt, params):
        return self._call_kernel(F.pad, inpt, **params, fill=get_fill(self._fill, type(inpt)))


def _check_center(center):
    if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
        raise ValueError("center should be a sequence of length 2.")


class RandomRotation(Transform):
    """Rotate by an angle drawn from ``degrees`` (boxes become the boxes enclosing their rotated
    corners; ``expand`` grows the canvas)."""

    def __init__(self, degrees, interpolation="nearest", expand=False,
                 center=None, fill=0):
        super().__init__()
        self.degrees = _degrees(degrees)
        self.interpolation, self.expand = _checked(interpolation), expand
        self.fill, self._fill = fill, setup_fill_arg(fill)
        _check_center(center)
        self.center = center

    def make_params(self, flat_inputs):
        return {"angle": _uniform(self.degrees[0], self.degrees[1])}

    def transform(self, inpt, params):
        return self._call_kernel(F.rotate, inpt, params["angle"],
                                 interpolation=self.interpolation, expand=self.expand,
                                 center=self.center, fill=get_fill(self._fill, type(inpt)))


def _shear_range(shear):
    if isinstance(shear, numbers.Number) or len(shear) == 2:
        return _degrees(shear, "shear")
    if len(shear) != 4:
        raise ValueError("If shear is a sequence, it must be of len 2 or 4.")
    return [float(s) for s in shear]


class RandomAffine(Transform):
    """Random rotation (``degrees``), translation (fractions of the size), ``scale`` and
    ``shear``, applied alike to images, masks and boxes."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation="nearest", fill=0, center=None):
        super().__init__()
        self.degrees = _degrees(degrees)
        if translate is not None:
            if len(translate) != 2:
                raise ValueError("translate should be a sequence of length 2.")
            if any(not 0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        if scale is not None:
            if len(scale) != 2:
                raise ValueError("scale should be a sequence of length 2.")
            if any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        self.translate, self.scale = translate, scale
        self.shear = None if shear is None else _shear_range(shear)
        self.interpolation = _checked(interpolation)
        self.fill, self._fill = fill, setup_fill_arg(fill)
        _check_center(center)
        self.center = center

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        angle = _uniform(self.degrees[0], self.degrees[1])
        translate = (0, 0)
        if self.translate is not None:
            max_dx, max_dy = self.translate[0] * width, self.translate[1] * height
            translate = (int(round(_uniform(-max_dx, max_dx))),
                         int(round(_uniform(-max_dy, max_dy))))
        scale = 1.0 if self.scale is None else _uniform(self.scale[0], self.scale[1])
        shear = [0.0, 0.0]
        if self.shear is not None:
            shear[0] = _uniform(self.shear[0], self.shear[1])
            if len(self.shear) == 4:
                shear[1] = _uniform(self.shear[2], self.shear[3])
        return {"angle": angle, "translate": translate, "scale": scale, "shear": tuple(shear)}

    def transform(self, inpt, params):
        return self._call_kernel(F.affine, inpt, **params, interpolation=self.interpolation,
                                 fill=get_fill(self._fill, type(inpt)), center=self.center)


class RandomPerspective(_RandomApplyTransform):
    """Random perspective warp (corners moved by up to ``distortion_scale`` of half the size)
    with probability ``p``."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation="bilinear",
                 fill=0):
        super().__init__(p=p)
        if not 0 <= distortion_scale <= 1:
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = _checked(interpolation)
        self.fill, self._fill = fill, setup_fill_arg(fill)

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        dx = int(self.distortion_scale * (width // 2))
        dy = int(self.distortion_scale * (height // 2))
        top_left = [_randint(0, dx + 1), _randint(0, dy + 1)]
        top_right = [_randint(width - dx - 1, width), _randint(0, dy + 1)]
        bottom_right = [_randint(width - dx - 1, width), _randint(height - dy - 1, height)]
        bottom_left = [_randint(0, dx + 1), _randint(height - dy - 1, height)]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        end = [top_left, top_right, bottom_right, bottom_left]
        return {"coefficients": perspective_coefficients(start, end, None)}

    def transform(self, inpt, params):
        return self._call_kernel(F.perspective, inpt, None, None,
                                 coefficients=params["coefficients"],
                                 interpolation=self.interpolation,
                                 fill=get_fill(self._fill, type(inpt)))


class _RandomSize(Transform):
    """Resize to a randomly drawn ``size`` (subclasses draw it in ``make_params``)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.resize, inpt, params["size"],
                                 interpolation=self.interpolation, antialias=self.antialias)


class ScaleJitter(_RandomSize):
    """Resize to fit ``target_size`` (w, h) times a scale drawn from ``scale_range``
    (large-scale jitter, Ghiasi et al. 2021)."""

    def __init__(self, target_size, scale_range=(0.1, 2.0), interpolation="bilinear",
                 antialias=True):
        super().__init__()
        self.target_size, self.scale_range = target_size, scale_range
        self.interpolation, self.antialias = _checked(interpolation), antialias

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        low, high = self.scale_range
        scale = low + float(glasstorch.rand(1).item()) * (high - low)
        r = min(self.target_size[1] / height, self.target_size[0] / width) * scale
        return {"size": (int(height * r), int(width * r))}


class RandomShortestSize(_RandomSize):
    """Resize the shorter edge to one of ``min_size`` (picked at random), the longer edge
    staying within ``max_size``."""

    def __init__(self, min_size, max_size=None, interpolation="bilinear", antialias=True):
        super().__init__()
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        self.interpolation, self.antialias = _checked(interpolation), antialias

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        r = self.min_size[_randint(0, len(self.min_size))] / min(height, width)
        if self.max_size is not None:
            r = min(r, self.max_size / max(height, width))
        return {"size": (int(height * r), int(width * r))}


class RandomResize(_RandomSize):
    """Resize the shorter edge to a size drawn from ``[min_size, max_size)``."""

    def __init__(self, min_size, max_size, interpolation="bilinear", antialias=True):
        super().__init__()
        self.min_size, self.max_size = min_size, max_size
        self.interpolation, self.antialias = _checked(interpolation), antialias

    def make_params(self, flat_inputs):
        return {"size": [_randint(self.min_size, self.max_size)]}


class RandomIoUCrop(Transform):
    """SSD's crop (Liu et al. 2016): a random crop whose IoU with the boxes centred in it
    reaches a threshold drawn from ``sampler_options`` (1.0 or more: keep the sample whole);
    boxes whose centre falls outside are zeroed (follow with SanitizeBoundingBoxes)."""

    def __init__(self, min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                 sampler_options=None, trials=40):
        super().__init__()
        self.min_scale, self.max_scale = min_scale, max_scale
        self.min_aspect_ratio, self.max_aspect_ratio = min_aspect_ratio, max_aspect_ratio
        self.options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] if sampler_options is None \
            else sampler_options
        self.trials = trials

    def check_inputs(self, flat_inputs):
        if not (has_all(flat_inputs, BoundingBoxes) and
                has_any(flat_inputs, is_pil, Image, is_pure_tensor)):
            raise TypeError(f"{type(self).__name__}() requires input sample to contain tensor or "
                            "PIL images and bounding boxes. Sample can also contain masks.")

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        boxes = get_bounding_boxes(flat_inputs)
        xyxy = convert_bounding_box_format_tensor(as_plain(boxes), boxes.format, "XYXY")
        cx, cy = 0.5 * (xyxy[..., 0] + xyxy[..., 2]), 0.5 * (xyxy[..., 1] + xyxy[..., 3])
        while True:
            min_overlap = self.options[_randint(0, len(self.options))]
            if min_overlap >= 1.0:
                return {}
            for _ in range(self.trials):
                crop = self._try_crop(height, width, cx, cy, xyxy, min_overlap)
                if crop is not None:
                    return crop

    def _try_crop(self, height, width, cx, cy, xyxy, min_overlap):
        scale = self.min_scale + (self.max_scale - self.min_scale) * glasstorch.rand(2)
        new_w, new_h = int(width * scale[0].item()), int(height * scale[1].item())
        if not self.min_aspect_ratio <= new_w / new_h <= self.max_aspect_ratio:
            return None
        rx, ry = glasstorch.rand(2).tolist()
        left, top = int((width - new_w) * rx), int((height - new_h) * ry)
        right, bottom = left + new_w, top + new_h
        if left == right or top == bottom:
            return None
        inside = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
        if not bool(inside.any()):
            return None
        window = glasstorch.tensor([[left, top, right, bottom]], dtype=xyxy.dtype)
        if box_iou(xyxy[inside], window).max().item() < min_overlap:
            return None
        return {"top": top, "left": left, "height": new_h, "width": new_w,
                "is_within_crop_area": inside}

    def transform(self, inpt, params):
        if not params:
            return inpt
        out = self._call_kernel(F.crop, inpt, params["top"], params["left"], params["height"],
                                params["width"])
        if isinstance(out, BoundingBoxes):
            out[~params["is_within_crop_area"]] = 0
        return out
