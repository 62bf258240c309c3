"""Pointwise operators."""

from ..harness import ALL, FLOATS, NUMBERS, REALS, OpInfo, S, make_array
from ..samples import binary, mixed_dtype_pairs, unary


def _binary_with_promotion(dtype, rng):
    yield from binary(dtype, rng)
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


def _nonzero_divisor(dtype, rng):
    yield from binary(dtype, rng, low2=1, high2=6)
    if dtype == "float32":
        yield from mixed_dtype_pairs(rng)


OPS = [
    OpInfo("add", lambda lib, a, b, **kw: lib.add(a, b, **kw), _binary_with_promotion,
           dtypes=ALL, covers=("Tensor.add", "Tensor.__add__", "Tensor.__radd__")),
    OpInfo("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), binary, dtypes=NUMBERS),
    OpInfo("Tensor.add_", lambda lib, a, b: a.clone().add_(b), binary, dtypes=ALL,
           covers=("Tensor.__iadd__",)),
    OpInfo("radd", lambda lib, a, b: 3 + a, binary, dtypes=ALL),
    OpInfo("sub", lambda lib, a, b: lib.sub(a, b), _binary_with_promotion, dtypes=ALL,
           covers=("Tensor.sub", "Tensor.__sub__", "subtract", "Tensor.subtract")),
    OpInfo("rsub", lambda lib, a, b: 2.5 - a, binary, dtypes=NUMBERS,
           covers=("Tensor.__rsub__",)),
    OpInfo("Tensor.sub_", lambda lib, a, b: a.clone().sub_(b, alpha=2), binary, dtypes=NUMBERS,
           covers=("Tensor.__isub__",)),
    OpInfo("mul", lambda lib, a, b: lib.mul(a, b), _binary_with_promotion, dtypes=ALL,
           covers=("Tensor.mul", "Tensor.__mul__", "Tensor.__rmul__", "multiply",
                   "Tensor.multiply")),
    OpInfo("Tensor.mul_", lambda lib, a, b: a.clone().mul_(b), binary, dtypes=ALL,
           covers=("Tensor.__imul__",)),
    OpInfo("div", lambda lib, a, b: lib.div(a, b), _nonzero_divisor, dtypes=REALS,
           covers=("Tensor.div", "Tensor.__truediv__", "divide", "true_divide",
                   "Tensor.divide", "Tensor.true_divide")),
    OpInfo("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
           _nonzero_divisor, dtypes=REALS[1:]),
    OpInfo("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
           _nonzero_divisor, dtypes=REALS[1:]),
    OpInfo("rdiv", lambda lib, a, b: 2 / a, lambda d, r: unary(d, r, 1, 5), dtypes=REALS[1:],
           covers=("Tensor.__rtruediv__",)),
    OpInfo("Tensor.div_", lambda lib, a, b: a.clone().div_(b), _nonzero_divisor, dtypes=FLOATS,
           covers=("Tensor.__itruediv__",)),
    OpInfo("neg", lambda lib, a: lib.neg(a), unary, dtypes=ALL,
           covers=("Tensor.neg", "Tensor.__neg__", "negative", "Tensor.negative",
                   "Tensor.neg_")),
    OpInfo("abs", lambda lib, a: lib.abs(a), unary, dtypes=ALL,
           covers=("Tensor.abs", "Tensor.__abs__", "absolute", "Tensor.absolute")),
    OpInfo("exp", lambda lib, a: lib.exp(a), unary, dtypes=REALS + ("complex64",),
           covers=("Tensor.exp",)),
    OpInfo("Tensor.exp_", lambda lib, a: a.clone().exp_(), unary, dtypes=FLOATS),
    OpInfo("log", lambda lib, a: lib.log(a), lambda d, r: unary(d, r, 0, 5), dtypes=REALS,
           covers=("Tensor.log",)),
    OpInfo("sqrt", lambda lib, a: lib.sqrt(a), lambda d, r: unary(d, r, 0, 5), dtypes=REALS,
           covers=("Tensor.sqrt",)),
    OpInfo("add_out", lambda lib, a, b: lib.add(a, b, out=lib.empty(0, dtype=a.dtype)),
           lambda d, r: [S(make_array(r, (3,), d), make_array(r, (3,), d))]),
]
