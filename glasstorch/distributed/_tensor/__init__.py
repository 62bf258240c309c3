"""torch.distributed._tensor: the older import path of torch.distributed.tensor."""

from ..tensor import (
    DeviceMesh,
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
    init_device_mesh,
)

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module",
           "init_device_mesh", "Shard", "Replicate", "Partial", "Placement"]
