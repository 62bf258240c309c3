"""Flatten parameters into one vector and write a vector back into parameters."""

from __future__ import annotations

import glasstorch as torch

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, old_device):
    # Every glasstorch tensor lives on the CPU (device index -1), so devices always agree.
    return -1 if old_device is None else old_device


def parameters_to_vector(parameters):
    """Concatenate the flattened ``parameters`` into one 1-D tensor (differentiable)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_same_device(param, device)
        vec.append(param.view(-1))
    return torch.cat(vec)


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of ``vec`` (shaped like the parameter)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
