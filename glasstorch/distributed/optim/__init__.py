"""torch.distributed.optim: optimizers for data-parallel training."""

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
