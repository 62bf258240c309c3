"""dcp.save."""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from .. import all_gather_object, barrier, get_rank, get_world_size, is_initialized
from ._layout import DTensor, flatten, region, without_partial
from .filesystem import _INDEX, FileSystemWriter

__all__ = ["save", "save_state_dict"]


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False):
    """Save ``state_dict`` (nested dicts of tensors, DTensors and picklable objects) into
    ``checkpoint_id`` (a folder) or ``storage_writer``; every rank of the group calls it."""
    if storage_writer is None:
        if checkpoint_id is None:
            raise RuntimeError("`checkpoint_id` must be specified if storage_writer is None.")
        storage_writer = FileSystemWriter(checkpoint_id)
    dist = is_initialized() and not no_dist
    rank = get_rank(process_group) if dist else 0
    chunks, entries = {}, {}
    for key, value in flatten(state_dict).items():
        if isinstance(value, DTensor):
            value = without_partial(value)
            offsets, _, writes = region(value)
            entries[key] = ("dtensor", tuple(value.shape), value.dtype)
            if writes:
                chunks[key] = [(offsets, value.to_local().detach().clone())]
        elif isinstance(value, Tensor):
            entries[key] = ("tensor", tuple(value.shape), value.dtype)
            if rank == 0:
                chunks[key] = [((0,) * value.ndim, value.detach().clone())]
        else:
            entries[key] = ("object",)
            if rank == 0:
                chunks[key] = value
    name = f"__{rank}_0.distcp"
    storage_writer._write(name, chunks)
    spans = {key: [(name, off, tuple(t.shape)) for off, t in parts]
             for key, parts in chunks.items() if entries[key][0] != "object"}
    gathered = [spans]
    if dist:
        gathered = [None] * get_world_size(process_group)
        all_gather_object(gathered, spans, group=process_group)
    if rank == 0:
        index = {key: {"kind": entry[0], "meta": entry[1:], "chunks": []}
                 for key, entry in entries.items()}
        for spans_of_rank in gathered:
            for key, parts in spans_of_rank.items():
                index[key]["chunks"] += parts
        for key in index:
            if index[key]["kind"] == "object":
                index[key]["chunks"] = [(name, None, None)]
        storage_writer._write(_INDEX, index)
    if dist:
        barrier(group=process_group)         # the checkpoint is whole when save returns



def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """The deprecated form of ``save`` (``storage_writer`` required)."""
    warnings.warn("`save_state_dict` is deprecated and will be removed in future versions."
                  "Please use `save` instead.", FutureWarning, stacklevel=2)
    save(state_dict, storage_writer=storage_writer, process_group=process_group,
         no_dist=no_dist, planner=planner)
