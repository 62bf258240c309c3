"""Batching rules: each op run once on a whole vmap batch.

A rule ``rule(func, level, args, kwargs)`` sees the op's arguments with BatchedTensors of
``level`` among them, calls the op (or a few ops) on their values (batch dim first) and
wraps the result. It returns NotImplemented for a case it does not cover; the op then runs
once per sample (``vmap.fallback``), which also gives torch's errors for invalid calls.
"""

from __future__ import annotations

import inspect

from .._tensor import Size, Tensor
from .vmap import (
    RULES,
    BatchedTensor,
    batch_size,
    fallback,
    mutates,
    raise_inplace_error,
    raise_random_error,
    randomness_of,
    unwrap,
    wrap,
)


def _register(names, rule):
    for name in names.split():
        RULES[name] = rule


def _ndim(x):
    """Logical dims of a tensor (a BatchedTensor's ``_data`` has its sample's shape)."""
    return x._data.ndim


def _wrap_out(r, level):
    if isinstance(r, Tensor):
        return wrap(r, level)
    if isinstance(r, tuple):
        items = [_wrap_out(e, level) for e in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
    if isinstance(r, list):
        return [_wrap_out(e, level) for e in r]
    return r


def _others_batched(level, args, kwargs, skip=1):
    for a in list(args[skip:]) + list(kwargs.values()):
        if unwrap(a, level) is not None:
            return True
        if isinstance(a, (list, tuple)) and any(unwrap(e, level) is not None for e in a):
            return True
    return False


def _expand(x, level):
    """The value of ``x`` at ``level``, expanding an unbatched tensor over the batch."""
    v = unwrap(x, level)
    if v is not None:
        return v
    return x.unsqueeze(0).expand(batch_size(level), *x.shape)


# ------------------------------------------------------------------------ metadata

def _metadata(func, level, args, kwargs):
    """Properties and queries answered from the sample's shape or from the value."""
    name = func.__name__ if func.__name__ != "__get__" else None
    x = args[0]
    shape = Size(x._data.shape)
    if name is None or name in ("dtype", "device", "layout", "requires_grad", "grad_fn",
                                "is_leaf", "is_cuda", "is_meta", "is_sparse", "is_quantized"):
        from .vmap import op_name
        key = op_name(func)
        if key == "shape":
            return shape
        if key == "ndim":
            return len(shape)
        if key in ("T", "mT", "H", "mH", "real", "imag", "data", "grad"):
            return NotImplemented
        return getattr(x._value, key)
    if name == "size":
        if len(args) > 1 or "dim" in kwargs:
            d = args[1] if len(args) > 1 else kwargs["dim"]
            if d is None:
                return shape
            return shape[_wrap_dim(d, len(shape))]
        return shape
    if name in ("dim", "ndimension"):
        return len(shape)
    if name in ("numel", "nelement"):
        return shape.numel()
    if name == "__len__":
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]
    return getattr(x._value, name)(*args[1:], **kwargs)


def _wrap_dim(d, n):
    if not -max(n, 1) <= d < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(n, 1)}, {max(n, 1) - 1}], but got {d})")
    return d % max(n, 1)


_register("shape ndim dtype device layout requires_grad grad_fn is_leaf is_cuda is_meta "
          "is_sparse is_quantized size dim ndimension numel nelement __len__ "
          "is_floating_point is_complex element_size is_contiguous get_device", _metadata)


def _set_requires_grad(func, level, args, kwargs):
    args[0]._value.requires_grad = args[1]


def _requires_grad_(func, level, args, kwargs):
    args[0]._value.requires_grad_(*args[1:], **kwargs)
    return args[0]


_register("requires_grad.__set__", _set_requires_grad)
_register("requires_grad_", _requires_grad_)


def _repr(func, level, args, kwargs):
    from .vmap import _levels
    depth = 1 + [entry[0] for entry in _levels].index(level) if any(
        entry[0] == level for entry in _levels) else level
    inner = repr(args[0]._value).replace("\n", "\n    ")
    return f"BatchedTensor(lvl={depth}, bdim=0, value=\n    {inner}\n)"


_register("__repr__ __str__", _repr)
RULES["__format__"] = lambda func, level, args, kwargs: _repr(func, level, args, kwargs)


def _item_error(*_):
    raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't "
                       "support vmap over calling .item() on a Tensor, please try to rewrite "
                       "what you're doing with other operations. If error is occurring "
                       "somewhere inside PyTorch internals, please file a bug report.")


def _control_flow_error(*_):
    raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                       "data-dependent control flow. We don't support that yet, please file "
                       "an issue at https://github.com/pytorch/pytorch/issues .")


def _no_storage(*_):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


def _backward_error(*_):
    raise RuntimeError("backward() called inside a functorch transform. This is not "
                       "supported, please use functorch.grad or functorch.vjp instead or call "
                       "backward() outside of functorch transforms.")


_register("item __float__ __int__ __index__ __complex__", _item_error)
_register("__bool__", _control_flow_error)
_register("numpy __array__ tolist data_ptr untyped_storage storage", _no_storage)
_register("backward", _backward_error)


# ------------------------------------------------------------------------ pointwise

def _tensor_args(args, kwargs):
    out = [a for a in args if isinstance(a, Tensor)]
    out += [a for a in kwargs.values() if isinstance(a, Tensor)]
    return out


def _pointwise(func, level, args, kwargs):
    """Broadcasting ops: each batched value gets size-1 dims after its batch dim so that the
    samples' dims line up (right-aligned) with every other operand."""
    if "out" in kwargs:
        return NotImplemented
    tensors = _tensor_args(args, kwargs)
    if any(isinstance(a, (list, tuple)) and any(isinstance(e, Tensor) for e in a)
           for a in args):
        return NotImplemented
    if len(tensors) > 1 and len({t.dtype for t in tensors}) > 1 and \
            any(_ndim(t) == 0 for t in tensors):
        return NotImplemented  # a zero-dim operand's promotion category would change
    m = max(_ndim(t) for t in tensors)
    inplace = mutates(func.__name__)
    if inplace and _ndim(args[0]) < m:
        return NotImplemented

    def aligned(a):
        v = unwrap(a, level)
        if v is None:
            return a
        for _ in range(m - _ndim(a)):
            v = v.unsqueeze(1)
        return v
    if inplace and unwrap(args[0], level) is None:
        if func.__name__ == "copy_":
            raise_inplace_error()
        from .. import broadcast_shapes
        shape = broadcast_shapes(*[tuple(aligned(t).shape) for t in tensors])
        raise RuntimeError(f"output with shape {list(args[0].shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    r = func(*[aligned(a) for a in args], **{k: aligned(v) for k, v in kwargs.items()})
    if inplace:
        return args[0]
    return _wrap_out(r, level)


_POINTWISE = """
add sub subtract mul multiply div divide true_divide neg negative exp log sqrt abs absolute
floor_divide remainder fmod pow float_power sign sgn signbit exp2 expm1 log2 log10 log1p rsqrt
square reciprocal sigmoid sin cos tan asin acos atan arcsin arccos arctan sinh cosh tanh asinh
acosh atanh arcsinh arccosh arctanh atan2 arctan2 hypot copysign xlogy logit erf erfc
erfinv deg2rad rad2deg clamp clip clamp_min clamp_max maximum minimum fmax fmin floor ceil
round trunc fix frac lerp addcmul addcdiv nan_to_num heaviside angle positive conj
conj_physical resolve_conj resolve_neg eq ne lt le gt ge not_equal less less_equal greater
greater_equal isclose logical_and logical_or logical_xor logical_not bitwise_and bitwise_or
bitwise_xor bitwise_not isnan isinf isfinite isposinf isneginf isreal
masked_fill frexp
rsub logaddexp logaddexp2 xlog1py lgamma digamma polygamma mvlgamma sinc i0 i0e i1 i1e
ndtr ndtri log_ndtr erfcx expit exp2 entr gammaln gammainc gammaincc zeta nextafter
bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1
modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1
spherical_bessel_j0 airy_ai chebyshev_polynomial_t chebyshev_polynomial_u
chebyshev_polynomial_v chebyshev_polynomial_w shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w
hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p
relu relu6 gelu silu mish elu selu celu leaky_relu hardtanh hardsigmoid hardswish softplus
softsign tanhshrink logsigmoid threshold hardshrink softshrink
__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__
__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __neg__ __abs__ __pos__ __invert__ __and__
__rand__ __or__ __ror__ __xor__ __rxor__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__
__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __iand__ __ior__
__ixor__ copy_ zero_ fill_
"""
_register(_POINTWISE, _pointwise)
_register(" ".join(n + "_" for n in _POINTWISE.split()
                   if not n.startswith("__") and not n.endswith("_") and n not in
                   ("frexp", "isclose", "eq", "ne", "lt", "le", "gt", "ge")), _pointwise)


def _where(func, level, args, kwargs):
    if len(args) + len(kwargs) < 3:
        return NotImplemented  # where(cond): nonzero, a dynamic shape
    return _pointwise(func, level, args, kwargs)


RULES["where"] = _where


def _max_min(func, level, args, kwargs):
    if len(args) > 1 and isinstance(args[1], Tensor) or isinstance(kwargs.get("other"), Tensor):
        return _pointwise(func, level, args, kwargs)
    return _reduction(func, level, args, kwargs)


def _passthrough(func, level, args, kwargs):
    """Ops that act on each element (or copy the tensor) whatever its shape."""
    if _others_batched(level, args, kwargs):
        return NotImplemented
    return _wrap_out(func(args[0]._value, *args[1:], **kwargs), level)


_register("clone contiguous detach to type float double half bfloat16 int long short bool "
          "byte char cfloat cdouble cpu cuda zeros_like ones_like empty_like full_like "
          "pad layer_norm embedding", _passthrough)


def _unbatched_new(func, level, args, kwargs):
    """``new_zeros`` and friends: a tensor of the given size, the same for every sample."""
    if _others_batched(level, args, kwargs):
        return NotImplemented
    return func(args[0]._value, *args[1:], **kwargs)


_register("new_zeros new_ones new_empty new_full new_tensor", _unbatched_new)


def _pad(func, level, args, kwargs):
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    if mode != "constant":
        return NotImplemented
    return _passthrough(func, level, args, kwargs)


RULES["pad"] = _pad


def _layer_norm(func, level, args, kwargs):
    if _others_batched(level, args, kwargs):
        return NotImplemented
    return _passthrough(func, level, args, kwargs)


RULES["layer_norm"] = _layer_norm


# ------------------------------------------------------------------------ random ops

def _random(func, level, args, kwargs):
    """Under 'different' the op draws for the whole batch at once; 'same' replays one
    generator state per sample; 'error' refuses."""
    randomness = randomness_of(level)
    if randomness == "error":
        raise_random_error()
    if randomness == "same" or _others_batched(level, args, kwargs):
        return fallback(func, level, args, kwargs, func.__name__, replay=randomness == "same")
    r = func(args[0]._value, *args[1:], **kwargs)
    return args[0] if mutates(func.__name__) else _wrap_out(r, level)


_register("dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout rrelu "
          "bernoulli rand_like randn_like randint_like poisson uniform_ normal_ bernoulli_ "
          "random_ exponential_ geometric_ cauchy_ log_normal_", _random)


# ------------------------------------------------------------------------ dims

_signatures = {}


def _bind(func, args, kwargs):
    """The call's arguments by name (None when its signature cannot be read)."""
    sig = _signatures.get(func)
    if sig is None:
        try:
            sig = inspect.signature(getattr(func, "__wrapped__", func))
        except (TypeError, ValueError):
            sig = False
        _signatures[func] = sig
    if sig is False:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    return bound


def _shift(d, n):
    """A sample's dim ``d`` (of ``n`` dims) as a dim of the value; None when out of range."""
    if not isinstance(d, int) or isinstance(d, bool) or not -n <= d < n:
        return None
    return d if d < 0 else d + 1


def _with_dim(func, level, args, kwargs, param, default_all=False, flat_when_none=False,
              extra=0):
    """Call ``func`` on the value with its dim argument ``param`` moved past the batch dim.
    ``default_all``: dim None (or omitted, or ()) means every dim; ``flat_when_none``: the op
    takes one dim only, so 'every dim' is the flattened sample. ``extra``: the sample may
    have one dim more than the input (unsqueeze, stack)."""
    x = args[0]
    if _others_batched(level, args, kwargs) or "out" in kwargs:
        return NotImplemented
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    n = _ndim(x)
    if n + extra == 0:
        return NotImplemented  # dim 0 / -1 of a scalar would name the batch dim
    v = x._value
    arguments = bound.arguments
    if param in arguments:
        d = arguments[param]
    else:
        p = bound.signature.parameters.get(param)
        d = None if p is None or p.default is inspect.Parameter.empty else p.default
    if isinstance(d, bool):
        d = None  # std(x, True): the 'unbiased' overload
        if param in arguments:
            arguments[param] = None
    if d is None or d == ():
        if not default_all:
            return NotImplemented
        if flat_when_none:
            if arguments.get("keepdim") or x._data.size == 0:
                return NotImplemented
            v = v.reshape(v.shape[0], -1)
            arguments[param] = 1
        else:
            arguments[param] = tuple(range(1, n + 1))
    elif isinstance(d, (list, tuple, Size)):
        dims = [_shift(e, n + extra) for e in d]
        if None in dims or len(set(dims)) != len(dims):
            return NotImplemented
        arguments[param] = type(d)(dims) if not isinstance(d, Size) else tuple(dims)
    else:
        s = _shift(d, n + extra)
        if s is None:
            return NotImplemented
        arguments[param] = s
    arguments[next(iter(bound.signature.parameters))] = v
    return _wrap_out(func(*bound.args, **bound.kwargs), level)


def _reduction(func, level, args, kwargs):
    name = func.__name__
    if name in ("prod", "argmax", "argmin", "max", "min", "median", "nanmedian"):
        return _with_dim(func, level, args, kwargs, "dim", default_all=True,
                         flat_when_none=True)
    return _with_dim(func, level, args, kwargs, "dim", default_all=True)


_register("sum mean nansum nanmean amax amin std var std_mean var_mean all any logsumexp "
          "count_nonzero prod argmax argmin median nanmedian", _reduction)
_register("max min", _max_min)


def _dim_op(param, extra=0):
    def rule(func, level, args, kwargs):
        return _with_dim(func, level, args, kwargs, param, extra=extra)
    return rule


_register("softmax log_softmax cumsum cumprod logcumsumexp cummax cummin sort argsort "
          "select narrow unbind chunk split tensor_split index_select unflatten "
          "squeeze", _dim_op("dim"))
_register("topk kthvalue", _dim_op("dim"))
_register("unsqueeze", _dim_op("dim", extra=1))
_register("flip roll", _dim_op("dims"))
_register("movedim moveaxis", lambda f, lv, a, k: _two_dims(f, lv, a, k))
_register("transpose swapaxes swapdims", lambda f, lv, a, k: _two_dims(f, lv, a, k))
_register("diagonal", lambda f, lv, a, k: _diagonal(f, lv, a, k))


def _softmax(func, level, args, kwargs):
    bound = _bind(func, args, kwargs)
    if bound is None or bound.arguments.get("dim") is None:
        return NotImplemented  # the implicit dim of the deprecated form
    return _with_dim(func, level, args, kwargs, "dim")


_register("softmax log_softmax", _softmax)


def _squeeze(func, level, args, kwargs):
    x = args[0]
    if len(args) == 1 and not kwargs:
        dims = tuple(i + 1 for i, s in enumerate(x._data.shape) if s == 1)
        return wrap(x._value.squeeze(dims) if dims else x._value.view_as(x._value), level)
    return _with_dim(func, level, args, kwargs, "dim")


RULES["squeeze"] = _squeeze


def _two_dims(func, level, args, kwargs, first=1):
    """Ops with two dim arguments right after the input."""
    if _others_batched(level, args, kwargs) or kwargs:
        return NotImplemented
    x = args[0]
    n = _ndim(x)
    rest = list(args[1:])
    for i in range(first - 1, min(first + 1, len(rest))):
        d = rest[i]
        if isinstance(d, (list, tuple)):
            s = [_shift(e, n) for e in d]
            if None in s:
                return NotImplemented
            rest[i] = tuple(s)
        else:
            rest[i] = _shift(d, n)
            if rest[i] is None:
                return NotImplemented
    return wrap(func(x._value, *rest), level)


def _diagonal(func, level, args, kwargs):
    bound = _bind(func, args, kwargs)
    if bound is None or _others_batched(level, args, kwargs):
        return NotImplemented
    a = bound.arguments
    n = _ndim(args[0])
    d1, d2 = _shift(a.get("dim1", 0), n), _shift(a.get("dim2", 1), n)
    if d1 is None or d2 is None:
        return NotImplemented
    return wrap(func(args[0]._value, a.get("offset", 0), d1, d2), level)


def _last_two(func, level, args, kwargs):
    """triu/tril: they act on the last two dims, whatever comes before."""
    if _ndim(args[0]) < 2:
        return NotImplemented
    return _passthrough(func, level, args, kwargs)


_register("triu tril", _last_two)


def _flatten(func, level, args, kwargs):
    x = args[0]
    n = _ndim(x)
    if n == 0 or _others_batched(level, args, kwargs):
        return NotImplemented
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    s, e = _shift(a.get("start_dim", 0), n), _shift(a.get("end_dim", -1), n)
    if s is None or e is None:
        return NotImplemented
    return wrap(x._value.flatten(s, e), level)


RULES["flatten"] = _flatten


def _sizes(args):
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list, Size)) \
        else tuple(args)


def _view(func, level, args, kwargs):
    if kwargs or _others_batched(level, args, kwargs) or not all(
            isinstance(s, int) for s in _sizes(args[1:])):
        return NotImplemented
    v = args[0]._value
    return wrap(func(v, (v.shape[0],) + _sizes(args[1:])), level)


_register("view reshape", _view)


def _as_other(func, level, args, kwargs):
    other = args[1] if len(args) > 1 else kwargs.get("other")
    if not isinstance(other, Tensor):
        return NotImplemented
    target = other._data.shape if type(other) is BatchedTensor else other.shape
    v = args[0]._value
    base = {"view_as": "view", "reshape_as": "reshape", "expand_as": "expand"}[func.__name__]
    if base == "expand":
        return _expand_to(args[0], tuple(target), level)
    return wrap(getattr(v, base)((v.shape[0],) + tuple(target)), level)


_register("view_as reshape_as expand_as", _as_other)


def _expand_to(x, sizes, level):
    n = _ndim(x)
    if len(sizes) < n or any(s == -1 for s in sizes[:len(sizes) - n]):
        return NotImplemented
    v = x._value
    for _ in range(len(sizes) - n):
        v = v.unsqueeze(1)
    return wrap(v.expand(v.shape[0], *sizes), level)


def _expand_rule(func, level, args, kwargs):
    if kwargs or _others_batched(level, args, kwargs):
        return NotImplemented
    return _expand_to(args[0], _sizes(args[1:]), level)


RULES["expand"] = _expand_rule


def _permute(func, level, args, kwargs):
    if kwargs or _others_batched(level, args, kwargs):
        return NotImplemented
    n = _ndim(args[0])
    dims = [_shift(d, n) for d in _sizes(args[1:])]
    if None in dims or len(dims) != n:
        return NotImplemented
    return wrap(args[0]._value.permute(0, *dims), level)


RULES["permute"] = _permute


def _t(func, level, args, kwargs):
    n = _ndim(args[0])
    if n > 2:
        return NotImplemented
    v = args[0]._value
    return wrap(v.transpose(1, 2) if n == 2 else v.view_as(v), level)


_register("t", _t)


def _transposed_property(func, level, args, kwargs):
    from .vmap import op_name
    name = op_name(func)
    x = args[0]
    n = _ndim(x)
    v = x._value
    if name == "T":
        return wrap(v.permute(0, *range(n, 0, -1)), level)
    if name == "mT" and n >= 2:
        return wrap(v.transpose(-2, -1), level)
    return NotImplemented


_register("T mT", _transposed_property)


def _cat(func, level, args, kwargs):
    """cat/stack: every tensor expanded over the batch, dim moved past it."""
    tensors = args[0] if args else kwargs.get("tensors")
    if not isinstance(tensors, (list, tuple)) or not tensors or "out" in kwargs:
        return NotImplemented
    d = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    n = _ndim(tensors[0])
    if any(_ndim(t) != n for t in tensors) or (n == 0 and func.__name__ != "stack"):
        return NotImplemented
    s = _shift(d, n + (func.__name__ == "stack"))
    if s is None:
        return NotImplemented
    return wrap(func([_expand(t, level) for t in tensors], s), level)


_register("cat concat concatenate stack", _cat)


def _getitem(func, level, args, kwargs):
    """Basic indexing (ints, slices, None, ...) and one block of unbatched index tensors."""
    x, key = args[0], args[1]
    if type(key) is not tuple:
        key = (key,)
    blocks, prev = 0, False
    for k in key:
        advanced = isinstance(k, Tensor) or isinstance(k, (list, bool))
        if advanced and (unwrap(k, level) is not None or isinstance(k, bool) or
                         (isinstance(k, Tensor) and k.dtype.is_floating_point is False and
                          str(k.dtype) == "torch.bool")):
            return NotImplemented
        if advanced and not prev:
            blocks += 1
        prev = advanced
    if blocks > 1:
        return NotImplemented
    return wrap(x._value[(slice(None),) + key], level)


def _setitem(func, level, args, kwargs):
    x, key, value = args
    v = unwrap(x, level)
    if v is None:
        raise_inplace_error()
    if type(key) is not tuple:
        key = (key,)
    if any(isinstance(k, (Tensor, list, bool)) for k in key):
        return NotImplemented
    src = unwrap(value, level)
    if src is not None:
        target = v[(slice(None),) + key]
        for _ in range(target.dim() - 1 - _ndim(value)):
            src = src.unsqueeze(1)
        value = src
    v[(slice(None),) + key] = value


RULES["__getitem__"] = _getitem
RULES["__setitem__"] = _setitem


def _gather(func, level, args, kwargs):
    bound = _bind(func, args, kwargs)
    if bound is None or bound.arguments.get("sparse_grad") or "out" in kwargs:
        return NotImplemented
    a = bound.arguments
    x, index = a["input"], a["index"]
    n = _ndim(x)
    d = _shift(a["dim"], n)
    if d is None or n == 0 or _ndim(index) != n:
        return NotImplemented
    return wrap(func(_expand(x, level), d, _expand(index, level)), level)


RULES["gather"] = _gather


# ------------------------------------------------------------------------ linear algebra

def _matmul_values(a, b, level):
    """matmul of two samples' operands (either batched at ``level``), on the values."""
    va, vb = unwrap(a, level), unwrap(b, level)
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return NotImplemented
    if va is None:
        va = a
    elif na == 1:
        va = va.unsqueeze(-2)
    if vb is None:
        vb = b
    elif nb == 1:
        vb = vb.unsqueeze(-1)
    ma, mb = max(na, 2), max(nb, 2)
    m = max(ma if unwrap(a, level) is not None else na, mb if unwrap(b, level) is not None
            else nb)
    if unwrap(a, level) is not None:
        for _ in range(m - ma):
            va = va.unsqueeze(1)
    if unwrap(b, level) is not None:
        for _ in range(m - mb):
            vb = vb.unsqueeze(1)
    from .. import matmul  # the dispatch point: batched tensors take part
    r = matmul(va, vb)
    if na == 1 and unwrap(a, level) is not None:
        r = r.squeeze(-2)
    if nb == 1 and unwrap(b, level) is not None:
        r = r.squeeze(-1)
    return r


def _matmul(func, level, args, kwargs):
    if kwargs or len(args) != 2:
        return NotImplemented
    a, b = args
    if func.__name__ == "__rmatmul__":
        a, b = b, a
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return NotImplemented
    need = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": (1, 1)}.get(
        func.__name__)
    if need is not None and ((_ndim(a), _ndim(b)) != need or a.dtype != b.dtype):
        return NotImplemented
    if _ndim(a) >= 1 and _ndim(b) >= 1 and a._data.shape[-1] != \
            b._data.shape[-2 if _ndim(b) > 1 else -1]:
        return NotImplemented  # the per-sample call raises torch's shape error
    if func.__name__ == "vdot":
        a = a.conj()
    r = _matmul_values(a, b, level)
    return r if r is NotImplemented else wrap(r, level)


_register("matmul __matmul__ __rmatmul__ mm bmm mv dot vdot", _matmul)


def _outer(func, level, args, kwargs):
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("vec2")
    if not isinstance(b, Tensor) or _ndim(a) != 1 or _ndim(b) != 1 or "out" in kwargs:
        return NotImplemented
    va, vb = unwrap(a, level), unwrap(b, level)
    va = a.unsqueeze(-1) if va is None else va.unsqueeze(-1)
    vb = b.unsqueeze(-2) if vb is None else vb.unsqueeze(-2)
    return wrap(va * vb, level)


_register("outer ger", _outer)


def _linear(func, level, args, kwargs):
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    x, w, b = bound.arguments["input"], bound.arguments["weight"], bound.arguments.get("bias")
    vw, vb = unwrap(w, level), unwrap(b, level)
    if vw is None and vb is None:
        return wrap(func(x._value, w, b), level)
    if _ndim(w) != 2 or _ndim(x) == 0 or x._data.shape[-1] != w._data.shape[-1]:
        return NotImplemented
    vw = _expand(w, level)
    vx = _expand(x, level)
    size = vx.shape[0]
    mid = tuple(vx.shape[1:-1])
    out = vx.reshape(size, -1, vx.shape[-1]).matmul(vw.transpose(-2, -1))
    if b is not None:
        out = out + _expand(b, level).unsqueeze(1)
    return wrap(out.reshape((size,) + mid + (out.shape[-1],)), level)


RULES["linear"] = _linear


# ------------------------------------------------------------------------ nn

def _fold_batch(spatial_of):
    """Ops over ``(N, C, *spatial)`` or ``(C, *spatial)`` samples whose other tensor
    arguments are not batched: the batch folds into N."""
    def rule(func, level, args, kwargs):
        x = args[0]
        if _others_batched(level, args, kwargs) or unwrap(x, level) is None:
            return NotImplemented
        v = x._value
        k = spatial_of(func)
        n = _ndim(x)
        if n == k + 1:
            return _wrap_out(func(v, *args[1:], **kwargs), level)
        if n != k + 2:
            return NotImplemented
        size = v.shape[0]
        r = func(v.reshape((-1,) + tuple(v.shape[2:])), *args[1:], **kwargs)
        return _wrap_out(_unfold(r, size), level)
    return rule


def _unfold(r, size):
    if isinstance(r, tuple):
        return type(r)(_unfold(e, size) for e in r)
    return r.reshape((size, -1) + tuple(r.shape[1:]))


def _spatial(func):
    return int(func.__name__.rstrip("d")[-1])


_register("max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d "
          "adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d "
          "adaptive_max_pool2d adaptive_max_pool3d", _fold_batch(_spatial))


def _conv(func, level, args, kwargs):
    """convNd: a batched input folds into N; a batched weight becomes groups (one group of
    filters per sample)."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x, w, b = a["input"], a["weight"], a.get("bias")
    k = _spatial(func)
    if _ndim(w) != k + 2 or _ndim(x) not in (k + 1, k + 2):
        return NotImplemented
    rest = [a.get(p, d) for p, d in (("stride", 1), ("padding", 0), ("dilation", 1))]
    groups = a.get("groups", 1)
    if isinstance(rest[1], str) and rest[1] != "valid" and rest[1] != "same":
        return NotImplemented
    unbatched = _ndim(x) == k + 1
    vx = _expand(x, level)
    if unbatched:
        vx = vx.unsqueeze(1)
    size = vx.shape[0]
    n = vx.shape[1]
    if unwrap(w, level) is None and unwrap(b, level) is None:
        out = func(vx.reshape((-1,) + tuple(vx.shape[2:])), w, b, *rest, groups)
        out = out.reshape((size, n) + tuple(out.shape[1:]))
    else:
        vw = _expand(w, level)
        out_c = vw.shape[1]
        xin = vx.movedim(0, 1).reshape((n, -1) + tuple(vx.shape[3:]))
        wf = vw.reshape((-1,) + tuple(vw.shape[2:]))
        bf = None if b is None else _expand(b, level).reshape(-1)
        out = func(xin, wf, bf, *rest, groups * size)
        out = out.reshape((n, size, out_c) + tuple(out.shape[2:])).movedim(1, 0)
    return wrap(out.squeeze(1) if unbatched else out, level)


_register("conv1d conv2d conv3d", _conv)


def _elementwise_loss(func, level, args, kwargs):
    """Losses that are elementwise before their reduction."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x, t = a["input"], a["target"]
    if not isinstance(t, Tensor) or x._data.shape != t._data.shape or \
            a.get("size_average") is not None or a.get("reduce") is not None:
        return NotImplemented
    for p in ("weight", "pos_weight"):
        if unwrap(a.get(p), level) is not None:
            return NotImplemented
    reduction = a.get("reduction", "mean")
    if reduction not in ("none", "mean", "sum"):
        return NotImplemented
    a["input"], a["target"] = _expand(x, level), _expand(t, level)
    a["reduction"] = "none"
    r = func(*bound.args, **bound.kwargs)
    if reduction != "none" and _ndim(x):
        r = getattr(r.reshape(r.shape[0], -1), reduction)(1)
    return wrap(r, level)


_register("mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
          "binary_cross_entropy_with_logits soft_margin_loss", _elementwise_loss)


def _class_loss(func, level, args, kwargs):
    """cross_entropy/nll_loss: the batch folds into N with reduction='none', then each
    sample's mean divides by its own (weighted, non-ignored) count."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return NotImplemented
    a = bound.arguments
    x, t, weight = a["input"], a["target"], a.get("weight")
    if not isinstance(t, Tensor) or unwrap(weight, level) is not None or \
            a.get("size_average") is not None or a.get("reduce") is not None:
        return NotImplemented
    reduction = a.get("reduction", "mean")
    smoothing = a.get("label_smoothing", 0.0)
    xs, ts = x._data.shape, t._data.shape
    if not xs:
        return NotImplemented
    probs = t.dtype.is_floating_point
    if probs:
        if ts != xs or func.__name__ != "cross_entropy":
            return NotImplemented
    elif ts != (xs[:1] + xs[2:] if len(xs) > 1 else ()):
        return NotImplemented
    if reduction not in ("none", "mean", "sum") or (smoothing and weight is not None):
        return NotImplemented
    vx, vt = _expand(x, level), _expand(t, level)
    size = vx.shape[0]
    if len(xs) > 1:
        vx = vx.reshape((-1,) + tuple(vx.shape[2:]))
        vt = vt.reshape((-1,) + tuple(vt.shape[2:]))
    a["input"], a["target"], a["reduction"] = vx, vt, "none"
    loss = func(*bound.args, **bound.kwargs).reshape(size, -1)
    if reduction == "none":
        return wrap(loss.reshape((size,) + tuple(ts if not probs else xs[:1] + xs[2:])),
                    level)
    total = loss.sum(1)
    if reduction == "sum":
        return wrap(total, level)
    if probs:
        return wrap(total / loss.shape[1], level)
    flat_t = vt.reshape(size, -1)
    valid = flat_t != a.get("ignore_index", -100)
    if weight is None:
        count = valid.sum(1).to(loss.dtype)
    else:
        count = (weight[flat_t.masked_fill(~valid, 0)] * valid).sum(1)
    return wrap(total / count, level)


_register("cross_entropy nll_loss", _class_loss)


# ------------------------------------------------------------------------ autograd

def _autograd_grad(func, level, args, kwargs):
    """autograd.grad on batched tensors (the plain autograd a function under vmap calls):
    one backward pass on the physical tensors when every input is batched at the same
    levels and the outputs at no others; otherwise one sample of ``level`` at a time."""
    if func.__name__ == "__get__":
        return NotImplemented  # the Tensor.grad property
    from .vmap import _levels_of, batched_grads
    bound = _bind(func, args, kwargs)
    if bound is None or bound.arguments.get("is_grads_batched"):
        return NotImplemented
    a = bound.arguments

    def as_list(x):
        return [x] if isinstance(x, Tensor) else list(x)
    outputs, inputs = as_list(a["outputs"]), as_list(a["inputs"])
    cts = a.get("grad_outputs")
    cts = [None] * len(outputs) if cts is None else as_list(cts)
    levels = {tuple(_levels_of(x)) for x in inputs}
    if len(levels) != 1:
        return NotImplemented
    own = sorted(levels.pop())
    if not own or any(lv not in own for o in outputs for lv in _levels_of(o)):
        return NotImplemented
    rest = {k: v for k, v in a.items() if k not in ("outputs", "inputs", "grad_outputs")}

    def compute(o, i, c):
        return list(func(o, i, c, **rest))
    return tuple(batched_grads([(lv, batch_size(lv)) for lv in own], outputs, inputs, cts,
                               compute))


RULES["grad"] = _autograd_grad
