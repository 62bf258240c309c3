"""nn.utils (clip_grad, parameter vectors, parametrize, weight/spectral norm, orthogonal,
fusion, stateless) and glasstorch.func.functional_call, against torch."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.func
import glasstorch.nn
import glasstorch.nn.utils as gu

from .util import assert_close as _assert_close
from .util import to_gt, to_np

torch = pytest.importorskip("torch")
import torch.nn.utils as tu  # noqa: E402

RNG = np.random.default_rng(0)


def assert_close(ours, theirs, rtol=1e-5, atol=1e-6, msg=""):
    if isinstance(theirs, np.ndarray):
        theirs = torch.from_numpy(theirs)
    _assert_close(ours, theirs, rtol, atol, msg)


def _pair(*shape, dtype=np.float32):
    a = RNG.standard_normal(shape).astype(dtype)
    return glasstorch.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _params_with_grads(shapes, dtype=np.float32, none_at=()):
    gp, tp = [], []
    for i, s in enumerate(shapes):
        g, t = _pair(*s, dtype=dtype)
        g.requires_grad_()
        t.requires_grad_()
        if i not in none_at:
            gg, tg = _pair(*s, dtype=dtype)
            g.grad, t.grad = gg, tg
        gp.append(g)
        tp.append(t)
    return gp, tp


def build(L):
    """Small modules made from tensor ops only, defined identically for either library."""
    nn = L.nn

    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(L.randn(n_out, n_in))
            self.bias = nn.Parameter(L.randn(n_out))
            self.register_buffer("shift", L.randn(n_out))

        def forward(self, x):
            return x @ self.weight.t() + self.bias + self.shift

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Affine(3, 4)
            self.b = Affine(4, 2)

        def forward(self, x, scale=1.0):
            return self.b(self.a(x).tanh()) * scale

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Affine(3, 3)
            self.b = Affine(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    class Scale(nn.Module):
        def forward(self, x):
            return x * 2.0

        def right_inverse(self, y):
            return y / 2.0

    class Grow(nn.Module):  # changes the shape: only allowed with unsafe=True
        def forward(self, x):
            return L.cat([x, x], 0)

    return Affine, Net, Tied, Symmetric, Scale, Grow


GT, TT = build(glasstorch), build(torch)


def _sync(gmod, tmod):
    """Copy every parameter/buffer of a torch module into the glasstorch one (by name)."""
    gstate = dict(gmod.named_parameters())
    gstate.update(gmod.named_buffers())
    tstate = dict(tmod.named_parameters())
    tstate.update(tmod.named_buffers())
    assert sorted(gstate) == sorted(tstate)
    with glasstorch.no_grad():
        for k, v in tstate.items():
            gstate[k].copy_(to_gt(v))


# ---------------------------------------------------------------------- clip_grad
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, float("inf"), "inf", -float("inf")])
@pytest.mark.parametrize("max_norm", [0.1, 1e6])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm(norm_type, max_norm, foreach):
    shapes = [(3, 4), (5,), (), (2, 0), (2, 3, 2)]
    gp, tp = _params_with_grads(shapes, none_at=(2,))
    if float(norm_type) in (float("inf"), -float("inf")):
        # no identity for max/min: torch refuses the empty gradient
        with pytest.raises(RuntimeError):
            tu.clip_grad_norm_(tp, max_norm, norm_type, foreach=foreach)
        with pytest.raises(RuntimeError, match="empty tensor"):
            gu.clip_grad_norm_(gp, max_norm, norm_type, foreach=foreach)
        del gp[3], tp[3]
    gn = gu.clip_grad_norm_(gp, max_norm, norm_type, foreach=foreach)
    tn = tu.clip_grad_norm_(tp, max_norm, norm_type, foreach=foreach)
    assert gn.dtype == glasstorch.float32 and gn.shape == tn.shape
    assert_close(gn, tn)
    for g, t in zip(gp, tp):
        assert (g.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert_close(g.grad, t.grad, rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_dtypes_and_single_tensor():
    for dt in (np.float64, np.float16):
        gp, tp = _params_with_grads([(4, 3), (7,)], dtype=dt)
        gn, tn = gu.clip_grad_norm_(gp, 0.5), tu.clip_grad_norm_(tp, 0.5)
        assert str(gn.dtype) == str(tn.dtype)
        tol = 1e-12 if dt == np.float64 else 2e-3
        assert_close(gn, tn, rtol=tol, atol=tol)
        for g, t in zip(gp, tp):
            assert str(g.grad.dtype) == str(t.grad.dtype)
            assert_close(g.grad, t.grad, rtol=tol, atol=tol)
    # mixed dtypes promote the total norm, a lone tensor is accepted
    gp, tp = _params_with_grads([(3,)], dtype=np.float32)
    gq, tq = _params_with_grads([(2, 2)], dtype=np.float64)
    assert str(gu.get_total_norm([gp[0].grad, gq[0].grad]).dtype) == \
        str(tu.get_total_norm([tp[0].grad, tq[0].grad]).dtype)
    assert_close(gu.clip_grad_norm_(gp[0], 0.3), tu.clip_grad_norm_(tp[0], 0.3))
    assert_close(gp[0].grad, tp[0].grad)


def test_clip_grad_norm_empty_and_nonfinite():
    z = gu.clip_grad_norm_([], 1.0)
    assert z.dtype == glasstorch.float32 and z.shape == () and float(z) == 0.0
    p = glasstorch.ones(3, requires_grad=True)  # no grad: skipped, norm 0
    assert float(gu.clip_grad_norm_([p], 1.0)) == 0.0 and p.grad is None
    with pytest.warns(UserWarning, match="empty generator"):
        gu.clip_grad_norm_((x for x in []), 1.0)
    for bad in (float("nan"), float("inf")):
        gp, tp = _params_with_grads([(3,)])
        gp[0].grad[1] = bad
        tp[0].grad[1] = bad
        with pytest.raises(RuntimeError, match="non-finite"):
            gu.clip_grad_norm_(gp, 1.0, error_if_nonfinite=True)
        with pytest.raises(RuntimeError):
            tu.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
        gn, tn = gu.clip_grad_norm_(gp, 1.0), tu.clip_grad_norm_(tp, 1.0)
        np.testing.assert_array_equal(to_np(gn), to_np(tn))
        np.testing.assert_array_equal(to_np(gp[0].grad), to_np(tp[0].grad))
    with pytest.warns(FutureWarning):
        gu.clip_grad_norm(_params_with_grads([(2,)])[0], 1.0)


def test_get_total_norm_and_clip_grads_with_norm():
    gp, tp = _params_with_grads([(3, 3), (4,)])
    gn = gu.get_total_norm([p.grad for p in gp], 3.0)
    tn = tu.get_total_norm([p.grad for p in tp], 3.0)
    assert_close(gn, tn)
    gu.clip_grads_with_norm_(gp, 0.2, gn)
    tu.clip_grads_with_norm_(tp, 0.2, tn)
    for g, t in zip(gp, tp):
        assert_close(g.grad, t.grad)
    # the norm is computed without building a graph, and clipping does not record either
    x = glasstorch.randn(4, requires_grad=True)
    y = x * 2
    assert gu.get_total_norm([y]).grad_fn is None


def test_clip_grad_value():
    gp, tp = _params_with_grads([(5, 4), (3,), ()], none_at=(1,))
    assert gu.clip_grad_value_(gp, 0.5) is None
    tu.clip_grad_value_(tp, 0.5)
    for g, t in zip(gp, tp):
        if t.grad is None:
            assert g.grad is None
        else:
            assert_close(g.grad, t.grad, rtol=0, atol=0)
    g1, t1 = _params_with_grads([(6,)])
    gu.clip_grad_value_(g1[0], 0.1, foreach=True)
    tu.clip_grad_value_(t1[0], 0.1, foreach=True)
    assert_close(g1[0].grad, t1[0].grad, rtol=0, atol=0)


# ---------------------------------------------------------------------- parameter vectors
def test_parameters_to_vector_roundtrip():
    gp, tp = _params_with_grads([(2, 3), (4,), ()])
    gv, tv = gu.parameters_to_vector(gp), tu.parameters_to_vector(tp)
    assert_close(gv, tv, rtol=0, atol=0)
    assert type(gv.grad_fn).__name__ == type(tv.grad_fn).__name__ == "CatBackward0"
    up = RNG.standard_normal(tv.shape).astype(np.float32)
    gp[0].grad = gp[1].grad = gp[2].grad = None
    tp[0].grad = tp[1].grad = tp[2].grad = None
    (gv * glasstorch.from_numpy(up)).sum().backward()
    (tv * torch.from_numpy(up)).sum().backward()
    for g, t in zip(gp, tp):
        assert_close(g.grad, t.grad)
    new = glasstorch.arange(11.0)
    gu.vector_to_parameters(new, gp)
    tu.vector_to_parameters(torch.arange(11.0), tp)
    for g, t in zip(gp, tp):
        assert tuple(g.shape) == tuple(t.shape)
        assert_close(g, t, rtol=0, atol=0)
        assert g.requires_grad
    new[0] = 100.0  # the parameters now view the vector's storage, as in torch
    assert float(gp[0][0, 0]) == 100.0
    with pytest.raises(TypeError):
        gu.vector_to_parameters([1.0], gp)
    with pytest.raises(TypeError):
        tu.vector_to_parameters([1.0], tp)


# ---------------------------------------------------------------------- parametrize
def _backward_same(gout, tout, seed=1):
    up = np.random.default_rng(seed).standard_normal(tuple(tout.shape)).astype(np.float32)
    up_t = torch.from_numpy(up).to(tout.dtype)
    (gout * glasstorch.from_numpy(up).to(gout.dtype)).sum().backward()
    (tout * up_t).sum().backward()


def test_register_parametrization_matches_torch():
    gm, tm = GT[0](4, 4), TT[0](4, 4)
    _sync(gm, tm)
    gP = glasstorch.nn.utils.parametrize
    tP = torch.nn.utils.parametrize
    gP.register_parametrization(gm, "weight", GT[3]())
    tP.register_parametrization(tm, "weight", TT[3]())
    assert type(gm).__name__ == type(tm).__name__ == "ParametrizedAffine"
    assert isinstance(gm, GT[0]) and gP.type_before_parametrizations(gm) is GT[0]
    assert repr(gm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in gm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert gP.is_parametrized(gm) and gP.is_parametrized(gm, "weight")
    assert not gP.is_parametrized(gm, "bias")
    assert_close(gm.weight, tm.weight, rtol=0, atol=0)
    assert_close(gm.parametrizations.weight.original, tm.parametrizations.weight.original)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    _backward_same(gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x)))
    assert_close(gm.parametrizations.weight.original.grad,
                 tm.parametrizations.weight.original.grad)
    assert_close(gm.bias.grad, tm.bias.grad)
    # a second parametrization chains after the first
    gP.register_parametrization(gm, "weight", GT[4]())
    tP.register_parametrization(tm, "weight", TT[4]())
    assert repr(gm) == repr(tm)
    assert_close(gm.weight, tm.weight)
    # assigning goes through right_inverse of the whole chain
    a = RNG.standard_normal((4, 4)).astype(np.float32)
    a = a + a.T
    gm.weight = glasstorch.from_numpy(a.copy())
    tm.weight = torch.from_numpy(a.copy())
    assert_close(gm.parametrizations.weight.original, tm.parametrizations.weight.original)
    assert_close(gm.weight, a)
    # cached(): one evaluation per block
    with gP.cached():
        assert gm.weight is gm.weight
    assert gm.weight is not gm.weight
    # removing: keep the current value as a plain parameter, and the original class
    w = to_np(gm.weight)
    gP.remove_parametrizations(gm, "weight")
    tP.remove_parametrizations(tm, "weight")
    assert type(gm) is GT[0] and not hasattr(gm, "parametrizations")
    assert isinstance(gm.weight, glasstorch.nn.Parameter)
    assert_close(gm.weight, w)
    assert_close(gm.weight, tm.weight)
    assert repr(gm) == repr(tm)


def test_parametrize_buffer_and_leave_unparametrized():
    gm, tm = GT[0](3, 3), TT[0](3, 3)
    _sync(gm, tm)
    gP = glasstorch.nn.utils.parametrize
    gP.register_parametrization(gm, "weight", GT[4]())
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", TT[4]())
    gP.register_parametrization(gm, "shift", GT[4]())
    torch.nn.utils.parametrize.register_parametrization(tm, "shift", TT[4]())
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in gm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert_close(gm.shift, tm.shift)
    gP.remove_parametrizations(gm, "weight", leave_parametrized=False)
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight", leave_parametrized=False)
    assert_close(gm.weight, tm.weight)
    assert type(gm).__name__ == "ParametrizedAffine"  # shift is still parametrized
    gP.remove_parametrizations(gm, "shift")
    assert type(gm) is GT[0]


def test_parametrize_errors_and_unsafe():
    gP = glasstorch.nn.utils.parametrize
    tP = torch.nn.utils.parametrize
    for P, (A, _, _, _, _, Grow) in ((gP, GT), (tP, TT)):
        m = A(3, 3)
        with pytest.raises(ValueError, match="may not change the shape"):
            P.register_parametrization(m, "weight", Grow())
        with pytest.raises(ValueError, match="does not have a parameter"):
            P.register_parametrization(m, "nothing", Grow())
        with pytest.raises(ValueError):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", Grow(), unsafe=True)
        assert tuple(m.weight.shape) == (6, 3)
        assert m.parametrizations.weight.unsafe
        with pytest.raises(RuntimeError, match="right_inverse"):
            m.weight = m.weight.detach()
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
            pickle.dumps(m)
        m2 = copy.deepcopy(m)
        assert type(m2) is type(m) and tuple(m2.weight.shape) == (6, 3)


# ---------------------------------------------------------------------- weight_norm
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_parametrization(dim):
    gm, tm = GT[0](5, 3), TT[0](5, 3)
    _sync(gm, tm)
    glasstorch.nn.utils.parametrizations.weight_norm(gm, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    assert repr(gm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in gm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert_close(gm.weight, tm.weight)
    assert type(gm.weight.grad_fn).__name__ == type(tm.weight.grad_fn).__name__
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    _backward_same(gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x)))
    for (n, g), (_, t) in zip(gm.named_parameters(), tm.named_parameters()):
        assert_close(g.grad, t.grad, rtol=1e-5, atol=1e-6, msg=n)
    # legacy state dicts with weight_g / weight_v load through the compat hook
    sd = {"weight_g": tm.parametrizations.weight.original0.detach() * 2,
          "weight_v": tm.parametrizations.weight.original1.detach()}
    gm.load_state_dict({k: to_gt(v) for k, v in sd.items()}, strict=False)
    assert_close(gm.parametrizations.weight.original0, sd["weight_g"])


@pytest.mark.parametrize("dim", [0, 2, -1, 1])
def test_weight_norm_kernel_gradcheck(dim):
    from glasstorch.nn.utils.weight_norm import _weight_norm, norm_except_dim
    v = glasstorch.randn(3, 4, 2, dtype=glasstorch.float64, requires_grad=True)
    gshape = norm_except_dim(v, 2, dim).shape
    assert tuple(gshape) == tuple(torch.norm_except_dim(torch.zeros(3, 4, 2), 2, dim).shape)
    g = glasstorch.randn(tuple(gshape), dtype=glasstorch.float64, requires_grad=True)
    assert glasstorch.autograd.gradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))
    assert glasstorch.autograd.gradgradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))
    tv, tg = torch.from_numpy(to_np(v)), torch.from_numpy(to_np(g))
    assert_close(_weight_norm(v, g, dim), torch._weight_norm(tv, tg, dim), rtol=1e-12)


def test_legacy_weight_norm():
    gm, tm = GT[0](4, 3), TT[0](4, 3)
    _sync(gm, tm)
    with pytest.warns(FutureWarning):
        gu.weight_norm(gm, dim=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tu.weight_norm(tm, dim=0)
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(gm) == repr(tm)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    _backward_same(gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x)))
    for (n, g), (_, t) in zip(gm.named_parameters(), tm.named_parameters()):
        assert_close(g.grad, t.grad, msg=n)
    with pytest.raises(RuntimeError, match="two weight_norm hooks"), \
            pytest.warns(FutureWarning):
        gu.weight_norm(gm)
    gu.remove_weight_norm(gm)
    tu.remove_weight_norm(tm)
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert_close(gm.weight, tm.weight)
    with pytest.raises(ValueError, match="not found"):
        gu.remove_weight_norm(gm)


# ---------------------------------------------------------------------- spectral_norm
@pytest.mark.parametrize("shape,dim", [((5, 4), None), ((3, 6), 1), ((4, 4), -1)])
def test_spectral_norm_parametrization(shape, dim):
    gm, tm = GT[0](shape[1], shape[0]), TT[0](shape[1], shape[0])
    _sync(gm, tm)
    glasstorch.nn.utils.parametrizations.spectral_norm(gm, n_power_iterations=2, dim=dim)
    torch.nn.utils.parametrizations.spectral_norm(tm, n_power_iterations=2, dim=dim)
    assert repr(gm) == repr(tm)
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert [(n, tuple(p.shape)) for n, p in gm.named_buffers()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_buffers()]
    # the first u, v are random: start both from torch's
    _sync(gm, tm)
    x = RNG.standard_normal((3, shape[1])).astype(np.float32)
    for _ in range(2):  # training: power iteration updates u and v on every access
        gy, ty = gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x))
        assert_close(gy, ty, rtol=1e-4, atol=1e-5)
    s = "parametrizations.weight.0."
    assert_close(dict(gm.named_buffers())[s + "_u"], dict(tm.named_buffers())[s + "_u"],
                 rtol=1e-4, atol=1e-5)
    _backward_same(gy, ty)
    assert_close(gm.parametrizations.weight.original.grad,
                 tm.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-5)
    gm.eval()
    tm.eval()
    u0 = to_np(dict(gm.named_buffers())[s + "_u"])
    assert_close(gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x)), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(u0, to_np(dict(gm.named_buffers())[s + "_u"]))
    # sigma is the largest singular value once the iteration has converged
    w = to_np(gm.parametrizations.weight.original)
    with glasstorch.no_grad():
        gm.train()
        for _ in range(30):
            _ = gm.weight
        gm.eval()
        assert abs(np.linalg.svd(to_np(gm.weight), compute_uv=False)[0] - 1.0) < 1e-3
    assert w.shape == shape


def test_spectral_norm_errors_and_1d():
    sn = glasstorch.nn.utils.parametrizations._SpectralNorm
    with pytest.raises(IndexError):
        sn(glasstorch.randn(3, 4), dim=2)
    with pytest.raises(ValueError, match="n_power_iterations"):
        sn(glasstorch.randn(3, 4), n_power_iterations=0)
    v = glasstorch.randn(5)
    assert_close(sn(v)(v), torch.nn.functional.normalize(torch.from_numpy(to_np(v)), dim=0))
    with pytest.raises(ValueError, match="no parameter or buffer"):
        glasstorch.nn.utils.parametrizations.spectral_norm(GT[0](2, 2), name="nope")


def test_legacy_spectral_norm():
    gm, tm = GT[0](4, 3), TT[0](4, 3)
    _sync(gm, tm)
    gu.spectral_norm(gm)
    tu.spectral_norm(tm)
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(gm.state_dict()) == list(tm.state_dict())
    _sync(gm, tm)
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    gy, ty = gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x))
    assert_close(gy, ty, rtol=1e-4, atol=1e-5)
    assert_close(gm.weight_u, tm.weight_u, rtol=1e-4, atol=1e-5)
    _backward_same(gy, ty)
    assert_close(gm.weight_orig.grad, tm.weight_orig.grad, rtol=1e-4, atol=1e-5)
    gm2 = GT[0](4, 3)
    gu.spectral_norm(gm2)
    gm2.load_state_dict(gm.state_dict())
    assert_close(gm2.weight_v, gm.weight_v)
    gu.remove_spectral_norm(gm)
    tu.remove_spectral_norm(tm)
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert_close(gm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    assert not gm._state_dict_hooks and not gm._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="not found"):
        gu.remove_spectral_norm(gm)


# ---------------------------------------------------------------------- orthogonal
@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal(omap, shape):
    gm, tm = GT[0](shape[1], shape[0]), TT[0](shape[1], shape[0])
    _sync(gm, tm)
    glasstorch.nn.utils.parametrizations.orthogonal(gm, orthogonal_map=omap)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap)
    assert repr(gm) == repr(tm)
    assert list(gm.state_dict()) == list(tm.state_dict())
    w = to_np(gm.weight)
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    if shape[0] == shape[1]:  # deterministic: the orthogonalised weight itself
        assert_close(gm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    # from here on the same state in both (the completion of a non-square base is random)
    _sync(gm, tm)
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(0.1 * torch.randn(shape))
    _sync(gm, tm)
    x = RNG.standard_normal((2, shape[1])).astype(np.float32)
    gy, ty = gm(glasstorch.from_numpy(x)), tm(torch.from_numpy(x))
    assert_close(gy, ty, rtol=1e-4, atol=1e-5)
    _backward_same(gy, ty)
    assert_close(gm.parametrizations.weight.original.grad,
                 tm.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_batched_float64(omap):
    w = RNG.standard_normal((2, 4, 3))
    gm, tm = glasstorch.nn.Module(), torch.nn.Module()
    gm.weight = glasstorch.nn.Parameter(glasstorch.from_numpy(w.copy()))
    tm.weight = torch.nn.Parameter(torch.from_numpy(w.copy()))
    glasstorch.nn.utils.parametrizations.orthogonal(gm, orthogonal_map=omap)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap)
    q = to_np(gm.weight)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(0.1 * torch.randn(2, 4, 3, dtype=torch.float64))
    _sync(gm, tm)
    assert str(gm.weight.dtype) == str(tm.weight.dtype) == "torch.float64"
    assert_close(gm.weight, tm.weight, rtol=1e-10, atol=1e-12)
    _backward_same(gm.weight, tm.weight)
    assert_close(gm.parametrizations.weight.original.grad,
                 tm.parametrizations.weight.original.grad, rtol=1e-9, atol=1e-11)


def test_orthogonal_no_trivialization_and_errors():
    P = glasstorch.nn.utils.parametrizations
    gm, tm = GT[0](3, 5), TT[0](3, 5)
    _sync(gm, tm)
    P.orthogonal(gm, orthogonal_map="householder", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map="householder",
                                               use_trivialization=False)
    assert list(gm.state_dict()) == list(tm.state_dict())
    assert_close(gm.parametrizations.weight.original, tm.parametrizations.weight.original,
                 rtol=1e-4, atol=1e-5)
    assert_close(gm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="orthogonal_map"):
        P.orthogonal(GT[0](3, 3), orthogonal_map="qr")
    m = GT[0](3, 3)
    with pytest.raises(ValueError, match="matrix or batch"):
        P.orthogonal(m, name="bias")
    P.orthogonal(m, orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError):
        m.weight = glasstorch.eye(3)


def test_matrix_exp_helper():
    from glasstorch.nn.utils.parametrizations import _matrix_exp
    a = RNG.standard_normal((2, 5, 5)) * 3
    assert_close(_matrix_exp(glasstorch.from_numpy(a)), torch.matrix_exp(torch.from_numpy(a)),
                 rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------- fusion
def test_fuse_weights():
    c = RNG.standard_normal((6, 3, 3, 3)).astype(np.float32)
    b, rm, w, bb = (RNG.standard_normal(6).astype(np.float32) for _ in range(4))
    rv = RNG.random(6).astype(np.float32) + 0.5
    for transpose in (False, True):
        cw = c if not transpose else c.transpose(1, 0, 2, 3).copy()
        for args in ((cw, b, rm, rv, 1e-5, w, bb), (cw, None, rm, rv, 1e-3, None, None)):
            ga = [to_gt(torch.from_numpy(a)) if isinstance(a, np.ndarray) else a for a in args]
            ta = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
            gw, gb = gu.fuse_conv_bn_weights(*ga, transpose=transpose)
            tw, tb = tu.fuse_conv_bn_weights(*ta, transpose=transpose)
            assert isinstance(gw, glasstorch.nn.Parameter) and isinstance(gb, type(gw))
            assert (gw.requires_grad, gb.requires_grad) == (tw.requires_grad, tb.requires_grad)
            assert_close(gw, tw)
            assert_close(gb, tb)
    lw = RNG.standard_normal((6, 4)).astype(np.float32)
    gw, gb = gu.fuse_linear_bn_weights(*(to_gt(torch.from_numpy(a)) for a in
                                         (lw, b, rm, rv)), 1e-5, to_gt(torch.from_numpy(w)),
                                       to_gt(torch.from_numpy(bb)))
    tw, tb = tu.fuse_linear_bn_weights(*(torch.from_numpy(a) for a in (lw, b, rm, rv)), 1e-5,
                                       torch.from_numpy(w), torch.from_numpy(bb))
    assert_close(gw, tw)
    assert_close(gb, tb)


def _layers(L, names):
    return [getattr(L.nn, n, None) for n in names]


def test_fuse_conv_bn_eval_modules():
    gconv, gbn, glin, gbn1 = _layers(glasstorch, ["Conv2d", "BatchNorm2d", "Linear",
                                                  "BatchNorm1d"])
    if gconv is None or gbn is None or glin is None or gbn1 is None:
        pytest.skip("Conv2d/BatchNorm2d/Linear/BatchNorm1d not available yet")
    tc, tb = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4)
    with torch.no_grad():
        tb.running_mean.normal_()
        tb.running_var.uniform_(0.5, 2.0)
        tb.weight.normal_()
        tb.bias.normal_()
    gc, gb = gconv(3, 4, 3, padding=1), gbn(4)
    _sync(gc, tc)
    _sync(gb, tb)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        gu.fuse_conv_bn_eval(gc, gb)
    gc.eval(), gb.eval(), tc.eval(), tb.eval()
    gf, tf = gu.fuse_conv_bn_eval(gc, gb), tu.fuse_conv_bn_eval(tc, tb)
    x = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    gx, tx = glasstorch.from_numpy(x), torch.from_numpy(x)
    assert_close(gf(gx), tf(tx), rtol=1e-4, atol=1e-5)
    assert_close(gf(gx), gb(gc(gx)), rtol=1e-4, atol=1e-5)
    assert gf is not gc and gc.weight is not gf.weight
    tl, tb1 = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
    gl, gb1 = glin(3, 4), gbn1(4)
    with torch.no_grad():
        tb1.running_mean.normal_()
    _sync(gl, tl)
    _sync(gb1, tb1)
    for m in (gl, gb1, tl, tb1):
        m.eval()
    xl = RNG.standard_normal((5, 3)).astype(np.float32)
    assert_close(gu.fuse_linear_bn_eval(gl, gb1)(glasstorch.from_numpy(xl)),
                 tu.fuse_linear_bn_eval(tl, tb1)(torch.from_numpy(xl)), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------- functional_call
def test_functional_call_matches_torch_and_restores():
    gm, tm = GT[1](), TT[1]()
    _sync(gm, tm)
    new = {"a.weight": RNG.standard_normal((4, 3)).astype(np.float32),
           "b.shift": RNG.standard_normal(2).astype(np.float32)}
    gnew = {k: glasstorch.from_numpy(v.copy()).requires_grad_() for k, v in new.items()}
    tnew = {k: torch.from_numpy(v.copy()).requires_grad_() for k, v in new.items()}
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    gy = glasstorch.func.functional_call(gm, gnew, (glasstorch.from_numpy(x),), {"scale": 2.0})
    ty = torch.func.functional_call(tm, tnew, (torch.from_numpy(x),), {"scale": 2.0})
    assert_close(gy, ty)
    _backward_same(gy, ty)
    assert_close(gnew["a.weight"].grad, tnew["a.weight"].grad)
    assert gm.a.weight.grad is None  # the module's own weight was not used
    assert_close(gm.a.bias.grad, tm.a.bias.grad)
    assert isinstance(gm.a.weight, glasstorch.nn.Parameter)
    assert_close(gm.a.weight, tm.a.weight)
    # a single non-tuple argument, tuple of dicts, nothing replaced
    gy2 = glasstorch.func.functional_call(gm, ({"a.weight": gnew["a.weight"]},
                                               {"b.shift": gnew["b.shift"]}),
                                          glasstorch.from_numpy(x))
    assert_close(gy2, ty / 2)
    assert_close(glasstorch.func.functional_call(gm, {}, glasstorch.from_numpy(x)),
                 tm(torch.from_numpy(x)))
    with pytest.raises(ValueError, match="multiple dictionaries"):
        glasstorch.func.functional_call(gm, ({"a.bias": gm.a.bias}, {"a.bias": gm.a.bias}), x)
    with pytest.raises(ValueError):
        glasstorch.func.functional_call(gm, 3, x)
    # the module's tensors come back even when the call fails
    w = gm.a.weight
    with pytest.raises(RuntimeError):
        glasstorch.func.functional_call(gm, {"a.weight": glasstorch.zeros(2, 2)},
                                        glasstorch.from_numpy(x))
    assert gm.a.weight is w
    with pytest.warns(FutureWarning):
        glasstorch.nn.utils.stateless.functional_call(gm, {}, glasstorch.from_numpy(x))


def test_functional_call_strict_and_tied():
    gm, tm = GT[2](), TT[2]()
    _sync(gm, tm)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3)).astype(np.float32)
    for tie in (True, False):
        gy = glasstorch.func.functional_call(gm, {"a.weight": glasstorch.from_numpy(w)},
                                             glasstorch.from_numpy(x), tie_weights=tie)
        ty = torch.func.functional_call(tm, {"a.weight": torch.from_numpy(w)},
                                        torch.from_numpy(x), tie_weights=tie)
        assert_close(gy, ty)
    with pytest.raises(ValueError, match="tied"):
        glasstorch.func.functional_call(gm, {"a.weight": glasstorch.zeros(3, 3),
                                             "b.weight": glasstorch.ones(3, 3)}, x)
    with pytest.raises(RuntimeError, match="Missing key"):
        glasstorch.func.functional_call(gm, {"a.weight": glasstorch.zeros(3, 3)},
                                        glasstorch.from_numpy(x), strict=True)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        glasstorch.func.functional_call(gm, {"zzz": glasstorch.zeros(3, 3)},
                                        glasstorch.from_numpy(x), strict=True)
    full = {k: v.detach() * 0 for k, v in gm.named_parameters(remove_duplicate=False)}
    full.update({k: v * 0 for k, v in gm.named_buffers()})
    out = glasstorch.func.functional_call(gm, full, glasstorch.from_numpy(x), strict=True,
                                          tie_weights=False)
    assert_close(out, np.zeros((2, 3)))


def test_stack_module_state():
    models = [GT[0](3, 2) for _ in range(3)]
    params, buffers = glasstorch.func.stack_module_state(models)
    assert list(params) == ["weight", "bias"] and list(buffers) == ["shift"]
    assert tuple(params["weight"].shape) == (3, 2, 3)
    assert params["weight"].is_leaf and params["weight"].requires_grad
    assert not buffers["shift"].requires_grad
    assert_close(params["bias"][1], models[1].bias)
    with pytest.raises(RuntimeError, match="at least one"):
        glasstorch.func.stack_module_state([])
    models[0].eval()
    with pytest.raises(RuntimeError, match="training/eval"):
        glasstorch.func.stack_module_state(models)


def test_utils_namespace():
    names = [n for n in tu.__all__ if n != "rnn"]
    missing = [n for n in names if not hasattr(gu, n)]
    assert not missing, missing
    assert set(glasstorch.nn.utils.parametrize.__all__) == set(
        torch.nn.utils.parametrize.__all__)


# ---------------------------------------------------------------------- with library layers
def _conv_pair(kind, *args, **kwargs):
    return getattr(glasstorch.nn, kind)(*args, **kwargs), getattr(torch.nn, kind)(*args, **kwargs)


@pytest.mark.parametrize("kind", ["Conv2d", "ConvTranspose2d", "Linear"])
@pytest.mark.parametrize("which", ["weight_norm", "spectral_norm", "legacy_weight_norm",
                                   "legacy_spectral_norm"])
def test_norms_on_layers(kind, which):
    from .util import compare_module
    args = (4, 3) if kind == "Linear" else (3, 4, 3)
    gm, tm = _conv_pair(kind, *args)
    _sync(gm, tm)
    if which.startswith("legacy"):
        gf, tf = getattr(gu, which[7:]), getattr(tu, which[7:])
    else:
        gf = getattr(glasstorch.nn.utils.parametrizations, which)
        tf = getattr(torch.nn.utils.parametrizations, which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        gf(gm)
        tf(tm)
    assert repr(gm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in gm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in gm.named_buffers()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_buffers()]
    x = RNG.standard_normal((2, 4) if kind == "Linear" else (2, 3, 5, 5)).astype(np.float32)
    compare_module(gm, tm, x, rtol=1e-4, atol=1e-5)


def test_spectral_norm_conv_transpose_default_dim():
    gm, tm = _conv_pair("ConvTranspose2d", 3, 5, 2)
    glasstorch.nn.utils.parametrizations.spectral_norm(gm)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    assert gm.parametrizations.weight[0].dim == tm.parametrizations.weight[0].dim == 1
    assert [(n, tuple(p.shape)) for n, p in gm.named_buffers()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_buffers()]


def test_clip_after_backward_and_functional_call_on_linear():
    gm, tm = _conv_pair("Linear", 5, 3)
    _sync(gm, tm)
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    (gm(glasstorch.from_numpy(x)) ** 2).sum().backward()
    (tm(torch.from_numpy(x)) ** 2).sum().backward()
    assert_close(gu.clip_grad_norm_(gm.parameters(), 0.5), tu.clip_grad_norm_(tm.parameters(),
                                                                              0.5))
    assert_close(gm.weight.grad, tm.weight.grad)
    assert_close(gu.parameters_to_vector(gm.parameters()),
                 tu.parameters_to_vector(tm.parameters()))
    params = {k: v.detach().clone().requires_grad_() for k, v in gm.named_parameters()}
    tparams = {k: v.detach().clone().requires_grad_() for k, v in tm.named_parameters()}
    gy = glasstorch.func.functional_call(gm, params, glasstorch.from_numpy(x))
    ty = torch.func.functional_call(tm, tparams, torch.from_numpy(x))
    _backward_same(gy, ty)
    for k in params:
        assert_close(params[k].grad, tparams[k].grad, msg=k)


def test_memory_format_and_skip_init():
    net = glasstorch.nn.Sequential(glasstorch.nn.Conv2d(3, 4, 3), glasstorch.nn.ReLU(),
                                   glasstorch.nn.Sequential(glasstorch.nn.Conv2d(4, 2, 1)))
    gu.convert_conv2d_weight_memory_format(net, glasstorch.channels_last)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                               torch.nn.Sequential(torch.nn.Conv2d(4, 2, 1)))
    tu.convert_conv2d_weight_memory_format(tnet, torch.channels_last)
    assert net[0].weight.stride() == tnet[0].weight.stride()
    assert net[2][0].weight.stride() == tnet[2][0].weight.stride()
    assert net[0].weight.is_contiguous(memory_format=glasstorch.channels_last)
    m = gu.skip_init(glasstorch.nn.Linear, 3, 4)
    assert isinstance(m, glasstorch.nn.Linear) and tuple(m.weight.shape) == (4, 3)
    with pytest.raises(RuntimeError, match="device"):
        gu.skip_init(GT[0], 3, 4)
