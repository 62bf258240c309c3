"""Full backward hooks for Modules: identity Functions around a module's inputs and
outputs catch the gradients flowing through them (torch's BackwardHook design)."""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function


class _Identity(Function):
    """Passes tensors through; its backward reports their gradients to ``callback``."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        new = ctx.callback(grads)
        return (None,) + tuple(new if new is not None else grads)


class BackwardHook:
    """Runs a module's full backward pre-hooks and hooks once per backward pass."""

    def __init__(self, module):
        from . import module as module_mod
        self.module = module
        self.hooks = list(module_mod._global_backward_hooks.values()) + \
            list(module._backward_hooks.values())
        self.pre_hooks = list(module_mod._global_backward_pre_hooks.values()) + \
            list(module._backward_pre_hooks.values())
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = ()

    def setup_input_hook(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.n_inputs = len(args)
        self.input_positions = positions
        if not positions or not self.hooks:
            return args
        wrapped = _Identity.apply(self._on_grad_inputs, *[args[i] for i in positions])
        args = list(args)
        for i, w in zip(positions, wrapped):
            args[i] = w
        return tuple(args)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple):
            return result
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and
                     o.requires_grad]
        if not positions:
            return result
        wrapped = _Identity.apply(self._on_grad_outputs, *[outputs[i] for i in positions])
        outputs = list(outputs)
        for i, w in zip(positions, wrapped):
            outputs[i] = w
        return outputs[0] if single else tuple(outputs)

    def _on_grad_outputs(self, grads):
        for hook in self.pre_hooks:
            res = hook(self.module, grads)
            if res is not None:
                grads = tuple(res)
        self.grad_outputs = grads
        if not self.input_positions and self.hooks:
            # nothing upstream needs a gradient: hooks still run, with grad_input None
            for hook in self.hooks:
                hook(self.module, (None,) * max(self.n_inputs, 1), grads)
        return grads

    def _on_grad_inputs(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        full = tuple(full)
        for hook in self.hooks:
            res = hook(self.module, full, self.grad_outputs)
            if res is not None:
                full = tuple(res)
        return tuple(full[i] for i in self.input_positions)
