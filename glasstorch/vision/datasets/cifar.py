"""CIFAR10 / CIFAR100 from the standard python pickled batches."""
import os
import pickle

import numpy as np

from .._pil import pil_image
from .vision import VisionDataset, missing, no_download

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(VisionDataset):
    """CIFAR-10 from ``root/cifar-10-batches-py``; items are ``(PIL RGB image, int)``."""

    base_folder = "cifar-10-batches-py"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                  "data_batch_5"]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    label_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        folder = os.path.join(self.root, self.base_folder)
        names = (self.train_list if train else self.test_list) + [self.meta["filename"]]
        paths = [os.path.join(folder, n) for n in names]
        if not all(os.path.isfile(p) for p in paths):
            if download:
                raise no_download(type(self).__name__, paths)
            raise missing(type(self).__name__, paths)
        data, targets = [], []
        for p in paths[:-1]:
            entry = self._load(p)
            data.append(np.asarray(entry["data"], dtype=np.uint8))
            targets.extend(entry[self.label_key])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()
        self.targets = [int(t) for t in targets]
        self.classes = list(self._load(paths[-1])[self.meta["key"]])
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    @staticmethod
    def _load(path):
        with open(path, "rb") as f:
            return pickle.load(f, encoding="latin1")

    def __getitem__(self, index):
        img = pil_image().fromarray(self.data[index])
        target = self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels) from ``root/cifar-100-python``."""

    base_folder = "cifar-100-python"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
    label_key = "fine_labels"
