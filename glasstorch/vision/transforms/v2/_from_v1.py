"""v1 transforms that only touch images (colour, blur, erasing, crops into several views,
auto-augmentation), in v2's calling convention.

Each image or video of the sample goes through the v1 transform from the same generator
state, so all of them get the same random parameters, as v2 draws them once per call; masks,
boxes and other inputs pass through. tv_tensor inputs come back with their type.
"""
import glasstorch

from ... import tv_tensors
from ...tv_tensors import BoundingBoxes, Mask, TVTensor
from .. import autoaugment as _aa
from .. import transforms as _v1
from ._transform import Transform, flatten, image_like

__all__ = ["ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur", "RandomInvert",
           "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
           "RandomEqualize", "RandomErasing", "FiveCrop", "TenCrop", "AutoAugment",
           "RandAugment", "TrivialAugmentWide", "AugMix"]


def _rewrap(out, like):
    if isinstance(like, TVTensor) and out is not like:
        if isinstance(out, (tuple, list)):
            return type(out)(tv_tensors.wrap(part, like=like) for part in out)
        return tv_tensors.wrap(out, like=like)
    return out


class _ImageOnly(Transform):
    """Runs ``_v1_forward`` on each image/video of the sample from one generator state."""

    _refused_types = ()     # inputs that make the call fail (geometry this cannot follow)
    _single_image = False   # auto-augment policies are defined for one image per call

    def forward(self, *inputs):
        flat, rebuild = flatten(inputs if len(inputs) > 1 else inputs[0])
        refused = next((x for x in flat if isinstance(x, self._refused_types)), None)
        if refused is not None:
            raise TypeError(f"Inputs of type {type(refused).__name__} are not supported by "
                            f"{type(self).__name__}()")
        needs = [need and image_like(x) for x, need in zip(flat, self._needs_transform_list(flat))]
        if self._single_image and sum(needs) != 1:
            raise TypeError("Found no image in the sample." if not any(needs) else
                            "Auto augment transformations are only properly defined for a "
                            f"single image or video, but found {sum(needs)}.")
        state = glasstorch.get_rng_state()
        out = []
        for x, need in zip(flat, needs):
            if need:
                glasstorch.set_rng_state(state)
                x = _rewrap(self._v1_forward(x), like=x)
            out.append(x)
        return rebuild(out)


def _image_only(v1_cls, refused=(), single_image=False):
    namespace = {
        "__doc__": f"{v1_cls.__doc__}\n\n    v2 calling convention: every image and video of "
                   "the sample gets the same random parameters; masks and boxes pass through.",
        "__module__": __name__, "_v1_forward": v1_cls.forward, "_refused_types": refused,
        "_single_image": single_image,
    }
    return type(v1_cls.__name__, (_ImageOnly, v1_cls), namespace)


ColorJitter = _image_only(_v1.ColorJitter)
Grayscale = _image_only(_v1.Grayscale)
RandomGrayscale = _image_only(_v1.RandomGrayscale)
GaussianBlur = _image_only(_v1.GaussianBlur)
RandomInvert = _image_only(_v1.RandomInvert)
RandomPosterize = _image_only(_v1.RandomPosterize)
RandomSolarize = _image_only(_v1.RandomSolarize)
RandomAdjustSharpness = _image_only(_v1.RandomAdjustSharpness)
RandomAutocontrast = _image_only(_v1.RandomAutocontrast)
RandomEqualize = _image_only(_v1.RandomEqualize)
RandomErasing = _image_only(_v1.RandomErasing)
FiveCrop = _image_only(_v1.FiveCrop, refused=(BoundingBoxes, Mask))
TenCrop = _image_only(_v1.TenCrop, refused=(BoundingBoxes, Mask))
AutoAugment = _image_only(_aa.AutoAugment, (BoundingBoxes, Mask), single_image=True)
RandAugment = _image_only(_aa.RandAugment, (BoundingBoxes, Mask), single_image=True)
TrivialAugmentWide = _image_only(_aa.TrivialAugmentWide, (BoundingBoxes, Mask),
                                 single_image=True)
AugMix = _image_only(_aa.AugMix, (BoundingBoxes, Mask), single_image=True)
