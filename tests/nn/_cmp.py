"""Shared helper for the conv/pooling/vision tests: run one function in both libraries."""

from __future__ import annotations

import numpy as np
import torch

import glasstorch

# torch's intra-op thread pool makes these tiny convolutions ~20x slower; one thread is
# plenty for test-sized inputs (ideally tests/conftest.py would set this for the session)
torch.set_num_threads(1)


def compare_fn(fn_t, fn_g, arrays, rng, tol=1e-5, grad=True):
    """Call ``fn_t`` on torch tensors and ``fn_g`` on glasstorch tensors made from ``arrays``;
    compare values, dtype, grad_fn names, and input gradients for a random upstream gradient.
    A tuple result compares its second item exactly (pooling indices)."""
    tx = [torch.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    gx = [glasstorch.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    yt, yg = fn_t(*tx), fn_g(*gx)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(yg[1].numpy(), yt[1].numpy())
        yt, yg = yt[0], yg[0]
    assert tuple(yg.shape) == tuple(yt.shape)
    assert str(yg.dtype) == str(yt.dtype)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    if not grad:
        return
    assert yg.grad_fn.name() == yt.grad_fn.name()
    w = rng.standard_normal(tuple(yt.shape)).astype(arrays[0].dtype)
    (yt * torch.from_numpy(w)).sum().backward()
    (yg * glasstorch.from_numpy(w)).sum().backward()
    for a, b in zip(gx, tx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
