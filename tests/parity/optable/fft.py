"""torch.fft, stft/istft and the window functions."""

import numpy as np

from ..harness import OpInfo, S

_FFT_DTYPES = ("bool", "int64", "float16", "float32", "float64", "complex64", "complex128")
_C = 0.3 + 0.7j


def _ri(lib, r):
    """A complex result as real differentiable outputs (|r| and |r + c| fix r's phase)."""
    if r.dtype.is_complex:
        return lib.stack([r.abs(), (r + _C).abs()], -1)
    return r


def _make(dtype, rng, shape):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype == "int64":
        return rng.integers(-5, 5, shape)
    return rng.standard_normal(shape).astype(dtype)


def _one_d(dtype, rng):
    x = _make(dtype, rng, (4, 6))
    yield S(x)
    yield S(x, n=9)
    yield S(x, n=3, dim=0)
    yield S(x, norm="ortho")
    yield S(x, norm="forward", dim=-2)
    yield S(_make(dtype, rng, (7,)))
    yield S(_make(dtype, rng, (1,)))
    yield S(x, n=0)               # refused
    yield S(x, dim=2)             # refused
    yield S(x, norm="bad")        # refused
    yield S(np.asarray(_make(dtype, rng, ())))  # refused: no dims


def _n_d(dtype, rng):
    x = _make(dtype, rng, (3, 4, 6))
    yield S(x)
    yield S(x, s=(3, 5))
    yield S(x, s=(8,), dim=(0,))
    yield S(x, s=(-1, 4), dim=(0, 2))
    yield S(x, dim=(2, 0), norm="ortho")
    yield S(x, dim=(-1,), norm="forward")
    yield S(x, s=(2, 3), dim=(0,))       # refused: lengths differ
    yield S(x, dim=(1, 1))               # refused: repeated dim
    yield S(x, s=(2, 2, 2, 2))           # refused: more sizes than dims


def _fn(name):
    return lambda lib, a, **kw: _ri(lib, getattr(lib.fft, name)(a, **kw))


_ONE = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_ND = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
       "ihfft2", "hfftn", "ihfftn"]

OPS = [OpInfo(f"fft.{n}", _fn(n), _one_d, dtypes=_FFT_DTYPES, grad=True) for n in _ONE]
OPS += [OpInfo(f"fft.{n}", _fn(n), _n_d, dtypes=_FFT_DTYPES, grad=True) for n in _ND]
OPS += [
    OpInfo("fft.fft_out", lambda lib, a: lib.fft.fft(a, out=lib.empty(0, dtype=lib.complex128)),
           lambda d, r: iter([S(_make(d, r, (5,)))]), dtypes=("float64", "complex128")),
    OpInfo("fft.fftfreq", lambda lib, n, d=1.0: [lib.fft.fftfreq(n, d),
                                                 lib.fft.rfftfreq(n, d),
                                                 lib.fft.fftfreq(n, d, dtype=lib.float64)],
           lambda d, r: iter([S(5), S(6, 0.1), S(1), S(0), S(7, 2.5)]), dtypes=("float32",),
           covers=("fft.rfftfreq",)),
    OpInfo("fft.fftshift", lambda lib, a, **kw: [lib.fft.fftshift(a, **kw),
                                                 lib.fft.ifftshift(a, **kw)],
           lambda d, r: iter([S(_make(d, r, (3, 5))), S(_make(d, r, (4, 5)), dim=0),
                              S(_make(d, r, (4, 5)), dim=(-1,)),
                              S(_make(d, r, (7,)))]),
           dtypes=("int64", "float32", "float64", "complex64"), grad=True,
           covers=("fft.ifftshift",)),
]


def _stft_samples(dtype, rng):
    x = _make(dtype, rng, (64,))
    xb = _make(dtype, rng, (2, 40))
    real = dtype.startswith("float")
    w = np.hanning(16).astype(dtype if real else "float64")
    w10 = np.hanning(10).astype(dtype if real else "float64")
    yield S(x, 16, window=w, return_complex=True)
    yield S(xb, 16, window=w, return_complex=True, hop_length=3)
    yield S(x, 16, hop_length=5, win_length=10, window=w10, center=False, onesided=False,
            normalized=True, return_complex=True)
    yield S(x, 16, window=w, pad_mode="constant", return_complex=True)
    yield S(x, 16, window=w10, win_length=10, center=False, align_to_window=True,
            return_complex=True)
    yield S(x, 16, window=w)                          # refused for real input: return_complex
    yield S(x, 16, window=w, hop_length=0, return_complex=True)  # refused
    yield S(x, 100, return_complex=True)              # refused: n_fft too long


def _istft_samples(dtype, rng):
    x = _make(dtype, rng, (64,))
    xb = _make(dtype, rng, (2, 40))
    w = np.hanning(16).astype(dtype)
    yield S(x, 16, window=w)
    yield S(xb, 16, window=w, hop_length=8)
    yield S(x, 16, window=w, length=70)
    yield S(x, 16, window=w, length=40, normalized=True)
    yield S(x, 16, window=w, center=False)


def _istft(lib, x, n_fft, window=None, **kw):
    sk = {k: v for k, v in kw.items() if k in ("hop_length", "normalized", "center")}
    spec = lib.stft(x, n_fft, window=window, return_complex=True, **sk)
    return lib.istft(spec * (1 + 0.5j), n_fft, window=window, **kw)


OPS += [
    OpInfo("stft", lambda lib, a, *args, **kw: _ri(lib, lib.stft(a, *args, **kw)),
           _stft_samples, dtypes=("float32", "float64", "complex128"), grad=True,
           covers=("Tensor.stft",)),
    OpInfo("istft", _istft, _istft_samples, dtypes=("float32", "float64"), grad=True,
           covers=("Tensor.istft",)),
]


def _window_samples(dtype, rng):
    for n in (0, 1, 2, 5, 8):
        yield S(n, True, dtype=f"dtype:{dtype}")
        yield S(n, False, dtype=f"dtype:{dtype}")
    yield S(-1)                   # refused
    yield S(4, dtype="dtype:int64")  # refused


OPS += [
    OpInfo(f"{n}_window", lambda lib, *a, _n=n, **kw: getattr(lib, f"{_n}_window")(*a, **kw),
           _window_samples, dtypes=("float32", "float64"))
    for n in ("hann", "hamming", "blackman", "bartlett", "kaiser")
]
OPS += [
    OpInfo("hamming_window_coeffs", lambda lib, n: lib.hamming_window(n, True, 0.5, 0.3),
           lambda d, r: iter([S(5), S(6)]), dtypes=("float32",)),
    OpInfo("kaiser_window_beta", lambda lib, n: lib.kaiser_window(n, False, 3.0),
           lambda d, r: iter([S(5), S(6)]), dtypes=("float32",)),
]

_SIGNAL = {"bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 2.0},
           "gaussian": {"std": 1.7}, "general_cosine": {"a": [0.5, 0.3, 0.2]},
           "general_hamming": {"alpha": 0.6}, "hamming": {}, "hann": {}, "kaiser": {"beta": 5.0},
           "nuttall": {}}


def _signal_samples(dtype, rng):
    for m in (0, 1, 2, 5, 8):
        yield S(m, sym=True, dtype=f"dtype:{dtype}")
        yield S(m, sym=False, dtype=f"dtype:{dtype}")
    yield S(-1)                     # refused
    yield S(4, dtype="dtype:int64")  # refused


OPS += [
    OpInfo(f"signal.windows.{n}",
           lambda lib, *a, _n=n, _kw=kw, **k: getattr(lib.signal.windows, _n)(*a, **_kw, **k),
           _signal_samples, dtypes=("float32", "float64"))
    for n, kw in _SIGNAL.items()
]
