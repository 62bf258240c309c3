"""Linear algebra: products, decompositions, norms.

Decompositions with a sign/phase ambiguity (qr, svd, eigh, eig) are compared
through invariant quantities: reconstructions, singular values, absolute values,
sorted eigenvalues.
"""

import numpy as np

from ..harness import ALL, E, OpInfo, S, T, make_array

FC = ("float32", "float64", "complex64", "complex128")
# decompositions: plus dtypes torch refuses, to check the error type
DECOMP = FC + ("int64", "float16", "bfloat16")
PROD = ALL
LOOSE = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4), "float64": (1e-9, 1e-9),
         "complex128": (1e-9, 1e-9), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
SMALL = {"low": -3, "high": 3}


def _a(rng, shape, dtype, low=-3, high=3):
    return make_array(rng, shape, dtype, low, high)


def _well(rng, shape, dtype):
    """Well-conditioned square matrices: random plus a dominant diagonal."""
    a = _a(rng, shape, dtype)
    if dtype in ("int64", "float16", "bfloat16"):
        return a
    return (a + 4 * shape[-1] * np.eye(shape[-1], dtype=a.dtype)).astype(a.dtype)


def _hermitian(rng, shape, dtype):
    a = _a(rng, shape, dtype)
    if dtype in ("int64", "float16", "bfloat16"):
        return a
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(a.dtype)


def _pd(rng, shape, dtype):
    a = _a(rng, shape, dtype)
    if dtype in ("int64", "float16", "bfloat16"):
        return a
    m = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return m.astype(a.dtype)


def _catch(fn):
    """Run ``fn``; each library's own LinAlgError becomes the marker string "LinAlgError".

    torch's LinAlgError is not glasstorch's class, so the harness cannot match the
    exception type itself; comparing markers checks both raised their LinAlgError.
    """
    def run(lib, *args, **kwargs):
        try:
            return fn(lib, *args, **kwargs)
        except lib.linalg.LinAlgError:
            return "LinAlgError"
    return run


def _other(dtype):
    return "float64" if dtype != "float64" else "float32"


# ----------------------------------------------------------------------------- products

def matmul_samples(dtype, rng):
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                   ((2, 2, 3), (3,)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 3), (5, 3, 4)),
                   ((2, 1, 2, 3), (5, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 4)),
                   ((0,), (0,)), ((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)),
                   ((3,), (4, 2)), ((5, 2, 3), (4, 3, 2)), ((4,), (4, 3, 2)), ((), (3,)),
                   ((2, 3, 4), (5,))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    yield S(T(_a(rng, (4, 3), dtype)), T(_a(rng, (3, 5), dtype)))
    yield S(E(_a(rng, (1, 3), dtype), (4, 3)), _a(rng, (3, 2), dtype))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3, 2), _other(dtype)))
    yield S(_a(rng, (3,), dtype), _a(rng, (3,), _other(dtype)))


def mm_samples(dtype, rng):
    for sa, sb in [((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 3), (4, 5)),
                   ((3,), (3, 2)), ((2, 3, 1), (1, 2))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    yield S(T(_a(rng, (4, 3), dtype)), E(_a(rng, (1, 2), dtype), (3, 2)))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3, 2), _other(dtype)))


def bmm_samples(dtype, rng):
    for sa, sb in [((2, 2, 3), (2, 3, 4)), ((0, 2, 3), (0, 3, 2)), ((2, 2, 3), (3, 3, 2)),
                   ((2, 2, 3), (2, 4, 2)), ((2, 3), (3, 2))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    yield S(T(_a(rng, (2, 3, 4), dtype)), _a(rng, (4, 3, 2), dtype))
    yield S(_a(rng, (1, 2, 3), dtype), _a(rng, (1, 3, 2), _other(dtype)))


def mv_samples(dtype, rng):
    for sa, sb in [((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,)), ((2, 3), (4,)),
                   ((2, 3, 4), (4,))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    yield S(T(_a(rng, (4, 3), dtype)), _a(rng, (4,), dtype))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3,), _other(dtype)))


def dot_samples(dtype, rng):
    for sa, sb in [((3,), (3,)), ((0,), (0,)), ((3,), (4,)), ((2, 3), (2, 3))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    yield S(E(_a(rng, (1,), dtype), (5,)), _a(rng, (5,), dtype))
    yield S(_a(rng, (3,), dtype), _a(rng, (3,), _other(dtype)))


def inner_samples(dtype, rng):
    for sa, sb in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (3,)),
                   ((2, 3), (2, 4)), ((0, 3), (2, 3))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))


def outer_samples(dtype, rng):
    for sa, sb in [((3,), (4,)), ((0,), (2,)), ((2, 2), (3,))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    if dtype == "float32":
        yield S(_a(rng, (3,), "int32"), _a(rng, (2,), "float32"))


def addmm_samples(dtype, rng):
    yield S(_a(rng, (2, 4), dtype), _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype))
    yield S(_a(rng, (4,), dtype), _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype), beta=2,
            alpha=3)
    yield S(_a(rng, (1, 4), dtype), _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype), beta=0)
    yield S(_a(rng, (2, 4), dtype), _a(rng, (2, 3), dtype), _a(rng, (4, 4), dtype))
    yield S(_a(rng, (3, 4), dtype), _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype))
    yield S(_a(rng, (2, 4), _other(dtype)), _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype))


def addmv_samples(dtype, rng):
    yield S(_a(rng, (2,), dtype), _a(rng, (2, 3), dtype), _a(rng, (3,), dtype))
    yield S(_a(rng, (), dtype), _a(rng, (2, 3), dtype), _a(rng, (3,), dtype), beta=2, alpha=3)
    yield S(_a(rng, (2,), dtype), _a(rng, (2, 3), dtype), _a(rng, (4,), dtype))
    yield S(_a(rng, (2,), _other(dtype)), _a(rng, (2, 3), dtype), _a(rng, (3,), dtype))


def baddbmm_samples(dtype, rng):
    yield S(_a(rng, (2, 2, 4), dtype), _a(rng, (2, 2, 3), dtype), _a(rng, (2, 3, 4), dtype))
    yield S(_a(rng, (4,), dtype), _a(rng, (2, 2, 3), dtype), _a(rng, (2, 3, 4), dtype), beta=2,
            alpha=3)
    yield S(_a(rng, (2, 4), dtype), _a(rng, (2, 2, 3), dtype), _a(rng, (2, 3, 4), dtype),
            beta=0)
    yield S(_a(rng, (2, 4), dtype), _a(rng, (2, 2, 3), dtype), _a(rng, (3, 3, 4), dtype))
    yield S(_a(rng, (2, 4), _other(dtype)), _a(rng, (2, 2, 3), dtype), _a(rng, (2, 3, 4), dtype))


def addr_samples(dtype, rng):
    yield S(_a(rng, (2, 3), dtype), _a(rng, (2,), dtype), _a(rng, (3,), dtype))
    yield S(_a(rng, (3,), dtype), _a(rng, (2,), dtype), _a(rng, (3,), dtype), beta=2, alpha=3)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (2,), dtype), _a(rng, (3,), dtype), beta=0)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (2, 2), dtype), _a(rng, (3,), dtype))
    if dtype in ("int64", "float32"):
        yield S(_a(rng, (2, 3), dtype), _a(rng, (2,), dtype), _a(rng, (3,), dtype), beta=0.5)
        yield S(_a(rng, (2, 3), "int64"), _a(rng, (2,), dtype), _a(rng, (3,), "float64"))


def einsum_samples(dtype, rng):
    a, b, c = _a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype), _a(rng, (4,), dtype)
    sq = _a(rng, (3, 3), dtype)
    yield S("ij,jk->ik", a, b)
    yield S("ij,jk", [a, b])
    yield S("ij,jk,k->i", a, b, c)
    yield S("ii->i", sq)
    yield S("ii", sq)
    yield S("ij->ji", a)
    yield S("ij->", a)
    yield S("i,j->ij", c, c)
    yield S("bij,bjk->bik", _a(rng, (2, 2, 3), dtype), _a(rng, (2, 3, 2), dtype))
    yield S("...ij,...jk->...ik", _a(rng, (2, 2, 3), dtype), _a(rng, (3, 2), dtype))
    yield S("i j , j k -> i k", a, b)
    yield S("ij,jk->ik", a, _a(rng, (2, 4), dtype))
    yield S("ij,jk->ik", a)
    yield S("ij,jk->ik", T(_a(rng, (3, 2), dtype).T.copy()), b)
    yield S("i", a)


def tensordot_samples(dtype, rng):
    a, b = _a(rng, (2, 3, 4), dtype), _a(rng, (3, 4, 5), dtype)
    yield S(a, b)
    yield S(a, b, dims=0)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3, 5), dtype), dims=1)
    yield S(a, _a(rng, (4, 3), dtype), dims=([1, 2], [1, 0]))
    yield S(a, _a(rng, (4, 3), dtype), dims=((-1,), (0,)))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (4, 5), dtype), dims=1)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3, 5), dtype), dims=-1)


def kron_samples(dtype, rng):
    for sa, sb in [((2, 3), (2, 2)), ((3,), (2,)), ((2, 3), (4, 1, 2)), ((), (3,)),
                   ((0, 2), (2, 2))]:
        yield S(_a(rng, sa, dtype), _a(rng, sb, dtype))
    if dtype == "float32":
        yield S(_a(rng, (2,), "int32"), _a(rng, (2,), "float32"))


def cross_samples(dtype, rng):
    yield S(_a(rng, (4, 3), dtype), _a(rng, (4, 3), dtype))
    yield S(_a(rng, (3, 2), dtype), _a(rng, (3, 2), dtype), dim=0)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (1, 3), dtype), dim=-1)
    yield S(_a(rng, (2, 4), dtype), _a(rng, (2, 4), dtype), dim=1)
    yield S(T(_a(rng, (3, 5), dtype)), _a(rng, (3, 5), dtype), dim=0)
    yield S(_a(rng, (2, 3), dtype), _a(rng, (2, 3), _other(dtype)), dim=1)


def linalg_cross_samples(dtype, rng):
    yield S(_a(rng, (4, 3), dtype), _a(rng, (4, 3), dtype))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (1, 3), dtype))
    yield S(_a(rng, (3, 2), dtype), _a(rng, (3, 2), dtype))
    yield S(_a(rng, (3, 2), dtype), _a(rng, (3, 2), dtype), dim=0)


def trace_samples(dtype, rng):
    for shape in [(3, 3), (2, 4), (0, 3), (3,)]:
        yield S(_a(rng, shape, dtype))
    yield S(T(_a(rng, (3, 4), dtype)))


def multi_dot_samples(dtype, rng):
    yield S([_a(rng, (2, 3), dtype), _a(rng, (3, 4), dtype), _a(rng, (4, 2), dtype)])
    yield S([_a(rng, (3,), dtype), _a(rng, (3, 4), dtype), _a(rng, (4,), dtype)])
    yield S([_a(rng, (3,), dtype), _a(rng, (3,), dtype)])
    yield S([_a(rng, (3,), dtype)])
    yield S([_a(rng, (2, 3), dtype), _a(rng, (4, 2), dtype)])
    yield S([_a(rng, (2, 3), dtype), _a(rng, (2, 3, 2), dtype)])
    yield S([_a(rng, (2, 3), dtype), _a(rng, (3, 2), _other(dtype))])


# ----------------------------------------------------------------------------- decompositions

def square_samples(make):
    def gen(dtype, rng):
        yield S(make(rng, (3, 3), dtype))
        yield S(make(rng, (2, 4, 4), dtype))
        yield S(make(rng, (0, 0), dtype))
        yield S(make(rng, (2, 0, 0), dtype))
        yield S(T(make(rng, (3, 3), dtype)))
        yield S(_a(rng, (2, 3), dtype))
        yield S(_a(rng, (3,), dtype))
    return gen


def singular_samples(dtype, rng):
    yield from square_samples(_well)(dtype, rng)
    yield S(np.zeros((3, 3), dtype=_a(rng, (1,), dtype).dtype))
    yield S(np.stack([np.eye(3), np.zeros((3, 3))]).astype(_a(rng, (1,), dtype).dtype))


def det_samples(dtype, rng):
    yield from singular_samples(dtype, rng)
    a = _well(rng, (3, 3), dtype)
    yield S(-a if dtype != "int64" else a)


def solve_samples(dtype, rng):
    A = _well(rng, (3, 3), dtype)
    yield S(A, _a(rng, (3, 2), dtype))
    yield S(A, _a(rng, (3,), dtype))
    yield S(_well(rng, (2, 3, 3), dtype), _a(rng, (2, 3), dtype))
    yield S(_well(rng, (2, 3, 3), dtype), _a(rng, (3, 2), dtype))
    yield S(_well(rng, (2, 1, 3, 3), dtype), _a(rng, (4, 3, 1), dtype))
    yield S(A, _a(rng, (2, 3), dtype), left=False)
    yield S(A, _a(rng, (4, 2), dtype))
    yield S(np.zeros((3, 3), A.dtype), _a(rng, (3,), dtype))
    yield S(A, _a(rng, (3,), _other(dtype)))


def general_samples(dtype, rng):
    for shape in [(4, 3), (3, 4), (3, 3), (2, 4, 3), (0, 3), (3, 0)]:
        yield S(_a(rng, shape, dtype))
    yield S(T(_a(rng, (3, 4), dtype)))
    yield S(_a(rng, (3,), dtype))


def _herm_gen(dtype, rng):
    yield S(_hermitian(rng, (3, 3), dtype))
    yield S(_hermitian(rng, (2, 4, 4), dtype))
    yield S(_hermitian(rng, (0, 0), dtype))
    yield S(_a(rng, (2, 3), dtype))


def eigh_samples(dtype, rng):
    yield from _herm_gen(dtype, rng)
    a = _a(rng, (3, 3), dtype)
    yield S(a, UPLO="U")
    yield S(a, UPLO="L")
    yield S(a, UPLO="X")


def _qr(lib, a, mode="reduced"):
    q, r = lib.linalg.qr(a, mode=mode)
    if mode == "r":
        return q.shape, r.abs()
    return q @ r, r.abs(), q.mH @ q


def _svd(lib, a, full_matrices=True):
    u, s, vh = lib.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    rec = (u[..., :, :k] * s[..., None, :].to(u.dtype)) @ vh[..., :k, :]
    return rec, s, u.mH @ u, vh @ vh.mH


def _lowrank(lib, fn, a, *args, **kwargs):
    """A seeded randomized SVD (svd_lowrank / pca_lowrank) through its invariants: the
    rank-q reconstruction (the projection onto the sketched range) and the singular values."""
    lib.manual_seed(0)
    u, s, v = getattr(lib, fn)(a, *args, **kwargs)
    return (u * s[..., None, :].to(u.dtype)) @ v.mH, s


def _lowrank_samples(dtype, rng):
    for shape in [(5, 3), (3, 6), (2, 4, 3)]:
        yield S(_a(rng, shape, dtype), q=2)
    yield S(_a(rng, (4, 4), dtype), q=4, niter=0)


def _pca_samples(dtype, rng):
    yield S(_a(rng, (6, 3), dtype), q=2)
    yield S(_a(rng, (3, 5), dtype), q=2, center=False)
    yield S(_a(rng, (2, 5, 4), dtype))


def _svd_legacy(lib, a, some=True):
    u, s, v = lib.svd(a, some=some)
    k = s.shape[-1]
    return (u[..., :, :k] * s[..., None, :].to(u.dtype)) @ v[..., :, :k].mH, s, v.shape


def _eigh(lib, a, UPLO="L"):
    w, v = lib.linalg.eigh(a, UPLO=UPLO)
    return w, v.abs()


def _sorted_complex(lib, t):
    return lib.from_numpy(np.sort_complex(t.numpy().reshape(-1)).astype(t.numpy().dtype))


def _eig(lib, a):
    w, v = lib.linalg.eig(a)
    ac = a.to(w.dtype)
    return _sorted_complex(lib, w), (ac @ v - v * w[..., None, :]).abs()


def _eig_invariants(lib, a):
    w, v = lib.linalg.eig(a)
    return (w ** 2).sum(-1).real, ((v.abs() ** 2) * w.abs().unsqueeze(-2)).sum(-1)


def _eigvals(lib, a):
    return _sorted_complex(lib, lib.linalg.eigvals(a))


def _solve(lib, a, b, **kw):
    r = lib.linalg.solve(a, b, **kw)
    # torch may hand back a lazily conjugated view, which its .numpy() refuses
    return r.resolve_conj() if lib.__name__ == "torch" else r


def _cholesky_up(lib, a):
    return lib.linalg.cholesky(a, upper=True)


def lstsq_samples(dtype, rng):
    yield S(_a(rng, (5, 3), dtype), _a(rng, (5, 2), dtype))
    yield S(_a(rng, (3, 5), dtype), _a(rng, (3, 2), dtype))
    yield S(_a(rng, (2, 5, 3), dtype), _a(rng, (2, 5, 2), dtype))
    yield S(_a(rng, (5, 3), dtype), _a(rng, (5,), dtype))
    yield S(_a(rng, (5, 3), dtype), _a(rng, (5, 2), dtype), driver="gelsd")
    yield S(_a(rng, (5, 3), dtype), _a(rng, (5, 2), dtype), driver="gelss")
    yield S(_a(rng, (5, 3), dtype), _a(rng, (5, 2), dtype), driver="gels")
    yield S(_a(rng, (5, 3), dtype), _a(rng, (4, 2), dtype))


def pinv_samples(dtype, rng):
    yield from general_samples(dtype, rng)
    yield S(np.zeros((3, 3), _a(rng, (1,), dtype).dtype))
    yield S(_hermitian(rng, (3, 3), dtype), hermitian=True)
    yield S(_a(rng, (4, 3), dtype), rtol=0.5)


def rank_samples(dtype, rng):
    yield from general_samples(dtype, rng)
    low = _a(rng, (4, 1), dtype) @ _a(rng, (1, 3), dtype)
    yield S(low)
    yield S(np.zeros((3, 3), low.dtype))
    yield S(_a(rng, (4, 3), dtype), atol=1.0)
    yield S(_a(rng, (4, 3), dtype), rtol=0.5)
    yield S(_hermitian(rng, (3, 3), dtype), hermitian=True)


def matrix_power_samples(dtype, rng):
    for n in (0, 1, 2, 3, 5):
        yield S(_a(rng, (3, 3), dtype, -2, 2), n)
    yield S(_a(rng, (2, 2, 2), dtype, -2, 2), 4)
    yield S(_well(rng, (3, 3), dtype) if dtype in FC else _a(rng, (3, 3), dtype), -2)
    yield S(_a(rng, (2, 3), dtype), 2)
    yield S(_a(rng, (3,), dtype), 2)


def diagonal_samples(dtype, rng):
    a = _a(rng, (2, 3, 4), dtype)
    yield S(a)
    yield S(a, offset=1)
    yield S(a, offset=-1, dim1=0, dim2=2)
    yield S(T(_a(rng, (3, 4), dtype)))


# ----------------------------------------------------------------------------- norms

INF = float("inf")


def vector_norm_samples(dtype, rng):
    a = _a(rng, (3, 4), dtype)
    for ord in (2, 1, INF, -INF, 0, 3, 0.5, -1):
        yield S(a, ord)
    yield S(a, 2, 1)
    yield S(a, 1, (0, 1), True)
    yield S(_a(rng, (), dtype))
    yield S(_a(rng, (2, 3, 4), dtype), 3, (-1, 0))
    yield S(_a(rng, (0,), dtype))
    yield S(_a(rng, (0,), dtype), INF)
    yield S(_a(rng, (0, 3), dtype), INF, 1)
    yield S(_a(rng, (0, 3), dtype), INF, 0)
    yield S(T(_a(rng, (3, 4), dtype)), 2, 0)
    yield S(a, 2, 2)
    if dtype == "float32":
        yield S(a, dtype="dtype:float64")
        yield S(a.astype("float64"), dtype="dtype:float32")


def matrix_norm_samples(dtype, rng):
    a = _a(rng, (3, 4), dtype)
    for ord in ("fro", "nuc", INF, -INF, 1, -1, 2, -2):
        yield S(a, ord)
    yield S(_a(rng, (2, 3, 4), dtype), 1, (0, 2), True)
    yield S(_a(rng, (2, 3, 4), dtype), "nuc", (-1, 0))
    yield S(_a(rng, (2, 3, 4), dtype), INF, keepdim=True)
    yield S(a, 3)
    yield S(a, "fro", (0, 0))
    yield S(_a(rng, (3,), dtype))
    yield S(T(_a(rng, (4, 3), dtype)), 2)


def linalg_norm_samples(dtype, rng):
    a = _a(rng, (3, 4), dtype)
    yield S(a)
    yield S(_a(rng, (2, 3, 4), dtype))
    yield S(_a(rng, (4,), dtype), 3)
    yield S(a, "nuc")
    yield S(a, INF)
    yield S(a, 1, 1)
    yield S(a, None, (0, 1), True)
    yield S(a, -2, (1, 0))
    yield S(_a(rng, (2, 3, 4), dtype), 2)
    yield S(_a(rng, (4,), dtype), "fro")
    yield S(a, "fro", 1)


def torch_norm_samples(dtype, rng):
    a = _a(rng, (3, 4), dtype)
    yield S(a)
    yield S(_a(rng, (2, 3, 4), dtype))
    yield S(a, 1)
    yield S(a, INF, 1)
    yield S(a, 3, (0, 1), True)
    yield S(a, "fro", 0)
    yield S(a, "nuc")
    yield S(_a(rng, (2, 3, 4), dtype), "nuc")
    yield S(_a(rng, (2, 3, 4), dtype), "fro", (0, 1, 2))
    yield S(a, None)
    yield S(_a(rng, (), dtype), 2)


def dist_samples(dtype, rng):
    yield S(_a(rng, (3,), dtype), _a(rng, (2, 3), dtype))
    yield S(_a(rng, (3, 4), dtype), _a(rng, (3, 4), dtype), 1)
    yield S(_a(rng, (3, 4), dtype), _a(rng, (3, 4), dtype), INF)
    yield S(_a(rng, (3, 4), dtype), _a(rng, (3, 4), dtype), 0)
    yield S(_a(rng, (3,), dtype), _a(rng, (4,), dtype))
    if dtype == "float32":
        yield S(_a(rng, (3,), "float32"), _a(rng, (3,), "int64"), 3)


def cdist_samples(dtype, rng):
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 2), dtype))
    yield S(_a(rng, (2, 3, 2), dtype), _a(rng, (4, 2), dtype), 1.0)
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 2), dtype), INF)
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 2), dtype), 0.0)
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 2), dtype), 3.0)
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 3), dtype))
    yield S(_a(rng, (3,), dtype), _a(rng, (3,), dtype))
    yield S(_a(rng, (3, 2), dtype), _a(rng, (4, 2), dtype), -1.0)


def vecdot_samples(dtype, rng):
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3,), dtype))
    yield S(_a(rng, (3, 2), dtype), _a(rng, (3, 2), dtype), dim=0)
    yield S(_a(rng, (0, 3), dtype), _a(rng, (0, 3), dtype))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (4,), dtype))
    yield S(_a(rng, (2, 3), dtype), _a(rng, (3,), _other(dtype)))


def cond_samples(dtype, rng):
    for p in (None, 2, -2, "fro", "nuc", 1, -1, INF, -INF):
        yield S(_well(rng, (3, 3), dtype), p)
    yield S(_a(rng, (2, 3, 3), dtype))
    yield S(_a(rng, (2, 3), dtype))
    yield S(_a(rng, (2, 3), dtype), "fro")
    zeros = np.zeros((3, 3), _a(rng, (1,), dtype).dtype)
    yield S(zeros, "fro")
    yield S(np.stack([np.eye(3, dtype=zeros.dtype), zeros]), 1)


def vander_samples(dtype, rng):
    yield S(_a(rng, (4,), dtype, -2, 2))
    yield S(_a(rng, (2, 3), dtype, -2, 2), N=4)
    yield S(_a(rng, (3,), dtype), N=1)


def solve_triangular_samples(dtype, rng):
    a = _well(rng, (3, 3), dtype)
    yield S(a, _a(rng, (3, 2), dtype), upper=True)
    yield S(a, _a(rng, (3, 2), dtype), upper=False)
    yield S(a, _a(rng, (2, 3), dtype), upper=True, left=False)
    yield S(a, _a(rng, (3, 1), dtype), upper=False, unitriangular=True)
    yield S(_well(rng, (2, 3, 3), dtype), _a(rng, (3, 2), dtype), upper=True)
    yield S(a, _a(rng, (3,), dtype), upper=True)
    yield S(a, _a(rng, (4, 1), dtype), upper=True)


def invertible_samples(dtype, rng):
    """Invertible matrices only: at singular ones torch's gradients are inf/nan or zeros."""
    yield S(_well(rng, (3, 3), dtype))
    yield S(-_well(rng, (2, 3, 3), dtype))
    yield S(T(_well(rng, (4, 4), dtype)))
    yield S(_well(rng, (1, 1), dtype))



def householder_samples(dtype, rng):
    tau = _a(rng, (2,), dtype, 0, 2)
    return [S(_a(rng, (4, 3), dtype), tau), S(_a(rng, (2, 5, 2), dtype), _a(rng, (2, 2), dtype)),
            S(_a(rng, (3, 3), dtype), _a(rng, (3,), dtype)),
            S(_a(rng, (3, 2), dtype), _a(rng, (0,), dtype)),
            S(_a(rng, (2, 3), dtype), tau), S(_a(rng, (4, 3), dtype), _a(rng, (4,), dtype)),
            S(_a(rng, (4, 3), dtype), _a(rng, (2, 2), dtype))]


def ormqr_samples(dtype, rng):
    a, tau = _a(rng, (4, 3), dtype), _a(rng, (3,), dtype, 0, 2)
    return [S(a, tau, _a(rng, (4, 2), dtype)), S(a, tau, _a(rng, (4, 2), dtype), True, True),
            S(a, tau, _a(rng, (2, 4), dtype), False, False),
            S(a, tau, _a(rng, (2, 4), dtype), False, True),
            S(_a(rng, (2, 5, 2), dtype), _a(rng, (2, 2), dtype), _a(rng, (2, 5, 3), dtype)),
            S(a, tau, _a(rng, (2, 4), dtype)), S(a, _a(rng, (2,), dtype), _a(rng, (4, 2), dtype))]


def _sym(rng, shape, dtype, hermitian=False):
    a = _a(rng, shape, dtype)
    if dtype in ("int64", "float16", "bfloat16"):
        return a
    t = np.swapaxes(a, -1, -2)
    return (a + (np.conj(t) if hermitian else t)).astype(a.dtype)


def ldl_samples(dtype, rng):
    zero_corner = _sym(rng, (4, 4), dtype)
    zero_corner[..., 0, 0] = 0  # forces 2x2 pivots
    return [S(_sym(rng, (4, 4), dtype)), S(_sym(rng, (3, 5, 5), dtype)), S(zero_corner),
            S(_sym(rng, (4, 4), dtype, hermitian=True), hermitian=True),
            S(np.zeros((3, 3), dtype)), S(_a(rng, (3, 4), dtype)), S(_a(rng, (3,), dtype))]


def ldl_solve_samples(dtype, rng):
    zero_corner = _sym(rng, (4, 4), dtype)
    zero_corner[..., 0, 0] = 0
    return [S(_sym(rng, (4, 4), dtype), _a(rng, (4, 2), dtype)),
            S(zero_corner, _a(rng, (2, 4, 3), dtype)),
            S(_sym(rng, (2, 3, 3), dtype, hermitian=True), _a(rng, (3, 1), dtype),
              hermitian=True),
            S(_sym(rng, (3, 3), dtype), _a(rng, (4, 1), dtype))]


def _ldl_solve(lib, a, b, **kw):
    ld, piv = lib.linalg.ldl_factor(a, **kw)
    return lib.linalg.ldl_solve(ld, piv, b, **kw)


OPS = [
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), matmul_samples, dtypes=PROD,
           tol=LOOSE, covers=("Tensor.matmul", "Tensor.__matmul__", "linalg.matmul"),
           grad=True),
    OpInfo("rmatmul", lambda lib, a, b: a.__rmatmul__(b), matmul_samples, dtypes=FC,
           covers=("Tensor.__rmatmul__",), tol=LOOSE,
           grad=True),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b), mm_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.mm",),
           grad=True),
    OpInfo("bmm", lambda lib, a, b: a.bmm(b), bmm_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.bmm",),
           grad=True),
    OpInfo("mv", lambda lib, a, b: lib.mv(a, b), mv_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.mv",),
           grad=True),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), dot_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.dot",),
           grad=True),
    OpInfo("vdot", lambda lib, a, b: a.vdot(b), dot_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.vdot",),
           grad=True),
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b), inner_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.inner",),
           grad=True),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), outer_samples, dtypes=PROD,
           covers=("Tensor.outer", "ger", "Tensor.ger"),
           grad=True),
    OpInfo("addmm", lambda lib, c, a, b, **kw: lib.addmm(c, a, b, **kw), addmm_samples,
           dtypes=PROD, tol=LOOSE, covers=("Tensor.addmm",),
           grad=True),
    OpInfo("Tensor.addmm_", lambda lib, c, a, b, **kw: c.clone().addmm_(a, b, **kw),
           addmm_samples, tol=LOOSE,
           grad=True),
    OpInfo("addmv", lambda lib, c, a, b, **kw: c.addmv(a, b, **kw), addmv_samples,
           dtypes=PROD, tol=LOOSE,
           grad=True),
    OpInfo("baddbmm", lambda lib, c, a, b, **kw: lib.baddbmm(c, a, b, **kw), baddbmm_samples,
           dtypes=PROD, tol=LOOSE, covers=("Tensor.baddbmm",),
           grad=True),
    OpInfo("addbmm", lambda lib, c, a, b, **kw: lib.addbmm(c[0] if c.dim() == 3 else c, a, b,
                                                           **kw),
           baddbmm_samples, dtypes=FC + ("int64",), tol=LOOSE, covers=("Tensor.addbmm",),
           grad=True),
    OpInfo("addr", lambda lib, c, a, b, **kw: lib.addr(c, a, b, **kw), addr_samples,
           dtypes=PROD, tol=LOOSE, covers=("Tensor.addr", "Tensor.addr_")),
    # torch's own backward fails for mixed dtypes, so gradients use same-dtype samples
    OpInfo("addr_same_dtype", lambda lib, c, a, b, **kw: c.addr(a, b, **kw),
           lambda d, r: list(addr_samples(d, r))[:4], dtypes=("float32", "float64"),
           grad=True),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, *ops), einsum_samples, dtypes=PROD,
           tol=LOOSE),
    OpInfo("einsum_mixed", lambda lib, a, b: lib.einsum("i,j->ij", a, b),
           lambda d, r: [S(_a(r, (2,), "float32"), _a(r, (3,), "float64")),
                         S(_a(r, (2,), "int32"), _a(r, (3,), "float32"))]),
    OpInfo("einsum_sublist", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
           lambda d, r: [S(_a(r, (2, 3), d), _a(r, (3, 4), d))], dtypes=FC, tol=LOOSE),
    OpInfo("tensordot", lambda lib, a, b, **kw: lib.tensordot(a, b, **kw), tensordot_samples,
           dtypes=FC + ("int64", "float16", "bool"), tol=LOOSE,
           grad=True),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b), kron_samples, dtypes=PROD,
           covers=("Tensor.kron",),
           grad=True),
    OpInfo("cross", lambda lib, a, b, **kw: lib.cross(a, b, **kw), cross_samples,
           dtypes=PROD, tol=LOOSE, covers=("Tensor.cross",),
           grad=True),
    OpInfo("linalg.cross", lambda lib, a, b, **kw: lib.linalg.cross(a, b, **kw),
           linalg_cross_samples, dtypes=FC + ("int64",),
           grad=True),
    OpInfo("trace", lambda lib, a: lib.trace(a), trace_samples, dtypes=PROD, tol=LOOSE,
           covers=("Tensor.trace",),
           grad=True),
    OpInfo("linalg.multi_dot", lambda lib, ts: lib.linalg.multi_dot(ts), multi_dot_samples,
           dtypes=FC + ("int64", "float16"), tol=LOOSE,
           grad=True),
    OpInfo("linalg.inv", _catch(lambda lib, a: lib.linalg.inv(a)), singular_samples, dtypes=DECOMP,
           tol=LOOSE, covers=("inverse", "Tensor.inverse")),
    OpInfo("linalg.det", lambda lib, a: lib.linalg.det(a), det_samples, dtypes=DECOMP,
           tol=LOOSE, covers=("det", "Tensor.det")),
    OpInfo("linalg.slogdet", lambda lib, a: lib.linalg.slogdet(a), det_samples, dtypes=DECOMP,
           tol=LOOSE),
    OpInfo("slogdet", lambda lib, a: a.slogdet(), det_samples, dtypes=FC, tol=LOOSE,
           covers=("Tensor.slogdet",)),
    OpInfo("logdet", lambda lib, a: lib.logdet(a), det_samples, dtypes=DECOMP, tol=LOOSE,
           covers=("Tensor.logdet",)),
    OpInfo("linalg.inv_grad", lambda lib, a: lib.linalg.inv(a), invertible_samples,
           dtypes=("float32", "float64"), tol=LOOSE, grad=True, covers=("Tensor.inverse",)),
    OpInfo("linalg.det_grad", lambda lib, a: a.det(), invertible_samples,
           dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("linalg.slogdet_grad", lambda lib, a: lib.linalg.slogdet(a), invertible_samples,
           dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("logdet_grad", lambda lib, a: a.logdet(),
           lambda d, r: [x for i, x in enumerate(invertible_samples(d, r)) if i != 1],
           dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("linalg.solve", _catch(_solve), solve_samples,
           dtypes=DECOMP, tol=LOOSE,
           grad=True),
    OpInfo("linalg.cholesky", _catch(lambda lib, a: lib.linalg.cholesky(a)),
           square_samples(_pd),
           dtypes=DECOMP, tol=LOOSE,
           grad=True,
           # cholesky reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("linalg.cholesky_upper", _catch(_cholesky_up),
           lambda d, r: [S(_pd(r, (3, 3), d)), S(-_well(r, (2, 3, 3), d))], dtypes=FC,
           tol=LOOSE,
           grad=True,
           # cholesky reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("linalg.qr", _qr, general_samples, dtypes=DECOMP, tol=LOOSE,
           grad=True),
    OpInfo("linalg.qr_modes", lambda lib, a, m: _qr(lib, a, m),
           lambda d, r: [S(_a(r, (4, 3), d), m) for m in ("complete", "r", "x")] +
           [S(_a(r, (3, 4), d), "complete")], dtypes=FC, tol=LOOSE),
    OpInfo("linalg.svd", _svd, general_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.svd_reduced", lambda lib, a: _svd(lib, a, False), general_samples,
           dtypes=FC, tol=LOOSE,
           grad=True),
    OpInfo("svd", _svd_legacy, general_samples, dtypes=FC, tol=LOOSE, covers=("Tensor.svd",),
           grad=True),
    OpInfo("svd_full", lambda lib, a: _svd_legacy(lib, a, False), general_samples, dtypes=FC,
           tol=LOOSE),
    OpInfo("svd_lowrank", lambda lib, a, **kw: _lowrank(lib, "svd_lowrank", a, **kw),
           _lowrank_samples, dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("pca_lowrank", lambda lib, a, **kw: _lowrank(lib, "pca_lowrank", a, **kw),
           _pca_samples, dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a), general_samples,
           dtypes=DECOMP, tol=LOOSE,
           grad=True),
    OpInfo("linalg.eigh", lambda lib, a, **kw: _eigh(lib, a, **kw), eigh_samples,
           dtypes=DECOMP, tol=LOOSE,
           grad=True,
           # eigh reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("linalg.eigvalsh", lambda lib, a, **kw: lib.linalg.eigvalsh(a, **kw), eigh_samples,
           dtypes=DECOMP, tol=LOOSE,
           grad=True,
           # eigh reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("linalg.eig", _eig, square_samples(_well), dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.eigvals", _eigvals, square_samples(_a), dtypes=DECOMP, tol=LOOSE),
    # gradients through quantities that do not depend on eigenvalue order or eigenvector phase
    OpInfo("linalg.eig_invariants", _eig_invariants, square_samples(_well), dtypes=FC,
           tol=LOOSE, grad=True),
    OpInfo("linalg.eigvals_invariants",
           lambda lib, a: (lib.linalg.eigvals(a) ** 3).sum(-1).real, square_samples(_well),
           dtypes=FC, tol=LOOSE, grad=True),
    OpInfo("linalg.pinv", lambda lib, a, **kw: lib.linalg.pinv(a, **kw), pinv_samples,
           dtypes=DECOMP, tol=LOOSE,
           grad=True,
           # truncated (rtol) and hermitian=True samples: finite differences see another map
           gradcheck=False),
    OpInfo("pinverse", lambda lib, a: a.pinverse(), general_samples, dtypes=FC, tol=LOOSE,
           covers=("Tensor.pinverse",),
           grad=True),
    OpInfo("linalg.lstsq", lambda lib, a, b, **kw: lib.linalg.lstsq(a, b, **kw),
           lstsq_samples, dtypes=DECOMP, tol=LOOSE, grad=True),
    OpInfo("linalg.matrix_rank", lambda lib, a, **kw: lib.linalg.matrix_rank(a, **kw),
           rank_samples, dtypes=DECOMP),
    OpInfo("linalg.matrix_power", lambda lib, a, n: lib.linalg.matrix_power(a, n),
           matrix_power_samples, dtypes=PROD, tol=LOOSE,
           covers=("matrix_power", "Tensor.matrix_power"),
           grad=True),
    OpInfo("linalg.diagonal", lambda lib, a, **kw: lib.linalg.diagonal(a, **kw),
           diagonal_samples, dtypes=("float32", "int64"), view=True),
    OpInfo("linalg.vector_norm", lambda lib, a, *args, **kw: lib.linalg.vector_norm(a, *args,
                                                                                     **kw),
           vector_norm_samples, dtypes=("float32", "float64", "complex64", "complex128",
                                        "float16", "bfloat16", "int64"), tol=LOOSE,
           grad=True),
    OpInfo("linalg.matrix_norm", lambda lib, a, *args, **kw: lib.linalg.matrix_norm(a, *args,
                                                                                     **kw),
           matrix_norm_samples, dtypes=DECOMP, tol=LOOSE,
           grad=True),
    OpInfo("linalg.norm", lambda lib, a, *args, **kw: lib.linalg.norm(a, *args, **kw),
           linalg_norm_samples, dtypes=FC + ("int64",), tol=LOOSE,
           grad=True),
    OpInfo("norm", lambda lib, a, *args, **kw: lib.norm(a, *args, **kw), torch_norm_samples,
           dtypes=FC + ("int64", "float16"), tol=LOOSE, covers=("Tensor.norm",),
           grad=True),
    OpInfo("dist", lambda lib, a, b, *args: lib.dist(a, b, *args), dist_samples,
           dtypes=FC + ("int64", "bfloat16"), tol=LOOSE, covers=("Tensor.dist",)),
    # torch's own dist backward returns no gradient for p=0 (an error), so that sample is out
    OpInfo("dist_grad", lambda lib, a, b, *args: lib.dist(a, b, *args),
           lambda d, r: [x for x in dist_samples(d, r) if x.args[2:] != (0,)],
           dtypes=("float32", "float64"), grad=True),
    OpInfo("cdist", lambda lib, a, b, *args: lib.cdist(a, b, *args), cdist_samples,
           dtypes=FC + ("int64", "float16"), tol=LOOSE,
           grad=True),
    OpInfo("linalg.vecdot", lambda lib, a, b, **kw: lib.linalg.vecdot(a, b, **kw),
           vecdot_samples, dtypes=DECOMP, tol=LOOSE, grad=True),
    OpInfo("linalg.cond", lambda lib, a, *args: lib.linalg.cond(a, *args), cond_samples,
           dtypes=DECOMP, tol={"float32": (1e-3, 1e-3), "complex64": (1e-3, 1e-3),
                               "float64": (1e-8, 1e-8), "complex128": (1e-8, 1e-8)}),
    # torch's backward fails for the inverse-based orders (it modifies inv_ex's output in
    # place); the singular-value orders are compared here
    OpInfo("linalg.cond_svd", lambda lib, a, *args: lib.linalg.cond(a, *args),
           lambda d, r: [S(_well(r, (3, 3), d), p) for p in (None, 2, -2)] +
           [S(_a(r, (2, 3, 3), d)), S(_a(r, (2, 3), d))],
           dtypes=FC, tol=LOOSE, grad=True),
    OpInfo("linalg.vander", lambda lib, a, **kw: lib.linalg.vander(a, **kw), vander_samples,
           dtypes=("int32", "int64", "float32", "float64", "complex64", "bool", "float16"),
           grad=True),
    OpInfo("linalg.solve_triangular", lambda lib, a, b, **kw: lib.linalg.solve_triangular(
        a, b, **kw), solve_triangular_samples, dtypes=DECOMP, tol=LOOSE, grad=True),
    OpInfo("cholesky", lambda lib, a, **kw: lib.cholesky(a, **kw),
           lambda d, r: [S(_pd(r, (3, 3), d)), S(_pd(r, (2, 3, 3), d), upper=True)],
           dtypes=FC, tol=LOOSE, covers=("Tensor.cholesky",),
           grad=True,
           # cholesky reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("qr", lambda lib, a, *args: (lambda q, r: (q @ r, r.abs(), q.shape))(
        *lib.qr(a, *args)), lambda d, r: [S(_a(r, (4, 3), d)), S(_a(r, (4, 3), d), False)],
        dtypes=FC, tol=LOOSE, covers=("Tensor.qr",)),
]


# ----------------------------------------------------------------------------- *_ex variants

def _healthy(lib, value, info, k=2):
    """``value`` where ``info`` is 0, zeros elsewhere (what LAPACK leaves in a failed solve is
    not specified)."""
    ok = (info == 0).reshape(tuple(info.shape) + (1,) * k)
    return lib.where(ok, value, lib.zeros_like(value))


def _inv_ex(lib, a, **kw):
    r = lib.linalg.inv_ex(a, **kw)
    return _healthy(lib, r.inverse, r.info), r.info


def _solve_ex(lib, a, b, **kw):
    r = lib.linalg.solve_ex(a, b, **kw)
    value = r.result.resolve_conj() if lib.__name__ == "torch" else r.result
    if r.info.ndim == 0 or value.ndim == r.info.ndim + 2:
        return _healthy(lib, value, r.info, value.ndim - r.info.ndim), r.info
    return value, r.info


def inv_ex_samples(dtype, rng):
    yield from singular_samples(dtype, rng)
    z = np.stack([np.eye(3), np.zeros((3, 3))]).astype(_a(rng, (1,), dtype).dtype)
    yield S(z, check_errors=True)
    yield S(_well(rng, (3, 3), dtype), check_errors=True)
    m = _a(rng, (4, 4), dtype)
    m[:, 1] = 0  # the second pivot is zero: info 2
    yield S(m)


def cholesky_ex_samples(dtype, rng):
    yield from square_samples(_pd)(dtype, rng)
    bad = -_well(rng, (2, 3, 3), dtype) if dtype != "int64" else _a(rng, (2, 3, 3), dtype)
    yield S(bad)  # not positive-definite: info and LAPACK's partial factor
    yield S(bad, upper=True)
    yield S(bad, check_errors=True)
    yield S(_pd(rng, (3, 3), dtype), upper=True, check_errors=True)
    m = _pd(rng, (4, 4), dtype)
    if dtype not in ("int64", "float16", "bfloat16"):
        m[2, 2] = -1  # fails at order 3, after two good columns
    yield S(m)


def solve_ex_samples(dtype, rng):
    yield from solve_samples(dtype, rng)
    z = np.stack([np.eye(3), np.zeros((3, 3))]).astype(_a(rng, (1,), dtype).dtype)
    yield S(z, _a(rng, (3, 2), dtype))
    yield S(z, _a(rng, (3,), dtype), check_errors=True)
    yield S(_well(rng, (3, 3), dtype), _a(rng, (3, 2), dtype), check_errors=True)


OPS += [
    OpInfo("linalg.inv_ex", _catch(_inv_ex), inv_ex_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.inv_ex_grad", lambda lib, a: lib.linalg.inv_ex(a).inverse,
           invertible_samples, dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("linalg.cholesky_ex",
           _catch(lambda lib, a, **kw: tuple(lib.linalg.cholesky_ex(a, **kw))),
           cholesky_ex_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.cholesky_ex_grad", lambda lib, a, **kw: lib.linalg.cholesky_ex(a, **kw).L,
           lambda d, r: [S(_pd(r, (3, 3), d)), S(_pd(r, (2, 3, 3), d), upper=True)],
           dtypes=("float32", "float64"), tol=LOOSE, grad=True,
           # cholesky reads one triangle; its gradient (like torch's) is the symmetric one
           gradcheck=False),
    OpInfo("linalg.solve_ex", _catch(_solve_ex), solve_ex_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.solve_ex_grad", lambda lib, a, b, **kw: lib.linalg.solve_ex(a, b, **kw).result,
           lambda d, r: [S(_well(r, (3, 3), d), _a(r, (3, 2), d)),
                         S(_well(r, (3, 3), d), _a(r, (2, 3), d), left=False)],
           dtypes=("float32", "float64"), tol=LOOSE, grad=True),
]


# ----------------------------------------------------------------------------- LU family, expm

def lu_samples(dtype, rng):
    for shape in ((3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 2, 3), (0, 0), (1, 1)):
        yield S(_a(rng, shape, dtype))
    yield S(T(_a(rng, (4, 4), dtype)))
    yield S(np.zeros((3, 3), _a(rng, (1,), dtype).dtype))  # singular: info / error
    yield S(_a(rng, (3,), dtype))


def lu_solve_samples(dtype, rng):
    a = _well(rng, (3, 3), dtype)
    yield S(a, _a(rng, (3, 2), dtype))
    yield S(a, _a(rng, (3, 2), dtype), adjoint=True)
    yield S(a, _a(rng, (2, 3), dtype), left=False)
    yield S(a, _a(rng, (2, 3), dtype), left=False, adjoint=True)
    yield S(_well(rng, (2, 3, 3), dtype), _a(rng, (3, 1), dtype))
    yield S(a, _a(rng, (4, 2), dtype))


def _lu_solve(lib, a, b, **kw):
    lu, piv = lib.linalg.lu_factor(a)
    r = lib.linalg.lu_solve(lu, piv, b, **kw)
    # torch may hand back a lazily conjugated view, which its .numpy() refuses
    return r.resolve_conj() if lib.__name__ == "torch" else r


def expm_samples(dtype, rng):
    yield S(_a(rng, (3, 3), dtype, -1, 1))
    yield S(_a(rng, (2, 4, 4), dtype, -2, 2))
    yield S(_a(rng, (1, 1), dtype))
    yield S(_a(rng, (0, 0), dtype))
    yield S(T(_a(rng, (3, 3), dtype, -1, 1)))
    yield S(_a(rng, (3, 3), dtype, -1, 1) * 6)  # several squarings
    yield S(_a(rng, (2, 3), dtype))
    yield S(_a(rng, (3,), dtype))


def _chol(rng, shape, dtype):
    a = _pd(rng, shape, dtype)
    if dtype in ("int64", "float16", "bfloat16"):
        return a
    return np.linalg.cholesky(a).astype(a.dtype)


def cholesky_solve_samples(dtype, rng):
    f = _chol(rng, (3, 3), dtype)
    yield S(_a(rng, (3, 2), dtype), f)
    yield S(_a(rng, (3, 2), dtype), np.ascontiguousarray(np.conj(f.T)), True)
    yield S(_a(rng, (2, 3, 1), dtype), f)
    yield S(_a(rng, (4, 2), dtype), f)


OPS += [
    OpInfo("linalg.lu_factor", _catch(lambda lib, a: tuple(lib.linalg.lu_factor(a))),
           lu_samples, dtypes=DECOMP, tol=LOOSE, covers=("Tensor.lu",)),
    OpInfo("linalg.lu_factor_ex", lambda lib, a: tuple(lib.linalg.lu_factor_ex(a)),
           lu_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.lu_factor_grad", lambda lib, a: lib.linalg.lu_factor(a).LU,
           lambda d, r: [S(_a(r, s, d)) for s in ((3, 3), (2, 4, 4), (3, 5), (5, 3))],
           dtypes=("float32", "float64"), tol=LOOSE, grad=True),
    OpInfo("linalg.lu", lambda lib, a: tuple(lib.linalg.lu(a)), lu_samples, dtypes=DECOMP,
           tol=LOOSE),
    OpInfo("linalg.lu_grad", lambda lib, a: tuple(lib.linalg.lu(a)),
           lambda d, r: [S(_a(r, s, d)) for s in ((3, 3), (2, 4, 4), (3, 5), (5, 3))],
           dtypes=FC, tol=LOOSE, grad=True),
    OpInfo("lu_unpack", lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a))),
           lambda d, r: [S(_a(r, s, d)) for s in ((3, 3), (2, 4, 4), (3, 5), (5, 3))],
           dtypes=FC, tol=LOOSE, grad=True),
    OpInfo("linalg.lu_solve", _lu_solve, lu_solve_samples, dtypes=FC, tol=LOOSE, grad=True,
           covers=("lu_solve", "Tensor.lu_solve")),
    OpInfo("lu_solve_legacy", lambda lib, b, a: lib.lu_solve(b, *lib.linalg.lu_factor(a)),
           lambda d, r: [S(_a(r, (3, 2), d), _well(r, (3, 3), d))], dtypes=FC, tol=LOOSE),
    OpInfo("linalg.matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), expm_samples,
           # not float16/bfloat16: torch 2.13 overflows to inf there on these samples
           dtypes=FC + ("int64",), tol=LOOSE, grad=True,
           covers=("matrix_exp", "Tensor.matrix_exp")),
    OpInfo("cholesky_solve", lambda lib, b, f, *a: lib.cholesky_solve(b, f, *a),
           cholesky_solve_samples, dtypes=FC, tol=LOOSE, grad=True,
           covers=("Tensor.cholesky_solve",),
           # torch's gradient for the factor is not restricted to its triangle
           gradcheck=False),
    OpInfo("cholesky_inverse", lambda lib, f, *a: lib.cholesky_inverse(f, *a),
           lambda d, r: [S(_chol(r, (3, 3), d)), S(np.ascontiguousarray(
               np.conj(_chol(r, (3, 3), d).T)), True), S(_chol(r, (2, 3, 3), d)),
               S(_a(r, (2, 3), d))],
           dtypes=DECOMP, tol=LOOSE, grad=True, covers=("Tensor.cholesky_inverse",),
           gradcheck=False),
    OpInfo("linalg.tensorinv", lambda lib, a, **kw: lib.linalg.tensorinv(a, **kw),
           lambda d, r: [S(_well(r, (4, 4), d).reshape(4, 2, 2), ind=1),
                         S(_well(r, (6, 6), d).reshape(2, 3, 6)),
                         S(_a(r, (2, 3, 6), d), ind=1), S(_a(r, (4, 4), d), ind=0)],
           dtypes=FC, tol=LOOSE),
    OpInfo("linalg.tensorsolve", lambda lib, a, b, **kw: lib.linalg.tensorsolve(a, b, **kw),
           lambda d, r: [S(_well(r, (6, 6), d).reshape(2, 3, 6), _a(r, (2, 3), d)),
                         S(_well(r, (6, 6), d).reshape(6, 2, 3), _a(r, (6,), d)),
                         S(_a(r, (2, 3, 5), d), _a(r, (2, 3), d))],
           dtypes=FC, tol=LOOSE, grad=True),
    OpInfo("linalg.householder_product",
           lambda lib, a, t: lib.linalg.householder_product(a, t), householder_samples,
           dtypes=DECOMP, tol=LOOSE, grad=True, covers=("orgqr", "Tensor.orgqr")),
    OpInfo("linalg.ldl_factor_ex", lambda lib, a, **kw: tuple(lib.linalg.ldl_factor_ex(a, **kw)),
           ldl_samples, dtypes=DECOMP, tol=LOOSE),
    OpInfo("linalg.ldl_factor", _catch(lambda lib, a, **kw: tuple(lib.linalg.ldl_factor(a, **kw))),
           ldl_samples, dtypes=FC, tol=LOOSE),
    OpInfo("linalg.ldl_solve", _ldl_solve, ldl_solve_samples, dtypes=FC, tol=LOOSE),
    OpInfo("geqrf", lambda lib, a: tuple(lib.geqrf(a)),
           lambda d, r: [S(_a(r, s, d)) for s in ((4, 3), (3, 5), (2, 4, 4), (0, 3), (3,))],
           dtypes=DECOMP, tol=LOOSE, covers=("Tensor.geqrf",)),
    OpInfo("ormqr", lambda lib, a, t, c, *args: lib.ormqr(a, t, c, *args), ormqr_samples,
           dtypes=DECOMP, tol=LOOSE, grad=True, covers=("Tensor.ormqr",)),
]

