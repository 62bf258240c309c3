"""Pooling kernels: max/avg pooling over sliding windows, adaptive pooling, max_unpool.

Windows are ``as_strided`` views of the (padded) input; a reduction over the
window axes gives the result in one NumPy call. Max pooling keeps flat indices
into each channel's spatial input (torch's ``indices``) and scatters gradients
back with them; average pooling's gradient is col2im by kernel offsets only.
Adaptive average pooling is a per-dim averaging matrix (a GEMM per spatial dim).
1-d pools run the 2-d kernels on an unsqueezed input, as torch does.
"""

from __future__ import annotations

import itertools
import math

from ..autograd.grad_mode import _state
from ._common import (
    Node,
    Tensor,
    compute_dtype,
    finish,
    needs_grad,
    not_implemented_for,
    record,
    wrap,
    xp,
)

# torch's top-level names; the others (torch._C._nn's) are used by nn.functional
__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"]

_as_strided = xp.lib.stride_tricks.as_strided
_int64 = xp.dtype(xp.int64)


def _tuple(v, nd, name, allow_empty=False):
    if v is None or (allow_empty and isinstance(v, (tuple, list)) and len(v) == 0):
        return None
    if isinstance(v, int):
        return (int(v),) * nd
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of {nd} ints")
    return v


def _out_len(size, k, s, p, d, ceil):
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def _geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    """Normalised (k, s, p, d, out) with torch's checks; ``x`` is the batched array."""
    k = _tuple(kernel_size, nd, "kernel_size")
    s = _tuple(stride, nd, "stride", allow_empty=True) or k
    p = _tuple(padding, nd, "padding")
    d = _tuple(dilation, nd, "dilation")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"kernel_size={list(k)}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride={list(s)}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"dilation={list(d)}")
    for pi, ki, di in zip(p, k, d):
        if pi < 0 or pi > (di * (ki - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    size = x.shape[2:]
    out = tuple(_out_len(*a, ceil_mode) for a in zip(size, k, s, p, d))
    if any(o <= 0 for o in out):
        shape = "x".join(map(str, x.shape[1:]))
        oshape = "x".join(map(str, (x.shape[1],) + out))
        raise RuntimeError(f"Given input size: ({shape}). Calculated output size: ({oshape}). "
                           f"Output size is too small")
    return k, s, p, d, out


def _padded_windows(x, k, s, p, d, out, fill):
    """Windows ``(N, C, *out, *k)`` of ``x`` padded with ``fill`` (enough for ceil_mode)."""
    nd = len(k)
    pads = [(0, 0), (0, 0)]
    for i in range(nd):
        need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        pads.append((p[i], max(0, need - x.shape[2 + i] - p[i])))
    if any(lo or hi for lo, hi in pads):
        x = xp.pad(x, pads, constant_values=fill)
    st = x.strides
    shape = x.shape[:2] + tuple(out) + tuple(k)
    strides = st[:2] + tuple(st[2 + i] * s[i] for i in range(nd)) + \
        tuple(st[2 + i] * d[i] for i in range(nd))
    return _as_strided(x, shape, strides, writeable=False), pads


def _batch(input, nd, name):
    """The input's array with a batch axis, and whether one was added."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = input._data
    if a.ndim == nd + 2:
        batched = True
    elif a.ndim == nd + 1:
        batched = False
        a = a[None]
    else:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           f"input")
    if any(v == 0 for v in a.shape[1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D input with non-zero sizes for "
                           f"non-batch dimensions, but got input of size {list(input.shape)}")
    return a, batched


def _unbatch(arr, batched):
    return arr if batched else arr[0]


# ----------------------------------------------------------------------------- max pooling

def _lowest(dt):
    if dt.kind == "f" or dt.kind == "V":
        return -xp.inf
    if dt == xp.bool_:
        return False
    return xp.iinfo(dt).min


def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    a, batched = _batch(input, nd, name)
    if a.dtype == xp.bool_:
        raise not_implemented_for(name, input.dtype)
    k, s, p, d, out = _geometry(a, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    c = compute_dtype(input.dtype)
    work = a.astype(c, copy=False)
    win, pads = _padded_windows(work, k, s, p, d, out, _lowest(work.dtype))
    # running max over the kernel offsets (prod(k) strided passes, no window copy, no
    # masked copies): like torch, a later element takes the index only if greater, or
    # NaN; am is the window position, blended arithmetically (wraps harmlessly in uint8)
    offs = list(itertools.product(*(range(kk) for kk in k)))
    vals = win[(Ellipsis,) + offs[0]].copy()
    small = len(offs) < 256
    am = xp.zeros(vals.shape, xp.uint8 if small else _int64)
    isfloat = work.dtype.kind == "f"
    for j, off in enumerate(offs[1:], 1):
        v = win[(Ellipsis,) + off]
        m = v > vals
        if isfloat:
            m |= v != v
        am += m.view(xp.uint8) * ((xp.uint8(j) if small else j) - am)
        xp.maximum(vals, v, out=vals)
    # window position -> flat index into the channel's (unpadded) spatial input
    size = a.shape[2:]
    instride = [math.prod(size[i + 1:]) for i in range(nd)]
    delta = xp.array([sum(o * d[i] * instride[i] for i, o in enumerate(off)) for off in offs],
                     _int64)
    idx = delta.take(am)
    for i in range(nd):
        shape = [1] * am.ndim
        shape[2 + i] = out[i]
        idx += ((xp.arange(out[i]) * s[i] - p[i]) * instride[i]).reshape(shape)
    r = wrap(_unbatch(vals.astype(input.dtype.np, copy=False), batched))
    ind = wrap(_unbatch(idx, batched))
    if needs_grad(input):
        node = MaxPool2DWithIndicesBackward0 if nd == 2 else MaxPool3DWithIndicesBackward0
        padded = tuple(a.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(pads[2:]))
        record(r, node, (input,), self=input, indices=ind, nd=nd,
               geom=(am, k, s, d, out, padded, p, batched))
    return r, ind


def _max_pool_grad(grad, geom, shape):
    """Max pooling's input gradient without a graph: one masked strided add per kernel
    offset into a padded buffer (no scatter), then the padding cropped off."""
    am, k, s, d, out, padded, p, batched = geom
    nd = len(k)
    g = grad._data.astype(compute_dtype(grad.dtype), copy=False)
    if not batched:
        g = g[None]
    buf = xp.zeros(g.shape[:2] + padded, g.dtype)
    for j, off in enumerate(itertools.product(*(range(kk) for kk in k))):
        sl = tuple(slice(off[i] * d[i], off[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i])
                   for i in range(nd))
        buf[(slice(None), slice(None)) + sl] += g * (am == j)
    r = buf[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + shape[-nd + i])
                                               for i in range(nd))]
    return xp.ascontiguousarray(r if batched else r[0])


def _scatter_back(grad, inp, indices, nd):
    """Gradient of a max selection: add ``grad`` into zeros at flat spatial ``indices``."""
    lead = inp.shape[:-nd]
    g = grad.reshape(lead + (-1,))
    z = grad.new_zeros(lead + (math.prod(inp.shape[-nd:]),))
    return z.scatter_add(-1, indices.reshape(lead + (-1,)), g).reshape(inp.shape)


class MaxPool2DWithIndicesBackward0(Node):
    def backward(self, grad):
        geom = self._saved.get("geom")
        if geom is not None and not _state.grad_enabled:
            shape = self._saved_self.shape
            return (wrap(_max_pool_grad(grad, geom, shape).astype(grad.dtype.np, copy=False)),)
        return (_scatter_back(grad, self._saved_self, self._saved_indices, self._saved_nd),)


class MaxPool3DWithIndicesBackward0(MaxPool2DWithIndicesBackward0):
    pass


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """2-D max pooling returning ``(values, indices)``."""
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode,
                     "max_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """3-D max pooling returning ``(values, indices)``."""
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode,
                     "max_pool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """1-D max pooling returning ``(values, indices)`` (the 2-D kernel on a height-1 input)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    one = lambda v: v if v is None or isinstance(v, int) else (tuple(v) or None)  # noqa: E731
    k, s = one(kernel_size), one(stride)
    s = (1, s if isinstance(s, int) else s[0]) if s is not None else None
    k = (1, k if isinstance(k, int) else k[0])
    p = padding if isinstance(padding, int) else padding[0]
    d = dilation if isinstance(dilation, int) else dilation[0]
    v, i = _max_pool(input.unsqueeze(-2), 2, k, s, (0, p), (1, d), ceil_mode, "max_pool1d")
    return v.squeeze(-2), i.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    r = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    r = _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    return r if return_indices else r[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    r = _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d")
    return r if return_indices else r[0]


# ----------------------------------------------------------------------------- avg pooling

def _avg_divisor(size, k, s, p, out, count_include_pad):
    """Per-dim divisors (torch's window clipping), multiplied out to ``out``'s shape."""
    div = None
    for n, kk, ss, pp, oo in zip(size, k, s, p, out):
        start = xp.arange(oo) * ss - pp
        end = xp.minimum(start + kk, n + pp)
        if count_include_pad:
            v = end - start
        else:
            v = xp.minimum(end, n) - xp.maximum(start, 0)
        div = v if div is None else xp.multiply.outer(div, v)
    return div


def _avg_pool(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, name):
    a, batched = _batch(input, nd, name)
    dt = input.dtype
    if dt._category < 2 and dt.np.kind in "ub" or dt.is_complex:
        raise not_implemented_for(name, dt)
    k, s, p, d, out = _geometry(a, nd, kernel_size, stride, padding, 1, ceil_mode, name)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    c = compute_dtype(dt)
    work = a.astype(c, copy=False)
    win, _ = _padded_windows(work, k, s, p, d, out, 0)
    total = win.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)))
    if divisor_override is not None:
        div = divisor_override
    else:
        div = _avg_divisor(a.shape[2:], k, s, p, out, count_include_pad)
    if c.kind in "iu":
        r = xp.trunc(total / div).astype(c) if not isinstance(div, int) else \
            xp.trunc(total / div).astype(c)
    else:
        r = (total / xp.asarray(div, dtype=c)).astype(c, copy=False)
    res = wrap(_unbatch(r.astype(dt.np, copy=False), batched))
    if needs_grad(input):
        node = AvgPool2DBackward0 if nd == 2 else AvgPool3DBackward0
        record(res, node, (input,), shape=input.shape, geom=(k, s, p, out), div=div,
               batched=batched)
    return res


class AvgPool2DBackward0(Node):
    """Spread each output's gradient evenly over its window (col2im by kernel offsets)."""

    def backward(self, grad):
        k, s, p, out = self._saved_geom
        nd = len(k)
        shape = tuple(self._saved_shape)
        g = grad._data.astype(compute_dtype(grad.dtype), copy=False)
        if not self._saved_batched:
            g = g[None]
            shape = (1,) + shape
        g = g / xp.asarray(self._saved_div, dtype=g.dtype)
        padded = [shape[2 + i] + 2 * p[i] for i in range(nd)]
        for i in range(nd):
            padded[i] = max(padded[i], (out[i] - 1) * s[i] + k[i])
        buf = xp.zeros(shape[:2] + tuple(padded), g.dtype)
        for off in itertools.product(*(range(kk) for kk in k)):
            sl = tuple(slice(off[i], off[i] + s[i] * (out[i] - 1) + 1, s[i]) for i in range(nd))
            buf[(slice(None), slice(None)) + sl] += g
        r = buf[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + shape[2 + i])
                                                   for i in range(nd))]
        if not self._saved_batched:
            r = r[0]
        result = wrap(xp.ascontiguousarray(r).astype(grad.dtype.np, copy=False))
        if _state.grad_enabled and grad.requires_grad:
            # the spreading is linear in grad; its adjoint is the pooling itself
            record(result, AvgPool2DBackwardBackward0 if nd == 2 else
                   AvgPool3DBackwardBackward0, (grad,), geom=self._saved_geom,
                   div=self._saved_div, batched=self._saved_batched)
        return (result,)


class AvgPool3DBackward0(AvgPool2DBackward0):
    pass


class AvgPool2DBackwardBackward0(Node):
    """Adjoint of the window spreading: average-pool the incoming gradient (linear, so
    this is exact; it is not differentiated a third time)."""

    def backward(self, h):
        k, s, p, out = self._saved_geom
        nd = len(k)
        a = h._data.astype(compute_dtype(h.dtype), copy=False)
        if not self._saved_batched:
            a = a[None]
        win, _ = _padded_windows(a, k, s, p, (1,) * nd, out, 0)
        total = win.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)))
        r = total / xp.asarray(self._saved_div, dtype=total.dtype)
        if not self._saved_batched:
            r = r[0]
        return wrap(r.astype(h.dtype.np, copy=False))


class AvgPool3DBackwardBackward0(AvgPool2DBackwardBackward0):
    pass


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` (the 2-D kernel, height 1)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    first = lambda v: v if isinstance(v, int) else v[0]  # noqa: E731
    k = first(kernel_size)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else first(stride)
    r = _avg_pool(input.unsqueeze(-2), 2, (1, k), (1, s), (0, first(padding)), ceil_mode,
                  count_include_pad, None, "avg_pool2d")
    return r.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    return finish(_avg_pool(input, 2, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override, "avg_pool2d"), out)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, out=None):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return finish(_avg_pool(input, 3, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override, "avg_pool3d"), out)


# ----------------------------------------------------------------------------- adaptive

def _adaptive_size(output_size, nd, size):
    if isinstance(output_size, int):
        out = (output_size,) * nd
    else:
        out = tuple(output_size)
        if len(out) == 1 and nd > 1:
            out = out * nd
        if len(out) != nd:
            raise RuntimeError(f"adaptive pool: output_size must be {nd}")
    return tuple(size[i] if o is None else int(o) for i, o in enumerate(out))


def _bounds(n, o):
    i = xp.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _avg_matrix(n, o, dtype):
    start, end = _bounds(n, o)
    j = xp.arange(n)
    m = ((j >= start[:, None]) & (j < end[:, None])).astype(dtype)
    return m / (end - start).astype(dtype)[:, None]


def _apply_matrices(a, mats, nd):
    """Multiply each of the last ``nd`` axes of ``a`` by its ``(out, in)`` matrix."""
    for i, m in enumerate(mats):
        ax = a.ndim - nd + i
        a = xp.moveaxis(xp.matmul(xp.moveaxis(a, ax, -1), m.T), -1, ax)
    return xp.ascontiguousarray(a)


def _adaptive_avg(input, nd, output_size, name):
    a, batched = _batch(input, nd, name)
    dt = input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise not_implemented_for(name, dt)
    out = _adaptive_size(output_size, nd, a.shape[2:])
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to "
                           f"0 but received {list(out)}")
    c = compute_dtype(dt)
    mats = [_avg_matrix(n, o, c) for n, o in zip(a.shape[2:], out)]
    r = _apply_matrices(a.astype(c, copy=False), mats, nd)
    res = wrap(_unbatch(r.astype(dt.np, copy=False), batched))
    if needs_grad(input):
        node = AdaptiveAvgPool2DBackward0 if nd == 2 else AdaptiveAvgPool3DBackward0
        record(res, node, (input,), mats=mats, nd=nd)
    return res


class AdaptiveAvgPool2DBackward0(Node):
    """The transposed averaging matrices, as glasstorch matmuls (twice differentiable)."""

    def backward(self, grad):
        nd = self._saved_nd
        g = grad
        for i, m in enumerate(self._saved_mats):
            ax = g.dim() - nd + i
            g = g.movedim(ax, -1).matmul(wrap(m.astype(grad.dtype.np))).movedim(-1, ax)
        return (g.contiguous(),)


class AdaptiveAvgPool3DBackward0(AdaptiveAvgPool2DBackward0):
    pass


def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1-D average pooling to length ``output_size``."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{list(input.shape)}")
    o = output_size if isinstance(output_size, int) else output_size[0]
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-D average pooling to ``output_size`` (None keeps that dim's size)."""
    if isinstance(input, Tensor) and input.dim() in (3, 4):
        out = _adaptive_size(output_size, 2, input.shape[-2:])
        if out == (1, 1) and input._data.size:
            return input.mean((-2, -1), keepdim=True)
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Adaptive 3-D average pooling to ``output_size``."""
    if isinstance(input, Tensor) and input.dim() in (4, 5):
        out = _adaptive_size(output_size, 3, input.shape[-3:])
        if out == (1, 1, 1) and input._data.size:
            return input.mean((-3, -2, -1), keepdim=True)
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


def _adaptive_max(input, nd, output_size, name):
    a, batched = _batch(input, nd, name)
    dt = input.dtype
    if not dt.is_floating_point:
        raise not_implemented_for(name, dt)
    out = _adaptive_size(output_size, nd, a.shape[2:])
    c = compute_dtype(dt)
    work = a.astype(c, copy=False)
    # windows padded to the longest one by repeating their last index
    idxs = []
    for n, o in zip(a.shape[2:], out):
        start, end = _bounds(n, o)
        ln = int((end - start).max()) if o else 1
        idxs.append(xp.minimum(start[:, None] + xp.arange(ln), end[:, None] - 1))
    key = [slice(None), slice(None)]
    for i, ix in enumerate(idxs):
        shape = [1] * (2 * nd)
        shape[2 * i], shape[2 * i + 1] = ix.shape
        key.append(ix.reshape(shape))
    g = work[tuple(key)]                       # (N, C, o0, l0, o1, l1, ...)
    order = (0, 1) + tuple(2 + 2 * i for i in range(nd)) + tuple(3 + 2 * i for i in range(nd))
    g = g.transpose(order)
    flat = g.reshape(g.shape[:2 + nd] + (-1,))
    am = flat.argmax(axis=-1)
    vals = xp.take_along_axis(flat, am[..., None], axis=-1)[..., 0]
    lens = [ix.shape[1] for ix in idxs]
    kidx = xp.unravel_index(am, lens)
    idx = xp.zeros(am.shape, _int64)
    for i, ix in enumerate(idxs):
        shape = [1] * am.ndim
        shape[2 + i] = out[i]
        pos = ix[xp.arange(out[i]).reshape(shape), kidx[i]]
        idx = idx * a.shape[2 + i] + pos
    r = wrap(_unbatch(vals.astype(dt.np, copy=False), batched))
    ind = wrap(_unbatch(idx, batched))
    if needs_grad(input):
        node = AdaptiveMaxPool2DBackward0 if nd == 2 else AdaptiveMaxPool3DBackward0
        record(r, node, (input,), self=input, indices=ind, nd=nd)
    return r, ind


class AdaptiveMaxPool2DBackward0(MaxPool2DWithIndicesBackward0):
    pass


class AdaptiveMaxPool3DBackward0(MaxPool2DWithIndicesBackward0):
    pass


def adaptive_max_pool1d(input, output_size):
    """Adaptive 1-D max pooling to length ``output_size``: ``(values, indices)``."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{list(input.shape)}")
    o = output_size if isinstance(output_size, int) else output_size[0]
    v, i = _adaptive_max(input.unsqueeze(-2), 2, (1, o), "adaptive_max_pool2d")
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling to ``output_size``."""
    r = _adaptive_max(input, 2, output_size, "adaptive_max_pool2d")
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling to ``output_size``."""
    r = _adaptive_max(input, 3, output_size, "adaptive_max_pool3d")
    return r if return_indices else r[0]


# ----------------------------------------------------------------------------- unpool

def _max_unpool(input, indices, output_size, nd, name):
    if indices.dtype.np != _int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype}")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    a = input._data
    lead = a.shape[:-nd]
    n = math.prod(output_size)
    idx = indices._data.reshape(lead + (-1,))
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))}")
    r = xp.zeros(lead + (n,), a.dtype)
    xp.put_along_axis(r, idx, a.reshape(lead + (-1,)), axis=-1)
    res = wrap(r.reshape(lead + tuple(output_size)))
    if needs_grad(input):
        node = MaxUnpool2DBackward0 if nd == 2 else MaxUnpool3DBackward0
        record(res, node, (input,), indices=indices, nd=nd)
    return res


class MaxUnpool2DBackward0(Node):
    def backward(self, grad):
        nd = self._saved_nd
        ind = self._saved_indices
        lead = tuple(grad.shape[:-nd])
        g = grad.reshape(lead + (-1,)).gather(-1, ind.reshape(lead + (-1,)))
        return (g.reshape(ind.shape),)


class MaxUnpool3DBackward0(MaxUnpool2DBackward0):
    pass


def max_unpool2d(input, indices, output_size):
    """Place ``input`` at flat spatial ``indices`` of zeros of spatial size ``output_size``."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                           f"tensor with {input.dim()} dimensions.")
    return _max_unpool(input, indices, tuple(output_size)[-2:], 2, "max_unpool2d")


def max_unpool3d(input, indices, output_size, stride=None, padding=None):
    """3-D version of :func:`max_unpool2d`."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a "
                           f"tensor with {input.dim()} dimensions.")
    return _max_unpool(input, indices, tuple(output_size)[-3:], 3, "max_unpool3d")


# ----------------------------------------------------------------------------- fractional

def _fractional_starts(samples, size, out, k):
    """Window starts along one dim for each (batch, plane) sample u in [0, 1): with
    alpha = (size - k) / (out - 1), start i is floor((i + u) alpha) - floor(u alpha), and the
    last window ends at the input's end. Computed in the input's dtype, as torch does."""
    t = samples.dtype.type
    starts = xp.empty(samples.shape + (out,), _int64)
    starts[..., -1] = size - k
    if out > 1:
        alpha = t(size - k) / t(out - 1)
        i = xp.arange(out - 1).astype(samples.dtype)
        u = samples[..., None]
        starts[..., :-1] = ((i + u) * alpha).astype(_int64) - (u * alpha).astype(_int64)
    return starts


def _fractional_max_pool(input, nd, kernel_size, output_size, random_samples):
    name = f"fractional_max_pool{nd}d"
    a, batched = _batch(input, nd, name)
    dt = input.dtype
    if not dt.is_floating_point:
        raise not_implemented_for(name + "_out_frame", dt)
    k = _tuple(kernel_size, nd, "kernel_size")
    out = _tuple(output_size, nd, "output_size")
    if random_samples.dtype is not dt:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    u = random_samples._data
    if u.ndim != 3 or u.shape[0] < a.shape[0] or u.shape[1] != a.shape[1] or u.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples to be of shape ({a.shape[0]}, "
                           f"{a.shape[1]}, {nd}), but got {list(u.shape)}")
    sizes = a.shape[2:]
    # torch's checks: 2-d height then width, windows may reach the end; 3-d time, width,
    # height, and the last window must stop short of the end
    dims = ((0, "height"), (1, "width")) if nd == 2 else ((0, "time"), (2, "width"),
                                                          (1, "height"))
    for i, dim in dims:
        if out[i] + k[i] - 1 > sizes[i] - (nd == 3):
            raise RuntimeError(f"{name}{'_out' if nd == 3 else ''}(): pool {dim} {k[i]} too "
                               f"large relative to input {dim} {sizes[i]}")
    # which sample drives which dim: 2-d's are (width, height), 3-d's (time, height, width)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    work = a.astype(compute_dtype(dt), copy=False)
    samples = u[:a.shape[0]]
    n_, c_ = a.shape[:2]
    key = [xp.arange(n_).reshape((n_, 1) + (1,) * 2 * nd),
           xp.arange(c_).reshape((1, c_) + (1,) * 2 * nd)]
    pos = []
    for i in range(nd):
        s = _fractional_starts(samples[..., order[i]], sizes[i], out[i], k[i])
        p = s[..., :, None] + xp.arange(k[i])          # (N, C, out_i, k_i)
        shape = [n_, c_] + [1] * 2 * nd
        shape[2 + i], shape[2 + nd + i] = out[i], k[i]
        pos.append(p.reshape(shape))
    key += pos
    win = work[tuple(key)]                              # (N, C, out..., k...)
    flat = win.reshape(win.shape[:2 + nd] + (-1,))
    am = flat.argmax(axis=-1)
    vals = xp.take_along_axis(flat, am[..., None], axis=-1)[..., 0]
    kidx = xp.unravel_index(am, k)
    idx = xp.zeros(am.shape, _int64)
    for i in range(nd):
        start = xp.broadcast_to(pos[i][(slice(None),) * (2 + nd) + (0,) * nd], am.shape)
        idx = idx * sizes[i] + start + kidx[i]
    r = wrap(_unbatch(vals.astype(dt.np, copy=False), batched))
    ind = wrap(_unbatch(idx, batched))
    if needs_grad(input):
        node = FractionalMaxPool2DBackward0 if nd == 2 else FractionalMaxPool3DBackward0
        record(r, node, (input,), self=input, indices=ind, nd=nd)
    return r, ind


class FractionalMaxPool2DBackward0(MaxPool2DWithIndicesBackward0):
    pass


class FractionalMaxPool3DBackward0(MaxPool2DWithIndicesBackward0):
    pass


def fractional_max_pool2d(input, kernel_size, output_size, random_samples):
    """torch._C._nn.fractional_max_pool2d: ``(values, indices)`` for the given samples."""
    return _fractional_max_pool(input, 2, kernel_size, output_size, random_samples)


def fractional_max_pool3d(input, kernel_size, output_size, random_samples):
    """torch._C._nn.fractional_max_pool3d: ``(values, indices)`` for the given samples."""
    return _fractional_max_pool(input, 3, kernel_size, output_size, random_samples)
