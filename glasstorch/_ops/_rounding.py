"""Arithmetic rounded once, where torch's kernels use fused multiply-adds: matching their last
bit needs the same single rounding, which NumPy's separate ``*`` and ``+`` do not give."""

from ._common import xp


def round_sum_once(a, b, np_dtype):
    """``a + b`` rounded once to ``np_dtype`` (float64 arrays; ``b`` an exact product)."""
    s = a + b
    bb = s - a
    residual = (a - (s - bb)) + (b - bb)  # a + b == s + residual exactly (TwoSum)
    r = s.astype(np_dtype)
    # s exactly halfway between two representable values: the residual breaks the tie
    toward = xp.where(residual > 0, xp.inf, -xp.inf).astype(np_dtype)
    other = xp.nextafter(r, toward)
    tie = (residual != 0) & (s - r.astype(xp.float64) == other.astype(xp.float64) - s)
    return xp.where(tie, other, r)


def fma(x, scale, shift):
    """``x * scale + shift`` rounded once, in ``x``'s float dtype. float32: exact products in
    float64, then one rounding; float64: long double where the platform has a wider one."""
    dt = x.dtype
    if dt == xp.float32:
        return round_sum_once(xp.full(x.shape, shift, xp.float64),
                              x.astype(xp.float64) * xp.float64(xp.float32(scale)), xp.float32)
    if dt == xp.float64:
        return (x.astype(xp.longdouble) * scale + shift).astype(xp.float64)
    return x * scale + shift
