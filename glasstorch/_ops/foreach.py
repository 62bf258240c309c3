"""``torch._foreach_*``: one operator applied to every tensor of a list (optimizers' multi-tensor
code paths). Each applies glasstorch's single-tensor operator to each tensor (via its Tensor
method), so dtype promotion, broadcasting, errors and autograd are that operator's; what is
added here is torch's argument handling: the overloads (a list of tensors, a scalar, a list of
scalars, a 0-dim tensor), the list-length checks and their messages.

Out-of-place variants return a tuple of new tensors; in-place variants (``_foreach_add_``...)
update each tensor and return the list they were given. Under autograd each result has its own
graph node (``AddBackward0``...), where torch records one node for the whole list.
"""

from __future__ import annotations

from numbers import Number

from .._core.dtype import result_type
from .._tensor import Tensor, preserve_format
from ._common import assign_inplace, not_implemented_for
from .linalg import vector_norm
from .pointwise import maximum, minimum
from .pointwise import pow as _pow

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
          "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")

__all__ = [f"_foreach_{n}{s}" for n in _UNARY for s in ("", "_")] + [
    f"_foreach_{n}{s}" for n in ("add", "sub", "mul", "div", "clamp_min", "clamp_max",
                                 "maximum", "minimum", "pow", "addcmul", "addcdiv", "lerp")
    for s in ("", "_")] + [
    "_foreach_norm", "_foreach_max", "_foreach_powsum", "_foreach_mm", "_foreach_clone",
    "_foreach_copy_", "_foreach_zero_"]


# ----------------------------------------------------------------------------- argument checks

def _tensor_list(fn_name, arg, position, arg_name):
    """``arg`` checked to be a list/tuple of Tensors (torch's TypeErrors otherwise)."""
    if not isinstance(arg, (list, tuple)):
        raise TypeError(f"{fn_name}(): argument '{arg_name}' (position {position + 1}) must be "
                        f"tuple of Tensors, not {type(arg).__name__}")
    for i, t in enumerate(arg):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got "
                            f"{type(t).__name__}")
    return arg


def _self_list(fn_name, self):
    _tensor_list(fn_name, self, 0, "self")
    if not self:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return self


def _same_length(self, other):
    if len(other) != len(self):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(self)} "
                           f"and {len(other)}")


def _is_number(x):
    return isinstance(x, Number) and not isinstance(x, Tensor)


def _as_scalar(x):
    """A Python number for a Scalar argument (torch also takes a 0-dim tensor there)."""
    if isinstance(x, Tensor) and x.dim() == 0:
        return x.item()
    return x


def _overload_error(fn_name, args, kwargs, accepted):
    got = ", ".join([type(a).__name__ for a in args] +
                    [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"{fn_name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n" + "\n".join(f" * {a}" for a in accepted))


def _per_tensor(fn_name, self, other, *, tensor_ok, accepted, alpha_given=False):
    """Resolve the second argument into one value per tensor of ``self``.

    Returns ``(kind, values)``, kind being "list" (tensors), "tensor" (one 0-dim tensor for
    every element), "scalar" or "scalars"; raises torch's errors for lengths and types.
    """
    if isinstance(other, Tensor):
        if tensor_ok:
            if other.dim() != 0:
                raise RuntimeError(f"scalar tensor expected to be 0 dim but it has "
                                   f"{other.dim()} dimensions and {other.numel()} elements.")
            return "tensor", [other] * len(self)
        if other.dim() == 0 and not alpha_given:
            return "scalar", [other.item()] * len(self)
    elif isinstance(other, (list, tuple)):
        if all(_is_number(v) for v in other):
            if alpha_given:
                raise _overload_error(fn_name, (self, other), {"alpha": 1}, accepted)
            if len(other) != len(self):
                raise RuntimeError("Tensor list must have same number of elements as scalar "
                                   "list.")
            return "scalars", list(other)
        _tensor_list(fn_name, other, 1, "other")
        _same_length(self, other)
        return "list", other
    elif _is_number(other) and not alpha_given:
        return "scalar", [other] * len(self)
    raise _overload_error(fn_name, (self, other), {"alpha": 1} if alpha_given else {}, accepted)


def _second_arg(fn_name, given):
    """The one second argument given positionally or under one of its overload names."""
    present = [(k, v) for k, v in given if v is not None]
    if len(present) != 1:
        names = ", ".join(k for k, _ in given)
        raise TypeError(f"{fn_name}() expects exactly one of the arguments {names}")
    return present[0][1]


# ----------------------------------------------------------------------------- unary

def _make_unary(name):
    method, inplace = name, name + "_"

    def op(self):
        return tuple(getattr(t, method)() for t in _self_list(f"_foreach_{name}", self))

    def op_(self):
        for t in _self_list(f"_foreach_{name}_", self):
            getattr(t, inplace)()
        return self

    op.__name__ = op.__qualname__ = f"_foreach_{name}"
    op_.__name__ = op_.__qualname__ = f"_foreach_{name}_"
    op.__doc__ = f"Apply :func:`torch.{name}` to each Tensor of the input list."
    op_.__doc__ = f"Apply :func:`torch.{name}` to each Tensor of the input list, in place."
    return op, op_


for _name in _UNARY:
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _make_unary(_name)
del _name


# ----------------------------------------------------------------------------- binary

_ARITH_ACCEPTED = ("(tuple of Tensors self, Number scalar)",
                   "(tuple of Tensors self, tuple of Scalars scalars)",
                   "(tuple of Tensors self, tuple of Tensors other{alpha})")
_TENSOR_ACCEPTED = "(tuple of Tensors self, Tensor other{alpha})"


def _accepted(tensor_ok, alpha):
    a = ", *, Number alpha=1" if alpha else ""
    out = [s.format(alpha=a) for s in _ARITH_ACCEPTED]
    if tensor_ok:
        out.append(_TENSOR_ACCEPTED.format(alpha=a))
    return out


def _run_binary(fn_name, self, other, element, *, inplace, tensor_ok, alpha=None):
    """``element(t, value, kind)`` for each tensor ``t`` with its resolved second argument."""
    _self_list(fn_name, self)
    kind, values = _per_tensor(fn_name, self, other, tensor_ok=tensor_ok,
                               accepted=_accepted(tensor_ok, alpha is not None),
                               alpha_given=alpha is not None)
    results = tuple(element(t, v, kind) for t, v in zip(self, values))
    return self if inplace else results


def _alpha_kwargs(alpha, kind):
    return {} if alpha is None or kind not in ("list", "tensor") else {"alpha": alpha}


def _add_other(t, v, kind, alpha):
    # torch's Tensor overload of _foreach_add without alpha treats the 0-dim tensor like a
    # Python scalar for the result dtype (int64 list + float64 0-dim tensor -> float32; with
    # alpha= it is float64), while keeping its gradient
    if kind == "tensor" and alpha is None:
        return v.to(result_type(t, v.item()))
    return v


def _foreach_add(self, other=None, *, alpha=None, scalar=None, scalars=None):
    """``self[i] + alpha * other[i]`` for a list, a scalar, a list of scalars or a 0-dim
    tensor ``other``."""
    other = _second_arg("_foreach_add", (("other", other), ("scalar", scalar),
                                         ("scalars", scalars)))
    return _run_binary("_foreach_add", self, other, lambda t, v, k: t.add(
        _add_other(t, v, k, alpha), **_alpha_kwargs(alpha, k)), inplace=False, tensor_ok=True,
        alpha=alpha)


def _foreach_add_(self, other=None, *, alpha=None, scalar=None, scalars=None):
    """In-place :func:`_foreach_add`."""
    other = _second_arg("_foreach_add_", (("other", other), ("scalar", scalar),
                                          ("scalars", scalars)))
    return _run_binary("_foreach_add_", self, other, lambda t, v, k: t.add_(
        _add_other(t, v, k, alpha), **_alpha_kwargs(alpha, k)), inplace=True, tensor_ok=True,
        alpha=alpha)


def _foreach_sub(self, other=None, *, alpha=None, scalar=None, scalars=None):
    """``self[i] - alpha * other[i]`` for a list, a scalar or a list of scalars."""
    other = _second_arg("_foreach_sub", (("other", other), ("scalar", scalar),
                                         ("scalars", scalars)))
    return _run_binary("_foreach_sub", self, other, lambda t, v, k: t.sub(
        v, **_alpha_kwargs(alpha, k)), inplace=False, tensor_ok=False, alpha=alpha)


def _foreach_sub_(self, other=None, *, alpha=None, scalar=None, scalars=None):
    """In-place :func:`_foreach_sub`."""
    other = _second_arg("_foreach_sub_", (("other", other), ("scalar", scalar),
                                          ("scalars", scalars)))
    return _run_binary("_foreach_sub_", self, other, lambda t, v, k: t.sub_(
        v, **_alpha_kwargs(alpha, k)), inplace=True, tensor_ok=False, alpha=alpha)


def _make_binary(name, out_of_place, in_place, *, tensor_ok, doc):
    """An out-of-place/in-place pair whose element ops are ``out_of_place(t, v, kind)`` and
    ``in_place(t, v, kind)``."""
    def op(self, other=None, *, scalar=None, scalars=None):
        value = _second_arg(f"_foreach_{name}", (("other", other), ("scalar", scalar),
                                                 ("scalars", scalars)))
        return _run_binary(f"_foreach_{name}", self, value, out_of_place, inplace=False,
                           tensor_ok=tensor_ok)

    def op_(self, other=None, *, scalar=None, scalars=None):
        value = _second_arg(f"_foreach_{name}_", (("other", other), ("scalar", scalar),
                                                  ("scalars", scalars)))
        return _run_binary(f"_foreach_{name}_", self, value, in_place, inplace=True,
                           tensor_ok=tensor_ok)

    op.__name__ = op.__qualname__ = f"_foreach_{name}"
    op_.__name__ = op_.__qualname__ = f"_foreach_{name}_"
    op.__doc__ = doc
    op_.__doc__ = f"In-place :func:`_foreach_{name}`."
    return op, op_


_foreach_mul, _foreach_mul_ = _make_binary(
    "mul", lambda t, v, k: t.mul(v), lambda t, v, k: t.mul_(v), tensor_ok=True,
    doc="``self[i] * other[i]`` for a list, a scalar, a list of scalars or a 0-dim tensor.")
_foreach_div, _foreach_div_ = _make_binary(
    "div", lambda t, v, k: t.div(v), lambda t, v, k: t.div_(v), tensor_ok=True,
    doc="``self[i] / other[i]`` (true division) for a list, a scalar, a list of scalars or a "
        "0-dim tensor.")
_foreach_clamp_min, _foreach_clamp_min_ = _make_binary(
    "clamp_min", lambda t, v, k: t.clamp_min(v), lambda t, v, k: t.clamp_min_(v),
    tensor_ok=False, doc="``clamp_min(self[i], other[i])`` for a list, a scalar or a list of "
                         "scalars.")
_foreach_clamp_max, _foreach_clamp_max_ = _make_binary(
    "clamp_max", lambda t, v, k: t.clamp_max(v), lambda t, v, k: t.clamp_max_(v),
    tensor_ok=False, doc="``clamp_max(self[i], other[i])`` for a list, a scalar or a list of "
                         "scalars.")


def _extremum(pairwise, clamp):
    # elementwise max/min against a tensor; against a number it is a clamp (NaN propagates
    # either way)
    def out_of_place(t, v, kind):
        return pairwise(t, v) if kind == "list" else getattr(t, clamp)(v)

    def in_place(t, v, kind):
        return assign_inplace(t, pairwise(t, v)) if kind == "list" else \
            getattr(t, clamp + "_")(v)
    return out_of_place, in_place


_foreach_maximum, _foreach_maximum_ = _make_binary(
    "maximum", *_extremum(maximum, "clamp_min"), tensor_ok=False,
    doc="``maximum(self[i], other[i])`` for a list, a scalar or a list of scalars.")
_foreach_minimum, _foreach_minimum_ = _make_binary(
    "minimum", *_extremum(minimum, "clamp_max"), tensor_ok=False,
    doc="``minimum(self[i], other[i])`` for a list, a scalar or a list of scalars.")

_POW_ACCEPTED = ("(tuple of Tensors self, Number exponent)",
                 "(tuple of Tensors self, tuple of Scalars exponent)",
                 "(tuple of Tensors self, tuple of Tensors exponent)",
                 "(Number self, tuple of Tensors exponent)")


def _foreach_pow(self, exponent):
    """``self[i] ** exponent[i]`` for a list, a scalar or a list of scalars ``exponent``; or
    ``self ** exponent[i]`` for a number ``self`` and a list of tensors."""
    if _is_number(self) and isinstance(exponent, (list, tuple)):
        _self_list("_foreach_pow", exponent)
        return tuple(_pow(self, e) for e in exponent)
    if not isinstance(self, (list, tuple)):
        raise _overload_error("_foreach_pow", (self, exponent), {}, _POW_ACCEPTED)
    _self_list("_foreach_pow", self)
    _, values = _per_tensor("_foreach_pow", self, exponent, tensor_ok=False,
                            accepted=_POW_ACCEPTED)
    return tuple(t.pow(e) for t, e in zip(self, values))


def _foreach_pow_(self, exponent):
    """In-place :func:`_foreach_pow` (``self`` must be the list of tensors)."""
    if not isinstance(self, (list, tuple)):
        raise _overload_error("_foreach_pow_", (self, exponent), {}, _POW_ACCEPTED[:3])
    _self_list("_foreach_pow_", self)
    _, values = _per_tensor("_foreach_pow_", self, exponent, tensor_ok=False,
                            accepted=_POW_ACCEPTED[:3])
    for t, e in zip(self, values):
        t.pow_(e)
    return self


# ----------------------------------------------------------------------------- ternary

def _packed_scalars(scalars, n):
    """Python numbers from a 1-D tensor of per-tensor scalars (the Tensor overload)."""
    if scalars.dim() != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got "
                           f"{scalars.dim()} instead.")
    if scalars.numel() != n:
        raise RuntimeError(f"Expected length of scalars to match input of length {n} but got "
                           f"{scalars.numel()} instead.")
    return scalars.tolist()


def _addc_values(fn_name, self, tensor1, tensor2, value, scalars):
    _self_list(fn_name, self)
    _tensor_list(fn_name, tensor1, 1, "tensor1")
    _tensor_list(fn_name, tensor2, 2, "tensor2")
    _same_length(self, tensor1)
    _same_length(self, tensor2)
    if scalars is None:
        return [_as_scalar(value)] * len(self)
    if isinstance(scalars, Tensor):
        return _packed_scalars(scalars, len(self))
    if not isinstance(scalars, (list, tuple)) or not all(_is_number(s) for s in scalars):
        raise TypeError(f"{fn_name}(): argument 'scalars' must be a tuple of Scalars or a "
                        f"1-D Tensor, not {type(scalars).__name__}")
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return list(scalars)


def _scalars_or_value(value, scalars):
    # torch's overloads take the scalars positionally where ``value`` sits
    if isinstance(value, (list, tuple, Tensor)) and scalars is None:
        return 1, value
    return value, scalars


def _make_addc(name):
    def op(self, tensor1, tensor2, value=1, *, scalars=None):
        value, scalars = _scalars_or_value(value, scalars)
        vals = _addc_values(f"_foreach_{name}", self, tensor1, tensor2, value, scalars)
        return tuple(getattr(t, name)(a, b, value=v)
                     for t, a, b, v in zip(self, tensor1, tensor2, vals))

    def op_(self, tensor1, tensor2, value=1, *, scalars=None):
        value, scalars = _scalars_or_value(value, scalars)
        vals = _addc_values(f"_foreach_{name}_", self, tensor1, tensor2, value, scalars)
        for t, a, b, v in zip(self, tensor1, tensor2, vals):
            getattr(t, name + "_")(a, b, value=v)
        return self

    op.__name__ = op.__qualname__ = f"_foreach_{name}"
    op_.__name__ = op_.__qualname__ = f"_foreach_{name}_"
    sym = "*" if name == "addcmul" else "/"
    op.__doc__ = (f"``self[i] + value * tensor1[i] {sym} tensor2[i]``; ``value`` is a number, a "
                  f"list of numbers or a 1-D tensor with one per tensor.")
    op_.__doc__ = f"In-place :func:`_foreach_{name}`."
    return op, op_


_foreach_addcmul, _foreach_addcmul_ = _make_addc("addcmul")
_foreach_addcdiv, _foreach_addcdiv_ = _make_addc("addcdiv")

_LERP_ACCEPTED = ("(tuple of Tensors self, tuple of Tensors tensors1, Number weight)",
                  "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight)",
                  "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights)")


def _lerp_weights(fn_name, self, tensors1, weight):
    _self_list(fn_name, self)
    _tensor_list(fn_name, tensors1, 1, "tensors1")
    _same_length(self, tensors1)
    _, values = _per_tensor(fn_name, self, weight, tensor_ok=False,
                            accepted=_LERP_ACCEPTED)
    return values


def _foreach_lerp(self, tensors1, weight=None, *, weights=None):
    """``self[i] + weight[i] * (tensors1[i] - self[i])``; ``weight`` is a number, a list of
    numbers or a list of tensors."""
    weight = _second_arg("_foreach_lerp", (("weight", weight), ("weights", weights)))
    ws = _lerp_weights("_foreach_lerp", self, tensors1, weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, tensors1, ws))


def _foreach_lerp_(self, tensors1, weight=None, *, weights=None):
    """In-place :func:`_foreach_lerp`."""
    weight = _second_arg("_foreach_lerp_", (("weight", weight), ("weights", weights)))
    ws = _lerp_weights("_foreach_lerp_", self, tensors1, weight)
    for t, e, w in zip(self, tensors1, ws):
        t.lerp_(e, w)
    return self


# ------------------------------------------------------------------- reductions and others

def _foreach_norm(self, ord=2, dtype=None):
    """``linalg.vector_norm(self[i], ord, dtype=dtype)`` of each whole tensor (0-dim results)."""
    _self_list("_foreach_norm", self)
    ord = _as_scalar(ord)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """``sum(|self[i]| ** ord)`` of each whole tensor (the p-th power of its p-norm, with
    ``|x| ** ord`` taken literally for every ``ord``, inf and 0 included)."""
    _self_list("_foreach_powsum", self)
    ord = _as_scalar(ord)
    out = []
    for t in self:
        x = t if dtype is None else t.to(dtype)
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise not_implemented_for("powsum", x.dtype)
        out.append(x.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self):
    """The maximum of each whole tensor (0-dim results; empty tensors are an error)."""
    _self_list("_foreach_max", self)
    for t in self:
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max "
                               "over zero elements is undefined.")
    return tuple(t.max() for t in self)


def _foreach_mm(self, mat2):
    """``self[i] @ mat2[i]`` for 2-D tensors."""
    _self_list("_foreach_mm", self)
    _tensor_list("_foreach_mm", mat2, 1, "mat2")
    _same_length(self, mat2)
    return tuple(a.mm(b) for a, b in zip(self, mat2))


def _foreach_clone(self, *, memory_format=preserve_format):
    """A copy of each tensor (``Tensor.clone``, keeping strides by default)."""
    _self_list("_foreach_clone", self)
    return tuple(t.clone(memory_format=memory_format) for t in self)


def _foreach_copy_(self, src, non_blocking=False):
    """``self[i].copy_(src[i])`` for each pair (broadcasting and casting as copy_ does)."""
    _self_list("_foreach_copy_", self)
    _tensor_list("_foreach_copy_", src, 1, "src")
    _same_length(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


def _foreach_zero_(self):
    """Fill each tensor with zeros, in place."""
    for t in _self_list("_foreach_zero_", self):
        t.zero_()
    return self
