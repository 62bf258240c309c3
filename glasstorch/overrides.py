"""glasstorch.overrides: torch.overrides, the ``__torch_function__`` protocol.

Every public function (``torch.add``, ``torch.nn.functional.relu``, ``torch.linalg.norm``),
every Tensor method, operator and property is one *dispatch point*: a thin wrapper made by
``_install_dispatch`` around the operator's definition. With nothing active it costs one
module-global check (``_active``) and calls the definition. ``_active`` turns on while a
``TorchFunctionMode`` is pushed, and for good once an object whose type overrides
``__torch_function__`` has been met (the first instance of such a Tensor subclass glasstorch
builds, or such an argument making an op fail). Then each call walks its arguments as
torch does and hands the call to the mode on top of the stack, then to the overriding
arguments' ``__torch_function__``, subclasses before their parents.

Tools that watch ops (profiler, exporters, capture) can sit here as modes.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings

from ._core import meta as _meta
from ._tensor import Tensor

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
    "handle_torch_function", "has_torch_function", "has_torch_function_unary",
    "has_torch_function_variadic", "resolve_name", "is_tensor_like",
    "is_tensor_method_or_property", "wrap_torch_function", "TorchFunctionMode",
    "BaseTorchFunctionMode", "get_default_nowrap_functions",
]

# torch's TorchFunctionDisabledState
_ENABLED, _SUBCLASSES_DISABLED, _ALL_DISABLED = 0, 1, 2


class _ThreadState(threading.local):
    """The torch-function state of one thread: its mode stack and what is disabled."""

    def __init__(self):
        self.modes = []  # TorchFunctionMode objects, innermost last
        self.disabled = _ENABLED


_tls = _ThreadState()

# Read by every dispatch point: whether anything could take a call. Modes are thread-local,
# so this is only a hint; the slow path reads the thread's own state.
_active = False
_modes_pushed = 0      # modes on the stacks of all threads
_overriders_met = False  # an object whose type overrides __torch_function__ has been seen
_meta_met = False  # a meta tensor has been made: ops check for meta arguments
_vmaps_open = 0  # vmap levels running: their BatchedTensors take calls only meanwhile
_lock = threading.Lock()
_NO_DISPATCH = object()


def _refresh():
    global _active
    _active = _modes_pushed > 0 or _overriders_met or _meta_met or _vmaps_open > 0


def _vmap_opened(delta):
    """A vmap level opened (+1) or closed (-1): dispatch is on while any is open."""
    global _vmaps_open
    with _lock:
        _vmaps_open += delta
        _refresh()


def _note_meta():
    global _meta_met
    _meta_met = True
    _refresh()


_meta.on_first_use.append(_note_meta)


# ---------------------------------------------------------------- disabling

class _DisabledTorchFunctionImpl:
    """``torch._C._disabled_torch_function_impl``: as a class's ``__torch_function__`` it takes
    the class out of dispatch (``nn.Parameter``); called, it runs ``func`` with subclass
    dispatch disabled (modes still see the calls made inside)."""

    __slots__ = ()

    def __call__(self, func, types, args=(), kwargs=None):
        tls = _tls
        old = tls.disabled
        if old == _ENABLED:
            tls.disabled = _SUBCLASSES_DISABLED
        try:
            return func(*args, **(kwargs or {}))
        finally:
            tls.disabled = old

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"

    def __reduce__(self):
        return "_disabled_torch_function_impl"


# An instance, not a function: it must not bind as a method when stored on a class.
_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


class _DisableState:
    """Base of the two disabling context managers: set a state, restore the previous one."""

    _state = _ENABLED

    def __init__(self):
        self._saved = []

    def __enter__(self):
        tls = _tls
        self._saved.append(tls.disabled)
        if tls.disabled < self._state:
            tls.disabled = self._state
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _tls.disabled = self._saved.pop()
        return False


class DisableTorchFunctionSubclass(_DisableState):
    """Context manager: inside it no Tensor subclass or tensor-like ``__torch_function__`` is
    called (``torch._C.DisableTorchFunctionSubclass``); modes still are."""

    _state = _SUBCLASSES_DISABLED


class DisableTorchFunction(_DisableState):
    """Context manager: inside it neither modes nor ``__torch_function__`` overrides are called
    (``torch._C.DisableTorchFunction``)."""

    _state = _ALL_DISABLED


def _is_torch_function_enabled():
    """Whether subclass ``__torch_function__`` overrides are called (torch._C)."""
    return _tls.disabled == _ENABLED


def _is_torch_function_mode_enabled():
    """Whether a TorchFunctionMode would see the next call (torch._C)."""
    tls = _tls
    return tls.disabled != _ALL_DISABLED and bool(tls.modes)


def _is_torch_function_all_disabled():
    """Whether DisableTorchFunction is in effect (torch._C)."""
    return _tls.disabled == _ALL_DISABLED


@contextlib.contextmanager
def _enable_torch_function():
    """Re-enable dispatch inside a disabling context."""
    tls = _tls
    old = tls.disabled
    tls.disabled = _ENABLED
    try:
        yield
    finally:
        tls.disabled = old


# ---------------------------------------------------------------- which objects take part

def _overrides(t):
    """Whether type ``t`` takes calls: it has a ``__torch_function__`` other than the disabled
    one and is not what torch calls a plain Tensor."""
    tf = getattr(t, "__torch_function__", None)
    return tf is not None and tf is not _disabled_torch_function_impl and not _is_plain(t)


def _is_plain(t):
    # Exactly torch.Tensor: Tensor itself, and the sparse layouts, which are Tensor subclasses
    # only as an implementation detail (torch has one Tensor type for every layout).
    if t is Tensor:
        return True
    sparse = _sparse_base()
    return sparse is not None and issubclass(t, sparse)


@functools.cache
def _sparse_base():
    try:
        from ._sparse_tensor import _SparseBase
    except ImportError:
        return None
    return _SparseBase


def _note_type(t):
    """Called the first time glasstorch builds an instance of Tensor subclass ``t`` (and for
    tensor-likes met in arguments): from then on every op checks its arguments."""
    global _overriders_met
    if not _overriders_met and _overrides(t):
        _overriders_met = True
        _refresh()


# Argument types that never override (checked before the attribute lookup).
_NEVER = frozenset({int, float, bool, complex, str, bytes, type(None), slice, type(Ellipsis)})


def _append_overloaded(found, types, a, include_plain):
    t = type(a)
    if t in _NEVER or t in types:
        return
    tf = getattr(t, "__torch_function__", None)
    if tf is None or tf is _disabled_torch_function_impl:
        return
    if not include_plain and _is_plain(t):
        return
    # subclasses before their parents; otherwise in argument order (NEP-18's rule)
    for i, other in enumerate(found):
        if issubclass(t, type(other)):
            found.insert(i, a)
            break
    else:
        found.append(a)
    types.add(t)


# Types met in arguments that take no calls (Parameter, tensor-unrelated classes): the quick
# scan skips them without looking up their __torch_function__ again.
_passive = set()


def _passive_only(items):
    """Whether no element of ``items`` (or of a list/tuple among them) could take a call:
    the cheap scan every op makes once dispatch is on."""
    for a in items:
        t = type(a)
        if t is Tensor or t in _NEVER or t in _passive:
            continue
        if t is list or t is tuple:
            if not _passive_only(a):
                return False
        elif _overrides(t):
            return False
        else:
            _passive.add(t)
    return True


def _collect(args, kwargs, include_plain=False):
    """The arguments (and elements of list/tuple arguments) whose type overrides
    ``__torch_function__``, in calling order. ``include_plain`` also takes plain tensors, as
    torch's Python-level ``handle_torch_function`` does."""
    found = []
    types = set()
    for group in (args, kwargs.values()) if kwargs else (args,):
        for a in group:
            t = type(a)
            if t is Tensor and not include_plain:
                continue
            if t is list or t is tuple:
                for e in a:
                    if type(e) is not Tensor or include_plain:
                        _append_overloaded(found, types, e, include_plain)
            else:
                _append_overloaded(found, types, a, include_plain)
    return found


# ---------------------------------------------------------------- dispatching

class _Spec:
    """What a dispatch point knows about itself: the public function handlers receive, the
    name errors show, and which of torch's two dispatch flavours it follows."""

    __slots__ = ("public", "name", "python_level", "plain_types", "binop", "impl")

    def __init__(self, name, python_level=False, binop=False, plain_types=None):
        self.public = None
        self.impl = None  # the definition, run here for calls with meta arguments
        self.name = name
        self.python_level = python_level  # a Python function in torch: handle_torch_function
        # whether handlers' ``types`` include plain tensors (Python functions and property
        # getters in torch do)
        self.plain_types = python_level if plain_types is None else plain_types
        self.binop = binop  # a binary operator: a TypeError becomes NotImplemented


def _dispatch(spec, args, kwargs):
    """Slow path of a dispatch point: the handlers' result, or ``_NO_DISPATCH`` when nothing
    takes the call."""
    if _meta_met:
        if spec.impl is not None and _has_meta(args, kwargs):
            return _on_meta(spec, args, kwargs)
        if not _modes_pushed and not _overriders_met and not _vmaps_open:
            return _NO_DISPATCH
    return _dispatch_handlers(spec, args, kwargs)


def _has_meta(args, kwargs):
    for group in (args, kwargs.values()) if kwargs else (args,):
        for a in group:
            if type(a) is Tensor or isinstance(a, Tensor):
                if type(a._data) is _meta.MetaArray:
                    return True
            elif type(a) is list or type(a) is tuple:
                for e in a:
                    if isinstance(e, Tensor) and type(e._data) is _meta.MetaArray:
                        return True
    return False


def _on_meta(spec, args, kwargs):
    """A call with a meta tensor among its arguments: its new tensor results are meta too.
    Operators compute on the placeholders' single element where NumPy lets a placeholder
    through as a plain array; such a result is replaced by a placeholder of its shape."""
    _meta.check_same_device(spec.name, spec.impl.__module__, args, kwargs)
    r = _dispatch_handlers(spec, args, kwargs)
    if r is _NO_DISPATCH:
        r = spec.impl(*args, **kwargs)
    device = kwargs.get("device")
    if device is not None and str(device) != "meta":  # empty_like(t, device='cpu')
        return r
    inputs = {id(a) for a in (*args, *kwargs.values()) if isinstance(a, Tensor)}
    for t in (r if isinstance(r, (tuple, list)) else (r,)):
        if isinstance(t, Tensor) and type(t._data) is not _meta.MetaArray and \
                id(t) not in inputs:
            t._data = _meta.meta_array(t._data.shape, t._data.dtype)
            t._base = None
    return r


def _dispatch_handlers(spec, args, kwargs):
    if not _modes_pushed and _passive_only(args) and (
            not kwargs or _passive_only(kwargs.values())):
        return _NO_DISPATCH  # the common case once a subclass exists somewhere: plain calls
    tls = _tls
    state = tls.disabled
    if state == _ALL_DISABLED:
        return _NO_DISPATCH
    overloaded = _collect(args, kwargs) if state == _ENABLED else ()
    if not overloaded and not tls.modes:
        return _NO_DISPATCH
    if spec.plain_types and state == _ENABLED:
        overloaded = _collect(args, kwargs, include_plain=True)
    if spec.binop:
        try:
            return _call_handlers(spec.public, spec.name, overloaded, args, kwargs,
                                  spec.python_level)
        except TypeError:
            return NotImplemented
    return _call_handlers(spec.public, spec.name, overloaded, args, kwargs, spec.python_level)


def _call_handlers(public, name, overloaded, args, kwargs, python_level):
    """torch's protocol: the innermost mode (popped while it runs), then each overriding
    argument; the first result that is not NotImplemented wins."""
    types = tuple(type(a) for a in overloaded)
    tls = _tls
    mode = None
    if tls.disabled != _ALL_DISABLED and tls.modes:
        mode = tls.modes.pop()
        try:
            result = mode.__torch_function__(public, types, args, kwargs)
        finally:
            tls.modes.append(mode)
        if result is not NotImplemented:
            return result
    for a in overloaded:
        handler = a.__torch_function__
        if getattr(handler, "__self__", None) is a:
            warnings.warn("Defining your `__torch_function__` as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=3)
        result = handler(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if python_level:
        msg = (f"no implementation found for '{name}' on types that implement "
               f"__torch_function__: {[type(a) for a in overloaded]}")
        if mode is not None:
            msg += f" nor in mode {mode!r}"
        raise TypeError(msg)
    lines = [f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
             f"NotImplemented:", ""]
    if mode is not None:
        lines.append(f"  - mode object {mode!r}")
    lines += [f"  - tensor subclass {type(a)!r}" for a in overloaded]
    raise TypeError("\n".join(lines))


def _met_overrider(args, kwargs):
    """After an op failed with nothing active: whether an argument's type overrides
    ``__torch_function__`` (a tensor-like met for the first time). Turns dispatch on if so."""
    if _collect(args, kwargs):
        global _overriders_met
        _overriders_met = True
        _refresh()
        return True
    return False


def _make_function(impl, spec, name, qualname, module):
    """The dispatch point of a function or method: ``impl`` runs unless something takes the
    call. An op that fails on an object overriding ``__torch_function__`` (met for the first
    time) is dispatched instead."""
    spec.impl = impl

    def op(*args, **kwargs):
        if _active:
            r = _dispatch(spec, args, kwargs)
            if r is not _NO_DISPATCH:
                return r
        try:
            return impl(*args, **kwargs)
        except Exception as e:
            if not _active and _met_overrider(args, kwargs):
                r = _dispatch(spec, args, kwargs)
                if r is not _NO_DISPATCH:
                    return r
            if kwargs and type(kwargs.get("dtype")) is type:
                retyped = _python_dtype(kwargs)
                if retyped is not None:
                    return op(*args, **retyped)
            if kwargs and type(e) is TypeError and not spec.python_level:
                renamed = _torch_spelling(kwargs)
                if renamed is not None:
                    return op(*args, **renamed)
            if type(e) is TypeError and name.rstrip("_") in _DEPRECATED_OVERLOADS:
                moved = _deprecated_overload(name, qualname, args, kwargs)
                if moved is not None:
                    return op(*moved[0], **moved[1])
            raise
    _name(op, impl, name, qualname, module)
    return op


# torch's deprecated overloads that put the scalar before the tensors (add_(alpha, other),
# addcmul_(value, tensor1, tensor2)), which older optimizers still call: op -> (the scalar's
# keyword, the tensors' names, whether a Python number may stand for them as in x.add(2, 3))
_DEPRECATED_OVERLOADS = {"add": ("alpha", ("other",), True), "sub": ("alpha", ("other",), True),
                         "addcmul": ("value", ("tensor1", "tensor2"), False),
                         "addcdiv": ("value", ("tensor1", "tensor2"), False)}
_deprecated_warned = False


def _deprecated_overload(name, qualname, args, kwargs):
    """``(args, kwargs)`` of the current signature for a call in a deprecated one (torch
    warns once per process), or None when the call is not one."""
    scalar, tensors, numbers = _DEPRECATED_OVERLOADS[name.rstrip("_")]
    taken = (Tensor, int, float, complex) if numbers else Tensor
    if (len(args) != 2 + len(tensors) or isinstance(args[1], (Tensor, str)) or scalar in kwargs
            or not all(isinstance(t, taken) for t in args[2:])):
        return None
    global _deprecated_warned
    if not _deprecated_warned:
        _deprecated_warned = True
        method = qualname.startswith("Tensor.")
        lead, out = ("", "") if method else ("Tensor input, ", ", Tensor out = None")
        names = ", ".join(f"Tensor {t}" for t in tensors)
        from ._core.warn import warn_user
        warn_user(f"This overload of {name} is deprecated:\n\t{name}({lead}Number {scalar}, "
                  f"{names}{', *' + out if out else ''})\nConsider using one of the "
                  f"following signatures instead:\n\t{name}({lead}{names}, *, Number {scalar} "
                  f"= 1{out})")
    return (args[0], *args[2:]), {**kwargs, scalar: args[1]}


# NumPy's keyword names that torch's builtin functions (not its Python-level ones) take for
# their own: torch.all(x, axis=-1, keepdims=True), torch.abs(x=t), torch.add(t, x2=u).
_NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input",
                   "x1": "input", "x2": "other"}


def _python_dtype(kwargs):
    """``kwargs`` with a Python scalar type given as ``dtype`` (``torch.ones(3, dtype=bool)``)
    in torch's dtype for it, or None when it is not one."""
    from ._core import dtype as _dt
    mapped = {bool: _dt.bool_, int: _dt.int64, float: _dt.float64,
              complex: _dt.complex128}.get(kwargs["dtype"])
    return None if mapped is None else {**kwargs, "dtype": mapped}


def _torch_spelling(kwargs):
    """``kwargs`` with NumPy's keyword names in torch's, or None when none was used (or
    torch's own name was given too)."""
    if kwargs.keys().isdisjoint(_NUMPY_KEYWORDS):
        return None
    renamed = {}
    for key, value in kwargs.items():
        key = _NUMPY_KEYWORDS.get(key, key)
        if key in renamed:
            return None
        renamed[key] = value
    return renamed


def _make_operator(impl, spec, name, arity):
    """The dispatch point of a Python operator: Python calls ``x + y`` with exactly
    ``(self, other)`` (``-x`` with ``(self)``), so the wrapper takes exactly those and skips
    packing them (operators are the hottest calls)."""
    spec.impl = impl
    if arity == 1:
        def op(self):
            if _active:
                r = _dispatch(spec, (self,), {})
                if r is not _NO_DISPATCH:
                    return r
            return impl(self)
    elif arity == 2:
        def op(self, other):
            if _active:
                r = _dispatch(spec, (self, other), {})
                if r is not _NO_DISPATCH:
                    return r
            try:
                return impl(self, other)
            except Exception as e:
                if not _active and _met_overrider((other,), {}):
                    r = _dispatch(spec, (self, other), {})
                    if r is not _NO_DISPATCH:
                        return r
                if spec.binop and type(e) is TypeError:
                    # an operand this op does not take: Python asks the other side (an
                    # ndarray computes t + a itself), or raises its own TypeError, as in torch
                    return NotImplemented
                raise
    else:
        def op(self, key, value):
            if _active:
                r = _dispatch(spec, (self, key, value), {})
                if r is not _NO_DISPATCH:
                    return r
            return impl(self, key, value)
    _name(op, impl, name, f"Tensor.{name}", "glasstorch._tensor")
    return op


def _name(fn, impl, name, qualname, module):
    # its own code object, named after the op: tracebacks and profilers show ``add``, and
    # each dispatch point's frames can be told apart
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=qualname)
    fn.__name__ = name
    fn.__qualname__ = qualname
    fn.__module__ = module  # where pickle finds the dispatch point itself
    fn.__doc__ = getattr(impl, "__doc__", None)
    fn.__wrapped__ = impl  # inspect.signature and the op watchers look through
    fn._torch_dispatch_point = True


def _make_property(prop, name):
    """A property whose getter and setter are dispatch points (``Tensor.shape.__get__``)."""
    get_spec = _Spec(f"torch.Tensor.{name}.__get__", plain_types=True)
    fget_impl = prop.fget

    def fget(self):
        if _active:
            r = _dispatch(get_spec, (self,), {})
            if r is not _NO_DISPATCH:
                return r
        return fget_impl(self)
    _name(fget, fget_impl, name, f"Tensor.{name}", "glasstorch._tensor")
    fset = None
    if prop.fset is not None:
        set_spec = _Spec(f"torch.Tensor.{name}.__set__", plain_types=True)
        fset_impl = prop.fset

        def fset(self, value):
            if _active:
                r = _dispatch(set_spec, (self, value), {})
                if r is not _NO_DISPATCH:
                    return
            fset_impl(self, value)
        _name(fset, fset_impl, name, f"Tensor.{name}", "glasstorch._tensor")
    new = property(fget, fset, prop.fdel, prop.__doc__)
    get_spec.public = new.__get__
    if fset is not None:
        set_spec.public = new.__set__
    return new


# ---------------------------------------------------------------- the public surface

# Tensor attributes torch does not dispatch: object machinery and the protocol itself.
_TENSOR_IGNORED = frozenset({
    "__new__", "__init__", "__init_subclass__", "__torch_function__", "__torch_dispatch__",
    "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__hash__", "__dir__",
    "__iter__", "__class__", "__subclasshook__", "__class_getitem__", "__sizeof__",
    "as_subclass", "_make_subclass",
})
# Flat functions torch does not dispatch (Python helpers and generator state).
_FLAT_IGNORED = frozenset({
    "broadcast_shapes", "from_numpy", "frombuffer", "get_rng_state", "initial_seed",
    "is_storage", "is_tensor", "manual_seed", "range", "seed", "set_rng_state", "typename",
})
# Flat functions written in Python in torch (torch.functional): they follow the Python
# handle_torch_function (a mode's ``types`` include plain tensors).
_FLAT_PYTHON = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors",
    "cartesian_prod", "cdist", "chain_matmul", "einsum", "meshgrid", "norm", "split",
    "tensordot", "unique", "unique_consecutive",
})
# nn.functional functions that are C++ builtins in torch; the others are Python functions.
_F_BUILTIN = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink",
    "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle", "one_hot",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_",
    "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_",
})
# nn.init functions that dispatch in torch (the others only through the ops they call).
_INIT_DISPATCHED = frozenset({"uniform_", "normal_", "constant_", "kaiming_uniform_"})
# The Tensor method torch hands to __torch_function__ for a Python operator (``x + y`` is
# ``Tensor.add``); operators not listed are passed as themselves.
_OPERATOR_METHOD = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__div__": "div", "__itruediv__": "div_", "__idiv__": "div_",
    "__rtruediv__": "__rdiv__", "__ifloordiv__": "floor_divide_", "__mod__": "remainder",
    "__imod__": "remainder_", "__pow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul",
    "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__ge__": "ge", "__gt__": "gt",
    "__le__": "le", "__lt__": "lt", "__ne__": "ne", "__rand__": "bitwise_and",
    "__ror__": "bitwise_or", "__rxor__": "bitwise_xor", "__str__": "__repr__",
}
# Operators whose TypeError (from a handler too) becomes NotImplemented, so Python tries the
# reflected operator and then raises its own "unsupported operand" error.
_BINARY_OPERATORS = frozenset(
    f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow",
                              "matmul", "and", "or", "xor", "lshift", "rshift")
    for p in ("", "r", "i")) | {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}

# How many arguments Python passes to an operator's method (operators not listed, and
# methods, take any arguments).
_OPERATOR_ARITY = dict.fromkeys(_BINARY_OPERATORS | {"__getitem__", "__contains__"}, 2)
_OPERATOR_ARITY.update(dict.fromkeys((
    "__neg__", "__pos__", "__abs__", "__invert__", "__bool__", "__float__", "__int__",
    "__index__", "__complex__", "__len__", "__reversed__"), 1))
_OPERATOR_ARITY["__setitem__"] = 3


def _takes_positional(fn, n):
    try:
        inspect.signature(fn).bind(*range(n))
    except (TypeError, ValueError):
        return False
    return True


# Every dispatch point made, by namespace: [(namespace, public name, public callable)].
_REGISTRY = []
_installed = set()  # id() of the namespaces and classes already swept


def _is_dunder(name):
    return name.startswith("__") and name.endswith("__")


def _install_tensor():
    """Make every public Tensor method, operator and property a dispatch point."""
    if id(Tensor) in _installed:
        return
    _installed.add(id(Tensor))
    get_default_nowrap_functions.cache_clear()  # it holds the properties' getters
    items = [(n, v) for n, v in vars(Tensor).items()
             if n not in _TENSOR_IGNORED and (not n.startswith("_") or _is_dunder(n))]
    # the methods first: an operator hands its method (``Tensor.add`` for ``+``) to handlers
    items.sort(key=lambda item: item[0] in _OPERATOR_METHOD)
    for name, value in items:
        _set_tensor_point(name, value)


def _set_tensor_point(name, value):
    if isinstance(value, property):
        new = _make_property(value, name)
    elif inspect.isfunction(value) and not getattr(value, "_torch_dispatch_point", False):
        target = _OPERATOR_METHOD.get(name)
        public = vars(Tensor).get(target) if target else None
        if not getattr(public, "_torch_dispatch_point", False):
            public = None
        spec = _Spec(f"torch.Tensor.{target if public is not None else name}",
                     binop=name in _BINARY_OPERATORS)
        arity = _OPERATOR_ARITY.get(name)
        if arity is not None and _takes_positional(value, arity):
            new = _make_operator(value, spec, name, arity)
        else:
            new = _make_function(value, spec, name, f"Tensor.{name}", "glasstorch._tensor")
        spec.public = public if public is not None else new
    else:
        return
    setattr(Tensor, name, new)
    _REGISTRY.append((Tensor, name, new))


def _attach_to_tensor(name, value):
    """``setattr(Tensor, name, value)`` for a method attached after import (``register`` in a
    module imported later): a dispatch point like the others once Tensor's were made."""
    setattr(Tensor, name, value)
    if (id(Tensor) in _installed and name not in _TENSOR_IGNORED
            and (not name.startswith("_") or _is_dunder(name))):
        _set_tensor_point(name, value)


def _install_namespace(module, names, torch_prefix, python_level, name_prefix="",
                       share=False):
    """Make ``module``'s functions ``names`` dispatch points, in place in its namespace;
    ``python_level(name)`` says which follow torch's Python-level flavour; ``name_prefix``
    starts their ``__name__`` (torch's ``linalg.norm`` is named ``linalg_norm``). With
    ``share``, a function that is also a flat one gets the flat dispatch point (torch's
    ``F.conv2d is torch.conv2d``)."""
    if id(module) in _installed:
        return
    _installed.add(id(module))
    ns = vars(module)
    for name in sorted(names):
        value = ns.get(name)
        if not inspect.isfunction(value) or getattr(value, "_torch_dispatch_point", False):
            continue
        known = _POINT_OF.get(id(value))
        if share and known is not None:
            op = known[1]
        else:
            spec = _Spec(torch_prefix + name, python_level=python_level(name))
            op = _make_function(value, spec, name_prefix + name, name, module.__name__)
            spec.public = op
            _POINT_OF.setdefault(id(value), (value, op))
        ns[name] = op
        _REGISTRY.append((module, name, op))


# id(definition) -> (definition, its first dispatch point), for the namespaces' functions
_POINT_OF = {}
# Modules whose references to definitions stay: the definitions' own homes (ops call each
# other directly, as torch's kernels do) and the machinery around them.
_KEEP_REFERENCES = ("glasstorch._ops", "glasstorch.nn._functional", "glasstorch.overrides",
                    "glasstorch._callable_patch", "glasstorch.amp")


def _rebind_references():
    """glasstorch's library modules imported public functions by name before they became
    dispatch points (``from ..functional import linear``, ``activation=F.relu`` defaults):
    point those names at the dispatch points, so library code calls the public functions
    as torch's Python code does (a mode sees ``nn.Linear`` call ``empty``; ``activation is
    F.relu`` holds)."""
    import sys

    def public(v):
        known = _POINT_OF.get(id(v))
        return known[1] if known is not None and known[0] is v else v

    def fix_defaults(fn):
        if fn.__defaults__:
            fn.__defaults__ = tuple(public(d) for d in fn.__defaults__)
        if fn.__kwdefaults__:
            fn.__kwdefaults__ = {k: public(d) for k, d in fn.__kwdefaults__.items()}

    for mod_name, mod in list(sys.modules.items()):
        if (mod is None or not mod_name.startswith("glasstorch")
                or mod_name.startswith(_KEEP_REFERENCES) or id(mod) in _installed):
            continue
        ns = vars(mod)
        for key, value in list(ns.items()):
            new = public(value)
            if new is not value:
                ns[key] = new
            elif inspect.isfunction(value) and value.__module__ == mod_name:
                fix_defaults(value)
            elif inspect.isclass(value) and value.__module__ == mod_name:
                for attr in vars(value).values():
                    fn = getattr(attr, "__func__", attr)
                    if inspect.isfunction(fn):
                        fix_defaults(fn)


def _install_dispatch():
    """Turn the public API into dispatch points: Tensor, the flat namespace (the ops'
    ``__all__``), nn.functional and linalg. Runs once, at the end of ``import glasstorch``,
    after amp wrapped its ops, so that dispatch comes first, as in torch. (And the few
    nn.init and autograd functions torch dispatches.)"""
    import glasstorch

    from . import _ops, autograd, linalg
    from .nn import functional, init

    _install_tensor()
    # the ops' __all__, and the Tensor methods re-exported as functions (torch.detach)
    flat = {n for m in _ops.MODULES for n in m.__all__}
    flat.update(n for n, v in vars(glasstorch).items()
                if not n.startswith("_") and inspect.isfunction(v)
                and getattr(inspect.unwrap(v), "__module__", "") == "glasstorch._tensor")
    flat -= _FLAT_IGNORED
    _install_namespace(glasstorch, flat, "torch.", _FLAT_PYTHON.__contains__)
    _install_namespace(functional, set(functional.__all__), "torch.nn.functional.",
                       lambda name: name not in _F_BUILTIN, share=True)
    _install_namespace(linalg, set(linalg.__all__), "torch.linalg.", lambda name: False,
                       "linalg_")
    _install_namespace(init, _INIT_DISPATCHED, "torch.nn.init.", lambda name: True)
    _install_namespace(autograd, {"backward", "grad"}, "torch.autograd.", lambda name: True)
    _rebind_references()


def _install_module(module, names=None, torch_name=None):
    """For namespaces imported later (special, fft...): make their functions dispatch points.
    Call at the end of the module with its ``__all__`` (the default)."""
    names = set(module.__all__ if names is None else names)
    prefix = (torch_name or module.__name__.replace("glasstorch", "torch", 1)) + "."
    _install_namespace(module, names, prefix, lambda name: False)


# ---------------------------------------------------------------- torch.overrides API

def has_torch_function(relevant_args):
    """Whether a call with ``relevant_args`` would be dispatched: a mode is active, or an
    element's type overrides ``__torch_function__`` (plain Tensors and Parameters do not)."""
    tls = _tls
    state = tls.disabled
    if state == _ALL_DISABLED:
        return False
    if tls.modes:
        return True
    if state != _ENABLED:
        return False
    for a in relevant_args:
        t = type(a)
        if t is not Tensor and t not in _NEVER and _overrides(t):
            _note_type(t)
            return True
    return False


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))`` without building the tuple."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)`` for arguments passed one by one."""
    return has_torch_function(args)


def _get_overloaded_args(relevant_args, get_type_fn=None):
    """The arguments whose ``__torch_function__`` is called, in calling order: distinct types
    only, subclasses before their parents, otherwise left to right (plain tensors included,
    as in torch's Python implementation)."""
    if _tls.disabled != _ENABLED:
        return []
    get_type = type if get_type_fn is None else get_type_fn
    found, types = [], []
    for a in relevant_args:
        t = get_type(a)
        if t in types:
            continue
        tf = getattr(t, "__torch_function__", None)
        if tf is None or tf is _disabled_torch_function_impl:
            continue
        for i, other in enumerate(found):
            if issubclass(t, get_type(other)):
                found.insert(i, a)
                break
        else:
            found.append(a)
        types.append(t)
    return found


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the ``__torch_function__`` of the active mode and of ``relevant_args`` for the call
    ``public_api(*args, **kwargs)``; TypeError when every handler returns NotImplemented.
    Guard it with ``has_torch_function``."""
    overloaded = _get_overloaded_args(relevant_args)
    for a in overloaded:
        _note_type(type(a))
    name = f"{getattr(public_api, '__module__', None)}.{getattr(public_api, '__name__', '?')}"
    return _call_handlers(public_api, name, overloaded, args, kwargs, True)


def wrap_torch_function(dispatcher):
    """Decorator making a Python function dispatchable: ``dispatcher`` (same signature) returns
    the arguments to check for ``__torch_function__``."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """Whether ``inp`` is a Tensor or its type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


@functools.cache
def get_default_nowrap_functions():
    """Functions whose results the default ``Tensor.__torch_function__`` does not turn into the
    subclass: field reads that must keep identity (``a.grad is a.grad``)."""
    return frozenset({Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__})


def _registry_by_namespace():
    out = {}
    for namespace, _name, public in _REGISTRY:
        if isinstance(public, property):
            out.setdefault(public, []).append(public.__get__)  # keyed as torch does
        else:
            out.setdefault(namespace, []).append(public)
    return out


_index = [0, {}]  # (registry length it was built for, {public callable: readable name})


def _names():
    """{handed-over function: 'torch.x' name}, rebuilt when namespaces were added."""
    if _index[0] != len(_REGISTRY):
        names = {}
        for namespace, name, public in _REGISTRY:
            if isinstance(public, property):
                names[public.__get__] = f"torch.Tensor.{name}.__get__"
                if public.fset is not None:
                    names[public.__set__] = f"torch.Tensor.{name}.__set__"
            elif namespace is Tensor:
                names[public] = f"torch.Tensor.{name}"
            else:
                names[public] = namespace.__name__.replace("glasstorch", "torch", 1) + "." + name
        _index[:] = [len(_REGISTRY), names]
    return _index[1]


def get_overridable_functions():
    """{namespace: [functions]} of every function ``__torch_function__`` can override
    (Tensor properties appear as their ``__get__``, keyed by the property, as in torch)."""
    return _registry_by_namespace()


def get_ignored_functions():
    """Public functions and Tensor methods that are not dispatched."""
    import glasstorch
    out = set()
    for name in _FLAT_IGNORED:
        fn = getattr(glasstorch, name, None)
        if callable(fn):
            out.add(fn)
    for name in _TENSOR_IGNORED:
        fn = vars(Tensor).get(name)
        if fn is not None:
            out.add(getattr(Tensor, name))
    return out


def _dummy(sig):
    def dummy(*args, **kwargs):
        sig.bind(*args, **kwargs)  # the real signature's TypeError on a wrong call
        return -1
    dummy.__signature__ = sig
    return dummy


def get_testing_overrides():
    """{overridable function: a dummy with the same signature that returns -1}, to test a
    tensor-like's coverage of the API."""
    out = {}
    for _namespace, _name, public in _REGISTRY:
        if isinstance(public, property):
            out[public.__get__] = lambda self: -1
            continue
        try:
            sig = inspect.signature(public)
        except (TypeError, ValueError):
            sig = inspect.Signature([
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        out[public] = _dummy(sig)
    return out


def resolve_name(f):
    """A readable name (``'torch.add'``, ``'torch.Tensor.shape.__get__'``) for a function
    handed to ``__torch_function__``; None when it is not an overridable one."""
    try:
        return _names().get(f)
    except TypeError:  # unhashable
        return None


def is_tensor_method_or_property(func):
    """Whether ``func`` (as handed to ``__torch_function__``) is a Tensor method or property
    getter, whose first argument is then the tensor itself."""
    name = resolve_name(func)
    return (name is not None and name.startswith("torch.Tensor.")
            and not name.endswith(".__set__")) or getattr(func, "__name__", None) == "__get__"


# ---------------------------------------------------------------- modes

class TorchFunctionMode:
    """Overrides every dispatch point inside a ``with`` block: ``__torch_function__(func,
    types, args, kwargs)`` receives each call, with this mode popped while it runs (so calls
    it makes go to the next mode, or run). Modes nest."""

    inner: TorchFunctionMode

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Handle one call; return NotImplemented to pass it on to the arguments."""
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """Deprecated: ``with Mode():`` is enough. Returns ``cls(*args, **kwargs)``."""
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call unchanged: subclass it and override what you need."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Run ``func(*args, **kwargs)``."""
        return func(*args, **(kwargs or {}))


def _push_mode(mode):
    global _modes_pushed
    _tls.modes.append(mode)
    with _lock:
        _modes_pushed += 1
        _refresh()


def _pop_mode():
    global _modes_pushed
    modes = _tls.modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = modes.pop()
    with _lock:
        _modes_pushed -= 1
        _refresh()
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    """Pop the innermost mode for the block (yielded), then push it back."""
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode():
    """The innermost active mode, or None."""
    modes = _tls.modes
    return modes[-1] if modes else None


def _get_current_function_mode_stack():
    """The mode stack, outermost first (a copy)."""
    return list(_tls.modes)


def _len_torch_function_stack():
    """How many modes this thread has pushed (torch._C)."""
    return len(_tls.modes)


def _get_function_stack_at(i):
    """The ``i``-th mode from the outside (torch._C)."""
    return _tls.modes[i]


_push_on_torch_function_stack = _push_mode
_pop_torch_function_stack = _pop_mode
