"""Random sampling: rand/randn/randint/randperm and friends, normal, bernoulli, multinomial,
poisson, the in-place samplers (``uniform_``, ``normal_``, ``random_``...), and the
seeding functions of the default generator.

Every op draws from a ``Generator`` (the default one unless ``generator=`` is given), so a
seed reproduces results exactly. Floats are sampled in float32/float64 directly (never
widened to float64 unless asked); float16/bfloat16 uniforms are built from integers so they
stay in [0, 1).
"""

from __future__ import annotations

import warnings

from .._core import dtype as _dt
from .._core.device import as_device
from .._core.random import Generator, default_generator
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
from .creation import check_pin_memory

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "poisson"]


# ----------------------------------------------------------------------------- seeding

def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator from a ``get_rng_state`` tensor."""
    default_generator.set_state(new_state)


# ----------------------------------------------------------------------------- helpers

def _np_gen(generator):
    if generator is None:
        return default_generator.np
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator.np


def _not_impl(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_SHORT[dt]}\'')


def _uniform01(g, shape, dt):
    """Uniform [0, 1) samples of dtype ``dt`` (a floating or complex dtype)."""
    if dt.is_complex:
        part = dt.to_real()
        return (_uniform01(g, shape, part) + 1j * _uniform01(g, shape, part)).astype(dt.np)
    if dt is _dt.float32 or dt is _dt.float64:
        return g.random(shape, dtype=dt.np)
    # k / 2**bits with bits = the dtype's precision: exactly representable, never 1.0
    bits = 11 if dt is _dt.float16 else 8
    return (g.integers(0, 1 << bits, shape) * (1.0 / (1 << bits))).astype(dt.np)


def _standard_normal(g, shape, dt):
    """N(0, 1) samples of dtype ``dt`` (complex: N(0, 1/2) real and imaginary parts)."""
    if dt.is_complex:
        part = dt.to_real().np
        z = g.standard_normal(shape, dtype=part) + 1j * g.standard_normal(shape, dtype=part)
        return (z * 0.7071067811865476).astype(dt.np)
    if dt is _dt.float32 or dt is _dt.float64:
        return g.standard_normal(shape, dtype=dt.np)
    return g.standard_normal(shape, dtype=xp.float32).astype(dt.np)


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


def _float_dtype(dtype, kernel, shape=None):
    # torch's normal kernels are not reached (and do not complain) for empty results
    dt = _dt.get_default_dtype() if dtype is None else dtype
    if dt._category < 2 and (shape is None or 0 not in shape):
        raise _not_impl(kernel, dt)
    return dt


# integer ranges and the C names torch uses in its bound-check messages
_INT_RANGE = {_dt.bool_: (0, 1, "bool"), _dt.uint8: (0, 255, "unsigned char"),
              _dt.int8: (-128, 127, "signed char"), _dt.int16: (-(1 << 15), (1 << 15) - 1,
                                                            "short"),
              _dt.int32: (-(1 << 31), (1 << 31) - 1, "int"),
              _dt.int64: (-(1 << 63), (1 << 63) - 1, "long")}
# random_() with no bounds covers [0, 2**digits] for floats (every integer is exact there)
_FLOAT_DIGITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}


def _random_ints(g, low, high, shape, dt):
    """Integers in [low, high) stored as ``dt``, with torch's bound checks."""
    if dt.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    rng = _INT_RANGE.get(dt)
    if rng is not None:
        lo, hi, cname = rng
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {cname}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {cname}")
    elif dt in _FLOAT_DIGITS:
        lim = 1 << _FLOAT_DIGITS[dt]
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not -lim <= v <= lim:
                warnings.warn(f"{name} is out of bounds [-(2^{_FLOAT_DIGITS[dt]}), "
                              f"2^{_FLOAT_DIGITS[dt]}]. Due to precision limitations {dt} can "
                              f"support discrete uniform distribution only within this range.",
                              UserWarning, stacklevel=3)
    return g.integers(low, high, shape, dtype=xp.int64).astype(dt.np)


# ----------------------------------------------------------------------------- factories

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **kw):
    """Uniform samples on [0, 1) of the given size (default dtype)."""
    as_device(device)
    check_pin_memory(pin_memory, "rand")
    shape = _shape_of(size, kw.pop("size", None))
    dt = _float_dtype(dtype, "check_uniform_bounds")
    return _result(_uniform01(_np_gen(generator), shape, dt), out, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **kw):
    """Standard normal samples of the given size (default dtype)."""
    as_device(device)
    check_pin_memory(pin_memory, "randn")
    shape = _shape_of(size, kw.pop("size", None))
    dt = _float_dtype(dtype, "normal_kernel_cpu", shape)
    return _result(_standard_normal(_np_gen(generator), shape, dt), out, requires_grad)


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False, low=None, high=None):
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``;
    int64 unless ``dtype`` says otherwise."""
    as_device(device)
    check_pin_memory(pin_memory, "randint")
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if size is None or high is None or args:
        raise TypeError("randint() received an invalid combination of arguments - expected "
                        "(int high, tuple of ints size) or (int low, int high, tuple of ints "
                        "size)")
    shape = _shape_of((), size)
    dt = _dt.int64 if dtype is None else dtype
    arr = _random_ints(_np_gen(generator), int(low), int(high), shape, dt)
    return _result(arr, out, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0..n-1 (int64 by default)."""
    as_device(device)
    check_pin_memory(pin_memory, "randperm")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dt.int64 if dtype is None else dtype
    rng = _INT_RANGE.get(dt)
    if (rng is not None and n - 1 > rng[1]) or (dt in _FLOAT_DIGITS and
                                                 n > (1 << _FLOAT_DIGITS[dt]) + 1):
        raise RuntimeError(f"n ({n}) is too large for dtype {dt}: values would overflow")
    arr = _np_gen(generator).permutation(n).astype(dt.np)
    return _result(arr, out, requires_grad)


def _like_dtype(input, dtype, pin_memory, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"expected Tensor as element 0 in argument 0, but got "
                        f"{type(input).__name__}")
    check_pin_memory(pin_memory, name)
    return input.dtype if dtype is None else dtype


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    """``rand`` with ``input``'s shape and (by default) dtype."""
    dt = _like_dtype(input, dtype, pin_memory, "rand_like")
    if dt._category < 2:
        raise _not_impl("check_uniform_bounds", dt)
    return _result(_uniform01(_np_gen(generator), input._data.shape, dt), None, requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    """``randn`` with ``input``'s shape and (by default) dtype."""
    dt = _float_dtype(_like_dtype(input, dtype, pin_memory, "randn_like"), "normal_kernel_cpu",
                      input._data.shape)
    return _result(_standard_normal(_np_gen(generator), input._data.shape, dt), None,
                   requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None, pin_memory=False):
    """``randint`` with ``input``'s shape and dtype: ``(input, high)`` or ``(input, low, high)``."""
    dt = _like_dtype(input, dtype, pin_memory, "randint_like")
    if high is None:
        low, high = 0, low
    arr = _random_ints(_np_gen(generator), int(low), int(high), input._data.shape, dt)
    return _result(arr, None, requires_grad)


# ----------------------------------------------------------------------------- distributions

def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples: tensor ``mean`` and/or ``std`` (broadcast) or two floats and ``size``."""
    check_pin_memory(pin_memory, "normal")
    g = _np_gen(generator)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - two "
                            "floats need a size")
        _check_std(std)
        dt = _float_dtype(dtype, "normal_kernel_cpu")
        z = _standard_normal(g, _shape_of((), size), dt)
        return _result((z * std + mean).astype(dt.np), out, requires_grad)
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
    shape = xp.broadcast_shapes(xp.shape(m), xp.shape(s))
    z = _standard_normal(g, shape, dt)
    res = z.astype(xp.float32) * s + m if dt in (_dt.float16, _dt.bfloat16) else z * s + m
    r = wrap(xp.asarray(res).astype(dt.np))
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


@register()
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws with probabilities ``input`` (or a constant ``p``), in ``input``'s dtype."""
    g = _np_gen(generator)
    a = input._data
    if p is None:
        if input.dtype._category != 2:
            raise _not_impl("bernoulli_tensor_cpu_p_", input.dtype)
        probs = a.astype(xp.float64)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    else:
        _check_prob(p)
        probs = p
    r = wrap((g.random(a.shape) < probs).astype(a.dtype))
    if needs_grad(input):
        record(r, BernoulliBackward0 if p is None else NotImplemented, (input,))
    return finish(r, out)


@register()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices (int64) drawn by the weights in each row of a 1-D/2-D ``input``."""
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
    w = a.reshape(-1, n).astype(xp.float64)
    if not xp.isfinite(w).all() or (w < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = w.sum(axis=1)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _np_gen(generator)
    if replacement:
        cdf = xp.cumsum(w, axis=1)
        cdf /= cdf[:, -1:]  # the last entry becomes exactly 1, so every draw lands
        u = g.random((w.shape[0], num_samples))
        idx = xp.stack([xp.searchsorted(c, x, side="right") for c, x in zip(cdf, u)])
    else:
        # Exponential race: the k smallest Exp(1)/w keys are a weighted sample without
        # replacement (zero weights get infinite keys and come last).
        with xp.errstate(divide="ignore"):
            keys = g.exponential(size=w.shape) / w
        idx = xp.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    idx = idx.astype(xp.int64).reshape(a.shape[:-1] + (num_samples,))
    return finish(wrap(idx), out)


def poisson(input, generator=None):
    """Poisson draws with rates ``input`` (floating), in ``input``'s dtype."""
    if input.dtype._category != 2:
        raise _not_impl("poisson_cpu", input.dtype)
    lam = input._data.astype(xp.float64)
    if lam.size and not (lam >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    r = wrap(xp.asarray(_np_gen(generator).poisson(lam)).astype(input._data.dtype))
    if needs_grad(input):
        record(r, PoissonBackward0, (input,))
    return r


# ----------------------------------------------------------------------------- in-place

def _fill(self, arr, node, p=None):
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


class NotImplemented(Node):  # noqa: A001 - torch's node name for bernoulli(p=float)
    __slots__ = ()

    def backward(self, grad):
        raise RuntimeError("derivative for aten::bernoulli is not implemented")


def _continuous(self, name, check_empty=True):
    dt = self.dtype
    if dt._category != 2 and (check_empty or self._data.size):
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {dt}")
    return dt


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill with uniform samples on [from_, to)."""
    dt = self.dtype
    if dt._category < 2:
        raise _not_impl("check_uniform_bounds", dt)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    g = _np_gen(generator)
    shape = self._data.shape
    if dt.is_complex:
        part = dt.to_real()
        u = _uniform01(g, shape, part) + 1j * _uniform01(g, shape, part)
    else:
        u = _uniform01(g, shape, _dt.float32 if dt._category == 2 and dt.itemsize < 4 else dt)
    return _fill(self, u * (to - from_) + from_ if (from_, to) != (0.0, 1.0) else u,
                 UniformBackward0)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples of N(mean, std**2)."""
    dt = self.dtype
    if dt._category < 2 and self._data.size:
        raise _not_impl("normal_kernel_cpu", dt)
    _check_std(std)
    z = _standard_normal(_np_gen(generator), self._data.shape,
                         _dt.float32 if dt in (_dt.float16, _dt.bfloat16) else dt)
    if z.dtype.kind in "fc":  # in place: fresh temporaries double the time of large inits
        z *= std
        z += mean
    else:  # bool samples
        z = z * std + mean
    return _fill(self, z, NormalBackward0)


def random_(self, from_=None, to=None, *, generator=None):
    """Fill with integers: ``random_(to)`` on [0, to), ``random_(from, to)`` on [from, to),
    ``random_()`` on [0, dtype max] (for floats: [0, 2**mantissa digits])."""
    node = RandomBackward0
    if to is None and from_ is not None:
        from_, to = 0, from_
        node = RandomBackward1
    dt = self.dtype
    if from_ is None:
        if dt.is_complex and to is None:
            if self._data.size:
                raise _not_impl("random_kernel_cpu", dt)
            return _fill(self, 0, RandomBackward2)
        node = RandomBackward2
        from_ = 0
        if to is None:
            to = (_INT_RANGE[dt][1] if dt in _INT_RANGE else
                  1 << _FLOAT_DIGITS.get(dt, 24)) + 1
    return _fill(self, _random_ints(_np_gen(generator), int(from_), int(to), self._data.shape,
                                    dt), node)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exponential(rate=lambd) samples."""
    _continuous(self, "Exponential", check_empty=False)
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(self, _np_gen(generator).exponential(1.0 / lambd, self._data.shape),
                 ExponentialBackward0)


def geometric_(self, p, *, generator=None):
    """Fill with Geometric(p) samples: trials up to and including the first success (>= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype.is_complex:
        raise _not_impl("geometric_cpu", self.dtype)
    return _fill(self, _np_gen(generator).geometric(p, self._data.shape), GeometricBackward0)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) samples."""
    _continuous(self, "Cauchy")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill(self, median + sigma * _np_gen(generator).standard_cauchy(self._data.shape),
                 CauchyBackward0)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std**2)) samples."""
    if self.dtype._category != 2 and self._data.size:
        raise _not_impl("log_normal_cpu", self.dtype)
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, _np_gen(generator).lognormal(mean, std, self._data.shape),
                 LogNormalBackward0)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 draws of probability ``p`` (a float, or a tensor broadcast to self)."""
    g = _np_gen(generator)
    if self.dtype.is_complex:
        raise _not_impl("bernoulli_scalar_cpu_", self.dtype)
    if isinstance(p, Tensor):
        probs = p.expand(self._data.shape)._data.astype(xp.float64)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    else:
        _check_prob(p)
        probs = p
    if isinstance(p, Tensor):
        return _fill(self, g.random(self._data.shape) < probs, BernoulliBackward1, p)
    return _fill(self, g.random(self._data.shape) < probs, BernoulliBackward2)


for _fn in (uniform_, normal_, random_, exponential_, geometric_, cauchy_, log_normal_,
            bernoulli_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
