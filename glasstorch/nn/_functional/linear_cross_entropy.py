"""linear_cross_entropy: cross entropy of a linear projection's logits."""

from __future__ import annotations

from .basic import linear
from .loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``.

    ``linear_weight`` is (C, in) or (C, d_1, ..., d_K, in) for a K-dimensional loss.
    ``options`` (a LinearCrossEntropyOptions) tunes torch's chunked evaluation, which saves
    memory without changing the result; glasstorch always evaluates the reference formula.
    """
    classes = tuple(linear_weight.shape[:-1])
    logits = linear(input, linear_weight.reshape(-1, linear_weight.shape[-1]),
                    None if linear_bias is None else linear_bias.reshape(-1))
    if len(classes) > 1:  # (N, C * d_1 ... d_K) -> (N, C, d_1, ..., d_K)
        logits = logits.reshape(tuple(logits.shape[:-1]) + classes)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
