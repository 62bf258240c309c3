"""dcp.load."""

from __future__ import annotations

import warnings

from ... import no_grad
from ..._tensor import Tensor
from .. import get_rank, is_initialized
from ._layout import DTensor, flatten, region
from .api import _failed
from .filesystem import _INDEX, FileSystemReader

__all__ = ["load", "load_state_dict"]


def _fill(target, offsets, key, reader, chunks):
    """Copy into ``target`` (the region at ``offsets`` of ``key``'s global tensor) every
    overlapping saved chunk."""
    sizes = tuple(target.shape)
    for name, chunk_offsets, chunk_shape in chunks:
        lo = [max(a, b) for a, b in zip(offsets, chunk_offsets)]
        hi = [min(a + n, b + m) for a, n, b, m in zip(offsets, sizes, chunk_offsets,
                                                      chunk_shape)]
        if any(h <= low for low, h in zip(lo, hi)):
            continue
        src = next(t for off, t in reader._read(name)[key] if tuple(off) == chunk_offsets)
        dst_index = tuple(slice(low - o, h - o) for low, h, o in zip(lo, hi, offsets))
        src_index = tuple(slice(low - o, h - o) for low, h, o in zip(lo, hi, chunk_offsets))
        target[dst_index] = src[src_index].to(target.dtype)


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Fill ``state_dict`` in place from ``checkpoint_id`` (a folder) or
    ``storage_reader``: tensors are copied into (each DTensor its own part), other values
    replaced. Every key of ``state_dict`` must be in the checkpoint."""
    if storage_reader is None:
        if checkpoint_id is None:
            raise RuntimeError("`checkpoint_id` must be specified if storage_reader is None.")
        storage_reader = FileSystemReader(checkpoint_id)
    try:
        _load(state_dict, storage_reader)
    except Exception as e:
        raise _failed(get_rank(process_group) if is_initialized() and not no_dist else 0,
                      e) from e


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """The deprecated form of ``load`` (``storage_reader`` required)."""
    warnings.warn("`load_state_dict` is deprecated and will be removed in future versions. "
                  "Please use `load` instead.", FutureWarning, stacklevel=2)
    load(state_dict, storage_reader=storage_reader, process_group=process_group,
         no_dist=no_dist, planner=planner)


def _load(state_dict, storage_reader):
    index = storage_reader._read(_INDEX)
    flat = flatten(state_dict)
    missing = [k for k in flat if k not in index]
    if missing:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {missing[0]}.")
    with no_grad():
        for key, value in flat.items():
            entry = index[key]
            if isinstance(value, Tensor) and tuple(entry["meta"][0]) != tuple(value.shape):
                raise RuntimeError(f"Size mismatch between saved {tuple(entry['meta'][0])} "
                                   f"and current: {tuple(value.shape)} for {key}")
            if isinstance(value, DTensor):
                offsets, _, _ = region(value)
                _fill(value.to_local(), offsets, key, storage_reader, entry["chunks"])
            elif isinstance(value, Tensor):
                _fill(value, (0,) * value.ndim, key, storage_reader, entry["chunks"])
            else:
                name = entry["chunks"][0][0]
                _set(state_dict, key, storage_reader._read(name)[key])


def _set(state, dotted, value):
    """Replace the value at a dotted key of the nested ``state``."""
    if dotted in state:
        state[dotted] = value
        return
    head, _, rest = dotted.partition(".")
    while head not in state:
        more, _, rest = rest.partition(".")
        head = f"{head}.{more}"
    _set(state[head], rest, value)
