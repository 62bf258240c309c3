"""Helpers for nn tests: copy weights from a torch module, compare outputs and gradients."""

from __future__ import annotations

import numpy as np

import glasstorch


def to_gt(t):
    """A glasstorch tensor with the values (and dtype) of a torch tensor."""
    import torch
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return glasstorch.from_numpy(t.float().numpy().copy()).to(glasstorch.bfloat16)
    return glasstorch.from_numpy(t.numpy().copy())


def to_np(t):
    """float64 (or bool/int) NumPy values of a torch or glasstorch tensor."""
    t = t.detach()
    if "bfloat16" in str(t.dtype):
        t = t.float()
    a = t.numpy()
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def copy_weights(gt_module, torch_module):
    """Make ``gt_module``'s parameters and buffers equal to ``torch_module``'s.

    Names must match (they do when the module mirrors torch's); raises KeyError otherwise.
    """
    gt_state = dict(gt_module.named_parameters())
    gt_state.update(dict(gt_module.named_buffers()))
    torch_state = dict(torch_module.named_parameters())
    torch_state.update(dict(torch_module.named_buffers()))
    missing = set(torch_state) ^ set(gt_state)
    if missing:
        raise KeyError(f"parameter/buffer names differ: {sorted(missing)}")
    with glasstorch.no_grad():
        for name, t in torch_state.items():
            gt_state[name].copy_(to_gt(t))


def assert_close(ours, theirs, rtol=1e-5, atol=1e-6, msg=""):
    np.testing.assert_allclose(to_np(ours), to_np(theirs), rtol=rtol, atol=atol, err_msg=msg)


def compare_module(gt_module, torch_module, *inputs, rtol=1e-5, atol=1e-5, seed=0,
                   copy=True, grad_inputs=True):
    """Copy weights, run both modules on the same inputs (NumPy arrays), backprop the same
    random upstream gradient, and compare outputs, input gradients and parameter gradients.
    Returns (gt_output, torch_output)."""
    import torch
    if copy:
        copy_weights(gt_module, torch_module)
    rng = np.random.default_rng(seed)
    t_in, g_in = [], []
    for x in inputs:
        if isinstance(x, np.ndarray):
            tt = torch.from_numpy(x.copy())
            gg = glasstorch.from_numpy(x.copy())
            if grad_inputs and x.dtype.kind == "f":
                tt.requires_grad_()
                gg.requires_grad_()
            t_in.append(tt)
            g_in.append(gg)
        else:
            t_in.append(x)
            g_in.append(x)
    t_out = torch_module(*t_in)
    g_out = gt_module(*g_in)
    t_flat = _flatten(t_out)
    g_flat = _flatten(g_out)
    assert len(t_flat) == len(g_flat), "different number of outputs"
    for i, (g, t) in enumerate(zip(g_flat, t_flat)):
        assert tuple(g.shape) == tuple(t.shape), f"output {i}: {g.shape} != {t.shape}"
        assert str(g.dtype) == str(t.dtype), f"output {i}: {g.dtype} != {t.dtype}"
        assert_close(g, t, rtol, atol, f"output {i}")
    diff = [(g, t) for g, t in zip(g_flat, t_flat) if t.requires_grad]
    if diff:
        weights = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for _, t in diff]
        t_loss = sum((t * torch.from_numpy(w).to(t.dtype)).sum() for (_, t), w in
                     zip(diff, weights))
        g_loss = sum((g * glasstorch.from_numpy(w).to(g.dtype)).sum() for (g, _), w in
                     zip(diff, weights))
        t_loss.backward()
        g_loss.backward()
        for i, (g, t) in enumerate(zip(g_in, t_in)):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                assert (g.grad is None) == (t.grad is None), f"input {i} grad presence"
                if t.grad is not None:
                    assert_close(g.grad, t.grad, rtol, atol, f"grad of input {i}")
        g_params = dict(gt_module.named_parameters())
        for name, p in torch_module.named_parameters():
            if p.grad is None:
                assert g_params[name].grad is None, f"{name}: unexpected grad"
            else:
                assert g_params[name].grad is not None, f"{name}: missing grad"
                assert_close(g_params[name].grad, p.grad, rtol, atol, f"grad of {name}")
    return g_out, t_out


def _flatten(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flatten(o))
        return res
    return [out] if hasattr(out, "shape") else []
