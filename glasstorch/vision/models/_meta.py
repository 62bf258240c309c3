"""The ImageNet-1K class names behind ``meta["categories"]`` (torchvision.models._meta).

The names live in imagenet_categories.txt (recorded from torchvision) and are read on first use,
so importing the models costs nothing for them.
"""

import functools
import os

__all__ = ["imagenet_categories"]

_CATEGORIES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "imagenet_categories.txt")


@functools.cache
def imagenet_categories():
    """The 1000 ImageNet-1K class names, in the order of the classifiers' outputs."""
    with open(_CATEGORIES_FILE, encoding="utf-8") as f:
        return f.read().splitlines()


def __getattr__(name):
    # torchvision code sometimes imports the list itself under this private name
    if name == "_IMAGENET_CATEGORIES":
        return imagenet_categories()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
