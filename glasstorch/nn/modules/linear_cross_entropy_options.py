"""Options of LinearCrossEntropyLoss / F.linear_cross_entropy's chunked evaluation."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LinearCrossEntropyOptions"]


@dataclass
class LinearCrossEntropyOptions:
    """How torch chunks the projection and the loss to save memory (batch chunk size,
    chunking method, accumulation policy and dtype). The values change memory use, not the
    loss: glasstorch records them and computes the reference formula."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None
