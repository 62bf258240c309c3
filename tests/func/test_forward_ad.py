"""autograd.forward_ad (dual levels, make_dual/unpack_dual), Function.jvp and
gradcheck(check_forward_ad=True), compared with torch."""

import numpy as np
import pytest

import glasstorch
from glasstorch.autograd.gradcheck import GradcheckError

torch = pytest.importorskip("torch")

LIBS = (glasstorch, torch)
X = np.array([0.5, 1.5, -0.3])


def _np(t):
    return None if t is None else t.detach().numpy()


def _both(fn):
    out = [fn(lib, lib.autograd.forward_ad) for lib in LIBS]
    ours, theirs = out
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, torch.Tensor) or b is None:
            assert (a is None) == (b is None)
            if b is not None:
                assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
                assert a.requires_grad == b.requires_grad
                np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
        else:
            assert a == b


def _dual(lib, fwAD, tangent=None):
    t = lib.tensor(X * 0 + 1 if tangent is None else tangent)
    return fwAD.make_dual(lib.tensor(X), t)


CASES = {
    "pointwise_chain": lambda lib, fwAD: [fwAD.unpack_dual((_dual(lib, fwAD) ** 2 + 1).sin())
                                          .tangent],
    "unpack": lambda lib, fwAD: list(fwAD.unpack_dual(_dual(lib, fwAD))),
    "plain_tensor": lambda lib, fwAD: list(fwAD.unpack_dual(lib.tensor(X))),
    "dual_is_view": lambda lib, fwAD: [(lambda x: fwAD.make_dual(x, lib.ones(3))._base is x)(
        lib.tensor(X)), _dual(lib, fwAD).requires_grad],
    "no_grad": lambda lib, fwAD: [_no_grad_tangent(lib, fwAD)],
    "in_place": lambda lib, fwAD: [_in_place_tangent(lib, fwAD)],
    "setitem_dual_value": lambda lib, fwAD: [_setitem_tangent(lib, fwAD)],
    "non_differentiable": lambda lib, fwAD: list(fwAD.unpack_dual(_dual(lib, fwAD).argmax())),
    "matmul_reduction": lambda lib, fwAD: [fwAD.unpack_dual(
        (lib.ones(2, 3, dtype=lib.float64) @ _dual(lib, fwAD)).softmax(0).sum()).tangent],
    "multi_output": lambda lib, fwAD: [fwAD.unpack_dual(v).tangent
                                       for v in _dual(lib, fwAD).split(2)],
    "closure_requires_grad": lambda lib, fwAD: [_weight_tangent(lib, fwAD)],
    "random_op": lambda lib, fwAD: [_random_tangent(lib, fwAD)],
}


def _no_grad_tangent(lib, fwAD):
    d = _dual(lib, fwAD)
    with lib.no_grad():
        return fwAD.unpack_dual(d.exp()).tangent


def _in_place_tangent(lib, fwAD):
    y = _dual(lib, fwAD).clone()
    y.mul_(3).add_(lib.ones(3, dtype=lib.float64))
    return fwAD.unpack_dual(y).tangent


def _setitem_tangent(lib, fwAD):
    x = lib.zeros(2, 3, dtype=lib.float64)
    x[1] = _dual(lib, fwAD) * 2
    return fwAD.unpack_dual(x).tangent


def _weight_tangent(lib, fwAD):
    w = lib.ones(1, 3, dtype=lib.float64, requires_grad=True)
    return fwAD.unpack_dual(lib.nn.functional.linear(_dual(lib, fwAD), w)).tangent


def _random_tangent(lib, fwAD):
    lib.manual_seed(0)
    d = _dual(lib, fwAD)
    return fwAD.unpack_dual(d * lib.randn(3, dtype=lib.float64)).tangent


@pytest.mark.parametrize("name", sorted(CASES))
def test_dual_tensors_match_torch(name):
    def run(lib, fwAD):
        with fwAD.dual_level():
            return CASES[name](lib, fwAD)
    _both(run)


def test_tangent_gone_after_level():
    def run(lib, fwAD):
        with fwAD.dual_level():
            d = _dual(lib, fwAD)
        return [fwAD.unpack_dual(d).tangent, fwAD.enter_dual_level(), fwAD.exit_dual_level()]
    _both(run)


def test_reverse_over_forward():
    def run(lib, fwAD):
        x = lib.tensor(X, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.ones(3, dtype=lib.float64))
            p, t = fwAD.unpack_dual((d.sin() * d).sum())
            g, = lib.autograd.grad(t, x)
        return [p, t, g]
    _both(run)


ERRORS = {
    "no_level": lambda lib, fwAD: fwAD.make_dual(lib.ones(2), lib.ones(2)),
    "nested": lambda lib, fwAD: _in_level(fwAD, fwAD.enter_dual_level),
    "shape": lambda lib, fwAD: _in_level(fwAD, lambda: fwAD.make_dual(lib.ones(2),
                                                                      lib.ones(3))),
    "integer_primal": lambda lib, fwAD: _in_level(fwAD, lambda: fwAD.make_dual(
        lib.arange(3), lib.ones(3))),
    "exit_without_level": lambda lib, fwAD: fwAD.exit_dual_level(),
}


def _in_level(fwAD, fn):
    with fwAD.dual_level():
        fn()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raised = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            ERRORS[name](lib, lib.autograd.forward_ad)
        raised.append(info.value)
    assert type(raised[0]) is type(raised[1])
    assert str(raised[0]) == str(raised[1])


def _functions(lib):
    class WithJvp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.x = inputs[0]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.x.cos()

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.x.cos() * 2  # twice the derivative: only jvp can produce it

    class WithoutJvp(WithJvp):
        jvp = lib.autograd.Function.jvp

    return WithJvp, WithoutJvp


def test_function_jvp_is_called():
    def run(lib, fwAD):
        with_jvp, _ = _functions(lib)
        with fwAD.dual_level():
            return [fwAD.unpack_dual(with_jvp.apply(_dual(lib, fwAD)) * 3).tangent]
    _both(run)


def test_function_without_jvp_refuses_duals():
    for lib in LIBS:
        fwAD = lib.autograd.forward_ad
        _, without = _functions(lib)
        with fwAD.dual_level():
            assert fwAD.unpack_dual(without.apply(lib.tensor(X))).tangent is None
            with pytest.raises(NotImplementedError, match="You must implement the jvp"):
                without.apply(_dual(lib, fwAD))


def test_gradcheck_forward_ad():
    x = glasstorch.tensor(X, requires_grad=True)
    w = glasstorch.tensor(np.arange(9.0).reshape(3, 3) / 7, requires_grad=True)
    f = lambda x, w: ((w @ x).tanh(), x.cumsum(0) * w.sum())  # noqa: E731
    assert glasstorch.autograd.gradcheck(f, (x, w), check_forward_ad=True)
    assert glasstorch.autograd.gradcheck(f, (x, w), check_forward_ad=True,
                                         check_backward_ad=False)
    wrong, _ = _functions(glasstorch)  # its jvp is wrong, its backward right
    assert glasstorch.autograd.gradcheck(wrong.apply, (x,))
    with pytest.raises(GradcheckError, match="forward mode mismatch"):
        glasstorch.autograd.gradcheck(wrong.apply, (x,), check_forward_ad=True,
                                      check_backward_ad=False)
    assert not glasstorch.autograd.gradcheck(wrong.apply, (x,), check_forward_ad=True,
                                             raise_exception=False)
