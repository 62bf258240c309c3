"""v2 transforms: type conversions, dtype and normalisation, channel ops, noise, MixUp and
CutMix (the geometric ones are in _geometry, the box ones in _meta)."""
import math
import warnings

import numpy as np

import glasstorch
from glasstorch import nn

from ... import tv_tensors
from ..._pil import is_pil
from ...tv_tensors import BoundingBoxes, Image, Mask, TVTensor, Video
from .. import functional as _v1
from ..transforms import _randint, _uniform
from . import functional as F
from ._meta import parse_labels_getter
from ._transform import Transform, flatten, query_chw, query_size
from ._utils import as_plain, has_any, is_pure_tensor

__all__ = ["Identity", "Lambda", "ToImage", "ToPureTensor", "PILToTensor", "ToTensor",
           "ToPILImage", "ToDtype", "ConvertImageDtype", "Normalize", "RGB",
           "RandomChannelPermutation", "RandomPhotometricDistort", "GaussianNoise", "MixUp",
           "CutMix"]


class Identity(Transform):
    """Return the inputs unchanged."""

    def transform(self, inpt, params):
        return inpt


class Lambda(Transform):
    """Apply ``lambd`` to every input that is an instance of ``types`` (any input by default,
    labels included)."""

    _transformed_types = (object,)

    def __init__(self, lambd, *types):
        super().__init__()
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd, self.types = lambd, types or self._transformed_types

    def transform(self, inpt, params):
        return self.lambd(inpt) if isinstance(inpt, self.types) else inpt

    def extra_repr(self):
        name = getattr(self.lambd, "__name__", None)
        types = f"types={[t.__name__ for t in self.types]}"
        return f"{name}, {types}" if name else types


class ToImage(Transform):
    """PIL image / HWC ndarray / plain tensor -> ``tv_tensors.Image`` (no rescaling)."""

    _transformed_types = (is_pure_tensor, is_pil, np.ndarray)

    def transform(self, inpt, params):
        return F.to_image(inpt)


class ToPureTensor(Transform):
    """Unwrap tv_tensors into plain tensors (sharing their storage)."""

    _transformed_types = (TVTensor,)

    def transform(self, inpt, params):
        return as_plain(inpt)


class PILToTensor(Transform):
    """PIL image -> plain ``[C, H, W]`` tensor of the same dtype (no rescaling)."""

    _transformed_types = (is_pil,)

    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt)


class ToTensor(Transform):
    """PIL image / HWC ndarray -> float ``[C, H, W]`` tensor in [0, 1] (v1's ToTensor;
    ``Compose([ToImage(), ToDtype(float32, scale=True)])`` is v2's way)."""

    _transformed_types = (is_pil, np.ndarray)

    def transform(self, inpt, params):
        return _v1.to_tensor(inpt)


class ToPILImage(Transform):
    """Plain tensor / Image / ndarray -> PIL image (``mode`` as ``to_pil_image``)."""

    _transformed_types = (is_pure_tensor, Image, np.ndarray)

    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode

    def transform(self, inpt, params):
        return F.to_pil_image(inpt, mode=self.mode)


class ToDtype(Transform):
    """Cast images and videos (plain tensors too) to ``dtype``, rescaling their values when
    ``scale``. A dict ``dtype`` gives a dtype per input type, e.g. ``{tv_tensors.Image:
    torch.float32, tv_tensors.Mask: torch.int64, "others": None}`` (None: leave as is)."""

    _transformed_types = (glasstorch.Tensor,)

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, (dict, glasstorch.dtype)):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        if isinstance(dtype, dict) and glasstorch.Tensor in dtype and \
                any(cls in dtype for cls in (Image, Video)):
            warnings.warn("Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` or "
                          "`tv_tensors.Video`. Note that a plain `torch.Tensor` will *not* be "
                          "transformed by this (or any other transformation) in case a "
                          "`tv_tensors.Image` or `tv_tensors.Video` is present in the input.",
                          stacklevel=2)
        self.dtype, self.scale = dtype, scale

    def _dtype_for(self, inpt):
        if not isinstance(self.dtype, dict):
            return self.dtype if is_pure_tensor(inpt) or isinstance(inpt, (Image, Video)) \
                else None
        if type(inpt) in self.dtype:
            return self.dtype[type(inpt)]
        if "others" in self.dtype:
            return self.dtype["others"]
        raise ValueError(f"No dtype was specified for type {type(inpt)}. If you only need to "
                         "convert the dtype of images or videos, you can just pass e.g. "
                         "dtype=torch.float32. If you're passing a dict as dtype, you can use "
                         '"others" as a catch-all key e.g. dtype={tv_tensors.Mask: torch.int64, '
                         '"others": None} to pass-through the rest of the inputs.')

    def transform(self, inpt, params):
        dtype = self._dtype_for(inpt)
        if dtype is None:
            if self.scale and isinstance(self.dtype, dict) and \
                    (is_pure_tensor(inpt) or isinstance(inpt, (Image, Video))):
                warnings.warn("scale was set to True but no dtype was specified for images or "
                              "videos: no scaling will be done.", stacklevel=2)
            return inpt
        return self._call_kernel(F.to_dtype, inpt, dtype=dtype, scale=self.scale)


class ConvertImageDtype(Transform):
    """Convert images to ``dtype``, rescaling their values."""

    def __init__(self, dtype=glasstorch.float32):
        super().__init__()
        self.dtype = dtype

    def transform(self, inpt, params):
        return self._call_kernel(F.to_dtype, inpt, dtype=self.dtype, scale=True)


class Normalize(Transform):
    """Normalise each channel of float images: ``(x - mean[c]) / std[c]``."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = list(mean), list(std), inplace

    def check_inputs(self, flat_inputs):
        if has_any(flat_inputs, is_pil):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt, params):
        return self._call_kernel(F.normalize, inpt, mean=self.mean, std=self.std,
                                 inplace=self.inplace)


class RGB(Transform):
    """Make greyscale images three-channel (RGB images are unchanged)."""

    def transform(self, inpt, params):
        return self._call_kernel(F.grayscale_to_rgb, inpt)


class RandomChannelPermutation(Transform):
    """Shuffle the channels with a random permutation."""

    def make_params(self, flat_inputs):
        channels, _, _ = query_chw(flat_inputs)
        return {"permutation": glasstorch.randperm(channels).tolist()}

    def transform(self, inpt, params):
        return self._call_kernel(F.permute_channels, inpt, params["permutation"])


class GaussianNoise(Transform):
    """Add Gaussian noise to uint8 or float images (see ``functional.gaussian_noise``)."""

    def __init__(self, mean=0.0, sigma=0.1, clip=True):
        super().__init__()
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def transform(self, inpt, params):
        return self._call_kernel(F.gaussian_noise, inpt, mean=self.mean, sigma=self.sigma,
                                 clip=self.clip)


class RandomPhotometricDistort(Transform):
    """SSD's photometric distortions: brightness, contrast (before or after the others),
    saturation, hue and a channel shuffle, each applied with probability ``p``."""

    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5),
                 hue=(-0.05, 0.05), p=0.5):
        super().__init__()
        self.brightness, self.contrast, self.hue, self.saturation = brightness, contrast, hue, \
            saturation
        self.p = p

    def make_params(self, flat_inputs):
        channels, _, _ = query_chw(flat_inputs)
        params = {key: _uniform(*bounds) if float(glasstorch.rand(1).item()) < self.p else None
                  for key, bounds in (("brightness_factor", self.brightness),
                                      ("contrast_factor", self.contrast),
                                      ("saturation_factor", self.saturation),
                                      ("hue_factor", self.hue))}
        params["contrast_before"] = float(glasstorch.rand(1).item()) < 0.5
        params["channel_permutation"] = glasstorch.randperm(channels).tolist() \
            if float(glasstorch.rand(1).item()) < self.p else None
        return params

    def transform(self, inpt, params):
        contrast = params["contrast_factor"]
        steps = [(F.adjust_brightness, params["brightness_factor"]),
                 (F.adjust_contrast, contrast if params["contrast_before"] else None),
                 (F.adjust_saturation, params["saturation_factor"]),
                 (F.adjust_hue, params["hue_factor"]),
                 (F.adjust_contrast, None if params["contrast_before"] else contrast),
                 (F.permute_channels, params["channel_permutation"])]
        for functional, value in steps:
            if value is not None:
                inpt = self._call_kernel(functional, inpt, value)
        return inpt


class _BaseMixUpCutMix(Transform):
    """Mixes each image of a batch with the next one (so shuffle the batches) and the
    one-hot labels in proportion. Called as ``images, labels = t(images, labels)``; the labels
    are found as SanitizeBoundingBoxes finds them (or by ``labels_getter``)."""

    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__()
        self.alpha, self.num_classes = float(alpha), num_classes
        self._labels_getter = parse_labels_getter(labels_getter)

    def _lam(self):
        beta = glasstorch.distributions.Beta(glasstorch.tensor([self.alpha]),
                                             glasstorch.tensor([self.alpha]))
        return float(beta.sample(()))

    def _check_labels(self, labels):
        if not isinstance(labels, glasstorch.Tensor):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        if labels.dim() not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or "
                             "probability based with shape (batch_size, num_classes), but got a "
                             f"tensor of shape {tuple(labels.shape)} instead.")
        if labels.dim() == 2 and self.num_classes is not None and \
                labels.shape[-1] != self.num_classes:
            raise ValueError("When passing 2D labels, the number of elements in last dimension "
                             f"must match num_classes: {labels.shape[-1]} != "
                             f"{self.num_classes}. You can Leave num_classes to None.")
        if labels.dim() == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")

    def forward(self, *inputs):
        tree = inputs if len(inputs) > 1 else inputs[0]
        flat, rebuild = flatten(tree)
        if has_any(flat, is_pil, BoundingBoxes, Mask):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding "
                             "boxes, keypoints and masks.")
        labels = self._labels_getter(tree)
        self._check_labels(labels)
        needs = self._needs_transform_list(flat)
        params = {"labels": labels, "batch_size": labels.shape[0],
                  **self.make_params([x for x, need in zip(flat, needs) if need])}
        return rebuild([self._mix(x, params) if need or x is labels else x
                        for x, need in zip(flat, needs)])

    def _mix(self, inpt, params):
        if inpt is params["labels"]:
            return self.transform(inpt, params)
        if not (is_pure_tensor(inpt) or isinstance(inpt, (Image, Video))):
            return inpt
        expected_dims = 5 if isinstance(inpt, Video) else 4
        if inpt.dim() != expected_dims:
            raise ValueError(f"Expected a batched input with {expected_dims} dims, but got "
                             f"{inpt.dim()} dimensions instead.")
        if inpt.shape[0] != params["batch_size"]:
            raise ValueError("The batch size of the image or video does not match the batch "
                             f"size of the labels: {inpt.shape[0]} != {params['batch_size']}.")
        out = self.transform(as_plain(inpt), params)
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, (Image, Video)) else out

    def _mix_labels(self, labels, lam):
        if labels.dim() == 1:
            labels = nn.functional.one_hot(labels, num_classes=self.num_classes)
        if not labels.is_floating_point():
            labels = labels.float()
        return labels.roll(1, 0).mul_(1.0 - lam).add_(labels.mul(lam))

    def extra_repr(self):
        return f"alpha={self.alpha}, num_classes={self.num_classes}"


class MixUp(_BaseMixUpCutMix):
    """MixUp (Zhang et al., 2018): ``lam * x + (1 - lam) * x_next``, lam ~ Beta(alpha, alpha).
    """

    def make_params(self, flat_inputs):
        return {"lam": self._lam()}

    def transform(self, inpt, params):
        lam = params["lam"]
        if inpt is params["labels"]:
            return self._mix_labels(inpt, lam)
        return inpt.roll(1, 0).mul_(1.0 - lam).add_(inpt.mul(lam))


class CutMix(_BaseMixUpCutMix):
    """CutMix (Yun et al., 2019): paste a box of the next image, covering about ``1 - lam`` of
    the area (lam ~ Beta(alpha, alpha)); the labels mix by the box's actual area."""

    def make_params(self, flat_inputs):
        lam = self._lam()
        h, w = query_size(flat_inputs)
        cx, cy = _randint(0, w), _randint(0, h)
        half = 0.5 * math.sqrt(1.0 - lam)
        half_w, half_h = int(half * w), int(half * h)
        x1, y1 = max(cx - half_w, 0), max(cy - half_h, 0)
        x2, y2 = min(cx + half_w, w), min(cy + half_h, h)
        return {"box": (x1, y1, x2, y2),
                "lam_adjusted": float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))}

    def transform(self, inpt, params):
        if inpt is params["labels"]:
            return self._mix_labels(inpt, params["lam_adjusted"])
        x1, y1, x2, y2 = params["box"]
        out = inpt.clone()
        out[..., y1:y2, x1:x2] = inpt.roll(1, 0)[..., y1:y2, x1:x2]
        return out
