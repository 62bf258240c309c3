"""Vision kernels: padding, resampling (interpolate), pixel/channel shuffles, im2col/col2im,
affine grids.

Every resampling mode here is separable: along each spatial dim the output is a
fixed ``(out, in)`` matrix times the input (bilinear/bicubic taps, antialias
filters, replicate/reflect index maps). Forward applies one GEMM per dim
(index gathers for selection modes, which keeps inf/NaN exact); backward
applies the transposed matrices with glasstorch matmuls, so it is itself
differentiable.
"""

from __future__ import annotations

import math

from ._common import (
    Node,
    Tensor,
    compute_dtype,
    needs_grad,
    not_implemented_for,
    record,
    wrap,
    xp,
)
from .conv import _col2im, _windows
from .creation import linspace_array

__all__ = ["constant_pad_nd", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle", "affine_grid_generator"]


# ----------------------------------------------------------------------------- separable op

class _Separable(Node):
    """Backward of ``out = M_1 ... M_k x`` along the last ``k`` dims: ``M_i^T`` per dim."""

    def backward(self, grad):
        nd = len(self._saved_mats)
        g = grad
        for i, m in enumerate(self._saved_mats):
            ax = g.dim() - nd + i
            g = g.movedim(ax, -1).matmul(wrap(m.astype(grad.dtype.np))).movedim(-1, ax)
        return (g.contiguous(),)


def _named(name):
    return type(name, (_Separable,), {})


_NODES = {n: _named(n) for n in (
    "ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0",
    "ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0",
    "UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0", "UpsampleNearest3DBackward0",
    "UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0",
    "UpsampleNearestExact3DBackward0", "UpsampleLinear1DBackward0",
    "UpsampleBilinear2DBackward0", "UpsampleTrilinear3DBackward0",
    "UpsampleBicubic2DBackward0", "UpsampleBilinear2DAaBackward0",
    "UpsampleBicubic2DAaBackward0")}


def _select_matrix(idx, n, dtype):
    m = xp.zeros((len(idx), n), dtype)
    m[xp.arange(len(idx)), idx] = 1
    return m


def _gather_dims(input, idxs, node_name):
    """``input`` indexed by ``idxs[i]`` along its i-th of the last ``len(idxs)`` dims."""
    a = input._data
    nd = len(idxs)
    for i, ix in enumerate(idxs):
        a = xp.take(a, ix, axis=a.ndim - nd + i)
    r = wrap(xp.ascontiguousarray(a))
    if needs_grad(input):
        c = compute_dtype(input.dtype)
        mats = [_select_matrix(ix, input.shape[input.dim() - nd + i], c)
                for i, ix in enumerate(idxs)]
        record(r, _NODES[node_name], (input,), mats=mats)
    return r


def _matrix_dims(input, mats, node_name):
    """``input`` multiplied along each of its last dims by ``mats`` (computed in float32+)."""
    dt = input.dtype
    c = compute_dtype(dt)
    a = input._data.astype(c, copy=False)
    nd = len(mats)
    for i, m in enumerate(mats):
        ax = a.ndim - nd + i
        a = xp.moveaxis(xp.matmul(xp.moveaxis(a, ax, -1), m.T.astype(c, copy=False)), -1, ax)
    r = wrap(xp.ascontiguousarray(a).astype(dt.np, copy=False))
    if needs_grad(input):
        record(r, _NODES[node_name], (input,), mats=mats)
    return r


# ----------------------------------------------------------------------------- padding

def constant_pad_nd(input, pad, value=0):
    """Pad the last ``len(pad) // 2`` dims with ``value`` (negative pads crop)."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    nd = len(pad) // 2
    a = input._data
    if nd > a.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {a.ndim} dimensions.")
    widths = [(0, 0)] * (a.ndim - nd)
    crop = [slice(None)] * (a.ndim - nd)
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        n = a.shape[a.ndim - nd + i]
        if n + lo + hi < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {a.ndim - nd + i} of your input.")
        widths.append((max(lo, 0), max(hi, 0)))
        crop.append(slice(max(-lo, 0), n - max(-hi, 0)))
    a = a[tuple(crop)]
    if any(lo or hi for lo, hi in widths):
        fill = xp.asarray(value).astype(a.dtype) if a.dtype.kind != "V" else value
        a = xp.pad(a, widths, constant_values=fill)
    r = wrap(xp.ascontiguousarray(a))
    if needs_grad(input):
        record(r, ConstantPadNdBackward0, (input,), pad=tuple(pad))
    return r


class ConstantPadNdBackward0(Node):
    def backward(self, grad):
        return (constant_pad_nd(grad, [-p for p in self._saved_pad]),)


def _pad_index(n, lo, hi, mode):
    j = xp.arange(-lo, n + hi)
    if mode == "replicate":
        return xp.clip(j, 0, n - 1)
    if mode == "reflect":
        j = xp.abs(j)
        return xp.where(j > n - 1, 2 * (n - 1) - j, j)
    return j % n  # circular


def _pad_error(nd_pad, ndim):
    return NotImplementedError(
        f"Padding size {nd_pad} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad_nd(input, pad, mode="constant", value=None):
    """``F.pad``: modes constant, reflect, replicate, circular."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pad = [int(p) for p in pad]
    nd = len(pad) // 2
    if len(pad) % 2 or nd not in (1, 2, 3) or input.dim() not in (nd + 1, nd + 2):
        raise _pad_error(len(pad), input.dim())
    shape = input.shape
    for i in range(nd):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        d = input.dim() - 1 - i
        n = shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {d} of input {list(shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi <= 0 or (mode == "replicate" and n == 0):
            raise RuntimeError(f"input (H: {n}) is too small. Calculated output "
                               f"W: {n + lo + hi}")
    if mode == "circular":
        return _pad_circular(input, pad, nd)
    idxs = []
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        idxs.append(_pad_index(shape[input.dim() - nd + i], lo, hi, mode))
    kind = "Reflection" if mode == "reflect" else "Replication"
    return _gather_dims(input, idxs, f"{kind}Pad{nd}DBackward0")


def _pad_circular(input, pad, nd):
    # torch builds circular padding from slice copies (grad_fn CopySlices); do the same
    dims = input.dim()
    out_shape = list(input.shape)
    for i in range(nd):
        out_shape[dims - 1 - i] += pad[2 * i] + pad[2 * i + 1]
    out = input.new_empty(out_shape)
    src = [slice(None)] * dims
    dst = [slice(None)] * dims
    for i in range(nd):
        d = dims - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[d]
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), out_shape[d] - max(hi, 0))
    out[tuple(dst)] = input[tuple(src)]
    for i in range(nd):
        d = dims - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out_shape[d]
        if lo > 0:
            a = [slice(None)] * dims
            b = [slice(None)] * dims
            a[d] = slice(0, lo)
            b[d] = slice(size - max(hi, 0) - lo, size - max(hi, 0))
            out[tuple(a)] = out[tuple(b)]
        if hi > 0:
            a = [slice(None)] * dims
            b = [slice(None)] * dims
            a[d] = slice(size - hi, size)
            b[d] = slice(max(lo, 0), max(lo, 0) + hi)
            out[tuple(a)] = out[tuple(b)]
    return out


# ----------------------------------------------------------------------------- interpolate

def _scale(n, o, align_corners, scale):
    if align_corners:
        return (n - 1) / (o - 1) if o > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n / o


def _nearest_index(n, o, scale, exact):
    s = 1.0 / scale if scale is not None and scale > 0 else n / o
    j = xp.arange(o, dtype=xp.float64)
    # torch computes in float32: floor(dst * scale)
    s32 = xp.float32(s)
    src = xp.floor(((j + 0.5) if exact else j).astype(xp.float32) * s32)
    return xp.minimum(src.astype(xp.int64), n - 1)


def _linear_matrix(n, o, align_corners, scale, dtype):
    s = _scale(n, o, align_corners, scale)
    j = xp.arange(o, dtype=dtype)
    src = (s * j) if align_corners else xp.maximum(s * (j + 0.5) - 0.5, 0)
    src = src.astype(dtype)
    i0 = xp.minimum(xp.floor(src).astype(xp.int64), n - 1)
    i1 = i0 + (i0 < n - 1)
    lam = (src - i0).astype(dtype)
    m = xp.zeros((o, n), dtype)
    r = xp.arange(o)
    m[r, i0] += 1 - lam
    m[r, i1] += lam
    return m


def _cubic1(x, a):
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x, a):
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_matrix(n, o, align_corners, scale, dtype):
    s = _scale(n, o, align_corners, scale)
    j = xp.arange(o, dtype=dtype)
    src = ((s * j) if align_corners else (s * (j + 0.5) - 0.5)).astype(dtype)
    fl = xp.floor(src)
    t = (src - fl).astype(dtype)
    fl = fl.astype(xp.int64)
    a = -0.75
    coeffs = (_cubic2(t + 1, a), _cubic1(t, a), _cubic1(1 - t, a), _cubic2(2 - t, a))
    m = xp.zeros((o, n), dtype)
    r = xp.arange(o)
    for k, c in enumerate(coeffs):
        xp.add.at(m, (r, xp.clip(fl - 1 + k, 0, n - 1)), c.astype(dtype))
    return m


def _aa_filter(x, cubic):
    x = xp.abs(x)
    if not cubic:
        return xp.where(x < 1, 1 - x, 0.0)
    a = -0.5
    return xp.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    xp.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _aa_matrix(n, o, align_corners, scale, dtype, cubic):
    s = _scale(n, o, align_corners, scale)
    interp = 4 if cubic else 2
    support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
    delta = 0.0  # torch centres align_corners windows like the others (only the scale differs)
    inv = 1.0 / s if s >= 1.0 else 1.0
    i = xp.arange(o, dtype=xp.float64)
    center = s * (i + 0.5 - delta)
    xmin = xp.maximum(xp.trunc(center - support + 0.5 + delta), 0).astype(xp.int64)
    xmax = xp.minimum(xp.trunc(center + support + 0.5 + delta).astype(xp.int64), n)
    j = xp.arange(n)
    w = _aa_filter((j[None, :] - center[:, None] + 0.5 - delta) * inv, cubic)
    w = xp.where((j[None, :] >= xmin[:, None]) & (j[None, :] < xmax[:, None]), w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = xp.where(total != 0, w / xp.where(total == 0, 1, total), 0.0)
    return w.astype(dtype)


_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
             recompute_scale_factor=None, antialias=False):
    """``F.interpolate``: resample the spatial dims of ``(N, C, *spatial)``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(spatial)} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    f"output size in (o1, o2, ...,oK) format.")
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(spatial)} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    f"(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    f"format.")
            scales = tuple(float(s) for s in scale_factor)
        else:
            scales = (float(scale_factor),) * dim
        out = tuple(int(math.floor(float(n) * s)) for n, s in zip(spatial, scales))
        if recompute_scale_factor:
            scales = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode not in _MODES or dim not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    need = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
    if need is not None and dim != need:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{need + 2}D input")
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output "
                           f"({', '.join(map(str, out))})")
    if scales is None:
        scales = (None,) * dim
    dt = input.dtype
    if mode == "area":
        from . import pooling
        return (pooling.adaptive_avg_pool1d, pooling.adaptive_avg_pool2d,
                pooling.adaptive_avg_pool3d)[dim - 1](input, out)
    if dt.is_complex or dt.np.kind == "b" or (dt._category < 2 and dt.np != xp.uint8):
        kern = "upsample_nearest" if mode.startswith("nearest") else "upsample_" + mode
        raise not_implemented_for(f"{kern}{dim}d_channels_last", dt)
    if dt._category < 2 and not mode.startswith("nearest"):
        # torch's uint8 resampling is a fixed-point kernel whose rounding is not reproduced
        raise NotImplementedError(f"interpolate mode {mode!r} on uint8 input is not "
                                  f"supported by glasstorch")
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        idxs = [_nearest_index(n, o, s, exact) for n, o, s in zip(spatial, out, scales)]
        suffix = "Exact" if exact else ""
        return _gather_dims(input, idxs, f"UpsampleNearest{suffix}{dim}DBackward0")
    c = compute_dtype(dt)
    if antialias:
        cubic = mode == "bicubic"
        mats = [_aa_matrix(n, o, align_corners, s, c, cubic)
                for n, o, s in zip(spatial, out, scales)]
        name = "UpsampleBicubic2DAaBackward0" if cubic else "UpsampleBilinear2DAaBackward0"
    elif mode == "bicubic":
        mats = [_cubic_matrix(n, o, align_corners, s, c) for n, o, s in zip(spatial, out, scales)]
        name = "UpsampleBicubic2DBackward0"
    else:
        mats = [_linear_matrix(n, o, align_corners, s, c) for n, o, s in zip(spatial, out, scales)]
        name = {"linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
                "trilinear": "UpsampleTrilinear3DBackward0"}[mode]
    return _matrix_dims(input, mats, name)


# ----------------------------------------------------------------------------- shuffles

def pixel_shuffle(input, upscale_factor):
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``."""
    r = int(upscale_factor)
    a = input._data
    if a.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {a.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = a.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    lead = a.shape[:-3]
    b = a.reshape(lead + (c // (r * r), r, r, h, w))
    n = len(lead)
    b = b.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    res = wrap(xp.ascontiguousarray(b).reshape(lead + (c // (r * r), h * r, w * r)))
    if needs_grad(input):
        record(res, PixelShuffleBackward0, (input,), r=r)
    return res


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``."""
    r = int(downscale_factor)
    a = input._data
    if a.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {a.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = a.shape[-3:]
    if h % r or w % r:
        which = "height" if h % r else "width"
        size = h if h % r else w
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by "
                           f"downscale_factor, but input.size({-2 if h % r else -1})={size} is "
                           f"not divisible by {r}")
    lead = a.shape[:-3]
    n = len(lead)
    b = a.reshape(lead + (c, h // r, r, w // r, r))
    b = b.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    res = wrap(xp.ascontiguousarray(b).reshape(lead + (c * r * r, h // r, w // r)))
    if needs_grad(input):
        record(res, PixelUnshuffleBackward0, (input,), r=r)
    return res


class PixelShuffleBackward0(Node):
    def backward(self, grad):
        return (pixel_unshuffle(grad, self._saved_r),)


class PixelUnshuffleBackward0(Node):
    def backward(self, grad):
        return (pixel_shuffle(grad, self._saved_r),)


def channel_shuffle(input, groups):
    """Interleave ``groups`` groups of channels (dim 1)."""
    a = input._data
    g = int(groups)
    if a.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {a.ndim} dims")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    c = a.shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    b = a.reshape((a.shape[0], g, c // g) + a.shape[2:]).swapaxes(1, 2)
    res = wrap(xp.ascontiguousarray(b).reshape(a.shape))
    if needs_grad(input):
        record(res, ChannelShuffleBackward0, (input,), groups=g)
    return res


native_channel_shuffle = channel_shuffle


class ChannelShuffleBackward0(Node):
    def backward(self, grad):
        return (channel_shuffle(grad, grad.shape[1] // self._saved_groups),)


# ----------------------------------------------------------------------------- im2col

def _pairs(v, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{name} must be an int or a tuple of two ints")
    return v


def im2col(input, kernel_size, dilation, padding, stride):
    """``F.unfold``: sliding blocks of ``(N, C, H, W)`` as columns ``(N, C*kh*kw, L)``."""
    k, d, p, s = (_pairs(v, n) for v, n in ((kernel_size, "kernel_size"),
                                             (dilation, "dilation"), (padding, "padding"),
                                             (stride, "stride")))
    a = input._data
    if a.ndim not in (3, 4) or 0 in a.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(a.shape)}")
    batched = a.ndim == 4
    if not batched:
        a = a[None]
    if any(v <= 0 for v in k + s + d) or any(v < 0 for v in p):
        raise RuntimeError(f"kernel size, stride and dilation should be greater than zero and "
                           f"padding non-negative, but got kernel_size={list(k)}, "
                           f"stride={list(s)}, dilation={list(d)}, padding={list(p)}")
    out = tuple((a.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1))
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input with spatial size ({a.shape[2]}, {a.shape[3]}), "
                           f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
                           f"padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({out[0]}, {out[1]}), but its components must "
                           f"be at least one.")
    xpad = xp.pad(a, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]))) if any(p) else a
    win = _windows(xpad, k, s, d, out)                     # (N, C, oh, ow, kh, kw)
    cols = xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3))
    cols = cols.reshape(a.shape[0], a.shape[1] * k[0] * k[1], out[0] * out[1])
    res = wrap(cols if batched else cols[0])
    if needs_grad(input):
        record(res, Im2ColBackward0, (input,), size=tuple(a.shape[2:]), geom=(k, d, p, s))
    return res


def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """``F.fold``: sum columns ``(N, C*kh*kw, L)`` back into ``(N, C, *output_size)``."""
    size = _pairs(output_size, "output_size")
    k, d, p, s = (_pairs(v, n) for v, n in ((kernel_size, "kernel_size"),
                                             (dilation, "dilation"), (padding, "padding"),
                                             (stride, "stride")))
    a = input._data
    if a.ndim not in (2, 3) or 0 in a.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                           f"and non-zero dimensions for input, but got: {list(a.shape)}")
    batched = a.ndim == 3
    if not batched:
        a = a[None]
    kk = k[0] * k[1]
    if a.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={a.shape[1]} and "
                           f"kernel_size=({k[0]}, {k[1]})")
    out = tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1))
    if out[0] * out[1] != a.shape[2]:
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {out[0]} * {out[1]} "
                           f"= {out[0] * out[1]}, but got input.size(2)={a.shape[2]}.")
    n, c = a.shape[0], a.shape[1] // kk
    cols = a.reshape(1, n, a.shape[1], a.shape[2])
    padded = (size[0] + 2 * p[0], size[1] + 2 * p[1])
    buf = _col2im(cols, n, c, k, s, d, out, padded)
    r = xp.ascontiguousarray(buf[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]])
    res = wrap(r if batched else r[0])
    if needs_grad(input):
        record(res, Col2ImBackward0, (input,), geom=(k, d, p, s))
    return res


class Im2ColBackward0(Node):
    def backward(self, grad):
        return (col2im(grad, self._saved_size, *self._saved_geom),)


class Col2ImBackward0(Node):
    def backward(self, grad):
        return (im2col(grad, *self._saved_geom),)


# ----------------------------------------------------------------------------- affine grid

def _base_coords(n, align_corners, dtype):
    if n <= 1:
        return xp.zeros(max(n, 0), dtype)
    dtype = xp.dtype(dtype)
    if dtype in (xp.float32, xp.float64):  # as torch: its linspace, then * (n-1) and / n
        v = linspace_array(-1, 1, n, dtype.type)
        return v if align_corners else v * (n - 1) / n
    v = xp.linspace(-1, 1, n, dtype=xp.float64)
    if not align_corners:
        v = v * (n - 1) / n
    return v.astype(dtype)


def _base_grid(size, align_corners, dtype):
    """``(prod(spatial), nd + 1)`` rows ``[x, y, (z,) 1]`` (x varies fastest)."""
    spatial = size[2:]
    axes = [_base_coords(n, align_corners, dtype) for n in spatial]
    mesh = xp.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)] + [xp.ones(math.prod(spatial), dtype)]
    return xp.stack(cols, axis=1)


def affine_grid_generator(theta, size, align_corners):
    """Sampling grid ``(N, *spatial, nd)`` of the affine maps ``theta`` ``(N, nd, nd + 1)``."""
    size = [int(s) for s in size]
    nd = len(size) - 2
    t = theta._data
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if nd == 2 and (t.ndim != 3 or t.shape[1:] != (2, 3)):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{size}. Got {list(t.shape)}.")
    if nd == 3 and (t.ndim != 3 or t.shape[1:] != (3, 4)):
        raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                         f"{size}. Got {list(t.shape)}.")
    if nd not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if t.shape[0] != size[0]:
        raise ValueError(f"Expected theta batch size {t.shape[0]} to match size[0] {size[0]}")
    c = compute_dtype(theta.dtype)
    base = _base_grid(size, align_corners, c)
    g = xp.matmul(base, t.astype(c, copy=False).swapaxes(1, 2))    # (N, P, nd)
    res = wrap(g.reshape([size[0]] + size[2:] + [nd]).astype(theta.dtype.np, copy=False))
    if needs_grad(theta):
        record(res, AffineGridGeneratorBackward0, (theta,), base=base, nd=nd)
    return res


class AffineGridGeneratorBackward0(Node):
    def backward(self, grad):
        nd = self._saved_nd
        g = grad.reshape(grad.shape[0], -1, nd)
        base = wrap(self._saved_base.astype(grad.dtype.np))
        return (g.mT.matmul(base),)
