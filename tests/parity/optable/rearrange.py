"""Joining/rearranging ops (copies: values and strides checked) and random ops (dtype, shape
and errors only; statistics live in tests/test_random.py)."""

import warnings

import numpy as np

from ..harness import ALL, F32, FLOATS, INTS, E, OpInfo, S, T, make_array
from ..samples import unary

M = make_array


def _arrays(dtype, rng, *shapes):
    return [M(rng, s, dtype) for s in shapes]


def _cat_samples(dtype, rng):
    a, b, c = _arrays(dtype, rng, (2, 3), (2, 4), (3, 3))
    yield S([a, b], 1)
    yield S([a, c], 0)
    yield S([a, c], -2)
    yield S([a, T(M(rng, (2, 4), dtype))], 1)
    yield S([E(M(rng, (1, 3), dtype), (4, 3)), a])
    yield S([a, M(rng, (0,), dtype)])              # legacy: 1-D empties are skipped
    yield S([M(rng, (0,), dtype), M(rng, (0,), dtype)], 0)
    yield S([M(rng, (0, 3), dtype), a])
    yield S([M(rng, (2, 3, 4), dtype), M(rng, (2, 1, 4), dtype)], 1)
    yield S([a, b])                                 # size mismatch
    yield S([a, M(rng, (2, 3, 1), dtype)])          # rank mismatch
    yield S([M(rng, (), dtype)])                    # 0-d
    yield S([a, a], 2)                              # bad dim
    yield S([])
    if dtype == "float32":
        for other in ("int64", "float64", "bool", "float16", "complex64"):
            yield S([a, M(rng, (2, 2), other)], 1)
        yield S([a, M(rng, (0,), "float64")])       # a skipped empty still promotes


def _stack_samples(dtype, rng):
    a, b, c = _arrays(dtype, rng, (2, 3), (2, 3), (2, 4))
    yield S([a, b])
    yield S([a, T(M(rng, (2, 3), dtype))], 1)
    yield S([a, b], -1)
    yield S([a, b], 2)
    yield S([M(rng, (), dtype), M(rng, (), dtype)])
    yield S([M(rng, (0,), dtype)] * 2, 1)
    yield S([a, c])
    yield S([a, b], 3)
    yield S([])
    if dtype == "float32":
        yield S([a, M(rng, (2, 3), "int32")])


def _hvd_samples(dtype, rng):
    yield S([M(rng, (3,), dtype), M(rng, (2,), dtype)])
    yield S([M(rng, (), dtype), M(rng, (), dtype)])
    yield S([M(rng, (2, 3), dtype), T(M(rng, (2, 3), dtype))])
    yield S([M(rng, (2, 2, 3), dtype), M(rng, (2, 2, 3), dtype)])
    yield S([M(rng, (2, 1), dtype), M(rng, (2,), dtype)])
    yield S([M(rng, (2,), dtype), M(rng, (2, 3), dtype)])
    yield S([])


def _flip_samples(dtype, rng):
    a = M(rng, (3, 4), dtype)
    yield S(a, [0])
    yield S(a, [0, 1])
    yield S(a, [-1])
    yield S(a, [])
    yield S(T(M(rng, (3, 4), dtype)), [0])
    yield S(E(M(rng, (1, 4), dtype), (3, 4)), [1])
    yield S(T(M(rng, (2, 3, 4), dtype)), [1, 2])
    yield S(M(rng, (), dtype), [])
    yield S(a, [0, 0])
    yield S(a, [2])


def _roll_samples(dtype, rng):
    a = M(rng, (3, 4), dtype)
    yield S(a, 1)
    yield S(a, -5)
    yield S(a, 2, 1)
    yield S(a, (1, -2), (0, 1))
    yield S(T(M(rng, (3, 4), dtype)), 1, 0)
    yield S(E(M(rng, (1, 4), dtype), (3, 4)), 1)
    yield S(M(rng, (), dtype), 3)
    yield S(a, (1, 2), (0,))
    yield S(a, 1, 2)


def _rot90_samples(dtype, rng):
    a = M(rng, (3, 4), dtype)
    for k in (0, 1, 2, 3, -1, 5):
        yield S(a, k)
    yield S(T(M(rng, (3, 4), dtype)), 1)
    yield S(T(M(rng, (3, 4), dtype)), 0)
    yield S(M(rng, (2, 3, 4), dtype), 1, [2, 0])
    yield S(E(M(rng, (1, 4), dtype), (3, 4)), 1)
    yield S(a, 1, [0])
    yield S(a, 1, [1, 1])
    yield S(M(rng, (3,), dtype), 1)


def _repeat_samples(dtype, rng):
    a = M(rng, (2, 3), dtype)
    yield S(a, (2, 1))
    yield S(a, (2, 1, 3))
    yield S(a, (0, 2))
    yield S(M(rng, (), dtype), (2,))
    yield S(M(rng, (), dtype), ())
    yield S(T(M(rng, (2, 3), dtype)), (1, 2))
    yield S(E(M(rng, (1, 3), dtype), (2, 3)), (2, 2))
    yield S(a, (2,))
    yield S(a, (-1, 2))


def _tile_samples(dtype, rng):
    yield from _repeat_samples(dtype, rng)
    yield S(M(rng, (2, 3), dtype), (2,))


def _ri_samples(dtype, rng):
    a = M(rng, (2, 3), dtype)
    yield S(a, 2)
    yield S(a, 2, 0)
    yield S(a, 0, 1)
    yield S(a, np.array([1, 0, 3]), 1)
    yield S(a, np.array([2], dtype=np.int32), -1)
    yield S(a, np.array(2), 1)
    yield S(T(M(rng, (2, 3), dtype)), np.array([1, 2]), 0)
    yield S(M(rng, (), dtype), 3)
    yield S(a, np.array([1, 2]), 1)                 # wrong length
    yield S(a, np.array([-1, 2, 0]), 1)
    yield S(a, -1)
    yield S(a, np.array([1.0, 2.0, 0.0]), 1)


def _tri_samples(dtype, rng):
    a = M(rng, (3, 4), dtype)
    for d in (0, 1, -1, 5, -5):
        yield S(a, d)
    yield S(T(M(rng, (4, 3), dtype)))
    yield S(M(rng, (2, 3, 3), dtype), 1)
    yield S(E(M(rng, (1, 4), dtype), (3, 4)))
    yield S(M(rng, (0, 3), dtype))
    yield S(M(rng, (3,), dtype))


def _diag_samples(dtype, rng):
    for d in (0, 1, -2):
        yield S(M(rng, (3,), dtype), d)
        yield S(M(rng, (3, 4), dtype), d)
    yield S(T(M(rng, (3, 4), dtype)), 1)
    yield S(M(rng, (0,), dtype), 1)
    yield S(M(rng, (3, 4), dtype), 7)
    yield S(M(rng, (), dtype))
    yield S(M(rng, (2, 2, 2), dtype))


def _diag_embed_samples(dtype, rng):
    yield S(M(rng, (3,), dtype))
    yield S(M(rng, (2, 3), dtype), 1)
    yield S(M(rng, (2, 3), dtype), -1, 0, 2)
    yield S(M(rng, (3,), dtype), 1, -1, -2)
    yield S(T(M(rng, (2, 3), dtype)), 0, 2, 0)
    yield S(M(rng, (0,), dtype))
    yield S(M(rng, (3,), dtype), 0, 0, 0)
    yield S(M(rng, (3,), dtype), 0, 0, 3)


def _diagflat_samples(dtype, rng):
    yield S(M(rng, (2, 2), dtype))
    yield S(M(rng, (3,), dtype), -1)
    yield S(M(rng, (), dtype), 2)
    yield S(T(M(rng, (2, 3), dtype)), 1)


def _block_diag_samples(dtype, rng):
    yield S(M(rng, (2, 3), dtype), M(rng, (3,), dtype), M(rng, (), dtype))
    yield S(M(rng, (0, 2), dtype), M(rng, (2,), dtype))
    yield S(T(M(rng, (2, 3), dtype)))
    yield S()
    yield S(M(rng, (2, 2, 2), dtype))
    if dtype == "float32":
        yield S(M(rng, (2, 2), "int32"), M(rng, (1,), "float64"))


def _one_d_lists(dtype, rng):
    yield S(M(rng, (2,), dtype), M(rng, (3,), dtype))
    yield S(M(rng, (), dtype), M(rng, (3,), dtype), M(rng, (2,), dtype))
    yield S(M(rng, (0,), dtype), M(rng, (2,), dtype))
    yield S(M(rng, (4,), dtype))
    yield S(M(rng, (2, 2), dtype))
    if dtype == "float32":
        yield S(M(rng, (2,), dtype), M(rng, (2,), "float64"))


def _meshgrid(lib, *ts, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.meshgrid(*ts, **kw)


def _meshgrid_samples(dtype, rng):
    yield from _one_d_lists(dtype, rng)
    yield S([M(rng, (2,), dtype), M(rng, (3,), dtype)], indexing="xy")
    yield S(M(rng, (2,), dtype), M(rng, (3,), dtype), M(rng, (4,), dtype), indexing="xy")
    yield S(M(rng, (2,), dtype), indexing="xy")
    yield S(M(rng, (2,), dtype), M(rng, (3,), dtype), indexing="ij")
    yield S(M(rng, (2,), dtype), indexing="bad")
    yield S()


def _broadcast_samples(dtype, rng):
    yield S(M(rng, (2, 3), dtype), M(rng, (3,), dtype), M(rng, (4, 1, 1), dtype))
    yield S(M(rng, (), dtype), T(M(rng, (2, 3), dtype)))
    yield S(E(M(rng, (1, 3), dtype), (2, 3)), M(rng, (4, 1, 1), dtype))
    yield S(M(rng, (2, 3), dtype))
    yield S()
    yield S(M(rng, (2, 3), dtype), M(rng, (4,), dtype))


def _atleast_samples(dtype, rng):
    for shape in ((), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)):
        yield S(M(rng, shape, dtype))
    yield S(M(rng, (), dtype), M(rng, (2,), dtype))
    yield S([M(rng, (), dtype), T(M(rng, (2, 3), dtype))])
    yield S()


def _comb_samples(dtype, rng):
    yield S(M(rng, (4,), dtype))
    yield S(M(rng, (4,), dtype), 3)
    yield S(M(rng, (3,), dtype), 2, True)
    yield S(M(rng, (4,), dtype), 1)
    yield S(M(rng, (4,), dtype), 0)
    yield S(M(rng, (2,), dtype), 3)
    yield S(M(rng, (0,), dtype), 2)
    yield S(M(rng, (4,), dtype), -1)
    yield S(M(rng, (2, 2), dtype))


def _narrow_copy_samples(dtype, rng):
    a = M(rng, (3, 4), dtype)
    yield S(a, 0, 1, 2)
    yield S(a, 1, -2, 2)
    yield S(T(M(rng, (3, 4), dtype)), 1, 1, 2)
    yield S(a, 1, 3, 2)


def _triu_idx_samples(dtype, rng):
    for args in ((3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 3, 10), (3, 3, -10), (-1, 3)):
        yield S(*args)
    yield S(3, 4, dtype="dtype:int32")
    yield S(3, 4, dtype="dtype:float32")


def _no_empty(dtype, rng):
    return (s for s in unary(dtype, rng) if not (isinstance(s.args[0], np.ndarray) and
                                                   s.args[0].size == 0))


def _vh(name):
    return lambda lib, ts, **kw: getattr(lib, name)(ts, **kw)


ARR = dict(dtypes=ALL, check_strides=True)

OPS = [
    OpInfo("cat", lambda lib, ts, *a: lib.cat(ts, *a), _cat_samples, covers=("concat",),
           **ARR,
           grad=True),
    OpInfo("concatenate", lambda lib, ts, d=0: lib.concatenate(ts, axis=d),
           lambda d, r: [S([M(r, (2, 3), d), M(r, (2, 1), d)], 1)], **ARR,
           grad=True),
    OpInfo("cat_out", lambda lib, a, b: lib.cat([a, b], out=lib.empty(0, dtype=a.dtype)),
           lambda d, r: [S(M(r, (2,), d), M(r, (3,), d))]),
    OpInfo("stack", lambda lib, ts, *a: lib.stack(ts, *a), _stack_samples, **ARR,
           grad=True),
    OpInfo("hstack", _vh("hstack"), _hvd_samples, **ARR,
           grad=True),
    OpInfo("vstack", _vh("vstack"), _hvd_samples, covers=("row_stack",), **ARR,
           grad=True),
    OpInfo("dstack", _vh("dstack"), _hvd_samples, **ARR,
           grad=True),
    OpInfo("column_stack", _vh("column_stack"), _hvd_samples, **ARR,
           grad=True),
    OpInfo("flip", lambda lib, a, dims: lib.flip(a, dims), _flip_samples,
           covers=("Tensor.flip",), **ARR,
           grad=True),
    OpInfo("Tensor.flip_varargs", lambda lib, a: a.flip(0, -1),
           lambda d, r: [S(M(r, (2, 3), d))],
           grad=True),
    OpInfo("fliplr", lambda lib, a: lib.fliplr(a), _no_empty, covers=("Tensor.fliplr",), **ARR,
           grad=True),
    OpInfo("flipud", lambda lib, a: a.flipud(), _no_empty, covers=("Tensor.flipud",), **ARR,
           grad=True),
    # torch.from_numpy gives empty tensors zero strides, which flip keeps: values only here
    OpInfo("flip_empty", lambda lib, a: lib.flip(a, [0]),
           lambda d, r: [S(M(r, (0, 2), d)), S(M(r, (0,), d))], dtypes=ALL,
           grad=True),
    OpInfo("roll_empty", lambda lib, a: lib.roll(a, 1),
           lambda d, r: [S(M(r, (0, 2), d)), S(M(r, (0,), d))], dtypes=ALL,
           grad=True),
    OpInfo("roll", lambda lib, a, *s: lib.roll(a, *s), _roll_samples,
           covers=("Tensor.roll",), **ARR,
           grad=True),
    OpInfo("rot90", lambda lib, a, *s: lib.rot90(a, *s), _rot90_samples,
           covers=("Tensor.rot90",), **ARR,
           grad=True),
    OpInfo("Tensor.repeat", lambda lib, a, reps: a.repeat(*reps), _repeat_samples, **ARR,
           grad=True),
    OpInfo("Tensor.repeat_list", lambda lib, a, reps: a.repeat(list(reps)),
           lambda d, r: [S(M(r, (2, 3), d), (2, 2))],
           grad=True),
    OpInfo("tile", lambda lib, a, reps: lib.tile(a, reps), _tile_samples,
           covers=("Tensor.tile",), **ARR,
           grad=True),
    OpInfo("repeat_interleave", lambda lib, a, *s: lib.repeat_interleave(a, *s), _ri_samples,
           covers=("Tensor.repeat_interleave",), **ARR,
           grad=True),
    OpInfo("repeat_interleave_counts", lambda lib, c, **kw: lib.repeat_interleave(c, **kw),
           lambda d, r: [S(np.array([1, 0, 3])), S(np.array([2, 1], dtype=np.int32)),
                         S(np.array([1, 2]), output_size=3),
                         S(np.array([1, 2]), output_size=4), S(np.array([-1, 2])),
                         S(np.array([[1, 2]])), S(np.array([1.0, 2.0])),
                         S(np.zeros(0, dtype=np.int64))]),
    OpInfo("repeat_interleave_output_size",
           lambda lib, a, c: lib.repeat_interleave(a, c, dim=0, output_size=4),
           lambda d, r: [S(M(r, (2, 2), d), np.array([1, 3])),
                         S(M(r, (2, 2), d), np.array([1, 2]))],
           grad=True),
    OpInfo("tril", lambda lib, a, *d: lib.tril(a, *d), _tri_samples,
           covers=("Tensor.tril",), **ARR,
           grad=True),
    OpInfo("triu", lambda lib, a, *d: a.triu(*d), _tri_samples, covers=("Tensor.triu",),
           **ARR,
           grad=True),
    OpInfo("Tensor.tril_", lambda lib, a, *d: a.clone().tril_(*d), _tri_samples, dtypes=ALL,
           grad=True),
    OpInfo("Tensor.triu_", lambda lib, a, *d: a.clone().triu_(*d), _tri_samples, dtypes=ALL,
           grad=True),
    OpInfo("tril_out", lambda lib, a: lib.tril(a, out=lib.empty(0, dtype=a.dtype)),
           lambda d, r: [S(M(r, (3, 3), d))]),
    OpInfo("tril_indices", lambda lib, *a, **kw: lib.tril_indices(*a, **kw), _triu_idx_samples,
           dtypes=("int64",)),
    OpInfo("triu_indices", lambda lib, *a, **kw: lib.triu_indices(*a, **kw), _triu_idx_samples,
           dtypes=("int64",)),
    OpInfo("diag", lambda lib, a, *d: lib.diag(a, *d), _diag_samples,
           covers=("Tensor.diag",), **ARR,
           grad=True),
    OpInfo("diag_embed", lambda lib, a, *d: lib.diag_embed(a, *d), _diag_embed_samples,
           covers=("Tensor.diag_embed",), **ARR,
           grad=True),
    OpInfo("diagflat", lambda lib, a, *d: a.diagflat(*d), _diagflat_samples,
           covers=("Tensor.diagflat",), **ARR,
           grad=True),
    OpInfo("block_diag", lambda lib, *ts: lib.block_diag(*ts), _block_diag_samples, **ARR,
           grad=True),
    OpInfo("meshgrid", _meshgrid, _meshgrid_samples, dtypes=ALL, view=True,
           grad=True),
    OpInfo("broadcast_tensors", lambda lib, *ts: lib.broadcast_tensors(*ts),
           _broadcast_samples, dtypes=ALL, view=True,
           grad=True),
    OpInfo("broadcast_shapes", lambda lib, *s: lib.broadcast_shapes(*s),
           lambda d, r: [S((2, 1), (3,)), S(2, (3, 1)), S(), S((0, 1), (1, 5)),
                         S((2, 1), (3, 3)), S((2,), (-1,))], dtypes=("float32",)),
    OpInfo("atleast_1d", lambda lib, *ts: lib.atleast_1d(*ts), _atleast_samples, dtypes=ALL,
           view=True,
           grad=True),
    OpInfo("atleast_2d", lambda lib, *ts: lib.atleast_2d(*ts), _atleast_samples, dtypes=ALL,
           view=True,
           grad=True),
    OpInfo("atleast_3d", lambda lib, *ts: lib.atleast_3d(*ts), _atleast_samples, dtypes=ALL,
           view=True,
           grad=True),
    OpInfo("cartesian_prod", lambda lib, *ts: lib.cartesian_prod(*ts), _one_d_lists, **ARR,
           grad=True),
    OpInfo("combinations", lambda lib, a, *s: lib.combinations(a, *s), _comb_samples, **ARR,
           grad=True),
    OpInfo("narrow_copy", lambda lib, a, *s: lib.narrow_copy(a, *s), _narrow_copy_samples,
           covers=("Tensor.narrow_copy",), **ARR),
]


# ----------------------------------------------------------------------------- random ops
# nondeterministic: dtype, shape and error types are compared with torch, not values.

def _sizes(dtype, rng):
    yield S(2, 3, dtype="dtype:" + dtype)
    yield S((2, 3), dtype="dtype:" + dtype)
    yield S(size=(4,), dtype="dtype:" + dtype)
    yield S(0, dtype="dtype:" + dtype)
    yield S(dtype="dtype:" + dtype)
    yield S(-1, dtype="dtype:" + dtype)


def _sizes_default(dtype, rng):
    yield S(2, 3)
    yield S([3])


def _randint_samples(dtype, rng):
    dt = "dtype:" + dtype
    yield S(10, (2, 3), dtype=dt)
    yield S(-3, 3, (4,), dtype=dt)
    yield S(0, 2, (5,), dtype=dt)
    yield S(1, 300, (2,), dtype=dt)
    yield S(5, 5, (2,), dtype=dt)
    yield S(0, (2,), dtype=dt)


def _like_samples(dtype, rng):
    yield from unary(dtype, rng)


def _normal_samples(dtype, rng):
    a = M(rng, (2, 1), dtype, 0, 2)
    yield S(a, M(rng, (3,), dtype, 0, 2))
    yield S(a, 0.5)
    yield S(1.0, T(M(rng, (2, 3), dtype, 0, 2)))
    yield S(0.0, 2.0, (2, 3), dtype="dtype:" + dtype)
    yield S(0.0, 2.0, size=(4,))
    yield S(a, -1.0)
    yield S(0.0, -1.0, (2,))
    yield S(M(rng, (2,), dtype), M(rng, (2,), dtype, -3, -1))
    if dtype == "float32":
        yield S(a, M(rng, (3,), "float64", 0, 2))
        yield S(M(rng, (2,), "int64"), 1.0)


def _prob_samples(dtype, rng):
    yield S(M(rng, (3, 4), dtype, 0, 1))
    yield S(M(rng, (), dtype, 0, 1))
    yield S(M(rng, (0,), dtype, 0, 1))
    yield S(T(M(rng, (3, 4), dtype, 0, 1)))
    yield S(M(rng, (3,), dtype, 1.5, 2))


def _multinomial_samples(dtype, rng):
    w = M(rng, (5,), dtype, 0.5, 2)
    yield S(w, 3)
    yield S(w, 8, True)
    yield S(M(rng, (3, 4), dtype, 0.5, 2), 4)
    yield S(T(M(rng, (3, 4), dtype, 0.5, 2)), 2, True)
    yield S(w, 6)
    yield S(w, 0)
    yield S(M(rng, (2, 2, 2), dtype, 0.5, 2), 1)
    yield S(M(rng, (3,), dtype, -2, -1), 1)
    yield S(M(rng, (3,), dtype, 0, 0), 1)


def _inplace_samples(dtype, rng):
    yield S(M(rng, (3, 4), dtype))
    yield S(M(rng, (), dtype))
    yield S(M(rng, (0, 2), dtype))


def _inplace(method, *args, **kwargs):
    return lambda lib, a: getattr(a.clone(), method)(*args, **kwargs)


RAND = dict(nondeterministic=True)

OPS += [
    OpInfo("rand", lambda lib, *s, **kw: lib.rand(*s, **kw), _sizes, dtypes=ALL, **RAND),
    OpInfo("rand_default", lambda lib, *s: lib.rand(*s), _sizes_default, **RAND),
    OpInfo("randn", lambda lib, *s, **kw: lib.randn(*s, **kw), _sizes, dtypes=ALL, **RAND),
    OpInfo("randn_default", lambda lib, *s: lib.randn(*s), _sizes_default, **RAND),
    OpInfo("randint", lambda lib, *s, **kw: lib.randint(*s, **kw), _randint_samples,
           dtypes=ALL, **RAND),
    OpInfo("randint_default", lambda lib: lib.randint(3, 7, (5,)), lambda d, r: [S()],
           **RAND),
    OpInfo("randperm", lambda lib, n, **kw: lib.randperm(n, **kw),
           lambda d, r: [S(5), S(0), S(-1), S(7, dtype="dtype:" + d)],
           dtypes=INTS + F32, **RAND),
    OpInfo("rand_like", lambda lib, a: lib.rand_like(a), _like_samples, dtypes=ALL, **RAND),
    OpInfo("randn_like", lambda lib, a: lib.randn_like(a), _like_samples, dtypes=ALL, **RAND),
    OpInfo("randint_like", lambda lib, a: lib.randint_like(a, 2, 5), _like_samples,
           dtypes=("uint8", "int32", "int64", "float32", "float64"), **RAND),
    OpInfo("normal", lambda lib, *s, **kw: lib.normal(*s, **kw), _normal_samples,
           dtypes=FLOATS, **RAND),
    OpInfo("bernoulli", lambda lib, p: lib.bernoulli(p), _prob_samples,
           dtypes=FLOATS, covers=("Tensor.bernoulli",), **RAND),
    OpInfo("bernoulli_p", lambda lib, a: lib.bernoulli(a, 0.3), _like_samples,
           dtypes=FLOATS, **RAND),
    OpInfo("multinomial", lambda lib, w, *s: lib.multinomial(w, *s), _multinomial_samples,
           dtypes=F32 + ("float16",), covers=("Tensor.multinomial",), **RAND),
    OpInfo("multinomial_int", lambda lib, w: lib.multinomial(w, 1),
           lambda d, r: [S(M(r, (3,), d, 1, 3))], dtypes=("int64",), **RAND),
    OpInfo("poisson", lambda lib, a: lib.poisson(a), lambda d, r: unary(d, r, 0, 5),
           dtypes=FLOATS + ("int64",), **RAND),
    OpInfo("poisson_negative", lambda lib, a: lib.poisson(a),
           lambda d, r: [S(M(r, (3,), d, -3, -1))], **RAND),
    OpInfo("Tensor.uniform_", _inplace("uniform_", -2, 3), _inplace_samples, dtypes=ALL,
           **RAND),
    OpInfo("Tensor.uniform_bad", _inplace("uniform_", 3, 2), _inplace_samples, **RAND),
    OpInfo("Tensor.normal_", _inplace("normal_", 1.0, 2.0), _inplace_samples, dtypes=ALL,
           **RAND),
    OpInfo("Tensor.normal_bad", _inplace("normal_", 0.0, -1.0), _inplace_samples, **RAND),
    OpInfo("Tensor.random_", _inplace("random_"), _inplace_samples, dtypes=ALL, **RAND),
    OpInfo("Tensor.random_to", _inplace("random_", 2), _inplace_samples, dtypes=ALL,
           **RAND),
    OpInfo("Tensor.random_range", _inplace("random_", -3, 3), _inplace_samples, dtypes=ALL,
           **RAND),
    OpInfo("Tensor.exponential_", _inplace("exponential_", 2.0), _inplace_samples,
           dtypes=ALL, **RAND),
    OpInfo("Tensor.exponential_bad", _inplace("exponential_", -1.0), _inplace_samples,
           **RAND),
    OpInfo("Tensor.geometric_", _inplace("geometric_", 0.3), _inplace_samples,
           dtypes=INTS + FLOATS, **RAND),
    OpInfo("Tensor.geometric_bad", _inplace("geometric_", 1.5), _inplace_samples, **RAND),
    OpInfo("Tensor.cauchy_", _inplace("cauchy_"), _inplace_samples,
           dtypes=FLOATS + ("int64",), **RAND),
    OpInfo("Tensor.log_normal_", _inplace("log_normal_"), _inplace_samples,
           dtypes=FLOATS + ("int64",), **RAND),
    OpInfo("Tensor.log_normal_bad", _inplace("log_normal_", 1.0, -1.0), _inplace_samples,
           **RAND),
    OpInfo("Tensor.bernoulli_", _inplace("bernoulli_", 0.25), _inplace_samples,
           dtypes=ALL[:-2], **RAND),
    OpInfo("Tensor.bernoulli_bad", _inplace("bernoulli_", 1.5), _inplace_samples, **RAND),
    OpInfo("Tensor.bernoulli_tensor", lambda lib, a, p: a.clone().bernoulli_(p),
           lambda d, r: [S(M(r, (3, 4), d), M(r, (4,), "float32", 0, 1)),
                         S(M(r, (3, 4), d), M(r, (5,), "float32", 0, 1))],
           dtypes=F32 + ("int64",), **RAND),
    OpInfo("get_rng_state", lambda lib: lib.get_rng_state().dtype, lambda d, r: [S()]),
    OpInfo("manual_seed", lambda lib, s: lib.manual_seed(s).initial_seed(),
           lambda d, r: [S(3), S(-1), S(2 ** 64 - 1), S(2 ** 64)],
           covers=("Generator.manual_seed", "Generator.initial_seed")),
    # torch cannot backpropagate narrow_copy's sample that starts at the end (a (3, 1) result)
    OpInfo("narrow_copy_grad", lambda lib, x, *a: lib.narrow_copy(x, *a), lambda d, r: [
        S(M(r, (3, 4), d), 0, 1, 2), S(M(r, (3, 4), d), 1, 2, 2),
        S(T(M(r, (3, 4), d)), 1, 1, 2)], dtypes=("float32", "float64"),
        covers=("narrow_copy",), grad=True),
]
