"""Shared machinery for operator definitions: operand promotion, result wrapping,
in-place and ``out=`` writes, dim handling, method registration.

Every operator is one plain function taking ``input`` first. ``register``
attaches it to Tensor as a method (and under extra names), ``register_inplace``
derives the ``op_`` variant from it, so no operator is written twice.
"""

from __future__ import annotations

import operator
import sys

from .._core import dtype as _dt
from .._core.backend import xp
from .._core.warn import warn_user
from .._tensor import Tensor, _view_of, _wrap, _wrap_dim
from ..autograd.graph import Node, SavedTensor, needs_grad, record

__all__ = [
    "Tensor", "xp", "wrap", "view_of", "wrap_dim", "register", "register_inplace",
    "binary_operands", "to_array", "assign_inplace", "finish", "dims_arg", "broadcast_error",
    "float_result_dtype", "not_implemented_for", "compute_array", "compute_dtype",
    "result_array", "size_arg", "sizes_or_keyword", "Node", "needs_grad", "record",
    "rebase_history",
]

wrap = _wrap
view_of = _view_of
wrap_dim = _wrap_dim
_promote = _dt._promote_table
# (min, max, bit mask) of the integer dtypes narrower than int64
_INT_BOUNDS = {xp.dtype(t): (int(xp.iinfo(t).min), int(xp.iinfo(t).max),
                             (1 << (8 * xp.dtype(t).itemsize)) - 1)
               for t in (xp.uint8, xp.int8, xp.int16, xp.int32)}
_by_np = _dt._by_np
_default = _dt._default


def register(*names, method=True):
    """Attach ``fn`` to Tensor under its own name (and ``names``). At the end of ``import
    glasstorch`` every Tensor method becomes a dispatch point (glasstorch.overrides); a method
    registered later becomes one here."""
    def deco(fn):
        if method:
            for n in (fn.__name__,) + names:
                _attach(n, fn)
        return fn
    return deco


def _attach(name, fn):
    from .. import overrides
    overrides._attach_to_tensor(name, fn)


def register_inplace(fn, name=None):
    """Derive ``Tensor.<name>_``: compute ``fn`` out of place, then write into self."""
    name = name or fn.__name__ + "_"

    def inplace(input, *args, **kwargs):  # ``input``: torch's name in torch.relu_(input)
        return assign_inplace(input, fn(input, *args, **kwargs))

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    _attach(name, inplace)
    return inplace


def assign_inplace(self, result):
    """Write ``result`` into ``self`` with torch's cast and shape rules; bump the version."""
    rd, sd = result.dtype, self.dtype
    if rd is not sd and rd._category > sd._category:
        raise RuntimeError(f"result type {_SHORT[rd]} can't be cast to the desired output "
                           f"type {_SHORT[sd]}")
    if result._data.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(result._data.shape)}")
    node = result.grad_fn
    if node is not None:
        _check_inplace_allowed(self)
        _snapshot_saved_self(node, self)
    xp.copyto(self._data, result._data, casting="unsafe")
    self._bump_version()
    if node is not None:
        rebase_history(self, node)
    return self


def _check_inplace_allowed(self):
    if self.grad_fn is None and self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _snapshot_saved_self(node, self):
    # The node computed self's new value from its old one; keep the old value it saved,
    # as a recorded clone so that double backward still sees its history.
    saved = node._saved
    if saved:
        for k, v in saved.items():
            if isinstance(v, SavedTensor) and v._tensor is self:
                from .copying import clone
                saved[k] = SavedTensor(clone(self))


def rebase_history(self, node):
    """Make ``node`` (computed from ``self``'s old value) the history of ``self``."""
    if self._base is None:
        self.grad_fn = node
        self._requires_grad = True
        self.__dict__.pop("_output_nr", None)
    else:
        from .views import rebase_view_history
        rebase_view_history(self, node)


def finish(result, out):
    """Return ``result``, or copy it into ``out`` (resizing like torch) and return ``out``."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad:  # the op recorded a graph: out= would cut it off silently
        op = sys._getframe(1).f_code.co_name
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    rd, od = result.dtype, out.dtype
    if rd is not od and rd._category > od._category:
        raise RuntimeError(f"result type {_SHORT[rd]} can't be cast to the desired output "
                           f"type {_SHORT[od]}")
    if out._data.shape != result._data.shape:
        if out._data.size:
            warn_user(f"An output with one or more elements was resized since it had shape "
                      f"{list(out._data.shape)}, which does not match the required output shape "
                      f"{list(result._data.shape)}. This behavior is deprecated.")
        out._data = result._data.astype(od.np)
    else:
        xp.copyto(out._data, result._data, casting="unsafe")
    out._bump_version()
    return out


_SHORT = {
    _dt.bool_: "Bool", _dt.uint8: "Byte", _dt.int8: "Char", _dt.int16: "Short",
    _dt.int32: "Int", _dt.int64: "Long", _dt.float16: "Half", _dt.bfloat16: "BFloat16",
    _dt.float32: "Float", _dt.float64: "Double", _dt.complex64: "ComplexFloat",
    _dt.complex128: "ComplexDouble",
}


def to_array(x, dtype=None):
    """A backend array for a Tensor or a Python/NumPy scalar, optionally cast."""
    if isinstance(x, Tensor):
        a = x._data
        return a if dtype is None or a.dtype == dtype.np else a.astype(dtype.np)
    if dtype is None:
        dtype = _dt.scalar_dtype(x)
    return xp.asarray(x, dtype=dtype.np)


def binary_operands(a, b):
    """Arrays (or weak Python scalars) for a binary op, and the torch result dtype.

    The common cases - two tensors of one dtype, a tensor and a Python scalar of
    no higher category - return without building anything.
    """
    if type(a) is Tensor or isinstance(a, Tensor):
        x = a._data
        dx = x.dtype
        if type(b) is Tensor or isinstance(b, Tensor):
            y = b._data
            dy = y.dtype
            if dy is dx or dy == dx:  # NumPy has one dtype object per builtin dtype
                return x, y, _by_np[dx]
            dt = _dt.result_dtype(a, b)
            return _cast(x, dt), _cast(y, dt), dt
        da = _by_np[dx]
        tb = type(b)
        if (tb is float and da._category >= 2) or (tb is int and da._category >= 1):
            # NumPy keeps the array's dtype for a Python scalar (NEP 50), except for
            # ml_dtypes' bfloat16, which needs the scalar as a bfloat16 array.
            if da is _dt.bfloat16:
                return x, xp.asarray(b, x.dtype), da
            bounds = _INT_BOUNDS.get(x.dtype) if da._category == 1 and tb is int else None
            if bounds is not None and not bounds[0] <= b <= bounds[1]:
                # torch wraps an out-of-range integer into the tensor's dtype; NumPy refuses
                b = xp.asarray(b & bounds[2]).astype(x.dtype)
            return x, b, da
        dt = _dt.result_dtype(a, b)
        return _cast(x, dt), _scalar_for(b, dt), dt
    if isinstance(b, Tensor):
        dt = _dt.result_dtype(a, b)
        return _scalar_for(a, dt), _cast(b._data, dt), dt
    raise TypeError(f"expected at least one Tensor operand, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def _cast(arr, dt):
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def _scalar_for(value, dt):
    # A 0-d array in the result dtype; numpy treats it like the tensor operand.
    if isinstance(value, Tensor):
        return _cast(value._data, dt)
    return xp.asarray(value, dtype=dt.np)


def broadcast_error(a, b):
    """torch's message for shapes that do not broadcast."""
    sa = a.shape if isinstance(a, (Tensor, xp.ndarray)) else ()
    sb = b.shape if isinstance(b, (Tensor, xp.ndarray)) else ()
    for i in range(1, max(len(sa), len(sb)) + 1):
        x = sa[-i] if i <= len(sa) else 1
        y = sb[-i] if i <= len(sb) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                f"({y}) at non-singleton dimension {dim}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast together")


def not_implemented_for(op_name, dt):
    """torch's error for a dtype a kernel does not support."""
    return NotImplementedError(f'"{op_name}_cpu" not implemented for \'{_SHORT[dt]}\'')


def float_result_dtype(dt):
    """Integers and bool become the default float dtype (for div, sqrt, mean...)."""
    return dt if dt._category >= 2 else _default[0]


# float16/bfloat16 math runs in float32 and rounds once, as torch's CPU kernels do.
_COMPUTE = _dt._ByNp({_dt.float16: xp.dtype(xp.float32), _dt.bfloat16: xp.dtype(xp.float32)})


def compute_dtype(dt):
    """The NumPy dtype a result of dtype ``dt`` is computed in."""
    return _COMPUTE.get(dt.np, dt.np)


def compute_array(arr):
    """Upcast a low-precision float array for computing; others pass through."""
    c = _COMPUTE.get(arr.dtype)
    return arr if c is None else arr.astype(c)


def result_array(arr, dt):
    """Round a computed array to the result dtype (no-op when it already is)."""
    return arr if arr.dtype == dt.np else arr.astype(dt.np)


def dims_arg(dim, ndim):
    """Normalise ``dim`` (None, int, or sequence) to a sorted tuple of axes, or None for all."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(sorted(wrap_dim(d, ndim) for d in dim))
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        return axes
    return (wrap_dim(dim, ndim),)


def size_arg(size):
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.__index__()
        elif not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected a sequence of integers, got an element of type "
                            f"{type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def int_arg(fname, pname, pos, v):
    """``v`` as a Python int the way torch's argument parser takes an ``int`` parameter:
    anything with ``__index__`` (a 0-dim integer tensor too), but not bools or floats."""
    if not isinstance(v, bool) and getattr(v, "ndim", 0) == 0:
        try:
            return operator.index(v)
        except TypeError:
            pass
    raise TypeError(f"{fname}(): argument '{pname}' (position {pos}) must be int, not "
                    f"{type(v).__name__}")


def sizes_or_keyword(args, value, fn, keyword="size"):
    """The shape of ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))`` (torch's keyword for a
    sizes vararg; ``shape`` for reshape, ``dims`` for permute)."""
    if value is None:
        return size_arg(args)
    if args:
        raise TypeError(f"{fn}() got multiple values for argument '{keyword}'")
    return size_arg((value,))
