"""The Winograd F(2x2, 3x3) convolution path against torch: which convolutions take it, their
values and gradients (float32/float64, odd sizes, asymmetric and oversized padding, transposed,
non-contiguous and unbatched input), double backward through it, and its rounding error."""

import numpy as np
import pytest

import glasstorch
from glasstorch._ops import _winograd

torch = pytest.importorskip("torch")

TOL = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-9, atol=1e-9)}


@pytest.fixture
def any_size(monkeypatch):
    """Lift the minimum-work rule, so that small (fast) cases take the path."""
    monkeypatch.setattr(_winograd, "_MIN_MACS", 0)


@pytest.fixture
def calls(monkeypatch):
    """Counts of Winograd forward / weight-gradient kernel calls made during a test."""
    counts = {"conv3x3": 0, "weight_grad": 0}
    for name in counts:
        original = getattr(_winograd, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)
        monkeypatch.setattr(_winograd, name, spy)
    return counts


def _fwd_bwd(L, x, w, b, transposed=False, view=None, **kw):
    """Output and the gradients of ``sum(y * r)`` (``r`` fixed random) w.r.t. x, w, b."""
    xi = L.from_numpy(x.copy()).requires_grad_()
    wi = L.from_numpy(w.copy()).requires_grad_()
    bi = L.from_numpy(b.copy()).requires_grad_()
    F = L.nn.functional
    xv = view(xi) if view else xi
    y = (F.conv_transpose2d if transposed else F.conv2d)(xv, wi, bi, **kw)
    r = np.random.default_rng(1).uniform(-2, 2, tuple(y.shape)).astype(x.dtype)
    (y * L.from_numpy(r)).sum().backward()
    return [t.detach().numpy() for t in (y, xi.grad, wi.grad, bi.grad)]


def _compare(x, w, b, dtype, **kw):
    ours = _fwd_bwd(glasstorch, x, w, b, **kw)
    theirs = _fwd_bwd(torch, x, w, b, **kw)
    for name, a, e in zip(("out", "grad x", "grad w", "grad b"), ours, theirs):
        assert a.shape == e.shape, name
        np.testing.assert_allclose(a, e, err_msg=name, **TOL[dtype])


def _arrays(rng, x_shape, w_shape, dtype, out_channels=None):
    """Input, weight and bias uniform in [-2, 2], as the parity op table draws them."""
    return (rng.uniform(-2, 2, x_shape).astype(dtype), rng.uniform(-2, 2, w_shape).astype(dtype),
            rng.uniform(-2, 2, out_channels or w_shape[0]).astype(dtype))


# (N, C, O, H, W, padding): even/odd outputs, no/one-sided/oversized padding
SHAPES = [(2, 16, 16, 6, 8, 1), (3, 16, 24, 7, 5, 0), (2, 32, 16, 5, 6, 2),
          (1, 16, 20, 3, 3, 3), (2, 20, 17, 6, 5, (0, 2))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,c,o,h,w,pad", SHAPES)
def test_conv2d_values_and_grads_match_torch(any_size, calls, dtype, n, c, o, h, w, pad):
    x, wt, b = _arrays(np.random.default_rng(0), (n, c, h, w), (o, c, 3, 3), dtype)
    _compare(x, wt, b, dtype, padding=pad)
    # forward, input gradient (a convolution by the flipped weight), weight gradient
    assert calls == {"conv3x3": 2, "weight_grad": 1}


@pytest.mark.parametrize("pad", [0, 1])
def test_stride1_conv_transpose2d_takes_the_path(any_size, calls, pad):
    x, wt, b = _arrays(np.random.default_rng(2), (2, 16, 5, 6), (16, 24, 3, 3), "float64", 24)
    _compare(x, wt, b, "float64", transposed=True, padding=pad)
    assert calls["conv3x3"] == 2 and calls["weight_grad"] == 1


def test_non_contiguous_and_unbatched_input(any_size, calls):
    rng = np.random.default_rng(3)
    x, wt, b = _arrays(rng, (2, 16, 7, 6), (16, 16, 3, 3), "float32")
    _compare(x, wt, b, "float32", padding=1, view=lambda t: t.transpose(2, 3))
    _compare(x, wt, b, "float32", padding=1, view=lambda t: t[0])
    assert calls["conv3x3"] == 4


@pytest.mark.parametrize("kw,w_shape,dtype", [
    ({"stride": 2, "padding": 1}, (16, 16, 3, 3), "float32"),
    ({"dilation": 2, "padding": 2}, (16, 16, 3, 3), "float32"),
    ({"groups": 2, "padding": 1}, (16, 8, 3, 3), "float32"),
    ({"padding": 2}, (16, 16, 5, 5), "float32"),
    ({"padding": 1}, (16, 4, 3, 3), "float32"),             # too few input channels
    ({"padding": 1}, (16, 16, 3, 3), "int64"),
])
def test_other_convolutions_keep_the_gemm_path(any_size, calls, kw, w_shape, dtype):
    rng = np.random.default_rng(4)
    c = w_shape[1] * kw.get("groups", 1)
    x = rng.integers(-3, 4, (2, c, 7, 7)).astype(dtype)
    wt = rng.integers(-3, 4, w_shape).astype(dtype)
    ours = glasstorch.nn.functional.conv2d(glasstorch.from_numpy(x), glasstorch.from_numpy(wt),
                                           **kw)
    theirs = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(wt), **kw)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-4)
    assert calls["conv3x3"] == 0


def test_small_convolutions_stay_on_the_gemm_path():
    f32, one = np.dtype("float32"), (1, 1)
    assert _winograd.applies(f32, (64, 64, 3, 3), one, one, 1, 32 * 32 * 32)
    assert not _winograd.applies(f32, (64, 64, 3, 3), one, one, 1, 8 * 8)
    assert not _winograd.applies(f32, (16, 16, 3, 3), one, one, 1, 4 * 16 * 16)


def test_gradient_penalty_through_the_path_matches_torch(any_size, calls):
    rng = np.random.default_rng(5)
    x, wt, _ = _arrays(rng, (2, 16, 5, 6), (16, 16, 3, 3), "float64")
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        wi = L.from_numpy(wt.copy()).requires_grad_()
        y = L.nn.functional.conv2d(xi, wi, padding=1)
        gx, gw = L.autograd.grad((y * y).sum(), (xi, wi), create_graph=True)
        hx, hw = L.autograd.grad((gx ** 2).sum() + (gw ** 3).sum(), (xi, wi))
        outs.append([t.detach().numpy() for t in (gx, gw, hx, hw)])
    for a, e in zip(*outs):
        np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-8)
    assert calls["conv3x3"] > 0


def test_float32_rounding_error_stays_at_torchs_level(calls):
    """Realistic magnitudes (unit-normal input, fan-in scaled weight, 64 channels): the
    error against a float64 reference is no larger than twice torch's own float32 error."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 64, 16, 16))
    wt = rng.standard_normal((64, 64, 3, 3)) / np.sqrt(64 * 9)
    b = np.zeros(64)
    exact = _fwd_bwd(torch, x, wt, b, padding=1)
    x32, w32, b32 = (a.astype(np.float32) for a in (x, wt, b))
    ours = _fwd_bwd(glasstorch, x32, w32, b32, padding=1)
    theirs = _fwd_bwd(torch, x32, w32, b32, padding=1)
    for name, a, t, e in zip(("out", "grad x", "grad w", "grad b"), ours, theirs, exact):
        scale = np.abs(e).max()
        err, torch_err = np.abs(a - e).max() / scale, np.abs(t - e).max() / scale
        assert err <= 2 * torch_err + 1e-7, (name, err, torch_err)
    assert calls["conv3x3"] == 2
