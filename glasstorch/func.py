"""glasstorch.func: torch.func's function transforms and functional module API.

The transforms live in ``glasstorch._functorch``: grad/vjp/jacrev run reverse mode,
jvp/linearize/jacfwd the double-vjp trick, and vmap runs each op once on the whole batch
through its batching rule (``batch_rules.py``; an op without one runs per sample).
jacrev/jacfwd take every row/column in one vmap. ``functional_call`` and
``stack_module_state`` are here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._functorch.eager_transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ._functorch.vmap import vmap

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jacrev",
           "jvp", "linearize", "jacfwd", "hessian", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with its parameters/buffers replaced by the dict(s) given.

    ``parameter_and_buffer_dicts`` is one dict or a sequence of dicts with distinct keys;
    ``args`` that is not a tuple is passed as the single positional argument.
    """
    from .nn.utils.stateless import _functional_call
    if isinstance(parameter_and_buffer_dicts, dict):
        named = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        named = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, named, args, kwargs, tie_weights=tie_weights,
                            strict=strict)


def stack_module_state(models):
    """``(params, buffers)``: each model's tensors stacked along a new dim 0, by name.

    Stacked parameters are new leaves (requiring grad when the originals do).
    """
    from ._ops.rearrange import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        flags = [t.requires_grad for t in tensors]
        if any(flags) and not all(flags):
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        out = stack(tensors)
        return out.detach().requires_grad_() if all(flags) else out

    params = {name: stacked([dict(m.named_parameters())[name] for m in models], name)
              for name, _ in models[0].named_parameters()}
    buffers = {name: stacked([dict(m.named_buffers())[name] for m in models], name)
               for name, _ in models[0].named_buffers()}
    return params, buffers
