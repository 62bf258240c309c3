"""Second derivatives of the common pointwise ops (gradgradcheck, and
torch.autograd.grad(..., create_graph=True) compared with torch's), complex-input
gradients, and the pointwise ops whose backward torch refuses."""

import numpy as np
import pytest
import torch

import glasstorch

# name: (fn(lib, *tensors), input shapes, value range)
CASES = {
    "mul_div": (lambda lib, a, b: a * b / (b * b + 1), [(3, 4), (4,)], (0.5, 2)),
    "pow_scalar": (lambda lib, a: a ** 3, [(3, 4)], (0.5, 2)),
    "pow_tensor": (lambda lib, a, b: a ** b, [(3, 4), (3, 4)], (0.5, 2)),
    "rpow": (lambda lib, a: 2.5 ** a, [(5,)], (-1, 1)),
    "square": (lambda lib, a: lib.square(a), [(3, 4)], (-2, 2)),
    "float_power": (lambda lib, a: lib.float_power(a, 2.5), [(4,)], (0.5, 2)),
    "exp_log": (lambda lib, a: lib.log(lib.exp(a) + a * a), [(3, 4)], (0.5, 2)),
    "sqrt_rsqrt": (lambda lib, a: lib.sqrt(a) + lib.rsqrt(a), [(3, 4)], (0.5, 2)),
    "sigmoid_tanh": (lambda lib, a: lib.sigmoid(a) * lib.tanh(a), [(3, 4)], (-2, 2)),
    "sin_cos": (lambda lib, a: lib.sin(a) * lib.cos(2 * a), [(3, 4)], (-2, 2)),
    "reciprocal": (lambda lib, a: lib.reciprocal(a), [(5,)], (0.5, 2)),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), [(3, 4), (3, 4)], (0.5, 2)),
    "hypot": (lambda lib, a, b: lib.hypot(a, b), [(3, 4), (4,)], (0.5, 2)),
    "xlogy": (lambda lib, a, b: lib.xlogy(a, b), [(3, 4), (3, 4)], (0.5, 2)),
    "logit": (lambda lib, a: lib.logit(a * 0.3), [(5,)], (0.5, 2)),
    "clamp": (lambda lib, a: (a * a).clamp(0.5, 2.0), [(3, 4)], (0.3, 1.8)),
    "clamp_tensor": (lambda lib, a, lo: lib.clamp(a * a, lo * 0.1), [(3, 4), (4,)], (0.5, 2)),
    "maximum": (lambda lib, a, b: lib.maximum(a * a, b * b), [(3, 4), (3, 4)], (0.5, 2)),
    "where": (lambda lib, a, b: lib.where(a > 1, a * a, b * a), [(3, 4), (3, 4)], (0.5, 2)),
    "lerp": (lambda lib, a, b, w: lib.lerp(a * a, b, w * 0.4), [(3, 4), (3, 4), (4,)],
             (0.5, 2)),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b * b, c, value=0.5),
                [(3, 4), (3, 4), (4,)], (0.5, 2)),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a, b * b, c, value=2),
                [(3, 4), (3, 4), (4,)], (0.5, 2)),
    "abs_neg": (lambda lib, a: lib.abs(-a * a * a), [(3, 4)], (0.5, 2)),
    "remainder": (lambda lib, a, b: lib.remainder(a * a, b), [(5,), (5,)], (0.5, 2)),
    "frac": (lambda lib, a: (a * a).frac(), [(5,)], (0.3, 0.9)),
    # (a * 1).pow_(3) is left out: the shared in-place machinery snapshots the overwritten
    # input without its history, so its second derivative is lost (first order is fine)
    "inplace_clamp": (lambda lib, a: (a * a).clamp_(0.5, 2.0), [(3, 4)], (0.3, 1.8)),
}


def _inputs(shapes, bounds, seed=0):
    rng = np.random.default_rng(seed)
    low, high = bounds
    return [rng.uniform(low, high, size=s) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    fn, shapes, bounds = CASES[name]
    leaves = [glasstorch.tensor(a, requires_grad=True) for a in _inputs(shapes, bounds)]
    assert glasstorch.autograd.gradgradcheck(lambda *xs: fn(glasstorch, *xs), tuple(leaves))


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_matches_torch(name):
    fn, shapes, bounds = CASES[name]
    arrays = _inputs(shapes, bounds, seed=1)
    results = []
    for lib in (torch, glasstorch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        firsts = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
        total = sum((g * g).sum() for g in firsts)
        seconds = lib.autograd.grad(total, xs, allow_unused=True)
        results.append(([f.detach().numpy() for f in firsts],
                        [None if s is None else s.numpy() for s in seconds],
                        type(out.grad_fn).__name__))
    (t_first, t_second, t_name), (g_first, g_second, g_name) = results
    assert g_name == t_name
    for t, g in zip(t_first, g_first):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    for t, g, a in zip(t_second, g_second, arrays):
        # an unused input (None) and a zero gradient are the same second derivative
        t = np.zeros_like(a) if t is None else t
        g = np.zeros_like(a) if g is None else g
        np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- complex inputs

COMPLEX = {
    "sgn": lambda lib, z: lib.sgn(z),
    "angle": lambda lib, z: lib.angle(z),
    "abs": lambda lib, z: lib.abs(z),
    "conj": lambda lib, z: (z * z).conj() * z,
    "conj_physical": lambda lib, z: lib.conj_physical(z * z) * z,
    "pow": lambda lib, z: z ** 3,
    "exp_mul": lambda lib, z: lib.exp(z) * z,
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_gradient_matches_torch(name):
    rng = np.random.default_rng(2)
    z = rng.uniform(-2, 2, (5,)) + 1j * rng.uniform(-2, 2, (5,))
    z[0] = 0  # the formulas' special case (sgn, angle, abs at 0)
    grads = []
    for lib in (torch, glasstorch):
        t = lib.tensor(z, requires_grad=True)
        out = COMPLEX[name](lib, t)
        # abs() makes a real loss from a complex output (shifted away from 0)
        loss = ((out + (0.3 + 0.2j)) * (0.7 - 1.3j)).abs().sum() if out.dtype.is_complex \
            else (out * 0.9).sum()
        (g,) = lib.autograd.grad(loss, t)
        grads.append((g.detach().numpy(), type(out.grad_fn).__name__))
    (t_g, t_name), (g_g, g_name) = grads
    if name not in ("conj", "conj_physical", "exp_mul"):
        assert g_name == t_name
    np.testing.assert_allclose(g_g, t_g, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- no derivative

REFUSED = {
    "floor_divide": (lambda lib, a, b: lib.floor_divide(a, b), RuntimeError),
    "floordiv_scalar": (lambda lib, a, b: a // 2, RuntimeError),
    "rmod": (lambda lib, a, b: 7 % a, RuntimeError),
    "heaviside": (lambda lib, a, b: lib.heaviside(a, b), RuntimeError),
    "asinh_": (lambda lib, a, b: (a * 1).asinh_(), NotImplementedError),
    "atanh_": (lambda lib, a, b: (a * 0.1).atanh_(), NotImplementedError),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_derivative(name):
    fn, exc = REFUSED[name]
    a, b = _inputs([(4,), (4,)], (0.5, 2))
    names = []
    for lib in (torch, glasstorch):
        x = lib.tensor(a, requires_grad=True)
        out = fn(lib, x, lib.tensor(b, requires_grad=True))
        names.append((type(out.grad_fn).__name__, len(out.grad_fn.next_functions)))
        with pytest.raises(exc, match="derivative for"):
            out.sum().backward()
    assert names[0] == names[1]


def test_piecewise_constant_ops_have_zero_gradients():
    x = glasstorch.tensor([-1.5, 0.3, 2.7], requires_grad=True)
    for f, node in ((glasstorch.floor, "FloorBackward0"), (glasstorch.sign, "SignBackward0"),
                    (lambda t: t.round(decimals=1), "RoundBackward1")):
        y = f(x)
        assert y.grad_fn.name() == node
        (g,) = glasstorch.autograd.grad((y * float("inf")).sum(), x)
        assert g.tolist() == [0.0, 0.0, 0.0]  # zeros, not inf * 0 = nan
