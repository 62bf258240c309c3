"""Random sampling: rand/randn/randint/randperm and friends, normal, bernoulli, multinomial,
poisson, the in-place samplers (``uniform_``, ``normal_``, ``random_``...), and the
seeding functions of the default generator.

Every op draws from a ``Generator`` (the default one unless ``generator=`` is given) exactly
as torch's CPU kernels do: the same 32/64-bit words from the mt19937 stream, the same number
of words per call, the same transforms (FMA-contracted where torch's kernels are), and the
same element order (torch's TensorIterator order, i.e. memory order, for in-place fills). So
a seed gives torch's values bit for bit, and interleaved calls stay aligned with torch.
"""

from __future__ import annotations

import math

import numpy as _np

from .._core import dtype as _dt
from .._core import random as _R
from .._core.device import META, as_device
from .._core.meta import meta_array
from .._core.random import Generator, default_generator
from .._core.warn import warn_user
from ._common import (
    _SHORT,
    Node,
    Tensor,
    assign_inplace,
    finish,
    needs_grad,
    record,
    register,
    size_arg,
    wrap,
    xp,
)
from ._libstdcxx import StdSelect
from .creation import (
    _into_out,
    _is_sparse,
    _out_dtype,
    _refuse_sparse,
    _sparse_backend_refuses,
    check_pin_memory,
)

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "poisson", "binomial", "_standard_gamma", "_sample_dirichlet"]


# ----------------------------------------------------------------------------- seeding

def manual_seed(seed) -> Generator:
    """Seed the default generator (``int(seed)``, negatives wrap); returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as torch's 5056-byte uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator from a ``get_rng_state`` tensor (here or torch's)."""
    default_generator.set_state(new_state)


# ----------------------------------------------------------------------------- helpers

def _gen(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator


def _np_gen(generator):
    """The NumPy generator over ``generator``'s twister (for callers outside this module)."""
    return _gen(generator).np


def _not_impl(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_short(dt)}\'')


_F16, _BF16 = _dt.float16, _dt.bfloat16
_REDUCED = (_F16, _BF16)


def _to_dtype(arr, dt):
    """Cast a float64/float32 kernel result to ``dt`` as torch's static_cast does."""
    with _np.errstate(over="ignore", invalid="ignore"):  # C casts overflow silently
        if dt in _REDUCED and arr.dtype == _np.float64:
            arr = arr.astype(_np.float32)
        return arr.astype(dt.np, copy=False)


def _iter_perm(arr):
    """torch's TensorIterator order for an output: dimensions by decreasing stride (size-1
    dimensions do not matter), so an in-place fill walks memory in address order."""
    dims = [d for d in range(arr.ndim) if arr.shape[d] != 1]
    dims.sort(key=lambda d: -abs(arr.strides[d]))
    return dims + [d for d in range(arr.ndim) if arr.shape[d] == 1]


def _in_iter_order(vals, arr):
    """``vals`` (1-D, in TensorIterator order of ``arr``) rearranged to ``arr``'s shape."""
    if arr.ndim < 2 or arr.flags.c_contiguous:
        return vals.reshape(arr.shape)
    perm = _iter_perm(arr)
    return vals.reshape([arr.shape[d] for d in perm]).transpose(_np.argsort(perm))


def _shape_of(args, size):
    if size is not None:
        if args:
            raise TypeError("size given both positionally and as a keyword")
        args = (size,)
    elif not args:
        raise TypeError("missing 1 required positional argument: 'size'")
    shape = size_arg(args)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    return shape


def _result(arr, out, requires_grad):
    t = wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return finish(t, out)


def _meta(device, shape, dt, out, requires_grad):
    """A meta tensor of ``shape``/``dt`` when ``device`` is meta (drawing nothing, so the
    generator does not advance, as in torch), else None."""
    if device is None or as_device(device, meta=True) is not META:
        return None
    return _into_out(_result(meta_array(shape, dt.np), None, requires_grad), out)


def _float_dtype(dtype, kernel, shape=None):
    # torch's normal kernels are not reached (and do not complain) for empty results
    dt = _dt.get_default_dtype() if dtype is None else dtype
    if dt._category < 2 and (shape is None or 0 not in shape):
        raise _not_impl(kernel, dt)
    return dt


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ----------------------------------------------------------------------------- kernels

_DIGITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}
_FMAX = {_dt.float16: 65504.0, _dt.bfloat16: 3.3895313892515355e38,
         _dt.float32: 3.4028234663852886e38, _dt.float64: 1.7976931348623157e308}
# the C++ type names torch's bound checks print
_CNAME = {_dt.float16: "c10::Half", _dt.bfloat16: "c10::BFloat16", _dt.float32: "float",
          _dt.float64: "double", _dt.bool_: "bool", _dt.uint8: "unsigned char",
          _dt.int8: "signed char", _dt.int16: "short int", _dt.int32: "int",
          _dt.int64: "long int", _dt.uint16: "short unsigned int", _dt.uint32: "unsigned int",
          _dt.uint64: "long unsigned int"}
_WIDE_NAMES = {_dt.uint16: "UInt16", _dt.uint32: "UInt32", _dt.uint64: "UInt64"}


def _short(dt):
    return _SHORT.get(dt) or _WIDE_NAMES.get(dt) or str(dt)


def _check_uniform(from_, to, dt):
    lim = _FMAX[dt]
    for name, v in (("from", from_), ("to", to)):
        if not -lim <= v <= lim:
            raise RuntimeError(f"{name} is out of bounds for {_CNAME[dt]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    if to - from_ > lim:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_SHORT[dt] if dt in _REDUCED else _CNAME[dt]}>::max(), but found "
                           f"to={to:g} and from={from_:g} which result in to-from to exceed "
                           f"the limit")


def _uniform_values(g, n, dt, from_=0.0, to=1.0):
    """torch's uniform kernel: ``n`` values of ``dt`` on [from_, to). The low 24 (float and
    reduced floats) or 53 (double) bits of a word make ``x`` on [0, 1); ``x * (to - from) +
    from`` is one fused rounding; a value that rounds up to ``to`` becomes ``from``."""
    if dt.is_complex:
        part = dt.to_real()
        return _uniform_values(g, 2 * n, part, from_, to).view(dt.np)
    unit = from_ == 0 and to == 1
    if dt is _dt.float64:
        x = g._f64(n)
        if unit:
            return x
        lo, hi = float(from_), float(to)
        x = _R.fma64(x, hi - lo, lo)
    else:
        x = g._f32(n)
        lo, hi = _np.float32(from_), _np.float32(to)
        if not unit:
            x = _R.fma32(x, hi - lo, lo)
        if dt is not _dt.float32:
            x = x.astype(dt.np)
            lo, hi = dt.np.type(lo), dt.np.type(hi)
        elif unit:
            return x
    x[x >= hi] = lo
    return x


def _box_muller_doubles(g, n):
    """``n`` N(0, 1) doubles from torch's scalar normal_distribution<double>: Box-Muller on
    two 53-bit uniforms, the second value cached on the generator for the next call."""
    out = _np.empty(n, _np.float64)
    i = 0
    if n and g._normal_double is not None:
        out[0] = g._normal_double
        g._normal_double = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs:
        u = g._f64(2 * pairs).reshape(pairs, 2)
        # log1p from the C library (NumPy's differs in the last bit), sin/cos match it
        lg = libm("log1p", -u[:, 1])
        r = _np.sqrt(-2.0 * lg)
        theta = 2.0 * math.pi * u[:, 0]
        cos_s = r * libm("cos", theta)
        sin_s = r * libm("sin", theta)
        m = n - i
        out[i::2] = cos_s[:(m + 1) // 2]
        out[i + 1::2] = sin_s[:m // 2]
        if m % 2:
            g._normal_double = float(sin_s[-1])
    return out


def _affine64(z, mean, std):
    """``z * std + mean`` as torch computes it in double: one fused rounding."""
    if mean == 0:
        return z * std + 0.0        # exact product; + 0.0 gives the fused sign of zero
    return _R.fma64(z, float(std), float(mean))


def _affine32(z, mean, std):
    """float32 ``fma(z, std, mean)`` (torch's _mm256_fmadd_ps)."""
    std32, mean32 = _np.float32(std), _np.float32(mean)
    if mean32 == 0:
        if std32 != 1:
            z *= std32
        z += _np.float32(0)
        return z
    return _R.fma32(z, std32, mean32)


def _threads(n):
    """Threads for the vectorised normal transform of ``n`` values (asking threadpoolctl
    costs time, so small fills never ask)."""
    if n < 32 * _R._PARALLEL_ROWS:
        return 1
    from .._runtime import get_num_threads
    return get_num_threads()


# torch's double kernels call the C library (std::log, std::sin...). NumPy's float64 ufuncs
# are those same C functions on most builds, but its own SIMD code on some (AVX512), which
# differs in the last bit now and then. Each function is probed once on a spread of inputs:
# the ufunc where it agrees with the C library here, else one C call per element.
_LIBM_PROBE = {"log": (0.0, 1.0), "log1p": (-1.0, 0.0), "exp": (-100.0, 100.0),
               "tan": (-1.6, 1.6), "cos": (0.0, 6.3), "sin": (0.0, 6.3)}
_LIBM = {}


def _per_element(fn):
    def call(x):
        return _np.fromiter(map(fn, x.ravel().tolist()), _np.float64, x.size).reshape(x.shape)
    return call


def _log0(v):
    return math.log(v) if v > 0 else -math.inf


def _exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _c_function(name):
    return {"log": _log0, "exp": _exp}.get(name) or getattr(math, name)


def libm(name, x):
    """The C library's ``name`` (log, log1p, exp, tan, cos, sin) over a float64 array, as
    torch's scalar kernels compute it."""
    fn = _LIBM.get(name)
    if fn is None:
        scalar = _c_function(name)
        ufunc = getattr(_np, name)
        lo, hi = _LIBM_PROBE[name]
        probe = _np.linspace(lo, hi, 20011)[1:-1]
        if _np.array_equal(ufunc(probe), _per_element(scalar)(probe)):
            def fn(v, ufunc=ufunc):
                with _np.errstate(divide="ignore", over="ignore"):
                    return ufunc(v)
        else:
            fn = _per_element(scalar)
        _LIBM[name] = fn
    return fn(x)


def _normal_values(g, n, dt, mean=0.0, std=1.0, contiguous=True):
    """torch's normal kernel: ``n`` values of ``dt`` (in iteration order)."""
    if dt.is_complex:
        part = dt.to_real()
        return _normal_values(g, 2 * n, part, mean, std / math.sqrt(2),
                              contiguous).view(dt.np)
    if n >= 16 and contiguous:
        full = n // 16 * 16
        if dt is _dt.float64:
            u = g._f64(n)
            if n != full:
                # torch transforms the whole blocks, then redraws the last 16 and redoes them
                blocks = _np.concatenate([u[:full], g._f64(16)]).reshape(-1, 16)
            else:
                blocks = u.reshape(-1, 16)
            u1 = 1.0 - blocks[:, :8]
            radius = _np.sqrt(-2.0 * libm("log", u1))
            theta = (2.0 * math.pi) * blocks[:, 8:]
            res = _np.concatenate([radius * libm("cos", theta), radius * libm("sin", theta)],
                                 axis=1)
            res = _affine64(res.reshape(-1), mean, std)
            out = _np.empty(n, _np.float64)
            out[:full] = res[:full]
            if n != full:
                out[n - 16:] = res[full:]
            return out
        if dt is _dt.float32:
            u = g._f32(n)
            body = _R.box_muller16(u[:full].reshape(-1, 16), _threads(full)).reshape(-1)
            out = u
            out[:full] = body
            if n != full:
                out[n - 16:] = _R.box_muller16(g._f32(16).reshape(1, 16)).reshape(-1)
            return _affine32(out, mean, std)
        # float16/bfloat16: float32 blocks of 16 fresh uniforms each, the last one moved back
        u = g._f32(-(-n // 16) * 16).reshape(-1, 16)
        _R.box_muller16(u, _threads(u.size))
        z = _affine32(u.reshape(-1), mean, std)
        out = _np.empty(n, _np.float32)
        out[:full] = z[:full]
        if n != full:
            out[n - 16:] = z[full:]
        return out.astype(dt.np)
    z = _affine64(_box_muller_doubles(g, n), mean, std)
    return _to_dtype(z, dt)


# integer ranges and the C names torch uses in its bound-check messages
_INT_RANGE = {_dt.bool_: (0, 1, "bool"), _dt.uint8: (0, 255, "unsigned char"),
              _dt.int8: (-128, 127, "signed char"), _dt.int16: (-(1 << 15), (1 << 15) - 1,
                                                            "short"),
              _dt.int32: (-(1 << 31), (1 << 31) - 1, "int"),
              _dt.int64: (-(1 << 63), (1 << 63) - 1, "long"),
              _dt.uint16: (0, (1 << 16) - 1, "unsigned short"),
              _dt.uint32: (0, (1 << 32) - 1, "unsigned int"),
              _dt.uint64: (0, (1 << 64) - 1, "unsigned long")}
_UNSIGNED_WIDE = (_dt.uint16, _dt.uint32, _dt.uint64)   # no default random_() kernel
# random_() with no bounds covers [0, 2**digits] for floats (every integer is exact there)
_FLOAT_DIGITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}


def _ints_to_dtype(v, dt):
    """int64 values cast to ``dt`` as torch's static_cast (floats round, ints wrap)."""
    if dt in _REDUCED:
        return v.astype(_np.float32).astype(dt.np)
    return v.astype(dt.np)


def _from_to_values(g, n, rng, base, dt):
    """torch's uniform_int_from_to_distribution: ``(word % range) + base`` with a 64-bit
    word when the range is 2**28 or more, else a 32-bit one."""
    if rng >= 1 << 28:
        w = g._u64(n)
    else:
        w = g._u32(n).astype(_np.uint64)
    w %= _np.uint64(rng)
    w += _np.uint64(base % (1 << 64))
    return _ints_to_dtype(w.view(_np.int64), dt)


def _update_from(v, digits):
    # torch moves a `from` that its float type cannot hold up to the next value it can
    from_plus_1 = _float_round(v + 1, digits)
    if from_plus_1 < v:
        n = abs(v + 1).bit_length() - 1
        v = from_plus_1 + (1 << (n - digits + 1))
    return v


def _update_to(v, digits):
    to_minus_1 = _float_round(v - 1, digits)
    if to_minus_1 >= v:
        n = abs(v - 1).bit_length() - 1
        v = to_minus_1 - (1 << (n - digits + 1))
    return v


def _float_round(v, digits):
    """int(static_cast<float type with `digits` mantissa bits>(v)), saturating as int64."""
    if v == 0:
        return 0
    shift = max(abs(v).bit_length() - digits, 0)
    q, r = divmod(abs(v), 1 << shift)
    half = 1 << shift >> 1
    if shift and (r > half or (r == half and q & 1)):
        q += 1
    out = q << shift
    return min(out, (1 << 63) - 1) * (1 if v > 0 else -1)


def _check_bounds(low, high_incl, dt):
    """torch's check_from_to_in_range: errors outside the dtype, warnings where a float
    dtype cannot hold every integer."""
    cname = _CNAME[dt]
    if dt in _FLOAT_DIGITS:
        lo, hi = -_FMAX[dt], _FMAX[dt]
    elif dt is _dt.uint64:
        lo, hi = 0, (1 << 63) - 1      # torch compares as int64
    else:
        lo, hi = _INT_RANGE[dt][:2]
    for name, v in (("from", low), ("to - 1", high_incl)):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {cname}")
    if dt in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[dt]
        for name, v in (("from", low), ("to - 1", high_incl)):
            if not -(1 << digits) <= v <= 1 << digits:
                warn_user(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                          f"precision limitations {cname} can support discrete uniform "
                          f"distribution only within this range. This warning will become an "
                          f"error in version 1.7 release, please fix the code in advance")


def _random_from_to(g, n, low, high, dt):
    """Integers on [low, high) as ``dt``: torch's random_(from, to) with its checks."""
    if dt.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    if dt in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[dt]
        low, high = _update_from(low, digits), _update_to(high, digits)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' "
                               f"casted to dtype, but got from={low} >= to={high}")
    _check_bounds(low, high - 1, dt)
    return _from_to_values(g, n, high - low, low, dt)


def _random_from(g, n, low, dt):
    """torch's random_(from, None): [from, dtype max] (2**digits for floats)."""
    if low == -(1 << 63):
        if dt not in (_dt.int64, _dt.float64, _dt.float32, _dt.bfloat16):
            if dt not in (_dt.uint8, _dt.int8, _dt.int16, _dt.int32):
                raise _not_impl("random_full_64_bits_range_kernel_cpu", dt)
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                               "double, float and bfloat16")
        return _ints_to_dtype(g._u64(n).view(_np.int64), dt)
    if dt in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[dt]
        to_inc = min(1 << digits, (1 << 63) - 1)
        low = _update_from(low, digits)
        if low >= to_inc:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                               f"equal to 'to_inc' casted to dtype, but got from={low} > "
                               f"to_inc={to_inc}")
    elif dt in _INT_RANGE:
        to_inc = _INT_RANGE[dt][1]
    else:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    _check_bounds(low, to_inc, dt)
    return _from_to_values(g, n, to_inc - low + 1, low, dt)


def _random_default(g, n, dt):
    """torch's random_() without bounds: uniform_int_distribution for ``dt``."""
    if dt is _dt.bool_:
        return (g._u32(n) & _np.uint32(1)).astype(_np.bool_)
    if dt is _dt.int64 or dt is _dt.float64:
        mod = (1 << 63) if dt is _dt.int64 else (1 << 53) + 1
        v = g._u64(n) % _np.uint64(mod)
    else:
        if dt in _FLOAT_DIGITS:
            mod = (1 << _FLOAT_DIGITS[dt]) + 1
        elif dt in _INT_RANGE and dt not in _UNSIGNED_WIDE:
            mod = _INT_RANGE[dt][1] + 1
        else:
            raise _not_impl("random_kernel_cpu", dt)
        v = g._u32(n).astype(_np.uint64) % _np.uint64(mod)
    return _ints_to_dtype(v.view(_np.int64), dt)


# ----------------------------------------------------------------------------- factories

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **kw):
    """Uniform samples on [0, 1) of the given size (default dtype)."""
    as_device(device, meta=True)
    check_pin_memory(pin_memory, "rand")
    _refuse_sparse(layout, "rand", "uniform_")
    shape = _shape_of(size, kw.pop("size", None))
    dt = _float_dtype(_out_dtype(out, dtype, "rand"), "check_uniform_bounds")
    meta = _meta(device, shape, dt, out, requires_grad)
    if meta is not None:
        return meta
    vals = _uniform_values(_gen(generator), _numel(shape), dt)
    return _into_out(_result(vals.reshape(shape), None, requires_grad), out)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **kw):
    """Standard normal samples of the given size (default dtype)."""
    as_device(device, meta=True)
    check_pin_memory(pin_memory, "randn")
    _refuse_sparse(layout, "randn", "normal_")
    shape = _shape_of(size, kw.pop("size", None))
    dt = _float_dtype(_out_dtype(out, dtype, "randn"), "normal_kernel_cpu", shape)
    meta = _meta(device, shape, dt, out, requires_grad)
    if meta is not None:
        return meta
    vals = _normal_values(_gen(generator), _numel(shape), dt)
    return _into_out(_result(vals.reshape(shape), None, requires_grad), out)


def _is_int(v):
    # torch parses these as int64: integers, NumPy integers and integer tensors; no bools
    if isinstance(v, bool):
        return False
    try:
        v.__index__()
    except (AttributeError, TypeError, RuntimeError, ValueError):
        return False
    return True


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False, low=None, high=None):
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``;
    int64 unless ``dtype`` says otherwise."""
    as_device(device, meta=True)
    check_pin_memory(pin_memory, "randint")
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if high is None and args:
        high = args.pop()
    two_form = low is None and not args         # randint(high, size)
    if low is None:
        low = args.pop() if args else 0
    if size is None or high is None or args:
        raise TypeError("randint() received an invalid combination of arguments - expected "
                        "(int high, tuple of ints size) or (int low, int high, tuple of ints "
                        "size)")
    if not (_is_int(low) and _is_int(high)):
        if two_form:                # the (high, size) form names the bad argument
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not "
                            f"{type(high).__name__}")
        raise TypeError(f"randint() received an invalid combination of arguments - got "
                        f"({type(low).__name__}, {type(high).__name__}, "
                        f"{type(size).__name__}), but expected one of: (int high, tuple of "
                        f"ints size) or (int low, int high, tuple of ints size)")
    _refuse_sparse(layout, "randint", "random_.from")
    shape = _shape_of((), size)
    dtype = _out_dtype(out, dtype, "randint")
    dt = _dt.int64 if dtype is None else dtype
    meta = _meta(device, shape, dt, out, requires_grad)
    if meta is not None:
        return meta
    vals = _random_from_to(_gen(generator), _numel(shape), _c_long(low), _c_long(high), dt)
    return _into_out(_result(vals.reshape(shape), None, requires_grad), out)


# randperm switches to the inside-out shuffle with 64-bit draws from this size on
_RANDPERM_BIG = (1 << 32) // 20


def _shuffle_by_swaps(j):
    """The result of ``for i: a[i], a[j[i]] = a[j[i]], a[i]`` on ``a = 0..n-1`` (``j[i] >= i``,
    ``n = len(j) + 1``), vectorised: position i is final after step i and receives the value
    that stood at ``j[i]``, i.e. what the last earlier step aimed at ``j[i]`` moved there (or
    ``j[i]`` itself); what a step moves is found by following those links to their start."""
    m = j.shape[0]
    n = m + 1
    idx = _np.arange(n)
    order = _np.argsort(j, kind="stable")          # steps grouped by target, in step order
    js = j[order]
    prev_same = _np.full(m, -1, _np.int64)         # the previous step with the same target
    same = js[1:] == js[:-1]
    prev_same[order[1:][same]] = order[:-1][same]
    last = _np.full(n, -1, _np.int64)
    last[js] = order                               # the last step aiming at each position
    # what stands at position i when step i comes: moved in by the last earlier step aiming
    # at i (a step aiming at i is never later than i; if i aims at itself, the one before)
    into = _np.where(last < idx, last, -1)
    selfs = _np.nonzero(last == idx)[0]
    into[selfs] = prev_same[selfs]
    root = _np.where(into >= 0, into, idx)
    while True:                                    # pointer jumping to the start of each chain
        nxt = root[root]
        if _np.array_equal(nxt, root):
            break
        root = nxt
    out = _np.empty(n, _np.int64)
    moved = _np.where(prev_same >= 0, root[_np.maximum(prev_same, 0)], j)
    out[:m] = _np.where(j == idx[:m], root[:m], moved)
    out[m] = root[m]
    return out


def _randperm_values(g, n):
    """torch's CPU randperm: a Fisher-Yates shuffle of 0..n-1 (step i swaps i with
    ``i + random() % (n - i)``), or for huge n the inside-out variant with 64-bit draws."""
    if n < _RANDPERM_BIG:
        if n < 2:
            return _np.arange(n, dtype=_np.int64)
        k = _np.arange(n, 1, -1, dtype=_np.uint64)
        steps = (g._u32(n - 1).astype(_np.uint64) % k).astype(_np.int64)
        steps += _np.arange(n - 1)
        if n >= 4096:
            return _shuffle_by_swaps(steps)
        a = list(range(n))
        for i, j in enumerate(steps.tolist()):
            a[i], a[j] = a[j], a[i]
        return _np.array(a, dtype=_np.int64)
    z = g._u64(n) % _np.arange(1, n + 1, dtype=_np.uint64)
    a = [0] * n
    for i, j in enumerate(z.tolist()):
        a[i] = a[j]
        a[j] = i
    return _np.array(a, dtype=_np.int64)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0..n-1 (int64 by default), torch's shuffle for the seed."""
    as_device(device, meta=True)
    check_pin_memory(pin_memory, "randperm")
    if not _is_int(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = n.__index__()
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    _refuse_sparse(layout, "randperm", "randperm.generator_out")
    dtype = _out_dtype(out, dtype, "randperm")
    dt = _dt.int64 if dtype is None else dtype
    if dt is _dt.bool_ or dt in _UNSIGNED_WIDE or dt.is_complex:
        raise _not_impl("randperm", dt)
    rng = _INT_RANGE.get(dt)
    if rng is not None and n - 1 > rng[1]:
        cname = {"unsigned char": "uint8_t", "signed char": "int8_t", "short": "int16_t",
                 "int": "int32_t", "long": "int64_t"}[rng[2]]
        raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    if dt in _FLOAT_DIGITS and n > (1 << _FLOAT_DIGITS[dt]) + 1:
        raise RuntimeError(f"n cannot be greater than {(1 << _FLOAT_DIGITS[dt]) + 1} for "
                           f"{_SHORT[dt]} type.")
    meta = _meta(device, (n,), dt, out, requires_grad)
    if meta is not None:
        return meta
    arr = _randperm_values(_gen(generator), n)
    return _into_out(_result(_ints_to_dtype(arr, dt), None, requires_grad), out)


def _like_dtype(input, dtype, pin_memory, name, layout):
    if not isinstance(input, Tensor):
        raise TypeError(f"expected Tensor as element 0 in argument 0, but got "
                        f"{type(input).__name__}")
    check_pin_memory(pin_memory, name)
    if _is_sparse(layout, name):  # torch's *_like first allocate with empty_strided
        raise _sparse_backend_refuses(layout, "empty_strided")
    return input.dtype if dtype is None else dtype


def _is_dense(a):
    """Non-overlapping and dense: the strides tile the elements exactly (any order)."""
    dims = [d for d in _iter_perm(a) if a.shape[d] != 1]
    expect = a.itemsize
    for d in reversed(dims):
        if a.strides[d] != expect:
            return False
        expect *= a.shape[d]
    return True


def _like_perm(input, memory_format):
    """Dimension order (outer to inner) of the tensor torch's ``*_like`` fills: the input's
    memory order under preserve_format when it is dense, else the requested format."""
    from .. import channels_last, channels_last_3d, preserve_format
    a = input._data
    if memory_format is channels_last and a.ndim == 4:
        return [0, 2, 3, 1]
    if memory_format is channels_last_3d and a.ndim == 5:
        return [0, 2, 3, 4, 1]
    if memory_format in (None, preserve_format) and _is_dense(a):
        return _iter_perm(a)
    return list(range(a.ndim))


def _like_values(values, shape, perm):
    """Arrange ``values`` (generated in the fill order of a tensor laid out as ``perm``) in
    ``shape`` (C order result)."""
    if perm == list(range(len(shape))):
        return values.reshape(shape)
    return _np.ascontiguousarray(values.reshape([shape[d] for d in perm]).transpose(
        _np.argsort(perm)))


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    """``rand`` with ``input``'s shape and (by default) dtype, filled in the memory order of
    the layout torch gives the result."""
    dt = _like_dtype(input, dtype, pin_memory, "rand_like", layout)
    if dt._category < 2:
        raise _not_impl("check_uniform_bounds", dt)
    shape = input._data.shape
    vals = _uniform_values(_gen(generator), _numel(shape), dt)
    return _result(_like_values(vals, shape, _like_perm(input, memory_format)), None,
                   requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    """``randn`` with ``input``'s shape and (by default) dtype (a non-contiguous layout takes
    torch's scalar path, as there)."""
    shape = input._data.shape if isinstance(input, Tensor) else ()
    dt = _float_dtype(_like_dtype(input, dtype, pin_memory, "randn_like", layout),
                      "normal_kernel_cpu", shape)
    perm = _like_perm(input, memory_format)
    contiguous = [d for d in perm if shape[d] != 1] == [d for d in range(len(shape))
                                                        if shape[d] != 1]
    vals = _normal_values(_gen(generator), _numel(shape), dt, contiguous=contiguous)
    return _result(_like_values(vals, shape, perm), None, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None, pin_memory=False):
    """``randint`` with ``input``'s shape and dtype: ``(input, high)`` or ``(input, low, high)``."""
    dt = _like_dtype(input, dtype, pin_memory, "randint_like", layout)
    if high is None:
        low, high = 0, low
    shape = input._data.shape
    vals = _random_from_to(_gen(generator), _numel(shape), _c_long(low), _c_long(high), dt)
    return _result(_like_values(vals, shape, _like_perm(input, memory_format)), None,
                   requires_grad)


# ----------------------------------------------------------------------------- distributions

def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples: tensor ``mean`` and/or ``std`` (broadcast) or two floats and ``size``."""
    check_pin_memory(pin_memory, "normal")
    g = _gen(generator)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - two "
                            "floats need a size")
        _check_std(std)
        shape = _shape_of((), size)
        dt = _float_dtype(dtype, "normal_kernel_cpu")
        vals = _normal_values(g, _numel(shape), dt, float(mean), float(std))
        return _result(vals.reshape(shape), out, requires_grad)
    dt = mean.dtype if mt else std.dtype
    for t in (mean, std):
        if isinstance(t, Tensor) and t.dtype._category < 2:
            raise _not_impl("normal_kernel_cpu", t.dtype)
    if st:
        if std._data.size and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(std)
    m = mean._data if mt else mean
    s = std._data if st else std
    try:
        shape = xp.broadcast_shapes(xp.shape(m), xp.shape(s))
    except ValueError:
        a, b = xp.shape(m), xp.shape(s)
        for i in range(1, min(len(a), len(b)) + 1):
            if a[-i] != b[-i] and 1 not in (a[-i], b[-i]):
                raise RuntimeError(f"The size of tensor a ({a[-i]}) must match the size of "
                                   f"tensor b ({b[-i]}) at non-singleton dimension "
                                   f"{max(len(a), len(b)) - i}") from None
        raise
    n = _numel(shape)
    # torch: output.normal_(0, 1) then mul_(std) and add_(mean), each rounded in the dtype
    # (normal_(0, std) then add_(mean) when std is a number)
    if st:
        z = _normal_values(g, n, dt).reshape(shape)
        z = (z * xp.asarray(s, dtype=dt.np)).astype(dt.np)
    else:
        z = _normal_values(g, n, dt, 0.0, float(std)).reshape(shape)
    res = (z + (xp.asarray(m, dtype=dt.np) if mt else dt.np.type(m))).astype(dt.np)
    r = wrap(res)
    if needs_grad(mean, std):
        if mt and st:
            record(r, NormalBackward3, (mean, std))
        elif mt:
            record(r, NormalBackward1, (mean,))
        else:
            record(r, NormalBackward2, (std,))
    return finish(r, out)


def _check_prob(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


def _bernoulli_scalar(g, n, p):
    """torch's bernoulli_(float p): a 53-bit uniform per element, ``u < p``."""
    return g._f64(n) < p


def _bernoulli_mask(shape, p, generator=None):
    """A bool array of ``shape`` (C order): ``bernoulli_(p)`` as torch draws it, e.g. for
    dropout's keep mask (``p`` = 1 - dropout probability)."""
    return _bernoulli_scalar(_gen(generator), _numel(shape), p).reshape(shape)


def _rrelu_noise(a, lower, upper, generator=None):
    """rrelu's training noise for input array ``a`` as torch draws it: for each element <= 0
    in C order one 53-bit uniform on [lower, upper) (bounds in the input's float type), the
    others 1."""
    g = _gen(generator)
    flat = _np.ascontiguousarray(a).reshape(-1)
    acc = _np.float32 if a.dtype != _np.float64 else _np.float64
    lo, hi = float(acc(lower)), float(acc(upper))
    neg = flat <= 0
    noise = _np.ones(flat.shape, dtype=a.dtype)
    u = g._f64(int(neg.sum()))
    noise[neg] = (u * (hi - lo) + lo).astype(acc)      # plain double arithmetic there
    return noise.reshape(a.shape)


def _bernoulli_tensor(g, probs):
    """torch's bernoulli_(Tensor p) values for probabilities ``probs`` (array in iteration
    order): float64 probabilities use a 53-bit uniform, others a 24-bit float one."""
    n = probs.size
    if probs.dtype == _np.float64:
        return g._f64(n) < probs.reshape(-1)
    return g._f32(n) < probs.reshape(-1).astype(_np.float32)


def _check_probs(probs):
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


@register()
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws with probabilities ``input`` (or a constant ``p``), in ``input``'s dtype."""
    g = _gen(generator)
    a = input._data
    if p is None:
        if input.dtype._category != 2:
            raise _not_impl("bernoulli_tensor_cpu_p_", input.dtype)
        _check_probs(a)
        # torch fills a contiguous empty_like(input): C order
        res = _bernoulli_tensor(g, _np.ascontiguousarray(a)).reshape(a.shape)
    else:
        _check_prob(p)
        if input.dtype.is_complex:
            raise _not_impl("bernoulli_scalar_cpu_", input.dtype)
        res = _bernoulli_scalar(g, a.size, p).reshape(a.shape)
    r = wrap(res.astype(a.dtype))
    if needs_grad(input):
        record(r, BernoulliBackward0 if p is None else NotImplemented, (input,))
    return finish(r, out)


def _multinomial_checks(input, num_samples, replacement):
    if input.dtype._category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_SHORT[input.dtype]}")
    a = input._data
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = a.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    w = a.reshape(-1, n)
    w64 = w.astype(xp.float64)
    if not xp.isfinite(w64).all() or (w64 < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (w64.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return a, w


def _topk_indices(keys, k):
    """Indices of the ``k`` largest entries of each row of ``keys`` (float64), in the order
    torch's CPU topk gives them: any sort agrees where the top ``k + 1`` keys have no tie;
    rows with one replay libstdc++'s steps."""
    order = xp.argsort(-keys, axis=1, kind="stable")
    top = xp.take_along_axis(keys, order[:, :min(k + 1, keys.shape[1])], axis=1)
    tied = (top[:, 1:] == top[:, :-1]).any(axis=1)
    out = order[:, :k].copy()
    for r in xp.flatnonzero(tied):
        out[r] = StdSelect(keys[r].tolist(), largest=True).topk(k)
    return out


@register()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices (int64) drawn by the weights in each row of a 1-D/2-D ``input``,
    as torch draws them (exponential race without replacement, CDF search with it)."""
    a, w = _multinomial_checks(input, num_samples, replacement)
    g = _gen(generator)
    rows, n = w.shape
    if not replacement or num_samples == 1:
        # torch: q ~ Exp(1) in the input's dtype, keys = p / q, the top num_samples keys
        q = _to_dtype(_exponential_doubles(g, w.size, 1.0), input.dtype).reshape(w.shape)
        with xp.errstate(divide="ignore", invalid="ignore"):
            keys = (w / q).astype(w.dtype)
        if num_samples == 1:
            idx = xp.argmax(keys, axis=1)[:, None]
        else:
            idx = _topk_indices(keys.astype(xp.float64), num_samples)
    else:
        # torch: a cumulative distribution summed in order in the dtype (float for half and
        # bfloat16), normalised, its last entry set to 1; the first entry >= a 53-bit uniform
        acc = xp.float32 if input.dtype in _REDUCED else w.dtype
        cum = xp.cumsum(w.astype(acc), axis=1, dtype=acc)
        cum = (cum / cum[:, -1:]).astype(acc)
        cum[:, -1] = 1
        idx = xp.empty((rows, num_samples), xp.int64)
        for r in range(rows):
            u = g._f64(num_samples)
            idx[r] = xp.searchsorted(cum[r].astype(xp.float64), u, side="left")
    idx = idx.astype(xp.int64).reshape(a.shape[:-1] + (num_samples,))
    return finish(wrap(idx), out)


class _Uniforms:
    """torch's 53-bit uniforms for the rejection samplers (poisson, gamma, binomial), one at a
    time without a NumPy call each: drawn ahead in blocks; ``close`` rewinds the generator and
    redraws only what was used, so the stream ends where torch's does. Carries the cached
    double normal like the generator."""

    __slots__ = ("g", "_state", "_fresh", "_buf", "_i", "_used", "_normal_double")

    def __init__(self, g, block=256):
        self.g = g
        self._state = g._bitgen.state
        self._fresh = g._fresh
        self._normal_double = g._normal_double
        self._buf = g._f64(block).tolist()
        self._i = self._used = 0

    def u(self):
        if self._i == len(self._buf):
            self._used += self._i
            self._buf = self.g._f64(2 * self._i).tolist()
            self._i = 0
        self._i += 1
        return self._buf[self._i - 1]

    def close(self):
        g = self.g
        g._bitgen.state = self._state
        g._fresh = self._fresh
        g._u64(self._used + self._i)        # two words per 53-bit uniform, as drawn
        g._normal_double = self._normal_double


def _libm_lgamma():
    # torch calls the C library's lgamma; CPython's math.lgamma is its own implementation
    try:
        import ctypes
        import ctypes.util
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = lib.lgamma
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_double]
        return fn
    except (OSError, AttributeError):
        return math.lgamma


_lgamma_c = None


def _sample_poisson(g, lam):
    """torch's sample_poisson for one rate (double) from ``_Uniforms`` ``g``: transformed
    rejection for rates >= 10, products of uniforms below."""
    global _lgamma_c
    if lam >= 10:
        if _lgamma_c is None:
            _lgamma_c = _libm_lgamma()
        log = math.log
        slam = math.sqrt(lam)
        loglam = log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u, v = g.u(), g.u()
            u -= 0.5
            us = 0.5 - abs(u)
            t = (2 * a / us + b) * u + lam + 0.43
            # (int64_t)std::floor(t): out-of-range values become INT64_MIN on x86
            k = math.floor(t) if -9.2e18 < t < 9.2e18 else -(1 << 63)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (log(v) + log(invalpha) - log(a / (us * us) + b)
                    <= -lam + k * loglam - _lgamma_c(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= g.u()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(input, generator=None):
    """Poisson draws with rates ``input`` (floating), in ``input``'s dtype."""
    if input.dtype._category != 2:
        raise _not_impl("poisson_cpu", input.dtype)
    a = input._data
    lam = a.astype(xp.float64)
    if lam.size and not (lam >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = _gen(generator)
    # torch fills a contiguous result, so the rates are taken in C order
    s = _Uniforms(g)
    try:
        vals = [float(_sample_poisson(s, r)) for r in lam.reshape(-1).tolist()]
    finally:
        s.close()
    res = _to_dtype(_np.array(vals, dtype=_np.float64).reshape(a.shape), input.dtype)
    r = wrap(res)
    if needs_grad(input):
        record(r, PoissonBackward0, (input,))
    return r


def _normal_double(g):
    """One N(0, 1) double from torch's normal_distribution<double> (cache first); ``g`` is a
    ``_Uniforms``."""
    v = g._normal_double
    if v is not None:
        g._normal_double = None
        return v
    u1, u2 = g.u(), g.u()
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    g._normal_double = r * math.sin(theta)
    return r * math.cos(theta) + 0.0


_F32_1_3 = float(_np.float32(1.0) / _np.float32(3.0))
_F32_0331 = float(_np.float32(0.0331))
_FLT_MIN = float(_np.finfo(_np.float32).tiny)


def _gamma_values(g, alpha, dt):
    """Gamma(alpha, 1) draws as torch's _standard_gamma on the CPU (Marsaglia-Tsang with a
    boost below 1), one per element of ``alpha`` in C order, as a float64 array; float32
    alphas are combined in float where torch's float kernel does."""
    s = _Uniforms(g)
    try:
        return _gamma_draws(s, alpha, dt)
    finally:
        s.close()


def _gamma_draws(g, alpha, dt):
    single = dt is _dt.float32 or dt in _REDUCED
    f32 = _np.float32
    tiny = _FLT_MIN if single else float(_np.finfo(_np.float64).tiny)
    out = []
    for a in alpha.reshape(-1).tolist():
        scale = 1.0
        if a < 1.0:
            if a == 0.0:
                out.append(tiny)        # torch clamps every draw to the dtype's min
                continue
            inv = float(_np.divide(f32(1.0), f32(a))) if single else 1.0 / a
            scale *= math.pow(1 - g.u(), inv)
            a = float(f32(a) + f32(1.0)) if single else a + 1.0
        d = float(f32(a) - f32(_F32_1_3)) if single else a - _F32_1_3
        root = math.sqrt(9.0 * d) if d >= 0 else math.nan      # C's sqrt and 1/0
        c = 1.0 / root if root else math.inf
        while True:
            while True:
                x = _normal_double(g)
                y = 1.0 + c * x
                if not y <= 0:          # a NaN y leaves the loop, as in torch
                    break
            v = y * y * y
            u = 1 - g.u()
            xx = x * x
            if u < 1.0 - _F32_0331 * xx * xx or math.log(u) < 0.5 * xx + d * (
                    1.0 - v + math.log(v)):
                val = scale * d * v
                break
        out.append(max(tiny, float(f32(val)) if single else val))
    return _np.array(out, dtype=_np.float64).reshape(alpha.shape)


class StandardGammaBackward0(Node):
    def backward(self, grad):
        # the implicit reparameterisation gradient lives with the distributions
        from ..distributions.utils import _standard_gamma_grad
        return grad * _standard_gamma_grad(self._saved_result, self._saved_self)


def _gamma_input(input, kernel):
    if input.dtype not in (_dt.float32, _dt.float64):
        raise _not_impl(kernel, input.dtype)
    a = input._data                 # torch fills a contiguous result: C order
    return _np.ascontiguousarray(a).reshape(a.shape)


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) draws (float32/float64) with torch's values for the seed;
    differentiable in ``input`` by implicit reparameterisation."""
    a = _gamma_input(input, "gamma_cpu")
    with _np.errstate(over="ignore", divide="ignore"):
        vals = _gamma_values(_gen(generator), a.astype(_np.float64), input.dtype)
    r = wrap(vals.astype(a.dtype))
    if needs_grad(input):
        record(r, StandardGammaBackward0, (input,), self=input, result=r)
    return r


_DBL_MIN = float(_np.finfo(_np.float64).tiny)


def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) draws over the last dim, as torch's CPU kernel: double gamma draws,
    normalised in double, cast to the dtype and clamped to [tiny, 1 - ulp]."""
    a = _gamma_input(input, "dirichlet")
    gam = _gamma_values(_gen(generator), a.astype(_np.float64), _dt.float64)
    gam = _np.maximum(gam, _DBL_MIN)
    total = _R.torch_sum_last(gam) if gam.ndim and gam.size else gam
    with _np.errstate(invalid="ignore", divide="ignore"):
        res = (gam / total).astype(a.dtype)
    top = _np.nextafter(a.dtype.type(1), a.dtype.type(0))
    res = _np.minimum(_np.maximum(res, _np.finfo(a.dtype).tiny), top)
    r = wrap(_np.asarray(res, dtype=a.dtype))
    if needs_grad(input):
        record(r, NotImplemented, (input,), op="aten::_sample_dirichlet")
    return r


_BINOM_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
               0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
               0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
               0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _BINOM_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


_log1pf_c = []


def _log1pf(x):
    """The C library's float log1p (torch's std::log1p on a float), else float64 rounded."""
    if not _log1pf_c:
        try:
            import ctypes
            import ctypes.util
            fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").log1pf
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
            _log1pf_c.append(fn)
        except (OSError, AttributeError):
            _log1pf_c.append(lambda v: float(_np.float32(math.log1p(v))))
    return _log1pf_c[0](x)


def _binomial_one(g, count, prob, single):
    """torch's sample_binomial for one (count, prob) from ``_Uniforms`` ``g``: BTRS when the
    mean is 10 or more, inversion by geometric waiting times below; ``single`` does float32
    where torch's float kernel does."""
    f = (lambda v: float(_np.float32(v))) if single else float

    def btrs(n, p):
        stddev = f(math.sqrt(f(f(n * p) * f(1 - p))) if single else math.sqrt(n * p * (1 - p)))
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = f(n * p) + 0.5
        v_r = 0.92 - 4.2 / b
        r = f(p / f(1 - p))
        alpha = (2.83 + 5.1 / b) * stddev
        m = math.floor(f(f(n + 1) * p))
        while True:
            u, v = g.u(), g.u()
            u -= 0.5
            us = 0.5 - abs(u)
            k = f(math.floor((2 * a / us + b) * u + c))
            if k < 0 or k > n:
                continue
            if us >= 0.07 and v <= v_r:
                return k
            v = math.log(v * alpha / (a / (us * us) + b))
            upper = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                     + f(n + 1) * math.log((n - m + 1) / f(f(n - k) + 1))
                     + (k + 0.5) * math.log(r * f(f(n - k) + 1) / f(k + 1))
                     + _stirling_tail(m) + _stirling_tail(n - m)
                     - _stirling_tail(k) - _stirling_tail(f(n - k)))
            if v <= upper:
                return k

    def inversion(n, p):
        logprob = _log1pf(-p) if single else math.log1p(-p)
        geom_sum = 0.0
        num = 0.0
        while True:
            u = g.u()
            geom_sum += math.ceil((math.log(u) if u > 0 else -math.inf) / logprob)
            if geom_sum > n:
                return num
            num += 1

    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        return btrs(count, prob) if f(count * prob) >= 10.0 else inversion(count, prob)
    if prob > 0.5:
        q = f(1.0 - prob)
        if f(count * q) >= 10.0:
            return f(count - btrs(count, q))
        return f(count - inversion(count, q))
    return math.nan


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (float32/float64, the dtype of ``count``), torch's values
    for the seed; not differentiable."""
    if count.dtype not in (_dt.float32, _dt.float64):
        raise _not_impl("binomial_cpu", count.dtype)
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_SHORT[prob.dtype]} but expected "
                           f"{_SHORT[count.dtype]}")
    g = _gen(generator)
    shape = xp.broadcast_shapes(count._data.shape, prob._data.shape)
    c = xp.broadcast_to(count._data, shape).reshape(-1).tolist()
    p = xp.broadcast_to(prob._data, shape).reshape(-1).tolist()
    single = count.dtype is _dt.float32
    s = _Uniforms(g)
    try:
        vals = [_binomial_one(s, a, b, single) for a, b in zip(c, p)]
    finally:
        s.close()
    r = wrap(_np.array(vals, dtype=count.dtype.np).reshape(shape))
    if needs_grad(count, prob):
        record(r, NotImplemented, (count, prob), op="aten::binomial")
    return r


# ----------------------------------------------------------------------------- in-place

def _contiguous_fill(self):
    return self._data.flags.c_contiguous


def _fill(self, vals, node, p=None):
    """Write ``vals`` (1-D, TensorIterator order) into ``self`` and record ``node``."""
    arr = _in_iter_order(xp.asarray(vals), self._data) if xp.ndim(vals) else vals
    if needs_grad(self, p):
        # recorded like any in-place op (leaf check, rebasing); the gradient is zero
        result = wrap(xp.broadcast_to(xp.asarray(arr), self._data.shape).astype(
            self._data.dtype))
        record(result, node, (self,) if p is None else (self, p))
        return assign_inplace(self, result)
    xp.copyto(self._data, arr, casting="unsafe")
    self._bump_version()
    return self


class _ZeroGrad(Node):
    """A random op's node: samples do not depend on the parameters differentiably."""

    def backward(self, grad):
        out = tuple(None if nx is None else grad.new_zeros(m[0])
                    for (nx, _), m in zip(self.next_functions, self._input_meta))
        return out if len(out) > 1 else out[0]


def _zero_node(name):
    return type(name, (_ZeroGrad,), {"__slots__": ()})


UniformBackward0 = _zero_node("UniformBackward0")
NormalBackward0 = _zero_node("NormalBackward0")
NormalBackward1 = _zero_node("NormalBackward1")
NormalBackward2 = _zero_node("NormalBackward2")
NormalBackward3 = _zero_node("NormalBackward3")
RandomBackward0 = _zero_node("RandomBackward0")
RandomBackward1 = _zero_node("RandomBackward1")
RandomBackward2 = _zero_node("RandomBackward2")
ExponentialBackward0 = _zero_node("ExponentialBackward0")
GeometricBackward0 = _zero_node("GeometricBackward0")
CauchyBackward0 = _zero_node("CauchyBackward0")
LogNormalBackward0 = _zero_node("LogNormalBackward0")
BernoulliBackward0 = _zero_node("BernoulliBackward0")
BernoulliBackward1 = _zero_node("BernoulliBackward1")
BernoulliBackward2 = _zero_node("BernoulliBackward2")
PoissonBackward0 = _zero_node("PoissonBackward0")


class NotImplemented(Node):  # noqa: A001 - torch's node name for ops without a derivative
    def backward(self, grad):
        op = getattr(self, "_saved_op", "aten::bernoulli")
        raise RuntimeError(f"derivative for {op} is not implemented")


def _continuous(self, name, check_empty=True):
    dt = self.dtype
    if dt._category != 2 and (check_empty or self._data.size):
        cname = {_dt.int64: "long int", _dt.int32: "int", _dt.int16: "short int",
                 _dt.int8: "signed char", _dt.uint8: "unsigned char", _dt.bool_: "bool"}
        spelled = _SHORT[dt] if name == "Exponential" else cname.get(dt, _SHORT[dt])
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {spelled}")
    return dt


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill with uniform samples on [from_, to), torch's values for the seed."""
    dt = self.dtype
    if dt._category < 2:
        raise _not_impl("check_uniform_bounds", dt)
    _check_uniform(from_, to, dt.to_real() if dt.is_complex else dt)
    vals = _uniform_values(_gen(generator), self._data.size, dt, from_, to)
    return _fill(self, vals, UniformBackward0)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples of N(mean, std**2), torch's values for the seed."""
    dt = self.dtype
    if dt._category < 2 and self._data.size:
        raise _not_impl("normal_kernel_cpu", dt)
    _check_std(std)
    if not self._data.size:
        return self
    vals = _normal_values(_gen(generator), self._data.size, dt, float(mean), float(std),
                          _contiguous_fill(self))
    return _fill(self, vals, NormalBackward0)


_UNSET = object()


def _c_long(v):
    v = int(v)
    if not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return v


def random_(self, *args, generator=None, **kwargs):
    """Fill with integers: ``random_(to)`` on [0, to), ``random_(from, to)`` on [from, to),
    ``random_(from, None)`` on [from, dtype max], ``random_()`` on [0, dtype max] (for
    floats: [0, 2**mantissa digits])."""
    from_ = kwargs.pop("from", kwargs.pop("from_", _UNSET))
    to = kwargs.pop("to", _UNSET)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 arguments ({len(args)} given)")
    if len(args) == 2:
        from_, to = args
    elif len(args) == 1:
        if from_ is _UNSET and to is _UNSET:
            to = args[0]
        elif from_ is _UNSET:
            from_ = args[0]
        else:
            to = args[0]
    g = _gen(generator)
    dt = self.dtype
    n = self._data.size
    if from_ is _UNSET and to is _UNSET:
        if dt.is_complex and not n:
            return _fill(self, 0, RandomBackward2)
        return _fill(self, _random_default(g, n, dt), RandomBackward2)
    if from_ is _UNSET:
        # random_(to): [0, to)
        return _fill(self, _random_from_to(g, n, 0, _c_long(to), dt), RandomBackward1)
    if to is _UNSET or to is None:
        if dt.is_complex:
            raise RuntimeError("random_from_to_impl handles only integral, floating-point "
                               "and boolean types")
        return _fill(self, _random_from(g, n, _c_long(from_), dt), RandomBackward0)
    return _fill(self, _random_from_to(g, n, _c_long(from_), _c_long(to), dt),
                 RandomBackward0)


def _exponential_doubles(g, n, lambd):
    """torch's exponential_distribution<double>: ``-1/lambda * log1p(-u)``."""
    u = g._f64(n)
    lg = libm("log1p", -u)
    return (-1.0 / lambd) * lg


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exponential(rate=lambd) samples."""
    _continuous(self, "Exponential", check_empty=False)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    vals = _exponential_doubles(_gen(generator), self._data.size, float(lambd))
    return _fill(self, _to_dtype(vals, self.dtype), ExponentialBackward0)


def geometric_(self, p, *, generator=None):
    """Fill with Geometric(p) samples: trials up to and including the first success (>= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype.is_complex or self.dtype is _dt.bool_:
        raise _not_impl("geometric_cpu", self.dtype)
    u = _gen(generator)._f64(self._data.size)
    with xp.errstate(divide="ignore"):
        vals = xp.ceil(libm("log", u) / math.log1p(-p))
    if self.dtype._category < 2:
        vals = vals.astype(xp.int64)
    return _fill(self, _to_dtype(vals, self.dtype), GeometricBackward0)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) samples."""
    _continuous(self, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    u = _gen(generator)._f64(self._data.size)
    t = libm("tan", math.pi * (u - 0.5))
    vals = _R.fma64(float(sigma), t, float(median)) if median else float(sigma) * t + 0.0
    return _fill(self, _to_dtype(_np.asarray(vals), self.dtype), CauchyBackward0)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std**2)) samples."""
    if self.dtype._category != 2 and self._data.size:
        raise _not_impl("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    z = _affine64(_box_muller_doubles(_gen(generator), self._data.size), float(mean),
                  float(std))
    vals = libm("exp", z)
    return _fill(self, _to_dtype(vals, self.dtype), LogNormalBackward0)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 draws of probability ``p`` (a float, or a tensor broadcast to self)."""
    g = _gen(generator)
    if self.dtype.is_complex:
        raise _not_impl("bernoulli_scalar_cpu_" if not isinstance(p, Tensor)
                        else "bernoulli_tensor_cpu_self_", self.dtype)
    if isinstance(p, Tensor):
        probs = p.expand(self._data.shape)._data
        _check_probs(probs)
        perm = _iter_perm(self._data)
        vals = _bernoulli_tensor(g, _np.ascontiguousarray(probs.transpose(perm)))
        return _fill(self, vals, BernoulliBackward1, p)
    _check_prob(p)
    return _fill(self, _bernoulli_scalar(g, self._data.size, p), BernoulliBackward2)


for _fn in (uniform_, normal_, random_, exponential_, geometric_, cauchy_, log_normal_,
            bernoulli_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
