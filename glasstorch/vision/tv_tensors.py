"""tv_tensors (torchvision.tv_tensors): Tensor subclasses that tell transforms.v2 what a tensor
holds, so one call can flip an image together with its boxes and masks.

As in torchvision, operations on a TVTensor return plain tensors (``img + 1``, ``img[0]``,
``img.flip(-1)``, in-place ops too), except ``clone``, ``to``, ``detach`` and
``requires_grad_``, which keep the type and the metadata. The transforms.v2 functionals keep
the type of what they are given.

>>> import glasstorch
>>> from glasstorch.vision import tv_tensors
>>> boxes = tv_tensors.BoundingBoxes([[1, 2, 5, 6]], format="XYXY", canvas_size=(8, 10))
>>> boxes.canvas_size, type(boxes + 1).__name__, type(boxes.clone()).__name__
((8, 10), 'Tensor', 'BoundingBoxes')
"""
from enum import Enum

import glasstorch
from glasstorch import Tensor
from glasstorch.overrides import _disabled_torch_function_impl

from ._pil import is_pil

__all__ = ["TVTensor", "Image", "Video", "Mask", "BoundingBoxes", "BoundingBoxFormat", "wrap"]


def _as_subclass(tensor, cls):
    """An alias of ``tensor`` (same storage, gradient flowing through) of class ``cls``."""
    out = Tensor.__getitem__(tensor, ...)
    out.__class__ = cls
    return out


def _to_tensor(data, dtype, device, requires_grad):
    if is_pil(data):
        from .transforms.functional import pil_to_tensor
        data = pil_to_tensor(data)
    if requires_grad is None:
        requires_grad = data.requires_grad if isinstance(data, Tensor) else False
    return glasstorch.as_tensor(data, dtype=dtype, device=device).requires_grad_(requires_grad)


def _plain_if_self(method):
    # torchvision's rule: a TVTensor method that hands back the tensor itself (in-place ops,
    # no-op conversions) returns it as a plain Tensor sharing the storage
    def call(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        return Tensor.__getitem__(out, ...) if out is self else out
    call.__name__, call.__qualname__, call.__doc__ = method.__name__, method.__name__, \
        method.__doc__
    return call


def _keeping_type(method):
    # clone / to / detach keep the subclass and its metadata, as torchvision forces them to
    def call(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        if out is self:
            return out
        return type(self).wrap(out, like=self)
    call.__name__, call.__qualname__, call.__doc__ = method.__name__, method.__name__, \
        method.__doc__
    return call


_IN_PLACE_DUNDERS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                     "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                     "__irshift__")
_NO_OP_CONVERSIONS = ("contiguous", "float", "double", "half", "bfloat16", "int", "long", "short",
                      "char", "byte", "bool", "cpu", "cuda", "type", "type_as")
_KEEP_TYPE = ("clone", "to", "detach")


class TVTensor(Tensor):
    """Base class of the tv_tensors: a Tensor whose type says what it holds."""

    _metadata = ()  # names of the attributes ``wrap`` carries over
    # torchvision's types come from the method overrides below, not from __torch_function__
    # (whose default would keep the subclass through every op): tv_tensors take no part in
    # dispatch, so building them does not put every op on the dispatch path.
    __torch_function__ = _disabled_torch_function_impl

    @classmethod
    def wrap(cls, tensor, like, **kwargs):
        """``tensor`` as a ``cls`` (sharing its storage), with ``like``'s metadata unless
        overridden by ``kwargs``."""
        return _as_subclass(tensor, cls)

    def __reduce_ex__(self, proto):
        # pickles as the subclass with its metadata (DataLoader workers send samples this way)
        state = {name: getattr(self, name) for name in self._metadata}
        return (_rebuild_tv_tensor, (type(self), Tensor.__getitem__(self, ...), state))

    def _tensor_repr(self):
        return Tensor.__repr__(self)  # with the class name in place of "tensor", as torch

    def _make_repr(self, **fields):
        extra = ", ".join(f"{key}={value}" for key, value in fields.items())
        return f"{self._tensor_repr()[:-1]}, {extra})"

    def __repr__(self, *, tensor_contents=None):
        return self._tensor_repr()

    __str__ = __repr__


def _override_methods():
    in_place = [name for name in vars(Tensor) if name.endswith("_") and not name.startswith("_")
                and name != "requires_grad_"]
    for name in in_place + [n for n in _IN_PLACE_DUNDERS + _NO_OP_CONVERSIONS
                            if n in vars(Tensor)]:
        setattr(TVTensor, name, _plain_if_self(getattr(Tensor, name)))
    for name in _KEEP_TYPE:
        setattr(TVTensor, name, _keeping_type(getattr(Tensor, name)))


_override_methods()


def _rebuild_tv_tensor(cls, tensor, state):
    out = _as_subclass(tensor, cls)
    out.__dict__.update(state)
    return out


class Image(TVTensor):
    """An image or a batch of images, ``[..., C, H, W]``; a 2-D input gains a channel dim.

    ``data`` is anything ``glasstorch.as_tensor`` takes, or a PIL image.
    """

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = _to_tensor(data, dtype, device, requires_grad)
        if tensor.ndim < 2:
            raise ValueError(f"Tensor must be 2D or higher, got {tensor.ndim}D tensor.")
        if tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        return _as_subclass(tensor, cls)

    def __repr__(self, *, tensor_contents=None):
        return self._make_repr()

    __str__ = __repr__


class Video(TVTensor):
    """A video or a batch of videos, ``[..., T, C, H, W]``."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        tensor = _to_tensor(data, dtype, device, requires_grad)
        if tensor.ndim < 4:
            raise ValueError(f"Video tensors must be 4D or higher ([..., T, C, H, W]), got "
                             f"{tensor.ndim}D tensor.")
        return _as_subclass(tensor, cls)

    def __repr__(self, *, tensor_contents=None):
        return self._make_repr()

    __str__ = __repr__


class Mask(TVTensor):
    """Segmentation or detection masks, ``[..., H, W]`` (transformed with nearest sampling)."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        return _as_subclass(_to_tensor(data, dtype, device, requires_grad), cls)


class BoundingBoxFormat(Enum):
    """How the four numbers of a box are laid out: corners (``XYXY``), top-left corner and size
    (``XYWH``) or centre and size (``CXCYWH``)."""

    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"


_CLAMPING_MODES = (None, "soft", "hard")


class BoundingBoxes(TVTensor):
    """``[N, 4]`` boxes in ``format`` on an image of ``canvas_size`` (height, width).

    ``clamping_mode`` ("soft", "hard" or None) says whether geometric transforms clamp the boxes
    to the canvas; "soft" and "hard" both clamp (they differ for rotated boxes only, which are
    not supported).
    """

    _metadata = ("format", "canvas_size", "clamping_mode")

    @classmethod
    def _wrap(cls, tensor, *, format, canvas_size, clamping_mode="soft", check_dims=True):
        if check_dims:
            if tensor.ndim == 1:
                tensor = tensor.unsqueeze(0)
            elif tensor.ndim != 2:
                raise ValueError(f"Expected a 1D or 2D tensor, got {tensor.ndim}D")
        if clamping_mode not in _CLAMPING_MODES:
            raise ValueError(f"clamping_mode must be None, hard or soft, got {clamping_mode}.")
        if isinstance(format, str):
            format = BoundingBoxFormat[format.upper()]
        boxes = _as_subclass(tensor, cls)
        boxes.format, boxes.canvas_size, boxes.clamping_mode = format, canvas_size, clamping_mode
        return boxes

    @classmethod
    def wrap(cls, tensor, like, **kwargs):
        """``tensor`` as boxes with ``like``'s format, canvas_size and clamping_mode, unless
        given in ``kwargs``."""
        return cls._wrap(tensor, **{name: kwargs.get(name, getattr(like, name))
                                    for name in cls._metadata})

    def __new__(cls, data, *, format, canvas_size, clamping_mode="soft", dtype=None,
                device=None, requires_grad=None):
        tensor = _to_tensor(data, dtype, device, requires_grad)
        return cls._wrap(tensor, format=format, canvas_size=canvas_size,
                         clamping_mode=clamping_mode)

    def __repr__(self, *, tensor_contents=None):
        return self._make_repr(format=self.format, canvas_size=self.canvas_size,
                               clamping_mode=self.clamping_mode)

    __str__ = __repr__


def wrap(wrappee, *, like, **kwargs):
    """``wrappee`` as the same TVTensor class as ``like``, with its metadata (``kwargs``
    override single fields, e.g. ``canvas_size=(h, w)`` for boxes).

    >>> import glasstorch
    >>> from glasstorch.vision import tv_tensors
    >>> img = tv_tensors.Image(glasstorch.zeros(3, 4, 4))
    >>> type(tv_tensors.wrap(img.flip(-1), like=img)).__name__
    'Image'
    """
    return type(like).wrap(wrappee, like=like, **kwargs)
