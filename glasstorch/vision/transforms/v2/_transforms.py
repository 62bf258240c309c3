"""The transforms.v2 classes that v1 has no counterpart for.

They follow v2's calling convention: any number of inputs, or one nested tuple/list/dict,
comes back in the same structure. glasstorch has no tv_tensors, so v2's rule for plain inputs
applies: PIL images are images, and when there is none the first plain tensor is the image;
everything else (labels, other tensors) passes through.
"""
import math

import numpy as np

import glasstorch
from glasstorch import nn

from ..._pil import is_pil
from ..transforms import _randint
from . import functional as F

__all__ = ["Transform", "Identity", "ToImage", "ToDtype", "ToPureTensor", "RGB",
           "RandomChannelPermutation", "GaussianNoise", "MixUp", "CutMix"]


def _flatten(tree):
    """Leaves of nested tuples/lists/dicts, and a function rebuilding the tree from leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
    elif isinstance(tree, dict):
        parts = [_flatten(x) for x in tree.values()]
    else:
        return [tree], lambda leaves: leaves[0]
    sizes = [len(leaves) for leaves, _ in parts]

    def rebuild(leaves):
        out, start = [], 0
        for (_, build), size in zip(parts, sizes):
            out.append(build(leaves[start:start + size]))
            start += size
        if isinstance(tree, dict):
            return dict(zip(tree.keys(), out))
        return type(tree)(out)
    return [leaf for leaves, _ in parts for leaf in leaves], rebuild


class Transform(nn.Module):
    """Base of v2 transforms: ``make_params`` draws the random parameters once per call,
    ``transform`` applies them to each image input."""

    def make_params(self, flat_inputs):
        return {}

    def transform(self, inpt, params):
        raise NotImplementedError

    def _needs_transform(self, flat_inputs):
        if any(is_pil(x) for x in flat_inputs):
            return [is_pil(x) for x in flat_inputs]
        first_tensor = next((i for i, x in enumerate(flat_inputs)
                             if isinstance(x, glasstorch.Tensor)), None)
        return [i == first_tensor for i in range(len(flat_inputs))]

    def forward(self, *inputs):
        tree = inputs if len(inputs) > 1 else inputs[0]
        flat, rebuild = _flatten(tree)
        needs = self._needs_transform(flat)
        params = self.make_params([x for x, need in zip(flat, needs) if need])
        return rebuild([self.transform(x, params) if need else x for x, need in zip(flat, needs)])


class Identity(Transform):
    """Return the inputs unchanged."""

    def transform(self, inpt, params):
        return inpt


class ToImage(Transform):
    """PIL image / HWC ndarray / tensor -> ``[..., C, H, W]`` tensor (no rescaling)."""

    def _needs_transform(self, flat_inputs):
        needs = super()._needs_transform(flat_inputs)
        return [need or isinstance(x, np.ndarray) for x, need in zip(flat_inputs, needs)]

    def transform(self, inpt, params):
        return F.to_image(inpt)


class ToDtype(Transform):
    """Cast tensor images to ``dtype``, rescaling the values when ``scale`` (PIL images pass
    through). A dict ``dtype`` (per tv_tensor type) is not supported: glasstorch has none."""

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, glasstorch.dtype):
            raise TypeError(f"dtype should be a glasstorch dtype, got {dtype!r}")
        self.dtype, self.scale = dtype, scale

    def transform(self, inpt, params):
        return inpt if is_pil(inpt) else F.to_dtype(inpt, self.dtype, self.scale)

    def extra_repr(self):
        return f"scale={self.scale}"


class ToPureTensor(Identity):
    """Unwrap tv_tensors into plain tensors: glasstorch's images already are plain tensors."""


class RGB(Transform):
    """Make greyscale images three-channel (RGB images are unchanged)."""

    def transform(self, inpt, params):
        return F.grayscale_to_rgb(inpt)


class RandomChannelPermutation(Transform):
    """Shuffle the channels with a random permutation."""

    def make_params(self, flat_inputs):
        channels = F.get_num_channels(flat_inputs[0])
        return {"permutation": glasstorch.randperm(channels).tolist()}

    def transform(self, inpt, params):
        return F.permute_channels(inpt, params["permutation"])


class GaussianNoise(Transform):
    """Add Gaussian noise to uint8 or float tensor images (see ``functional.gaussian_noise``)."""

    def __init__(self, mean=0.0, sigma=0.1, clip=True):
        super().__init__()
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def transform(self, inpt, params):
        if is_pil(inpt):
            raise TypeError("GaussianNoise() does not support PIL images.")
        return F.gaussian_noise(inpt, self.mean, self.sigma, self.clip)

    def extra_repr(self):
        return f"mean={self.mean}, sigma={self.sigma}, clip={self.clip}"


class _BaseMixUpCutMix(Transform):
    """Mixes each image of a batch with the next one (so shuffle the batches) and the
    one-hot labels in proportion. Called as ``images, labels = t(images, labels)``."""

    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__()
        self.alpha, self.num_classes = float(alpha), num_classes
        if labels_getter != "default" and not callable(labels_getter):
            raise ValueError(f"labels_getter should either be 'default' or a callable, got "
                             f"{labels_getter!r}")
        self._labels_getter = labels_getter

    def _lam(self):
        beta = glasstorch.distributions.Beta(glasstorch.tensor([self.alpha]),
                                             glasstorch.tensor([self.alpha]))
        return float(beta.sample(()))

    def _labels(self, inputs):
        if callable(self._labels_getter):
            return self._labels_getter(inputs)
        return inputs[1] if isinstance(inputs, (tuple, list)) and len(inputs) > 1 else None

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
        flat, rebuild = _flatten(tree)
        if any(is_pil(x) for x in flat):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding "
                             "boxes, keypoints and masks.")
        labels = self._labels(tree)
        self._check_labels(labels)
        needs = self._needs_transform(flat)
        params = {"labels": labels, "batch_size": labels.shape[0],
                  **self.make_params([x for x, need in zip(flat, needs) if need])}
        return rebuild([self.transform(x, params) if need or x is labels else x
                        for x, need in zip(flat, needs)])

    def _check_batch(self, images, batch_size):
        if images.dim() != 4:
            raise ValueError(f"Expected a batched input with 4 dims, but got {images.dim()} "
                             "dimensions instead.")
        if images.shape[0] != batch_size:
            raise ValueError("The batch size of the image or video does not match the batch "
                             f"size of the labels: {images.shape[0]} != {batch_size}.")

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
        if inpt is params["labels"]:
            return self._mix_labels(inpt, params["lam"])
        self._check_batch(inpt, params["batch_size"])
        lam = params["lam"]
        return inpt.roll(1, 0).mul_(1.0 - lam).add_(inpt.mul(lam))


class CutMix(_BaseMixUpCutMix):
    """CutMix (Yun et al., 2019): paste a box of the next image, covering about ``1 - lam`` of
    the area (lam ~ Beta(alpha, alpha)); the labels mix by the box's actual area."""

    def make_params(self, flat_inputs):
        lam = self._lam()
        h, w = F.get_size(flat_inputs[0])
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
        self._check_batch(inpt, params["batch_size"])
        x1, y1, x2, y2 = params["box"]
        out = inpt.clone()
        out[..., y1:y2, x1:x2] = inpt.roll(1, 0)[..., y1:y2, x1:x2]
        return out
