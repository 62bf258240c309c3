"""Window functions as in torch.signal.windows, built from tensor ops so that
``requires_grad=True`` gives the same graph torch builds (a linspace leaf, then the formula).

``sym=True`` (the default) gives a symmetric window for filter design; ``sym=False`` a
periodic one for spectral analysis (the symmetric window of ``M + 1`` points, last dropped).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import glasstorch as _g

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not _g.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_g.float32, _g.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _setup(name, M, dtype, layout):
    dtype = _g.get_default_dtype() if dtype is None else dtype
    _checks(name, M, dtype, layout)
    return dtype


def _trivial(M, dtype, requires_grad):
    """The empty (M = 0) or single-point (M = 1) window."""
    if M == 0:
        return _g.empty((0,), dtype=dtype, requires_grad=requires_grad)
    return _g.ones((1,), dtype=dtype, requires_grad=requires_grad)


def _ramp(start, step, M, dtype, requires_grad):
    return _g.linspace(start, start + (M - 1) * step, M, dtype=dtype,
                       requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_g.strided,
                device=None, requires_grad=False):
    """Exponential (Poisson) window exp(-|n - center| / tau)."""
    dtype = _setup("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(0, dtype, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _ramp(-center / tau, 1 / tau, M, dtype, requires_grad)
    return _g.exp(-_g.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_g.strided, device=None, requires_grad=False):
    """Cosine (sine) window sin(pi (n + 0.5) / M)."""
    dtype = _setup("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(0, dtype, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    return _g.sin(_ramp(0.5 * c, c, M, dtype, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_g.strided, device=None,
             requires_grad=False):
    """Gaussian window exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _setup("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(0, dtype, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _ramp(start * c, c, M, dtype, requires_grad)
    return _g.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_g.strided, device=None,
           requires_grad=False):
    """Kaiser window I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta), N = M - 1 (sym)
    or M."""
    dtype = _setup("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, requires_grad)
    b = _g.tensor(beta, dtype=dtype)
    step = 2.0 * beta / (M if not sym else M - 1)
    end = _g.minimum(b, -b + (M - 1) * step)  # rounding must not push |k| past beta
    k = _g.linspace(-b, end, M, dtype=dtype, requires_grad=requires_grad)
    return _g.i0(_g.sqrt(b * b - _g.pow(k, 2))) / _g.i0(b)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_g.strided, device=None,
                   requires_grad=False):
    """Generalised cosine window sum_i (-1)^i a_i cos(2 pi i n / N)."""
    dtype = _setup("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _ramp(0.0, c, M, dtype, requires_grad)
    a_i = _g.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                    requires_grad=requires_grad)
    i = _g.arange(a_i.shape[0], dtype=a_i.dtype, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _g.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_g.strided, device=None,
                    requires_grad=False):
    """Generalised Hamming window alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=_g.strided, device=None, requires_grad=False):
    """Hamming window 0.54 - 0.46 cos(2 pi n / N)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_g.strided, device=None, requires_grad=False):
    """Hann window 0.5 - 0.5 cos(2 pi n / N)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_g.strided, device=None, requires_grad=False):
    """Blackman window 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    dtype = _g.get_default_dtype() if dtype is None else dtype
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_g.strided, device=None,
             requires_grad=False):
    """Bartlett (triangular) window 1 - |2 n / N - 1|."""
    dtype = _setup("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, requires_grad)
    c = 2 / (M if not sym else M - 1)
    return 1 - _g.abs(_ramp(-1.0, c, M, dtype, requires_grad))


def nuttall(M, *, sym=True, dtype=None, layout=_g.strided, device=None, requires_grad=False):
    """Minimum 4-term Blackman-Harris window (Nuttall's coefficients)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
