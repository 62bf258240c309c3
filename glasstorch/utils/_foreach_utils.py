"""Helpers optimizers use to pick and feed ``_foreach_*`` code paths, as
``torch.utils._foreach_utils``. The answers are torch's answers on a CPU build: foreach works
on CPU tensors (glasstorch's ``_foreach_*`` ops apply the single-tensor op to each tensor)."""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

# torch's name for an out-of-tree backend until one renames it
_PRIVATEUSE1 = "privateuseone"
_foreach_supported_types = [Tensor]


def _get_foreach_kernels_supported_devices():
    """Device types with dedicated (multi-tensor) foreach kernels."""
    return ["cuda", "xpu", "mtia", _PRIVATEUSE1]


def _get_fused_kernels_supported_devices():
    """Device types that have fused optimizer kernels."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", _PRIVATEUSE1]


@no_grad()
def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """Split parallel tensor lists into groups sharing the (device, dtype) of the first list's
    tensor: ``{(device, dtype): ([list per input list...], indices)}``. ``indices`` are the
    positions in the original lists when ``with_indices`` (else empty). Other lists may hold
    None (or be empty); the grouped lists hold the same tensor objects, so in-place updates
    reach the originals."""
    if not isinstance(tensorlistlist, (list, tuple)) or not all(
            isinstance(tl, (list, tuple)) for tl in tensorlistlist):
        raise TypeError("_group_tensors_by_device_and_dtype(): expected a sequence of "
                        "sequences of Tensors (or None)")
    if not tensorlistlist:
        raise RuntimeError("_group_tensors_by_device_and_dtype: expected at least one tensor "
                           "list, got none")
    first = tensorlistlist[0]
    if not first:
        raise RuntimeError("_group_tensors_by_device_and_dtype: the first tensor list is empty")
    n = len(first)
    for tl in tensorlistlist:
        if len(tl) not in (n, 0):
            raise RuntimeError(f"_group_tensors_by_device_and_dtype: every tensor list must hold "
                               f"{n} tensors (as the first) or none, got one with {len(tl)}")
        for t in tl:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"_group_tensors_by_device_and_dtype: expected Tensors or None, "
                                f"got {type(t).__name__}")
    groups = {}
    for i, t in enumerate(first):
        if t is None:
            raise RuntimeError(f"Tensors of the first list of nested Tensor lists are supposed "
                               f"to be defined but the {i}-th Tensor is not.")
        key = (t.device, t.dtype)
        group = groups.get(key)
        if group is None:
            group = groups[key] = ([[] for _ in tensorlistlist], [])
        for out, tl in zip(group[0], tensorlistlist):
            if tl:
                out.append(tl[i])
        if with_indices:
            group[1].append(i)
    return groups


def _device_has_foreach_support(device):
    """Whether ``_foreach_*`` ops may be used for tensors on ``device`` (CPU included)."""
    from .. import jit
    return device.type in _get_foreach_kernels_supported_devices() + ["cpu"] and \
        not jit.is_scripting()


def _has_foreach_support(tensors, device):
    """Whether ``tensors`` (on ``device``) may go through ``_foreach_*`` ops: the device
    supports them and every tensor is exactly a Tensor (or None); subclasses such as
    Parameter are excluded, as in torch."""
    return _device_has_foreach_support(device) and all(
        t is None or type(t) in _foreach_supported_types for t in tensors)
