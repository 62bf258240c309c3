"""gradcheck / gradgradcheck: analytical gradients against central finite differences."""

from __future__ import annotations

import warnings

from .._core.backend import xp as np
from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (tuple(x) if isinstance(x, list) else (x,))


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out)
                 if isinstance(o, Tensor) and o.requires_grad)


def _numerical_jacobian(fn, inputs, i, out_index, eps):
    """d out[out_index] / d inputs[i] by central differences, as a (n_in, n_out) array."""
    x = inputs[i]
    flat = x._data.reshape(-1)  # a view: writes perturb the input in place
    if flat.size and not np.shares_memory(flat, x._data):
        raise ValueError("gradcheck needs contiguous inputs it can perturb in place")
    cols = []
    for k in range(flat.size):
        orig = flat[k].copy()
        flat[k] = orig + eps
        plus = _as_tuple(fn(*inputs))[out_index]._data.astype(np.float64)
        flat[k] = orig - eps
        minus = _as_tuple(fn(*inputs))[out_index]._data.astype(np.float64)
        flat[k] = orig
        cols.append(((plus - minus) / (2 * eps)).reshape(-1))
    if not cols:
        return np.zeros((0, 0))
    return np.stack(cols)


def _analytical_jacobian(outputs, inputs, i, out_index, create_graph=False):

    from .engine import grad as autograd_grad
    out = outputs[out_index]
    n_out = out.numel()
    rows = np.zeros((inputs[i].numel(), n_out))
    import glasstorch
    for j in range(n_out):
        seed = glasstorch.zeros(n_out, dtype=out.dtype)
        seed._data[j] = 1
        g, = autograd_grad(out, inputs[i], seed.view(out.shape), retain_graph=True,
                           allow_unused=True)
        if g is not None:
            rows[:, j] = g._data.reshape(-1)
    return rows


def _forward_jacobian(func, inputs, k, n_outputs):
    """d outputs / d inputs[k] by forward-mode AD, one (n_in, n_out) array per output."""
    import glasstorch

    from . import forward_ad
    x = inputs[k]
    cols = [[] for _ in range(n_outputs)]
    for j in range(x.numel()):
        tangent = glasstorch.zeros(x.numel(), dtype=x.dtype)
        tangent._data[j] = 1
        with forward_ad.dual_level():
            args = list(inputs)
            args[k] = forward_ad.make_dual(x, tangent.view(x.shape))
            outs = _differentiable_outputs(func(*args))
            for c, o in zip(cols, outs):
                t = forward_ad.unpack_dual(o).tangent
                c.append(np.zeros(o.numel()) if t is None else
                         t._data.astype(np.float64).reshape(-1))
    return [np.stack(c) if c else np.zeros((0, 0)) for c in cols]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check ``func``'s gradients w.r.t. the inputs that require grad against finite
    differences: reverse mode (``check_backward_ad``) and forward mode (``check_forward_ad``,
    through ``autograd.forward_ad``). Use float64 inputs; returns True, or raises
    GradcheckError."""
    inputs = _as_tuple(inputs)
    tensors = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not tensors:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and \
                t.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double "
                          "precision floating point or complex. This check will likely fail if "
                          "all the inputs are not of double precision floating point or "
                          "complex. ", UserWarning, stacklevel=2)
    outputs = _differentiable_outputs(func(*inputs))
    positions = [k for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    forward = {k: _forward_jacobian(func, inputs, k, len(outputs)) for k in positions} \
        if check_forward_ad else {}
    for out_index in range(len(outputs)):
        for k in positions:
            numerical = _numerical_jacobian(lambda *a: _differentiable_outputs(func(*a)),
                                            inputs, k, out_index, eps)
            checks = []
            if check_backward_ad:
                checks.append(("", _analytical_jacobian(outputs, inputs, k, out_index)))
            if check_forward_ad:
                checks.append((" computed with forward mode", forward[k][out_index]))
            for how, analytical in checks:
                if numerical.size and not np.allclose(analytical, numerical, rtol=rtol,
                                                      atol=atol):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"Jacobian{how} mismatch for output {out_index} with respect to input "
                        f"{k},\nnumerical:{numerical}\nanalytical:{analytical}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the function that maps inputs (and grad
    outputs) to the first-order gradients, built with ``create_graph=True``."""
    import glasstorch

    from .engine import grad as autograd_grad
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        gen = glasstorch.Generator().manual_seed(0)
        grad_outputs = tuple(glasstorch.randn(o.shape, dtype=o.dtype, generator=gen)
                             .requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func(*ins))
        wrt = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        grads = autograd_grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
