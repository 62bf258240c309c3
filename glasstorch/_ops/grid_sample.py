"""grid_sampler: sample an input at normalised grid locations (``F.grid_sample``).

Every output location reads a few taps per spatial dim (1 nearest, 2 linear,
4 cubic) with per-dim weights; value = sum over tap combinations of the weight
product times the input there. The backward scatters the output gradient to
the taps (input gradient) and differentiates the weights (grid gradient).
"""

from __future__ import annotations

import itertools

from .._core import dtype as _dt
from ._common import Node, compute_dtype, needs_grad, record, wrap, xp
from ._rounding import fma

__all__ = ["grid_sampler"]

_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}
_CUBIC_A = -0.75


def _unnormalize(coord, size, align_corners):
    """Grid coordinate in [-1, 1] -> source index, and d(index)/d(coord)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    # torch's kernel: one fused (coord + 1) * (size / 2) - 0.5; a separate rounding of the
    # product can land just below a pixel centre and flip which neighbour floor picks
    return fma(coord + 1, size / 2, -0.5), size / 2


def _reflect(x, twice_low, twice_high):
    """Reflect ``x`` into [low, high]; returns (value, d value / d x)."""
    if twice_low == twice_high:
        return xp.zeros_like(x), xp.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = x - low
    sign = xp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    x = xp.abs(x)
    extra = xp.fmod(x, span)
    flips = xp.floor(x / span)
    even = (flips % 2) == 0
    value = xp.where(even, extra + low, span - extra + low)
    return value, xp.where(even, sign, -sign)


def _pad_coordinate(x, size, padding, align_corners):
    """Apply the padding mode to a source index; returns (index, d index / d x)."""
    if padding == "zeros":
        return x, xp.ones_like(x)
    if padding == "reflection":
        if align_corners:
            x, d = _reflect(x, 0, 2 * (size - 1))
        else:
            x, d = _reflect(x, -1, 2 * size - 1)
    else:
        d = xp.ones_like(x)
    inside = (x > 0) & (x < size - 1)
    return xp.clip(x, 0, size - 1), d * inside


def _cubic_weights(t):
    """Cubic convolution weights of the 4 taps at offsets -1, 0, 1, 2, and their slopes."""
    a = _CUBIC_A

    def near(s):      # |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):       # 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    def d_near(s):
        return (3 * (a + 2) * s - 2 * (a + 3)) * s

    def d_far(s):
        return (3 * a * s - 10 * a) * s + 8 * a

    w = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    dw = [d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t)]
    return w, dw


def _taps(coord, size, mode, padding, align_corners):
    """Per-dim taps: list of (index array, weight array, d weight / d coord array, valid)."""
    x, scale = _unnormalize(coord, size, align_corners)
    if mode == "bicubic":
        x0 = xp.floor(x)
        t = x - x0
        w, dw = _cubic_weights(t)
        taps = []
        for k in range(4):
            idx = x0 + (k - 1)
            if padding != "zeros":
                idx, _ = _pad_coordinate(idx, size, padding, align_corners)
            valid = (idx >= 0) & (idx <= size - 1)
            taps.append((idx, w[k], dw[k] * scale, valid))
        return taps
    x, dpad = _pad_coordinate(x, size, padding, align_corners)
    if mode == "nearest":
        idx = xp.rint(x)  # round half to even, as torch's nearbyint
        valid = (idx >= 0) & (idx <= size - 1)
        return [(idx, xp.ones_like(x), xp.zeros_like(x), valid)]
    x0 = xp.floor(x)
    t = x - x0
    return [(x0, 1 - t, -dpad * scale, (x0 >= 0) & (x0 <= size - 1)),
            (x0 + 1, t, dpad * scale, (x0 + 1 >= 0) & (x0 + 1 <= size - 1))]


def _plan(inp, grid, mode, padding, align_corners):
    """Flat gather indices and weights for every tap combination."""
    spatial = inp.shape[2:]
    n = inp.shape[0]
    per_dim = []
    for d, size in enumerate(spatial):
        coord = grid[..., len(spatial) - 1 - d]  # grid's last dim is (x, y[, z])
        per_dim.append(_taps(coord, size, mode, padding, align_corners))
    strides = [1] * len(spatial)
    for d in range(len(spatial) - 2, -1, -1):
        strides[d] = strides[d + 1] * spatial[d + 1]
    combos = []
    for choice in itertools.product(*per_dim):
        valid = xp.ones(grid.shape[:-1], dtype=bool)
        flat = xp.zeros(grid.shape[:-1], dtype=xp.int64)
        weight = xp.ones(grid.shape[:-1], dtype=grid.dtype)
        for (idx, w, _, ok), st in zip(choice, strides):
            valid &= ok
            flat += xp.clip(idx, 0, None).astype(xp.int64) * st
            weight = weight * w
        flat = xp.where(valid, flat, 0).reshape(n, 1, -1)
        weight = xp.where(valid, weight, 0).reshape(n, 1, -1)
        combos.append((choice, flat, weight, valid))
    return combos


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: modes 0 bilinear, 1 nearest, 2 bicubic; paddings 0 zeros,
    1 border, 2 reflection."""
    mode, padding = _MODES[interpolation_mode], _PADDINGS[padding_mode]
    a, g = input._data, grid._data
    nd = a.ndim - 2
    if a.ndim not in (4, 5) or g.ndim != a.ndim or g.shape[-1] != nd or \
            g.shape[0] != a.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have matching batch "
                           f"sizes and a grid of shape (N, *out, {nd}), but got input of shape "
                           f"{list(a.shape)} and grid of shape {list(g.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    dt = _dt._by_np[a.dtype]
    cd = compute_dtype(dt)
    a_c, g_c = a.astype(cd, copy=False), g.astype(cd, copy=False)
    n, c = a.shape[:2]
    values = a_c.reshape(n, c, -1)
    out = xp.zeros((n, c, int(xp.prod(g.shape[1:-1]))), dtype=cd)
    for _, flat, weight, _ in _plan(a_c, g_c, mode, padding, align_corners):
        out += xp.take_along_axis(values, xp.broadcast_to(flat, (n, c, flat.shape[-1])),
                                  axis=2) * weight
    r = wrap(out.reshape((n, c) + g.shape[1:-1]).astype(a.dtype))
    if needs_grad(input, grid):
        node = GridSampler2DBackward0 if nd == 2 else GridSampler3DBackward0
        record(r, node, (input, grid), input=input, grid=grid, interpolation_mode=mode,
               padding_mode=padding, align_corners=align_corners)
    return r


class GridSampler2DBackward0(Node):
    """Input gradient by scattering to the taps; grid gradient from the weights' slopes.
    (Computed in NumPy: not differentiable a second time.)"""
    once_differentiable = True


    def backward(self, grad):
        inp, grid = self._saved_input, self._saved_grid
        a, g = inp._data, grid._data
        cd = compute_dtype(_dt._by_np[a.dtype])
        a_c, g_c = a.astype(cd, copy=False), g.astype(cd, copy=False)
        go = grad._data.astype(cd, copy=False)
        n, c = a.shape[:2]
        plane = int(xp.prod(a.shape[2:]))
        go = go.reshape(n, c, -1)
        values = a_c.reshape(n, c, -1)
        want_input = self.next_functions[0][0] is not None
        want_grid = self.next_functions[1][0] is not None
        grad_in = xp.zeros(n * c * plane, dtype=xp.float64) if want_input else None
        grad_grid = xp.zeros(g.shape, dtype=cd) if want_grid else None
        nd = a.ndim - 2
        base = (xp.arange(n * c, dtype=xp.int64) * plane).reshape(n, c, 1)
        combos = _plan(a_c, g_c, self._saved_interpolation_mode, self._saved_padding_mode,
                       self._saved_align_corners)
        for choice, flat, weight, valid in combos:
            if want_input:
                lin = (base + flat).reshape(-1)
                contrib = (go * weight).reshape(-1)
                grad_in += xp.bincount(lin, weights=contrib, minlength=grad_in.size)
            if want_grid:
                picked = xp.take_along_axis(values, xp.broadcast_to(flat, (n, c, flat.shape[-1])),
                                            axis=2)
                g_dot_v = (go * picked).sum(axis=1).reshape(g.shape[:-1])
                g_dot_v = xp.where(valid, g_dot_v, 0)
                for d in range(nd):
                    slope = choice[d][2]
                    others = xp.ones_like(slope)
                    for e in range(nd):
                        if e != d:
                            others = others * choice[e][1]
                    grad_grid[..., nd - 1 - d] += g_dot_v * slope * others
        gi = wrap(grad_in.reshape(a.shape).astype(a.dtype)) if want_input else None
        gg = wrap(grad_grid.astype(g.dtype)) if want_grid else None
        return gi, gg


class GridSampler3DBackward0(GridSampler2DBackward0):
    pass
