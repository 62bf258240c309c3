"""MNIST, FashionMNIST and KMNIST from the standard IDX files (optionally ``.gz``)."""
import gzip
import os

import numpy as np

import glasstorch

from .._pil import pil_image
from .vision import VisionDataset, missing, no_download

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "read_idx"]

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4",
               0x0E: ">f8"}


def read_idx(path):
    """Read an IDX file (``.gz`` too) into a numpy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise RuntimeError(f"{path} is not an IDX file (bad magic number)")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    arr = np.frombuffer(data, dtype=dtype, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise RuntimeError(f"{path}: expected {int(np.prod(dims))} values, found {arr.size}")
    return arr.reshape(dims).astype(dtype.newbyteorder("="))


class MNIST(VisionDataset):
    """MNIST digits from ``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]``.

    Items are ``(PIL image mode 'L', int)``; ``data`` (uint8, N x 28 x 28) and ``targets``
    (int64) hold the whole split."""

    resources = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        prefix = "train" if train else "t10k"
        names = [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]
        paths = [self._find(n) for n in names]
        if None in paths:
            expected = [os.path.join(self.raw_folder, n) + "[.gz]" for n in names]
            if download:
                raise no_download(type(self).__name__, expected)
            raise missing(type(self).__name__, expected)
        self.data = glasstorch.from_numpy(read_idx(paths[0]).astype(np.uint8))
        self.targets = glasstorch.from_numpy(read_idx(paths[1]).astype(np.int64))
        if len(self.data) != len(self.targets):
            raise RuntimeError(f"{type(self).__name__}: {len(self.data)} images but "
                               f"{len(self.targets)} labels")

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _find(self, name):
        for cand in (name, name + ".gz"):
            p = os.path.join(self.raw_folder, cand)
            if os.path.isfile(p):
                return p
        return None

    def __getitem__(self, index):
        img = pil_image().fromarray(self.data[index].numpy(), mode="L")
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """Fashion-MNIST (same file layout under ``root/FashionMNIST/raw``)."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST (same file layout under ``root/KMNIST/raw``)."""

    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
