"""Box operations: box_area, box_iou, nms, batched_nms, box_convert."""
import numpy as np

import glasstorch

__all__ = ["box_area", "box_iou", "nms", "batched_nms", "box_convert", "clip_boxes_to_image",
           "remove_small_boxes"]


def _check_boxes(boxes, name="boxes"):
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise ValueError(f"{name} should be a (N, 4) tensor in (x1, y1, x2, y2) format, got "
                         f"shape {tuple(boxes.shape)}")


def box_area(boxes):
    """Areas of (x1, y1, x2, y2) boxes."""
    _check_boxes(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    """Pairwise intersection-over-union, ``N x M``."""
    _check_boxes(boxes1, "boxes1")
    _check_boxes(boxes2, "boxes2")
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = glasstorch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = glasstorch.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2[None, :] - inter)


def nms(boxes, scores, iou_threshold):
    """Indices (int64, by decreasing score) of the boxes kept by greedy non-maximum suppression:
    a box is dropped when its IoU with a kept higher-scoring box exceeds ``iou_threshold``."""
    _check_boxes(boxes)
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError(f"scores should be a 1-D tensor with {boxes.shape[0]} elements, got "
                         f"shape {tuple(scores.shape)}")
    b = boxes.detach().numpy().astype(np.float64)
    s = scores.detach().numpy()
    order = np.argsort(-s, kind="stable")
    areas = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    for idx in order:
        if suppressed[idx]:
            continue
        keep.append(idx)
        xx1 = np.maximum(b[idx, 0], b[:, 0])
        yy1 = np.maximum(b[idx, 1], b[:, 1])
        xx2 = np.minimum(b[idx, 2], b[:, 2])
        yy2 = np.minimum(b[idx, 3], b[:, 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[idx] + areas - inter)
        suppressed |= iou > iou_threshold
    return glasstorch.tensor(np.asarray(keep, dtype=np.int64))


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS done independently per category ``idxs``."""
    if boxes.numel() == 0:
        return glasstorch.empty((0,), dtype=glasstorch.int64)
    offsets = idxs.to(boxes.dtype) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def box_convert(boxes, in_fmt, out_fmt):
    """Convert between 'xyxy', 'xywh' and 'cxcywh'."""
    fmts = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in fmts or out_fmt not in fmts:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return glasstorch.stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes, size):
    """Clip xyxy boxes to an image of ``size`` (height, width)."""
    h, w = size
    x = boxes[..., 0::2].clamp(min=0, max=w)
    y = boxes[..., 1::2].clamp(min=0, max=h)
    return glasstorch.stack((x, y), dim=-1).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """Indices of boxes whose both sides are at least ``min_size``."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return ((ws >= min_size) & (hs >= min_size)).nonzero().reshape(-1)
