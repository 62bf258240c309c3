"""Containers of v2 transforms: they pass whatever structure they get to each transform."""
from collections.abc import Sequence

import glasstorch
from glasstorch import nn

from ._transform import Transform

__all__ = ["Compose", "RandomApply", "RandomChoice", "RandomOrder"]


def _check_transforms(transforms, allowed=(Sequence,)):
    if not isinstance(transforms, allowed):
        raise TypeError("Argument transforms should be a sequence of callables")
    if not transforms:
        raise ValueError("Pass at least one transform")


def _chain(transforms, inputs):
    # several inputs go on as several arguments, one input as itself
    unpack = len(inputs) > 1
    for t in transforms:
        outputs = t(*inputs)
        inputs = outputs if unpack else (outputs,)
    return outputs


def _listing(transforms):
    return "\n".join(f"    {t}" for t in transforms)


class Compose(Transform):
    """Apply ``transforms`` in order: ``Compose([...])(img, target)`` or ``(sample_dict)``."""

    def __init__(self, transforms):
        super().__init__()
        _check_transforms(transforms)
        self.transforms = transforms

    def forward(self, *inputs):
        return _chain(self.transforms, inputs)

    def extra_repr(self):
        return _listing(self.transforms)


class RandomApply(Transform):
    """Apply all ``transforms`` in order with probability ``p`` (one draw per call)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        _check_transforms(transforms, (Sequence, nn.ModuleList))
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms, self.p = transforms, p

    def forward(self, *inputs):
        if float(glasstorch.rand(1).item()) >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return _chain(self.transforms, inputs)

    def extra_repr(self):
        return _listing(self.transforms)


class RandomChoice(Transform):
    """Apply one of ``transforms``, picked with weights ``p`` (uniform by default)."""

    def __init__(self, transforms, p=None):
        _check_transforms(transforms)
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != "
                             f"{len(transforms)}")
        super().__init__()
        self.transforms = transforms
        self.p = [w / sum(p) for w in p]

    def forward(self, *inputs):
        idx = int(glasstorch.multinomial(glasstorch.tensor(self.p), 1).item())
        return self.transforms[idx](*inputs)


class RandomOrder(Transform):
    """Apply all ``transforms`` in a random order."""

    def __init__(self, transforms):
        _check_transforms(transforms)
        super().__init__()
        self.transforms = transforms

    def forward(self, *inputs):
        order = glasstorch.randperm(len(self.transforms)).tolist()
        return _chain([self.transforms[i] for i in order], inputs)
