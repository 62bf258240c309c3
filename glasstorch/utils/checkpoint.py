"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the tensors its backward
needs; when backward asks for them, ``fn`` runs again (with the same RNG state,
so dropout masks match) and the recomputed tensors are used instead. This is
the saved-tensor-hooks design of torch's ``use_reentrant=False``; the
reentrant variant is served by the same code.
"""

from __future__ import annotations

import warnings

from .. import random as _random
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Recomputation:
    """Saved tensors of one checkpointed call, recomputed on first use."""

    def __init__(self, fn, args, kwargs, rng_state):
        self.fn, self.args, self.kwargs, self.rng_state = fn, args, kwargs, rng_state
        self.count = 0
        self.tensors = None

    def pack(self, tensor):
        index = self.count
        self.count += 1
        return index

    def unpack(self, index):
        if self.tensors is None:
            self._recompute()
        if index >= len(self.tensors):
            raise RuntimeError("torch.utils.checkpoint: the recomputed forward saved fewer "
                               "tensors than the original one; the checkpointed function must "
                               "run the same operations when called again.")
        return self.tensors[index]

    def _recompute(self):
        saved = []

        def keep(t):
            saved.append(t.detach())
            return None

        with _random.fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                _random.set_rng_state(self.rng_state)
            with enable_grad(), saved_tensors_hooks(keep, lambda _: None):
                self.fn(*self.args, **self.kwargs)
        self.tensors = saved
        self.args = self.kwargs = None  # the recomputation is done: release the inputs


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` keeping no activations; recompute them in backward."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", UserWarning, stacklevel=2)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    rng_state = _random.get_rng_state() if preserve_rng_state else None
    frame = _Recomputation(function, args, kwargs, rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequence of modules/functions in ``segments`` chunks (the last chunk runs
    normally, as in torch)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", UserWarning,
            stacklevel=2)
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for fn in functions[start:end + 1]:
                x = fn(x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
