"""The 8x8 handwritten digits that ship with glasstorch (UCI, CC BY 4.0)."""
import os

import numpy as np

import glasstorch

from .vision import VisionDataset

__all__ = ["Digits"]

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "examples",
                     "data", "digits.npz")


class Digits(VisionDataset):
    """1,797 8x8 greyscale digits (classes 0-9), bundled so examples run offline.

    Items are ``(image, int)`` where ``image`` is a ``1 x 8 x 8`` float32 tensor in [0, 1]
    (the raw 0..16 counts divided by 16). ``data`` holds the raw uint8 counts (N x 8 x 8),
    ``targets`` the int64 labels. ``train=True``/``False`` selects the first 1,438 / the last
    359 samples (an 80/20 split); ``None`` (default) keeps all. Source: the UCI "Optical
    Recognition of Handwritten Digits" test set (Alpaydin and Kaynak, 1998), CC BY 4.0."""

    classes = [str(i) for i in range(10)]
    n_train = 1438

    def __init__(self, root=None, train=None, transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        with np.load(_PATH) as f:
            images, labels = f["images"], f["labels"]
        if train is True:
            images, labels = images[:self.n_train], labels[:self.n_train]
        elif train is False:
            images, labels = images[self.n_train:], labels[self.n_train:]
        self.train = train
        self.data = glasstorch.from_numpy(np.ascontiguousarray(images))
        self.targets = glasstorch.from_numpy(np.ascontiguousarray(labels))
        self._images = glasstorch.from_numpy((images.astype(np.float32) / 16.0)[:, None])
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self._images[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.targets)
