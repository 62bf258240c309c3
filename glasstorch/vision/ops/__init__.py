"""Detection ops (torchvision.ops): boxes, NMS, roi_align, sigmoid_focal_loss."""
from .boxes import (
                    batched_nms,
                    box_area,
                    box_convert,
                    box_iou,
                    clip_boxes_to_image,
                    nms,
                    remove_small_boxes,
)
from .focal_loss import sigmoid_focal_loss
from .roi_align import RoIAlign, roi_align

__all__ = ["batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "nms",
           "remove_small_boxes", "sigmoid_focal_loss", "RoIAlign", "roi_align"]
