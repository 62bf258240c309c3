"""torch.func's transforms on glasstorch's reverse-mode graph.

grad, grad_and_value, vjp and jacrev differentiate backwards. jvp, linearize and jacfwd
have no forward-mode AD to run on: they use the double-vjp trick (``u -> J^T u`` is linear,
so differentiating ``<J^T u, v>`` by ``u`` gives ``J v``), which costs one backward pass
with ``create_graph`` plus one per tangent, so it is slower than true forward mode.
jacrev and jacfwd run all their rows/columns as one vmap over the unit vectors.

Inside a vmap a level batches every input at the open vmaps on entry, so its backward
runs once on the physical (batched) tensors and gives each sample's gradient.

A transform's *level* is the span of one call: its inputs enter as fresh tensors of that
level (a detached leaf, or an alias node when the input is differentiated by an enclosing
level or by plain autograd), the function runs, and ``autograd.grad`` differentiates with
respect to exactly those tensors. Because gradients are taken with respect to the level's
own tensors, a closure over an enclosing level's input is a constant here, so
``grad(grad(f))`` and the perturbation-confusion cases give torch's answers.

Leaving a level, a result keeps its graph only if that graph reaches something outside
the level (an enclosing level's input, a tensor that requires grad for plain autograd);
then the inner differentiation ran with ``create_graph`` so the outer one can see through
it. Otherwise the result is detached, as torch's unwrapped tensors are.
"""

from __future__ import annotations

import functools

from .. import _tensor
from ..autograd import graph as _graph
from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import _state, enable_grad
from ..utils import _pytree as pytree
from . import vmap as _vmap
from .pyfunctorch import transform

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "jvp", "linearize", "jacfwd", "hessian"]

Tensor = _tensor.Tensor


class _Level:
    """One transform call: its input tensors and the first graph node it could create."""

    __slots__ = ("start", "own", "outer_grad", "vmap_levels")

    def __init__(self):
        self.start = next(_graph._sequence)
        self.own = set()
        # the vmaps this level runs inside: its inputs are batched at each of them, so one
        # backward pass gives every sample's gradients
        self.vmap_levels = _vmap.active_levels()
        # torch.func ignores an enclosing no_grad for its own differentiation, but then
        # nothing it returns is differentiable by the enclosing code
        self.outer_grad = _state.grad_enabled

    def enter(self, x):
        """``x`` as an input of this level (a tensor differentiated by this level only)."""
        if self.vmap_levels:
            x = _vmap.batch_at_levels(x, self.vmap_levels)
        if self.outer_grad and x.requires_grad:
            inner = x.view_as(x)
        else:
            inner = x.detach().requires_grad_()
        self.own.add(id(inner))
        self.own.add(id(_vmap.physical(inner)))
        return inner

    def reaches_outside(self, t):
        """Whether ``t``'s graph leads to a tensor that does not belong to this level."""
        if not self.outer_grad or not isinstance(t, Tensor):
            return False
        t = _vmap.physical(t)  # a BatchedTensor's graph is its value's
        fn = t.grad_fn
        if fn is None:
            return t.requires_grad and id(t) not in self.own
        stack, seen = [fn], {fn}
        while stack:
            node = stack.pop()
            if node._sequence_nr < self.start:
                return True
            if isinstance(node, _graph.AccumulateGrad) and id(node.variable) not in self.own:
                return True
            for nx, _ in node.next_functions:
                if nx is not None and nx not in seen:
                    seen.add(nx)
                    stack.append(nx)
        return False

    def exit(self, tree):
        """The pytree ``tree`` as seen by the enclosing code."""
        return pytree.tree_map(
            lambda t: t if not isinstance(t, Tensor) or self.reaches_outside(t) else t.detach(),
            tree)


def _check_tensor(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x


def _normalize_argnums(argnums, nargs):
    def one(a):
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        return a % nargs
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        return tuple(one(a) for a in argnums)
    return one(argnums)


def _split_args(args, argnums):
    """The differentiated part of ``args`` (one pytree, or a tuple of them)."""
    argnums = _normalize_argnums(argnums, len(args))
    if isinstance(argnums, tuple):
        return argnums, tuple(args[a] for a in argnums)
    return argnums, args[argnums]


def _replace_args(args, argnums, diff):
    args = list(args)
    if isinstance(argnums, tuple):
        for a, d in zip(argnums, diff):
            args[a] = d
    else:
        args[argnums] = diff
    return tuple(args)


def _grads(level, outputs, inputs, cotangents):
    """d(outputs . cotangents)/d(inputs), zeros for the inputs that do not take part, with a
    graph only where an enclosing level needs one."""
    if level.vmap_levels or any(type(c) is _vmap.BatchedTensor for c in cotangents):
        return _vmap.batched_grads(level.vmap_levels, outputs, inputs, cotangents,
                                   lambda o, i, c: _plain_grads(level, o, i, c))
    return _plain_grads(level, outputs, inputs, cotangents)


def _plain_grads(level, outputs, inputs, cotangents):
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    create_graph = level.outer_grad and (
        any(level.reaches_outside(o) for o, _ in pairs) or
        any(level.reaches_outside(c) for _, c in pairs if c is not None))
    if pairs:
        gs = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                            retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    from .. import zeros_like  # the dispatch point: batched tensors take part
    return [zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    for a in pytree.tree_leaves(output[1]):
        if not isinstance(a, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    return output


def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums``, and its value.

    ``grad_and_value(f)(x)`` is ``(grad, value)``, or ``(grad, (value, aux))`` when
    ``has_aux``; ``argnums`` is an int or a tuple of ints (then the gradient is a tuple).
    Each differentiated argument may be a pytree of tensors.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        argnums_n, diff = _split_args(args, argnums)
        flat, spec = pytree.tree_flatten(diff)
        level = _Level()
        with enable_grad():
            inner = [level.enter(_check_tensor(x)) for x in flat]
            with transform("grad"):
                output = func(*_replace_args(args, argnums_n,
                                             pytree.tree_unflatten(inner, spec)), **kwargs)
            output, aux = _split_aux(output, has_aux, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use "
                                   "the vjp or jacrev APIs instead?")
            gs = _grads(level, [output], inner, [None])
        gs = level.exit(pytree.tree_unflatten(gs, spec))
        value = level.exit(output)
        return (gs, (value, level.exit(aux))) if has_aux else (gs, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums`` (see grad_and_value);
    with ``has_aux``, ``(grad, aux)``. ``func`` must return a scalar tensor.

    >>> glasstorch.func.grad(lambda x: (x ** 2).sum())(glasstorch.tensor([1., 2.]))
    tensor([2., 4.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gs, value = gv(*args, **kwargs)
        return (gs, value[1]) if has_aux else gs
    return wrapper


def _check_outputs(output, api):
    flat, spec = pytree.tree_flatten(output)
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    return flat, spec


def _vjp(func, primals, has_aux, api="vjp(f, *primals)", kwargs=None):
    """``(output, vjp_fn, aux)`` for the tuple of pytrees ``primals``."""
    flat, spec = pytree.tree_flatten(primals)
    level = _Level()
    with enable_grad():
        inner = [level.enter(_check_tensor(x)) for x in flat]
        with transform("grad"):
            output = func(*pytree.tree_unflatten(inner, spec), **(kwargs or {}))
        output, aux = _split_aux(output, has_aux, api)
        out_flat, out_spec = _check_outputs(output, api)

    def vjp_fn(cotangents):
        ct_flat, ct_spec = pytree.tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{pytree.treespec_pprint(ct_spec)}, primal output: "
                               f"{pytree.treespec_pprint(out_spec)}")
        with enable_grad():
            gs = _grads(level, out_flat, inner, ct_flat)
        return level.exit(pytree.tree_unflatten(gs, spec))

    return level.exit(output), vjp_fn, level.exit(aux)


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian product
    with respect to each primal (a tuple); ``cotangents`` has the structure of the output.
    With ``has_aux``, ``func`` returns ``(output, aux)`` and vjp returns
    ``(output, vjp_fn, aux)``. ``vjp_fn`` may be called many times.
    """
    output, vjp_fn, aux = _vjp(func, primals, has_aux)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def _basis(flat):
    """One identity block per tensor of ``flat``: tensors of shape ``(N,) + t.shape``
    (``N`` = all their elements) whose row ``k`` is the ``k``-th unit vector of them all."""
    from .. import eye
    n = sum(t.numel() for t in flat)
    rows = eye(n, dtype=flat[0].dtype) if flat else None
    out, start = [], 0
    for t in flat:
        out.append(rows[:, start:start + t.numel()].reshape((n,) + tuple(t.shape)))
        start += t.numel()
    return n, out


def _blocks(stacked, outs, ins, is_tuple, out_spec, in_spec):
    """The Jacobian pytree from ``stacked[k]``: per input, its rows (one per element of all
    ``outs``, outputs first) of shape ``(N,) + input.shape``."""
    leaves, start = [], 0
    for o in outs:
        n = o.numel()
        per_input = pytree.tree_unflatten(
            [g.narrow(0, start, n).reshape(tuple(o.shape) + tuple(x.shape))
             for g, x in zip(stacked, ins)], in_spec)
        leaves.append(per_input if is_tuple else per_input[0])
        start += n
    return pytree.tree_unflatten(leaves, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums`` in reverse mode:
    every row's vector-Jacobian product at once, by vmap over the output's unit vectors
    (``chunk_size`` rows at a time when given).

    Each output leaf becomes a tensor of shape ``output.shape + input.shape`` (per argnum
    when ``argnums`` is a tuple).
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .vmap import vmap
        argnums_n, diff = _split_args(args, argnums)
        is_tuple = isinstance(argnums_n, tuple)
        primals = diff if is_tuple else (diff,)

        def restricted(*ps):
            return func(*_replace_args(args, argnums_n, ps if is_tuple else ps[0]), **kwargs)

        from .._core.random import default_generator
        rng = default_generator.get_state()
        output, _, aux = _vjp(restricted, primals, has_aux)
        out_flat, out_spec = pytree.tree_flatten(output)
        in_flat, in_spec = pytree.tree_flatten(primals)
        n, basis = _basis(out_flat)

        def rows(*cts):
            # func runs again under the vmap (drawing what the first run drew), so that one
            # backward pass gives every row
            _, vjp_fn, _ = _vjp(restricted, primals, has_aux)
            return vjp_fn(pytree.tree_unflatten(list(cts), out_spec))
        if n == 0:
            stacked = [x.new_zeros((0,) + tuple(x.shape)) for x in in_flat]
        else:
            after = default_generator.get_state()
            default_generator.set_state(rng)
            stacked = pytree.tree_leaves(vmap(rows, randomness="same",
                                              chunk_size=chunk_size)(*basis))
            default_generator.set_state(after)
        jac = _blocks(stacked, out_flat, in_flat, is_tuple, out_spec, in_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def _linearize(func, primals, has_aux, api, kwargs=None):
    """``(output, jvp_fn, aux)``: ``jvp_fn(tangents)`` takes the flat tangents of the flat
    ``primals`` (one pytree of tensors) and gives the flat output tangents."""
    from .. import zeros_like  # the dispatch point: batched tensors take part
    flat, spec = pytree.tree_flatten(primals)
    level = _Level()
    with enable_grad():
        inner = [level.enter(x) for x in flat]
        with transform("jvp"):
            output = func(*pytree.tree_unflatten(inner, spec), **(kwargs or {}))
        output, aux = _split_aux(output, has_aux, api)
        out_flat, out_spec = _check_outputs(output, api)
        # dummy cotangents of this level: the vjp is linear in them
        us = [_vmap.batch_at_levels(zeros_like(o), level.vmap_levels).requires_grad_()
              for o in out_flat]
        level.own.update(id(u) for u in us)
        level.own.update(id(_vmap.physical(u)) for u in us)
        vjps = _grads(_CreateGraph(level), out_flat, inner, us)

    def jvp_fn(tangents):
        with enable_grad():
            return _grads(level, vjps, us, tangents)

    return output, jvp_fn, aux, level, out_spec


class _CreateGraph:
    """A level whose differentiation always keeps the graph (the first half of double-vjp)."""

    outer_grad = True

    def __init__(self, level):
        self.level = level
        self.vmap_levels = level.vmap_levels

    def reaches_outside(self, t):
        return True


def _check_tangents(primals, tangents):
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_flat, p_spec = pytree.tree_flatten(primals)
    t_flat, t_spec = pytree.tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec} and "
                           f"tangents with structure {t_spec}")
    for p, t in zip(p_flat, t_flat):
        for x, what in ((p, "primals"), (t, "tangents")):
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {what} to only contain Tensors, got "
                                   f"{type(x)}")
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size "
                               "than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
    return t_flat


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the output and its Jacobian-vector product.

    ``primals`` is a tuple of (pytrees of) tensors and ``tangents`` has its structure.
    Computed by double-vjp (see the module docstring), slower than true forward mode.
    """
    t_flat = _check_tangents(primals, tangents)
    output, jvp_fn, aux, level, out_spec = _linearize(func, primals, has_aux,
                                                       "jvp(f, primals, tangents)")
    out_t = pytree.tree_unflatten(jvp_fn(t_flat), out_spec)
    result = (level.exit(output), level.exit(out_t))
    return result + (level.exit(aux),) if has_aux else result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` gives the Jacobian-vector product at
    ``primals`` for any tangents, reusing one recorded graph (double-vjp)."""
    for p in pytree.tree_leaves(primals):
        _check_tensor(p)
    output, jvp_fn, _, level, out_spec = _linearize(func, primals, False, "linearize(f, *primals)")

    def linear_fn(*tangents):
        t_flat = _check_tangents(primals, tangents)
        return level.exit(pytree.tree_unflatten(jvp_fn(t_flat), out_spec))

    return level.exit(output), linear_fn


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, every column's
    Jacobian-vector product at once, by vmap over the inputs' unit vectors.

    ``randomness`` is that vmap's: 'error' refuses random ops in ``func``, 'same' draws
    the same values for every column, 'different' draws afresh per column.
    """
    _check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .vmap import vmap
        argnums_n, diff = _split_args(args, argnums)
        is_tuple = isinstance(argnums_n, tuple)
        primals = diff if is_tuple else (diff,)
        in_flat, in_spec = pytree.tree_flatten(primals)
        for x in in_flat:
            _check_tensor(x)

        def restricted(*ps):
            return func(*_replace_args(args, argnums_n, ps if is_tuple else ps[0]), **kwargs)

        def column(*tangents):
            output, jvp_fn, aux, level, out_spec = _linearize(
                restricted, primals, has_aux, "jacfwd(f, ...)(*args)")
            return level.exit((jvp_fn(list(tangents)), output) + ((aux,) if has_aux else ()))

        n, basis = _basis(in_flat)
        if n == 0:
            out_t, output, *aux = column(*[x.new_zeros(x.shape) for x in in_flat])
            cols = [o.new_zeros((0,) + tuple(o.shape)) for o in out_t]
        else:
            cols, output, *aux = vmap(column, randomness=randomness)(*basis)
            output, aux = pytree.tree_map(lambda t: t[0], (output, aux))
        aux = aux[0] if has_aux else None
        out_flat, out_spec = pytree.tree_flatten(output)
        # cols[i] is output i's columns, (N,) + output.shape: the blocks want inputs last
        per_output = []
        for c, o in zip(cols, out_flat):
            start, blocks = 0, []
            for x in in_flat:
                k = x.numel()
                block = c.narrow(0, start, k).movedim(0, -1) if o.dim() else c.narrow(0, start, k)
                blocks.append(block.reshape(tuple(o.shape) + tuple(x.shape)))
                start += k
            blocks = pytree.tree_unflatten(blocks, in_spec)
            per_output.append(blocks if is_tuple else blocks[0])
        jac = pytree.tree_unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar ``func`` with respect to the arguments at ``argnums``:
    ``jacfwd(jacrev(func))``, shape ``input.shape + input.shape``."""
    return jacfwd(jacrev(func, argnums), argnums)
