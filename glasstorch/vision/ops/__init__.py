"""torchvision.ops: boxes, NMS, roi_align, sigmoid_focal_loss and the layers in ``misc``."""
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
from .misc import (
    MLP,
    Conv2dNormActivation,
    Conv3dNormActivation,
    FrozenBatchNorm2d,
    Permute,
    SqueezeExcitation,
)
from .roi_align import RoIAlign, roi_align

__all__ = ["batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "nms",
           "remove_small_boxes", "sigmoid_focal_loss", "RoIAlign", "roi_align",
           "Conv2dNormActivation", "Conv3dNormActivation", "FrozenBatchNorm2d", "MLP",
           "Permute", "SqueezeExcitation"]
