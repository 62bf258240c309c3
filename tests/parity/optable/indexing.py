"""Indexing operators: __getitem__/__setitem__, gather/scatter, index_*, masked_*, take/put,
nonzero, searchsorted/bucketize."""

import numpy as np

from ..harness import ALL, E, OpInfo, S, T, make_array

I64 = np.int64
_ARR = np.arange(24).reshape(2, 3, 4) % 7


def _i(*v):
    return np.array(v, dtype=I64)


def _mask(shape, rng):
    return rng.random(shape) > 0.5


# ----------------------------------------------------------------------------- __getitem__

def _basic_index_samples(dtype, rng):
    x = make_array(rng, (3, 4, 5), dtype)
    for idx in [1, -1, (0, 2), (slice(None), 1), slice(1, None), slice(None, None, 2),
                (slice(None), slice(1, 4, 2), 3), (Ellipsis, 1), (None, 1), (1, None, Ellipsis),
                (slice(5, None),), (slice(None), slice(7, None)), (Ellipsis,), (1, 2, 3),
                (slice(-2, None), None, slice(None, -1, 3)), (Ellipsis, None)]:
        yield S(x, idx)
    yield S(T(make_array(rng, (4, 3), dtype)), (slice(1, 3), 1))
    yield S(E(make_array(rng, (1, 4), dtype), (3, 4)), (1, slice(None, None, 2)))
    yield S(make_array(rng, (), dtype), None)
    yield S(make_array(rng, (), dtype), Ellipsis)


def _basic_error_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    for idx in [5, -4, (0, 4), slice(None, None, -1), slice(None, None, 0), (0, 0, 0), 1.5,
                "a", (Ellipsis, 9)]:
        yield S(x, idx)
    yield S(make_array(rng, (), dtype), 0)


def _advanced_index_samples(dtype, rng):
    x = make_array(rng, (3, 4, 5), dtype)
    yield S(x, _i(0, 2, 2))
    yield S(x, _i(-1, 0))
    yield S(x, [0, 2])
    yield S(x, [[0, 1], [2, 0]])  # non-tuple sequence: treated as a tuple (deprecated)
    yield S(x, (slice(None), _i(1, 3)))
    yield S(x, (_i(0, 1), slice(None), _i(2, 3)))         # separated: dims go first
    yield S(x, (0, slice(None), _i(1, 2)))                # int is basic in torch, unlike numpy
    yield S(x, (_i(0, 1), _i(1, 2)))
    yield S(x, (slice(None), _i(0, 1), _i(1, 2)))
    yield S(x, (_i(0, 1), None, _i(1, 2)))
    yield S(x, (Ellipsis, _i(4, 0)))
    yield S(x, _i(1).reshape(()))                         # 0-d int tensor: a view
    yield S(x, (np.array(1, dtype=np.int32), slice(None), [1, 2]))
    yield S(x, np.array([[0, 1], [2, 2]], dtype=np.int32))
    yield S(x, _mask((3,), rng))
    yield S(x, _mask((3, 4), rng))
    yield S(x, (slice(None), _mask((4, 5), rng)))
    yield S(x, (_i(0, 1, 1), slice(None), np.array([True, False, True, True, False])))
    yield S(x, np.array(True))
    yield S(x, np.array(False))
    yield S(x, True)
    yield S(x, False)
    yield S(x, (None, _mask((3, 4), rng)))
    yield S(x, [True, False, True])
    yield S(x, [])
    yield S(T(make_array(rng, (4, 3), dtype)), (slice(None), _i(0, 2)))
    yield S(make_array(rng, (), dtype), np.array(True))
    yield S(make_array(rng, (0, 3), dtype), _i(1, 2).reshape(1, 2)[:, :0])


def _advanced_error_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _i(0, 3))
    yield S(x, _i(-4))
    yield S(x, (slice(None), _i(4)))
    yield S(x, (_i(0, 1), _i(0, 1, 2)))
    yield S(x, np.array([0.0]))
    yield S(x, np.array([0], dtype=np.int16))
    yield S(x, np.array([True, False]))
    yield S(x, _i(5).reshape(()))


def _getitem(lib, x, idx):
    return x[idx]


# ----------------------------------------------------------------------------- __setitem__

def _setitem(lib, x, idx, value):
    x = x.clone()
    v0 = x._version
    x[idx] = value
    assert x._version > v0
    return x


def _setitem_view(lib, x, idx, value):
    # writes through a view reach the base, and the version counter is shared
    base = x.clone()
    v = base[1:]
    before = v._version
    v[idx] = value
    assert v._version > before and base._version == v._version
    return base


def _setitem_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    val = make_array(rng, (4,), dtype)
    yield S(x, 0, val)
    yield S(x, 1, 1)
    yield S(x, (slice(None), 1), make_array(rng, (3,), dtype))
    yield S(x, (slice(None), slice(None, None, 2)), make_array(rng, (3, 1), dtype))
    yield S(x, Ellipsis, make_array(rng, (), dtype))
    yield S(x, 0, make_array(rng, (1, 1, 4), dtype))          # leading 1s are dropped
    yield S(x, None, make_array(rng, (3, 4), dtype))
    yield S(x, _i(2, 0), val)
    yield S(x, (_i(2, 0), _i(1, 3)), make_array(rng, (2,), dtype))
    yield S(x, (slice(None), _i(3, 1)), make_array(rng, (3, 1), dtype))
    yield S(x, _mask((3, 4), rng), make_array(rng, (), dtype))
    yield S(x, _mask((3,), rng), val)
    yield S(x, True, 0)
    yield S(x, False, 0)
    yield S(x, _i(1).reshape(()), val)
    yield S(x, _i(0, 1), T(make_array(rng, (2, 4), dtype)))
    yield S(x, 0, E(make_array(rng, (1,), dtype), (4,)))
    yield S(make_array(rng, (0, 4), dtype), slice(None), val)
    # errors
    yield S(x, 0, make_array(rng, (3,), dtype))
    yield S(x, 0, make_array(rng, (2, 4), dtype))
    yield S(x, _i(0, 1), make_array(rng, (3,), dtype))
    yield S(x, 5, 1)
    yield S(x, _i(5), 1)
    yield S(x, 0, [1, 2, 3, 4])


def _setitem_cast_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, 2.75)
    yield S(x, 0, True)
    yield S(x, 1, make_array(rng, (4,), "float64"))              # basic: casts
    yield S(x, 1, make_array(rng, (), "int32"))
    yield S(x, _i(1), make_array(rng, (), "float32"))           # 0-d value: converted
    yield S(x, _i(1), make_array(rng, (4,), "float64"))         # advanced: dtypes must match
    yield S(x, 2, 3 + 0j)
    # one mask and a one-element value: torch converts the value (masked_fill_)
    yield S(x, _mask((3, 4), rng), make_array(rng, (), "float64"))
    yield S(x, _mask((3, 4), rng), make_array(rng, (1,), "int32"))
    yield S(x, (slice(None), _mask((4,), rng)), make_array(rng, (), "float64"))
    yield S(x, (_mask((3,), rng), _i(1)), make_array(rng, (), "float64"))
    yield S(x, _mask((3,), rng), make_array(rng, (4,), "float64"))


# ----------------------------------------------------------------------------- gather/scatter

def _gather_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, rng.integers(0, 3, (2, 4)).astype(I64))
    yield S(x, 1, rng.integers(0, 4, (3, 6)).astype(I64))
    yield S(x, -1, rng.integers(0, 4, (2, 2)).astype(I64))
    yield S(T(make_array(rng, (4, 3), dtype)), 1, T(rng.integers(0, 4, (2, 3)).astype(I64)))
    yield S(x, 0, rng.integers(0, 3, (2, 4)).astype(np.int32))
    yield S(x, 0, np.zeros((0, 4), I64))
    yield S(make_array(rng, (), dtype), 0, np.array(0, I64))
    yield S(make_array(rng, (5,), dtype), 0, E(_i(4), (3,)))
    yield S(x, 0, _i(3).reshape(1, 1))
    yield S(x, 0, _i(-1).reshape(1, 1))
    yield S(x, 0, np.zeros((2, 5), I64))
    yield S(x, 0, np.zeros((2,), I64))
    yield S(x, 2, np.zeros((2, 2), I64))
    yield S(x, 0, np.zeros((2, 2), np.int16))
    yield S(x, 0, np.array(0, I64))
    yield S(make_array(rng, (3,), dtype), 0, np.array(2, I64))
    yield S(make_array(rng, (), dtype), 0, _i(0, 0))


def _perm_index(rng, shape, dim, size):
    """An index with distinct targets along ``dim`` (so plain scatter is deterministic)."""
    n = shape[dim]
    out = np.empty(shape, I64)
    it = np.moveaxis(out, dim, -1).reshape(-1, n)
    for row in it:
        row[:] = rng.permutation(size)[:n]
    return np.moveaxis(it.reshape(np.moveaxis(out, dim, -1).shape), -1, dim).copy()


def _scatter_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, _perm_index(rng, (2, 4), 0, 3), make_array(rng, (2, 4), dtype))
    yield S(x, 1, _perm_index(rng, (3, 2), 1, 4), make_array(rng, (3, 5), dtype))
    yield S(x, -1, _perm_index(rng, (2, 3), 1, 4), T(make_array(rng, (4, 2), dtype)))
    yield S(x, 0, _perm_index(rng, (2, 4), 0, 3).astype(np.int32), make_array(rng, (2, 4),
                                                                             dtype))
    yield S(make_array(rng, (), dtype), 0, np.array(0, I64), make_array(rng, (), dtype))
    yield S(x, 0, np.zeros((0, 4), I64), make_array(rng, (2, 4), dtype))
    yield S(x, 0, _i(3).reshape(1, 1), make_array(rng, (1, 1), dtype))
    yield S(x, 0, np.zeros((2, 5), I64), make_array(rng, (2, 5), dtype))
    yield S(x, 0, np.zeros((4, 1), I64), make_array(rng, (3, 1), dtype))
    yield S(make_array(rng, (3,), dtype), 0, np.array(1, I64), make_array(rng, (), dtype))
    yield S(make_array(rng, (), dtype), 0, _i(0), make_array(rng, (1,), dtype))
    yield S(x, 0, np.array(1, I64), make_array(rng, (), dtype))
    yield S(x, 0, np.zeros((1, 1), I64), make_array(rng, (1, 1), "float64" if dtype != "float64"
                                                    else "float32"))


def _scatter_value_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, rng.integers(0, 3, (2, 4)).astype(I64), 1)
    yield S(x, 1, rng.integers(0, 4, (3, 2)).astype(I64), 0)


def _dup_index_samples(dtype, rng):
    """Repeated targets: for reductions, which accumulate."""
    x = make_array(rng, (3, 4), dtype, 1, 3)
    yield S(x, 0, rng.integers(0, 3, (5, 4)).astype(I64), make_array(rng, (5, 4), dtype, 1, 3))
    yield S(x, 1, rng.integers(0, 4, (3, 6)).astype(I64), make_array(rng, (3, 6), dtype, 1, 3))
    yield S(x, 1, rng.integers(0, 4, (2, 2)).astype(I64), T(make_array(rng, (3, 2), dtype, 1,
                                                                           3)))
    yield S(make_array(rng, (5,), dtype, 1, 3), 0, _i(0, 0, 4), make_array(rng, (3,), dtype,
                                                                           1, 3))
    yield S(x, 0, _i(3).reshape(1, 1), make_array(rng, (1, 1), dtype))


def _gather_grad_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, rng.integers(0, 3, (2, 4)).astype(I64))
    yield S(x, 1, rng.integers(0, 4, (3, 6)).astype(I64))
    yield S(T(make_array(rng, (4, 3), dtype)), -1, rng.integers(-4, 4, (2, 2)).astype(I64))
    yield S(make_array(rng, (), dtype), 0, np.array(0, I64))
    yield S(make_array(rng, (5,), dtype), 0, _i(4, 4, 0))


def _scatter_grad_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, _perm_index(rng, (2, 4), 0, 3), make_array(rng, (2, 4), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), 1, _perm_index(rng, (3, 2), 1, 4),
            make_array(rng, (3, 2), dtype))
    yield S(make_array(rng, (), dtype), 0, np.array(0, I64), make_array(rng, (), dtype))
    yield S(make_array(rng, (5,), dtype), 0, _i(4, 0), make_array(rng, (2,), dtype))


def _scatter_grad_samples_noval(dtype, rng):
    for s in _scatter_grad_samples(dtype, rng):
        yield S(*s.args[:3])


def _scatter_add_grad_samples(dtype, rng):
    """Repeated targets, distinct values (no ties for amax/amin), src shaped like index."""
    x = make_array(rng, (3, 4), dtype, 1, 3)
    yield S(x, 0, rng.integers(0, 3, (5, 4)).astype(I64), make_array(rng, (5, 4), dtype, 1, 3))
    yield S(x, 1, rng.integers(0, 4, (3, 6)).astype(I64), T(make_array(rng, (3, 6), dtype, 1,
                                                                           3)))
    yield S(make_array(rng, (5,), dtype, 1, 3), 0, _i(0, 0, 4), make_array(rng, (3,), dtype,
                                                                           1, 3))


def _scatter_reduce_fn(reduce, include_self):
    def fn(lib, x, dim, index, src):
        return lib.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)
    return fn


def _scatter_reduce_ops():
    ops = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            dts = ("int64", "int32", "uint8", "float16", "bfloat16", "float32", "float64")
            ops.append(OpInfo(f"scatter_reduce_{reduce}_{'self' if inc else 'noself'}",
                              _scatter_reduce_fn(reduce, inc), _dup_index_samples, dtypes=dts,
                              covers=("Tensor.scatter_reduce",),
                              tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}))
    return ops


# ----------------------------------------------------------------------------- index_*

def _index_add_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, _i(2, 0, 2), make_array(rng, (3, 4), dtype))
    yield S(x, 1, _i(3, 1), make_array(rng, (3, 2), dtype))
    yield S(x, -1, _i(0), T(make_array(rng, (1, 3), dtype)))
    yield S(x, 0, _i(1, 2).astype(np.int32), make_array(rng, (2, 4), dtype))
    yield S(x, 0, np.zeros((0,), I64), make_array(rng, (0, 4), dtype))
    yield S(make_array(rng, (), dtype), 0, _i(0), make_array(rng, (), dtype))
    yield S(x, 0, _i(3), make_array(rng, (1, 4), dtype))
    yield S(x, 0, _i(-1), make_array(rng, (1, 4), dtype))
    yield S(x, 0, _i(1), make_array(rng, (1, 3), dtype))
    yield S(x, 0, _i(1), make_array(rng, (2, 4), dtype))
    yield S(x, 0, _i(1), make_array(rng, (1, 4), "float64" if dtype != "float64"
                                    else "float32"))


def _index_copy_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, _i(2, 0), make_array(rng, (2, 4), dtype))
    yield S(x, 1, _i(3, 1, 0), T(make_array(rng, (3, 3), dtype)))
    yield S(x, 0, np.zeros((0,), I64), make_array(rng, (0, 4), dtype))
    yield S(make_array(rng, (), dtype), 0, _i(0), make_array(rng, (), dtype))
    yield S(x, 0, _i(1, 2).astype(np.int32), make_array(rng, (2, 4), dtype))
    yield S(x, 0, _i(3), make_array(rng, (1, 4), dtype))
    yield S(x, 0, _i(-1), make_array(rng, (1, 4), dtype))
    yield S(x, 0, _i(1), make_array(rng, (1, 4), "float64" if dtype != "float64"
                                    else "float32"))


def _index_fill_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, _i(2, 0), 1)
    yield S(x, 1, _i(3, -1), True)
    yield S(x, 1, _i(0), make_array(rng, (), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), 0, _i(1), 0)
    yield S(make_array(rng, (), dtype), 0, _i(0), 0)
    yield S(x, 0, _i(3), 1)
    yield S(x, 0, _i(1).astype(np.int32), 1)
    yield S(x, 0, _i(1), make_array(rng, (1,), dtype))


def _index_put_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, (_i(2, 0),), make_array(rng, (4,), dtype))
    yield S(x, (_i(2, 0), _i(1, 3)), make_array(rng, (2,), dtype))
    yield S(x, (_mask((3, 4), rng),), make_array(rng, (), dtype))
    yield S(x, (_i(0, 1),), T(make_array(rng, (4, 2), dtype)))
    yield S(x, (_i(0, 1),), make_array(rng, (3,), dtype))
    yield S(x, (_i(4),), make_array(rng, (), dtype))
    yield S(x, (_i(0),), make_array(rng, (4,), "float64" if dtype != "float64" else "int64"))
    yield S(x, (_mask((3, 4), rng),), make_array(rng, (), "float64" if dtype != "float64"
                                                   else "int64"))
    yield S(x, (None, _mask((4,), rng)), make_array(rng, (), "float64" if dtype != "float64"
                                                      else "int64"))


def _index_put_acc_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, (_i(2, 0, 2, 2),), make_array(rng, (4,), dtype))
    yield S(x, (_i(2, 2), _i(1, 1)), make_array(rng, (2,), dtype))


# ----------------------------------------------------------------------------- masked

def _masked_fill_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _mask((3, 4), rng), 1)
    yield S(x, _mask((4,), rng), 0.5 if dtype not in ("bool",) else True)
    yield S(x, _mask((2, 1, 4), rng), 2)                         # mask broadcasts input
    yield S(T(make_array(rng, (4, 3), dtype)), _mask((3, 4), rng), make_array(rng, (), dtype))
    yield S(make_array(rng, (), dtype), np.array(True), 3)
    yield S(make_array(rng, (0, 4), dtype), _mask((4,), rng), 3)
    yield S(x, _mask((3, 4), rng).astype(np.uint8), 1)
    yield S(x, _mask((3, 4), rng), make_array(rng, (1,), dtype))
    yield S(x, _mask((3, 5), rng), 1)
    yield S(x, _mask((3, 4), rng), 1 + 2j)


def _masked_fill_inplace_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _mask((3, 4), rng), 1)
    yield S(x, _mask((4,), rng), make_array(rng, (), "float64"))
    yield S(x, E(_mask((1, 4), rng), (3, 4)), 2)
    yield S(make_array(rng, (4,), dtype), _mask((3, 4), rng), 1)   # cannot broadcast self
    yield S(x, _mask((3, 4), rng).astype(np.uint8), 1)


def _masked_select_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _mask((3, 4), rng))
    yield S(x, _mask((4,), rng))
    yield S(make_array(rng, (4,), dtype), _mask((2, 4), rng))
    yield S(T(make_array(rng, (4, 3), dtype)), _mask((3, 4), rng))
    yield S(make_array(rng, (), dtype), np.array(True))
    yield S(make_array(rng, (0,), dtype), _mask((0,), rng))
    yield S(x, _mask((3, 4), rng).astype(np.uint8))
    yield S(x, _mask((2, 4), rng))


def _masked_scatter_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _mask((3, 4), rng), make_array(rng, (12,), dtype))
    yield S(x, _mask((4,), rng), make_array(rng, (4, 4), dtype))
    yield S(x, _mask((3, 4), rng), T(make_array(rng, (4, 3), dtype)))
    yield S(make_array(rng, (4,), dtype), _mask((3, 4), rng), make_array(rng, (12,), dtype))
    yield S(x, np.ones((3, 4), bool), make_array(rng, (5,), dtype))
    yield S(x, _mask((3, 4), rng).astype(np.uint8), make_array(rng, (12,), dtype))
    yield S(x, _mask((3, 4), rng), make_array(rng, (12,), "float64" if dtype != "float64"
                                              else "float32"))


# ----------------------------------------------------------------------------- take/put

def _take_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _i(0, 11, -1, 5))
    yield S(x, np.array([[1, 2], [3, -12]], I64))
    yield S(T(make_array(rng, (4, 3), dtype)), _i(1, 4, 7))
    yield S(x, np.array(3, I64))
    yield S(make_array(rng, (), dtype), _i(0, 0, -1))
    yield S(x, np.zeros((0,), I64))
    yield S(x, _i(12))
    yield S(x, _i(-13))
    yield S(x, _i(1).astype(np.int32))


def _take_along_dim_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, rng.integers(-3, 3, (2, 4)).astype(I64), 0)
    yield S(x, rng.integers(0, 4, (3, 2)).astype(I64), 1)
    yield S(x, rng.integers(0, 4, (1, 2)).astype(I64), -1)     # broadcast
    yield S(x, rng.integers(0, 12, (5,)).astype(I64), None)
    yield S(T(make_array(rng, (4, 3), dtype)), rng.integers(0, 4, (3, 1)).astype(I64), 1)
    yield S(x, _i(1).astype(np.int32).reshape(1, 1), 0)
    yield S(x, _i(1).reshape(1, 1, 1), 0)
    yield S(x, _i(3).reshape(1, 1), 0)


def _put_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _i(0, 11, -2), make_array(rng, (3,), dtype))
    yield S(x, np.array([[1, 2], [3, 4]], I64), make_array(rng, (4,), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), _i(1, 5), make_array(rng, (2,), dtype))
    yield S(x, _i(12), make_array(rng, (1,), dtype))
    yield S(x, _i(1), make_array(rng, (2,), dtype))
    yield S(x, _i(1).astype(np.int32), make_array(rng, (1,), dtype))
    yield S(x, _i(1), make_array(rng, (1,), "float64" if dtype != "float64" else "float32"))


def _put_acc_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, _i(0, 0, -1, 3), make_array(rng, (4,), dtype))
    yield S(T(make_array(rng, (4, 3), dtype)), _i(1, 1), make_array(rng, (2,), dtype))


# ----------------------------------------------------------------------------- nonzero etc.

def _nonzero_samples(dtype, rng):
    for shape in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
        a = make_array(rng, shape, dtype, -1, 2)
        yield S(a)
    yield S(T(make_array(rng, (3, 4), dtype, -1, 2)))
    yield S(E(make_array(rng, (1, 4), dtype, -1, 2), (3, 4)))
    yield S(np.zeros((), dtype=make_array(rng, (), dtype).dtype))


def _sorted(rng, shape, dtype):
    return np.sort(make_array(rng, shape, dtype, -5, 5), axis=-1)


def _searchsorted_samples(dtype, rng):
    b = _sorted(rng, (6,), dtype)
    yield S(b, make_array(rng, (3, 4), dtype))
    yield S(b, b.copy())                                          # ties
    yield S(_sorted(rng, (2, 5), dtype), make_array(rng, (2, 3), dtype))
    yield S(b, make_array(rng, (), dtype))
    yield S(b, 1)
    yield S(b, make_array(rng, (0,), dtype))
    yield S(_sorted(rng, (0,), dtype), make_array(rng, (3,), dtype))
    yield S(b, T(make_array(rng, (3, 4), dtype)))
    yield S(_sorted(rng, (2, 5), dtype), make_array(rng, (3, 3), dtype))


def _searchsorted_sorter_samples(dtype, rng):
    b = make_array(rng, (6,), dtype)
    yield S(b, make_array(rng, (4,), dtype), np.argsort(b, kind="stable").astype(I64))
    b2 = make_array(rng, (2, 5), dtype)
    yield S(b2, make_array(rng, (2, 3), dtype), np.argsort(b2, axis=-1, kind="stable")
            .astype(I64))


def _bucketize_samples(dtype, rng):
    b = _sorted(rng, (5,), dtype)
    yield S(make_array(rng, (3, 4), dtype), b)
    yield S(b.copy(), b)
    yield S(make_array(rng, (), dtype), b)
    yield S(T(make_array(rng, (3, 4), dtype)), b)
    yield S(make_array(rng, (3,), dtype), _sorted(rng, (2, 2), dtype))


SORTABLE = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
            "float64")
NOBOOL = SORTABLE + ("complex64", "complex128")


def _inplace(method):
    def fn(lib, x, *args, **kw):
        y = x.clone()
        v0 = y._version
        r = getattr(y, method)(*args, **kw)
        assert r is y and y._version > v0
        return y
    return fn



def _setitem_grad_value(lib, x, idx, value):
    # a tensor that requires grad written into one that does not
    z = lib.zeros(x.shape, dtype=x.dtype) + 0.5
    z[idx] = value * 2
    return z * x


def _setitem_grad_value_samples(dtype, rng):
    x = make_array(rng, (3, 4), dtype)
    yield S(x, 0, make_array(rng, (4,), dtype))
    yield S(x, _i(0, 2), make_array(rng, (2, 4), dtype))
    yield S(x, (0, _i(1, 3)), make_array(rng, (2,), dtype))
    yield S(x, _mask((3, 4), rng), make_array(rng, (), dtype))
    yield S(x, Ellipsis, make_array(rng, (), dtype))
    yield S(x, (slice(None), slice(1, 3)), make_array(rng, (1, 2), dtype))
    yield S(x, _i(2, 1), make_array(rng, (4,), dtype))


OPS = [
    OpInfo("getitem_basic", _getitem, _basic_index_samples, dtypes=ALL, view=True,
           covers=("Tensor.__getitem__",),
           grad=True),
    OpInfo("getitem_basic_errors", _getitem, _basic_error_samples, dtypes=("float32",)),
    OpInfo("getitem_advanced", _getitem, _advanced_index_samples,
           dtypes=("bool", "int64", "float16", "bfloat16", "float32", "complex64"), view=True,
           grad=True),
    OpInfo("getitem_advanced_errors", _getitem, _advanced_error_samples, dtypes=("float32",)),
    OpInfo("setitem", _setitem, _setitem_samples, dtypes=ALL,
           covers=("Tensor.__setitem__",),
           grad=True),
    OpInfo("setitem_view", _setitem_view, lambda d, r: [
        S(make_array(r, (3, 4), d), 0, make_array(r, (4,), d)),
        S(make_array(r, (3, 4), d), _i(1, 0), 1),
        S(make_array(r, (3, 4), d), (slice(None), _mask((4,), r)), make_array(r, (), d))],
        dtypes=("int64", "float32"),
           grad=True),
    OpInfo("setitem_cast", _setitem, _setitem_cast_samples,
           dtypes=("bool", "uint8", "int64", "bfloat16", "float32", "complex128"),
           grad=True),
    OpInfo("index_select", lambda lib, x, d, i: lib.index_select(x, d, i), lambda d, r: [
        S(make_array(r, (3, 4), d), 0, _i(2, 0, 2)),
        S(make_array(r, (3, 4), d), -1, _i(3, 1).astype(np.int32)),
        S(T(make_array(r, (4, 3), d)), 1, _i(0)),
        S(make_array(r, (3, 4), d), 0, np.array(1, I64)),
        S(make_array(r, (3, 4), d), 1, np.zeros((0,), I64)),
        S(make_array(r, (), d), 0, _i(0)),
        S(make_array(r, (3, 4), d), 0, _i(3)),
        S(make_array(r, (3, 4), d), 0, _i(-1)),
        S(make_array(r, (3, 4), d), 0, _i(1).reshape(1, 1)),
        S(make_array(r, (3, 4), d), 2, _i(1)),
        S(make_array(r, (3, 4), d), 0, np.array([1.0]))],
        dtypes=ALL, covers=("Tensor.index_select",),
           grad=True),
    OpInfo("gather", lambda lib, x, d, i: lib.gather(x, d, i), _gather_samples, dtypes=ALL,
           covers=("Tensor.gather",)),
    OpInfo("scatter", lambda lib, x, d, i, s: lib.scatter(x, d, i, s), _scatter_samples,
           dtypes=ALL, covers=("Tensor.scatter",)),
    OpInfo("scatter_value", lambda lib, x, d, i, v: lib.scatter(x, d, i, value=v),
           _scatter_value_samples, dtypes=ALL,
           grad=True),
    OpInfo("Tensor.scatter_", _inplace("scatter_"), _scatter_samples, dtypes=("int64", "float32")),
    OpInfo("scatter_reduce_add", lambda lib, x, d, i, s: x.scatter(d, i, s, reduce="add"),
           _dup_index_samples, dtypes=("int64", "float32", "float64")),
    OpInfo("scatter_reduce_multiply",
           lambda lib, x, d, i, s: x.clone().scatter_(d, i, s, reduce="multiply"),
           _dup_index_samples, dtypes=("int64", "float64")),
    OpInfo("scatter_add", lambda lib, x, d, i, s: lib.scatter_add(x, d, i, s),
           _dup_index_samples, dtypes=ALL[1:], covers=("Tensor.scatter_add",),
           tol={"float16": (3e-3, 3e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("Tensor.scatter_add_", _inplace("scatter_add_"), _dup_index_samples,
           dtypes=("int64", "float32")),
    *_scatter_reduce_ops(),
    OpInfo("Tensor.scatter_reduce_",
           lambda lib, x, d, i, s: _inplace("scatter_reduce_")(lib, x, d, i, s, "amax"),
           _dup_index_samples, dtypes=("int64", "float32")),
    OpInfo("index_add", lambda lib, x, d, i, s: lib.index_add(x, d, i, s), _index_add_samples,
           dtypes=ALL[1:], covers=("Tensor.index_add",),
           tol={"float16": (3e-3, 3e-3), "bfloat16": (3e-2, 3e-2)},
           grad=True),
    OpInfo("index_add_alpha", lambda lib, x, d, i, s: lib.index_add(x, d, i, s, alpha=2),
           _index_add_samples, dtypes=("int64", "float32"),
           grad=True),
    OpInfo("Tensor.index_add_", _inplace("index_add_"), _index_add_samples,
           dtypes=("int64", "float32"),
           grad=True),
    OpInfo("index_copy", lambda lib, x, d, i, s: lib.index_copy(x, d, i, s),
           _index_copy_samples, dtypes=ALL, covers=("Tensor.index_copy",),
           grad=True),
    OpInfo("Tensor.index_copy_", _inplace("index_copy_"), _index_copy_samples,
           dtypes=("int64", "float32"),
           grad=True),
    OpInfo("index_fill", lambda lib, x, d, i, v: lib.index_fill(x, d, i, v),
           _index_fill_samples, dtypes=ALL, covers=("Tensor.index_fill",),
           grad=True),
    OpInfo("Tensor.index_fill_", _inplace("index_fill_"), _index_fill_samples,
           dtypes=("int64", "float32"),
           grad=True),
    OpInfo("index_put", lambda lib, x, i, v: lib.index_put(x, i, v), _index_put_samples,
           dtypes=ALL, covers=("Tensor.index_put",),
           grad=True),
    OpInfo("Tensor.index_put_", _inplace("index_put_"), _index_put_samples,
           dtypes=("int64", "float32"), covers=("index_put_",),
           grad=True),
    OpInfo("index_put_accumulate", lambda lib, x, i, v: x.index_put(i, v, accumulate=True),
           _index_put_acc_samples, dtypes=ALL,
           tol={"float16": (3e-3, 3e-3), "bfloat16": (3e-2, 3e-2)},
           grad=True),
    OpInfo("masked_fill", lambda lib, x, m, v: lib.masked_fill(x, m, v), _masked_fill_samples,
           dtypes=ALL, covers=("Tensor.masked_fill",),
           grad=True),
    OpInfo("Tensor.masked_fill_", _inplace("masked_fill_"), _masked_fill_inplace_samples,
           dtypes=("bool", "int64", "float16", "float32", "complex64")),
    OpInfo("masked_select", lambda lib, x, m: lib.masked_select(x, m), _masked_select_samples,
           dtypes=ALL, covers=("Tensor.masked_select",),
           grad=True),
    OpInfo("masked_scatter", lambda lib, x, m, s: lib.masked_scatter(x, m, s),
           _masked_scatter_samples, dtypes=ALL, covers=("Tensor.masked_scatter",),
           grad=True),
    OpInfo("Tensor.masked_scatter_", _inplace("masked_scatter_"), lambda d, r: [
        s for s in _masked_scatter_samples(d, r) if s.args[0].shape == (3, 4)],
        dtypes=("int64", "float32"),
           grad=True),
    OpInfo("take", lambda lib, x, i: lib.take(x, i), _take_samples, dtypes=ALL,
           covers=("Tensor.take",),
           grad=True),
    OpInfo("take_along_dim", lambda lib, x, i, d: lib.take_along_dim(x, i, d),
           _take_along_dim_samples, dtypes=ALL, covers=("Tensor.take_along_dim",),
           grad=True),
    OpInfo("Tensor.put_", _inplace("put_"), _put_samples, dtypes=ALL,
           grad=True),
    OpInfo("put", lambda lib, x, i, s: lib.put(x, i, s), _put_samples,
           dtypes=("int64", "float32"), covers=("Tensor.put",),
           grad=True),
    OpInfo("put_accumulate", lambda lib, x, i, s: x.put(i, s, accumulate=True),
           _put_acc_samples, dtypes=("bool", "int64", "float16", "float32", "complex64"),
           tol={"float16": (3e-3, 3e-3)},
           grad=True),
    OpInfo("nonzero", lambda lib, x: lib.nonzero(x), _nonzero_samples, dtypes=ALL,
           covers=("Tensor.nonzero",)),
    OpInfo("nonzero_as_tuple", lambda lib, x: lib.nonzero(x, as_tuple=True), _nonzero_samples,
           dtypes=ALL),
    OpInfo("where_1arg", lambda lib, x: lib.where(x), _nonzero_samples,
           dtypes=("bool", "int64", "float32"), covers=("where",)),
    OpInfo("argwhere", lambda lib, x: lib.argwhere(x), _nonzero_samples, dtypes=ALL,
           covers=("Tensor.argwhere",)),
    OpInfo("searchsorted", lambda lib, b, v: lib.searchsorted(b, v), _searchsorted_samples,
           dtypes=SORTABLE + ("bool",)),
    OpInfo("searchsorted_right", lambda lib, b, v: lib.searchsorted(b, v, right=True),
           _searchsorted_samples, dtypes=("int64", "float32", "bfloat16")),
    OpInfo("searchsorted_side_int32",
           lambda lib, b, v: lib.searchsorted(b, v, side="right", out_int32=True),
           _searchsorted_samples, dtypes=("int32", "float64")),
    OpInfo("searchsorted_conflict",
           lambda lib, b, v: lib.searchsorted(b, v, side="left", right=True),
           lambda d, r: [S(_sorted(r, (4,), d), make_array(r, (2,), d))], dtypes=("float32",)),
    OpInfo("searchsorted_sorter",
           lambda lib, b, v, s: lib.searchsorted(b, v, sorter=s), _searchsorted_sorter_samples,
           dtypes=("int64", "float32")),
    OpInfo("searchsorted_mixed", lambda lib, b, v: lib.searchsorted(b, v), lambda d, r: [
        S(_sorted(r, (5,), "float32"), make_array(r, (3,), "int64")),
        S(_sorted(r, (5,), "int64"), make_array(r, (3,), "float64"))], dtypes=("float32",)),
    OpInfo("bucketize", lambda lib, x, b: lib.bucketize(x, b), _bucketize_samples,
           dtypes=SORTABLE, covers=("Tensor.bucketize",)),
    OpInfo("bucketize_right", lambda lib, x, b: lib.bucketize(x, b, right=True, out_int32=True),
           _bucketize_samples, dtypes=("int64", "float32")),
    # gradient-only entries: samples torch can backpropagate through (src no larger than
    # index, contiguous integer indices)
    OpInfo("gather_grad", lambda lib, x, d, i: lib.gather(x, d, i), _gather_grad_samples,
           dtypes=("float32", "float64"), covers=("gather",), grad=True),
    OpInfo("scatter_grad", lambda lib, x, d, i, s: lib.scatter(x, d, i, s),
           _scatter_grad_samples, dtypes=("float32", "float64"), covers=("scatter",),
           grad=True),
    OpInfo("scatter_value_grad", lambda lib, x, d, i: x.scatter(d, i, 1.5),
           _scatter_grad_samples_noval, dtypes=("float32", "float64"), covers=("scatter",),
           grad=True),
    OpInfo("Tensor.scatter__grad", lambda lib, x, d, i, s: (x * 1).scatter_(d, i, s),
           _scatter_grad_samples, dtypes=("float32", "float64"), covers=("Tensor.scatter_",),
           grad=True),
    OpInfo("scatter_add_grad", lambda lib, x, d, i, s: lib.scatter_add(x, d, i, s),
           _scatter_add_grad_samples, dtypes=("float32", "float64"), covers=("scatter_add",),
           grad=True),
    OpInfo("Tensor.scatter_add__grad", lambda lib, x, d, i, s: (x * 1).scatter_add_(d, i, s),
           _scatter_add_grad_samples, dtypes=("float32", "float64"),
           covers=("Tensor.scatter_add_",), grad=True),
    *[OpInfo(f"scatter_reduce_grad_{r}_{inc}", _scatter_reduce_fn(r, inc),
             _scatter_add_grad_samples, dtypes=("float32", "float64"),
             covers=("scatter_reduce",), grad=True)
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    OpInfo("Tensor.scatter_reduce__grad",
           lambda lib, x, d, i, s: (x * 1).scatter_reduce_(d, i, s, "mean"),
           _scatter_add_grad_samples, dtypes=("float32", "float64"),
           covers=("Tensor.scatter_reduce_",), grad=True),
    OpInfo("Tensor.masked_fill__grad", lambda lib, x, m, v: (x * 1).masked_fill_(m, v),
           lambda d, r: [S(make_array(r, (3, 4), d), _mask((3, 4), r), 1.5),
                         S(make_array(r, (3, 4), d), _mask((4,), r), make_array(r, (), d)),
                         S(T(make_array(r, (3, 4), d)), _mask((3, 4), r), 0.0)],
           dtypes=("float32", "float64"), covers=("Tensor.masked_fill_",), grad=True),
    OpInfo("setitem_grad_value", _setitem_grad_value, _setitem_grad_value_samples,
           dtypes=("float32", "float64"), covers=("Tensor.__setitem__",), grad=True),
]



OPS += [
    OpInfo("unravel_index", lambda lib, i, s: lib.unravel_index(i, s),
           lambda d, r: [S(make_array(r, (5,), d, 0, 8), (2, 4)),
                         S(make_array(r, (2, 3), d, 0, 60), (3, 4, 5)),
                         S(make_array(r, (), d, 0, 5), 6),
                         S(np.array([9, -1 if d != "uint8" else 1, 0]).astype(d), [2, 4]),
                         S(make_array(r, (3,), d, 0, 5), (2, -4)),
                         S(make_array(r, (3,), d, 0, 5), ())],
           dtypes=("int32", "int64", "uint8", "float32", "bool")),
]
