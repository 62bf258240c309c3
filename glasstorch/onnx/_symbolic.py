"""ONNX translations of the tensor operators: arithmetic, comparisons, reductions, shape and
view ops, indexing and dtype conversions (nn operators are in ``_symbolic_nn``).

A translation runs after the real op, as ``fn(g, result, *args, **kwargs)`` with the op's
own arguments: ``g`` is the Graph and ``result`` what the op returned, whose dtype and shape
settle what the arguments leave open (the promoted dtype, a ``-1`` in a view). It returns
the value name computing ``result``, or one name per tensor when ``result`` holds several.
Keyword arguments a translation does not need (``out=``, ``dtype=``, ``memory_format=``)
are taken in ``**_``: ``result`` already reflects them.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dt
from .._tensor import Tensor
from ._graph import INT64_MAX
from ._symint import SymInt, has_sym_int

SYMBOLICS = {}
_PREFIXES = ("F.", "Tensor.")


def symbolic(*keys):
    """Register the decorated translation under the function names ``keys``."""
    def deco(fn):
        for key in keys:
            SYMBOLICS[key] = fn
        return fn
    return deco


def lookup(key):
    """The translation for function ``key``: its own, else (for ``add_``) the out-of-place
    op's, else (for ``F.relu``, ``Tensor.x``) the one of the same-named flat function."""
    bare = key.split(".", 1)[1] if key.startswith(_PREFIXES) else key
    for name in (key, bare):
        if name in SYMBOLICS:
            return SYMBOLICS[name]
        if name.endswith("_") and not name.endswith("__") and name[:-1] in SYMBOLICS:
            return SYMBOLICS[name[:-1]]
    return None


# ---------------------------------------------------------------------------- helpers
def wrap_dims(dim, ndim):
    """``dim`` (an int or a sequence of ints) as a list of non-negative dims."""
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return [d + ndim if d < 0 else d for d in dims]


def wrap_dim(dim, ndim):
    return wrap_dims(dim, ndim)[0]


def sizes_arg(sizes):
    """``view(2, 3)``, ``view((2, 3))`` and ``view(torch.Size)`` as one list."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return list(sizes)


def _alias(g, result, input, *args, **_):
    return g.value(input) if isinstance(result, Tensor) else None


def _as_result_dtype(g, result, input):
    return g.cast(g.value(input), input.dtype, result.dtype)


# ---------------------------------------------------------------------------- arithmetic
def _binary(op_type, swapped=False):
    def translate(g, result, input, other, *args, **_):
        a, b = (other, input) if swapped else (input, other)
        return g.op(op_type, g.operand(a, result.dtype), g.operand(b, result.dtype))
    return translate


symbolic("mul", "multiply")(_binary("Mul"))
symbolic("matmul", "mm", "bmm", "mv", "dot", "inner")(_binary("MatMul"))
symbolic("__rmatmul__")(_binary("MatMul", swapped=True))
symbolic("pow", "__pow__")(_binary("Pow"))
symbolic("__rpow__")(_binary("Pow", swapped=True))
symbolic("maximum", "fmax")(_binary("Max"))
symbolic("minimum", "fmin")(_binary("Min"))
symbolic("fmod")(lambda g, result, input, other, **_: g.op(
    "Mod", g.operand(input, result.dtype), g.operand(other, result.dtype), fmod=1))


def _scaled(g, x, factor, dtype):
    return x if factor == 1 else g.op("Mul", x, g.scalar(factor, dtype))


@symbolic("add")
def add(g, result, input, other, *, alpha=1, **_):
    dt = result.dtype
    return g.op("Add", g.operand(input, dt), _scaled(g, g.operand(other, dt), alpha, dt))


@symbolic("sub", "subtract", "__sub__")
def sub(g, result, input, other, *, alpha=1, **_):
    dt = result.dtype
    return g.op("Sub", g.operand(input, dt), _scaled(g, g.operand(other, dt), alpha, dt))


@symbolic("rsub", "__rsub__")
def rsub(g, result, input, other, *, alpha=1, **_):
    dt = result.dtype
    return g.op("Sub", g.operand(other, dt), _scaled(g, g.operand(input, dt), alpha, dt))


@symbolic("div", "divide", "true_divide", "__truediv__")
def div(g, result, input, other, *, rounding_mode=None, **_):
    return _divide(g, result.dtype, input, other, rounding_mode)


@symbolic("__rtruediv__")
def rdiv(g, result, input, other, **_):
    return _divide(g, result.dtype, other, input, None)


@symbolic("floor_divide", "__floordiv__")
def floor_divide(g, result, input, other, **_):
    return _divide(g, result.dtype, input, other, "floor")


@symbolic("__rfloordiv__")
def rfloor_divide(g, result, input, other, **_):
    return _divide(g, result.dtype, other, input, "floor")


def _divide(g, dtype, a, b, rounding_mode):
    if rounding_mode is None:
        return g.op("Div", g.operand(a, dtype), g.operand(b, dtype))
    # round in float64 so that integer operands keep torch's floor/trunc semantics
    f64 = _dt.float64
    q = g.op("Div", g.operand(a, f64), g.operand(b, f64))
    q = g.op("Floor", q) if rounding_mode == "floor" else _trunc(g, q)
    return g.cast(q, f64, dtype)


def _trunc(g, x):
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


@symbolic("remainder", "__mod__")
def remainder(g, result, input, other, **_):
    dt = result.dtype
    a, b = g.operand(input, dt), g.operand(other, dt)
    if not dt.is_floating_point:
        return g.op("Mod", a, b)   # fmod=0: the sign of the divisor, as torch
    return g.op("Sub", a, g.op("Mul", g.op("Floor", g.op("Div", a, b)), b))


@symbolic("__rmod__")
def rremainder(g, result, input, other, **_):
    return remainder(g, result, other, input)


@symbolic("addmm")
def addmm(g, result, input, mat1, mat2, *, beta=1, alpha=1, **_):
    dt = result.dtype
    return g.op("Gemm", g.operand(mat1, dt), g.operand(mat2, dt), g.operand(input, dt),
                alpha=float(alpha), beta=float(beta))


@symbolic("baddbmm", "addbmm")
def baddbmm(g, result, input, batch1, batch2, *, beta=1, alpha=1, **_):
    dt = result.dtype
    prod = g.op("MatMul", g.operand(batch1, dt), g.operand(batch2, dt))
    if result.dim() == 2:   # addbmm sums the batch of products
        prod = g.reduce("ReduceSum", prod, [0], False)
    prod = _scaled(g, prod, alpha, dt)
    if beta == 0:
        return prod
    return g.op("Add", _scaled(g, g.operand(input, dt), beta, dt), prod)


@symbolic("outer", "ger")
def outer(g, result, input, vec2, **_):
    dt = result.dtype
    return g.op("Mul", g.unsqueeze(g.operand(input, dt), [1]), g.operand(vec2, dt))


@symbolic("addcmul")
def addcmul(g, result, input, tensor1, tensor2, *, value=1, **_):
    dt = result.dtype
    prod = g.op("Mul", g.operand(tensor1, dt), g.operand(tensor2, dt))
    return g.op("Add", g.operand(input, dt), _scaled(g, prod, value, dt))


@symbolic("lerp")
def lerp(g, result, input, end, weight, **_):
    dt = result.dtype
    start = g.operand(input, dt)
    step = g.op("Mul", g.operand(weight, dt), g.op("Sub", g.operand(end, dt), start))
    return g.op("Add", start, step)


@symbolic("einsum")
def einsum(g, result, equation, *operands, **_):
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = operands[0]
    return g.op("Einsum", *(g.operand(t, result.dtype) for t in operands),
                equation=equation.replace(" ", ""))


# ---------------------------------------------------------------------------- comparisons
def _compare(op_type, negate=False):
    def translate(g, result, input, other, **_):
        if not isinstance(result, Tensor):
            return None
        from .._core.dtype import result_type
        dt = result_type(input, other)
        out = g.op(op_type, g.operand(input, dt), g.operand(other, dt))
        return g.op("Not", out) if negate else out
    return translate


symbolic("eq", "__eq__")(_compare("Equal"))
symbolic("ne", "not_equal", "__ne__")(_compare("Equal", negate=True))
symbolic("lt", "less", "__lt__")(_compare("Less"))
symbolic("le", "less_equal", "__le__")(_compare("LessOrEqual"))
symbolic("gt", "greater", "__gt__")(_compare("Greater"))
symbolic("ge", "greater_equal", "__ge__")(_compare("GreaterOrEqual"))


def _logical(op_type, bitwise_op):
    def translate(g, result, input, other, **_):
        if result.dtype is _dt.bool_:
            return g.op(op_type, g.operand(input, _dt.bool_), g.operand(other, _dt.bool_))
        g.require(f"aten::{bitwise_op.lower()}", 18)
        return g.op(bitwise_op, g.operand(input, result.dtype), g.operand(other, result.dtype))
    return translate


symbolic("logical_and", "bitwise_and", "__and__")(_logical("And", "BitwiseAnd"))
symbolic("logical_or", "bitwise_or", "__or__")(_logical("Or", "BitwiseOr"))
symbolic("logical_xor", "bitwise_xor", "__xor__")(_logical("Xor", "BitwiseXor"))


@symbolic("logical_not", "bitwise_not", "__invert__")
def logical_not(g, result, input, **_):
    if result.dtype is _dt.bool_:
        return g.op("Not", g.operand(input, _dt.bool_))
    g.require("aten::bitwise_not", 18)
    return g.op("BitwiseNot", g.value(input))


@symbolic("where")
def where(g, result, condition, input=None, other=None, **_):
    if input is None:
        raise g.unsupported("aten::nonzero")
    return _where(g, result, condition, input, other)


@symbolic("Tensor.where")
def tensor_where(g, result, input, condition, other, **_):
    return _where(g, result, condition, input, other)


def _where(g, result, condition, input, other):
    dt = result.dtype
    return g.op("Where", g.operand(condition, _dt.bool_), g.operand(input, dt),
                g.operand(other, dt))


@symbolic("masked_fill")
def masked_fill(g, result, input, mask, value, **_):
    return _where(g, result, mask, value, input)


@symbolic("clamp", "clip")
def clamp(g, result, input, min=None, max=None, **_):
    dt = result.dtype
    x = g.operand(input, dt)
    if isinstance(min, Tensor) or isinstance(max, Tensor):   # Clip wants scalar bounds
        if min is not None:
            x = g.op("Max", x, g.operand(min, dt))
        return x if max is None else g.op("Min", x, g.operand(max, dt))
    lo = None if min is None else g.scalar(min, dt)
    hi = None if max is None else g.scalar(max, dt)
    return g.op("Clip", x, lo, hi)


symbolic("clamp_min")(lambda g, result, input, min, **_: clamp(g, result, input, min=min))
symbolic("clamp_max")(lambda g, result, input, max, **_: clamp(g, result, input, max=max))


# ---------------------------------------------------------------------------- unary
_UNARY = {
    "neg": "Neg", "negative": "Neg", "__neg__": "Neg", "exp": "Exp", "log": "Log",
    "sqrt": "Sqrt", "abs": "Abs", "absolute": "Abs", "__abs__": "Abs", "sin": "Sin",
    "cos": "Cos", "tan": "Tan", "asin": "Asin", "arcsin": "Asin", "acos": "Acos",
    "arccos": "Acos", "atan": "Atan", "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "asinh": "Asinh", "arcsinh": "Asinh", "acosh": "Acosh", "arccosh": "Acosh",
    "atanh": "Atanh", "arctanh": "Atanh", "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf",
    "floor": "Floor", "ceil": "Ceil", "sign": "Sign", "sgn": "Sign", "reciprocal": "Reciprocal",
    "relu": "Relu",
}


def _unary(op_type):
    def translate(g, result, input, *args, **_):
        return g.op(op_type, _as_result_dtype(g, result, input))
    return translate


for _name, _op in _UNARY.items():
    symbolic(_name)(_unary(_op))


def _composite(build):
    def translate(g, result, input, **_):
        return build(g, _as_result_dtype(g, result, input), result.dtype)
    return translate


symbolic("rsqrt")(_composite(lambda g, x, dt: g.op("Reciprocal", g.op("Sqrt", x))))
symbolic("square")(_composite(lambda g, x, dt: g.op("Mul", x, x)))
symbolic("log1p")(_composite(lambda g, x, dt: g.op("Log", g.op("Add", x, g.scalar(1, dt)))))
symbolic("expm1")(_composite(lambda g, x, dt: g.op("Sub", g.op("Exp", x), g.scalar(1, dt))))
symbolic("log2")(_composite(lambda g, x, dt: g.op("Div", g.op("Log", x),
                                                  g.scalar(math.log(2), dt))))
symbolic("log10")(_composite(lambda g, x, dt: g.op("Div", g.op("Log", x),
                                                   g.scalar(math.log(10), dt))))
symbolic("exp2")(_composite(lambda g, x, dt: g.op("Pow", g.scalar(2, dt), x)))
symbolic("trunc", "fix")(_composite(lambda g, x, dt: _trunc(g, x)))
symbolic("frac")(_composite(lambda g, x, dt: g.op("Sub", x, _trunc(g, x))))
symbolic("isnan")(lambda g, result, input, **_: g.op("IsNaN", g.value(input)))
symbolic("isinf")(lambda g, result, input, **_: g.op("IsInf", g.value(input)))


@symbolic("round")
def round_(g, result, input, *, decimals=0, **_):
    x = _as_result_dtype(g, result, input)
    if decimals == 0:
        return g.op("Round", x)
    scale = g.scalar(10.0 ** decimals, result.dtype)
    return g.op("Div", g.op("Round", g.op("Mul", x, scale)), scale)


symbolic("contiguous", "clone", "detach", "cpu", "cuda", "resolve_conj", "resolve_neg",
         "positive", "__pos__", "data", "real")(_alias)


@symbolic("to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int",
          "short", "char", "byte", "bool")
def to(g, result, input, *args, **_):
    if not isinstance(result, Tensor):   # x.type() answers a string
        return None
    return _as_result_dtype(g, result, input)


# ---------------------------------------------------------------------------- reductions
def _reduction(op_type, all_dims=None):
    def translate(g, result, input, dim=all_dims, keepdim=False, **_):
        x = _as_result_dtype(g, result, input)
        axes = None if dim is None or dim == () or dim == [] else wrap_dims(dim, input.dim())
        return g.reduce(op_type, x, axes, keepdim)
    return translate


symbolic("sum")(_reduction("ReduceSum"))
symbolic("mean")(_reduction("ReduceMean"))
symbolic("prod")(_reduction("ReduceProd"))
symbolic("amax")(_reduction("ReduceMax", all_dims=()))
symbolic("amin")(_reduction("ReduceMin", all_dims=()))
symbolic("logsumexp")(_reduction("ReduceLogSumExp"))


def _any_all(op_type):
    def translate(g, result, input, dim=None, keepdim=False, **_):
        nonzero = g.cast(g.value(input), input.dtype, _dt.bool_)
        x = g.cast(nonzero, _dt.bool_, _dt.int32)   # the reductions take no bool
        axes = None if dim is None else wrap_dims(dim, input.dim())
        return g.cast(g.reduce(op_type, x, axes, keepdim), _dt.int32, _dt.bool_)
    return translate


symbolic("any")(_any_all("ReduceMax"))
symbolic("all")(_any_all("ReduceMin"))


def _max_min(reduce_op, arg_op, binary_op):
    def translate(g, result, input, dim=None, keepdim=False, **_):
        if isinstance(dim, Tensor):                      # torch.max(a, b)
            return _binary(binary_op)(g, result, input, dim)
        x = g.value(input)
        if dim is None:
            return g.reduce(reduce_op, x, None, False)
        d = wrap_dim(dim, input.dim())
        values = g.reduce(reduce_op, x, [d], keepdim)
        return values, g.op(arg_op, x, axis=d, keepdims=int(keepdim))
    return translate


symbolic("max")(_max_min("ReduceMax", "ArgMax", "Max"))
symbolic("min")(_max_min("ReduceMin", "ArgMin", "Min"))


def _arg(op_type):
    def translate(g, result, input, dim=None, keepdim=False, **_):
        x = g.value(input)
        if dim is None:
            flat = g.op(op_type, g.op("Reshape", x, g.ints([-1])), axis=0, keepdims=0)
            return g.op("Reshape", flat, g.ints(result.shape)) if keepdim else flat
        return g.op(op_type, x, axis=wrap_dim(dim, input.dim()), keepdims=int(keepdim))
    return translate


symbolic("argmax")(_arg("ArgMax"))
symbolic("argmin")(_arg("ArgMin"))


@symbolic("var")
def var(g, result, input, dim=None, unbiased=None, keepdim=False, *, correction=None, **_):
    if isinstance(dim, bool):   # var(x, False): the old (input, unbiased) overload
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = list(range(input.dim())) if dim is None else wrap_dims(dim, input.dim())
    x = _as_result_dtype(g, result, input)
    centred = g.op("Sub", x, g.reduce("ReduceMean", x, dims, True))
    squares = g.reduce("ReduceSum", g.op("Mul", centred, centred), dims, keepdim)
    count = math.prod(input.shape[d] for d in dims)
    return g.op("Div", squares, g.scalar(max(count - correction, 0), result.dtype))


@symbolic("std")
def std(g, result, input, *args, **kwargs):
    return g.op("Sqrt", var(g, result, input, *args, **kwargs))


@symbolic("norm", "linalg.vector_norm")
def norm(g, result, input, p=2, dim=None, keepdim=False, *args, ord=None, **_):
    p = ord if ord is not None else p
    x = _as_result_dtype(g, result, input)
    axes = None if dim is None else wrap_dims(dim, input.dim())
    if p in (2, "fro"):
        return g.reduce("ReduceL2", x, axes, keepdim)
    if p == 1:
        return g.reduce("ReduceL1", x, axes, keepdim)
    if p == math.inf:
        return g.reduce("ReduceMax", g.op("Abs", x), axes, keepdim)
    raise g.unsupported(f"aten::norm (p={p})")


@symbolic("cumsum")
def cumsum(g, result, input, dim, **_):
    axis = g.constant(np.asarray(wrap_dim(dim, input.dim()), dtype=np.int64))
    return g.op("CumSum", _as_result_dtype(g, result, input), axis)


# ---------------------------------------------------------------------------- shapes and views
@symbolic("view", "reshape")
def reshape(g, result, input, *shape, **_):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        raise g.unsupported("aten::view (reinterpreting the dtype)")
    shape = sizes_arg(shape)
    if has_sym_int(shape):
        return g.op("Reshape", g.value(input), g.shape_value(shape))
    infer_at = shape.index(-1) if -1 in shape else None
    return g.reshape(g.value(input), input.shape, result.shape, infer_at)


@symbolic("view_as", "reshape_as")
def view_as(g, result, input, other, **_):
    if g.is_traced(other):
        return g.op("Reshape", g.value(input), g.op("Shape", g.value(other)))
    return g.reshape(g.value(input), input.shape, result.shape)


@symbolic("flatten")
def flatten(g, result, input, start_dim=0, end_dim=-1, **_):
    start = wrap_dim(start_dim, max(input.dim(), 1))
    return g.reshape(g.value(input), input.shape, result.shape, infer_at=start)


@symbolic("unflatten")
def unflatten(g, result, input, dim, sizes, **_):
    sizes = list(sizes)
    infer_at = wrap_dim(dim, input.dim()) + sizes.index(-1) if -1 in sizes else None
    return g.reshape(g.value(input), input.shape, result.shape, infer_at)


@symbolic("squeeze")
def squeeze(g, result, input, dim=None, **_):
    dims = range(input.dim()) if dim is None else wrap_dims(dim, max(input.dim(), 1))
    axes = [d for d in dims if d < input.dim() and input.shape[d] == 1]
    return g.squeeze(g.value(input), axes) if axes else g.value(input)


@symbolic("unsqueeze")
def unsqueeze(g, result, input, dim, **_):
    return g.unsqueeze(g.value(input), [wrap_dim(dim, result.dim())])


@symbolic("permute")
def permute(g, result, input, *dims, **_):
    return g.transpose(g.value(input), wrap_dims(sizes_arg(dims), input.dim()))


@symbolic("transpose", "swapaxes", "swapdims")
def transpose(g, result, input, dim0, dim1, **_):
    perm = list(range(input.dim()))
    a, b = wrap_dim(dim0, input.dim()), wrap_dim(dim1, input.dim())
    perm[a], perm[b] = perm[b], perm[a]
    return g.transpose(g.value(input), perm)


@symbolic("t", "T", "H")
def t(g, result, input, **_):
    return g.transpose(g.value(input), reversed(range(input.dim())))


@symbolic("mT", "mH", "adjoint")
def matrix_transpose(g, result, input, **_):
    return transpose(g, result, input, -2, -1)


@symbolic("movedim", "moveaxis")
def movedim(g, result, input, source, destination, **_):
    n = input.dim()
    src, dst = wrap_dims(source, n), wrap_dims(destination, n)
    rest = iter(d for d in range(n) if d not in src)
    placed = dict(zip(dst, src))
    return g.transpose(g.value(input), [placed[i] if i in placed else next(rest)
                                        for i in range(n)])


def _expand_shape(in_shape, out_shape):
    # 1 where the input keeps its size, so a dynamic dim stays dynamic under broadcasting
    lead = len(out_shape) - len(in_shape)
    return [1 if i >= lead and in_shape[i - lead] == s else s for i, s in enumerate(out_shape)]


@symbolic("expand", "broadcast_to")
def expand(g, result, input, *sizes, **_):
    sizes = sizes_arg(sizes)
    if has_sym_int(sizes):   # -1 keeps a dim: 1 does under ONNX's broadcasting
        shape = g.shape_value([1 if n == -1 else n for n in sizes])
    else:
        shape = g.ints(_expand_shape(list(input.shape), list(result.shape)))
    return g.op("Expand", g.value(input), shape)


@symbolic("expand_as")
def expand_as(g, result, input, other, **_):
    if g.is_traced(other):
        return g.op("Expand", g.value(input), g.op("Shape", g.value(other)))
    return expand(g, result, input, *result.shape)


@symbolic("repeat", "tile")
def repeat(g, result, input, *sizes, **_):
    reps = sizes_arg(sizes)
    x = g.value(input)
    if len(reps) < input.dim():    # tile pads the repeats on the left
        reps = [1] * (input.dim() - len(reps)) + reps
    if len(reps) > input.dim():
        x = g.unsqueeze(x, range(len(reps) - input.dim()))
    return g.op("Tile", x, g.ints(reps))


@symbolic("cat", "concat", "concatenate")
def cat(g, result, tensors, dim=0, *, axis=None, **_):
    dim = axis if axis is not None else dim
    # torch lets legacy empty 1-d tensors join any cat; ONNX needs equal ranks
    parts = [g.operand(t, result.dtype) for t in tensors
             if not (t.dim() == 1 and t.shape[0] == 0 and result.dim() != 1)]
    return g.op("Concat", *parts, axis=wrap_dim(dim, result.dim()))


@symbolic("stack")
def stack(g, result, tensors, dim=0, **_):
    d = wrap_dim(dim, result.dim())
    parts = [g.unsqueeze(g.operand(t, result.dtype), [d]) for t in tensors]
    return g.op("Concat", *parts, axis=d)


def _split_dim(args, kwargs):
    return kwargs.get("dim", args[0] if args else 0)


@symbolic("split", "split_with_sizes", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit")
def split(g, result, input, sections, *args, **kwargs):
    d = wrap_dim(_split_dim(args, kwargs), input.dim())
    sizes = [t.shape[d] for t in result]
    outs = g.op("Split", g.value(input), g.ints(sizes), axis=d, outputs=len(sizes))
    return [outs] if len(sizes) == 1 else outs


@symbolic("unbind")
def unbind(g, result, input, dim=0, **_):
    d = wrap_dim(dim, input.dim())
    x = g.value(input)
    return [g.op("Gather", x, g.constant(np.asarray(i, dtype=np.int64)), axis=d)
            for i in range(len(result))]


@symbolic("narrow")
def narrow(g, result, input, dim, start, length, **_):
    d = wrap_dim(dim, input.dim())
    start = int(start) + (input.shape[d] if int(start) < 0 else 0)
    return g.op("Slice", g.value(input), g.ints([start]), g.ints([start + int(length)]),
                g.ints([d]))


@symbolic("select")
def select(g, result, input, dim, index, **_):
    return g.op("Gather", g.value(input), g.constant(np.asarray(int(index), dtype=np.int64)),
                axis=wrap_dim(dim, input.dim()))


@symbolic("gather")
def gather(g, result, input, dim, index, **_):
    return g.op("GatherElements", g.value(input), g.operand(index, _dt.int64),
                axis=wrap_dim(dim, input.dim()))


@symbolic("index_select")
def index_select(g, result, input, dim, index, **_):
    return g.op("Gather", g.value(input), g.operand(index, _dt.int64),
                axis=wrap_dim(dim, input.dim()))


def _triangle(upper):
    def translate(g, result, input, diagonal=0, **_):
        g.require("aten::triu" if upper else "aten::tril", 14)
        k = g.constant(np.asarray(diagonal, dtype=np.int64))
        return g.op("Trilu", g.value(input), k, upper=int(upper))
    return translate


symbolic("triu")(_triangle(True))
symbolic("tril")(_triangle(False))


# ---------------------------------------------------------------------------- creation
def _filled(fill, method):
    """zeros/ones/full/empty (and the ``new_`` methods): a constant, or ConstantOfShape
    where the size holds SymInts."""
    def translate(g, result, *args, **kwargs):
        args = args[1:] if method else args
        if fill is None:   # full(size, fill_value)
            size, value = args[0], kwargs.get("fill_value", args[1] if len(args) > 1 else None)
        else:
            size, value = sizes_arg(args) if args else kwargs.get("size"), fill
        if not has_sym_int(size):
            return g.value(result)
        return g.op("ConstantOfShape", g.shape_value(size),
                    value=_one_element(value, result.dtype))
    return translate


for _fill, _names in ((0, ("zeros", "empty")), (1, ("ones",)), (None, ("full",))):
    symbolic(*_names)(_filled(_fill, method=False))
    symbolic(*("new_" + n for n in _names))(_filled(_fill, method=True))
symbolic("new_tensor")(lambda g, result, *args, **_: g.value(result))


@symbolic("arange")
def arange(g, result, start, end=None, step=1, **_):
    if end is None:
        start, end = 0, start
    if not has_sym_int((start, end, step)):
        return g.value(result)
    return g.op("Range", *(g.operand(n, result.dtype) for n in (start, end, step)))


def _filled_like(fill):
    def translate(g, result, input, *args, **kwargs):
        value = fill if fill is not None else kwargs.get("fill_value", args[0] if args else 0)
        return g.op("ConstantOfShape", g.op("Shape", g.value(input)),
                    value=_one_element(value, result.dtype))
    return translate


def _one_element(value, dtype):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray([value], dtype=dtype.np))


symbolic("zeros_like", "empty_like")(_filled_like(0))
symbolic("ones_like")(_filled_like(1))
symbolic("full_like")(_filled_like(None))


# ---------------------------------------------------------------------------- indexing
@symbolic("__getitem__")
def getitem(g, result, input, index, **_):
    items = list(index) if isinstance(index, tuple) else [index]
    items = _expand_ellipsis(items, input.dim())
    if sum(isinstance(i, (Tensor, list)) for i in items) > 1:
        raise g.unsupported("aten::index (more than one tensor index)")
    x, dim = g.value(input), 0
    for item in items:
        x, dim = _index_one(g, x, dim, item, input)
    return x


def _expand_ellipsis(items, ndim):
    used = sum(_dims_used(i) for i in items)
    if any(i is Ellipsis for i in items):
        k = next(n for n, i in enumerate(items) if i is Ellipsis)
        items = items[:k] + [slice(None)] * (ndim - used) + items[k + 1:]
    return items


def _dims_used(item):
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, Tensor) and item.dtype.name == "bool":
        return item.dim()
    return 1


def _index_one(g, x, dim, item, input):
    """Apply one index item at output dim ``dim``; return the new value and next dim."""
    if item is None:
        return g.unsqueeze(x, [dim]), dim + 1
    if isinstance(item, slice):
        return _slice(g, x, dim, item), dim + 1
    if isinstance(item, bool) or (isinstance(item, Tensor) and item.dtype is _dt.bool_):
        raise g.unsupported("aten::index (a boolean mask)")
    if isinstance(item, SymInt):
        return g.op("Gather", x, g.size_scalar(item), axis=dim), dim
    if isinstance(item, int):
        return g.op("Gather", x, g.constant(np.asarray(item, dtype=np.int64)), axis=dim), dim
    if isinstance(item, list):
        item = np.asarray(item, dtype=np.int64)
        return g.op("Gather", x, g.constant(item), axis=dim), dim + item.ndim
    if isinstance(item, Tensor):
        return g.op("Gather", x, g.operand(item, _dt.int64), axis=dim), dim + item.dim()
    raise g.unsupported(f"aten::index (an index of type {type(item).__name__})")


def _slice(g, x, dim, item):
    start, stop, step = (_slice_bound(g, b) for b in (item.start, item.stop, item.step))
    if start in (None, 0) and stop is None and step in (None, 1):
        return x
    return g.op("Slice", x, g.size_value(start or 0),
                g.size_value(INT64_MAX if stop is None else stop), g.ints([dim]),
                g.ints([step or 1]))


def _slice_bound(g, bound):
    if isinstance(bound, Tensor):
        if g.is_traced(bound):
            from .errors import SymbolicValueError
            raise SymbolicValueError("a slice bound computed from the inputs cannot be "
                                     "exported as a constant", bound)
        return int(bound)
    return bound
