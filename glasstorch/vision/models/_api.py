"""Weights handling shared by the model builders (torchvision.models._api).

Nothing is downloaded: ``weights=`` takes a local state_dict file (or a state_dict). The
torchvision weight enums exist with their metadata and preset transforms, so code naming them
can build its preprocessing and read class names, and loading them fails with a clear message.
"""

import os
import warnings
from enum import Enum

from ._meta import imagenet_categories

__all__ = ["Weights", "WeightsEnum", "get_model", "get_model_builder", "list_models",
           "get_weight"]

_BUILDERS = {}


class _ImageNetCategories:
    """Stands for ``meta["categories"]`` until first read: the 1000 names live in a data file."""

    def __repr__(self):
        return "<ImageNet-1K categories, read on first use>"


IMAGENET1K_CATEGORIES = _ImageNetCategories()


class Weights:
    """One pretrained-weights entry: where torchvision downloads it from, the preprocessing it
    was evaluated with (``transforms()`` builds it) and its metadata (``meta``, a dict)."""

    def __init__(self, url, transforms, meta):
        self.url = url
        self.transforms = transforms
        self._meta = meta

    @property
    def meta(self):
        if self._meta.get("categories") is IMAGENET1K_CATEGORIES:
            self._meta["categories"] = imagenet_categories()
        return self._meta

    def __repr__(self):
        return f"Weights(url={self.url!r}, transforms={self.transforms!r}, meta={self.meta!r})"


class WeightsEnum(Enum):
    """Base of the ``<Model>_Weights`` enums; ``DEFAULT`` is an alias of the recommended entry."""

    @classmethod
    def verify(cls, obj):
        """Resolve ``obj`` (None, a member, or its name as a string) to a member of ``cls``."""
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            try:
                return cls[name]
            except KeyError:
                # torchvision raises KeyError here too
                raise KeyError(f"No weights named '{obj}' in {cls.__name__} (valid: "
                               f"{list(cls.__members__)}); for a local file pass its path") \
                    from None
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{obj.__class__.__name__}.")

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta

    def get_state_dict(self, *args, **kwargs):
        raise RuntimeError(
            f"Downloading pretrained weights is not available in glasstorch (requested "
            f"{self}). Download {self.url} yourself and pass its local path: "
            f"weights='path/to/file.pth'.")

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"


def _is_path(obj):
    if isinstance(obj, os.PathLike):
        return True
    return isinstance(obj, str) and (os.sep in obj or "/" in obj or os.path.isfile(obj)
                                     or obj.endswith((".pth", ".pt", ".bin", ".ckpt")))


def _resolve_weights(weights, enum_cls, kwargs, fixed=("num_classes",)):
    """Return ``(member_or_None, state_dict_source_or_None)`` for a builder's ``weights``.

    ``fixed`` names the builder arguments that a weights entry determines (checked against
    ``kwargs`` like torchvision does, before the missing download is reported).
    Handles the legacy ``pretrained=`` keyword the way torchvision does (True means the
    default weights, which would need a download).
    """
    if "pretrained" in kwargs:
        pretrained = kwargs.pop("pretrained")
        warnings.warn("The parameter 'pretrained' is deprecated, please use 'weights' instead.",
                      UserWarning, stacklevel=3)
        if pretrained and weights is None:
            weights = enum_cls.DEFAULT
    if weights is None:
        return None, None
    if hasattr(weights, "keys") or _is_path(weights):
        return None, weights
    member = enum_cls.verify(weights)
    categories = member.meta["categories"]
    if "num_classes" in fixed and categories is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(categories))
    if "image_size" in fixed:
        _ovewrite_named_param(kwargs, "image_size", member.meta["min_size"][0])
    # fail before building the model: there is nothing to download the weights with
    member.get_state_dict()
    return member, None


def _load_weights(model, member, source, progress=True):
    if member is not None:
        model.load_state_dict(member.get_state_dict(progress=progress))
    elif source is not None:
        if hasattr(source, "keys"):
            state = source
        else:
            from ... import load
            state = load(os.fspath(source), map_location="cpu", weights_only=True)
        model.load_state_dict(state)
    return model


def _ovewrite_named_param(kwargs, name, value):
    if name in kwargs:
        if kwargs[name] != value:
            raise ValueError(f"The parameter '{name}' expected value {value} but got "
                             f"{kwargs[name]} instead.")
    else:
        kwargs[name] = value


def _register(fn):
    _BUILDERS[fn.__name__] = fn
    return fn


def list_models(module=None, include=None, exclude=None):
    """Names of the registered model builders, sorted."""
    import fnmatch
    names = sorted(_BUILDERS)
    if include is not None:
        pats = [include] if isinstance(include, str) else include
        names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in pats)]
    if exclude is not None:
        pats = [exclude] if isinstance(exclude, str) else exclude
        names = [n for n in names if not any(fnmatch.fnmatch(n, p) for p in pats)]
    return names


def get_model_builder(name):
    """The builder function registered under ``name``."""
    name = name.lower()
    try:
        return _BUILDERS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """Build the model registered under ``name`` with ``config`` (e.g. ``weights=None``)."""
    return get_model_builder(name)(**config)


def get_weight(name):
    """The weights enum member named like ``"ResNet50_Weights.IMAGENET1K_V2"``."""
    import importlib
    namespace = vars(importlib.import_module(__package__))
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    enum_cls = namespace.get(enum_name)
    if not (isinstance(enum_cls, type) and issubclass(enum_cls, WeightsEnum)):
        raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                         f"retrieved.")
    return enum_cls[value_name]
