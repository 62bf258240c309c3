"""vmap: map a function over a dimension of its inputs, with batching rules.

Each vmap call is a *level*. Its inputs enter as ``BatchedTensor`` objects: a Tensor
subclass that shows one sample's (logical) shape while holding every sample in ``_value``,
batch dimension first. An op that meets one goes through the dispatch point to
``_dispatch``: the rule registered for the op in ``RULES`` (``batch_rules.py``) runs the op
once on the whole batch; an op without a rule runs once per sample and the results are
stacked (the fallback: correct, named, and as slow as the loop it replaces). Nested vmaps
nest the wrappers: a level's ``_value`` may itself be batched at an enclosing level, and a
rule's calls on it dispatch again at that level.

Autograd records on the values, so ``vmap(grad(f))`` differentiates the whole batch in
one backward pass (``batched_grads``). Randomness follows torch's modes: 'error' refuses a
draw from the default generator, 'same' replays one generator state for every sample,
'different' lets each sample draw afresh.
"""

from __future__ import annotations

import functools
import itertools
import warnings

from .. import _tensor, overrides
from .._core.backend import xp
from ..overrides import TorchFunctionMode
from ..utils import _pytree as pytree
from .pyfunctorch import transform

__all__ = ["vmap"]

Tensor = _tensor.Tensor

# The open levels, innermost last: [level number, batch size, randomness].
_levels: list = []
_level_numbers = itertools.count(1)
# op name -> rule(func, level, args, kwargs); a rule may return NotImplemented (fallback)
RULES: dict = {}
_fallback_warning = [True]  # as torch: an op without a rule warns that it is slower


def _set_vmap_fallback_warning_enabled(enabled):
    """Whether an op without a batching rule warns that it runs once per sample."""
    _fallback_warning[0] = bool(enabled)


class BatchedTensor(Tensor):
    """One sample's view of a batch at one vmap level (``_value``: all samples, dim 0)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


# Marked as built already: dispatch is on only while a vmap runs (overrides._vmap_opened),
# not for good as the first instance of other overriding subclasses turns it on.
_tensor._classes_built.add(BatchedTensor)


class _Placeholder(xp.ndarray):
    """A BatchedTensor's ``_data``: the sample's shape and dtype, no values. Code that
    computes on it instead of dispatching (an op definition called directly) fails here
    rather than computing on made-up numbers."""

    def __array_ufunc__(self, *args, **kwargs):
        raise _bypass_error()

    def __array_function__(self, *args, **kwargs):
        raise _bypass_error()


def _bypass_error():
    return RuntimeError("vmap: an operator read a BatchedTensor's data directly instead of "
                        "going through the dispatch point; call the public op "
                        "(glasstorch.<op>), not its definition, on tensors that may be "
                        "batched")


def wrap(value, level):
    """``value`` (batch dim first) as a BatchedTensor of ``level``."""
    arr = value._data
    t = _tensor._wrap(arr, BatchedTensor)
    t._data = xp.broadcast_to(xp.zeros((), arr.dtype), arr.shape[1:]).view(_Placeholder)
    t._value = value
    t._level = level
    return t


def unwrap(x, level):
    """The batch of ``x`` at ``level``, or None when ``x`` is not batched there."""
    if type(x) is BatchedTensor and x._level == level:
        return x._value
    return None


def physical(t):
    """The plain tensor under every level of ``t`` (batch dims first, outermost first)."""
    while type(t) is BatchedTensor:
        t = t._value
    return t


def _levels_of(t):
    out = []
    while type(t) is BatchedTensor:
        out.append(t._level)
        t = t._value
    return out


def batch_size(level):
    for entry in _levels:
        if entry[0] == level:
            return entry[1]
    raise RuntimeError("vmap: a BatchedTensor escaped the vmap it was created in")


def randomness_of(level):
    for entry in _levels:
        if entry[0] == level:
            return entry[2]
    return "error"


def active_levels():
    """(level, batch size) of every open vmap, outermost first."""
    return [(entry[0], entry[1]) for entry in _levels]


def batch_at(x, level, size):
    """``x`` batched at ``level`` (expanded over the batch when it is not batched there)."""
    if type(x) is BatchedTensor:
        if x._level == level:
            return x
        if x._level > level:
            return wrap(batch_at(x._value, level, size), x._level)
    return wrap(x.unsqueeze(0).expand(size, *x.shape), level)


def batch_at_levels(x, levels):
    for level, size in levels:
        x = batch_at(x, level, size)
    return x


def rewrap(p, levels):
    """The physical tensor ``p`` (one batch dim per level, outermost first) rewrapped."""
    for level, _ in levels:
        p = wrap(p, level)
    return p


def top_level(args, kwargs):
    """The innermost level among the BatchedTensors in ``args``/``kwargs`` (None if none)."""
    best = None
    for group in (args, kwargs.values()) if kwargs else (args,):
        for a in group:
            if type(a) is BatchedTensor:
                if best is None or a._level > best:
                    best = a._level
            elif type(a) is list or type(a) is tuple:
                for e in a:
                    if type(e) is BatchedTensor and (best is None or e._level > best):
                        best = e._level
    return best


_property_names = {}


def op_name(func):
    """The registry key of ``func``: the op's name (a property's for its getter,
    ``name.__set__`` for its setter)."""
    name = getattr(func, "__name__", "")
    if name in ("__get__", "__set__"):
        if not _property_names:
            for k, v in vars(Tensor).items():
                if isinstance(v, property):
                    _property_names[v] = k
        prop = _property_names.get(getattr(func, "__self__", None), "")
        return prop if name == "__get__" else prop + ".__set__"
    return name


# Rules are keyed by name; only these namespaces' ops share those names' meaning
# (torch.masked.cumprod, say, takes a mask and runs per sample).
_RULED_MODULES = frozenset({"glasstorch", "glasstorch._tensor", "glasstorch.nn.functional",
                            "glasstorch.special", "glasstorch.autograd", None})


def _dispatch(func, args, kwargs):
    level = top_level(args, kwargs)
    if level is None:
        from ..overrides import DisableTorchFunctionSubclass
        with DisableTorchFunctionSubclass():
            return func(*args, **kwargs)
    name = op_name(func)
    rule = RULES.get(name) if getattr(func, "__module__", None) in _RULED_MODULES else None
    if rule is not None:
        r = rule(func, level, args, kwargs)
        if r is not NotImplemented:
            return r
    return fallback(func, level, args, kwargs, name)


def mutates(name):
    """Whether op ``name`` writes into its first argument."""
    if name.startswith("__"):
        return name == "__setitem__" or (name.startswith("__i") and name not in (
            "__index__", "__int__", "__invert__", "__iter__", "__init__"))
    return name.endswith("_") and not name.endswith("__")


_DYNAMIC = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select",
                      "bincount", "histc", "repeat_interleave"})


def fallback(func, level, args, kwargs, name, replay=None):
    """Run ``func`` once per sample of ``level`` and stack the results."""
    if name in _DYNAMIC:
        raise RuntimeError("vmap: We do not support batching operators that can output "
                           f"dynamic shape. Attempted to vmap over aten::{name}. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues if you need "
                           "this feature.")
    if _fallback_warning[0]:
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for aten::{name}. Please file us an issue on GitHub so that "
                      "we can prioritize its implementation.", UserWarning, stacklevel=4)
    inplace = mutates(name)
    if inplace and unwrap(args[0], level) is None:
        raise_inplace_error()
    size = batch_size(level)
    flat, spec = pytree.tree_flatten((args, kwargs))
    where = [i for i, a in enumerate(flat) if unwrap(a, level) is not None]
    from .._core.random import default_generator
    state = default_generator.get_state() if replay else None
    results = []
    for b in range(max(size, 1)):
        sample = list(flat)
        for i in where:
            v = flat[i]._value
            sample[i] = v.select(0, b) if size else v.new_zeros(tuple(v.shape)[1:])
        if state is not None:
            default_generator.set_state(state)
        a, k = pytree.tree_unflatten(sample, spec)
        results.append(func(*a, **k))
    if inplace:
        return args[0]
    return stack_results(results, level, size)


def raise_inplace_error():
    raise RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due "
        "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
        "try to use out-of-place operators instead of inplace arithmetic. If said operator is "
        "being called inside the PyTorch framework, please file a bug report instead.")


def stack_results(results, level, size):
    """Per-sample results of one op stacked into BatchedTensors of ``level``."""
    from .. import stack  # the dispatch point: batched tensors take part
    flats = [pytree.tree_flatten(r) for r in results]
    spec = flats[0][1]
    leaves = []
    for i in range(len(flats[0][0])):
        column = [f[0][i] for f in flats]
        first = column[0]
        if isinstance(first, Tensor):
            out = stack(column)
            leaves.append(wrap(out if size else out.narrow(0, 0, 0), level))
        elif all(c == first for c in column[1:]):
            leaves.append(first)
        else:
            raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                               "data-dependent control flow. We don't support that yet, please "
                               "file an issue at https://github.com/pytorch/pytorch/issues .")
    return pytree.tree_unflatten(leaves, spec)


def batched_grads(levels, outputs, inputs, cotangents, compute):
    """``compute(outputs, inputs, cotangents)`` (autograd on plain tensors) for a grad level
    opened inside the vmap ``levels``: the inputs were batched at every one of them on entry,
    so one backward pass on the physical tensors gives every sample's gradient. A cotangent
    batched at a vmap opened later (``vmap(vjp_fn)``) is looped over, one sample at a time."""
    own = {lv for lv, _ in levels}
    later = None
    for c in cotangents:
        for lv in _levels_of(c):
            if lv not in own and (later is None or lv > later):
                later = lv
    if later is not None:
        size = batch_size(later)
        per_sample = []
        for b in range(size):
            cts = [c if unwrap(c, later) is None else _select_level(c, later, b)
                   for c in cotangents]
            per_sample.append(batched_grads(levels, outputs, inputs, cts, compute))
        return stack_results(per_sample, later, size)
    from .. import ones_like  # the dispatch point: batched tensors take part
    outs = [physical(batch_at_levels(o, levels)) for o in outputs]
    # no cotangent: each sample's scalar output seeds its own backward with 1
    cts = [ones_like(p) if c is None else physical(batch_at_levels(c, levels))
           for p, c in zip(outs, cotangents)]
    gs = compute(outs, [physical(x) for x in inputs], cts)
    return [rewrap(g, levels) if isinstance(g, Tensor) else None for g in gs]


def _select_level(t, level, b):
    if t._level == level:
        return t._value.select(0, b)
    return wrap(_select_level(t._value, level, b), t._level)


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
    once at the end: reading the state costs more than a small op)."""

    def __init__(self, randomness):
        self.randomness = randomness

    def __enter__(self):
        if self.randomness == "error":
            self.before = _rng_fingerprint()
        return self

    def __exit__(self, exc_type, *exc):
        if self.randomness == "error" and exc_type is None and \
                _rng_fingerprint() != self.before:
            raise_random_error()
        return False


def raise_random_error():
    raise RuntimeError(
        "vmap: called random operation while in randomness error mode. Please either use the "
        "'same' or 'different' randomness flags on vmap or perform the randomness operation "
        "out of vmap")


# Random ops that make a tensor from nothing batched: under 'different' each sample draws.
RANDOM_FACTORIES = frozenset({"rand", "randn", "randint", "randperm", "normal", "bernoulli",
                              "multinomial", "poisson", "rand_like", "randn_like",
                              "randint_like"})


class _DifferentRandomness(TorchFunctionMode):
    """randomness='different': a random factory call without a batched argument draws once
    per sample, giving a batched result."""

    def __init__(self, level):
        super().__init__()
        self.level = level

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if op_name(func) in RANDOM_FACTORIES and top_level(args, kwargs) != self.level:
            size = batch_size(self.level)
            return stack_results([func(*args, **kwargs) for _ in range(size)], self.level,
                                 size)
        return func(*args, **kwargs)


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


def _unwrap_outputs(func, output, out_dims, level, size):
    flat, spec = pytree.tree_flatten(output)
    dims = pytree._broadcast_to_and_flatten(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         "is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {pytree.tree_structure(out_dims)} but outputs has "
                         f"structure {spec}.")
    leaves = []
    for x, d in zip(flat, dims):
        value = unwrap(x, level)
        if d is None:
            if value is not None:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            leaves.append(x)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(x)}. Did you mean to set out_dims= "
                             "to None for output?")
        if value is None:  # the same for every sample
            value = x.unsqueeze(0).expand(size, *x.shape)
        leaves.append(value.movedim(0, d) if d else value)
    return pytree.tree_unflatten(leaves, spec)


def _run(func, flat, spec, dims, size, out_dims, randomness, kwargs):
    level = next(_level_numbers)
    _levels.append([level, size, randomness])
    mode = _DifferentRandomness(level) if randomness == "different" else None
    overrides._vmap_opened(1)
    try:
        inputs = [x if d is None else wrap(x.movedim(d, 0) if d else x, level)
                  for x, d in zip(flat, dims)]
        with transform("vmap"):
            if mode is None:
                output = func(*pytree.tree_unflatten(inputs, spec), **kwargs)
            else:
                with mode:
                    output = func(*pytree.tree_unflatten(inputs, spec), **kwargs)
        return _unwrap_outputs(func, output, out_dims, level, size)
    finally:
        _levels.pop()
        overrides._vmap_opened(-1)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at ``out_dims``.

    ``in_dims``/``out_dims``: an int, or a (nested) tuple matching the inputs/outputs, with
    None for an input passed whole to every sample (or an output that is the same for all).
    ``chunk_size`` bounds how many samples run together (the results are concatenated).
    ``randomness``: 'error', 'same' or 'different' (see the module docstring).

    >>> glasstorch.vmap(glasstorch.dot)(glasstorch.ones(2, 3), glasstorch.ones(2, 3))
    tensor([3., 3.])
    """
    _check_randomness(randomness)
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        flat, spec, dims, size = _flat_in_dims(func, in_dims, args)
        with _RandomnessGuard(randomness):
            if chunk_size is None or chunk_size >= size:
                return _run(func, flat, spec, dims, size, out_dims, randomness, kwargs)
            return _chunked(func, flat, spec, dims, size, out_dims, randomness, kwargs,
                            chunk_size)
    return wrapper


def _chunked(func, flat, spec, dims, size, out_dims, randomness, kwargs, chunk_size):
    from .. import cat  # the dispatch point: batched tensors take part
    from .._core.random import default_generator
    state = default_generator.get_state() if randomness == "same" else None
    parts = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [x if d is None else x.narrow(d, start, n) for x, d in zip(flat, dims)]
        if state is not None:
            default_generator.set_state(state)
        parts.append(_run(func, chunk, spec, dims, n, out_dims, randomness, kwargs))
    out_spec = pytree.tree_structure(parts[0])
    od = pytree._broadcast_to_and_flatten(out_dims, out_spec)
    columns = zip(*(pytree.tree_leaves(p) for p in parts))
    return pytree.tree_unflatten([c[0] if d is None else cat(c, dim=d)
                                  for c, d in zip(columns, od)], out_spec)


def apply_function(cls, args, kwargs):
    """``cls.apply`` with BatchedTensor arguments: the Function's own ``vmap`` rule, or (with
    ``generate_vmap_rule``) one apply per sample. None when nothing is batched."""
    level = top_level(args, kwargs)
    if level is None:
        return None
    from ..autograd.function import Function
    if cls.vmap is Function.vmap:
        return fallback(cls.apply, level, args, kwargs, cls.__name__)
    size = batch_size(level)
    info = _VmapInfo(size, randomness_of(level))
    in_dims = tuple(0 if unwrap(a, level) is not None else None for a in args)
    values = [a if d is None else unwrap(a, level) for a, d in zip(args, in_dims)]
    out, out_dims = cls.vmap(info, in_dims, *values, **kwargs)
    o_flat, o_spec = pytree.tree_flatten(out)
    d_flat = pytree._broadcast_to_and_flatten(out_dims, o_spec)
    if d_flat is None:
        raise RuntimeError(f"{cls.__name__}.vmap: expected out_dims to match the structure of "
                           "the outputs")
    return pytree.tree_unflatten(
        [o if d is None else wrap(o.movedim(d, 0) if d else o, level)
         for o, d in zip(o_flat, d_flat)], o_spec)


class _VmapInfo:
    """``info`` of a Function's vmap staticmethod."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness

    def __repr__(self):
        return f"VmapInfo(batch_size={self.batch_size}, randomness='{self.randomness}')"


from . import batch_rules  # noqa: E402,F401  (fills RULES)
