"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the tensors its backward
needs; when backward asks for them, ``fn`` runs again (with the same RNG state,
so dropout masks match) and the recomputed tensors are used instead. This is
the saved-tensor-hooks design of torch's ``use_reentrant=False``; the
reentrant variant is served by the same code.
"""

from __future__ import annotations

import contextlib
import warnings

from .. import random as _random
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "check_backward_validity", "detach_variable",
           "get_device_states", "set_device_states", "noop_context_fn", "DefaultDeviceType"]


class DefaultDeviceType:
    """The device type whose RNG state checkpointing saves besides the CPU's ("cpu" where no
    accelerator is present, as torch's default on a CPU build)."""

    _default_device_type = "cpu"

    @staticmethod
    def set_device_type(device: str = "cpu"):
        """Set the device type checkpointing uses."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The device type checkpointing uses."""
        return DefaultDeviceType._default_device_type


def detach_variable(inputs):
    """``inputs`` (a tuple) with each tensor detached, keeping its ``requires_grad``."""
    from .._tensor import Tensor
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no tensor among ``inputs`` requires grad (checkpointing would return None
    gradients)."""
    from .._tensor import Tensor
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def get_device_states(*args):
    """(device indices, RNG states) of the accelerator devices the tensors in ``args`` live on:
    empty, since glasstorch's tensors live on the CPU (whose state checkpointing saves
    separately)."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore accelerator RNG states saved by ``get_device_states`` (there are none on the
    CPU; a device given here cannot exist)."""
    for device in devices:
        raise RuntimeError(f"glasstorch has no accelerator device {device!r} whose RNG state "
                           f"could be set")


def noop_context_fn():
    """The default ``context_fn`` of ``checkpoint``: two null contexts."""
    return contextlib.nullcontext(), contextlib.nullcontext()


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
