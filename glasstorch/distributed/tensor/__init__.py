"""torch.distributed.tensor: DTensor, a tensor spread over a DeviceMesh by placements."""

from ..device_mesh import DeviceMesh, init_device_mesh
from ._api import DTensor, distribute_module, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module",
           "init_device_mesh", "Shard", "Replicate", "Partial", "Placement"]
