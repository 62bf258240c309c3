"""glasstorch.vision: torchvision's transforms, datasets, utils, ops (and models)."""
import importlib

from . import datasets, ops, transforms, utils

__all__ = ["datasets", "models", "ops", "transforms", "utils"]


def __getattr__(name):
    # models are imported on first use (they are large and maintained separately)
    if name == "models":
        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
