"""torch.distributed.fsdp: FullyShardedDataParallel."""

from .api import (
    BackwardPrefetch,
    CPUOffload,
    FullStateDictConfig,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType",
           "FullStateDictConfig", "BackwardPrefetch", "CPUOffload", "MixedPrecision"]
