"""Where a rank's part of a DTensor lies in the global tensor."""

from __future__ import annotations

from ._api import _chunk_bounds
from .placement_types import Shard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """``(local_shape, global_offset)``: the shape of this rank's part of a tensor of
    ``global_shape`` placed on ``mesh`` by ``placements``, and the index of its first element
    in the global tensor (``()`` with ``skip_offset``). A rank outside the mesh holds
    nothing: ``((0,), ())``."""
    if mesh.get_coordinate() is None:
        return (0,), ()
    sizes, offsets = list(global_shape), [0] * len(global_shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            start, length = _chunk_bounds(sizes[p.dim], mesh.size(i), mesh.get_local_rank(i))
            offsets[p.dim] += start
            sizes[p.dim] = length
    return tuple(sizes), () if skip_offset else tuple(offsets)
