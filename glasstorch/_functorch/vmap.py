"""vmap: map a function over a dimension of its inputs.

This is the generic fallback of torch's design only: the function runs once per index of
the mapped dimension and the results are stacked, so every op is supported and results
are exact, but it is no faster than the Python loop it replaces (there are no batching
rules yet). Randomness follows torch's modes: 'error' refuses a function that draws from
the default generator, 'same' replays one generator state for every sample, 'different'
lets each sample draw afresh.
"""

from __future__ import annotations

import functools

from .. import _tensor
from ..utils import _pytree as pytree
from .pyfunctorch import transform

__all__ = ["vmap"]

Tensor = _tensor.Tensor


def _name(func):
    return getattr(func, "__name__", repr(func))


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _rng_fingerprint():
    """What any draw from the default generator changes (cheaper than its full state)."""
    from .._core.random import default_generator as g
    st = g._bitgen.state["state"]
    return (int(st["pos"]), st["key"].tobytes(), g._seed, g._fresh, g._normal_double,
            g._normal_float)


class _RandomnessGuard:
    """Around the mapped calls: refuses ('error') a draw from the default generator (checked
    once at the end: reading the state costs more than a small op). 'same' and 'different'
    are handled by the caller's replay of the state."""

    def __init__(self, randomness):
        self.randomness = randomness

    def __enter__(self):
        if self.randomness == "error":
            self.before = _rng_fingerprint()
        return self

    def __exit__(self, exc_type, *exc):
        if self.randomness == "error" and exc_type is None and \
                _rng_fingerprint() != self.before:
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform "
                "the randomness operation out of vmap")
        return False


def _flat_in_dims(func, in_dims, args):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         "tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         "add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    flat, spec = pytree.tree_flatten(args)
    dims = pytree._broadcast_to_and_flatten(in_dims, spec)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {pytree.tree_structure(in_dims)} but inputs "
                         f"has structure {spec}.")
    sizes = []
    for i, (x, d) in enumerate(zip(flat, dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: in_dims must be int or None, got {type(d)}")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        dims[i] = d % n
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat, spec, dims, sizes[0]


def _sample(x, d, b):
    if d is None:
        return x
    if x.shape[d] == 0:  # an empty batch: one example of the per-sample shape
        shape = tuple(x.shape[:d]) + tuple(x.shape[d + 1:])
        return x.new_zeros(shape)
    return x.select(d, b)


def _stack_outputs(func, per_sample, out_dims, batch):
    from .._ops.pointwise import equal
    from .._ops.rearrange import stack
    flats = [pytree.tree_flatten(o) for o in per_sample]
    spec = flats[0][1]
    dims = pytree._broadcast_to_and_flatten(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         "is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {pytree.tree_structure(out_dims)} but outputs has "
                         f"structure {spec}.")
    leaves = []
    for i, d in enumerate(dims):
        column = [f[0][i] for f in flats]
        first = column[0]
        if d is None:
            if isinstance(first, Tensor) and not all(
                    c is first or (c.shape == first.shape and equal(c, first))
                    for c in column[1:]):
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            leaves.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(first)}. Did you mean to set out_dims= "
                             "to None for output?")
        out = stack(column[:batch] if batch else column[:1], dim=d)
        leaves.append(out if batch else out.narrow(d, 0, 0))
    return pytree.tree_unflatten(leaves, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at ``out_dims``.

    ``in_dims``/``out_dims``: an int, or a (nested) tuple matching the inputs/outputs, with
    None for an input passed whole to every sample (or an output that is the same for all).
    ``chunk_size`` bounds how many samples run together (here: one at a time).
    This is the generic per-sample loop (see the module docstring): correct for every op,
    and as slow as the loop it replaces.

    >>> glasstorch.vmap(glasstorch.dot)(glasstorch.ones(2, 3), glasstorch.ones(2, 3))
    tensor([3., 3.])
    """
    _check_randomness(randomness)
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .._core.random import default_generator
        flat, spec, dims, batch = _flat_in_dims(func, in_dims, args)
        state = default_generator.get_state() if randomness == "same" else None
        per_sample = []
        with _RandomnessGuard(randomness), transform("vmap"):
            for b in range(max(batch, 1)):
                if state is not None:
                    default_generator.set_state(state)
                sample = pytree.tree_unflatten([_sample(x, d, b) for x, d in zip(flat, dims)],
                                               spec)
                per_sample.append(func(*sample, **kwargs))
        return _stack_outputs(func, per_sample, out_dims, batch)
    return wrapper
