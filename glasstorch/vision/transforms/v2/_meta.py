"""v2 transforms of bounding boxes alone: format conversion, clamping, sanitizing."""
from glasstorch import Tensor

from ... import tv_tensors
from ...tv_tensors import BoundingBoxes, Mask
from . import functional as F
from ._bounding_boxes import sanitize_mask
from ._transform import Transform, flatten, get_bounding_boxes
from ._utils import as_plain, is_pure_tensor

__all__ = ["ConvertBoundingBoxFormat", "ClampBoundingBoxes", "SetClampingMode",
           "SanitizeBoundingBoxes"]


class ConvertBoundingBoxFormat(Transform):
    """Convert the boxes to ``format`` ("XYXY", "XYWH", "CXCYWH" or a BoundingBoxFormat)."""

    _transformed_types = (BoundingBoxes,)

    def __init__(self, format):
        super().__init__()
        self.format = format

    def transform(self, inpt, params):
        return F.convert_bounding_box_format(inpt, new_format=self.format)


class ClampBoundingBoxes(Transform):
    """Clamp the boxes to their canvas ("auto": by each box set's own ``clamping_mode``)."""

    _transformed_types = (BoundingBoxes,)

    def __init__(self, clamping_mode="auto"):
        super().__init__()
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        return F.clamp_bounding_boxes(inpt, clamping_mode=self.clamping_mode)


class SetClampingMode(Transform):
    """Set the boxes' ``clamping_mode`` ("soft", "hard" or None) for the transforms after."""

    _transformed_types = (BoundingBoxes,)

    def __init__(self, clamping_mode):
        super().__init__()
        if clamping_mode not in (None, "soft", "hard"):
            raise ValueError(f"clamping_mode must be soft, hard or None, got {clamping_mode}")
        self.clamping_mode = clamping_mode

    def transform(self, inpt, params):
        out = inpt.clone()
        out.clamping_mode = self.clamping_mode
        return out


def _default_labels(inputs):
    # torchvision's heuristic: (img, target) -> target; the target (or the sample) is the
    # labels tensor itself or a dict holding it under "labels" or a key containing "label"
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if is_pure_tensor(inputs):
        return inputs
    if not isinstance(inputs, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward "
                         "must be a dictionary or a two-tuple whose second item is a dictionary "
                         f"or a tensor, but got {inputs} instead.")
    key = next((k for k in inputs if k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs if "label" in k.lower()), None)
    if key is None:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a "
                         "callable as the labels_getter parameter?If there are no labels in the "
                         "sample by design, pass labels_getter=None.")
    return inputs[key]


def parse_labels_getter(labels_getter):
    if labels_getter == "default":
        return _default_labels
    if callable(labels_getter):
        return labels_getter
    if labels_getter is None:
        return lambda inputs: None
    raise ValueError("labels_getter should either be 'default', a callable, or None, but got "
                     f"{labels_getter}.")


class SanitizeBoundingBoxes(Transform):
    """Drop degenerate boxes (smaller than ``min_size`` / ``min_area`` or off the canvas) and
    the matching rows of the masks and of the labels found by ``labels_getter``."""

    def __init__(self, min_size=1.0, min_area=1.0, labels_getter="default"):
        super().__init__()
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_size, self.min_area = min_size, min_area
        self.labels_getter, self._labels_getter = labels_getter, parse_labels_getter(labels_getter)

    def _labels(self, inputs):
        labels = self._labels_getter(inputs)
        if labels is None:
            return ()
        labels = (labels,) if isinstance(labels, Tensor) else labels
        if not isinstance(labels, (tuple, list)) or \
                not all(isinstance(x, Tensor) for x in labels):
            raise ValueError("The labels in the input to forward() must be a tensor or None, got "
                             f"{type(labels)} instead.")
        return tuple(labels)

    def forward(self, *inputs):
        tree = inputs if len(inputs) > 1 else inputs[0]
        labels = self._labels(tree)
        flat, rebuild = flatten(tree)
        boxes = get_bounding_boxes(flat)
        for label in labels:
            if boxes.shape[0] != label.shape[0]:
                raise ValueError(f"Number of boxes (shape={boxes.shape}) and must match the "
                                 f"number of labels.Found labels with shape={label.shape}).")
        valid = sanitize_mask(as_plain(boxes), boxes.format, boxes.canvas_size, self.min_size,
                              self.min_area)
        params = {"valid": valid, "labels": labels}
        return rebuild([self.transform(x, params) for x in flat])

    def transform(self, inpt, params):
        is_label = any(inpt is label for label in params["labels"])
        if not (is_label or isinstance(inpt, (BoundingBoxes, Mask))):
            return inpt
        try:
            out = inpt[params["valid"]]
        except IndexError:
            # a mask that is not one-per-box (e.g. a semantic mask) is kept whole
            return inpt
        return out if is_label else tv_tensors.wrap(out, like=inpt)
