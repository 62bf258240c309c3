"""``torch._foreach_*``: lists of tensors (0-d, empty, non-contiguous, broadcasting partners),
every overload (tensor list, scalar, scalar list, 0-dim tensor) and the length/type errors.

Out-of-place results carry one graph node per tensor in glasstorch where torch records one
node for the list (named ``CppFunction`` or ``Foreach...Backward``), so only the in-place
variants (on clones, whose nodes are the single-tensor ops' in both) compare gradients and node
names here; tests/utils/test_foreach.py compares the out-of-place gradients.
"""

import numpy as np

from ..harness import F32, OpInfo, S, T, make_array

_SHAPES = [(3,), (2, 3), (), (0,)]
NUM = ("float32", "float64", "int64")


def _list(rng, dtype, low=-5, high=5, shapes=_SHAPES, transposed=True):
    out = [make_array(rng, s, dtype, low, high) for s in shapes]
    if transposed:
        out.append(T(make_array(rng, (3, 4), dtype, low, high)))
    return out


def _partner_shapes():
    # same shapes as _list, the (3, 4) one broadcasting from (4,)
    return _SHAPES + [(4,)]


def _unary(low, high):
    def samples(dtype, rng):
        yield S(_list(rng, dtype, low, high))
        yield S([make_array(rng, (5,), dtype, low, high)])
        yield S([])  # at least one tensor is required
    return samples


_DOMAINS = {"acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "log": (0.1, 5), "log10": (0.1, 5),
            "log2": (0.1, 5), "log1p": (-0.9, 5), "sqrt": (0.1, 5), "rsqrt": (0.1, 5),
            "reciprocal": (0.5, 5), "tan": (-1.2, 1.2)}
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
          "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
# rounding ops have zero (or undefined at integers) gradients: no finite-difference check
_NO_GRADCHECK = {"ceil", "floor", "round", "trunc", "sign", "frac", "abs"}


def _call(name):
    def fn(lib, xs, *args, **kw):
        return getattr(lib, name)(xs, *args, **kw)
    return fn


def _call_on_clones(name):
    def fn(lib, xs, *args, **kw):
        xs = [x.clone() for x in xs]
        out = getattr(lib, name)(xs, *args, **kw)
        assert out is xs  # in-place variants hand back the list they were given
        return xs
    return fn


def _binary(dtype, rng, *, tensor_ok=False, low2=-5, high2=5):
    xs = _list(rng, dtype)
    ys = [make_array(rng, s, dtype, low2, high2) for s in _partner_shapes()]
    yield S(xs, ys)
    yield S(xs, 2)
    yield S(xs, 2.5)
    yield S(xs, [1.5, -2, 3, 0.5, 2])
    yield S(xs, ys[:2])  # list lengths differ
    yield S(xs, [1, 2])  # scalar list length differs
    yield S(xs, [make_array(rng, (3,), dtype)] * 5)  # shapes do not broadcast
    yield S([make_array(rng, (3,), dtype)], [make_array(rng, (3,), "float64")])  # promotion
    if tensor_ok:
        yield S(xs, np.array(1.5, dtype=dtype if dtype != "int64" else "float64"))
        yield S(xs, make_array(rng, (2,), dtype))  # not 0-dim
    else:
        yield S(xs, make_array(rng, (2,), dtype))  # no Tensor overload


def _with_alpha(dtype, rng):
    xs = _list(rng, dtype)
    ys = [make_array(rng, s, dtype) for s in _partner_shapes()]
    yield S(xs, ys, alpha=2)
    yield S(xs, ys, alpha=-0.5)  # a float alpha is refused for integer tensors
    yield S(xs, 2, alpha=2)  # no alpha with a scalar


def _divisors(dtype, rng):
    return _binary(dtype, rng, tensor_ok=True, low2=1, high2=6)


def _pow_samples(dtype, rng):
    xs = _list(rng, dtype, 0.5, 3) if dtype != "int64" else _list(rng, dtype, 0, 4)
    yield S(xs, 2)
    yield S(xs, [2, 3, 0.5, 1, 2] if dtype != "int64" else [2, 3, 0, 1, 2])
    yield S(xs, [make_array(rng, s, dtype, 0, 3) for s in _partner_shapes()])
    yield S(xs, 2.5)


def _pow_scalar_base(dtype, rng):
    yield S(2, _list(rng, dtype, -2, 2))
    yield S(1.5, _list(rng, dtype, -2, 2))


def _addc(divide):
    def samples(dtype, rng):
        lo = 1 if divide else -5
        xs = _list(rng, dtype)
        t1 = [make_array(rng, s, dtype) for s in _partner_shapes()]
        t2 = [make_array(rng, s, dtype, lo, 6) for s in _partner_shapes()]
        yield S(xs, t1, t2)
        yield S(xs, t1, t2, 0.5)
        yield S(xs, t1, t2, [1, -2, 0.5, 3, 2])
        yield S(xs, t1, t2, np.array([1, -2, 0.5, 3, 2], dtype=dtype))
        yield S(xs, t1, t2, np.array(2.0, dtype=dtype))  # packed scalars must be 1-D
        yield S(xs, t1, t2, np.array([1, 2], dtype=dtype))  # wrong number of packed scalars
        yield S(xs, t1[:3], t2)
    return samples


def _lerp_samples(dtype, rng):
    xs = _list(rng, dtype)
    ends = [make_array(rng, s, dtype) for s in _partner_shapes()]
    yield S(xs, ends, 0.25)
    yield S(xs, ends, [0.1, 0.5, 0.9, 1.5, -0.5])
    yield S(xs, ends, [make_array(rng, s, dtype, 0, 1) for s in _partner_shapes()])
    yield S(xs, ends[:2], 0.5)
    yield S(xs, ends, [0.5])


def _norm_samples(dtype, rng):
    xs = _list(rng, dtype, shapes=[(3,), (2, 3), ()])
    for ord in (2, 1, 3, 0.5, float("inf"), -float("inf"), 0):
        yield S(xs, ord)
    yield S(xs, 2, dtype="dtype:float64")
    yield S([make_array(rng, (0,), dtype)], float("inf"))  # no identity for an empty max


def _powsum_samples(dtype, rng):
    xs = _list(rng, dtype, shapes=[(3,), (2, 3), (), (0,)])
    for ord in (2, 1, 3, 0.5, -1.5):
        yield S(xs, ord)
    yield S(xs, 2, dtype="dtype:float64")


def _max_samples(dtype, rng):
    yield S(_list(rng, dtype, shapes=[(3,), (2, 3), ()]))
    yield S([make_array(rng, (0,), dtype)])


def _mm_samples(dtype, rng):
    yield S([make_array(rng, (2, 3), dtype), T(make_array(rng, (4, 2), dtype))],
            [make_array(rng, (3, 4), dtype), make_array(rng, (2, 5), dtype)])
    yield S([make_array(rng, (2, 3), dtype)], [make_array(rng, (2, 4), dtype)])
    yield S([make_array(rng, (2, 3), dtype)], [make_array(rng, (3, 4), dtype)] * 2)


def _copy_samples(dtype, rng):
    xs = _list(rng, dtype)
    yield S(xs, [make_array(rng, s, "float64") for s in _partner_shapes()])
    yield S(xs, [make_array(rng, s, dtype) for s in _partner_shapes()][:3])


def _single_list(dtype, rng):
    yield S(_list(rng, dtype))


def _clone_samples(dtype, rng):
    # no empty tensor: torch.from_numpy gives an empty array stride 0, glasstorch 1
    yield S(_list(rng, dtype, shapes=[(3,), (2, 3), ()]))


def _tensor_lists_only(samples):
    """The samples whose every argument after ``self`` is a list of tensors (or absent).

    torch's in-place foreach ops record the Scalar overloads' node names (``SubBackward1``)
    where a single-tensor ``sub_(2)`` records ``SubBackward0`` in torch and glasstorch alike,
    and a ``NotImplemented`` node for some overloads; gradients are compared on the overload
    whose nodes are the single-tensor ops' ones."""
    def keep(sample):
        return not sample.kwargs and all(
            isinstance(a, list) and a and all(isinstance(v, (np.ndarray, T)) for v in a)
            for a in sample.args[1:])

    def filtered(dtype, rng):
        return [smp for smp in samples(dtype, rng) if keep(smp)]
    return filtered


OPS = []
for _n in _UNARY:
    _lo, _hi = _DOMAINS.get(_n, (-3, 3))
    OPS.append(OpInfo(f"_foreach_{_n}", _call(f"_foreach_{_n}"), _unary(_lo, _hi),
                      dtypes=F32 + ("int64",) if _n in ("abs", "neg", "sign", "exp", "sqrt")
                      else F32))
    OPS.append(OpInfo(f"_foreach_{_n}_", _call_on_clones(f"_foreach_{_n}_"), _unary(_lo, _hi),
                      dtypes=F32, grad=True, gradcheck=_n not in _NO_GRADCHECK))

for _n, _samples, _tensor_ok in (("add", _binary, True), ("sub", _binary, False),
                                 ("mul", _binary, True), ("div", _divisors, True),
                                 ("clamp_min", _binary, False), ("clamp_max", _binary, False),
                                 ("maximum", _binary, False), ("minimum", _binary, False)):
    def _s(dtype, rng, _samples=_samples, _tensor_ok=_tensor_ok):
        if _samples is _binary:
            return _binary(dtype, rng, tensor_ok=_tensor_ok)
        return _samples(dtype, rng)
    OPS.append(OpInfo(f"_foreach_{_n}", _call(f"_foreach_{_n}"), _s, dtypes=NUM))
    OPS.append(OpInfo(f"_foreach_{_n}_", _call_on_clones(f"_foreach_{_n}_"), _s, dtypes=NUM))
    OPS.append(OpInfo(f"_foreach_{_n}__grad", _call_on_clones(f"_foreach_{_n}_"),
                      _tensor_lists_only(_s), dtypes=F32, grad=True))

OPS += [
    OpInfo("_foreach_add_alpha", _call("_foreach_add"), _with_alpha, dtypes=NUM),
    OpInfo("_foreach_add__alpha", _call_on_clones("_foreach_add_"), _with_alpha, dtypes=NUM),
    OpInfo("_foreach_sub_alpha", _call("_foreach_sub"), _with_alpha, dtypes=NUM),
    OpInfo("_foreach_sub__alpha", _call_on_clones("_foreach_sub_"), _with_alpha, dtypes=NUM),
    OpInfo("_foreach_pow", _call("_foreach_pow"), _pow_samples, dtypes=NUM),
    OpInfo("_foreach_pow_", _call_on_clones("_foreach_pow_"), _pow_samples, dtypes=NUM),
    OpInfo("_foreach_pow__grad", _call_on_clones("_foreach_pow_"),
           _tensor_lists_only(_pow_samples), dtypes=F32, grad=True),
    OpInfo("_foreach_pow_scalar_base", lambda lib, b, xs: lib._foreach_pow(b, xs),
           _pow_scalar_base, dtypes=NUM),
    OpInfo("_foreach_addcmul", _call("_foreach_addcmul"), _addc(False), dtypes=NUM),
    OpInfo("_foreach_addcmul_", _call_on_clones("_foreach_addcmul_"), _addc(False),
           dtypes=NUM),
    OpInfo("_foreach_addcmul__grad", _call_on_clones("_foreach_addcmul_"),
           _tensor_lists_only(_addc(False)), dtypes=F32, grad=True),
    OpInfo("_foreach_addcdiv", _call("_foreach_addcdiv"), _addc(True), dtypes=NUM),
    OpInfo("_foreach_addcdiv_", _call_on_clones("_foreach_addcdiv_"), _addc(True),
           dtypes=NUM),
    OpInfo("_foreach_addcdiv__grad", _call_on_clones("_foreach_addcdiv_"),
           _tensor_lists_only(_addc(True)), dtypes=F32, grad=True),
    OpInfo("_foreach_lerp", _call("_foreach_lerp"), _lerp_samples, dtypes=NUM),
    OpInfo("_foreach_lerp_", _call_on_clones("_foreach_lerp_"), _lerp_samples, dtypes=NUM),
    OpInfo("_foreach_lerp__grad", _call_on_clones("_foreach_lerp_"),
           _tensor_lists_only(_lerp_samples), dtypes=F32, grad=True),
    OpInfo("_foreach_norm", _call("_foreach_norm"), _norm_samples, dtypes=NUM),
    OpInfo("_foreach_powsum", _call("_foreach_powsum"), _powsum_samples, dtypes=NUM),
    OpInfo("_foreach_max", _call("_foreach_max"), _max_samples, dtypes=NUM),
    OpInfo("_foreach_mm", _call("_foreach_mm"), _mm_samples, dtypes=F32),
    OpInfo("_foreach_clone", _call("_foreach_clone"), _clone_samples, dtypes=NUM,
           check_strides=True),
    OpInfo("_foreach_copy_", _call_on_clones("_foreach_copy_"), _copy_samples, dtypes=NUM),
    OpInfo("_foreach_zero_", _call_on_clones("_foreach_zero_"), _single_list, dtypes=NUM,
           grad=True),
]
