"""Random number generators: torch's CPU ``Generator`` (a 32-bit Mersenne Twister) and the
default generator.

The engine is torch's exactly: mt19937 seeded with the standard ``init_genrand`` recurrence
on the low 32 bits of the seed, so the same seed gives the same 32-bit words as torch. NumPy's
``MT19937`` bit generator runs the twister (its legacy seeding *is* ``init_genrand``), which
keeps drawing vectorised; the sampling ops in ``_ops/random.py`` turn the words into values
with torch's transforms. 64-bit draws are two words, the first one high, as torch's
``random64()``.

``get_state``/``set_state`` use torch's 5056-byte layout (``CPUGeneratorImplState``)::

    0     uint64  initial seed
    8     int32   left        (words left before the next twist, 1..624)
    12    int32   seeded      (1)
    16    uint64  next        (index of the next word in the state)
    24    624 x uint64        the twister state (32-bit values)
    5016  3 x double          normal_x, normal_y, normal_rho (normal_y: cached double normal)
    5040  int32   normal_is_valid, then 4 bytes of padding
    5048  float   cached float normal, 5052 bool valid, 3 bytes of padding

so a state saved by torch restores here and continues identically, and the reverse.
"""

from __future__ import annotations

import os
import struct
import threading

import numpy as np

from .device import as_device

__all__ = ["Generator", "default_generator"]

# torch's default CPU generator starts from this seed, so initial_seed() matches.
_DEFAULT_SEED = 67280421310721
_U64 = 1 << 64
_N = 624                      # words in the twister state
_STATE_BYTES = 5056
_HEAD = struct.Struct("<QiiQ")          # seed, left, seeded, next
_TAIL = struct.Struct("<dddi4xf?3x")   # normal_x/y/rho, is_valid, float sample, valid
_TAIL_AT = _HEAD.size + 8 * _N
_MASK24 = np.uint32(0xFFFFFF)
_MASK53 = np.uint64((1 << 53) - 1)
_F32_SCALE = np.float32(2.0 ** -24)
_F64_SCALE = 2.0 ** -53


def _check_seed(seed):
    # torch parses the seed as a C long: ints only (not bools or floats), in the 64-bit range
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = seed.__index__()
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


class Generator:
    """A CPU random number generator (``torch.Generator``): torch's mt19937 engine, so the
    same seed gives torch's exact streams."""

    __slots__ = ("_bitgen", "_gen", "_seed", "_device", "_fresh", "_normal_double",
                 "_normal_float")

    def __init__(self, device="cpu"):
        self._device = as_device(device)   # raises for devices other than the CPU
        self._bitgen = np.random.MT19937()
        self._gen = np.random.Generator(self._bitgen)
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        """The generator's device (always the CPU)."""
        return self._device

    # ------------------------------------------------------------------ seeding and state

    def manual_seed(self, seed):
        """Reseed from ``seed`` (any 64-bit integer, negatives wrap); returns ``self``."""
        seed = _check_seed(seed)
        self._seed = seed
        # init_genrand(seed & 0xffffffff): NumPy's legacy MT19937 seeding is that recurrence
        self._bitgen._legacy_seeding(seed & 0xFFFFFFFF)
        self._fresh = True          # torch reports next=0 until the first draw
        self._normal_double = None
        self._normal_float = None
        return self

    def seed(self):
        """Reseed from OS entropy (64 bits) and return the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The full state as torch's 5056-byte uint8 tensor (restore it with ``set_state``)."""
        from .._tensor import _wrap
        st = self._bitgen.state["state"]
        pos = int(st["pos"])
        left = _N + 1 - pos
        nxt = 0 if self._fresh else pos
        buf = bytearray(_STATE_BYTES)
        _HEAD.pack_into(buf, 0, self._seed, left, 1, nxt)
        buf[_HEAD.size:_TAIL_AT] = st["key"].astype("<u8").tobytes()
        nd, nf = self._normal_double, self._normal_float
        _TAIL.pack_into(buf, _TAIL_AT, 0.0, 0.0 if nd is None else nd, 0.0, nd is not None,
                        0.0 if nf is None else nf, nf is not None)
        return _wrap(np.frombuffer(bytes(buf), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from ``get_state`` (here or in torch); returns ``self``."""
        from .._tensor import Tensor
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got "
                            f"{type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._data).reshape(-1).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
        if not seeded or not 1 <= left <= _N or nxt > _N:
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=_HEAD.size).astype(np.uint32)
        _, ny, _, valid, fs, fvalid = _TAIL.unpack_from(raw, _TAIL_AT)
        # torch reads state[next] after `left` says no twist is due; NumPy's position is the
        # same index, 624 meaning "twist first" (torch's left == 1)
        self._bitgen.state = {"bit_generator": "MT19937",
                              "state": {"key": key, "pos": _N + 1 - left}}
        self._fresh = left == 1 and nxt == 0
        self._seed = seed
        self._normal_double = ny if valid else None
        self._normal_float = fs if fvalid else None
        return self

    def clone_state(self):
        """A new Generator in the same state (its stream continues identically)."""
        g = Generator(self._device)
        g.set_state(self.get_state())
        return g

    def graphsafe_get_state(self):
        """Not available for CPU generators (as in torch)."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        """Not available for CPU generators (as in torch)."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def get_offset(self):
        """CPU generators have no Philox offset (torch raises the same)."""
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        """CPU generators have no Philox offset (torch raises the same)."""
        raise RuntimeError("CPU Generator does not use offset")

    def __reduce__(self):
        return (Generator, (self._device,), (self._seed, None, self.get_state()))

    def __setstate__(self, state):
        seed, _offset, rng_state = state
        self.manual_seed(seed)
        self.set_state(rng_state)

    def __repr__(self):
        return f"<glasstorch.Generator object at {hex(id(self))}>"

    # ------------------------------------------------------------------ raw draws

    @property
    def np(self):
        """A NumPy ``Generator`` drawing from this generator's twister (streams advance
        together, but NumPy's own transforms are not torch's)."""
        self._fresh = False
        return self._gen

    def _u32(self, n):
        """``n`` 32-bit words (torch's ``random()``), as uint32."""
        if n:
            self._fresh = False
        return self._gen.integers(0, 1 << 32, n, dtype=np.uint32)

    def _u64(self, n):
        """``n`` 64-bit draws (torch's ``random64()``: two words, the first high)."""
        if n:
            self._fresh = False
        return self._gen.integers(0, _U64, n, dtype=np.uint64)

    def _f32(self, n):
        """``n`` float32 uniforms on [0, 1): the low 24 bits of a word, times 2**-24."""
        w = self._u32(n)
        np.bitwise_and(w, _MASK24, out=w)
        return np.multiply(w, _F32_SCALE, dtype=np.float32, casting="unsafe")

    def _f64(self, n):
        """``n`` float64 uniforms on [0, 1): the low 53 bits of a 64-bit draw, times 2**-53."""
        w = self._u64(n)
        np.bitwise_and(w, _MASK53, out=w)
        return np.multiply(w, _F64_SCALE, dtype=np.float64, casting="unsafe")


default_generator = Generator()


# ============================================================================ exact arithmetic
# torch's CPU kernels are compiled with FMA contraction, so ``x * r + f`` is one rounding.
# These helpers give the correctly rounded fused results with plain NumPy arithmetic.

def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e == a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd(s, e):
    """Round ``s + e`` (exact pair) to odd: inexact results get an odd last bit."""
    s = np.array(s, dtype=np.float64, copy=True, ndmin=1)
    e = np.broadcast_to(e, s.shape)
    fix = (e != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    if fix.any():
        s[fix] = np.nextafter(s[fix], np.copysign(np.inf, e[fix]))
    return s


def fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding (the product is exact in float64; round to odd
    in float64, then to nearest in float32, is the correctly rounded result)."""
    p = np.multiply(a, b, dtype=np.float64)
    s, e = _two_sum(p, np.asarray(c, dtype=np.float64))
    return _round_odd(s, e).astype(np.float32).reshape(np.shape(p))


_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's split of a double into two 26-bit halves


def _two_prod(a, b):
    p = a * b
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma64(a, b, c):
    """float64 ``a * b + c`` with one rounding (Boldo and Melquiond's emulation: exact
    product, exact sum with ``c``, the low parts added with rounding to odd)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    v, ve = _two_sum(tl, ul)
    v = _round_odd(v, ve).reshape(np.shape(v))
    out = th + v
    # zero or non-finite products: the plain expression is already exact
    plain = ~np.isfinite(uh) | (uh == 0)
    if plain.any():
        out = np.where(plain, a * b + c, out)
    return out if out.shape == shape else np.broadcast_to(out, shape).copy()


# ============================================================================ torch's normal_fill
# For float32 (and, through float32, float16/bfloat16) blocks of 16, torch's CPU kernel turns
# 16 uniforms into 16 normals with Box-Muller, u1 = 1 - data[0:8], u2 = data[8:16], using
# avx_mathfun's log256_ps/sincos256_ps (Cephes polynomials), compiled with FMA contraction.
# The emulation below repeats those float32 steps; each fused step is computed in float64,
# where it is exact before the single rounding to float32 (checked on all 2**24 inputs).

def _c32(v):
    return np.float32(v)


_LOG_P = tuple(_c32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                                 -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                                 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_LOG_Q1, _LOG_Q2 = np.float64(_c32(-2.12194440e-4)), np.float64(_c32(0.693359375))
_SQRTHF = _c32(0.707106781186547524)
_DP = tuple(np.float64(_c32(v)) for v in (-0.78515625, -2.4187564849853515625e-4,
                                          -3.77489497744594108e-8))
_SIN_P = tuple(_c32(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1))
_COS_P = tuple(_c32(v) for v in (2.443315711809948E-005, -1.388731625493765E-003,
                                 4.166664568298827E-002))
_FOPI = _c32(1.27323954473516)
_TWO_PI32 = _c32(2 * 3.141592653589793)
_BLOCK_ROWS = 4096   # rows of 16 per pass: fewer NumPy calls, the working set near cache size


class _Work:
    """Scratch buffers for one pass of the emulation (allocated per call size)."""

    def __init__(self, n):
        f4, f8, i4 = np.float32, np.float64, np.int32
        (self.x, self.y, self.z, self.e, self.th, self.s, self.r,
         self.r2) = (np.empty(n, f4) for _ in range(8))
        self.t, self.x64 = np.empty(n, f8), np.empty(n, f8)
        self.i, self.j = np.empty(n, i4), np.empty(n, i4)
        self.m = np.empty(n, bool)


def _log256(x, w):
    """avx_mathfun's log256_ps on positive float32 ``x`` (overwritten), result in ``x``."""
    n = x.shape[0]
    e, z, y, t = w.e[:n], w.z[:n], w.y[:n], w.t[:n]
    bits, ei, mask = x.view(np.int32), w.i[:n], w.m[:n]
    np.right_shift(bits, 23, out=ei)
    np.bitwise_and(bits, ~0x7F800000, out=bits)
    np.bitwise_or(bits, 0x3F000000, out=bits)        # mantissa in [0.5, 1)
    np.less(x, _SQRTHF, out=mask)
    np.subtract(ei, 0x7E, out=ei)
    np.subtract(ei, mask, out=ei, casting="unsafe")
    np.copyto(e, ei, casting="unsafe")
    np.multiply(x, mask, out=z)                      # x < sqrt(1/2): x + x - 1
    np.subtract(x, _c32(1), out=y)
    np.add(y, z, out=y)
    x, y = y, x
    x64 = w.x64[:n]
    np.copyto(x64, x)
    np.multiply(x64, np.float64(_LOG_P[0]), out=t)
    np.add(t, np.float64(_LOG_P[1]), out=y, casting="unsafe")
    for p in _LOG_P[2:]:
        np.multiply(y, x64, out=t)
        np.add(t, np.float64(p), out=y, casting="unsafe")
    np.multiply(y, x, out=y)
    np.multiply(x, x, out=z)
    # y = fma(y, z, e*q1); y = fma(-z, 0.5, y); x += y; x = fma(e, q2, x)
    np.multiply(y, z, out=t, dtype=np.float64)
    np.multiply(e, np.float32(_LOG_Q1), out=y)
    np.add(t, y, out=y, casting="unsafe")
    np.multiply(z, -0.5, out=t)
    np.add(t, y, out=y, casting="unsafe")
    np.add(x, y, out=x)
    np.multiply(e, _LOG_Q2, out=t)
    np.add(t, x, out=x, casting="unsafe")
    return x


def _sincos256(th, w):
    """avx_mathfun's sincos256_ps on float32 ``th`` >= 0; returns (sin, cos) buffers."""
    n = th.shape[0]
    y, z, t, s, e = w.y[:n], w.z[:n], w.t[:n], w.s[:n], w.e[:n]
    j, k = w.j[:n], w.i[:n]
    np.multiply(th, _FOPI, out=y)
    np.copyto(j, y, casting="unsafe")                # truncation, as cvttps
    np.add(j, 1, out=j)
    np.bitwise_and(j, ~1, out=j)
    np.copyto(e, j, casting="unsafe")
    x = th
    for dp in _DP:                                   # x = fma(y, dp, x), three times
        np.multiply(e, dp, out=t)
        np.add(t, x, out=x, casting="unsafe")
    np.multiply(x, x, out=z)
    z64 = w.x64[:n]
    np.copyto(z64, z)
    # cosine polynomial (in y), then sine polynomial (in s)
    np.multiply(z64, np.float64(_COS_P[0]), out=t)
    np.add(t, np.float64(_COS_P[1]), out=y, casting="unsafe")
    np.multiply(y, z64, out=t)
    np.add(t, np.float64(_COS_P[2]), out=y, casting="unsafe")
    np.multiply(y, z, out=y)
    np.multiply(y, z64, out=t)                       # fma(y, z, -(z * 0.5))
    np.multiply(z, _c32(0.5), out=e)
    np.subtract(t, e, out=y, casting="unsafe")
    np.add(y, _c32(1), out=y)
    np.multiply(z64, np.float64(_SIN_P[0]), out=t)
    np.add(t, np.float64(_SIN_P[1]), out=s, casting="unsafe")
    np.multiply(s, z64, out=t)
    np.add(t, np.float64(_SIN_P[2]), out=s, casting="unsafe")
    np.multiply(s, z, out=s)
    np.multiply(s, x, out=t, dtype=np.float64)       # fma(s, x, x)
    np.add(t, x, out=s, casting="unsafe")
    # octant: j & 2 swaps the polynomials; signs from j & 4 (sine) and (j - 2) & 4 (cosine)
    # select without np.where (slow): m = all ones where the polynomials swap
    np.bitwise_and(j, 2, out=k)
    np.right_shift(k, 1, out=k)
    np.negative(k, out=k)
    yb, sb = y.view(np.int32), s.view(np.int32)
    sin_v, cos_v = w.x[:n], w.r2[:n]
    si, ci = sin_v.view(np.int32), cos_v.view(np.int32)
    np.bitwise_xor(yb, sb, out=ci)                   # y ^ s, masked, flips one into the other
    np.bitwise_and(ci, k, out=ci)
    np.bitwise_xor(sb, ci, out=si)                   # swap ? y : s
    np.bitwise_xor(yb, ci, out=ci)                   # swap ? s : y
    np.bitwise_and(j, 4, out=k)
    np.left_shift(k, 29, out=k)
    np.bitwise_xor(sin_v.view(np.int32), k, out=sin_v.view(np.int32))
    np.subtract(j, 2, out=j)
    np.invert(j, out=j)
    np.bitwise_and(j, 4, out=j)
    np.left_shift(j, 29, out=j)
    np.bitwise_xor(cos_v.view(np.int32), j, out=cos_v.view(np.int32))
    return sin_v, cos_v


_scratch = threading.local()


def _work_for(n):
    """This thread's scratch buffers, grown to hold ``n`` lanes (reused across calls)."""
    w = getattr(_scratch, "work", None)
    if w is None or w.x.shape[0] < n:
        w = _scratch.work = _Work(n)
    return w


def _box_muller_rows(u):
    w = _work_for(min(u.shape[0], _BLOCK_ROWS) * 8)
    for r0 in range(0, u.shape[0], _BLOCK_ROWS):
        blk = u[r0:r0 + _BLOCK_ROWS]
        n = blk.shape[0] * 8
        x = w.x[:n].reshape(-1, 8)
        np.subtract(_c32(1), blk[:, :8], out=x)
        rad = w.r[:n]
        np.multiply(_log256(w.x[:n], w), _c32(-2), out=rad)
        np.sqrt(rad, out=rad)
        th = w.th[:n].reshape(-1, 8)
        np.multiply(blk[:, 8:], _TWO_PI32, out=th)
        sin_v, cos_v = _sincos256(w.th[:n], w)
        rad = rad.reshape(-1, 8)
        np.multiply(rad, cos_v.reshape(-1, 8), out=blk[:, :8])
        np.multiply(rad, sin_v.reshape(-1, 8), out=blk[:, 8:])


_PARALLEL_ROWS = 1 << 16      # from about a million values on, split the work over threads
_pool = []


def box_muller16(u, threads=1):
    """torch's vectorised Box-Muller on float32 uniforms of shape (rows, 16), in place:
    columns 0..7 become radius * cos(theta), columns 8..15 radius * sin(theta). Large inputs
    are split over ``threads`` threads (NumPy releases the GIL; rows are independent, so the
    values do not depend on the split)."""
    rows = u.shape[0]
    parts = min(threads, rows // _PARALLEL_ROWS)
    if parts < 2:
        _box_muller_rows(u)
        return u
    if not _pool or _pool[0]._max_workers < parts:
        from concurrent.futures import ThreadPoolExecutor
        _pool[:] = [ThreadPoolExecutor(max_workers=parts, thread_name_prefix="gt-randn")]
    step = -(-rows // parts)
    list(_pool[0].map(_box_muller_rows, [u[i:i + step] for i in range(0, rows, step)]))
    return u


# ============================================================================ torch's sum order
# Some samplers normalise by a sum over the last dim (Dirichlet); torch's CPU sum adds in a
# fixed order of its own: SIMD lanes, four interleaved accumulators, a cascade of levels.
# The sum kernel is built for 256-bit vectors (AVX512 machines run that build too): 4 doubles.
_SUM_LANES = 4


def _multi_row_sum(items):
    """torch's multi_row_sum over ``items`` (shape (rows, size, 4, ...)): four accumulators
    per item slot, flushed through a cascade of four levels."""
    size = items.shape[1]
    power = max(4, (max(size - 1, 0)).bit_length() // 4)
    step, mask = 1 << power, (1 << power) - 1
    acc = np.zeros((4,) + items.shape[:1] + items.shape[2:])
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] += items[:, i]
            i += 1
        for j in range(1, 4):
            acc[j] += acc[j - 1]
            acc[j - 1] = 0
            if i & (mask << (j * power)):
                break
    for k in range(i, size):
        acc[0] += items[:, k]
    for j in range(1, 4):
        acc[0] += acc[j]
    return acc[0]


def _row_sum(x, tail_first):
    """torch's row sum along axis 1 of ``x`` (shape (rows, n) or (rows, n, lanes)): four
    interleaved accumulators, the tail added to a fresh sum (scalar rows) or to the first
    accumulator (rows of SIMD vectors)."""
    n = x.shape[1]
    m = n // 4
    part = _multi_row_sum(x[:, :m * 4].reshape((x.shape[0], m, 4) + x.shape[2:]))
    total = np.zeros(x.shape[:1] + x.shape[2:]) if tail_first else part[:, 0]
    for i in range(m * 4, n):
        total += x[:, i]
    for k in range(0 if tail_first else 1, 4):
        total += part[:, k]
    return total


def torch_sum_last(x):
    """``x.sum(-1, keepdim=True)`` for float64 ``x`` added in torch's CPU order (the
    vectorised inner reduction of its sum kernel)."""
    lanes = _SUM_LANES
    x = np.ascontiguousarray(x, dtype=np.float64)
    shape, n = x.shape, x.shape[-1]
    x = x.reshape(-1, n)
    if n < lanes:
        total = _row_sum(x, True)
    else:
        vec = n // lanes
        acc = _row_sum(x[:, :vec * lanes].reshape(-1, vec, lanes), False)
        total = np.zeros(x.shape[0])
        for k in range(vec * lanes, n):     # the scalar tail first, then the lanes
            total += x[:, k]
        for k in range(lanes):
            total += acc[:, k]
    return total.reshape(shape[:-1] + (1,))
