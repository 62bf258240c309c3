"""torch.distributed.device_mesh: ranks laid out as an n-D array, one process group per
mesh dimension (the ranks that differ only in that coordinate)."""

from __future__ import annotations

import math

import numpy as np

from .. import int32
from .. import tensor as _tensor
from . import get_rank, get_world_size, init_process_group, is_initialized, new_group

__all__ = ["DeviceMesh", "init_device_mesh"]

_current = []     # meshes entered with ``with mesh:``, innermost last


class DeviceMesh:
    """The ranks ``mesh`` (an array of global ranks) on devices of ``device_type``, with
    optional ``mesh_dim_names``. Every rank of the default group builds the same mesh; each
    gets the process groups of its own row along every dimension. ``mesh["tp"]`` is the 1-D
    mesh along dimension "tp" through this rank; ``with mesh:`` makes it the default of
    ``distribute_tensor``."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None,
                 _init_backend=True, _groups=None):
        self.device_type = str(device_type)
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        self._ranks = ranks
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim:
                raise RuntimeError(f"mesh_dim_names {mesh_dim_names} should have the same "
                                   f"length as mesh shape {ranks.shape}")
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(f"Each mesh_dim_name must be unique, got {mesh_dim_names}")
        self.mesh_dim_names = mesh_dim_names
        if not is_initialized():
            init_process_group()
        if ranks.size > get_world_size():
            raise RuntimeError(f"Mesh should not be bigger than default world size "
                               f"{get_world_size()}, but found {ranks.size} ranks!")
        me = get_rank()
        where = np.argwhere(ranks == me)
        self._coordinate = tuple(int(c) for c in where[0]) if len(where) else None
        self._groups = _groups if _groups is not None else [
            self._make_group(d) for d in range(ranks.ndim)]

    def _make_group(self, dim):
        """Every rank creates every row's group along ``dim`` (group creation is
        collective); each keeps the one of its own row."""
        rows = np.moveaxis(self._ranks, dim, -1).reshape(-1, self._ranks.shape[dim])
        mine = None
        for row in rows:
            row = row.tolist()
            if row == list(range(get_world_size())):
                g = None                      # the whole world: the default group
            else:
                g = new_group(row)
            if get_rank() in row:
                mine = g
        return mine

    @property
    def mesh(self):
        """The global ranks, as an int32 tensor shaped like the mesh."""
        return _tensor(self._ranks.tolist(), dtype=int32)

    @property
    def shape(self) -> tuple:
        """The mesh's shape (ranks along each mesh dimension)."""
        return tuple(self._ranks.shape)

    @property
    def ndim(self) -> int:
        """The number of mesh dimensions."""
        return self._ranks.ndim

    def size(self, mesh_dim=None) -> int:
        """The number of ranks (along ``mesh_dim`` if given)."""
        return self._ranks.size if mesh_dim is None else self._ranks.shape[mesh_dim]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """The process group along ``mesh_dim`` (an index or a name; needed when ndim > 1)."""
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(
                    f"Found the DeviceMesh have {self.ndim} dimensions. Optional kwarg "
                    f"`mesh_dim` needs to be specified when device_mesh.ndim > 1. If you want "
                    f"to get the list of all the ProcessGroups in the DeviceMesh, please use "
                    f"`get_all_groups()` instead.")
            mesh_dim = 0
        from . import group
        g = self._groups[self._dim(mesh_dim)]
        return group.WORLD if g is None else g

    def get_all_groups(self) -> list:
        """The process group of every mesh dimension."""
        return [self.get_group(d) for d in range(self.ndim)]

    def get_rank(self) -> int:
        """This process's global rank."""
        return get_rank()

    def get_local_rank(self, mesh_dim=None) -> int:
        """This rank's coordinate along ``mesh_dim`` (needed when ndim > 1)."""
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(
                    f"Found the DeviceMesh have {self.ndim} dimensions. Optional kwarg "
                    f"`mesh_dim` needs to be specified when device_mesh.ndim > 1.")
            mesh_dim = 0
        return self._coordinate[self._dim(mesh_dim)]

    def get_coordinate(self):
        """This rank's coordinates in the mesh (None if it is not in it)."""
        return None if self._coordinate is None else tuple(self._coordinate)

    def __getitem__(self, names):
        """The sub-mesh along the named dimension(s) through this rank."""
        if not self.mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (names,) if isinstance(names, str) else tuple(names)
        dims = [self._dim(n) for n in names]
        index = tuple(slice(None) if d in dims else self._coordinate[d]
                      for d in range(self.ndim))
        sub = np.transpose(self._ranks[index], np.argsort(np.argsort(dims))) \
            if len(dims) > 1 else self._ranks[index]
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def __enter__(self):
        _current.append(self)
        return self

    def __exit__(self, *exc):
        _current.pop()

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self.device_type == other.device_type
                and self._ranks.shape == other._ranks.shape
                and bool((self._ranks == other._ranks).all())
                and self.mesh_dim_names == other.mesh_dim_names)

    def __hash__(self):
        return hash((self.device_type, self._ranks.tobytes(), self._ranks.shape,
                     self.mesh_dim_names))

    def __repr__(self):
        strides = tuple(s // self._ranks.itemsize for s in self._ranks.strides)
        if self.mesh_dim_names:
            layout = ", ".join(f"{n}={s}" for n, s in zip(self.mesh_dim_names, self.shape))
            return f"DeviceMesh(({layout}), '{self.device_type}', stride={strides})"
        return f"DeviceMesh({self.shape}, '{self.device_type}', stride={strides})"


def _current_mesh():
    if not _current:
        raise RuntimeError("No device mesh is currently active!")
    return _current[-1]


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """The DeviceMesh of ``math.prod(mesh_shape)`` ranks (all of the default group's, which
    is initialized if it is not yet), laid out row-major in ``mesh_shape``."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None and len(mesh_dim_names) != len(mesh_shape):
        raise RuntimeError("mesh_shape and mesh_dim_names should have same length!")
    if device_type.startswith("cuda"):
        raise RuntimeError("init_device_mesh: glasstorch has no CUDA devices; use 'cpu'")
    n = math.prod(mesh_shape)
    ranks = np.arange(n).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
