"""Which region of a global tensor a rank holds, and the flattening of nested state."""

from __future__ import annotations

from ..tensor import DTensor, Partial, Replicate
from ..tensor._utils import compute_local_shape_and_global_offset

__all__ = ["flatten", "region", "without_partial", "DTensor"]


def flatten(state, prefix=""):
    """Nested dicts as one dict of dotted keys."""
    out = {}
    for key, value in state.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def region(dt):
    """This rank's (offsets, sizes) in ``dt``'s global tensor, and whether it is the one
    rank (coordinate 0 along every replicated mesh dimension) that writes it."""
    mesh = dt.device_mesh
    sizes, offsets = compute_local_shape_and_global_offset(dt.shape, mesh, dt.placements)
    writer = all(mesh.get_local_rank(i) == 0 for i, p in enumerate(dt.placements)
                 if isinstance(p, (Replicate, Partial)))
    return offsets, sizes, writer


def without_partial(dt):
    """``dt`` with its partial placements reduced (a checkpoint holds values)."""
    if any(isinstance(p, Partial) for p in dt.placements):
        return dt.redistribute(placements=[Replicate() if isinstance(p, Partial) else p
                                           for p in dt.placements])
    return dt

