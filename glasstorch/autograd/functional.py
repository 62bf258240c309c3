"""autograd.functional: Jacobians, Hessians and vector products of whole functions.

Built on reverse mode: ``jvp`` (and the forward-mode Jacobian, through
``torch.func.jacfwd``) use the double-vjp trick (the vjp is linear in its
cotangent, so differentiating it again gives the jvp).
"""

from __future__ import annotations

from .._tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prepare(inputs, create_graph):
    """Fresh leaves that require grad (views of the user's inputs when create_graph)."""
    out = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"The inputs given to autograd.functional must be Tensors, got "
                            f"{type(t).__name__}")
        leaf = t if create_graph and t.requires_grad else t.detach()
        out.append(leaf.requires_grad_() if not leaf.requires_grad else leaf)
    return tuple(out)


def _zeros_for_none(grads, like):
    import glasstorch
    return tuple(g if g is not None else glasstorch.zeros_like(t) for g, t in zip(grads, like))


def _detach_unless(xs, create_graph):
    return tuple(x if create_graph else x.detach() for x in xs)


def _maybe_single(x, was_tensor):
    return x[0] if was_tensor else x


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the function's output and the vector-Jacobian product."""
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        ins = _prepare(_tuple(inputs), create_graph)
        out = func(*ins)
        single_out = isinstance(out, Tensor)
        outs = _tuple(out)
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v = (None,)
        vs = _tuple(v) if v[0] is not None else v
        diff = [(o, g) for o, g in zip(outs, vs) if o.requires_grad]
        if diff:
            grads = _grad([o for o, _ in diff], ins, [g for _, g in diff],
                          create_graph=create_graph, allow_unused=True)
        else:
            grads = (None,) * len(ins)
        if strict and any(g is None for g in grads):
            raise RuntimeError("The output of the user-provided function is independent of "
                               "some of its inputs. This is not allowed in strict mode.")
    grads = _detach_unless(_zeros_for_none(grads, ins), create_graph)
    return (_maybe_single(_detach_unless(outs, create_graph), single_out),
            _maybe_single(grads, single_in))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the function's output and the Jacobian-vector product."""
    import glasstorch
    with enable_grad():
        ins = _prepare(_tuple(inputs), create_graph)
        out = func(*ins)
        single_out = isinstance(out, Tensor)
        outs = _tuple(out)
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (glasstorch.ones_like(ins[0]),)
        vs = _tuple(v)
        # u is a dummy cotangent; vjp(u) is linear in u, and d<vjp(u), v>/du = J v
        us = tuple(glasstorch.zeros_like(o).requires_grad_() for o in outs)
        vjps = _grad(outs, ins, us, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(vjps, vs) if g is not None and g.requires_grad]
        if pairs:
            jv = _grad([g for g, _ in pairs], us, [t for _, t in pairs],
                       create_graph=create_graph, allow_unused=True)
        else:
            jv = (None,) * len(us)
        if strict and any(j is None for j in jv):
            raise RuntimeError("The output of the user-provided function is independent of "
                               "some of its inputs. This is not allowed in strict mode.")
    jv = _detach_unless(_zeros_for_none(jv, outs), create_graph)
    return (_maybe_single(_detach_unless(outs, create_graph), single_out),
            _maybe_single(jv, single_out))


def _check_strategy(strategy, vectorize, create_graph, strict, hint=True):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".' +
                             (' Hint: If your function has more outputs than inputs, '
                              '"forward-mode" tends to be more performant. Otherwise, prefer to '
                              'use "reverse-mode".' if hint else ""))
    if strategy == "forward-mode":
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")


def _forward_jacobian(func, inputs):
    """jacobian(strategy="forward-mode"): one Jacobian-vector product per input element
    (torch.func.jacfwd); like torch's, the blocks come in lists when ``inputs`` is a tuple."""
    from ..func import jacfwd
    single_in = isinstance(inputs, Tensor)
    ins = _tuple(inputs)
    jac = jacfwd(func, argnums=tuple(range(len(ins))))(*ins)
    if isinstance(jac, tuple) and isinstance(jac[0], tuple):  # several outputs
        rows = [list(r) for r in jac] if not single_in else [r[0] for r in jac]
        return rows if not single_in else tuple(rows)
    return jac[0] if single_in else list(jac)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: shape ``out.shape + in.shape`` per pair.

    ``strategy="forward-mode"`` (which needs ``vectorize=True``) builds it column by column
    from Jacobian-vector products, cheaper when there are more outputs than inputs.
    ``vectorize=True`` in reverse mode gives the same rows as the default loop.
    """
    import glasstorch
    _check_strategy(strategy, vectorize, create_graph, strict)
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs)
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        ins = _prepare(_tuple(inputs), create_graph)
        out = func(*ins)
        single_out = isinstance(out, Tensor)
        outs = _tuple(out)
        rows = []
        for o in outs:
            per_input = [[] for _ in ins]
            flat = o.reshape(-1)
            for j in range(flat.numel()):
                if o.requires_grad:
                    gs = _grad(flat[j], ins, retain_graph=True, create_graph=create_graph,
                               allow_unused=True)
                else:
                    gs = (None,) * len(ins)
                if strict and any(g is None for g in gs):
                    raise RuntimeError(f"Output {len(rows)} of the user-provided function is "
                                       f"independent of input {gs.index(None)}. This is not "
                                       f"allowed in strict mode.")
                for k, (g, t) in enumerate(zip(gs, ins)):
                    per_input[k].append(g if g is not None else glasstorch.zeros_like(t))
            blocks = []
            for k, t in enumerate(ins):
                if per_input[k]:
                    jac = glasstorch.stack(per_input[k]).view(tuple(o.shape) + tuple(t.shape))
                else:
                    jac = glasstorch.zeros(tuple(o.shape) + tuple(t.shape), dtype=t.dtype)
                blocks.append(jac if create_graph else jac.detach())
            rows.append(_maybe_single(tuple(blocks), single_in))
    return _maybe_single(tuple(rows), single_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function at ``inputs``: the Jacobian of its gradient, taken
    with ``outer_jacobian_strategy`` (forward-over-reverse needs ``vectorize=True``)."""
    _check_strategy(outer_jacobian_strategy, vectorize, create_graph, strict, hint=False)
    single_in = isinstance(inputs, Tensor)

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "containing a single element.")
        gs = _grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        import glasstorch
        gs = tuple(g if g is not None else glasstorch.zeros_like(x) for g, x in zip(gs, xs))
        return gs[0] if single_in else gs

    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                    vectorize=vectorize, strategy=outer_jacobian_strategy)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    single_in = isinstance(inputs, Tensor)
    with enable_grad():
        ins = _prepare(_tuple(inputs), True)
        out = func(*ins)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given in vhp should return a single Tensor "
                               "containing a single element.")
        gs = _grad(out.reshape(()), ins, create_graph=True, allow_unused=True)
        vs = _tuple(v)
        pairs = [(g, t, x) for g, t, x in zip(gs, vs, ins) if g is not None]
        res = _grad([g for g, _, _ in pairs], ins, [t for _, t, _ in pairs],
                    create_graph=create_graph, allow_unused=True) if pairs else (None,) * len(ins)
    res = _detach_unless(_zeros_for_none(res, ins), create_graph)
    return (out if create_graph else out.detach(), _maybe_single(res, single_in))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function (H is symmetric, so this equals vhp)."""
    return vhp(func, inputs, v, create_graph, strict)
