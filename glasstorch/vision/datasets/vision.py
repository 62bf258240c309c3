"""Common base of the image datasets."""
import os

from glasstorch.utils.data import Dataset


class VisionDataset(Dataset):
    """Base class: keeps ``root``, ``transform`` and ``target_transform``."""

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        self.root = os.path.expanduser(root) if isinstance(root, (str, os.PathLike)) else root
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform, self.target_transform = transform, target_transform
        if has_separate:
            transforms = _StandardTransform(transform, target_transform)
        self.transforms = transforms

    def _apply(self, img, target):
        if self.transforms is not None:
            return self.transforms(img, target)
        return img, target

    def __len__(self):
        raise NotImplementedError

    def __repr__(self):
        lines = [f"Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += [line for line in self.extra_repr().splitlines() if line]
        if self.transform is not None:
            lines.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"Target transform: {self.target_transform!r}")
        body = "\n".join(" " * self._repr_indent + line for line in lines)
        return f"Dataset {type(self).__name__}\n{body}"

    def extra_repr(self):
        return ""


class _StandardTransform:
    def __init__(self, transform, target_transform):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


def no_download(name, expected):
    """The error raised for ``download=True`` when the files are absent (we are offline)."""
    files = "\n  ".join(expected)
    return RuntimeError(f"{name}: downloading is not available in glasstorch (no network "
                        f"access); place these files yourself:\n  {files}")


def missing(name, expected):
    """The error raised when the dataset files are absent."""
    files = "\n  ".join(expected)
    return RuntimeError(f"{name} dataset not found. Expected these files:\n  {files}\n"
                        "(glasstorch cannot download them; copy them there first)")
