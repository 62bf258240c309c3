"""Weight normalisation: the ``w = g * v / ||v||`` kernel and the legacy hook-based API.

``_weight_norm`` / ``norm_except_dim`` are the kernels torch exposes as
``torch._weight_norm`` and ``torch.norm_except_dim``; the parametrization in
``parametrizations.weight_norm`` uses them too. The hook-based ``weight_norm``
below is torch's deprecated API (``weight_g``/``weight_v`` parameters plus a
forward pre-hook that recomputes ``weight``).
"""

from __future__ import annotations

import warnings

import glasstorch as torch

from ...autograd.grad_mode import no_grad
from ...autograd.graph import Node, needs_grad, record
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _other_dims(ndim, dim):
    return tuple(d for d in range(ndim) if d != dim)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, keeping dims (``dim=-1``: all)."""
    if dim == -1:
        return torch.linalg.vector_norm(v, pow)
    dim = torch._tensor._wrap_dim(dim, v.ndim)
    return torch.linalg.vector_norm(v, pow, dim=_other_dims(v.ndim, dim), keepdim=True)


def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)`` with the norm over every dim but ``dim``.

    Like torch, ``dim`` 0 and last use one fused node (WeightNormInterfaceBackward0);
    other dims are composed of ordinary ops.
    """
    ndim = v.ndim
    if dim == 0 or dim == ndim - 1:
        keep = [1] * ndim
        keep[dim] = v.shape[dim]
        with no_grad():
            w = v * (g.reshape(keep) / norm_except_dim(v, 2, dim))
        if needs_grad(v, g):
            record(w, WeightNormInterfaceBackward0, (v, g), v=v, g=g, dim=dim)
        return w
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNormInterfaceBackward0(Node):
    # Written with glasstorch ops so that double backward works.
    def backward(self, grad):
        v, g, dim = self._saved_v, self._saved_g, self._saved_dim
        others = _other_dims(v.ndim, dim)
        keep = [1] * v.ndim
        keep[dim] = v.shape[dim]
        norm = torch.linalg.vector_norm(v, 2, dim=others, keepdim=True)
        gv = (grad * v).sum(dim=others, keepdim=True)
        g_keep = g.reshape(keep)
        grad_v = grad_g = None
        if self.next_functions[0][0] is not None:
            grad_v = (g_keep / norm) * (grad - v * (gv / (norm * norm)))
        if self.next_functions[1][0] is not None:
            grad_g = (gv / norm).reshape(g.shape)
        return grad_v, grad_g


class WeightNorm:
    """The forward pre-hook of the legacy ``weight_norm``: recomputes ``name`` from g and v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Deprecated: reparametrize ``module.<name>`` as ``g * v / ||v||`` with a pre-hook."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo the legacy :func:`weight_norm`, leaving the current weight as a Parameter."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

