"""roi_align (Mask R-CNN): bilinear sampling averaged over each output bin."""
import math

import numpy as np

import glasstorch

__all__ = ["roi_align", "RoIAlign"]


def _rois(boxes):
    if isinstance(boxes, (list, tuple)):
        parts = []
        for i, b in enumerate(boxes):
            if b.dim() != 2 or b.shape[1] != 4:
                raise ValueError("The shape of the tensor in the boxes list is not correct as "
                                 "List[Tensor[L, 4]]")
            arr = b.detach().numpy().astype(np.float64)
            parts.append(np.concatenate([np.full((len(arr), 1), i), arr], axis=1))
        return np.concatenate(parts) if parts else np.zeros((0, 5))
    if boxes.dim() != 2 or boxes.shape[1] != 5:
        raise ValueError("The boxes tensor shape is not correct as Tensor[K, 5]")
    return boxes.detach().numpy().astype(np.float64)


def _axis(start, size, bins, grid, limit):
    # sample coordinates (bins x grid) along one axis, clamped as in Detectron's kernel
    pos = start + np.arange(bins)[:, None] * (size / bins) + \
        (np.arange(grid)[None, :] + 0.5) * (size / bins / grid)
    valid = (pos >= -1.0) & (pos <= limit)
    pos = np.maximum(pos, 0.0)
    low = np.floor(pos).astype(np.int64)
    edge = low >= limit - 1
    low = np.where(edge, limit - 1, low)
    high = np.where(edge, limit - 1, low + 1)
    pos = np.where(edge, low.astype(np.float64), pos)
    frac = pos - low
    return low, high, frac, valid


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """Pool ``input`` (N, C, H, W) over ``boxes`` (Tensor[K, 5] of (batch, x1, y1, x2, y2) or a
    list of Tensor[L, 4] per image) into (K, C, *output_size)."""
    if input.dim() != 4:
        raise ValueError(f"roi_align expects a 4-D input (N, C, H, W), got {input.dim()} dims")
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else output_size
    rois = _rois(boxes)
    _, c, h, w = input.shape
    offset = 0.5 if aligned else 0.0
    outs = []
    for roi in rois:
        b = int(roi[0])
        x1, y1 = roi[1] * spatial_scale - offset, roi[2] * spatial_scale - offset
        rw = roi[3] * spatial_scale - offset - x1
        rh = roi[4] * spatial_scale - offset - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw))
        count = max(gh * gw, 1)
        if gh == 0 or gw == 0:
            outs.append(glasstorch.zeros((c, ph, pw), dtype=input.dtype))
            continue
        yl, yh, fy, vy = _axis(y1, rh, ph, gh, h)
        xl, xh, fx, vx = _axis(x1, rw, pw, gw, w)
        # broadcast to (ph, gh, pw, gw)
        yl, yh, fy, vy = (a[:, :, None, None] for a in (yl, yh, fy, vy))
        xl, xh, fx, vx = (a[None, None] for a in (xl, xh, fx, vx))
        valid = vy & vx
        feat = input[b]
        total = 0
        for yi, wy in ((yl, 1.0 - fy), (yh, fy)):
            for xi, wx in ((xl, 1.0 - fx), (xh, fx)):
                wgt = glasstorch.from_numpy((wy * wx * valid).astype(input.dtype.np))
                yy = glasstorch.from_numpy(np.broadcast_to(yi, valid.shape).copy())
                xx = glasstorch.from_numpy(np.broadcast_to(xi, valid.shape).copy())
                total = total + feat[:, yy, xx] * wgt
        outs.append(total.sum(dim=(2, 4)) / count)
    if not outs:
        return glasstorch.zeros((0, c, ph, pw), dtype=input.dtype)
    return glasstorch.stack(outs, dim=0)


class RoIAlign(glasstorch.nn.Module):
    """Module form of :func:`roi_align`."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size, self.spatial_scale = output_size, spatial_scale
        self.sampling_ratio, self.aligned = sampling_ratio, aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)
