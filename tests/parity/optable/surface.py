"""The long tail of torch's surface: unsafe splits, nextafter, renorm, index_reduce."""

import warnings

import numpy as np

from ..harness import ALL, F32, FLOATS, INTS, REALS, OpInfo, S, T, make_array
from ..samples import binary, mixed_dtype_pairs


def _splits(dtype, rng):
    for args in [(2,), (3, 1), (2, -1), (5, 0)]:
        yield S(make_array(rng, (5, 4), dtype), *args)
    yield S(T(make_array(rng, (4, 5), dtype)), 2, 1)


def _split_sizes(dtype, rng):
    yield S(make_array(rng, (5, 4), dtype), [2, 3])
    yield S(make_array(rng, (5, 4), dtype), [1, 1, 2], 1)
    yield S(T(make_array(rng, (4, 5), dtype)), [4], 1)
    yield S(make_array(rng, (5, 4), dtype), [2, 2])  # sizes not summing to the length


def _nextafter(dtype, rng):
    yield from binary(dtype, rng)
    a = make_array(rng, (4,), dtype)
    yield S(a, a.copy())  # equal operands: the value itself
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _renorm(dtype, rng):
    for p, dim, maxnorm in [(2, 0, 1.0), (1, 1, 2.0), (3, -1, 0.5), (float("inf"), 0, 1.5),
                            (2, 1, 100.0)]:
        yield S(make_array(rng, (3, 4), dtype), p, dim, maxnorm)
    yield S(T(make_array(rng, (4, 3), dtype)), 2, 0, 1.0)
    yield S(make_array(rng, (2, 3, 2), dtype), 2, 1, 1.0)
    for bad in [(0, 0, 1.0), (2, 0, -1.0), (2, 2, 1.0)]:
        yield S(make_array(rng, (3, 4), dtype), *bad)
    yield S(make_array(rng, (4,), dtype), 2, 0, 1.0)


def _index_reduce(dtype, rng):
    idx = np.array([0, 2, 2, 1, 0])
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            x, s = make_array(rng, (4, 3), dtype, -3, 3), make_array(rng, (5, 3), dtype, -3, 3)
            yield S(x, 0, idx, s, reduce, include_self=include_self)
        yield S(T(make_array(rng, (3, 4), dtype, -3, 3)), 1, np.array([3, 0, 3]),
                make_array(rng, (4, 3), dtype, -3, 3), reduce)
    x = make_array(rng, (4, 3), dtype)
    yield S(x, 0, idx, make_array(rng, (5, 3), dtype), "sum")              # unknown reduce
    yield S(x, 0, idx.astype(np.float32), make_array(rng, (5, 3), dtype), "prod")
    yield S(x, 0, np.array([0, 7]), make_array(rng, (2, 3), dtype), "amax")  # out of range
    yield S(x, 0, idx[:3], make_array(rng, (5, 3), dtype), "mean")          # count mismatch


def _index_reduce_fn(lib, x, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "index_reduce() is in beta" notice
        return lib.index_reduce(x, *args, **kwargs)


def _index_reduce_inplace(lib, x, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.clone().index_reduce_(*args, **kwargs)


def _ties(dtype, rng):
    # integer-valued floats so that amax/amin meet ties and prod meets zeros
    idx = np.array([0, 1, 1, 2, 0, 1])
    for reduce in ("prod", "amax", "amin"):
        for include_self in (True, False):
            x = np.round(make_array(rng, (3, 4), dtype, -2, 2))
            s = np.round(make_array(rng, (6, 4), dtype, -2, 2))
            yield S(x, 0, idx, s, reduce, include_self=include_self)


OPS = [
    OpInfo("unsafe_split", lambda lib, a, *args: lib.unsafe_split(a, *args), _splits,
           dtypes=ALL, covers=("Tensor.unsafe_split",), grad=True),
    OpInfo("unsafe_chunk", lambda lib, a, c, *d: lib.unsafe_chunk(a, c, *d),
           lambda d, r: [S(make_array(r, (5, 4), d), 2), S(make_array(r, (5, 4), d), 3, 1),
                         S(make_array(r, (5, 4), d), 0)],
           dtypes=ALL, covers=("Tensor.unsafe_chunk",), grad=True),
    OpInfo("unsafe_split_with_sizes", lambda lib, a, *args: lib.unsafe_split_with_sizes(a, *args),
           _split_sizes, dtypes=ALL, covers=("Tensor.unsafe_split_with_sizes",), grad=True),
    OpInfo("nextafter", lambda lib, a, b: lib.nextafter(a, b), _nextafter, dtypes=REALS,
           covers=("Tensor.nextafter",), grad=True, gradcheck=False),
    OpInfo("Tensor.nextafter_", lambda lib, a, b: a.clone().nextafter_(b), binary,
           dtypes=FLOATS),
    OpInfo("renorm", lambda lib, a, *args: lib.renorm(a, *args), _renorm, dtypes=FLOATS,
           covers=("Tensor.renorm",), grad=True, tol={"float16": (1e-2, 1e-2)}),
    OpInfo("Tensor.renorm_", lambda lib, a, *args: a.clone().renorm_(*args), _renorm),
    OpInfo("index_reduce", _index_reduce_fn, _index_reduce, dtypes=REALS[1:],
           covers=("Tensor.index_reduce",), grad=True),
    OpInfo("index_reduce_ties", _index_reduce_fn, _ties, grad=True, gradcheck=False),
    OpInfo("Tensor.index_reduce_", _index_reduce_inplace, _index_reduce),
]


def _fractional(nd):
    def gen(dtype, rng):
        shapes = [((2, 3, 7, 9), 2, (3, 4)), ((3, 8, 8), 3, (4, 5)), ((1, 2, 5, 5), (2, 1), (4, 5)),
                  ((1, 1, 6, 6), 2, (1, 1)), ((1, 1, 5, 5), 2, (5, 5))] if nd == 2 else \
            [((1, 2, 5, 6, 7), 2, (3, 4, 5)), ((2, 4, 5, 6), 2, (2, 3, 4)),
             ((1, 1, 6, 7, 8), 2, (4, 6, 7))]
        for shape, k, out in shapes:
            n = shape[0] if len(shape) == nd + 2 else 1
            u = rng.random((n, shape[-nd - 1], nd)).astype(np.float32 if dtype == "float32"
                                                             else dtype)
            yield S(make_array(rng, shape, dtype), k, out, _random_samples=u)
        yield S(T(make_array(rng, (4,) * nd + (2,), dtype)), 2, 2,
                _random_samples=rng.random((1, 2, nd)).astype(dtype))
    return gen


def _fractional_fn(nd):
    def fn(lib, x, k, out, **kw):
        pool = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        return pool(x, k, output_size=out, return_indices=True, **kw)
    return fn


OPS += [
    OpInfo(f"nn.functional.fractional_max_pool{nd}d", _fractional_fn(nd), _fractional(nd),
           covers=(f"nn.functional.fractional_max_pool{nd}d_with_indices",), grad=True)
    for nd in (2, 3)
]


# torch.masked: masks with a True in every reduced row (gradcheck-safe), plus a fully masked
# row, a broadcast mask and no mask for the forward comparison
_MASKED_ARGS = {"norm": (2.0,), "normalize": (2.0,)}
_MASKED_DIM_REQUIRED = ("cumsum", "cumprod", "softmax", "log_softmax", "softmin", "normalize")


def _masked_samples(name, full_rows):
    def gen(dtype, rng):
        args = _MASKED_ARGS.get(name, ())
        dims = [1, -1, 0] if name in _MASKED_DIM_REQUIRED or name == "median" else \
            [1, (0, 1), None]
        for dim in dims:
            x = make_array(rng, (3, 4), dtype, -2, 2)
            m = rng.random((3, 4)) > 0.4
            m[:, 0] = m[0, :] = True
            yield S(x, *args, dim, mask=m)
        if full_rows:
            m = rng.random((3, 4)) > 0.5
            m[1] = False
            yield S(make_array(rng, (3, 4), dtype), *args, 1, mask=m)
            yield S(make_array(rng, (3, 4), dtype), *args, 1, mask=np.array([True, False, True,
                                                                              False]))
            yield S(make_array(rng, (3, 4), dtype), *args, 1)
    return gen


def _masked_fn(name):
    def fn(lib, x, *args, **kw):
        return getattr(lib.masked, name)(x, *args, **kw)
    return fn


_MASKED_GRAD = ("sum", "prod", "cumsum", "cumprod", "amax", "amin", "mean", "logsumexp", "norm",
                "var", "std", "softmax", "log_softmax", "softmin", "normalize", "median")
OPS += [
    OpInfo(f"masked.{name}", _masked_fn(name), _masked_samples(name, True),
           dtypes=REALS[1:] if name in ("sum", "prod", "amax", "amin", "argmax", "argmin")
           else ("float32", "float64"), tol={"float32": (1e-5, 1e-5)})
    for name in _MASKED_GRAD + ("argmax", "argmin")
] + [
    # log_softmax's masked-out outputs are -inf, which finite differences cannot take (torch
    # fails gradcheck there too); its gradients are still compared with torch's
    OpInfo(f"masked.{name}_grad", _masked_fn(name), _masked_samples(name, False), grad=True,
           gradcheck=name != "log_softmax")
    for name in _MASKED_GRAD
]


def _real_pairs(broadcast):
    def gen(dtype, rng):
        shapes = [((3, 4), (3, 4)), ((5,), ()), ((0, 2), (2,))]
        if broadcast:
            shapes += [((3, 1), (4,))]
        for sa, sb in shapes:
            yield S(make_array(rng, sa, dtype), make_array(rng, sb, dtype))
        yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (3, 4), dtype))
        yield S(make_array(rng, (3,), dtype), make_array(rng, (2,), dtype))  # mismatch
        if dtype in F32:
            yield S(make_array(rng, (3,), dtype), 1.0)
            other = "float64" if dtype == "float32" else "float32"
            yield S(make_array(rng, (3,), dtype), make_array(rng, (3,), other))
    return gen


OPS += [
    OpInfo("complex", lambda lib, a, b: lib.complex(a, b), _real_pairs(True),
           dtypes=("bfloat16",) + INTS[-2:] + F32, grad=True),
    # torch's polar backward is wrong where ``abs`` is broadcast (its own gradcheck fails
    # there), so polar's samples keep ``abs`` at the result's shape
    OpInfo("polar", lambda lib, a, b: lib.polar(a, b), _real_pairs(False),
           dtypes=("bfloat16",) + INTS[-2:] + F32, grad=True),
]


def _matrices(*argsets):
    def gen(dtype, rng):
        for args in argsets:
            yield S(make_array(rng, (3, 4), dtype), *args)
        yield S(T(make_array(rng, (4, 3), dtype)), *argsets[0])
        yield S(make_array(rng, (2, 3, 4), dtype), *argsets[0])
    return gen


def _fills(dtype, rng):
    for value in (2, 2.5, -1, True):
        yield S(make_array(rng, (3, 4), dtype), value)
    yield S(T(make_array(rng, (4, 3), dtype)), make_array(rng, (), dtype))
    yield S(make_array(rng, (3,), dtype), make_array(rng, (2,), dtype))  # value not 0-d


OPS += [
    OpInfo("frobenius_norm", lambda lib, a, *args: lib.frobenius_norm(a, *args),
           _matrices(((0, 1),), ((1,), True), (0,), ((0, 1, 1),)), dtypes=("int64",) + F32,
           grad=True),
    OpInfo("nuclear_norm", lambda lib, a, *args: lib.nuclear_norm(a, *args),
           _matrices((), ((0, 1), True), ((0,),)), dtypes=("int64",) + F32, grad=True),
    OpInfo("fill", lambda lib, a, v: lib.fill(a, v), _fills, dtypes=ALL, grad=True),
    # the values are uninitialised: compare the layout (shape, strides) only
    OpInfo("empty_permuted",
           lambda lib, size, order: lib.tensor((lambda e: e.shape + e.stride())(
               lib.empty_permuted(size, order))),
           lambda d, r: [S((2, 3, 4), (2, 0, 1)), S((2, 3), (0, 1)), S((5,), (0,)),
                         S((2, 3, 4, 5), (0, 2, 3, 1)), S((2, 3), (0,))],
           dtypes=("float32",)),
]
