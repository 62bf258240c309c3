"""The options of FullyShardedDataParallel."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["ShardingStrategy", "StateDictType", "FullStateDictConfig", "BackwardPrefetch",
           "CPUOffload", "MixedPrecision", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]


class ShardingStrategy(enum.Enum):
    """FULL_SHARD: parameters, gradients and optimizer state sharded, the full parameters
    gathered for forward and again for backward; SHARD_GRAD_OP: the full parameters kept
    from forward to backward; NO_SHARD: every rank holds everything (DDP); the HYBRID
    strategies shard within a node and replicate across nodes."""
    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class StateDictType(enum.Enum):
    """What ``state_dict()`` of an FSDP module holds."""
    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


class BackwardPrefetch(enum.Enum):
    """When the next all-gather starts during backward (one process per rank on CPU: the
    gathers run when needed either way)."""
    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


@dataclass
class FullStateDictConfig:
    """``rank0_only``: only rank 0 gets the (full) state dict, the others an empty one."""
    offload_to_cpu: bool = False
    rank0_only: bool = False


@dataclass
class CPUOffload:
    """Keep the parameters on the CPU between uses (they always are here)."""
    offload_params: bool = False


@dataclass
class MixedPrecision:
    """Dtypes for the gathered parameters, the gradient reduction and the buffers."""
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """fully_shard's dtypes: of the gathered parameters (``param_dtype``), of the gradient
    reduce-scatter (``reduce_dtype``, default ``param_dtype``), of forward's output
    (``output_dtype``); ``cast_forward_inputs`` casts floating inputs to ``param_dtype``."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """fully_shard's default: the sharded parameters stay where they are (the CPU here)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep the sharded parameters on the CPU (they always are here)."""
    pin_memory: bool = True
