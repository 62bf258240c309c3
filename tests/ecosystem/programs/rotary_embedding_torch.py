"""rotary-embedding-torch: rotary position embeddings on queries and keys."""

from importlib.metadata import version as _dist_version

import torch
from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb

from .._support import case, randn


def version():
    """The version of the library under test."""
    return _dist_version("rotary-embedding-torch")


@case
def rotate(ctx):
    """rotate_queries_or_keys, the cached key rotation with an offset, xpos, and gradients."""
    rot = RotaryEmbedding(dim=8)
    q = randn(0, 2, 3, 6, 16).requires_grad_()
    k = randn(1, 2, 3, 6, 16)
    rq = rot.rotate_queries_or_keys(q)
    rk = rot.rotate_queries_or_keys(k, offset=2)
    xpos = RotaryEmbedding(dim=8, use_xpos=True)
    xq, xk = xpos.rotate_queries_and_keys(q, k)
    freqs = rot(torch.arange(6))
    manual = apply_rotary_emb(freqs, k)
    loss = (rq * rk).sum() + (xq * xk).sum()
    loss.backward()
    return {"rq": rq, "rk": rk, "xq": xq, "xk": xk, "manual": manual, "grad.q": q.grad}


@case
def axial(ctx):
    """Pixel (axial) rotary frequencies for a 2-D grid, as vision transformers use them."""
    rot = RotaryEmbedding(dim=8, freqs_for="pixel", max_freq=32)
    freqs = rot.get_axial_freqs(4, 5)
    x = randn(2, 1, 4, 5, 32)
    return {"freqs": freqs, "rotated": apply_rotary_emb(freqs, x)}
