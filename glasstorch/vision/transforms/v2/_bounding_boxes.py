"""Bounding-box kernels of transforms.v2.functional, on plain ``[..., 4]`` tensors.

The arithmetic follows torchvision's: integer boxes convert through float32 and truncate back,
geometric warps map the four corners and take their min/max, and every kernel that can push a
box off the canvas clamps it there unless ``clamping_mode`` is None.
"""
import math

import numpy as np

import glasstorch

from ...tv_tensors import BoundingBoxFormat
from .. import functional as _v1

XYXY, XYWH, CXCYWH = BoundingBoxFormat.XYXY, BoundingBoxFormat.XYWH, BoundingBoxFormat.CXCYWH

__all__ = ["convert_bounding_box_format_tensor", "clamp_bounding_boxes_tensor",
           "horizontal_flip_bounding_boxes", "vertical_flip_bounding_boxes",
           "resize_bounding_boxes", "crop_bounding_boxes", "center_crop_bounding_boxes",
           "resized_crop_bounding_boxes", "pad_bounding_boxes", "affine_bounding_boxes",
           "rotate_bounding_boxes", "perspective_bounding_boxes", "sanitize_mask"]


def as_format(fmt):
    """A BoundingBoxFormat from itself or its name (any case)."""
    return BoundingBoxFormat[fmt.upper()] if isinstance(fmt, str) else fmt


def _halve(t):
    return t / 2 if t.is_floating_point() else t.div(2, rounding_mode="floor")


def _xywh_to_xyxy(b):
    return glasstorch.cat([b[..., :2], b[..., :2] + b[..., 2:]], -1)


def _xyxy_to_xywh(b):
    return glasstorch.cat([b[..., :2], b[..., 2:] - b[..., :2]], -1)


def _xywh_to_cxcywh(b):
    return glasstorch.cat([b[..., :2] + _halve(b[..., 2:]), b[..., 2:]], -1)


def _xyxy_to_cxcywh(b):
    wh = b[..., 2:] - b[..., :2]
    return glasstorch.cat([_halve(b[..., :2] * 2 + wh), wh], -1)


def _cxcywh_corner(b):
    # the top-left corner in float (integer boxes too), and the float boxes
    f = b if b.is_floating_point() else b.float()
    return f[..., :2] - f[..., 2:] / 2, f


def _cxcywh_to_xyxy(b):
    xy1, f = _cxcywh_corner(b)
    return glasstorch.cat([xy1, xy1 + f[..., 2:]], -1).to(b.dtype)


def _cxcywh_to_xywh(b):
    xy1, f = _cxcywh_corner(b)
    if b.is_floating_point():
        return glasstorch.cat([xy1, b[..., 2:]], -1)
    # integer sizes are taken between the truncated corners (as going through XYXY would)
    xy2 = (xy1 + f[..., 2:]).to(b.dtype)
    xy1 = xy1.to(b.dtype)
    return glasstorch.cat([xy1, xy2 - xy1], -1)


_TO_XYXY = {XYXY: lambda b: b, XYWH: _xywh_to_xyxy, CXCYWH: _cxcywh_to_xyxy}
_FROM_XYXY = {XYXY: lambda b: b, XYWH: _xyxy_to_xywh, CXCYWH: _xyxy_to_cxcywh}


def convert_bounding_box_format_tensor(boxes, old_format, new_format):
    """``boxes`` (a plain tensor) converted from ``old_format`` to ``new_format``."""
    old_format, new_format = as_format(old_format), as_format(new_format)
    if old_format == new_format:
        return boxes
    if (old_format, new_format) == (XYWH, CXCYWH):
        return _xywh_to_cxcywh(boxes)
    if (old_format, new_format) == (CXCYWH, XYWH):
        return _cxcywh_to_xywh(boxes)
    return _FROM_XYXY[new_format](_TO_XYXY[old_format](boxes))


def _clamp_xyxy(xyxy, canvas_size):
    h, w = canvas_size
    x = xyxy[..., 0::2].clamp(min=0, max=w)
    y = xyxy[..., 1::2].clamp(min=0, max=h)
    return glasstorch.stack([x, y], -1).reshape(xyxy.shape)


def clamp_bounding_boxes_tensor(boxes, format, canvas_size, clamping_mode="soft"):
    """Clamp ``boxes`` to the canvas ``(height, width)`` (a copy when ``clamping_mode`` is
    None). "soft" and "hard" agree for these axis-aligned formats."""
    if clamping_mode is None:
        return boxes.clone()
    format = as_format(format)
    f = boxes if boxes.is_floating_point() else boxes.float()
    xyxy = _clamp_xyxy(convert_bounding_box_format_tensor(f, format, XYXY), canvas_size)
    return convert_bounding_box_format_tensor(xyxy, XYXY, format).to(boxes.dtype)


def horizontal_flip_bounding_boxes(bounding_boxes, format, canvas_size):
    """Mirror the boxes across the vertical centre line of the canvas."""
    format, w = as_format(format), canvas_size[1]
    b = bounding_boxes.reshape(-1, 4)
    x1, y1, x2, y2 = b.unbind(-1)
    if format == XYXY:
        x1, x2 = w - x2, w - x1
    elif format == XYWH:
        x1 = w - (x1 + x2)
    else:
        x1 = w - x1
    return glasstorch.stack([x1, y1, x2, y2], -1).to(b.dtype).reshape(bounding_boxes.shape)


def vertical_flip_bounding_boxes(bounding_boxes, format, canvas_size):
    """Mirror the boxes across the horizontal centre line of the canvas."""
    format, h = as_format(format), canvas_size[0]
    b = bounding_boxes.reshape(-1, 4)
    x1, y1, x2, y2 = b.unbind(-1)
    if format == XYXY:
        y1, y2 = h - y2, h - y1
    elif format == XYWH:
        y1 = h - (y1 + y2)
    else:
        y1 = h - y1
    return glasstorch.stack([x1, y1, x2, y2], -1).to(b.dtype).reshape(bounding_boxes.shape)


def resized_output_size(canvas_size, size, max_size=None):
    """``[new_h, new_w]`` for v2's resize: ``size`` (h, w), a shorter edge (int or [int]), or
    None with ``max_size`` bounding the longer edge."""
    h, w = canvas_size
    if isinstance(size, int):
        size = [size]
    if size is None:
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got "
                             f"{max_size} instead.")
        short, long = (w, h) if w <= h else (h, w)
        new_short = int(max_size * short / long)
        return [max_size, new_short] if w <= h else [new_short, max_size]
    if max_size is not None and len(size) != 1:
        raise ValueError("max_size should only be passed if size is None or specifies the "
                         "length of the smaller edge, i.e. size should be an int or a sequence "
                         "of length 1 in torchscript mode.")
    return list(_v1._output_size(h, w, size, max_size))


def resize_bounding_boxes(bounding_boxes, canvas_size, size, max_size=None, format=XYXY,
                          clamping_mode="soft"):
    """Scale the boxes with the canvas; returns ``(boxes, new_canvas_size)``."""
    new_h, new_w = resized_output_size(canvas_size, size, max_size)
    if (new_h, new_w) == tuple(canvas_size):
        return bounding_boxes, canvas_size
    w_ratio, h_ratio = new_w / canvas_size[1], new_h / canvas_size[0]
    # the ratios are float32 (torchvision's tensor of them), whatever the boxes' dtype
    ratios = glasstorch.tensor([w_ratio, h_ratio, w_ratio, h_ratio])
    return bounding_boxes.mul(ratios).to(bounding_boxes.dtype), (new_h, new_w)


def _shift(bounding_boxes, format, dx, dy):
    # add (dx, dy) to the position columns (both corners for XYXY)
    step = [dx, dy, dx, dy] if as_format(format) == XYXY else [dx, dy, 0, 0]
    return bounding_boxes + glasstorch.tensor(step, dtype=bounding_boxes.dtype)


def crop_bounding_boxes(bounding_boxes, format, top, left, height, width, clamping_mode="soft"):
    """Boxes relative to the crop at (top, left), clamped to it; returns
    ``(boxes, (height, width))``."""
    canvas_size = (height, width)
    shifted = _shift(bounding_boxes, format, -left, -top)
    return clamp_bounding_boxes_tensor(shifted, format, canvas_size, clamping_mode), canvas_size


def center_crop_bounding_boxes(bounding_boxes, format, canvas_size, output_size,
                               clamping_mode="soft"):
    """Boxes after ``center_crop``; returns ``(boxes, new_canvas_size)``."""
    crop_h, crop_w = _v1._setup_size(output_size)
    top = int(round((canvas_size[0] - crop_h) / 2.0))
    left = int(round((canvas_size[1] - crop_w) / 2.0))
    return crop_bounding_boxes(bounding_boxes, format, top, left, crop_h, crop_w, clamping_mode)


def resized_crop_bounding_boxes(bounding_boxes, format, top, left, height, width, size,
                                clamping_mode="soft"):
    """Boxes after ``resized_crop``; returns ``(boxes, new_canvas_size)``."""
    boxes, canvas_size = crop_bounding_boxes(bounding_boxes, format, top, left, height, width,
                                             clamping_mode)
    return resize_bounding_boxes(boxes, canvas_size, size, format=format,
                                 clamping_mode=clamping_mode)


def parse_padding(padding):
    """``[left, top, right, bottom]`` from an int or a 1-, 2- or 4-element sequence."""
    if isinstance(padding, int):
        return [padding] * 4
    if not isinstance(padding, (list, tuple)):
        raise TypeError(f"`padding` should be an integer or tuple or list of integers, but got "
                        f"{padding}")
    if len(padding) not in (1, 2, 4):
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple or list. Found "
                         f"{len(padding)}")
    return list(_v1._parse_padding(padding))


def pad_bounding_boxes(bounding_boxes, format, canvas_size, padding, padding_mode="constant",
                       clamping_mode="soft"):
    """Boxes on the padded canvas; returns ``(boxes, new_canvas_size)``."""
    if padding_mode != "constant":
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with bounding boxes")
    left, top, right, bottom = parse_padding(padding)
    canvas_size = (canvas_size[0] + top + bottom, canvas_size[1] + left + right)
    shifted = _shift(bounding_boxes, format, left, top)
    return clamp_bounding_boxes_tensor(shifted, format, canvas_size, clamping_mode), canvas_size


def _corners(xyxy):
    # [N, 4] boxes -> [N * 4, 2] corners: top-left, top-right, bottom-right, bottom-left
    return xyxy[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 2)


def _enclosing(points):
    # [N * 4, 2] mapped corners -> [N, 4] XYXY boxes enclosing them
    points = points.reshape(-1, 4, 2)
    return glasstorch.cat([points.amin(1), points.amax(1)], 1)


def _map(points, rows):
    # [N, 2] points -> [N, len(rows)]: x * r0 + y * r1 + r2 per row, in the points' dtype and
    # in the order torch's matmul sums them (so the results agree to the last bit)
    x, y = points[:, 0:1], points[:, 1:2]
    return x * rows[:, 0] + y * rows[:, 1] + rows[:, 2]


def _finish(xyxy, format, canvas_size, clamping_mode, like):
    # clamp, back to the boxes' format, shape and dtype
    xyxy = clamp_bounding_boxes_tensor(xyxy, XYXY, canvas_size, clamping_mode)
    out = convert_bounding_box_format_tensor(xyxy, XYXY, format)
    return out.reshape(like.shape).to(like.dtype)


def forward_affine_matrix(center, angle, translate, scale, shear):
    """The 2x3 affine matrix (row-major list) taking input pixels to output pixels: rotation
    ``angle`` (degrees, clockwise on screen), ``scale``, ``shear`` (x, y degrees) about
    ``center``, then ``translate``."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    a = math.cos(rot - sy) / math.cos(sy)
    b = -(a * math.tan(sx) + math.sin(rot))
    c = math.sin(rot - sy) / math.cos(sy)
    d = math.cos(rot) - c * math.tan(sx)
    m = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
    m[2] += cx + translate[0] - m[0] * cx - m[1] * cy
    m[5] += cy + translate[1] - m[3] * cx - m[4] * cy
    return m


def affine_output_size(matrix, w, h):
    """``(width, height)`` of the canvas holding the whole warped image (``expand=True``), from
    the inverse matrix in image-centred coordinates, in float32 as torchvision."""
    f32 = np.float32
    half = np.array([0.5 * w, 0.5 * h], f32)
    pts = np.array([[-half[0], -half[1], 1.0], [-half[0], half[1], 1.0],
                    [half[0], half[1], 1.0], [half[0], -half[1], 1.0]], f32)
    new = pts @ np.asarray(matrix, f32).reshape(2, 3).T + half
    # truncating to 1e-4 first keeps a 1e-15 overshoot from rounding a side up by a pixel
    tol = f32(1e-4)
    hi = np.ceil(np.trunc(new.max(0) * f32(1.0 / tol)) * tol)
    lo = np.floor(np.trunc(new.min(0) * f32(1.0 / tol)) * tol)
    size = hi - lo
    return int(size[0]), int(size[1])


def _parse_affine_args(translate, scale, shear, center):
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    shear = [shear, 0.0] if isinstance(shear, (int, float)) else list(shear)
    if len(shear) == 1:
        shear = shear * 2
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    return list(translate), shear, None if center is None else [float(c) for c in center]


def _affine_with_expand(bounding_boxes, format, canvas_size, angle, translate, scale, shear,
                        center, expand, clamping_mode):
    if bounding_boxes.numel() == 0:
        return bounding_boxes, canvas_size
    format = as_format(format)
    translate, shear, center = _parse_affine_args(translate, scale, shear, center)
    h, w = canvas_size
    center = [w * 0.5, h * 0.5] if center is None else center
    f = bounding_boxes if bounding_boxes.is_floating_point() else bounding_boxes.float()
    xyxy = convert_bounding_box_format_tensor(f, format, XYXY).reshape(-1, 4)
    matrix = glasstorch.tensor(forward_affine_matrix(center, angle, translate, scale, shear),
                               dtype=f.dtype).reshape(2, 3)
    out = _enclosing(_map(_corners(xyxy), matrix))
    if expand:
        frame = glasstorch.tensor([[0.0, 0.0], [0.0, float(h)], [float(w), float(h)],
                                   [float(w), 0.0]], dtype=f.dtype)
        out = out - _map(frame, matrix).amin(0, keepdim=True).repeat(1, 2)
        inverse = _v1._inverse_affine_matrix(center, angle, translate, scale, shear)
        new_w, new_h = affine_output_size(inverse, w, h)
        canvas_size = (new_h, new_w)
    return _finish(out, format, canvas_size, clamping_mode, bounding_boxes), canvas_size


def affine_bounding_boxes(bounding_boxes, format, canvas_size, angle, translate, scale, shear,
                          center=None, clamping_mode="soft"):
    """The boxes enclosing the affinely warped boxes (see ``affine``), clamped."""
    return _affine_with_expand(bounding_boxes, format, canvas_size, angle, translate, scale,
                               shear, center, False, clamping_mode)[0]


def rotate_bounding_boxes(bounding_boxes, format, canvas_size, angle, expand=False, center=None,
                          clamping_mode="soft"):
    """The boxes enclosing the rotated boxes (counter-clockwise ``angle`` degrees); returns
    ``(boxes, canvas_size)``, the canvas growing when ``expand``."""
    return _affine_with_expand(bounding_boxes, format, canvas_size, -angle, [0.0, 0.0], 1.0,
                               [0.0, 0.0], center, expand, clamping_mode)


def _inverse_perspective(c):
    # coefficients of the inverse homography (c maps output pixels to input pixels)
    denom = c[0] * c[4] - c[1] * c[3]
    if denom == 0:
        raise RuntimeError(f"Provided perspective_coeffs {c} can not be inverted to transform "
                           f"bounding boxes. Denominator is zero, denom={denom}")
    return [(c[4] - c[5] * c[7]) / denom, (-c[1] + c[2] * c[7]) / denom,
            (c[1] * c[5] - c[2] * c[4]) / denom, (-c[3] + c[5] * c[6]) / denom,
            (c[0] - c[2] * c[6]) / denom, (-c[0] * c[5] + c[2] * c[3]) / denom,
            (-c[4] * c[6] + c[3] * c[7]) / denom, (-c[0] * c[7] + c[1] * c[6]) / denom]


def perspective_coefficients(startpoints, endpoints, coefficients):
    """The 8 coefficients, given directly or from the point pairs."""
    if coefficients is not None:
        if startpoints is not None and endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be "
                             "defined concurrently.")
        if len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
        return list(coefficients)
    if startpoints is None or endpoints is None:
        raise ValueError("Either the startpoints/endpoints or the coefficients must have non "
                         "`None` values.")
    return _v1._perspective_coeffs(startpoints, endpoints)


def perspective_bounding_boxes(bounding_boxes, format, canvas_size, startpoints, endpoints,
                               coefficients=None, clamping_mode="soft"):
    """The boxes enclosing the perspective-warped boxes, clamped."""
    if bounding_boxes.numel() == 0:
        return bounding_boxes
    format = as_format(format)
    inv = _inverse_perspective(perspective_coefficients(startpoints, endpoints, coefficients))
    xyxy = convert_bounding_box_format_tensor(bounding_boxes, format, XYXY).reshape(-1, 4)
    dtype = xyxy.dtype if xyxy.is_floating_point() else glasstorch.float32
    numer = glasstorch.tensor([inv[0:3], inv[3:6]], dtype=dtype)
    denom = glasstorch.tensor([inv[6:8] + [1.0]] * 2, dtype=dtype)
    points = _corners(xyxy).to(dtype)
    out = _enclosing(_map(points, numer) / _map(points, denom))
    return _finish(out, format, canvas_size, clamping_mode, bounding_boxes)


def sanitize_mask(bounding_boxes, format, canvas_size, min_size=1.0, min_area=1.0):
    """Which boxes are at least ``min_size`` wide and tall, ``min_area`` large and inside the
    canvas (a bool tensor)."""
    xyxy = convert_bounding_box_format_tensor(bounding_boxes, format, XYXY)
    ws, hs = xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]
    h, w = canvas_size
    valid = (ws >= min_size) & (hs >= min_size) & (xyxy >= 0).all(dim=-1) & \
        (ws * hs >= min_area)
    valid &= (xyxy[:, 0] <= w) & (xyxy[:, 2] <= w)
    return valid & (xyxy[:, 1] <= h) & (xyxy[:, 3] <= h)
