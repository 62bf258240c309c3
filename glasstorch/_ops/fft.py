"""Discrete Fourier transforms (``torch.fft``), short-time transforms (``stft``/``istft``)
and the flat window functions.

Every transform is built from three primitives, each one graph node named as torch's:
``_c2c`` (complex to complex), ``_r2c`` (real to complex, one-sided or full) and ``_c2r``
(Hermitian half-spectrum to real). Each computes the *unnormalised* transform times a scale
factor, so its adjoint (the backward, in torch's conjugate-Wirtinger convention) is again one
of the three primitives with the same scale. The backward formulas use the primitives
themselves, so double backward needs no extra code. ``n``/``s`` resizing (zero padding or
trimming) and conjugation are ordinary differentiable ops around the primitives.
"""

from __future__ import annotations

import math
import warnings

from .._core import dtype as _dt
from .._core.device import as_device
from ._common import (
    Node,
    Tensor,
    finish,
    int_arg,
    needs_grad,
    record,
    register,
    wrap,
    wrap_dim,
    xp,
)
from .creation import _into_out, _out_dtype, _refuse_sparse, check_pin_memory

__all__ = ["stft", "istft", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]

_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}
_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}


# ----------------------------------------------------------------------------- primitives

def _c2c(x, dims, forward, scale):
    """``scale`` times the unnormalised forward (or inverse) DFT of complex ``x`` over ``dims``."""
    a = x._data
    if dims:
        r = xp.fft.fftn(a, axes=dims) if forward else xp.fft.ifftn(a, axes=dims, norm="forward")
    else:
        r = a.copy()
    if scale != 1:
        r *= scale
    r = wrap(r.astype(a.dtype, copy=False))
    if needs_grad(x):
        record(r, FftC2CBackward0, (x,), dims=dims, forward=forward, scale=scale)
    return r


class FftC2CBackward0(Node):
    """The adjoint of a DFT is the DFT of the other direction, same scale."""

    def backward(self, grad):
        return _c2c(grad, self._saved_dims, not self._saved_forward, self._saved_scale)


def _r2c(x, dims, scale, onesided):
    """Forward DFT of real ``x`` over ``dims``; ``onesided`` keeps the last dim's
    ``n // 2 + 1`` non-redundant bins."""
    a = x._data
    ct = _COMPLEX_OF[_dt._by_np[a.dtype]]
    if onesided:
        r = xp.fft.rfftn(a, axes=dims)
    else:
        r = xp.fft.fftn(a, axes=dims)
    if scale != 1:
        r *= scale
    r = wrap(r.astype(ct.np, copy=False))
    if needs_grad(x):
        record(r, FftR2CBackward0, (x,), dims=dims, scale=scale, onesided=onesided,
               n=a.shape[dims[-1]])
    return r


class FftR2CBackward0(Node):
    """Real part of the inverse-direction DFT of the gradient (zero-filled to the full
    spectrum when one-sided)."""

    def backward(self, grad):
        dims = self._saved_dims
        if self._saved_onesided:
            grad = _resize(grad, dims[-1], self._saved_n)
        return _real_part(_c2c(grad, dims, False, self._saved_scale))


def _real_part(z):
    """The real part of complex ``z`` as a graph-recorded real tensor (``Tensor.real`` is a
    view without history here, so the cast's node carries the gradient instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cast's "discards the imaginary part" warning
        return z.to(_REAL_OF[z.dtype])


def _c2r(x, dims, n, scale):
    """Inverse DFT of the Hermitian half-spectrum ``x`` (last dim ``n // 2 + 1``) giving a
    real signal of length ``n`` along ``dims[-1]``."""
    a = x._data
    shape = [a.shape[d] for d in dims[:-1]] + [n]
    r = xp.fft.irfftn(a, s=shape, axes=dims, norm="forward")
    if scale != 1:
        r *= scale
    r = wrap(r.astype(_REAL_OF[_dt._by_np[a.dtype]].np, copy=False))
    if needs_grad(x):
        record(r, FftC2RBackward0, (x,), dims=dims, n=n, scale=scale)
    return r


class FftC2RBackward0(Node):
    """One-sided forward DFT of the gradient; the bins that stand for two (a bin and its
    conjugate partner) count twice."""

    def backward(self, grad):
        dims, n = self._saved_dims, self._saved_n
        g = _r2c(grad, dims, self._saved_scale, True)
        half = n // 2 + 1
        w = xp.ones(half, dtype=_REAL_OF[g.dtype].np)
        w[1:n - n // 2] = 2
        shape = [1] * g.dim()
        shape[dims[-1]] = half
        return g * wrap(w.reshape(shape))


# ----------------------------------------------------------------------------- argument handling

def _norm_scale(norm, n, forward):
    """torch's scale factor for a transform of ``n`` points in one direction."""
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _float_input(x, name, *, real=False, complex_=False):
    """``x`` promoted as torch's FFTs do: ints/bools to the default float dtype, half
    types refused; ``real`` refuses complex inputs, ``complex_`` makes the result complex."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    dt = x.dtype
    if dt in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_dt_name(dt)}")
    if dt._category == 3:
        if real:
            raise RuntimeError(f"{name} expects a real input tensor, but got {_dt_name(dt)}")
        return x
    if dt._category < 2:
        x = x.to(_dt._default[0])
    if complex_:
        x = x.to(_COMPLEX_OF[x.dtype])
    return x


def _dt_name(dt):
    from ._common import _SHORT
    return _SHORT.get(dt, str(dt))


def _resize(x, dim, n):
    """Trim or zero-pad ``x`` along ``dim`` to ``n`` points."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    from .vision import constant_pad_nd
    pad = [0, 0] * (x.dim() - 1 - dim) + [0, n - size]
    return constant_pad_nd(x, pad)


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _one_dim(x, n, dim):
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.dim())
    if n is not None:
        _check_n(n)
    return d


def _dims_and_shape(x, s, dim, halved_default=False):
    """torch's ``s``/``dim`` resolution for the n-dimensional transforms: ``(dims, sizes)``;
    a size of -1 (or a missing ``s``) keeps the input's size."""
    nd = x.dim()
    if dim is not None:
        if isinstance(dim, int):
            dim = (dim,)
        dims = [wrap_dim(d, nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{nd} dimensions.")
        dims = list(range(nd - len(s), nd))
    else:
        dims = list(range(nd))
    if s is None:
        sizes = [None] * len(dims)
    else:
        sizes = [None if int(v) == -1 else int(v) for v in s]
    for v in sizes:
        if v is not None:
            _check_n(v)
    return dims, sizes


# ----------------------------------------------------------------------------- 1-d transforms

def _c2c_nd(name, input, s, dim, norm, forward, out):
    x = _float_input(input, name, complex_=True)
    dims, sizes = _dims_and_shape(x, s, dim)
    for d, v in zip(dims, sizes):
        if v is not None:
            x = _resize(x, d, v)
    n = math.prod(x.shape[d] for d in dims)
    r = _c2c(x, tuple(dims), forward, _norm_scale(norm, n, forward))
    return finish(r, out)


def _c2c_1d(name, input, n, dim, norm, forward, out):
    x = _float_input(input, name)
    d = _one_dim(x, n, dim)
    if n is not None:
        x = _resize(x, d, n)
    scale = _norm_scale(norm, x.shape[d], forward)
    if x.dtype._category == 3:
        r = _c2c(x, (d,), forward, scale)
    else:
        r = _r2c(x, (d,), scale, False)
        if not forward:  # the inverse of a real signal is the conjugate of its transform
            r = r.conj()
    return finish(r, out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform of ``input`` along ``dim``."""
    return _c2c_1d("fft", input, n, dim, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform of ``input`` along ``dim``."""
    return _c2c_1d("ifft", input, n, dim, norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """DFT of a real signal, keeping the ``n // 2 + 1`` non-negative frequencies."""
    x = _float_input(input, "rfft", real=True)
    d = _one_dim(x, n, dim)
    if n is not None:
        x = _resize(x, d, n)
    return finish(_r2c(x, (d,), _norm_scale(norm, x.shape[d], True), True), out)


def _c2r_last(x, dims, sizes, norm, forward):
    """Shared tail of irfft(n)/hfft(n): resize, one-sided last dim, C2R."""
    for d, v in zip(dims[:-1], sizes[:-1]):
        if v is not None:
            x = _resize(x, d, v)
    last = dims[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[last] - 1)
    _check_n(n)
    x = _resize(x, last, n // 2 + 1)
    total = math.prod(x.shape[d] for d in dims[:-1]) * n
    return _c2r(x, tuple(dims), n, _norm_scale(norm, total, forward))


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (m - 1)``)."""
    x = _float_input(input, "irfft", complex_=True)
    d = _one_dim(x, n, dim)
    return finish(_c2r_last(x, [d], [n], norm, False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """DFT of a one-sided Hermitian signal: a real spectrum of ``n`` points."""
    x = _float_input(input, "hfft", complex_=True)
    d = _one_dim(x, n, dim)
    return finish(_c2r_last(x.conj(), [d], [n], norm, True), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`hfft`: the one-sided Hermitian half of the inverse DFT of a real
    signal."""
    x = _float_input(input, "ihfft", real=True)
    d = _one_dim(x, n, dim)
    if n is not None:
        x = _resize(x, d, n)
    return finish(_r2c(x, (d,), _norm_scale(norm, x.shape[d], False), True).conj(), out)


# ----------------------------------------------------------------------------- n-d transforms

def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional DFT over ``dim`` (all dims by default), each resized to ``s``."""
    return _c2c_nd("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse DFT over ``dim`` (all dims by default)."""
    return _c2c_nd("ifftn", input, s, dim, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional DFT (over the last two dims by default)."""
    return _c2c_nd("fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional inverse DFT (over the last two dims by default)."""
    return _c2c_nd("ifft2", input, s, dim, norm, False, out)


def _rfftn(name, input, s, dim, norm, out):
    x = _float_input(input, name, real=True)
    dims, sizes = _dims_and_shape(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    for d, v in zip(dims, sizes):
        if v is not None:
            x = _resize(x, d, v)
    n = math.prod(x.shape[d] for d in dims)
    return finish(_r2c(x, tuple(dims), _norm_scale(norm, n, True), True), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional DFT of a real signal; the last transformed dim keeps ``n // 2 + 1``
    bins."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`rfftn`."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def _irfftn(name, input, s, dim, norm, out, hermitian):
    x = _float_input(input, name, complex_=True)
    dims, sizes = _dims_and_shape(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if hermitian:
        x = x.conj()
    return finish(_c2r_last(x, dims, sizes, norm, hermitian), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`rfftn`; the last dim's output size defaults to ``2 * (m - 1)``."""
    return _irfftn("irfftn", input, s, dim, norm, out, False)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`irfftn`."""
    return _irfftn("irfftn", input, s, dim, norm, out, False)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional DFT of a Hermitian-symmetric signal given by its one-sided half."""
    return _irfftn("hfftn", input, s, dim, norm, out, True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`hfftn`."""
    return _irfftn("hfftn", input, s, dim, norm, out, True)


def _ihfftn(name, input, s, dim, norm, out):
    x = _float_input(input, name)
    if x.dtype._category == 3:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{_dt_name(x.dtype)}")
    dims, sizes = _dims_and_shape(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    for d, v in zip(dims, sizes):
        if v is not None:
            x = _resize(x, d, v)
    n = math.prod(x.shape[d] for d in dims)
    scale = _norm_scale(norm, n, False)
    # as torch: one-sided forward transform of the last dim, conjugate, then the inverse
    # direction over the others (conj(F z) is the inverse-direction transform of conj(z))
    r = _r2c(x, (dims[-1],), 1.0, True)
    from .pointwise import conj_physical
    r = _c2c(conj_physical(r), tuple(dims[:-1]), False, scale)
    return finish(r, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`hfftn`: the one-sided half of the inverse DFT of a real signal."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`ihfftn`."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


# ----------------------------------------------------------------------------- helpers

def _freq_result(values, name, out, dtype, layout, device, requires_grad, pin_memory):
    """A frequency factory's result, with the factories' out=/layout=/device= rules."""
    as_device(device)
    check_pin_memory(pin_memory, name)
    _refuse_sparse(layout, name, name + ".out")
    dt = _dt._default[0] if (dtype := _out_dtype(out, dtype, name)) is None else dtype
    r = wrap(values.astype(dt.np))
    if requires_grad:
        r.requires_grad = True
    return _into_out(r, out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """Sample frequencies of an ``n``-point DFT with spacing ``d``: ``[0, 1, ..., -1] / (d n)``."""
    if n < 0:
        raise RuntimeError(f"fftfreq: n must be non-negative, got {n}")
    k = xp.arange(n, dtype=xp.float64)
    k[(n + 1) // 2:] -= n
    return _freq_result(k / (d * n) if n else k, "fft_fftfreq", out, dtype, layout, device,
                        requires_grad, pin_memory)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """Sample frequencies of :func:`rfft` of ``n`` points: ``[0, 1, ..., n // 2] / (d n)``."""
    if n < 0:
        raise RuntimeError(f"rfftfreq: n must be non-negative, got {n}")
    k = xp.arange(n // 2 + 1, dtype=xp.float64)
    with xp.errstate(all="ignore"):  # n = 0 gives torch's single 0/0 = nan
        return _freq_result(k / (d * n), "fft_rfftfreq", out, dtype, layout, device,
                            requires_grad, pin_memory)


def _shift_dims(input, dim):
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, input.dim())]
    else:
        dims = [wrap_dim(d, input.dim()) for d in dim]
    return dims


def fftshift(input, dim=None):
    """Move the zero-frequency term to the centre (roll each dim by ``n // 2``)."""
    dims = _shift_dims(input, dim)
    from .rearrange import roll
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """Undo :func:`fftshift` (roll each dim by ``(n + 1) // 2``)."""
    dims = _shift_dims(input, dim)
    from .rearrange import roll
    return roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)


FFT_NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
             "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn",
             "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift")


# ----------------------------------------------------------------------------- window functions

def _window(name, window_length, periodic, dtype, requires_grad, values):
    """Shared checks and construction of the flat ``*_window`` functions: ``values(n, N)``
    gives the window on ``n = 0..L-1`` with denominator ``N`` (``L`` periodic, ``L - 1``
    symmetric), computed in float64 and rounded once."""
    window_length = int_arg(name, "window_length", 1, window_length)
    dt = _dt._default[0] if dtype is None else dtype
    if dt._category != 2:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        arr = xp.ones(window_length, dtype=dt.np)
    else:
        n = xp.arange(window_length, dtype=xp.float64)
        arr = values(n, window_length if periodic else window_length - 1).astype(dt.np)
    r = wrap(arr)
    if requires_grad:
        r.requires_grad = True
    return r


def _cosine_sum(coeffs):
    def values(n, N):
        z = 2 * _PI * n / N
        return sum(((-1) ** i) * c * xp.cos(i * z) for i, c in enumerate(coeffs))
    return values


_PI = math.pi


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """Hann window 0.5 - 0.5 cos(2 pi n / N) (periodic: N = L, else L - 1)."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum((0.5, 0.5)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """Hamming window alpha - beta cos(2 pi n / N)."""
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum((alpha, beta)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Blackman window 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum((0.42, 0.5, 0.08)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Bartlett (triangular) window 1 - |2 n / N - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 1 - xp.abs(2 * n / N - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """Kaiser window I0(beta sqrt(1 - (2 n / N - 1)^2)) / I0(beta)."""
    from .special import _bessel_i

    def values(n, N):
        t = 2 * n / N - 1
        arg = beta * xp.sqrt(xp.maximum(1 - t * t, 0))
        return _bessel_i(0, arg, False) / _bessel_i(0, xp.asarray([float(beta)]), False)[0]
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, values)


# ----------------------------------------------------------------------------- stft / istft

def _stft_desc(input, n_fft, hop_length, win_length, window, normalized, onesided,
               return_complex, align_to_window):
    shape = "[" + ", ".join(str(d) for d in input.shape) + "]"
    win = "None" if window is None else f"torch.{_tensor_type(window)}{{[{window.shape[0]}]}}" \
        if window.dim() == 1 else "Tensor"
    return (f"stft(torch.{_tensor_type(input)}{shape}, n_fft={n_fft}, hop_length={hop_length}, "
            f"win_length={win_length}, window={win}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : ")


def _opt(v):
    return "None" if v is None else str(int(v))


def _tensor_type(t):
    from ._common import _SHORT
    return _SHORT.get(t.dtype, str(t.dtype)) + "Tensor"


def _padded_window(window, win_length, n_fft, dtype):
    """The window as n_fft points: ones by default; shorter windows are centred with zeros."""
    from .creation import ones
    if window is None:
        window = ones(win_length, dtype=dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        from .vision import constant_pad_nd
        window = constant_pad_nd(window, [left, n_fft - win_length - left])
    return window


@register()
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: DFTs of windowed frames of ``n_fft`` points every
    ``hop_length`` samples; result (batch?, n_freq, n_frames)."""
    complex_in = input.dtype._category == 3 or (window is not None and
                                                window.dtype._category == 3)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which "
                      "is known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = input
    if center and x.dim() in (1, 2):  # other ranks get the shape error below
        from .vision import pad_nd
        batched = x.dim() == 2
        v = x.reshape((1,) * (3 - x.dim()) + tuple(x.shape))
        p = n_fft // 2
        v = pad_nd(v, [p, p], pad_mode)
        x = v.reshape(tuple(v.shape[1:]) if batched else (v.shape[-1],))
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    desc = _stft_desc(x, n_fft, hop, wl, window, normalized, onesided, return_complex,
                      align_to_window)
    if x.dim() not in (1, 2):
        raise RuntimeError(desc + "expected a 1D or 2D tensor")
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(desc + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(desc + f"expected hop_length > 0, but got hop_length={hop}")
    if wl <= 0 or wl > n_fft:
        raise RuntimeError(desc + f"expected 0 < win_length <= n_fft, but got win_length={wl}")
    if window is not None and (window.dim() != 1 or window.shape[0] != wl):
        raise RuntimeError(desc + f"expected a 1D window tensor of size equal to win_length="
                                  f"{wl}, but got window with size {list(window.shape)}")
    x = _float_input(x, "stft")
    w = _padded_window(window, wl, n_fft, x.dtype if x.dtype._category == 2 else
                       _REAL_OF[x.dtype])
    batched = x.dim() == 2
    if not batched:
        x = x.unsqueeze(0)
    if align_to_window:
        # frame f's window (centred in n_fft) starts at sample f * hop: widen the signal by
        # the window's zero margins (their values are multiplied by zero)
        from .vision import constant_pad_nd
        left = (n_fft - wl) // 2
        x = constant_pad_nd(x, [left, n_fft - wl - left])
    frames = x.unfold(-1, n_fft, hop) * w  # (batch, n_frames, n_fft)
    complex_ = frames.dtype._category == 3
    if onesided is None:
        onesided = not complex_
    elif onesided and complex_:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    scale = n_fft ** -0.5 if normalized else 1.0
    if complex_:
        spec = _c2c(frames, (2,), True, scale)
    else:
        spec = _r2c(frames, (2,), scale, onesided)
    spec = spec.transpose(1, 2)
    if not batched:
        spec = spec.squeeze(0)
    if not return_complex:
        from .views import view_as_real
        return view_as_real(spec)
    return spec


@register()
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of :func:`stft` by windowed overlap-add, divided by the summed squared window
    (least-squares inversion)."""
    if input.dtype._category != 3:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=2)
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"values, but got {input.dim()}")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[1], spec.shape[2]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of "
                               f"the input tensor to match n_fft / 2 + 1 when onesided=True, "
                               f"but got {n_freq}")
    elif n_fft != n_freq:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{n_freq}")
    if not 0 < hop <= wl:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < wl <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != wl):
        raise RuntimeError("istft: expected a 1D window tensor of size equal to win_length")
    real_dt = _REAL_OF[input.dtype]
    w = _padded_window(window, wl, n_fft, real_dt)
    frames_spec = spec.transpose(1, 2)  # (batch, n_frames, n_freq)
    scale = n_fft ** -0.5 if normalized else 1.0 / n_fft
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _c2c(frames_spec, (2,), False, scale)
    elif onesided:
        frames = _c2r(frames_spec, (2,), n_fft, scale)
    else:
        # a two-sided spectrum taken as Hermitian: its real inverse uses the half spectrum
        frames = _c2r(frames_spec.narrow(2, 0, n_fft // 2 + 1), (2,), n_fft, scale)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    idx = (xp.arange(n_frames)[:, None] * hop + xp.arange(n_fft)[None, :]).reshape(-1)
    from .creation import zeros
    from .indexing import index_add
    b = frames.shape[0]
    y = index_add(zeros(b, total, dtype=frames.dtype), 1, wrap(idx),
                  frames.reshape(b, n_frames * n_fft))
    # the squared-window envelope is part of the graph: the window gets its gradient too
    w2 = w * w
    env = index_add(zeros(total, dtype=w2.dtype), 0, wrap(idx), w2.repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0)
    if length is not None:
        end = start + length
    end_avail = min(end, total)
    region = env.narrow(0, start, end_avail - start)
    low = float(xp.abs(region._data).min()) if region._data.size else 1.0
    if low < 1e-11:
        raise RuntimeError(f"istft(...) window overlap add min: {low:g}")
    y = y.narrow(1, start, end_avail - start) / region
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        from .vision import constant_pad_nd
        y = constant_pad_nd(y, [0, end - total])
    if not batched:
        y = y.squeeze(0)
    return y
