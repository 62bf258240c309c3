"""Quantized tensors: ``quint8``, ``qint8``, ``qint32`` and ``quint4x2`` values standing for
``scale * (q - zero_point)``, per tensor or per channel.

A quantized tensor is a ``QuantizedTensor``: its ``_data`` holds the integer values (the
``int_repr`` dtype; quint4x2 unpacked, one value per byte) and the object carries the
quantizer (scheme, scale/zero point or per-channel arrays and axis). Every op reaches it
through ``__torch_function__`` (glasstorch.overrides), which runs the few ops torch has
quantized kernels for here (views, relu, max pooling, metadata) and raises torch's
"Could not run 'aten::...' with arguments from the 'QuantizedCPU' backend" for the rest, so
no float operator ever computes silently on the integers.

Rounding is torch's (x86/fbgemm build), checked value by value against it: per-tensor quint8
and qint8 round ``zero_point + x * (1/scale)`` once (a fused multiply-add in float32);
qint32 and per-channel round ``float32(x * (1/scale)) + zero_point``; quint4x2 adds the zero
point after rounding ``x * (1/scale)``. All round half to even, then clamp.
"""

from __future__ import annotations

import warnings

from .._core import dtype as _dt
from .._tensor import _NamedConstant, _view_of, _wrap
from ._common import Node, Tensor, _attach, needs_grad, record, register, xp

__all__ = [
    "quint8", "qint8", "qint32", "quint4x2", "qscheme", "per_tensor_affine",
    "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams", "quantize_per_tensor", "quantize_per_channel",
    "quantize_per_tensor_dynamic", "dequantize", "int_repr", "q_scale", "q_zero_point",
    "q_per_channel_scales", "q_per_channel_zero_points", "q_per_channel_axis",
    "_make_per_tensor_quantized_tensor", "_make_per_channel_quantized_tensor",
    "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
]

quint8, qint8, qint32, quint4x2 = _dt.quint8, _dt.qint8, _dt.qint32, _dt.quint4x2
_F32 = xp.dtype(xp.float32)
_F64 = xp.dtype(xp.float64)


class qscheme(_NamedConstant):
    """A quantization scheme (``torch.per_tensor_affine``...); one instance per scheme,
    pickled by name."""

    __slots__ = ()


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")

_DEPRECATION = [False]


def _warn_deprecated():
    # torch 2.13 warns once per process (TORCH_WARN_ONCE) on quantized tensor creation
    if not _DEPRECATION[0]:
        _DEPRECATION[0] = True
        warnings.warn(
            "torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor "
            "creation functions that produce tensors with dtype torch.quint8, torch.qint8, and "
            "torch.qint32 are deprecated and will be removed in a future PyTorch release. "
            "Please see https://github.com/pytorch/pytorch/issues/184982 for more "
            "information.", UserWarning, stacklevel=3)


# ----------------------------------------------------------------------------- the tensor

class QuantizedTensor(Tensor):
    """A tensor of a quantized dtype (``t.is_quantized`` is True): integer values in
    ``_data`` plus its quantizer. torch has a single Tensor type; this subclass exists so
    that every op meets the quantizer through ``__torch_function__``."""

    __slots__ = ("_qdtype", "_qscheme", "_scale", "_zero_point", "_axis")

    @property
    def dtype(self):
        """The quantized dtype (``torch.quint8``...)."""
        return self._qdtype

    @property
    def is_quantized(self) -> bool:
        """True: a quantized tensor."""
        return True

    def __repr__(self, *, tensor_contents=None):
        return _qrepr(self)

    def __reduce_ex__(self, proto):
        return (_rebuild_plain_pickle, (self._data.copy(), self._qdtype.name,
                                        self._qscheme.name, self._scale, self._zero_point,
                                        self._axis))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = _like(self, self._data.copy())
        memo[id(self)] = t
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Run ``func`` with torch's quantized CPU kernels, or raise torch's error for an
        operator that has none."""
        kwargs = kwargs or {}
        from .. import overrides
        name = _func_name(func)
        impl = _QUANTIZED.get(name)
        with overrides.DisableTorchFunctionSubclass():
            if impl is not None:
                return impl(func, args, kwargs)
            if name in _METADATA:
                return func(*args, **kwargs)
        raise _not_supported(name, args)


def _func_name(func):
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):  # a property's getter (``Tensor.shape.__get__``)
        return owner.fget.__name__
    return getattr(func, "__name__", repr(func))


def _not_supported(name, args):
    base = name.strip("_")
    if base in ("numpy", "array"):
        return TypeError(f"Got unsupported ScalarType "
                         f"{_dt.scalar_type_name(args[0]._qdtype)}")
    if base in ("float", "double", "half", "bfloat16", "long", "int", "short", "char",
                "byte", "bool") or (base in ("add", "sub", "mul", "div", "radd", "rsub", "rmul")
                                    and any(isinstance(a, (int, float)) for a in args[1:])):
        return RuntimeError("empty_strided not supported on quantized tensors yet see "
                            "https://github.com/pytorch/pytorch/issues/74540")
    if base in ("add", "sub", "mul", "div"):
        base += ".out"
    return NotImplementedError(
        f"Could not run 'aten::{base}' with arguments from the 'QuantizedCPU' backend. This "
        f"could be because the operator doesn't exist for this backend. glasstorch has "
        f"quantized kernels for views, relu, max pooling, dequantize and the quantized "
        f"modules (nn.quantized); call .dequantize() first to compute in float.")


def _make(arr, qdtype, scheme, scale, zero_point, axis=None, base=None):
    """A QuantizedTensor over integer array ``arr`` (a view of ``base`` when given)."""
    t = _view_of(base, arr, QuantizedTensor) if base is not None else \
        _wrap(arr, QuantizedTensor)
    t._qdtype = qdtype
    t._qscheme = scheme
    t._scale = scale
    t._zero_point = zero_point
    t._axis = axis
    return t


def _like(q, arr, base=None):
    return _make(arr, q._qdtype, q._qscheme, q._scale, q._zero_point, q._axis, base)


def is_quantized_tensor(t) -> bool:
    """Whether ``t`` is a quantized tensor."""
    return type(t) is QuantizedTensor


def _rebuild_plain_pickle(arr, dtype_name, scheme_name, scale, zero_point, axis):
    return _make(arr, _dt._by_name[dtype_name], globals()[scheme_name], scale, zero_point,
                 axis)


# ----------------------------------------------------------------------------- rounding

def _round_clamp(values, qdtype):
    v = xp.clip(xp.rint(values), qdtype.qmin, qdtype.qmax)
    return v.astype(qdtype.np)


def quantize_array(x, scale, zero_point, qdtype):
    """Integer values of float32 array ``x`` quantized with per-tensor ``scale`` and
    ``zero_point`` exactly as torch's x86 build rounds them for ``qdtype``."""
    x = xp.asarray(x, _F32)
    inv = xp.float32(1.0) / xp.float32(scale)
    with xp.errstate(over="ignore", invalid="ignore"):
        if qdtype is quint8 or qdtype is qint8:
            # fbgemm's vectorised path: zero_point + x * inv in one FMA (x * inv is exact in
            # float64, so one rounding to float32 is what the FMA does)
            t = (x.astype(_F64) * xp.float64(inv) + zero_point).astype(_F32)
        elif qdtype is quint4x2:
            # rounds x * inv first, then adds the zero point
            t = xp.rint((x * inv).astype(_F32)) + xp.float32(zero_point)
        else:
            t = (x * inv).astype(_F32) + xp.float32(zero_point)
        return _round_clamp(t, qdtype)


def _quantize_channels(x, scales, zero_points, axis, qdtype):
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = (xp.float32(1.0) / scales.astype(_F32)).reshape(shape)
    zp = zero_points.astype(_F32).reshape(shape)
    with xp.errstate(over="ignore", invalid="ignore"):
        t = (x * inv).astype(_F32) + zp
        return _round_clamp(t, qdtype)


def _dequantize_array(q):
    vals = q._data
    if q._qscheme is per_tensor_affine or q._qscheme is per_tensor_symmetric:
        return ((vals.astype(_F32) - xp.float32(q._zero_point)) *
                xp.float32(q._scale)).astype(_F32)
    shape = [1] * vals.ndim
    shape[q._axis] = -1
    # torch's per-channel kernel multiplies by the float64 scale, then rounds to float32
    s = q._scale.astype(_F64).reshape(shape)
    z = q._zero_point.astype(_F64).reshape(shape)
    return ((vals.astype(_F64) - z) * s).astype(_F32)


# ----------------------------------------------------------------------------- creation

def _scalar_arg(v, kind):
    if isinstance(v, Tensor):
        return kind(v.item())
    return kind(v)


def _check_quant_input(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"quantize_per_tensor(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dtype is not _dt.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got "
                           f"{_dt.scalar_type_name(input.dtype)}")


def _check_qdtype(dtype):
    if not isinstance(dtype, _dt._QuantizedDtype):
        raise RuntimeError(f"ScalarType {_dt.scalar_type_name(dtype)} is not supported in "
                           f"new_qtensor.")


def _check_zero_point(zp, qdtype, fn):
    if zp > qdtype.qmax:
        raise RuntimeError(f"{fn} zero_point {zp} is above upper bound.")
    if zp < qdtype.qmin:
        raise RuntimeError(f"{fn} zero_point {zp} is below lower bound.")


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantize a float32 tensor with one ``scale`` and ``zero_point`` (numbers or 0-d
    tensors) to ``dtype`` (torch.quint8, qint8, qint32 or quint4x2); a list of tensors with
    tensors of scales and zero points gives a tuple."""
    if isinstance(input, (list, tuple)):
        return tuple(quantize_per_tensor(t, float(s), int(z), dtype)
                     for t, s, z in zip(input, scale.tolist(), zero_point.tolist()))
    _check_quant_input(input)
    _check_qdtype(dtype)
    scale = _scalar_arg(scale, float)
    zero_point = _scalar_arg(zero_point, int)
    _check_zero_point(zero_point, dtype, "quantize_tensor_per_tensor_affine")
    _warn_deprecated()
    arr = quantize_array(input._data, scale, zero_point, dtype)
    return _make(xp.ascontiguousarray(arr), dtype, per_tensor_affine, scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantize a float32 tensor along dimension ``axis`` with one scale and zero point per
    index (``scales``/``zero_points``: 1-d tensors of that length)."""
    _check_quant_input(input)
    _check_qdtype(dtype)
    for nm, v in (("scales", scales), ("zero_points", zero_points)):
        if not isinstance(v, Tensor):
            raise TypeError(f"quantize_per_channel(): argument '{nm}' (position "
                            f"{2 if nm == 'scales' else 3}) must be Tensor, not "
                            f"{type(v).__name__}")
    if not 0 <= axis < input.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {input.ndim})")
    n = input.shape[axis]
    if scales.numel() != n:
        raise RuntimeError(f"length of scales must equal to channel, expected {n} got, "
                           f"{scales.numel()}")
    if zero_points.numel() != n:
        raise RuntimeError(f"length of zero_points must equal to channel expected {n} got, "
                           f"{zero_points.numel()}")
    if zero_points.dtype.is_floating_point:
        raise RuntimeError("glasstorch: float zero_points (torch.per_channel_affine_float_"
                           "qparams) are not supported; pass integer zero_points")
    s = scales._data.reshape(-1).astype(_F64)
    z = zero_points._data.reshape(-1).astype(xp.int64)
    for zp in z.tolist():
        _check_zero_point(zp, dtype, "quantize_tensor_per_channel_affine")
    _warn_deprecated()
    arr = _quantize_channels(input._data, s, z, axis, dtype)
    return _make(xp.ascontiguousarray(arr), dtype, per_channel_affine, s, z, axis)


_SMALL_SCALE = xp.float32(6.1e-5)


def choose_qparams(min_val, max_val, qmin, qmax, preserve_sparsity=False):
    """(scale, zero_point) torch's dynamic quantization picks for values in
    [min_val, max_val] (the range always includes 0) mapped onto [qmin, qmax];
    ``preserve_sparsity`` makes a range around 0 symmetric first (0 maps to the middle)."""
    min_val = min(float(xp.float32(min_val)), 0.0)
    max_val = max(float(xp.float32(max_val)), 0.0)
    if preserve_sparsity and min_val < 0 < max_val:
        sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        step = max(abs(min_val / sym_min), abs(max_val / sym_max))
        min_val = float(xp.float32(step * sym_min))
        max_val = float(xp.float32(step * sym_max))
    scale = (max_val - min_val) / (qmax - qmin)
    f = xp.float32(scale)
    with xp.errstate(divide="ignore", over="ignore"):
        if f == 0 or xp.isinf(xp.float32(1.0) / f):
            scale = 0.1
    if scale < _SMALL_SCALE:
        # torch raises tiny scales to 6.1e-5 and widens the range to match (in float32)
        org = xp.float32(scale)
        scale = float(_SMALL_SCALE)
        if min_val == 0.0:
            max_val = float(_SMALL_SCALE * xp.float32(qmax - qmin))
        elif max_val == 0.0:
            min_val = float(-_SMALL_SCALE * xp.float32(qmax - qmin))
        else:
            amp = _SMALL_SCALE / org
            min_val = float(xp.float32(min_val) * amp)
            max_val = float(xp.float32(max_val) * amp)
    from_min = qmin - min_val / scale
    from_max = qmax - max_val / scale
    err_min = abs(qmin) - abs(min_val / scale)
    err_max = abs(qmax) - abs(max_val / scale)
    initial = from_min if err_min < err_max else from_max
    if initial < qmin:
        zp = qmin
    elif initial > qmax:
        zp = qmax
    else:
        zp = int(round(initial))  # Python rounds half to even, as nearbyint does
    return scale, zp


def quantize_per_tensor_dynamic(input, dtype, reduce_range):
    """Quantize with a scale and zero point chosen from the tensor's own range (quint8 or
    qint8; ``reduce_range`` uses 7 bits)."""
    _check_quant_input(input)
    if dtype is quint8:
        qmin, qmax = (0, 127) if reduce_range else (0, 255)
    elif dtype is qint8:
        qmin, qmax = (-64, 63) if reduce_range else (-128, 127)
    else:
        raise RuntimeError(f"Expected dtype to be Byte or Char but got "
                           f"{_dt.scalar_type_name(dtype)}")
    a = input._data
    lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
    scale, zp = choose_qparams(lo, hi, qmin, qmax)
    return quantize_per_tensor(input, scale, zp, dtype)


def _make_per_tensor_quantized_tensor(input, scale, zero_point):
    """A quantized tensor whose integer values are ``input`` (uint8 -> quint8, int8 ->
    qint8, int32 -> qint32), without requantizing."""
    qd = {_dt.uint8: quint8, _dt.int8: qint8, _dt.int32: qint32}.get(input.dtype)
    if qd is None:
        raise RuntimeError(f"Int Repr: Expected Byte, Char or Int but got "
                           f"{_dt.scalar_type_name(input.dtype)}")
    return _make(xp.ascontiguousarray(input._data).copy(), qd, per_tensor_affine,
                 _scalar_arg(scale, float), _scalar_arg(zero_point, int))


def _make_per_channel_quantized_tensor(input, scale, zero_point, axis):
    """Per-channel counterpart of ``_make_per_tensor_quantized_tensor``."""
    qd = {_dt.uint8: quint8, _dt.int8: qint8, _dt.int32: qint32}.get(input.dtype)
    if qd is None:
        raise RuntimeError(f"Int Repr: Expected Byte, Char or Int but got "
                           f"{_dt.scalar_type_name(input.dtype)}")
    return _make(xp.ascontiguousarray(input._data).copy(), qd, per_channel_affine,
                 scale._data.reshape(-1).astype(_F64), zero_point._data.reshape(-1).astype(
                     xp.int64), int(axis))


# ----------------------------------------------------------------------------- accessors

def _backend_name(t):
    return "QuantizedCPU" if type(t) is QuantizedTensor else "CPU"


def _needs_quantized(fn, t):
    if type(t) is not QuantizedTensor:
        raise NotImplementedError(
            f"Could not run 'aten::{fn}' with arguments from the '{_backend_name(t)}' backend. "
            f"'aten::{fn}' is only available for quantized tensors (QuantizedCPU).")


@register()
def dequantize(input):
    """The float32 values a quantized tensor stands for (a float tensor is returned as is;
    a list of tensors gives a tuple)."""
    if isinstance(input, (list, tuple)):
        return tuple(dequantize(t) for t in input)
    if type(input) is not QuantizedTensor:
        return input
    return _wrap(_dequantize_array(input))


def int_repr(input):
    """The integer values of a quantized tensor (uint8, int8 or int32; quint4x2 packs two
    values per byte, low nibble first, as torch)."""
    _needs_quantized("int_repr", input)
    a = input._data
    if input._qdtype is quint4x2:
        flat = xp.ascontiguousarray(a).reshape(-1)
        if flat.size % 2:
            flat = xp.concatenate([flat, xp.zeros(1, flat.dtype)])
        return _wrap((flat[0::2] | (flat[1::2] << 4)).astype(xp.uint8))
    return _wrap(a.copy(order="K"))


def _per_tensor(fn, t):
    _needs_quantized(fn, t)
    if t._qscheme is not per_tensor_affine:
        raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but "
                           "got false.")


def _per_channel(fn, t):
    _needs_quantized(fn, t)
    if t._qscheme is not per_channel_affine:
        raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || "
                           "quantizer->qscheme() == kPerChannelAffineFloatQParams to be true, "
                           "but got false.")


def q_scale(input) -> float:
    """The scale of a per-tensor quantized tensor."""
    _per_tensor("q_scale", input)
    return input._scale


def q_zero_point(input) -> int:
    """The zero point of a per-tensor quantized tensor."""
    _per_tensor("q_zero_point", input)
    return input._zero_point


def q_per_channel_scales(input):
    """The float64 scales of a per-channel quantized tensor."""
    _per_channel("q_per_channel_scales", input)
    return _wrap(input._scale.copy())


def q_per_channel_zero_points(input):
    """The int64 zero points of a per-channel quantized tensor."""
    _per_channel("q_per_channel_zero_points", input)
    return _wrap(input._zero_point.copy())


def q_per_channel_axis(input) -> int:
    """The dimension a per-channel quantized tensor's parameters run along."""
    _per_channel("q_per_channel_axis", input)
    return input._axis


def _qscheme_of(input):
    """The quantization scheme (``torch.per_tensor_affine``...) of a quantized tensor."""
    _needs_quantized("qscheme", input)
    return input._qscheme


_qscheme_of.__name__ = _qscheme_of.__qualname__ = "qscheme"
for _f in (int_repr, q_scale, q_zero_point, q_per_channel_scales, q_per_channel_zero_points,
           q_per_channel_axis):
    register()(_f)
_attach("qscheme", _qscheme_of)
del _f


# ----------------------------------------------------------------------------- fake quantize

def _fq_check(input, quant_min, quant_max):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"fake_quantize_tensor_cachemask_kernel_type_handling" not '
                                  f"implemented for '{_dt.scalar_type_name(input.dtype)}'")
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Quantize and dequantize in one step (values stay float):
    ``(clamp(round(x * (1/scale)) + zp, qmin, qmax) - zp) * scale``, with the straight-through
    gradient (1 where the value was not clamped)."""
    return _fake_quant(input, scale, zero_point, quant_min, quant_max, None)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Per-channel ``fake_quantize_per_tensor_affine`` along dimension ``axis`` (int32 zero
    points, as torch requires)."""
    if zero_point.dtype not in (_dt.int32, _dt.float32, _dt.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{_dt.scalar_type_name(zero_point.dtype)}")
    return _fake_quant(input, scale, zero_point, quant_min, quant_max, axis)


def _fake_quant(input, scale, zero_point, quant_min, quant_max, axis):
    _fq_check(input, quant_min, quant_max)
    if axis is None:
        zps = [_scalar_arg(zero_point, int)]
    else:
        from .._tensor import _wrap_dim
        axis = _wrap_dim(axis, input.ndim)
        n = input.shape[axis]
        if scale.numel() != n or zero_point.numel() != n:
            raise RuntimeError("dimensions of scale and zero-point are not consistent with "
                               "input tensor")
        zps = zero_point._data.reshape(-1).tolist()
    if any(not quant_min <= z <= quant_max for z in zps):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    # torch's kernel: float32 scale and 1/scale; the values in their own precision (float64
    # stays float64, half and bfloat16 run in float32)
    work = _F64 if input._data.dtype == _F64 else _F32
    x = input._data.astype(work)
    if axis is None:
        s = xp.float32(_scalar_arg(scale, float))
        zf = work.type(_scalar_arg(zero_point, int))
    else:
        shape = [1] * x.ndim
        shape[axis] = -1
        s = scale._data.astype(_F32).reshape(shape)
        zf = xp.rint(zero_point._data.astype(_F32)).astype(work).reshape(shape)
    inv = (xp.float32(1.0) / s).astype(_F32)
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore"):
        qv = xp.rint((x * inv).astype(work)) + zf
        mask = (qv >= quant_min) & (qv <= quant_max)
        out = ((xp.clip(qv, quant_min, quant_max) - zf) * s).astype(input._data.dtype)
    res = _wrap(out)
    if needs_grad(input):
        record(res, FakeQuantizePerTensorAffineCachemaskBackward0 if axis is None
               else FakeQuantizePerChannelAffineCachemaskBackward0, (input,), mask=mask)
    return res


class FakeQuantizePerTensorAffineCachemaskBackward0(Node):
    """Straight-through gradient of fake quantization: passes where the value was in range."""

    def backward(self, grad):
        return grad * _wrap(self._saved["mask"].astype(grad._data.dtype))


class FakeQuantizePerChannelAffineCachemaskBackward0(
        FakeQuantizePerTensorAffineCachemaskBackward0):
    """Per-channel straight-through gradient."""


# ----------------------------------------------------------------------------- printing

def _qrepr(q):
    from .._tensor_str import PRINT_OPTS, _add_suffixes, _body_str
    arr = _dequantize_array(q)
    prefix = "tensor("
    indent = len(prefix)
    body = _body_str(arr, indent) if arr.size else "[]"
    suffixes = [f"size={tuple(arr.shape)}", f"dtype={q._qdtype}",
                f"quantization_scheme={q._qscheme}"]
    if q._axis is None:
        suffixes += [f"scale={q._scale!r}", f"zero_point={q._zero_point}"]
    else:
        suffixes += [f"scale={_wrap(q._scale)!r}", f"zero_point={_wrap(q._zero_point)!r}",
                     f"axis={q._axis}"]
    return _add_suffixes(prefix + body, suffixes, indent, PRINT_OPTS.linewidth)


# ----------------------------------------------------------------------------- dispatch table

# Ops whose result does not depend on the values: run as for any tensor.
_METADATA = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride",
    "is_contiguous", "storage_offset", "data_ptr", "is_floating_point", "is_complex",
    "__len__", "shape", "ndim", "requires_grad", "device", "is_cuda", "is_cpu", "layout",
    "is_sparse", "grad", "grad_fn", "is_leaf", "itemsize", "nbytes", "is_meta", "get_device",
    "untyped_storage", "_version", "output_nr", "__format__", "is_mps", "is_xpu", "names",
    "requires_grad_", "cpu", "__reduce_ex__", "__deepcopy__", "__setstate__", "retain_grad",
    "is_nested", "is_inference",
})


def _first_q(args):
    q = args[0]
    if isinstance(q, (list, tuple)):
        q = q[0]
    return q


def _plain(q):
    """A plain integer Tensor over ``q``'s values (sharing memory)."""
    t = _view_of(q, q._data)
    return t


def _view_op(func, args, kwargs):
    # views and copies: the op runs on the integer values, the quantizer carries over
    q = args[0]
    if q._axis is not None and _func_name(func) not in ("clone", "contiguous", "detach"):
        raise NotImplementedError(f"glasstorch: '{_func_name(func)}' on a per-channel "
                                  "quantized tensor is not supported (per-tensor only)")
    res = func(_plain(q), *args[1:], **kwargs)
    return _rewrap(q, res)


def _rewrap(q, res):
    if isinstance(res, (tuple, list)):
        return type(res)(_rewrap(q, r) for r in res)
    if not isinstance(res, Tensor):
        return res
    arr = res._data
    shares = res._base is not None
    return _like(q, arr, base=q if shares else None)


def _q_args(func, args, kwargs):
    q = args[0]
    if q._axis is not None:
        raise NotImplementedError(f"glasstorch: '{_func_name(func)}' on a per-channel "
                                  "quantized tensor is not supported (per-tensor only)")
    return q


def _relu(func, args, kwargs):
    # relu of a quantized tensor keeps its quantizer: max(q, zero_point)
    q = _q_args(func, args, kwargs)
    inplace = kwargs.get("inplace", args[1] if len(args) > 1 else False)
    out = xp.maximum(q._data, q._qdtype.np.type(q._zero_point))
    if inplace or _func_name(func) == "relu_":
        q._data[...] = out
        q._bump_version()
        return q
    return _like(q, out)


def _monotone(func, args, kwargs):
    # max pooling commutes with dequantization: pool the integers (exact in float32 below
    # 2**24), keep the quantizer
    q = _q_args(func, args, kwargs)
    plain = _wrap(q._data.astype(_F32))
    res = func(plain, *args[1:], **kwargs)

    def back(r):
        if isinstance(r, Tensor) and r.dtype is _dt.float32:
            return _like(q, r._data.astype(q._qdtype.np))
        return r
    if isinstance(res, tuple):
        return type(res)(back(r) for r in res) if not hasattr(res, "_make") else \
            res._make(back(r) for r in res)
    return back(res)


def _accessor(fn):
    def run(func, args, kwargs):
        return fn(*args, **kwargs)
    return run


def _repr(func, args, kwargs):
    return _qrepr(args[0])


def _equal(func, args, kwargs):
    a, b = args[0], args[1]
    if type(a) is not QuantizedTensor or type(b) is not QuantizedTensor:
        raise RuntimeError("Quantized tensors compare only with quantized tensors")
    if a._qdtype is not b._qdtype or a._qscheme is not b._qscheme or a.shape != b.shape:
        return False
    if a._axis is None:
        same_q = a._scale == b._scale and a._zero_point == b._zero_point
    else:
        same_q = (a._axis == b._axis and xp.array_equal(a._scale, b._scale)
                  and xp.array_equal(a._zero_point, b._zero_point))
    return bool(same_q and xp.array_equal(a._data, b._data))


def _dequantize_dispatch(func, args, kwargs):
    return dequantize(*args, **kwargs)


_QUANTIZED = {
    **dict.fromkeys(("reshape", "view", "flatten", "transpose", "t", "permute", "squeeze",
                     "unsqueeze", "__getitem__", "select", "narrow", "contiguous", "clone",
                     "detach", "unbind", "chunk", "split", "movedim", "swapaxes", "unflatten",
                     "expand", "view_as", "reshape_as"), _view_op),
    "relu": _relu, "relu_": _relu,
    **dict.fromkeys(("max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool2d"),
                    _monotone),
    "int_repr": _accessor(int_repr), "q_scale": _accessor(q_scale),
    "q_zero_point": _accessor(q_zero_point),
    "q_per_channel_scales": _accessor(q_per_channel_scales),
    "q_per_channel_zero_points": _accessor(q_per_channel_zero_points),
    "q_per_channel_axis": _accessor(q_per_channel_axis), "qscheme": _accessor(_qscheme_of),
    "dequantize": _dequantize_dispatch, "__repr__": _repr, "equal": _equal,
    "is_quantized": lambda func, args, kwargs: True,
}


# ----------------------------------------------------------------------------- torch's records

def save_record(q):
    """What torch's ``_rebuild_qtensor`` record holds for ``q``: (a plain tensor over the
    integer storage, size or None, stride or None, quantizer params). None means the
    geometry of that tensor itself; quint4x2 stores its packed bytes."""
    if q._axis is None:
        params = (q._qscheme, float(q._scale), int(q._zero_point))
    else:
        params = (q._qscheme, _wrap(q._scale.copy()), _wrap(q._zero_point.copy()), q._axis)
    if q._qdtype is quint4x2:
        from .._tensor import _contiguous_strides
        return int_repr(q), tuple(q.shape), _contiguous_strides(q.shape), params
    return _plain(q), None, None, params


def unpack_quint4x2(buf, offset, size):
    """The quint4x2 values (one per byte) of ``size`` packed in byte array ``buf``."""
    n = 1
    for s in size:
        n *= s
    need = offset + (n + 1) // 2
    if offset < 0 or need > buf.nbytes:
        raise RuntimeError(f"quint4x2 record of {n} values needs {need} bytes, its storage "
                           f"has {buf.nbytes}")
    packed = buf[offset:need]
    vals = xp.empty(2 * packed.size, xp.uint8)
    vals[0::2] = packed & 0x0F
    vals[1::2] = packed >> 4
    return vals[:n].reshape(tuple(size))


def from_record(values, qdtype, params):
    """A quantized tensor from a loaded record: integer array ``values`` and torch's
    quantizer params ((scheme, scale, zero_point) or (scheme, scales, zero_points, axis))."""
    import pickle
    if type(params) is not tuple or not params or type(params[0]) is not qscheme:
        raise pickle.UnpicklingError(f"invalid quantizer parameters {params!r}")
    scheme = params[0]
    if scheme in (per_tensor_affine, per_tensor_symmetric) and len(params) == 3:
        return _make(values, qdtype, per_tensor_affine, float(params[1]), int(params[2]))
    if scheme in (per_channel_affine, per_channel_symmetric) and len(params) == 4 \
            and isinstance(params[1], Tensor) and isinstance(params[2], Tensor):
        if params[2].dtype.is_floating_point:
            raise RuntimeError("glasstorch: float zero_points (per_channel_affine_float_qparams)"
                               " are not supported")
        axis = int(params[3])
        if not 0 <= axis < values.ndim or params[1].numel() != values.shape[axis]:
            raise pickle.UnpicklingError("per-channel quantizer does not fit its tensor")
        return _make(values, qdtype, per_channel_affine,
                     params[1]._data.reshape(-1).astype(_F64),
                     params[2]._data.reshape(-1).astype(xp.int64), axis)
    raise RuntimeError(f"glasstorch: loading quantized tensors with scheme {scheme} is not "
                       f"supported")
