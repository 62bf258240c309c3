"""glasstorch.vision: torchvision's transforms, tv_tensors, datasets, utils, ops (and models)."""
import importlib

from .. import version as _version
from . import datasets, ops, transforms, tv_tensors, utils

__all__ = ["datasets", "models", "ops", "transforms", "tv_tensors", "utils"]

# what torchvision.__version__ is for the release paired with torch 2.13 (a plain str there)
__version__ = _version.torchvision_version


def __getattr__(name):
    # models are imported on first use (they are large and maintained separately)
    if name == "models":
        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
