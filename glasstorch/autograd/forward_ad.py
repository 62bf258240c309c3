"""torch.autograd.forward_ad: dual tensors carrying a tangent through every op.

While a dual level is open, a TorchFunctionMode sees each public op call. A call with no
dual tensor among its arguments runs unchanged. Otherwise the op runs as usual for the
primal, and the output tangents come from one generic rule: the op is run again on fresh
leaves and differentiated twice (double-vjp: ``u -> J^T u`` is linear, so the gradient of
``<J^T u, t>`` by ``u`` is ``J t``). Every op whose backward is differentiable gets a correct
tangent that way, at roughly three times the op's cost; there are no faster per-op tangent
formulas yet. Tangents that require grad (or primals that do) keep their graph, so reverse
mode can differentiate through forward mode.
"""

from __future__ import annotations

import weakref
from collections import namedtuple

from .._tensor import Tensor
from ..overrides import TorchFunctionMode
from .grad_mode import _state, enable_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_levels: list = []  # the open levels (torch allows one)


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """``(primal, tangent)`` of a dual tensor (``tangent`` is None for a plain tensor)."""


class _DualLevel(TorchFunctionMode):
    """One open level: the mode that propagates its tangents."""

    def __init__(self, index):
        super().__init__()
        self.index = index
        self.paused = False
        # id(tensor) -> (weakref to it, tangent): a dual tensor keeps no extra attribute,
        # and its entry goes when it dies
        self.tangents = {}

    def tangent_of(self, t):
        entry = self.tangents.get(id(t)) if isinstance(t, Tensor) else None
        return entry[1] if entry is not None and entry[0]() is t else None

    def set_tangent(self, t, tangent):
        key, table = id(t), self.tangents
        table[key] = (weakref.ref(t, lambda _, key=key: table.pop(key, None)), tangent)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.paused:
            return func(*args, **kwargs)
        from .._core.random import default_generator
        from ..utils import _pytree as pytree  # imported late: utils imports nn
        flat, spec = pytree.tree_flatten((args, kwargs))
        tangents = {i: t for i, t in ((i, self.tangent_of(a)) for i, a in enumerate(flat))
                    if t is not None}
        if not tangents:
            return func(*args, **kwargs)
        # the tangent run first (on copies, so an in-place op changes nothing yet), then the
        # primal run from the same generator state (a random op draws the same numbers)
        rng = default_generator.get_state()
        self.paused = True
        try:
            out_tangents = self._jvp(func, flat, spec, tangents)
        finally:
            self.paused = False
        default_generator.set_state(rng)
        result = func(*args, **kwargs)
        outs = [args[0]] if _mutates(func) else pytree.tree_leaves(result)
        for o, t in zip(outs, out_tangents):
            if t is not None:
                self.set_tangent(o, t)
        return result

    def _jvp(self, func, flat, spec, tangents):
        """The output tangents of ``func`` by double-vjp, one per flat output (or None)."""
        from .._ops.creation import zeros_like
        from ..utils import _pytree as pytree
        from .engine import grad
        keep_graph = _state.grad_enabled and (
            any(t.requires_grad for t in tangents.values()) or
            any(isinstance(a, Tensor) and a.requires_grad for a in flat))
        with enable_grad():
            # differentiated inputs: aliases of primals that require grad (so the tangent's
            # graph reaches them), fresh leaves otherwise
            leaves = {i: flat[i].view_as(flat[i]) if keep_graph and flat[i].requires_grad else
                      flat[i].detach().requires_grad_() for i in tangents}
            # a clone per leaf (an in-place op may write to it), and of every tensor an
            # in-place op may write to
            mutates = _mutates(func)
            args, kwargs = pytree.tree_unflatten(
                [leaves[i].clone() if i in leaves else
                 a.detach().clone() if mutates and isinstance(a, Tensor) else a
                 for i, a in enumerate(flat)], spec)
            result = func(*args, **kwargs)
            outs = [args[0]] if mutates else pytree.tree_leaves(result)
            diff = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
            us = [zeros_like(outs[k]).requires_grad_() for k in diff]
            order = list(leaves)
            vjps = grad([outs[k] for k in diff], [leaves[i] for i in order], us,
                        create_graph=True, allow_unused=True) if diff else ()
            pairs = [(g, tangents[i]) for g, i in zip(vjps, order)
                     if g is not None and g.requires_grad]
            jvps = grad([g for g, _ in pairs], us, [t for _, t in pairs],
                        create_graph=keep_graph, allow_unused=True) if pairs else [None] * len(us)
        result = [None] * len(outs)
        for k, j in zip(diff, jvps):
            j = zeros_like(outs[k]) if j is None else j
            result[k] = j if keep_graph else j.detach()
        return result


def _mutates(func):
    """Whether ``func`` writes into its first argument (``add_``, ``__iadd__``,
    ``__setitem__``): its tangent is then that argument's."""
    name = getattr(func, "__name__", "")
    if name.startswith("__"):
        return name == "__setitem__" or (name.startswith("__i") and name.endswith("__") and
                                         name not in ("__index__", "__int__", "__invert__",
                                                      "__iter__"))
    return name.endswith("_")


def enter_dual_level():
    """Open a dual level and return its index (torch allows one level at a time)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _DualLevel(len(_levels))
    level.__enter__()
    _levels.append(level)
    return level.index


def exit_dual_level(*, level=None):
    """Close the last dual level: its dual tensors lose their tangents."""
    if level is None:
        level = len(_levels) - 1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != len(_levels) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    mode = _levels.pop()
    mode.tangents.clear()
    mode.__exit__(None, None, None)


def _level(level):
    if not _levels:
        return None
    return _levels[-1 if level is None else level]


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` (same shape) at the open dual level."""
    mode = _level(level)
    if mode is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tensor.shape != tangent.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    mode.paused = True
    try:
        dual = tensor.view_as(tensor)
    finally:
        mode.paused = False
    mode.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: a view of ``tensor`` without tangent, and the
    tangent at the level (None when it has none, or outside any level)."""
    mode = _level(level)
    tangent = mode.tangent_of(tensor) if mode is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    mode.paused = True
    try:
        primal = tensor.view_as(tensor)
    finally:
        mode.paused = False
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """``with dual_level():`` opens a dual level for the block and closes it after."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False
