"""Activation modules and functionals vs torch: values, gradients, reprs, double backward."""

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF

from .util import assert_close, compare_module

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

MODULES = [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("PReLU", ()), ("PReLU", (3,)),
    ("RReLU", (0.1, 0.3)), ("ELU", (0.5,)), ("SELU", ()), ("CELU", (2.0,)), ("GELU", ()),
    ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()), ("Sigmoid", ()), ("LogSigmoid", ()),
    ("Tanh", ()), ("Tanhshrink", ()), ("Hardtanh", (-2.0, 1.5)), ("Hardswish", ()),
    ("Hardsigmoid", ()), ("Hardshrink", (0.7,)), ("Softshrink", (0.7,)),
    ("Softplus", (2.0, 5.0)), ("Softsign", ()), ("Threshold", (0.3, -1.0)), ("GLU", (-1,)),
    ("Softmax", (1,)), ("Softmin", (2,)), ("LogSoftmax", (-1,)), ("Softmax2d", ()),
]


@pytest.mark.parametrize("name,args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_module_matches_torch(name, args):
    g, t = getattr(gnn, name)(*args), getattr(tnn, name)(*args)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    g.eval()
    t.eval()
    x = np.random.default_rng(0).uniform(-4, 4, (2, 3, 4, 6)).astype(np.float32)
    compare_module(g, t, x)


@pytest.mark.parametrize("name", ["ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU",
                                  "Hardtanh", "Hardswish", "Hardsigmoid", "SiLU", "Mish"])
def test_inplace_repr_and_values(name):
    g, t = getattr(gnn, name)(inplace=True), getattr(tnn, name)(inplace=True)
    assert repr(g) == repr(t)
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    gx, tx = glasstorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    go, to = g(gx), t(tx)
    assert_close(go, to)
    assert_close(gx, tx)  # the input itself was overwritten


def test_inplace_inside_graph_backprops():
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    grads = []
    for lib, mod in ((glasstorch, gnn), (torch, tnn)):
        a = lib.tensor(x, requires_grad=True)
        y = mod.ELU(inplace=True)(a * 2)
        y = mod.LeakyReLU(0.1, inplace=True)(y - 0.5)
        (y * y).sum().backward()
        grads.append((a.grad, type(y.grad_fn).__name__))
    assert_close(grads[0][0], grads[1][0])
    assert grads[0][1] == grads[1][1] == "LeakyReluBackward1"


def test_prelu_init_and_repr():
    g = gnn.PReLU(4, init=0.1)
    assert repr(g) == repr(tnn.PReLU(4, init=0.1)) == "PReLU(num_parameters=4)"
    assert np.allclose(g.weight.detach().numpy(), 0.1)
    assert g.weight.requires_grad


def test_rrelu_train_slopes_within_bounds_and_eval_mean():
    x = -glasstorch.rand(10000) - 0.1
    m = gnn.RReLU(0.1, 0.3)
    y = m(x)
    slopes = (y / x).numpy()
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6
    assert abs(slopes.mean() - 0.2) < 0.01 and slopes.std() > 0.05
    m.eval()
    assert np.allclose((m(x) / x).numpy(), 0.2)
    a = glasstorch.tensor([-1.0, 2.0], requires_grad=True)
    m.train()
    out = m(a)
    out.sum().backward()
    assert type(out.grad_fn).__name__ == "RreluWithNoiseBackward0"
    assert a.grad[1].item() == 1.0 and 0.1 <= a.grad[0].item() <= 0.3
    assert np.isclose(out[0].item(), -a.grad[0].item())


def test_softmax_implicit_dim_warns_like_torch():
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        g = GF.softmax(glasstorch.from_numpy(x))
    with pytest.warns(UserWarning):
        t = TF.softmax(torch.from_numpy(x))
    assert_close(g, t)
    with pytest.warns(UserWarning, match="log_softmax"):
        GF.log_softmax(glasstorch.from_numpy(x[0]))


def test_softmax2d_rejects_2d():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D"):
        gnn.Softmax2d()(glasstorch.zeros(2, 3))


def test_log_softmax_stable_for_large_logits():
    for lib in (glasstorch, torch):
        x = lib.tensor([[1000.0, -1000.0, 0.0]], requires_grad=True)
        y = lib.log_softmax(x, 1)
        y.sum().backward()
        if lib is glasstorch:
            gy, gg = y.detach().numpy(), x.grad.numpy()
        else:
            ty, tg = y.detach().numpy(), x.grad.numpy()
    assert np.isfinite(gy).all()
    np.testing.assert_allclose(gy, ty)
    np.testing.assert_allclose(gg, tg)


def test_half_precision_matches():
    x = np.random.default_rng(4).uniform(-4, 4, (5, 7)).astype(np.float32)
    for name in ("gelu", "silu", "elu", "softplus", "mish", "logsigmoid", "hardswish"):
        g = getattr(GF, name)(glasstorch.from_numpy(x).to(glasstorch.bfloat16))
        t = getattr(TF, name)(torch.from_numpy(x).to(torch.bfloat16))
        assert str(g.dtype) == str(t.dtype)
        assert_close(g, t, rtol=1e-2, atol=1e-2, msg=name)


DOUBLE = ["elu", "selu", "celu", "gelu", "silu", "mish", "logsigmoid", "softplus", "leaky_relu",
          "hardswish", "softshrink", "hardshrink", "glu"]


@pytest.mark.parametrize("name", DOUBLE)
def test_double_backward_matches_torch(name):
    x = np.random.default_rng(5).uniform(-3, 3, (3, 4)).astype(np.float64)
    res = []
    for lib, F in ((glasstorch, GF), (torch, TF)):
        a = lib.tensor(x, requires_grad=True)
        y = getattr(F, name)(a)
        (g,) = lib.autograd.grad((y * y).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), a)
        res.append((g, gg))
    assert_close(res[0][0], res[1][0], 1e-10, 1e-10)
    assert_close(res[0][1], res[1][1], 1e-8, 1e-8)


def test_gradcheck_softmax_family():
    x = glasstorch.randn(3, 4, dtype=glasstorch.float64, requires_grad=True)
    for f in (lambda t: glasstorch.softmax(t, 1), lambda t: glasstorch.log_softmax(t, 0),
              lambda t: GF.gelu(t), lambda t: GF.gelu(t, approximate="tanh")):
        assert glasstorch.autograd.gradcheck(f, (x,))
        assert glasstorch.autograd.gradgradcheck(f, (x,))


def test_errors_match_torch():
    x32 = glasstorch.zeros(3)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        GF.hardtanh(x32, 2.0, 1.0)
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        GF.softshrink(x32, -1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        GF.glu(x32)
    with pytest.raises(NotImplementedError, match="GeluKernelImpl"):
        GF.gelu(glasstorch.zeros(3, dtype=glasstorch.int64))
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        GF.relu(glasstorch.zeros(3, dtype=glasstorch.bool))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        GF.prelu(glasstorch.zeros(2, 3), glasstorch.zeros(2))
