"""Convolutions (1-3 spatial dims, plain and transposed) as whole-batch GEMMs.

One N-d kernel serves every variant: the padded input is viewed as sliding
windows (``as_strided``, no copy), laid out once as columns
``(groups, C/g * prod(k), N * prod(out))`` and multiplied by the weight in one
GEMM per group (the forward keeps them for the weight gradient). A stride-1 input
gradient is itself a stride-1 convolution (re-padded gradient, flipped weight);
other strides (and the transposed convolution's forward) run the GEMM the other
way round followed by col2im: the columns are added into a padded buffer by
looping over the kernel offsets only (``prod(k)`` strided slice additions).

2-D 3x3 stride-1 float convolutions with 16+ channels each way and enough work
(forward, input gradient, stride-1 transposed convolution, weight gradient) use
Winograd F(2x2, 3x3) instead (``_winograd.py``): 2.25x fewer multiplies. Only these
NumPy kernels change; the recorded double-backward formulas call the same ops.
"""

from __future__ import annotations

import itertools
import math

from .._core import meta as _meta
from .._core.warn import warn_user
from ..autograd.grad_mode import _state
from . import _winograd
from ._common import (
    _SHORT,
    Node,
    Tensor,
    compute_dtype,
    needs_grad,
    record,
    wrap,
    xp,
)

__all__ = ["convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]

_as_strided = xp.lib.stride_tricks.as_strided


# ----------------------------------------------------------------------------- numpy kernels

def _windows(xpad, k, stride, dil, out):
    """View ``(N, C, *out, *k)`` of the sliding windows of a padded ``(N, C, *S)`` array."""
    s = xpad.strides
    nd = len(k)
    shape = xpad.shape[:2] + tuple(out) + tuple(k)
    strides = s[:2] + tuple(s[2 + i] * stride[i] for i in range(nd)) + \
        tuple(s[2 + i] * dil[i] for i in range(nd))
    return _as_strided(xpad, shape, strides, writeable=False)


def _im2col(xpad, groups, k, stride, dil, out):
    """Columns ``(G, Cg*prod(k), N*prod(out))`` of a padded input (one copy).

    Samples and output positions share the last axis, so each group's convolution is a
    single large GEMM (BLAS is fastest on few big operands, not many small ones).
    """
    n, c = xpad.shape[:2]
    nd = len(k)
    win = _windows(xpad, k, stride, dil, out).reshape((n, groups, c // groups) + tuple(out) +
                                                       tuple(k))
    # (N, G, Cg, *O, *K) -> (G, Cg, *K, N, *O)
    order = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))
    cols = xp.ascontiguousarray(win.transpose(order))
    return cols.reshape(groups, (c // groups) * math.prod(k), n * math.prod(out))


def _col2im(cols, n, c, k, stride, dil, out, padded):
    """Sum columns ``(G, N, Cg*prod(k), prod(out))`` back into a zero ``(N, C, *padded)``
    (the layout F.fold uses)."""
    return _col2im_g(cols.transpose(0, 2, 1, 3), n, c, k, stride, dil, out, padded)


def _col2im_g(cols, n, c, k, stride, dil, out, padded):
    """Sum columns ``(G, Cg*prod(k), N*prod(out))`` back into a zero ``(N, C, *padded)``."""
    nd = len(k)
    groups = cols.shape[0]
    cols = cols.reshape((groups, c // groups) + tuple(k) + (n,) + tuple(out))
    buf = xp.zeros((n, groups, c // groups) + tuple(padded), dtype=cols.dtype)
    # one strided add per kernel offset: (G, Cg, N, *O) viewed as (N, G, Cg, *O)
    for off in itertools.product(*(range(ki) for ki in k)):
        sl = tuple(slice(off[i] * dil[i], off[i] * dil[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(nd))
        src = cols[(slice(None),) * 2 + off]
        buf[(slice(None),) * 3 + sl] += xp.moveaxis(src, 2, 0)
    return buf.reshape((n, c) + tuple(padded))


def _pad(x, pads):
    """Zero-pad (positive) or crop (negative) the spatial dims of ``(N, C, *S)``."""
    if not any(lo or hi for lo, hi in pads):
        return x
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        x = x[(slice(None), slice(None)) + tuple(
            slice(max(-lo, 0), s - max(-hi, 0)) for (lo, hi), s in zip(pads, x.shape[2:]))]
        pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
        if not any(lo or hi for lo, hi in pads):
            return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _crop(x, pads, size):
    return x[(slice(None), slice(None)) + tuple(slice(lo, lo + s) for (lo, _), s in
                                                 zip(pads, size))]


def _fwd(x, w, stride, dil, pads, groups, out, keep=None):
    """Plain convolution of ``x (N, C, *S)`` by ``w (O, C/g, *k)`` -> ``(N, O, *out)``.

    ``keep`` (a list) receives the columns (Winograd: the transformed input), which the
    weight gradient reuses."""
    if _winograd.applies(x.dtype, w.shape, stride, dil, groups, x.shape[0] * math.prod(out)):
        return _winograd.conv3x3(x, w, pads, keep)
    k = w.shape[2:]
    n = x.shape[0]
    o = w.shape[0]
    cols = _im2col(_pad(x, pads), groups, k, stride, dil, out)    # (G, CgK, N*P)
    if keep is not None:
        keep.append(cols)
    wm = w.reshape(groups, o // groups, -1)                      # (G, Og, CgK)
    r = xp.matmul(wm, cols).reshape(o, n, -1)                    # (O, N*P) per group
    return xp.ascontiguousarray(r.swapaxes(0, 1)).reshape((n, o) + tuple(out))


def _flipped_weight(w, groups):
    """``(O, C/g, *k)`` -> ``(C, O/g, *k)`` with the kernel reversed: the weight of the
    stride-1 convolution that computes a convolution's input gradient."""
    o, cg = w.shape[:2]
    k = w.shape[2:]
    # reversing the flattened kernel reverses every spatial axis (one reversed axis copies
    # faster than nd of them)
    wt = w.reshape(groups, o // groups, cg, -1)[..., ::-1].swapaxes(1, 2)
    return xp.ascontiguousarray(wt).reshape((groups * cg, o // groups) + k)


def _bwd_input(gy, w, stride, dil, pads, groups, size):
    """Gradient of a plain convolution w.r.t. its ``(N, C, *size)`` input (and the
    transposed convolution's forward)."""
    k = w.shape[2:]
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    c = w.shape[1] * groups
    if all(s == 1 for s in stride):
        # a stride-1 convolution of the (re)padded gradient by the flipped weight:
        # one im2col + GEMM, no scatter-add
        full = tuple((d * (ki - 1) - lo, s + lo - oi) for d, ki, (lo, _), s, oi in
                     zip(dil, k, pads, size, out))
        return _fwd(gy, _flipped_weight(w, groups), stride, dil, full, groups, size)
    wm = w.reshape(groups, o // groups, -1).swapaxes(-1, -2)         # (G, CgK, Og)
    g = xp.ascontiguousarray(gy.reshape(n, o, -1).swapaxes(0, 1))    # (O, N, P)
    cols = xp.matmul(wm, g.reshape(groups, o // groups, -1))         # (G, CgK, N*P)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    buf = _col2im_g(cols, n, c, k, stride, dil, out, padded)
    return xp.ascontiguousarray(_crop(buf, pads, size))


def _bwd_weight(x, gy, wshape, stride, dil, pads, groups, cols=None):
    """Gradient of a plain convolution w.r.t. its weight of shape ``wshape`` (``cols``: what
    the forward kept)."""
    k = wshape[2:]
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    if _winograd.applies(x.dtype, wshape, stride, dil, groups, n * math.prod(out)):
        return _winograd.weight_grad(x, gy, pads, cols)
    if cols is None:
        cols = _im2col(_pad(x, pads), groups, k, stride, dil, out)  # (G, CgK, N*P)
    g = xp.ascontiguousarray(gy.reshape(n, o, -1).swapaxes(0, 1))    # (O, N, P)
    gw = xp.matmul(g.reshape(groups, o // groups, -1), cols.swapaxes(-1, -2))  # (G, Og, CgK)
    return gw.reshape(wshape)


# ----------------------------------------------------------------------------- the op

def _tuple(v, nd, name):
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(i) for i in v)
    if len(v) == 1 and nd > 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(v)}")
    return v


def _out_size(size, k, stride, dil, pads):
    return tuple((s + lo + hi - d * (kk - 1) - 1) // st + 1
                 for s, kk, st, d, (lo, hi) in zip(size, k, stride, dil, pads))


def _same_pads(k, dil):
    pads = []
    for kk, d in zip(k, dil):
        total = d * (kk - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _check(input, weight, bias, nd, transposed, groups, stride, dil, pads, output_padding):
    x, w = input._data, weight._data
    if w.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional "
                           f"weight {list(w.shape)}, but got {x.ndim}-dimensional input of "
                           f"size {list(x.shape)} instead")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_SHORT[input.dtype]} but found "
                           f"{_SHORT[weight.dtype]}")
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {_SHORT[input.dtype]} but found "
                           f"{_SHORT[bias.dtype]}")
    if x.dtype == xp.bool_:
        raise RuntimeError("\"slow_conv2d_cpu\" not implemented for 'Bool'")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dil):
        raise RuntimeError("dilation should be greater than zero")
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    cin = x.shape[1]
    if not transposed:
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{list(w.shape)}] instead")
        if cin != w.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, "
                               f"expected input{list(x.shape)} to have {w.shape[1] * groups} "
                               f"channels, but got {cin} channels instead")
        nout = w.shape[0]
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
        eff = tuple(d * (k - 1) + 1 for d, k in zip(dil, w.shape[2:]))
        if any(p < e for p, e in zip(padded, eff)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater "
                f"than actual input size")
    else:
        if cin != w.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected "
                               f"input{list(x.shape)} to have {w.shape[0]} channels, but got "
                               f"{cin} channels instead")
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{list(w.shape)}] instead")
        nout = w.shape[1] * groups
        for op, s, d in zip(output_padding, stride, dil):
            if op >= s and op >= d:
                raise RuntimeError(f"output padding must be smaller than either stride or "
                                   f"dilation, but got output_padding={list(output_padding)}"
                                   f", stride={list(stride)}, dilation={list(dil)}")
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != nout):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be "
                           f"1-dimensional with {nout} elements, but got bias of size "
                           f"{list(bias._data.shape)} instead")


def _convolution(input, weight, bias, stride, pads, dil, transposed, output_padding, groups):
    """The shared op behind every conv: batched input, normalised arguments."""
    nd = weight._data.ndim - 2
    _check(input, weight, bias, nd, transposed, groups, stride, dil, pads, output_padding)
    keep = None
    dt = input.dtype
    cdt = compute_dtype(dt)
    x = input._data.astype(cdt, copy=False)
    w = weight._data.astype(cdt, copy=False)
    if not transposed:
        out = _out_size(x.shape[2:], w.shape[2:], stride, dil, pads)
        if _meta.any_meta(input, weight, bias):  # shapes only: nothing to compute
            return wrap(_meta.meta_array((x.shape[0], w.shape[0]) + out, dt.np))
        if x.shape[0] == 0 or 0 in x.shape[1:]:
            r = xp.zeros((x.shape[0], w.shape[0]) + out, cdt)
        else:
            # the forward's columns are kept for the weight gradient (one im2col saved)
            keep = [] if weight._requires_grad and needs_grad(weight) else None
            r = _fwd(x, w, stride, dil, pads, groups, out, keep)
    else:
        size = tuple((i - 1) * s - lo - hi + d * (k - 1) + op + 1 for i, s, (lo, hi), d, k, op in
                     zip(x.shape[2:], stride, pads, dil, w.shape[2:], output_padding))
        if any(s <= 0 for s in size):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}"
                               f"). Calculated output size per channel: "
                               f"({' x '.join(map(str, size))}). Output size is too small")
        if _meta.any_meta(input, weight, bias):
            return wrap(_meta.meta_array((x.shape[0], w.shape[1] * groups) + size, dt.np))
        if x.size == 0:
            r = xp.zeros((x.shape[0], w.shape[1] * groups) + size, cdt)
        else:
            r = _bwd_input(x, w, stride, dil, pads, groups, size)
    if bias is not None:
        r += bias._data.astype(cdt, copy=False).reshape((-1,) + (1,) * nd)
    res = wrap(r if r.dtype == dt.np else r.astype(dt.np))
    if needs_grad(input, weight, bias):
        record(res, ConvolutionBackward0, (input, weight, bias), input=input, weight=weight,
               stride=stride, pads=pads, dilation=dil, transposed=transposed, groups=groups,
               has_bias=bias is not None, cols=keep[0] if keep else None)
    return res


def _weight_grad(inp, out_grad, wshape, stride, pads, dil, groups):
    """d loss / d weight as recorded convolutions: per group, ``inp`` with batch and channels
    swapped, convolved with ``out_grad`` (stride and dilation exchanged), cropped to the
    kernel. Returns (C_out, C_in / groups, *kernel)."""
    from .rearrange import cat
    nd = len(wshape) - 2
    cin_g, cout_g = inp.shape[1] // groups, out_grad.shape[1] // groups
    parts = []
    for g in range(groups):
        x = inp.narrow(1, g * cin_g, cin_g).transpose(0, 1)
        k = out_grad.narrow(1, g * cout_g, cout_g).transpose(0, 1)
        r = _convolution(x, k, None, dil, pads, stride, False, (0,) * nd, 1)
        for d in range(nd):
            r = r.narrow(2 + d, 0, wshape[2 + d])
        parts.append(r.transpose(0, 1))
    return parts[0] if groups == 1 else cat(parts, 0)


class ConvolutionBackward0(Node):
    """Gradients of a (transposed) convolution as GEMMs. Under ``create_graph=True`` they
    are computed with recorded convolutions instead, so they can be differentiated again."""

    def _recorded_grads(self, grad, want):
        x, w = self._saved_input, self._saved_weight
        stride, pads, dil = self._saved_stride, self._saved_pads, self._saved_dilation
        groups, nd = self._saved_groups, w.dim() - 2
        gx = gw = gb = None
        if not self._saved_transposed:
            if want[0]:
                op = tuple(xs - ((gs - 1) * s - lo - hi + d * (k - 1) + 1) for xs, gs, s, (lo, hi),
                           d, k in zip(x.shape[2:], grad.shape[2:], stride, pads, dil,
                                       w.shape[2:]))
                gx = _convolution(grad, w, None, stride, pads, dil, True, op, groups)
            if want[1]:
                gw = _weight_grad(x, grad, w.shape, stride, pads, dil, groups)
        else:
            if want[0]:
                gx = _convolution(grad, w, None, stride, pads, dil, False, (0,) * nd, groups)
                for d in range(nd):
                    gx = gx.narrow(2 + d, 0, x.shape[2 + d])
            if want[1]:
                gw = _weight_grad(grad, x, w.shape, stride, pads, dil, groups)
        if want[2]:
            gb = grad.sum([0] + list(range(2, grad.dim())))
        return gx, gw, gb

    def release_saved(self):
        if self._saved:
            self._saved.pop("cols", None)
        super().release_saved()

    def backward(self, grad):
        x_t, w_t = self._saved_input, self._saved_weight
        want = [self.next_functions[i][0] is not None for i in range(3)]
        if _state.grad_enabled and (grad.requires_grad or x_t.requires_grad or
                                    w_t.requires_grad) and grad.numel() and x_t.numel():
            return self._recorded_grads(grad, want)
        dt = x_t.dtype
        cdt = compute_dtype(dt)
        g = grad._data.astype(cdt, copy=False)
        x = x_t._data.astype(cdt, copy=False)
        w = w_t._data.astype(cdt, copy=False)
        stride, pads, dil = self._saved_stride, self._saved_pads, self._saved_dilation
        groups = self._saved_groups
        gx = gw = gb = None
        empty = g.size == 0 or x.size == 0
        if not self._saved_transposed:
            if want[0]:
                gx = xp.zeros(x.shape, cdt) if empty else \
                    _bwd_input(g, w, stride, dil, pads, groups, x.shape[2:])
            if want[1]:
                gw = xp.zeros(w.shape, cdt) if empty else \
                    _bwd_weight(x, g, w.shape, stride, dil, pads, groups, self._saved_cols)
        else:
            if want[0]:
                gx = xp.zeros(x.shape, cdt) if empty else \
                    _fwd(g, w, stride, dil, pads, groups, x.shape[2:])
            if want[1]:
                gw = xp.zeros(w.shape, cdt) if empty else \
                    _bwd_weight(g, x, w.shape, stride, dil, pads, groups)
        if want[2]:
            gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
        return tuple(None if a is None else wrap(a.astype(dt.np, copy=False))
                     for a in (gx, gw, gb))


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution``: the general (transposed) N-d convolution on batched input."""
    nd = weight.dim() - 2
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional "
                           f"weight {list(weight.shape)}, but got {input.dim()}-dimensional "
                           f"input of size {list(input.shape)} instead")
    pads = tuple((p, p) for p in _tuple(padding, nd, "padding"))
    return _convolution(input, weight, bias, _tuple(stride, nd, "stride"), pads,
                        _tuple(dilation, nd, "dilation"), bool(transposed),
                        _tuple(output_padding, nd, "output_padding"), groups)


def _batched(input, nd, name):
    """(batched input, whether it was unbatched), with torch's error for wrong ranks."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}() argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    d = input.dim()
    if d == nd + 2:
        return input, False
    if d == nd + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                       f"{name}, but got input of size: {list(input.shape)}")


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    x, unbatched = _batched(input, nd, name)
    dil = _tuple(dilation, nd, "dilation")
    st = _tuple(stride, nd, "stride")
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in st):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            if weight.dim() != nd + 2:
                raise RuntimeError(f"Expected {nd + 2}-dimensional weight for {name}, got "
                                   f"{list(weight.shape)}")
            k = weight.shape[2:]
            pads = _same_pads(k, dil)
            if any(lo != hi for lo, hi in pads):
                warn_user("Using padding='same' with even kernel lengths and odd dilation "
                          "may require a zero-padded copy of the input be created",
                          UserWarning)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = tuple((p, p) for p in _tuple(padding, nd, "padding"))
    r = _convolution(x, weight, bias, st, pads, dil, False, (0,) * nd, groups)
    return r.squeeze(0) if unbatched else r


def _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    x, unbatched = _batched(input, nd, name)
    pads = tuple((p, p) for p in _tuple(padding, nd, "padding"))
    r = _convolution(x, weight, bias, _tuple(stride, nd, "stride"), pads,
                     _tuple(dilation, nd, "dilation"), True,
                     _tuple(output_padding, nd, "output_padding"), groups)
    return r.squeeze(0) if unbatched else r


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``(N, C, L)`` or ``(C, L)`` input."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C, H, W)`` or ``(C, H, W)`` input."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution (the gradient of conv1d w.r.t. its input)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                   "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution (the gradient of conv2d w.r.t. its input)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                   "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution (the gradient of conv3d w.r.t. its input)."""
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                   "conv_transpose3d")


