"""The nested tensor: a batch of tensors of the same number of dimensions whose sizes differ.

A ``NestedTensor`` keeps its components as views of one contiguous buffer (``_nt_values``):
for the ``torch.jagged`` layout the components concatenated along their first dimension
(torch's ``values()``, with ``offsets()`` marking where each starts), for ``torch.strided``
their elements flattened one after another. Its ``_data`` is a one-element placeholder that
refuses NumPy math, so no dense operator computes on it by accident.

Operators reach it through ``__torch_function__`` (the one dispatch point): elementwise
functions, matrix products and the functions of one component (``F.linear``, ``layer_norm``,
attention) run component by component; functions taking dimensions see them shifted past the
batch dimension; anything else raises torch's "Could not run ... 'NestedTensorCPU' backend".
Gradients do not flow through nested tensors in glasstorch: an operator meeting one that
requires grad raises.
"""

from __future__ import annotations

import itertools

from ... import overrides as _overrides
from ..._core.backend import xp
from ..._tensor import Size, Tensor, _wrap, _wrap_dim, layout, strided

__all__ = ["NestedTensor", "jagged"]

jagged = layout("jagged")


class _NestedShell(xp.ndarray):
    """The placeholder array of a nested tensor: a dtype and one element, refusing all math."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(f"glasstorch: '{ufunc.__name__}' is not supported on nested "
                                  "tensors")

    def __array_function__(self, func, types, args, kwargs):
        raise NotImplementedError(f"glasstorch: '{func.__name__}' is not supported on nested "
                                  "tensors")


_ids = itertools.count(1)


class NestedInt:
    """The size of a jagged tensor's ragged dimension, ``j1``, ``j2``...: one symbol per set of
    offsets, equal only to itself (times an integer, in strides)."""

    __slots__ = ("id", "coeff")

    def __init__(self, id, coeff=1):
        self.id, self.coeff = id, coeff

    def __repr__(self):
        return f"j{self.id}" if self.coeff == 1 else f"{self.coeff}*j{self.id}"

    def __eq__(self, other):
        return isinstance(other, NestedInt) and (self.id, self.coeff) == (other.id, other.coeff)

    def __hash__(self):
        return hash((NestedInt, self.id, self.coeff))

    def __mul__(self, other):
        if isinstance(other, int):
            return NestedInt(self.id, self.coeff * other)
        return NotImplemented

    __rmul__ = __mul__


def _no_kernel(name, backend="NestedTensorCPU"):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


def _no_sizes():
    return RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an "
                        "issue.")


class NestedTensor(Tensor):
    """A nested tensor (``torch.nested.nested_tensor``); ``layout`` is ``torch.strided`` or
    ``torch.jagged``."""

    # set by _make: _nt_parts (component views), _nt_values (their buffer), _nt_layout,
    # _nt_offsets (int64 Tensor, jagged), _nt_lengths (None unless given), _nt_ragged (NestedInt)

    @property
    def is_nested(self) -> bool:
        """True."""
        return True

    @property
    def layout(self):
        """``torch.strided`` or ``torch.jagged``."""
        return self._nt_layout

    def dim(self) -> int:
        """One more than the components' number of dimensions."""
        return self._nt_dim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """One more than the components' number of dimensions."""
        return self._nt_dim

    def size(self, dim=None):
        """The batch size and the components' regular sizes (a jagged tensor's ragged size is
        its ``NestedInt``); a strided nested tensor has no overall size, only regular dims."""
        if self._nt_layout is jagged:
            shape = Size((len(self._nt_parts), self._nt_ragged, *self._nt_parts_rest()))
            return shape if dim is None else shape[_wrap_dim(dim, self._nt_dim)]
        if dim is None:
            raise _no_sizes()
        dim = _wrap_dim(dim, self._nt_dim)
        if dim == 0:
            return len(self._nt_parts)
        sizes = {p.shape[dim - 1] for p in self._nt_parts}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    @property
    def shape(self):
        """``size()``."""
        return self.size()

    def _nt_parts_rest(self):
        return self._nt_values.shape[1:]

    def __len__(self):
        if self._nt_layout is jagged:
            return len(self._nt_parts)
        raise _no_sizes()

    def stride(self, dim=None):
        """A jagged tensor's strides over its values (in terms of the ragged size)."""
        if self._nt_layout is not jagged:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. "
                               "Please file an issue.")
        inner = self._nt_values.stride()
        strides = (self._nt_ragged * inner[0], *inner)
        return strides if dim is None else strides[_wrap_dim(dim, self._nt_dim)]

    def numel(self) -> int:
        """The elements of all components."""
        return sum(p.numel() for p in self._nt_parts)

    nelement = numel

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the components lie one after another in the buffer."""
        return self._nt_lengths is None

    def contiguous(self, memory_format=None):
        """This tensor when contiguous, else one whose components are packed."""
        return self if self.is_contiguous() else _make(
            [p.clone() for p in self._nt_parts], self._nt_layout)

    def values(self):
        """The buffer the components are views of."""
        return self._nt_values

    def offsets(self):
        """Where each component starts in ``values()`` (jagged layout), then its end."""
        return self._nt_offsets

    def lengths(self):
        """The components' ragged sizes when given at construction (else None)."""
        return self._nt_lengths

    def unbind(self, dim=0):
        """The components (views of the buffer)."""
        if _wrap_dim(dim, self._nt_dim) != 0:
            raise RuntimeError("unbind(): nested tensors can only be unbound along dimension 0")
        return tuple(self._nt_parts)

    def __iter__(self):
        return iter(self._nt_parts)

    def __getitem__(self, index):
        if isinstance(index, tuple) and index and isinstance(index[0], int):
            return self._nt_parts[index[0]][index[1:]]
        if isinstance(index, int):
            return self._nt_parts[index]
        raise NotImplementedError(f"glasstorch: nested tensors support only an integer first "
                                  f"index, not {index!r}")

    def to_padded_tensor(self, padding, output_size=None):
        """The components in one dense tensor, each padded with ``padding`` to the largest
        size in each dimension (or to ``output_size``)."""
        parts = self._nt_parts
        shape = tuple(max(sizes) for sizes in zip(*(p.shape for p in parts))) if parts else ()
        shape = (len(parts), *shape)
        if output_size is not None:
            output_size = tuple(output_size)
            if len(output_size) != len(shape) or any(o < s for o, s in zip(output_size, shape)):
                raise RuntimeError("Value in output_size is less than NestedTensor padded "
                                   "size. Truncation is not supported.")
            shape = output_size
        out = xp.full(shape, padding, dtype=self._data.dtype)
        for i, p in enumerate(parts):
            out[(i, *(slice(0, s) for s in p.shape))] = p._data
        return _wrap(out)

    def __repr__(self):
        if self._nt_layout is jagged:
            size = ", ".join(repr(s) for s in self.size())
            return (f"NestedTensor(size=({size}), offsets={self._nt_offsets!r}, "
                    f"contiguous={self.is_contiguous()})")
        inner = ",\n".join("\n".join("  " + ln for ln in repr(p).split("\n"))
                           for p in self._nt_parts)
        return f"nested_tensor([\n{inner}\n])"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        # the components (or values and offsets), not the placeholder: pickle and copy.copy
        if self._nt_layout is jagged:
            return (_from_values, (self._nt_values, self._nt_offsets, self._nt_lengths))
        return (_make, ([p.clone() for p in self._nt_parts], strided))

    def __deepcopy__(self, memo):
        if self._nt_layout is jagged:
            lengths = None if self._nt_lengths is None else self._nt_lengths.clone()
            t = _from_values(self._nt_values.clone(), self._nt_offsets.clone(), lengths)
        else:
            t = _make(self._nt_parts, strided)
        t._requires_grad = self._requires_grad
        return t

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._nt_parts[0])

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.__name__
        if isinstance(getattr(func, "__self__", None), property):  # Tensor.dtype.__get__
            name = func.__self__.fget.__name__
        if name in _METADATA:
            with _overrides.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if name in NestedTensor.__dict__:  # torch.unbind(nt), torch.numel(nt)...
            return getattr(args[0], name)(*args[1:], **kwargs)
        rule = _RULES.get(name.strip("_") if name.startswith("__") else name)
        if rule is None:
            raise _no_kernel(name.strip("_"))
        from ...autograd.grad_mode import is_grad_enabled
        if is_grad_enabled() and any(
                isinstance(a, NestedTensor) and a._requires_grad
                for a in itertools.chain(args, kwargs.values())):
            raise RuntimeError(f"glasstorch: {name} of a nested tensor that requires grad: "
                               "autograd through nested tensors is not supported")
        return rule(func, name, args, kwargs)


# Read from the placeholder as for any tensor.
_METADATA = frozenset({
    "dtype", "device", "requires_grad", "requires_grad_", "is_leaf", "grad", "grad_fn",
    "element_size", "itemsize", "is_cuda", "is_cpu", "is_meta", "is_sparse", "is_quantized",
    "is_mkldnn", "is_xpu", "is_mps", "is_xla", "is_ipu", "is_maia", "is_mtia", "is_vulkan",
    "get_device", "is_floating_point", "is_complex", "is_signed", "is_inference", "names",
    "__hash__", "data_ptr", "retains_grad", "_version", "__format__",
})


def _make(parts, layout_, offsets_like=None):
    """A nested tensor holding copies of Tensors ``parts`` (same number of dims, same dtype)
    packed in one buffer; a jagged result keeps ``offsets_like``'s ragged size when its
    components have the same ragged sizes."""
    np_dtype = parts[0]._data.dtype if parts else xp.dtype("float32")
    if layout_ is jagged:
        values = _wrap(xp.concatenate([xp.asarray(p._data, np_dtype) for p in parts], axis=0))
        lengths = [p.shape[0] for p in parts]
        offsets = xp.concatenate([[0], xp.cumsum(lengths)]).astype(xp.int64)
        t = _from_values(values, _wrap(offsets), None)
        if offsets_like is not None and xp.array_equal(offsets_like._nt_offsets._data, offsets):
            t._nt_ragged = offsets_like._nt_ragged
            t._nt_offsets = offsets_like._nt_offsets
        return t
    flat = [xp.asarray(p._data, np_dtype).reshape(-1) for p in parts]
    buf = xp.concatenate(flat) if flat else xp.zeros(0, np_dtype)
    t = _shell(np_dtype, strided, 1 + (parts[0].ndim if parts else 0))
    t._nt_values = values = _wrap(buf)
    views, start = [], 0
    for p in parts:
        views.append(values[start:start + p.numel()].view(tuple(p.shape)))
        start += p.numel()
    t._nt_parts = views
    return t


def _from_values(values, offsets, lengths):
    """A jagged tensor over ``values`` (not copied): component i is
    ``values[offsets[i]:offsets[i] + lengths[i]]`` (to ``offsets[i + 1]`` without lengths)."""
    t = _shell(values._data.dtype, jagged, values.ndim + 1)
    t._nt_values, t._nt_offsets, t._nt_lengths = values, offsets, lengths
    starts = offsets._data.tolist()
    ends = starts[1:] if lengths is None else [s + n for s, n in zip(starts,
                                                                     lengths._data.tolist())]
    t._nt_parts = [values[s:e] for s, e in zip(starts, ends)]
    t._nt_ragged = NestedInt(next(_ids))
    return t


def _shell(np_dtype, layout_, ndim):
    t = _wrap(xp.broadcast_to(xp.zeros((), np_dtype), (1,)).view(_NestedShell), NestedTensor)
    t._nt_layout, t._nt_dim, t._nt_lengths = layout_, ndim, None
    return t


# ---------------------------------------------------------------- operators


def _nested_args(args, kwargs):
    return [a for a in itertools.chain(args, kwargs.values()) if isinstance(a, NestedTensor)]


def _component(value, i):
    if isinstance(value, NestedTensor):
        return value._nt_parts[i]
    if isinstance(value, (list, tuple)) and any(isinstance(v, NestedTensor) for v in value):
        return type(value)(_component(v, i) for v in value)
    return value


def _each(func, args, kwargs, like):
    """``func`` on the components: a nested result (in place: ``like`` itself)."""
    results = [func(*(_component(a, i) for a in args),
                    **{k: _component(v, i) for k, v in kwargs.items()})
               for i in range(len(like._nt_parts))]
    name = func.__name__
    if name in _IN_PLACE_DUNDERS or name.endswith("_") and not name.endswith("__"):
        return like
    return _make(results, like._nt_layout, like)


def _per_component(func, name, args, kwargs):
    return _each(func, args, kwargs, _nested_args(args, kwargs)[0])


def _pointwise(func, name, args, kwargs):
    nested = _nested_args(args, kwargs)
    like = nested[0]
    for other in nested[1:]:
        if [p.shape for p in other._nt_parts] != [p.shape for p in like._nt_parts]:
            raise RuntimeError(f"{name.strip('_')} does not support broadcasting when given a "
                               "NestedTensor")
    for a in itertools.chain(args, kwargs.values()):
        if isinstance(a, Tensor) and not isinstance(a, NestedTensor) and a.ndim:
            if like._nt_layout is strided:
                raise RuntimeError("Expected both self and other to be nested, but got a "
                                   "nested self and non-nested other")
            try:
                if a.ndim >= like._nt_dim:
                    raise ValueError
                for p in like._nt_parts:
                    xp.broadcast_shapes(tuple(p.shape), tuple(a.shape))
            except ValueError:
                raise RuntimeError(
                    f"cannot call binary pointwise function {name.strip('_')}.Tensor with "
                    f"inputs of shapes {like.shape} and {a.shape}") from None
    return _each(func, args, kwargs, like)


def _shifted(positions):
    """A rule for functions whose dimension arguments (at ``positions``: index, keyword)
    count the batch dimension: they reach each component one lower."""
    def rule(func, name, args, kwargs):
        like = _nested_args(args, kwargs)[0]
        args, kwargs = _lowered(args, kwargs, positions, like, name)
        if like._nt_layout is jagged and name.rstrip("_") in _MOVES_RAGGED and 0 in [
                kwargs.get(key, args[i] if i < len(args) else None) for i, key in positions]:
            raise NotImplementedError(f"glasstorch: {name} of a jagged nested tensor's ragged "
                                      "dimension is not supported")
        return _each(func, args, kwargs, like)
    return rule


# functions that would move the ragged dimension (the components' first) elsewhere
_MOVES_RAGGED = frozenset({"transpose", "swapaxes", "squeeze", "unsqueeze"})


def _lowered(args, kwargs, positions, like, name):
    args, kwargs = list(args), dict(kwargs)
    for index, key in positions:
        if key in kwargs:
            kwargs[key] = _lower(kwargs[key], like, name)
        elif index < len(args):
            args[index] = _lower(args[index], like, name)
    return args, kwargs


def _reduction(func, name, args, kwargs):
    """``sum``/``mean``/...: over the values when no dim is given (jagged), per component
    otherwise; a reduction over a jagged tensor's ragged dimension gives a dense result."""
    like = _nested_args(args, kwargs)[0]
    dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    if dim is None:
        if like._nt_layout is not jagged:
            raise _no_kernel(name)
        return func(like._nt_values, *args[1:], **kwargs)
    keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
    if like._nt_layout is strided and not keepdim:
        raise RuntimeError("NestedTensor always requires keepdim=True for now.")
    args, kwargs = _lowered(args, kwargs, ((1, "dim"),), like, name)
    dims = kwargs.get("dim", args[1])
    if like._nt_layout is jagged and 0 in (dims if isinstance(dims, (list, tuple)) else (dims,)):
        from ..._ops.rearrange import stack
        return stack([func(p, *args[1:], **kwargs) for p in like._nt_parts])
    return _each(func, args, kwargs, like)


def _lower(dim, like, name):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return type(dim)(_lower(d, like, name) for d in dim)
    d = _wrap_dim(dim, like._nt_dim)
    if d == 0:
        if like._nt_layout is jagged:
            raise RuntimeError(f"{name}(): not supported when reducing across the batch "
                               "dimension for NestedTensor")
        raise RuntimeError(f"Cannot apply {name} across nested dimension 0")
    return d - 1


_POINTWISE = (
    "add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow "
    "maximum minimum atan2 eq ne lt le gt ge logical_and logical_or logical_xor "
    "bitwise_and bitwise_or bitwise_xor and or xor truediv mod floordiv where masked_fill copy"
)
_REFLECTED = "radd rsub rmul rtruediv rpow rfloordiv rmod rand ror rxor"
_IN_PLACE_DUNDERS = frozenset(
    f"__i{n}__" for n in "add sub mul truediv floordiv mod pow and or xor".split())
_UNARY = (
    "abs neg negative relu sin cos tan tanh sigmoid exp expm1 log log1p log2 sqrt rsqrt square "
    "sign sgn floor ceil round trunc frac erf erfinv reciprocal silu gelu mish hardswish "
    "hardsigmoid hardtanh leaky_relu elu selu celu softplus relu6 logical_not bitwise_not "
    "isnan isinf isfinite nan_to_num clamp clip clamp_min clamp_max clone detach to float "
    "double half bfloat16 int long short bool byte char type_as zero fill dropout "
    "invert matmul mm bmm linear layer_norm rms_norm scaled_dot_product_attention "
    "zeros_like ones_like empty_like full_like rand_like randn_like"
)
_RULES = {
    **{n: _pointwise for n in _POINTWISE.split()},
    **{n: _per_component for n in _UNARY.split()},
    **{n: _shifted(((1, "dim"),)) for n in
       ("softmax", "log_softmax", "cumsum", "squeeze", "unsqueeze")},
    **{n: _reduction for n in ("sum", "mean", "amax", "amin", "prod")},
    **{n: _shifted(((1, "dim0"), (2, "dim1"))) for n in ("transpose", "swapaxes")},
}
# in-place forms run on the components, which are views of the buffer
_RULES.update({n + "_": r for n, r in list(_RULES.items()) if n not in ("to", "type_as")})
_RULES.update({n: _pointwise for n in _REFLECTED.split()})
_RULES.update({name.strip("_"): _pointwise for name in _IN_PLACE_DUNDERS})
