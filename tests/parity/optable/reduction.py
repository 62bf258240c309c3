"""Reductions, scans, sorting and counting."""

import numpy as np

from ..harness import ALL, FLOATS, INTS, REALS, E, OpInfo, S, T, make_array

NONBOOL = INTS + FLOATS
CPLX = ("complex64",)
# NaN samples: float64 samples stay finite so the gradient entries can gradcheck them
# (finite differences through NaN give NaN); the other float dtypes cover NaN handling.
NAN = ("float16", "bfloat16", "float32")


def _arrays(dtype, rng, low=-5, high=5):
    """0-d, empty, 1-3-d, non-contiguous and expanded inputs, with their ndim."""
    for shape in [(), (0,), (5,), (3, 4), (2, 3, 4), (0, 3)]:
        yield make_array(rng, shape, dtype, low, high)
    yield T(make_array(rng, (3, 4), dtype, low, high))
    yield E(make_array(rng, (1, 4), dtype, low, high), (3, 4))


def _ndim(a):
    return len(a.shape) if isinstance(a, E) else (a.arr.ndim if isinstance(a, T) else a.ndim)


def _arrays_samples(dtype, rng):
    for a in _arrays(dtype, rng):
        yield S(a)
    if dtype in NAN:
        yield S(_with_nan(dtype, rng))


def _with_nan(dtype, rng):
    a = make_array(rng, (3, 5), dtype)
    if dtype in FLOATS:
        a[0, 1] = np.nan
        a[2, 0] = a[2, 3] = np.nan
    return a


def _reduce(dtype, rng, tuple_dims=True, nan=True):
    """Full, single-dim (positive, negative, 0-d with 0/-1), keepdim and tuple-dim samples."""
    for a in _arrays(dtype, rng):
        nd = _ndim(a)
        yield S(a)
        for d in (0, -1):
            yield S(a, dim=d)
            yield S(a, dim=d, keepdim=True)
        if nd >= 2 and tuple_dims:
            yield S(a, dim=(0, -1))
            yield S(a, dim=[1, 0], keepdim=True)
    yield S(make_array(rng, (3, 4), dtype), dim=2)  # out of range
    if nan and dtype in NAN:
        yield S(_with_nan(dtype, rng))
        yield S(_with_nan(dtype, rng), dim=1)


def _distinct(rng, shape, dtype):
    """Values without ties (a permutation), so the index of a median/top-k is unambiguous."""
    n = int(np.prod(shape))
    v = rng.permutation(n) - (0 if dtype == "uint8" else n // 2)
    if dtype == "bfloat16":
        import ml_dtypes
        return v.reshape(shape).astype(ml_dtypes.bfloat16)
    return v.reshape(shape).astype(dtype)


def _select_samples(dtype, rng, nan=True):
    yield S(_distinct(rng, (), dtype), 0)
    yield S(_distinct(rng, (7,), dtype), 0)
    yield S(_distinct(rng, (4, 5), dtype), 1)
    yield S(_distinct(rng, (4, 5), dtype), -2, keepdim=True)
    yield S(_distinct(rng, (2, 3, 4), dtype), 1)
    yield S(T(_distinct(rng, (4, 6), dtype)), 1)
    yield S(make_array(rng, (0, 3), dtype), 1)
    yield S(make_array(rng, (0, 3), dtype), 0)  # empty reduced dim
    yield S(_distinct(rng, (3,), dtype), 1)  # out of range
    if nan and dtype in NAN:
        a = _distinct(rng, (3, 5), dtype)
        a[0, 1] = a[2, 0] = a[2, 3] = np.nan
        yield S(a, 1)


def _scan_samples(dtype, rng):
    for a in _arrays(dtype, rng, -2, 3):
        yield S(a, 0)
        yield S(a, -1)
    yield S(make_array(rng, (3, 4), dtype, -2, 3), 2)  # out of range


def _cummax_samples(dtype, rng):
    yield from _scan_samples(dtype, rng)
    yield S(make_array(rng, (4, 9), dtype, 0, 3), 1)  # many ties
    if dtype in NAN:
        a = make_array(rng, (2, 7), dtype)
        a[0, 2] = a[0, 5] = a[1, 0] = np.nan
        yield S(a, 1)


def _sort_samples(dtype, rng):
    for a in _arrays(dtype, rng, 0, 4):  # small range: many ties, checks stability
        yield S(a)
        yield S(a, 0)
        yield S(a, -1, True)
    yield S(make_array(rng, (3, 4), dtype), 2)  # out of range
    if dtype in NAN:
        a = make_array(rng, (3, 6), dtype, 0, 3)
        a[0, 1] = a[0, 4] = a[2, 0] = np.nan
        yield S(a)
        yield S(a, descending=True)


def _topk_samples(dtype, rng):
    yield S(_distinct(rng, (7,), dtype), 3)
    yield S(_distinct(rng, (4, 5), dtype), 2, 0)
    yield S(_distinct(rng, (4, 5), dtype), 5, largest=False)
    yield S(T(_distinct(rng, (4, 6), dtype)), 0, 1)
    yield S(_distinct(rng, (), dtype), 1)
    yield S(make_array(rng, (0, 3), dtype), 2)
    yield S(_distinct(rng, (3,), dtype), 4)  # k out of range
    if dtype in NAN:
        a = _distinct(rng, (3, 5), dtype)
        a[0, 1] = a[2, 0] = np.nan
        yield S(a, 2)
        yield S(a, 2, largest=False)


def _var_samples(dtype, rng):
    # float64 leaves out the zero-degrees-of-freedom samples (NaN results) for gradcheck
    finite = dtype == "float64"
    yield from (s for s in _reduce(dtype, rng) if not (finite and _ndim(s.args[0]) == 0))
    a = make_array(rng, (3, 4), dtype)
    yield S(a, correction=0)
    yield S(a, dim=1, correction=2, keepdim=True)
    yield S(a, dim=(0, 1), unbiased=False)
    if not finite:
        yield S(make_array(rng, (1, 4), dtype), dim=0)  # zero degrees of freedom


def _unique_samples(dtype, rng):
    for a in _arrays(dtype, rng, 0, 4):
        yield S(a)
        yield S(a, return_inverse=True, return_counts=True)
    a = make_array(rng, (5, 3), dtype, 0, 2)
    a[3] = a[1]
    yield S(a, dim=0, return_inverse=True, return_counts=True)
    yield S(a, dim=1, return_counts=True)
    yield S(make_array(rng, (0, 3), dtype), dim=0, return_inverse=True)
    yield S(make_array(rng, (), dtype), dim=0)  # 0-d with dim
    if dtype in FLOATS:
        yield S(np.array([np.nan, 1, np.nan, 1], dtype="float32").astype(
            make_array(rng, (1,), dtype).dtype), return_counts=True)


def _unique_consecutive_samples(dtype, rng):
    yield from _unique_samples(dtype, rng)
    yield S(make_array(rng, (9,), dtype, 0, 2), return_inverse=True, return_counts=True)


def _mode_samples(dtype, rng):
    yield S(make_array(rng, (9,), dtype, 0, 3))
    yield S(make_array(rng, (4, 7), dtype, 0, 3), 1)
    yield S(make_array(rng, (4, 7), dtype, 0, 4), 0, True)
    yield S(T(make_array(rng, (4, 7), dtype, 0, 3)), 1)
    yield S(make_array(rng, (2, 3, 5), dtype, 0, 3), -2)
    yield S(make_array(rng, (), dtype), 0)
    yield S(make_array(rng, (0, 3), dtype), 0)
    yield S(make_array(rng, (3, 0), dtype), 0)


def _bincount_samples(dtype, rng):
    yield S(make_array(rng, (10,), dtype, 0, 6))
    yield S(make_array(rng, (10,), dtype, 0, 6), minlength=9)
    yield S(make_array(rng, (0,), dtype, 0, 6))
    yield S(make_array(rng, (6,), dtype, 0, 6), weights=make_array(rng, (6,), "float32"))
    yield S(make_array(rng, (6,), dtype, 0, 6), weights=make_array(rng, (6,), "int64"))
    yield S(make_array(rng, (6,), dtype, 0, 6), weights=make_array(rng, (5,), "float32"))
    yield S(make_array(rng, (2, 3), dtype, 0, 6))
    if dtype != "uint8":
        yield S(make_array(rng, (6,), dtype, -3, 3))  # negative values


def _histc_samples(dtype, rng):
    yield S(make_array(rng, (50,), dtype))
    yield S(make_array(rng, (4, 5), dtype), bins=7)
    yield S(make_array(rng, (30,), dtype), bins=5, min=-2, max=3)
    yield S(T(make_array(rng, (4, 5), dtype)), bins=4, min=-1, max=1)
    yield S(make_array(rng, (0,), dtype), bins=3)
    yield S(np.full((3,), 2, dtype=make_array(rng, (1,), dtype).dtype), bins=4)
    yield S(make_array(rng, (5,), dtype), bins=3, min=2, max=1)  # min > max


def _diff_samples(dtype, rng):
    yield S(make_array(rng, (6,), dtype))
    yield S(make_array(rng, (3, 5), dtype), n=2)
    yield S(make_array(rng, (3, 5), dtype), dim=0)
    yield S(T(make_array(rng, (4, 5), dtype)), dim=1)
    yield S(make_array(rng, (4,), dtype), n=6)
    yield S(make_array(rng, (3, 4), dtype), prepend=make_array(rng, (3, 2), dtype),
            append=make_array(rng, (3, 1), dtype))
    yield S(make_array(rng, (), dtype))  # 0-d refused
    if dtype == "int64":
        yield S(make_array(rng, (4,), dtype), prepend=make_array(rng, (1,), "float32"))


def _minmax_binary(dtype, rng):
    yield S(make_array(rng, (3, 4), dtype), make_array(rng, (4,), dtype))


def _logical(dtype, rng):
    yield from _reduce(dtype, rng, nan=False)
    z = make_array(rng, (3, 4), dtype, 0, 2)
    yield S(z, dim=1)
    yield S(z)


def _mode_checked(lib, a):
    # Past 16 elements torch's (unstable) sort picks an arbitrary index among the equal
    # values: compare the values, and check that the indices point at them.
    v, i = lib.mode(a, 1)
    return v, a.gather(1, i.unsqueeze(1)).squeeze(1)


def _logical_empty_dims(dtype, rng):
    yield S(make_array(rng, (2, 3), dtype, 0, 2), dim=())
    yield S(make_array(rng, (2, 3), dtype, 0, 2), dim=[], keepdim=True)


def _zeros_samples(dtype, rng):
    """Products with zeros: one zero, two zeros in a slice, zeros in a row only."""
    a = make_array(rng, (3, 5), dtype, 1, 3)
    a[0, 2] = 0
    b = a.copy()
    b[1, 1] = b[1, 3] = 0
    for x in (a, b):
        yield S(x)
        yield S(x, 1)
        yield S(x, 0, keepdim=True)
    yield S(np.zeros((4,), dtype))
    yield S(make_array(rng, (), dtype), 0)


def _prod_zeros(lib, a, *args, **kw):
    return lib.prod(a, *args, **kw)


def _cumprod_zeros(lib, a, *args, **kw):
    return lib.cumprod(a, args[0] if args else -1)


def _ties(dtype, rng):
    """Integer-valued floats with many ties (and a slice that is all one value)."""
    a = make_array(rng, (3, 6), "int64", 0, 3).astype(dtype)
    a[2] = 1
    yield S(a)


def _ties_ops(lib, a):
    return (a.max(), a.min(), a.max(1).values, a.amax(1), a.amin(), a.median(),
            a.nanmedian(1).values, lib.aminmax(a, dim=1).max, a.cummax(1).values,
            a.cummin(0).values, a.sort(1, descending=True).values, a.mode(1).values)


def _sorted_topk(lib, a, *args, **kw):
    # sorted=False leaves the order unspecified: compare the sorted values
    return lib.topk(a, *args, sorted=False, **kw).values.sort().values


OPS = [
    OpInfo("prod_zeros", _prod_zeros, _zeros_samples, dtypes=("float32", "float64"),
           covers=("prod",), grad=True),
    OpInfo("cumprod_zeros", _cumprod_zeros, _zeros_samples, dtypes=("float32", "float64"),
           covers=("cumprod",), grad=True),
    # ties: torch's tie-breaking in gradients; not smooth there, so no gradcheck
    OpInfo("reduction_ties", _ties_ops, _ties, dtypes=("float32", "float64"), grad=True,
           gradcheck=False),
    OpInfo("sum", lambda lib, a, **kw: lib.sum(a, **kw), _reduce, dtypes=ALL,
           covers=("Tensor.sum",),
           grad=True),
    OpInfo("sum_dtype", lambda lib, a, **kw: a.sum(dtype=lib.float64, **kw), _reduce,
           dtypes=("int32", "float16"),
           grad=True),
    OpInfo("sum_dtype_int", lambda lib, a: lib.sum(a, 0, dtype=lib.int32),
           lambda d, r: [S(make_array(r, (4, 3), d))], dtypes=("float32",)),
    OpInfo("sum_out", lambda lib, a: lib.sum(a, 1, out=lib.empty(0, dtype=a.dtype)),
           lambda d, r: [S(make_array(r, (4, 3), d))], dtypes=("float32",)),
    OpInfo("nansum", lambda lib, a, **kw: lib.nansum(a, **kw), _reduce, dtypes=ALL,
           covers=("Tensor.nansum",),
           grad=True),
    OpInfo("prod", lambda lib, a, **kw: lib.prod(a, **kw),
           lambda d, r: (s for s in _reduce(d, r, tuple_dims=False)), dtypes=ALL,
           covers=("Tensor.prod",), tol={"float16": (4e-3, 1e-2), "bfloat16": (3e-2, 1e-1)},
           grad=True),
    OpInfo("mean", lambda lib, a, **kw: lib.mean(a, **kw), _reduce, dtypes=ALL,
           covers=("Tensor.mean",),
           grad=True),
    OpInfo("mean_dtype", lambda lib, a: a.mean(dtype=lib.float64),
           lambda d, r: [S(make_array(r, (4, 3), d))], dtypes=("int32", "float32"),
           grad=True),
    OpInfo("nanmean", lambda lib, a, **kw: lib.nanmean(a, **kw), _reduce, dtypes=ALL,
           covers=("Tensor.nanmean",),
           grad=True),
    OpInfo("var", lambda lib, a, **kw: lib.var(a, **kw), _var_samples, dtypes=ALL,
           covers=("Tensor.var",),
           grad=True),
    OpInfo("std", lambda lib, a, **kw: lib.std(a, **kw), _var_samples, dtypes=ALL,
           covers=("Tensor.std",),
           grad=True),
    OpInfo("std_legacy", lambda lib, a: (lib.std(a, False), a.std(1, True, True),
                                         lib.var(a, 0, False)),
           lambda d, r: [S(make_array(r, (4, 3), d))], dtypes=FLOATS,
           grad=True),
    OpInfo("var_mean", lambda lib, a, **kw: lib.var_mean(a, **kw), _var_samples,
           dtypes=FLOATS + CPLX,
           grad=True),
    OpInfo("std_mean", lambda lib, a, **kw: lib.std_mean(a, **kw), _var_samples,
           dtypes=FLOATS + CPLX,
           grad=True),
    OpInfo("max", lambda lib, a, **kw: lib.max(a, **kw),
           lambda d, r: _reduce(d, r, tuple_dims=False), dtypes=ALL, covers=("Tensor.max",),
           grad=True),
    OpInfo("min", lambda lib, a, **kw: a.min(**kw), lambda d, r: _reduce(d, r, tuple_dims=False),
           dtypes=ALL, covers=("Tensor.min", "min"),
           grad=True),
    OpInfo("max_binary", lambda lib, a, b: (lib.max(a, b), a.min(b)), _minmax_binary,
           dtypes=("float32", "int64")),
    OpInfo("amax", lambda lib, a, **kw: lib.amax(a, **kw), _reduce, dtypes=ALL,
           covers=("Tensor.amax",),
           grad=True),
    OpInfo("amin", lambda lib, a, **kw: a.amin(**kw), _reduce, dtypes=ALL,
           covers=("Tensor.amin", "amin"),
           grad=True),
    OpInfo("aminmax", lambda lib, a, **kw: lib.aminmax(a, **kw),
           lambda d, r: _reduce(d, r, tuple_dims=False), dtypes=ALL,
           covers=("Tensor.aminmax",),
           grad=True),
    OpInfo("argmax", lambda lib, a, **kw: lib.argmax(a, **kw),
           lambda d, r: _reduce(d, r, tuple_dims=False), dtypes=ALL,
           covers=("Tensor.argmax",)),
    OpInfo("argmin", lambda lib, a, **kw: a.argmin(**kw),
           lambda d, r: _reduce(d, r, tuple_dims=False), dtypes=ALL,
           covers=("Tensor.argmin", "argmin")),
    OpInfo("argmax_keepdim_all", lambda lib, a: lib.argmax(a, keepdim=True),
           lambda d, r: [S(make_array(r, (3, 4), d))], dtypes=("float32",)),
    OpInfo("all", lambda lib, a, **kw: lib.all(a, **kw), _logical, dtypes=ALL,
           covers=("Tensor.all",)),
    OpInfo("any", lambda lib, a, **kw: a.any(**kw), _logical, dtypes=ALL,
           covers=("Tensor.any", "any")),
    OpInfo("all_empty_dims", lambda lib, a, **kw: (lib.all(a, **kw), a.any(**kw)),
           _logical_empty_dims, dtypes=("uint8", "float32")),
    OpInfo("count_nonzero", lambda lib, a, **kw: lib.count_nonzero(a, **kw),
           lambda d, r: (s for s in _logical(d, r) if "keepdim" not in s.kwargs), dtypes=ALL,
           covers=("Tensor.count_nonzero",)),
    OpInfo("logsumexp", lambda lib, a, **kw: lib.logsumexp(a, **kw),
           lambda d, r: (s for s in _reduce(d, r) if "dim" in s.kwargs), dtypes=ALL,
           covers=("Tensor.logsumexp",),
           grad=True),
    OpInfo("logsumexp_inf", lambda lib, a: lib.logsumexp(a, 1),
           lambda d, r: [S(np.array([[np.inf, 1.0], [-np.inf, -np.inf], [2.0, 1e4]], d))],
           dtypes=("float64",),
           grad=True, gradcheck=False),  # infinite inputs: finite differences give NaN
    OpInfo("cumsum", lambda lib, a, d: lib.cumsum(a, d), _scan_samples, dtypes=ALL,
           covers=("Tensor.cumsum",),
           grad=True),
    OpInfo("cumsum_dtype", lambda lib, a, d: a.cumsum(d, dtype=lib.float32), _scan_samples,
           dtypes=("int32", "float64"),
           grad=True, gradcheck=False),  # a float32 output is too coarse for eps=1e-6
    OpInfo("Tensor.cumsum_", lambda lib, a, d: a.clone().cumsum_(d), _scan_samples,
           dtypes=NONBOOL,
           grad=True),
    OpInfo("cumprod", lambda lib, a, d: lib.cumprod(a, d), _scan_samples, dtypes=ALL,
           covers=("Tensor.cumprod",),
           grad=True),
    OpInfo("Tensor.cumprod_", lambda lib, a, d: a.clone().cumprod_(d), _scan_samples,
           dtypes=("int32", "float32"),
           grad=True),
    OpInfo("cummax", lambda lib, a, d: lib.cummax(a, d), _cummax_samples, dtypes=ALL,
           covers=("Tensor.cummax",),
           grad=True),
    OpInfo("cummin", lambda lib, a, d: a.cummin(d), _cummax_samples, dtypes=ALL,
           covers=("Tensor.cummin", "cummin"),
           grad=True),
    OpInfo("logcumsumexp", lambda lib, a, d: lib.logcumsumexp(a, d), _scan_samples,
           dtypes=REALS, covers=("Tensor.logcumsumexp",),
           grad=True),
    OpInfo("sort", lambda lib, a, *args, **kw: lib.sort(a, *args, **kw), _sort_samples,
           dtypes=ALL, covers=("Tensor.sort",),
           grad=True),
    OpInfo("sort_stable", lambda lib, a, *args, **kw: a.sort(stable=True, **kw), _sort_samples,
           dtypes=("int64", "float32"),
           grad=True),
    OpInfo("argsort", lambda lib, a, *args, **kw: lib.argsort(a, *args, **kw), _sort_samples,
           dtypes=ALL, covers=("Tensor.argsort",)),
    OpInfo("msort", lambda lib, a, *args, **kw: lib.msort(a), _sort_samples, dtypes=ALL,
           covers=("Tensor.msort",),
           grad=True),
    OpInfo("topk", lambda lib, a, *args, **kw: lib.topk(a, *args, **kw), _topk_samples,
           dtypes=NONBOOL + CPLX, covers=("Tensor.topk",),
           grad=True),
    OpInfo("topk_unsorted", _sorted_topk, _topk_samples, dtypes=("int64", "float32"),
           grad=True),
    OpInfo("kthvalue", lambda lib, a, d, **kw: lib.kthvalue(a, 2 if a.numel() > 1 else 1, d,
                                                            **kw),
           _select_samples, dtypes=NONBOOL, covers=("Tensor.kthvalue",),
           grad=True),
    OpInfo("kthvalue_k", lambda lib, a, k: a.kthvalue(k),
           lambda d, r: [S(_distinct(r, (3, 4), d), k) for k in (1, 4, 0, 5)],
           dtypes=("float32",),
           grad=True),
    OpInfo("median", lambda lib, a, d, **kw: lib.median(a, d, **kw), _select_samples,
           dtypes=ALL, covers=("Tensor.median",),
           grad=True),
    OpInfo("median_all", lambda lib, a, **kw: a.median(), lambda d, r: _arrays_samples(d, r),
           dtypes=ALL,
           grad=True),
    OpInfo("nanmedian", lambda lib, a, d, **kw: lib.nanmedian(a, d, **kw), _select_samples,
           dtypes=ALL, covers=("Tensor.nanmedian",),
           grad=True),
    OpInfo("nanmedian_all", lambda lib, a: a.nanmedian(), lambda d, r: _arrays_samples(d, r),
           dtypes=FLOATS + ("int64",),
           grad=True),
    OpInfo("mode", lambda lib, a, *args, **kw: lib.mode(a, *args, **kw), _mode_samples,
           dtypes=ALL, covers=("Tensor.mode",),
           grad=True),
    OpInfo("mode_long_rows", _mode_checked, lambda d, r: [S(make_array(r, (6, 40), d, 0, 4))],
           dtypes=("int64", "float32"),
           grad=True),
    OpInfo("unique", lambda lib, a, **kw: lib.unique(a, **kw), _unique_samples, dtypes=ALL,
           covers=("Tensor.unique",)),
    OpInfo("unique_consecutive", lambda lib, a, **kw: lib.unique_consecutive(a, **kw),
           _unique_consecutive_samples, dtypes=ALL, covers=("Tensor.unique_consecutive",)),
    OpInfo("bincount", lambda lib, a, **kw: lib.bincount(a, **kw), _bincount_samples,
           dtypes=REALS, covers=("Tensor.bincount",)),
    OpInfo("histc", lambda lib, a, **kw: lib.histc(a, **kw), _histc_samples, dtypes=REALS,
           covers=("Tensor.histc",)),
    OpInfo("diff", lambda lib, a, **kw: lib.diff(a, **kw), _diff_samples, dtypes=ALL,
           covers=("Tensor.diff",),
           grad=True),
]


# ----------------------------------------------------------------------------- cov, corrcoef

def _observations(dtype, rng):
    """Variables x observations: 2-D, 1-D, 0-d, one variable, one observation, empty,
    non-contiguous and expanded inputs, and a 3-D input (refused). Inputs with fewer than two
    observations (nan results) are left out of float64, whose samples gradcheck needs finite."""
    shapes = [(3, 5), (5,), (1, 6), (0, 4), (2, 3, 4)]
    if dtype != "float64":
        shapes += [(), (3, 1), (3, 0), (0,)]
    for shape in shapes:
        yield make_array(rng, shape, dtype)
    yield T(make_array(rng, (4, 6), dtype))
    yield E(make_array(rng, (1, 5), dtype), (3, 5))


def _cov_samples(dtype, rng):
    for a in _observations(dtype, rng):
        yield S(a)
    a = make_array(rng, (3, 5), dtype)
    for c in (0, 2, -1, 4):
        yield S(a, correction=c)
    yield S(make_array(rng, (2, 1), dtype), correction=0)
    yield from _no_dof(dtype, S(a, correction=5), S(a, correction=9))
    for bad in (1.5, True, "1"):
        yield S(a, correction=bad)
    fw = np.array([1, 2, 0, 3, 1])
    for f in (fw, fw.astype("int32"), fw.astype("uint8"), np.full(5, 4)):
        yield S(a, fweights=f)
        yield S(a, fweights=f, correction=3)
    yield S(a[0], fweights=fw)
    # (no single-observation sample with fweights: torch 2.13 zeroes the input there)
    for bad in (fw.astype("float32"), fw.astype(bool), -fw, fw[None], fw[:4], 0 * fw,
                [1, 2, 0, 3, 1]):
        yield S(a, fweights=bad)


def _no_dof(dtype, *samples):
    """Samples left with no degrees of freedom (inf results, with a warning). Not in float64,
    which gradcheck needs finite, nor complex: the diagonal's imaginary part is rounding noise
    (torch's matmul leaves ~1e-16, NumPy's exactly 0), which x / 0 turns into inf or nan."""
    return samples if dtype in FLOATS and dtype != "float64" else ()


def _aweights_samples(dtype, rng):
    """aweights positionally, so the gradient parity covers them too."""
    a = make_array(rng, (3, 5), dtype)
    double = dtype in ("float64", "complex128")
    aw = make_array(rng, (5,), "float64" if double else "float32", 0.2, 2)
    fw = np.array([1, 2, 1, 3, 1])
    yield S(a, aw)
    yield S(a, aw, correction=0)
    yield S(a, aw, correction=3)
    yield S(a, aw, fweights=fw)
    yield S(a, aw, fweights=fw, correction=2)
    yield S(a[0], aw)
    yield S(T(make_array(rng, (5, 3), dtype)), aw)
    yield S(a, aw.astype("float64"))
    if not double:
        yield S(a, aw.astype("float16"))
    yield from _no_dof(dtype, S(a, aw, correction=40))
    yield S(make_array(rng, (2, 0), dtype), aw[:0])
    for bad in (-aw, aw[None], aw[:3], 0 * aw, fw, aw.astype("complex64")):
        yield S(a, bad)


def _cov_aweights(lib, a, aw, **kw):
    return lib.cov(a, aweights=aw, **kw)


def _corrcoef_samples(dtype, rng):
    for a in _observations(dtype, rng):
        yield S(a)
    if dtype in NAN:  # a constant row: nan (kept out of float64, see _observations)
        yield S(np.array([[1, 1, 1], [1, 2, 3], [3, 2, 0.5]], dtype=make_array(rng, (), dtype)
                         .dtype))
    yield S([[1.0, 2.0]])  # not a Tensor


STATS = ("uint8", "int16", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128")

OPS += [
    OpInfo("cov", lambda lib, a, **kw: lib.cov(a, **kw), _cov_samples, dtypes=STATS + ("bool",),
           covers=("Tensor.cov",), tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)},
           grad=True),
    OpInfo("cov_aweights", _cov_aweights, _aweights_samples, dtypes=STATS,
           tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}, grad=True),
    OpInfo("corrcoef", lambda lib, a: a.corrcoef() if hasattr(a, "corrcoef") else
           lib.corrcoef(a), _corrcoef_samples, dtypes=STATS + ("bool",),
           covers=("Tensor.corrcoef",), tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)},
           grad=True),
]


# ----------------------------------------------------------------------------- isin, trapezoid

def _isin_samples(dtype, rng):
    a = make_array(rng, (3, 4), dtype, 0, 6)
    b = make_array(rng, (5,), dtype, 0, 6)
    yield S(a, b)
    yield S(a, b, invert=True)
    yield S(a, b, assume_unique=True)
    yield S(T(a), b)
    yield S(make_array(rng, (), dtype, 0, 6), b)
    yield S(make_array(rng, (0,), dtype), b)
    yield S(a, make_array(rng, (0,), dtype))
    yield S(a, 2)
    yield S(3, b)
    yield S(a, make_array(rng, (4,), "float32", 0, 6))  # promoted comparison
    if dtype in NAN:
        yield S(_with_nan(dtype, rng), np.array([np.nan, 1.0], dtype=a.dtype))  # NaN never found


def _trapezoid_samples(dtype, rng):
    y = make_array(rng, (3, 5), dtype)
    x = np.sort(make_array(rng, (5,), dtype, 0, 8))
    yield S(y)
    yield S(y, x)
    yield S(y, dx=0.5)
    yield S(y, dx=2)
    yield S(y, dim=0)
    yield S(y, np.sort(make_array(rng, (3, 5), dtype, 0, 8), axis=1))  # x like y
    yield S(make_array(rng, (2, 3, 4), dtype), make_array(rng, (3, 4), dtype))  # x padded
    yield S(T(make_array(rng, (4, 5), dtype)), make_array(rng, (4,), dtype), dim=0)
    yield S(make_array(rng, (1,), dtype))
    yield S(make_array(rng, (2, 0), dtype))
    yield S(y, make_array(rng, (4,), dtype))  # one x per sample point, refused
    yield S(make_array(rng, (), dtype))  # 0-d, refused
    yield S(y, dim=2)  # out of range


OPS += [
    OpInfo("isin", lambda lib, a, b, **kw: lib.isin(a, b, **kw), _isin_samples, dtypes=ALL),
    OpInfo("trapezoid", lambda lib, y, *a, **kw: lib.trapezoid(y, *a, **kw), _trapezoid_samples,
           dtypes=REALS, grad=True),
    OpInfo("trapz", lambda lib, y, *a, **kw: lib.trapz(y, *a, **kw), _trapezoid_samples,
           dtypes=("int64", "float32", "float64"), grad=True),
    OpInfo("cumulative_trapezoid", lambda lib, y, *a, **kw: lib.cumulative_trapezoid(y, *a, **kw),
           _trapezoid_samples, dtypes=REALS, grad=True),
]


def _quantile_samples(dtype, rng):
    a = make_array(rng, (3, 5), dtype)
    yield S(a, 0.3)
    yield S(a, np.array([0.0, 0.25, 1.0], dtype=dtype), 1)
    yield S(a, 0.5, 0, True)
    yield S(T(make_array(rng, (4, 3), dtype)), 0.7, -1)
    for interp in ("lower", "higher", "midpoint", "nearest"):
        yield S(a, np.array([0.1, 0.6], dtype=dtype), 1, interpolation=interp)
    nan = a.copy()
    if dtype in ("float32", "float64"):
        nan[0, 1] = np.nan
        nan[2, :] = np.nan
    yield S(nan, 0.4, 1)
    yield S(nan, np.array([0.2, 0.9], dtype=dtype), None, True)
    yield S(make_array(rng, (0,), dtype), 0.5)
    yield S(a, 1.5)
    yield S(a, np.array([[0.5]], dtype=dtype))
    yield S(a, 0.5, interpolation="foo")


OPS += [
    OpInfo("quantile", lambda lib, a, q, *args, **kw: lib.quantile(a, q, *args, **kw),
           _quantile_samples, dtypes=("float32", "float64", "int64"),
           covers=("Tensor.quantile",)),
    OpInfo("nanquantile", lambda lib, a, q, *args, **kw: lib.nanquantile(a, q, *args, **kw),
           _quantile_samples, dtypes=("float32", "float64", "int64"),
           covers=("Tensor.nanquantile",)),
]
