"""torch.distributed.fsdp: FullyShardedDataParallel (FSDP1) and fully_shard (FSDP2)."""

from ._fully_shard import FSDPModule, UnshardHandle, fully_shard, register_fsdp_forward_method
from .api import (
    BackwardPrefetch,
    CPUOffload,
    CPUOffloadPolicy,
    FullStateDictConfig,
    MixedPrecision,
    MixedPrecisionPolicy,
    OffloadPolicy,
    ShardingStrategy,
    StateDictType,
)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType",
           "FullStateDictConfig", "BackwardPrefetch", "CPUOffload", "MixedPrecision",
           "fully_shard", "FSDPModule", "UnshardHandle", "register_fsdp_forward_method",
           "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy"]
