"""The meta device's data: a placeholder array with a shape and a dtype and no elements.

A meta tensor is an ordinary ``Tensor`` whose ``_data`` is a ``MetaArray``: a zero-strided
view over one element, so it costs the same few bytes whatever its shape. Operators run
unchanged on it: NumPy hands every ufunc and array function applied to a ``MetaArray`` to the
hooks below, which work out the result's shape and dtype from one-element probes and answer
with new placeholders, so shape inference allocates nothing proportional to the tensors.
Writes into a placeholder (in-place ops, initialisers) do nothing, as on torch's meta device.

The layout torch would give (element strides and storage offset) rides along as two
attributes. View methods and view functions find it by running on a *layout probe*: an
array with those strides over one element, which only view operations (that never read
elements) ever touch.
"""

from __future__ import annotations

from .backend import xp

_ndarray = xp.ndarray


class MetaArray(_ndarray):
    """Placeholder of a meta tensor: shape and dtype over a single (never read) element, and
    torch's strides/offset (``layout``; None: contiguous, offset 0)."""

    layout = None

    def element_strides(self):
        return _contiguous(self.shape) if self.layout is None else self.layout[0]

    def _probe_layout(self):
        """(probe, origin): an array with this placeholder's strides that only view
        operations may touch, and the address its storage would start at."""
        strides, offset = self.layout or (_contiguous(self.shape), 0)
        item = self.itemsize
        one = xp.zeros((1,), self.dtype)
        probe = xp.lib.stride_tricks.as_strided(one, self.shape, [s * item for s in strides],
                                                writeable=False)
        return probe, _address(probe) - offset * item

    def _view(self, method, *args, **kwargs):
        probe, origin = self._probe_layout()
        return _from_probe(getattr(_ndarray, method)(probe, *args, **kwargs), origin)

    def __getitem__(self, key):
        plain = self.view(_ndarray)
        r = _ndarray.__getitem__(plain, key)
        if isinstance(r, _ndarray) and xp.may_share_memory(r, plain):  # basic indexing
            return self._view("__getitem__", key)
        return _as_meta(r)

    def transpose(self, *axes):
        return self._view("transpose", *axes)

    def swapaxes(self, a, b):
        return self._view("swapaxes", a, b)

    def squeeze(self, axis=None):
        return self._view("squeeze", axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return self._view("diagonal", offset, axis1, axis2)

    @property
    def T(self):
        return self._view("transpose")

    def reshape(self, *shape, order="C", copy=None):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        probe, origin = self._probe_layout()
        try:
            return _from_probe(xp.reshape(probe, shape, order=order, copy=False), origin)
        except ValueError:  # not expressible as a view: a copy, laid out contiguously
            return meta_array(xp.reshape(self.view(_ndarray), shape, order=order).shape,
                              self.dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            _check_writable_into(out)
            return out[0] if len(out) == 1 else out
        if method == "at":  # in-place on its first operand
            _check_writable_into((inputs[0],))
            return None
        arrays = [x for x in inputs if isinstance(x, _ndarray)]
        if ufunc is xp.matmul and method == "__call__":
            shape = _matmul_shape(*(xp.shape(x) for x in inputs))
        elif ufunc.signature is not None:  # other generalised ufuncs: rare, run them
            return _on_placeholders(getattr(ufunc, method), inputs, kwargs)
        elif method == "__call__":
            shape = xp.broadcast_shapes(*(x.shape for x in arrays))
        elif method == "outer":
            shape = inputs[0].shape + inputs[1].shape
        elif method == "accumulate":
            shape = inputs[0].shape
        elif method == "reduce":
            shape = _reduced_shape(inputs[0].shape, kwargs.get("axis", 0),
                                   kwargs.get("keepdims", False))
            kwargs = {k: v for k, v in kwargs.items() if k in ("dtype",)}
            inputs = (inputs[0].view(_ndarray)[(slice(0, 1),) * inputs[0].ndim],)
        else:  # reduceat: data-dependent sizes
            return _on_placeholders(getattr(ufunc, method), inputs, kwargs)
        with xp.errstate(all="ignore"):
            probe = getattr(ufunc, method)(*(_probe(x) for x in inputs), **_probed(kwargs))
        if isinstance(probe, tuple):
            return tuple(meta_array(shape, p.dtype) for p in probe)
        return meta_array(shape, xp.asarray(probe).dtype)

    def __array_function__(self, func, types, args, kwargs):
        if func is xp.copyto:
            _check_writable_into((args[0],))
            return None
        if func in _VIEW_FUNCTIONS and type(args[0]) is MetaArray:
            probe, origin = args[0]._probe_layout()
            return _from_probe(func(probe, *args[1:], **kwargs), origin)
        return _on_placeholders(func, args, kwargs)

    def __setitem__(self, key, value):
        pass  # a meta tensor has no elements to write

    def copy(self, order="K"):
        return meta_array(self.shape, self.dtype)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return meta_array(self.shape, dtype)

    def tolist(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def item(self, *args):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def fill(self, value):
        pass


# Called once, when the first placeholder is made: glasstorch.overrides turns on its check
# that gives ops with meta arguments meta results (see there).
on_first_use = []


def meta_array(shape, dtype, strides=None, offset=0) -> MetaArray:
    """A placeholder of ``shape`` and ``dtype`` (a NumPy dtype), laid out with element
    ``strides`` (default contiguous) from ``offset``."""
    while on_first_use:
        on_first_use.pop()()
    one = xp.zeros((1,), dtype)  # zeros: valid as an index where code reads it
    a = xp.lib.stride_tricks.as_strided(one, tuple(shape), (0,) * len(shape),
                                        writeable=False).view(MetaArray)
    if strides is not None or offset:
        strides = _contiguous(a.shape) if strides is None else tuple(strides)
        if strides != _contiguous(a.shape) or offset:
            a.layout = (strides, offset)
    return a


def _contiguous(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _address(a):
    return a.__array_interface__["data"][0]


def _from_probe(r, origin):
    """The placeholder for a view ``r`` taken of a layout probe whose storage starts at
    ``origin``."""
    if isinstance(r, (list, tuple)):
        return type(r)(_from_probe(v, origin) for v in r)
    item = r.itemsize
    return meta_array(r.shape, r.dtype, [s // item for s in r.strides],
                      (_address(r) - origin) // item)


# NumPy functions that return views: run on a layout probe they give torch's strides
_VIEW_FUNCTIONS = frozenset({
    xp.broadcast_to, xp.moveaxis, xp.squeeze, xp.expand_dims, xp.transpose, xp.swapaxes,
    xp.diagonal, xp.lib.stride_tricks.as_strided, xp.split, xp.array_split,
})


def is_meta(arr) -> bool:
    return type(arr) is MetaArray


def any_meta(*tensors) -> bool:
    """Whether any of ``tensors`` (None allowed) is a meta tensor."""
    return any(t is not None and type(t._data) is MetaArray for t in tensors)


def _check_writable_into(outs):
    for o in outs:
        if o is not None and type(o) is not MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")


def _reduced_shape(shape, axis, keepdims):
    if axis is None:
        axes = range(len(shape))
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))]
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _matmul_shape(a, b):
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a1, b1 = len(a) == 1, len(b) == 1
    a, b = ((1,) + a if a1 else a), (b + (1,) if b1 else b)
    if a[-1] != b[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b[-2]} is different from {a[-1]})")
    shape = xp.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    return shape[:-2] + shape[-2:][a1:len(shape[-2:]) - b1]


def _probe(x):
    """One element standing for ``x``'s dtype (ones: no division by zero, no log of zero)."""
    if isinstance(x, MetaArray):
        return xp.ones(x.shape if x.size <= 1 else (1,) * x.ndim, x.dtype)
    if isinstance(x, _ndarray) and x.size > 1:
        return x.reshape(-1)[:1].reshape((1,) * x.ndim)
    return x


def _probed(kwargs):
    return {k: _probe(v) for k, v in kwargs.items()}


def _plain(x):
    """A placeholder seen as a plain zero-strided ndarray (reading it reads one element)."""
    if type(x) is MetaArray:
        return x.view(_ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def _as_meta(result):
    if isinstance(result, _ndarray):
        return meta_array(result.shape, result.dtype)
    if isinstance(result, (list, tuple)):
        return type(result)(_as_meta(r) for r in result)
    return result


def _on_placeholders(func, args, kwargs):
    """Any other array function: run it on the zero-strided views and keep only the result's
    shape and dtype (the result is freed at once; functions that reduce or select from their
    input, like the ops here, allocate no more than their output)."""
    with xp.errstate(all="ignore"):
        result = func(*(_plain(a) for a in args), **{k: _plain(v) for k, v in kwargs.items()})
    return _as_meta(result)


# Ops for which torch requires every tensor operand on one device (TensorIterator's check and
# its equivalents), CPU scalars (0-dim CPU tensors) excepted: mixing a meta tensor with a
# CPU tensor there is an error. Elsewhere (mm, bmm, einsum, indexing with CPU indices,
# embedding, conv...) torch's meta kernels accept the mix, so glasstorch does too.
_SAME_DEVICE = frozenset((
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "dot", "vdot",
    "mv", "outer", "ger", "kron", "tensordot", "dist", "addmm", "addmv", "addr",
    "masked_fill", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "layer_norm",
    "batch_norm", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "prelu", "logaddexp", "logaddexp2"))
_MIXED_OK = frozenset(("floor_divide",))   # torch's meta kernel gives a meta result


def check_same_device(name, module, args, kwargs):
    """Raise torch's device-mismatch error when op ``name`` (defined in ``module``) mixes a
    meta tensor with a CPU tensor that is not a 0-dim scalar."""
    base = name.rsplit(".", 1)[-1]
    if not (base in _SAME_DEVICE or module.endswith("_ops.pointwise")) or base in _MIXED_OK:
        return
    tensors = []
    for a in (*args, *kwargs.values()):
        for t in (a if type(a) in (list, tuple) else (a,)):
            if hasattr(t, "_data") and hasattr(t, "_requires_grad"):
                tensors.append(t)
    if base.endswith("_") and tensors and type(tensors[0]._data) is MetaArray:
        return                         # an in-place write into a meta tensor takes anything
    expected = None
    for t in tensors:
        meta = type(t._data) is MetaArray
        if not meta and t._data.ndim == 0:
            continue                   # CPU scalars go anywhere
        if expected is None:
            expected = meta
        elif meta is not expected:
            got, want = ("meta", "cpu") if meta else ("cpu", "meta")
            raise RuntimeError(f"Tensor on device {got} is not on the expected device {want}!")
