"""int8 kernels of the quantized modules, computing as torch's fbgemm (x86) engine does.

Accumulation: ``sum((x_q - x_zp) * (w_q - w_zp))`` is an exact integer; it is computed as a
float64 GEMM/convolution (every partial sum stays below 2**53, so float64 is exact) and then
rounded to the integer it is. Requantization follows fbgemm's ``ReQuantizeOutput`` in float32:
``act_times_w = float32(x_scale * w_scale)``, ``multiplier = act_times_w / out_scale``, then
``rint((float32(acc) + bias / act_times_w) * multiplier) + out_zp`` clamped to [0, 255] (or
[out_zp, 255] with a fused ReLU).
"""

from __future__ import annotations

import numpy as np

import glasstorch as torch
from glasstorch._core.dtype import scalar_type_name
from glasstorch._ops import quantized as _q

_F32 = np.float32
_F64 = np.float64


def weight_scales(w):
    """(float32 scales, int zero points), one per output channel, of a qint8 weight."""
    n = w.shape[0]
    if w._axis is None:
        return (np.full(n, _F32(w._scale), _F32), np.full(n, w._zero_point, np.int64))
    if w._axis != 0:
        raise RuntimeError("glasstorch: quantized weights must be per-channel along axis 0")
    return w._scale.astype(_F32), w._zero_point.astype(np.int64)


def centered(q):
    """The integer values of ``q`` minus their zero point (per channel along axis 0 for a
    per-channel tensor), as float64."""
    v = q._data.astype(_F64)
    if q._axis is None:
        return v - q._zero_point
    shape = [1] * v.ndim
    shape[q._axis] = -1
    return v - q._zero_point.astype(_F64).reshape(shape)


def _check_input(x, what):
    if not isinstance(x, torch.Tensor) or not x.is_quantized:
        raise NotImplementedError(
            f"Could not run 'quantized::{what}' with arguments from the 'CPU' backend. The "
            f"input of a quantized module must be a quantized tensor: add a QuantStub (or "
            f"torch.quantize_per_tensor) before it.")
    if x.dtype is not torch.quint8:
        raise RuntimeError(f"quantized::{what} (fbgemm): expected a quint8 input, got "
                           f"{x.dtype}")


def requantize(acc, x_scale, w_scales, bias, out_scale, out_zp, relu, ch_axis):
    """Quantized uint8 values of int32 accumulators ``acc`` (output channel along
    ``ch_axis``), as fbgemm requantizes them."""
    shape = [1] * acc.ndim
    shape[ch_axis] = -1
    ats = (_F32(x_scale) * w_scales).astype(_F32)
    mult = (ats / _F32(out_scale)).astype(_F32).reshape(shape)
    raw = acc.astype(_F32)
    if bias is not None:
        raw = (raw + (bias.astype(_F32) / ats).astype(_F32).reshape(shape)).astype(_F32)
    y = (raw * mult).astype(_F32)
    lo = out_zp if relu else 0
    return np.clip(np.rint(y) + out_zp, lo, 255).astype(np.uint8)


def linear(x, w, bias, out_scale, out_zp, relu=False):
    """quantized::linear: quint8 ``x`` (..., K) times qint8 ``w`` (N, K) plus float
    ``bias``, requantized to quint8 with ``out_scale``/``out_zp``."""
    _check_input(x, "linear")
    acc = np.rint(centered(x) @ centered(w).T)
    ws, _ = weight_scales(w)
    b = None if bias is None else bias.detach()._data
    out = requantize(acc, x._scale, ws, b, out_scale, out_zp, relu, acc.ndim - 1)
    return _q._make(out, torch.quint8, torch.per_tensor_affine, float(out_scale),
                    int(out_zp))


def conv(x, w, bias, stride, padding, dilation, groups, out_scale, out_zp, relu=False,
         nd=2):
    """quantized::conv{nd}d: padding contributes the input zero point, i.e. nothing to the
    centred accumulation."""
    _check_input(x, f"conv{nd}d")
    conv_fn = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
               3: torch.nn.functional.conv3d}[nd]
    xc = torch.from_numpy(centered(x))
    wc = torch.from_numpy(centered(w))
    acc = np.rint(conv_fn(xc, wc, None, stride, padding, dilation, groups).numpy())
    ws, _ = weight_scales(w)
    b = None if bias is None else bias.detach()._data
    out = requantize(acc, x._scale, ws, b, out_scale, out_zp, relu, 1)
    return _q._make(np.ascontiguousarray(out), torch.quint8, torch.per_tensor_affine,
                    float(out_scale), int(out_zp))


def linear_dynamic(x, w, bias, reduce_range=True, relu=False):
    """quantized::linear_dynamic: ``x`` (float) is quantized to quint8 with qparams from its
    own range (7 bits with ``reduce_range``), multiplied by qint8 ``w`` and scaled back to
    float32 (``float32(acc) * float32(x_scale * w_scale) + bias``, fused)."""
    a = x.detach()._data
    if a.dtype != _F32:
        raise RuntimeError(f"quantized::linear_dynamic expects a float input, got {x.dtype}")
    lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
    scale, zp = _q.choose_qparams(lo, hi, 0, 127 if reduce_range else 255)
    xq = _q.quantize_array(a, scale, zp, torch.quint8).astype(_F64) - zp
    acc = np.rint(xq @ centered(w).T)
    ws, _ = weight_scales(w)
    # fbgemm's ReQuantizeForFloat: one FMA of float32(acc) and float32(x_scale * w_scale)
    # with the bias (float64 holds the product exactly, so one rounding as the FMA)
    ats = (_F32(scale) * ws).astype(_F32).astype(_F64)
    y = acc.astype(_F32).astype(_F64) * ats
    if bias is not None:
        y = y + bias.detach()._data.astype(_F32)
    y = y.astype(_F32)
    if relu:
        y = np.maximum(y, _F32(0))
    return torch.from_numpy(y)


def linear_dynamic_fp16(x, w, bias, relu=False):
    """quantized::linear_dynamic_fp16: float32 ``x`` times the float16-valued weight ``w``
    (held in float32), accumulated in float32; the bias is added as an autograd op, so it
    gets a gradient as in torch (``x`` gets none)."""
    if x.dtype is not torch.float32:
        raise RuntimeError(f"expected scalar type Float but found "
                           f"{scalar_type_name(x.dtype)}")
    y = torch.from_numpy(np.matmul(x.detach()._data, w.detach()._data.T))
    if bias is not None:
        y = y + bias
    return y.relu() if relu else y


# torch's quantized elementwise kernels run blocks of 64 quint8 values, then a scalar loop for
# the rest, and the two round differently (64 on AVX2 machines as on AVX512 ones: measured)
_VEC = 64


def add(a, b, out_scale, out_zp, relu=False):
    """quantized::add(_relu) of quint8 tensors ``a`` and ``b``: dequantize, add, requantize,
    with torch's vector/scalar split (vector: ``fma(q, s, -zp*s)`` then
    ``rint(x / out_scale) + zp``; tail: ``(q - zp) * s`` then ``rint(x / out_scale + zp)``)."""
    for t in (a, b):
        _check_input(t, "add")
    if a.shape != b.shape:
        raise RuntimeError("glasstorch: quantized add needs tensors of one shape")
    fa, fb = a._data.reshape(-1), b._data.reshape(-1)
    n = fa.size
    m = n // _VEC * _VEC
    inv = _F32(1) / _F32(out_scale)
    cv = (_fma_values(fa[:m], a) + _fma_values(fb[:m], b)).astype(_F32)
    cs = (_plain_values(fa[m:], a) + _plain_values(fb[m:], b)).astype(_F32)
    if relu:
        cv, cs = np.maximum(cv, _F32(0)), np.maximum(cs, _F32(0))
    qv = np.rint((cv * inv).astype(_F32)) + out_zp
    qs = np.rint((cs * inv).astype(_F32) + _F32(out_zp))
    out = np.clip(np.concatenate([qv, qs]), 0, 255).astype(np.uint8).reshape(a._data.shape)
    return _q._make(out, torch.quint8, torch.per_tensor_affine, float(out_scale), int(out_zp))


def cat(tensors, dim, out_scale, out_zp):
    """quantized::cat: the dequantized inputs concatenated and quantized with the output
    qparams."""
    for t in tensors:
        _check_input(t, "cat")
    vals = torch.cat([t.dequantize() for t in tensors], dim)
    return torch.quantize_per_tensor(vals, float(out_scale), int(out_zp), torch.quint8)


def _plain_values(stored, q):
    s = _F32(q._scale)
    return ((stored.astype(_F32) - _F32(q._zero_point)) * s).astype(_F32)


def _fma_values(stored, q):
    # float64 holds stored * scale exactly, so one rounding, as the FMA
    s = _F32(q._scale)
    return (stored.astype(_F64) * s + (_F32(-q._zero_point) * s)).astype(_F32)


def dequantize(q):
    """The float32 values of quint8 ``q`` as torch's scalar kernels compute them:
    ``(q - zero_point) * scale``."""
    return _plain_values(q._data, q)


def dequantize_fma(q):
    """The float32 values of quint8 ``q`` as torch's vectorised kernels compute them: one fused
    multiply-add ``fma(q, scale, -zero_point * scale)``."""
    return _fma_values(q._data, q)


def quantize_out(values, out_scale, out_zp, relu=False):
    """float32 ``values`` as a quint8 tensor: ``rint(v * (1 / scale)) + zero_point`` clamped to
    [0, 255] ([zero_point, 255] with a fused ReLU), as torch's quantized kernels store results
    (multiplying by the float32 inverse of the scale)."""
    inv = _F32(1) / _F32(out_scale)
    q = np.rint((np.asarray(values, _F32) * inv).astype(_F32)) + out_zp
    out = np.clip(q, out_zp if relu else 0, 255).astype(np.uint8)
    return _q._make(out, torch.quint8, torch.per_tensor_affine, float(out_scale), int(out_zp))


def pointwise(x, fn, out_scale, out_zp, what):
    """A quantized elementwise kernel: ``x`` dequantized (``dequantize_fma``), ``fn`` applied
    in float32, the result stored with the output qparams."""
    _check_input(x, what)
    return quantize_out(fn(dequantize_fma(x)), out_scale, out_zp)


def float_kernel(x, fn, out_scale, out_zp, what, relu=False):
    """A quantized kernel that computes in float: ``x`` dequantized as a float32 tensor, float
    op ``fn`` on it (normalizations), the result stored with the output qparams."""
    _check_input(x, what)
    y = fn(torch.from_numpy(dequantize(x)))
    return quantize_out(y.detach()._data, out_scale, out_zp, relu)


def mul(a, b, out_scale, out_zp, relu=False):
    """quantized::mul of quint8 tensors: the exact integer product of the centred values
    scaled by ``float32(a_scale * b_scale / out_scale)`` (torch's vectorised kernel rounds a
    few products differently: within one quantum, about 1 value in 20,000)."""
    for t in (a, b):
        _check_input(t, "mul")
    acc = centered(a) * centered(b)
    mult = _F32(_F32(a._scale) * _F32(b._scale) / _F32(out_scale))
    q = np.rint((acc.astype(_F32) * mult).astype(_F32)) + out_zp
    out = np.clip(q, out_zp if relu else 0, 255).astype(np.uint8)
    return _q._make(out, torch.quint8, torch.per_tensor_affine, float(out_scale), int(out_zp))


def mul_scalar(x, c):
    """quantized::mul_scalar: the integers kept and the scale multiplied by ``c``; a negative
    ``c`` stores ``255 - q`` with zero point ``255 - zero_point`` and scale ``-c * scale``; a
    zero ``c`` gives zeros with scale 1, zero point 0."""
    _check_input(x, "mul_scalar")
    c = float(c)
    if c == 0:
        return _q._make(np.zeros_like(x._data), torch.quint8, torch.per_tensor_affine, 1.0, 0)
    if c > 0:
        return _q._make(x._data.copy(), torch.quint8, torch.per_tensor_affine,
                        x._scale * c, x._zero_point)
    return _q._make((255 - x._data).astype(np.uint8), torch.quint8, torch.per_tensor_affine,
                    x._scale * -c, 255 - x._zero_point)


def add_scalar(x, c):
    """quantized::add_scalar: ``c`` rounded to ``k`` quanta; the zero point moves by ``-k``
    while it stays in [0, 255]; otherwise the range is widened to take the shift (scale
    grown, zero point pinned at the end it left by) and the values requantized."""
    _check_input(x, "add_scalar")
    s, zp = x._scale, x._zero_point
    k = int(np.rint(float(c) / s))
    new_zp = zp - k
    if 0 <= new_zp <= 255:
        return _q._make(x._data.copy(), torch.quint8, torch.per_tensor_affine, s, new_zp)
    if new_zp < 0:
        scale, out_zp = (255 - new_zp) * s / 255, 0
    else:
        scale, out_zp = new_zp * s / 255, 255
    # torch adds the rounded shift to the dequantized values (a value in ~20,000 lands one
    # quantum away from torch's vectorised kernel)
    return quantize_out((dequantize(x) + _F32(k * s)).astype(_F32), scale, out_zp)


def matmul(a, b, out_scale, out_zp):
    """quantized::matmul: the float product of the dequantized inputs, requantized."""
    for t in (a, b):
        _check_input(t, "matmul")
    return quantize_out(dequantize(a) @ dequantize(b), out_scale, out_zp)
