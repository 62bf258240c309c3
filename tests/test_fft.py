"""torch.fft, stft/istft and the windows against torch: every name present, values, dtypes,
gradients (incl. double backward) and dispatch."""

import warnings

import numpy as np
import pytest

import glasstorch as g

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")

_ND = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
       "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]


def _public(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n))
                  and getattr(getattr(mod, n), "__module__", "").startswith("torch"))


def test_every_torch_fft_name_is_provided():
    import torch.signal.windows as tw
    missing = [n for n in _public(torch.fft) if not hasattr(g.fft, n)]
    assert not missing
    assert not [n for n in tw.__all__ if not hasattr(g.signal.windows, n)]
    for n in ("stft", "istft", "hann_window", "hamming_window", "blackman_window",
              "bartlett_window", "kaiser_window"):
        assert callable(getattr(g, n))
    assert callable(g.Tensor.stft) and callable(g.Tensor.istft)


def _vr(lib, r):
    return lib.stack([r.abs(), (r + (0.3 + 0.7j)).abs()], -1) if r.dtype.is_complex else r


@pytest.mark.parametrize("name", _ND)
def test_gradients_match_torch_and_double_backward(name):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    for x in (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)) +
              1j * rng.standard_normal((3, 4))):
        kw = {"norm": "ortho"}
        try:
            tx = torch.from_numpy(x).requires_grad_()
            to = _vr(torch, getattr(torch.fft, name)(tx, **kw))
        except RuntimeError:
            with pytest.raises(RuntimeError):
                getattr(g.fft, name)(g.from_numpy(x), **kw)
            continue
        gx = g.from_numpy(x).requires_grad_()
        go = _vr(g, getattr(g.fft, name)(gx, **kw))
        w = rng.standard_normal(tuple(to.shape))
        (to * torch.from_numpy(w)).sum().backward()
        (go * g.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(gx.grad.numpy(), tx.grad.resolve_conj().numpy(),
                                   rtol=1e-9, atol=1e-12)

        # double backward, compared with torch's (gradgradcheck here is real-only)
        second = []
        for lib in (torch, g):
            a = lib.from_numpy(x.copy()).requires_grad_()
            out = _vr(lib, getattr(lib.fft, name)(a, **kw))
            (ga,) = lib.autograd.grad((out * out * lib.from_numpy(w)).sum(), a, create_graph=True)
            (gga,) = lib.autograd.grad((_vr(lib, ga) ** 2).sum(), a)
            second.append(gga.resolve_conj().numpy() if lib is torch else gga.numpy())
        np.testing.assert_allclose(second[1], second[0], rtol=1e-8, atol=1e-10)
        if not np.iscomplexobj(x):
            def f(a):
                return _vr(g, getattr(g.fft, name)(a, **kw))
            assert g.autograd.gradgradcheck(f, (g.from_numpy(x).requires_grad_(),))


def test_float32_gives_complex64_and_int_promotes():
    x = g.arange(8)
    assert g.fft.fft(x).dtype is g.complex64
    assert g.fft.irfft(g.fft.rfft(x.float())).dtype is g.float32
    assert g.fft.fft(x.double()).dtype is g.complex128
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        g.fft.fft(x.half())


def test_errors_match_torch():
    x = g.randn(4, 5)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        g.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        g.fft.fft(x, norm="bad")
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        g.fft.fftn(x, dim=(0, 0))
    with pytest.raises(RuntimeError, match="expects a real input tensor"):
        g.fft.rfft(x.to(g.complex64))
    with pytest.raises(IndexError):
        g.fft.fft(g.tensor(1.0))


def test_dispatch_sees_fft_calls():
    seen = []

    class Mode(g.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = g.randn(8)
    with Mode():
        g.fft.rfft(x)
        g.stft(x, 4, window=g.hann_window(4), return_complex=True)
        g.signal.windows.hann(4)
    assert "rfft" in seen and "stft" in seen and "hann" in seen


def test_stft_istft_roundtrip_and_torch_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 200))
    w = np.hanning(32)
    gs = g.stft(g.from_numpy(x), 32, hop_length=8, window=g.from_numpy(w), return_complex=True)
    ts = torch.stft(torch.from_numpy(x), 32, hop_length=8, window=torch.from_numpy(w),
                    return_complex=True)
    np.testing.assert_allclose(gs.numpy(), ts.numpy(), rtol=1e-10, atol=1e-12)
    y = g.istft(gs, 32, hop_length=8, window=g.from_numpy(w), length=200)
    np.testing.assert_allclose(y.numpy(), x, atol=1e-12)
    with pytest.raises(RuntimeError, match="return_complex"):
        g.stft(g.from_numpy(x), 32, window=g.from_numpy(w))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="window was not provided"):
            g.stft(g.from_numpy(x), 32, return_complex=True)


def test_istft_gradient_reaches_the_window():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(96)
    w = np.hanning(16) + 0.1
    grads = []
    for lib in (torch, g):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_()
        spec = lib.stft(xt, 16, window=wt, return_complex=True)
        lib.istft(spec * (1 + 0.5j), 16, window=wt).pow(2).sum().backward()
        grads.append((xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
