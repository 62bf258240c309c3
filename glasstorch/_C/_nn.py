"""glasstorch._C._nn: the argument parser of ``Tensor.to``/``Module.to`` (``_parse_to``),
which lightning and accelerate call to read a ``.to(...)`` call's device and dtype."""

from __future__ import annotations

from .._core import dtype as _dt
from .._core.device import device as _device
from .._tensor import Tensor

_MISSING = object()
_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)")


def _describe(args, kwargs):
    def kind(v):
        if isinstance(v, _dt.dtype):
            return "torch.dtype"
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__
    parts = [kind(a) for a in args] + [f"{k}={kind(v)}" for k, v in kwargs.items()]
    return ", ".join(parts) if args else ", ".join(parts) + ", "


def _is_device(v):
    return v is None or isinstance(v, (str, _device)) or (isinstance(v, int)
                                                          and not isinstance(v, bool))


def _bind(names, first_ok, args, kwargs):
    """Bind ``args``/``kwargs`` to the positional ``names``; None when they do not fit."""
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound or (k not in names and k != "memory_format"):
            return None
        bound[k] = v
    if names[0] not in bound and not first_ok:
        return None
    return bound


def _parse_to(*args, **kwargs):
    """Parse the arguments of a ``.to(...)`` call as torch does: returns ``(device, dtype,
    non_blocking, memory_format)``, each None (or False) when not given. Accepts torch's three
    forms: ``(device=None, dtype=None, non_blocking=False)``, ``(dtype, non_blocking=False)``
    and ``(tensor, non_blocking=False)`` (the tensor's device and dtype)."""
    forms = (
        (("device", "dtype", "non_blocking", "copy"), True,
         lambda b: _is_device(b.get("device")) and (b.get("dtype") is None
                                                    or isinstance(b["dtype"], _dt.dtype))),
        (("dtype", "non_blocking", "copy"), False,
         lambda b: isinstance(b["dtype"], _dt.dtype)),
        (("tensor", "non_blocking", "copy"), False,
         lambda b: isinstance(b["tensor"], Tensor)),
    )
    for names, first_optional, fits in forms:
        bound = _bind(names, first_optional, args, kwargs)
        if bound is None or not fits(bound) or not all(
                isinstance(bound.get(flag, False), bool) for flag in ("non_blocking", "copy")):
            continue
        if "copy" in bound:
            raise RuntimeError(".to() does not accept copy argument")
        if "tensor" in bound:
            device, dtype = bound["tensor"].device, bound["tensor"].dtype
        else:
            device, dtype = bound.get("device"), bound.get("dtype")
            if isinstance(device, int) and not isinstance(device, bool):
                # a bare index names the current accelerator, and there is none
                raise RuntimeError("Cannot access accelerator device when none is available.")
            if device is not None and not isinstance(device, _device):
                device = _device(device)
        return device, dtype, bool(bound.get("non_blocking", False)), bound.get("memory_format")
    raise TypeError(f"to() received an invalid combination of arguments - got "
                    f"({_describe(args, kwargs)}), but expected one of:\n{_SIGNATURES}")
