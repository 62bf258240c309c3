"""Winograd F(2x2, 3x3): 3x3 stride-1 convolutions with 2.25x fewer multiplies than im2col.

The math: a 2x2 output tile ``Y`` of a 3x3 convolution of a 4x4 input tile ``d`` (tiles
overlap by 2) by the kernel ``g`` is ``Y = A^T [(G g G^T) * (B^T d B)] A`` with ``*``
elementwise, so 16 multiplies per tile and channel pair instead of 36. Summed over input
channels, each of the 16 positions of the 4x4 transformed tile is one GEMM
``(tiles, C) @ (C, O)``. ``B`` and ``A`` hold only 0 and +-1, so the transforms are additions.

The transforms run as whole-array NumPy passes over a spatial-major ``(H, W, N*C)`` layout,
where a tile tap (every second row or column from some offset) is a strided view with
contiguous runs of ``N*C`` elements; in NCHW those runs would be a couple of elements long.
The gradients follow from the same algebra: d loss / d(G g G^T) is a GEMM of the transformed
input with ``A dY A^T``; the input gradient is itself a 3x3 stride-1 convolution, so the
caller runs it through :func:`conv3x3`.

Rounding: the transforms add 4 (input) and 9 (output) terms and scale by 1/2 and 1/4
(exact), so the error stays at the level of the direct sum: in float32, the same as torch's
against a float64 reference (docs/performance.md, tests/core/test_conv_paths.py).
"""

from __future__ import annotations

import math

from ._common import xp

# rows of B^T (input tile), G (kernel), A^T (output tile)
_BT = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
_G = ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1))
_AT = ((1, 1, 1, 0), (0, 1, -1, -1))
_A = tuple(zip(*_AT))
_MIN_CHANNELS = 16
_MIN_MACS = 10_000_000     # of the im2col GEMM; about break-even (docs/performance.md)
_ADD = {1: xp.add, -1: xp.subtract}


def applies(dtype, wshape, stride, dil, groups, positions):
    """Whether a plain convolution by a weight of shape ``wshape`` with ``positions``
    (batch times output size) outputs per channel takes the Winograd path: 3x3, stride 1,
    dilation 1, one group, float, and enough channels and work that the saved GEMM time
    beats the transforms' passes and their ~0.1 ms of Python per call."""
    return (len(wshape) == 4 and tuple(wshape[2:]) == (3, 3) and stride == (1, 1)
            and dil == (1, 1) and groups == 1 and dtype in (xp.float32, xp.float64)
            and min(wshape[:2]) >= _MIN_CHANNELS
            and 9 * wshape[0] * wshape[1] * positions >= _MIN_MACS)


def _tiles(out):
    """Tiles per axis covering an output of size ``out`` (2 outputs per tile)."""
    return tuple((o + 1) // 2 for o in out)


def _tap_sum(mat, taps, out):
    """``out[i] = sum_k mat[i][k] * taps[k]`` for a 0/+-1 matrix, one ufunc per term (a
    positive term leads, so the first two share one)."""
    for row, dst in zip(mat, out):
        terms = sorted(((c, t) for c, t in zip(row, taps) if c), key=lambda ct: -ct[0])
        (c0, t0), rest = terms[0], terms[1:]
        if c0 < 0:
            xp.negative(t0, out=dst)
        elif not rest:
            xp.copyto(dst, t0)
        else:
            (c1, t1), rest = rest[0], rest[1:]
            _ADD[c1](t0, t1, out=dst)
        for c, t in rest:
            _ADD[c](dst, t, out=dst)
    return out


def _block(stride):
    """Block length of a transposing copy whose inner loop runs along the destination and
    reads source rows ``stride`` bytes apart: 16-64 rows, at most 8 of them in the same L1
    cache set (addresses 4 KiB apart share one)."""
    return min(64, max(16, 8 * 4096 // math.gcd(stride, 4096)))


def _spatial_major(x, pads, shape):
    """``(N, C, H, W)`` -> zero-padded ``(*shape, N*C)``, the input placed at the low pads
    (negative pads crop); blocked over channels so the transposing copy stays in cache."""
    (top, bottom), (left, right) = pads
    h, w = x.shape[2:]
    x = x[:, :, max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    n, c, h, w = x.shape
    buf = xp.zeros(tuple(shape) + (n * c,), x.dtype)
    dst = buf[max(top, 0):max(top, 0) + h, max(left, 0):max(left, 0) + w]
    src = x.reshape(n * c, h, w).transpose(1, 2, 0)
    step = _block(h * w * x.itemsize)
    for i in range(0, n * c, step):
        dst[:, :, i:i + step] = src[:, :, i:i + step]
    return buf


def _channels_major(y, n, size):
    """``(H', W', N*C)`` -> ``(N, C, *size)`` (cropped), copied in column blocks."""
    h, w = size
    out = xp.empty((y.shape[2], h, w), y.dtype)
    step = _block(y.shape[2] * y.itemsize)
    for r in range(h):
        for j in range(0, w, step):
            out[:, r, j:j + step] = y[r, j:min(j + step, w)].T
    return out.reshape((n, -1, h, w))


def _input_transform(xt, tiles):
    """``B^T d B`` of every 4x4 tile of ``xt (2*th+2, 2*tw+2, M)`` -> ``(16, th*tw, M)``."""
    th, tw = tiles
    m = xt.shape[2]
    cols = xp.empty((4, xt.shape[0], tw, m), xt.dtype)
    _tap_sum(_BT, [xt[:, k:k + 2 * tw - 1:2] for k in range(4)], cols)
    v = xp.empty((4, 4, th, tw, m), xt.dtype)
    for q in range(4):
        _tap_sum(_BT, [cols[q, k:k + 2 * th - 1:2] for k in range(4)], v[:, q])
    return v.reshape(16, th * tw, m)


def _output_transform(mt, tiles):
    """``A^T m A`` of every tile of ``mt (16, th*tw, M)`` -> ``(2*th, 2*tw, M)``."""
    th, tw = tiles
    m = mt.reshape(4, 4, th, tw, -1)
    rows = xp.empty((2,) + m.shape[1:], m.dtype)
    _tap_sum(_AT, m, rows)
    y = xp.empty((th, 2, tw, 2, m.shape[-1]), m.dtype)
    for i in range(2):
        _tap_sum(_AT, rows[i], [y[:, i, :, j] for j in range(2)])
    return y.reshape(2 * th, 2 * tw, -1)


def _output_grad_transform(gt, tiles):
    """``A dY A^T`` of every 2x2 tile of ``gt (2*th, 2*tw, M)`` -> ``(16, th*tw, M)``
    (the adjoint of :func:`_output_transform`)."""
    th, tw = tiles
    g = gt.reshape(th, 2, tw, 2, -1)
    rows = xp.empty((4, th, tw, 2, g.shape[-1]), g.dtype)
    _tap_sum(_A, [g[:, i] for i in range(2)], rows)
    d = xp.empty((4, 4, th, tw, g.shape[-1]), g.dtype)
    for p in range(4):
        _tap_sum(_A, [rows[p, :, :, j] for j in range(2)], d[p])
    return d.reshape(16, th * tw, -1)


def _kernel_transform(dtype):
    """``(16, 9)`` matrix taking a flattened 3x3 kernel ``g`` to the flattened ``G g G^T``."""
    g = xp.asarray(_G, dtype=dtype)
    return xp.kron(g, g)


def conv3x3(x, w, pads, keep=None):
    """Convolution of ``x (N, C, H, W)`` by ``w (O, C, 3, 3)`` with ``pads`` ((top, bottom),
    (left, right)), stride 1 -> ``(N, O, H', W')``. ``keep`` (a list) receives the
    transformed input, which :func:`weight_grad` reuses."""
    n, c = x.shape[:2]
    o = w.shape[0]
    size = tuple(s + lo + hi - 2 for s, (lo, hi) in zip(x.shape[2:], pads))
    tiles = _tiles(size)
    xt = _spatial_major(x, pads, (2 * tiles[0] + 2, 2 * tiles[1] + 2))
    v = _input_transform(xt, tiles).reshape(16, -1, c)           # (16, T*N, C)
    if keep is not None:
        keep.append(v)
    u = (_kernel_transform(x.dtype) @ w.reshape(o * c, 9).T).reshape(16, o, c)
    mt = xp.matmul(v, u.swapaxes(1, 2)).reshape(16, -1, n * o)   # (16, T, N*O)
    return _channels_major(_output_transform(mt, tiles), n, size)


def weight_grad(x, gy, pads, kept=None):
    """Gradient w.r.t. the ``(O, C, 3, 3)`` weight of :func:`conv3x3` (``kept``: its
    transformed input)."""
    n, o = gy.shape[:2]
    tiles = _tiles(gy.shape[2:])
    c = x.shape[1]
    if kept is None:
        xt = _spatial_major(x, pads, (2 * tiles[0] + 2, 2 * tiles[1] + 2))
        kept = _input_transform(xt, tiles).reshape(16, -1, c)
    gt = _spatial_major(gy, ((0, 0), (0, 0)), (2 * tiles[0], 2 * tiles[1]))
    dm = _output_grad_transform(gt, tiles).reshape(16, -1, o)    # (16, T*N, O)
    du = xp.matmul(dm.swapaxes(1, 2), kept)                      # (16, O, C)
    return (du.reshape(16, o * c).T @ _kernel_transform(gy.dtype)).reshape(o, c, 3, 3)
