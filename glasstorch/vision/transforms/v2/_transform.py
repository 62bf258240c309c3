"""The v2 calling convention: ``Transform`` and the helpers its subclasses share.

A v2 transform takes any number of inputs, or one nested tuple/list/dict, and returns the same
structure. Random parameters are drawn once per call (``make_params``) and applied to every
input that needs transforming (``transform``): all tv_tensors and PIL images, and, when there
is no ``Image``/``Video``/PIL image in the sample, the first plain tensor. Everything else
(labels, strings, other tensors) passes through untouched, as do inputs the transform has no
kernel for (a ColorJitter leaves boxes and masks alone).
"""
import enum

import glasstorch
from glasstorch import Tensor, nn

from ..._pil import is_pil
from ...tv_tensors import BoundingBoxes, Image, Mask, TVTensor, Video
from . import functional as F
from ._utils import check_type, has_any, is_pure_tensor, kernel_for


def flatten(tree):
    """Leaves of nested tuples/lists/dicts (namedtuples too), and a function rebuilding the tree
    from new leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [flatten(x) for x in tree]
    elif isinstance(tree, dict):
        parts = [flatten(x) for x in tree.values()]
    else:
        return [tree], lambda leaves: leaves[0]
    sizes = [len(leaves) for leaves, _ in parts]

    def rebuild(leaves):
        out, start = [], 0
        for (_, build), size in zip(parts, sizes):
            out.append(build(leaves[start:start + size]))
            start += size
        if isinstance(tree, dict):
            return type(tree)(zip(tree.keys(), out))
        return type(tree)(*out) if hasattr(tree, "_fields") else type(tree)(out)
    return [leaf for leaves, _ in parts for leaf in leaves], rebuild


class Transform(nn.Module):
    """Base of v2 transforms. Subclasses draw random parameters in ``make_params`` (once per
    call, from the inputs that will be transformed) and apply them to one input in
    ``transform``, usually through ``self._call_kernel(F.some_functional, inpt, ...)``."""

    # inputs of these types (or passing these checks) are candidates for transforming
    _transformed_types = (Tensor, is_pil)

    def check_inputs(self, flat_inputs):
        """Raise if the sample holds something this transform refuses."""

    def make_params(self, flat_inputs):
        """The random parameters of one call (a dict)."""
        return {}

    def transform(self, inpt, params):
        """``inpt`` transformed with ``params``."""
        raise NotImplementedError

    def _call_kernel(self, functional, inpt, *args, **kwargs):
        return kernel_for(functional, inpt, allow_passthrough=True)(inpt, *args, **kwargs)

    def _needs_transform_list(self, flat_inputs):
        # torchvision's rule for plain tensors: only the first one, and only when the sample
        # has no Image, Video or PIL image
        transform_pure_tensor = not has_any(flat_inputs, Image, Video, is_pil)
        needs = []
        for inpt in flat_inputs:
            need = check_type(inpt, self._transformed_types)
            if need and is_pure_tensor(inpt):
                need, transform_pure_tensor = transform_pure_tensor, False
            needs.append(need)
        return needs

    def forward(self, *inputs):
        flat, rebuild = flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat)
        needs = self._needs_transform_list(flat)
        params = self.make_params([x for x, need in zip(flat, needs) if need])
        return rebuild([self.transform(x, params) if need else x for x, need in zip(flat, needs)])

    def extra_repr(self):
        # the public settings of plain types, in the order they were set (as torchvision)
        return ", ".join(f"{name}={value}" for name, value in vars(self).items()
                         if not name.startswith("_") and name != "training" and
                         isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)))


class _RandomApplyTransform(Transform):
    """A transform applied with probability ``p`` (one draw per call, for all inputs)."""

    def __init__(self, p=0.5):
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs):
        tree = inputs if len(inputs) > 1 else inputs[0]
        self.check_inputs(flatten(tree)[0])
        if float(glasstorch.rand(1).item()) >= self.p:
            return tree
        return super().forward(*inputs)


def query_size(flat_inputs):
    """``(height, width)`` shared by the images, videos, masks and boxes of a sample."""
    sizes = {tuple(F.get_size(x)) for x in flat_inputs
             if check_type(x, (is_pure_tensor, Image, is_pil, Video, Mask, BoundingBoxes))}
    if not sizes:
        raise TypeError("No image, video, mask or bounding box was found in the sample")
    if len(sizes) > 1:
        raise ValueError(f"Found multiple HxW dimensions in the sample: {sorted(sizes)}")
    return sizes.pop()


def query_chw(flat_inputs):
    """``(channels, height, width)`` shared by the images and videos of a sample."""
    chws = {tuple(F.get_dimensions(x)) for x in flat_inputs
            if check_type(x, (is_pure_tensor, Image, is_pil, Video))}
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError(f"Found multiple CxHxW dimensions in the sample: {sorted(chws)}")
    return chws.pop()


def get_bounding_boxes(flat_inputs):
    """The (single) BoundingBoxes of a sample."""
    boxes = next((x for x in flat_inputs if isinstance(x, BoundingBoxes)), None)
    if boxes is None:
        raise ValueError("No bounding boxes were found in the sample")
    return boxes


def setup_fill_arg(fill):
    """A fill (number, sequence, None) or a dict of fills per input type -> a dict, "others"
    holding the fill of every type not named."""
    if isinstance(fill, dict):
        return {key: _check_fill(value) for key, value in fill.items()}
    return {"others": _check_fill(fill)}


def _check_fill(fill):
    if fill is not None and not isinstance(fill, (int, float, tuple, list)):
        raise TypeError("Got inappropriate fill arg, only Numbers, tuples, lists and dicts are "
                        "allowed.")
    return fill if fill is None or isinstance(fill, (int, float)) else [float(v) for v in fill]


def get_fill(fill_dict, inpt_type):
    """The fill for inputs of ``inpt_type``."""
    return fill_dict[inpt_type] if inpt_type in fill_dict else fill_dict.get("others")


def image_like(inpt):
    """Whether ``inpt`` is something image kernels take (plain tensor, Image, Video, PIL)."""
    return is_pil(inpt) or (isinstance(inpt, Tensor) and
                            (not isinstance(inpt, TVTensor) or isinstance(inpt, (Image, Video))))
