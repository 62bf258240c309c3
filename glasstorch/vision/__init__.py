"""glasstorch.vision: torchvision's transforms, tv_tensors, datasets, utils, ops (and models)."""
import importlib

from . import datasets, ops, transforms, tv_tensors, utils

__all__ = ["datasets", "models", "ops", "transforms", "tv_tensors", "utils"]


def __getattr__(name):
    # models are imported on first use (they are large and maintained separately)
    if name == "models":
        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
