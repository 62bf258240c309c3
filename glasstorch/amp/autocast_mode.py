"""autocast: per-op casting to a lower precision (or float32) inside a region.

glasstorch has no dispatcher, so autocast wraps, once at import of ``glasstorch.amp``, the
user-visible entry points of the ops in the policy tables (``_policy.py``): the
``glasstorch`` function, the Tensor methods/dunders that are the same function, and
``glasstorch.nn.functional`` / ``glasstorch.linalg`` functions. Outside autocast a wrapper
costs one thread-local read. Inside, it casts the inputs by the op's policy and runs the op
with autocast suspended, as torch's autocast kernels exclude their own dispatch key (ops the
listed op calls internally are not cast again).

Autocast for device_type='cuda' applies torch's CUDA policy to glasstorch's (CPU) tensors, so
code written for CUDA mixed precision runs unchanged with CUDA's dtypes.
"""

from __future__ import annotations

import collections.abc
import functools
import importlib
import threading
import warnings

import glasstorch as _gt

from .._core import dtype as _dt
from .._core.device import device as _device
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from . import _policy

__all__ = [
    "autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "is_autocast_enabled",
    "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
]

# The device types torch has an autocast state for, with their default low-precision dtype.
# Only 'cpu' and 'cuda' change how glasstorch's tensors compute (they stand in for both); the
# others keep their switches as torch does, and like torch's they leave CPU tensors alone.
_DEFAULT_DTYPES = {"cpu": _dt.bfloat16, "cuda": _dt.float16, "mps": _dt.float16,
                   "xpu": _dt.float16, "hpu": _dt.bfloat16, "xla": _dt.bfloat16,
                   "ipu": _dt.float16, "privateuseone": _dt.float16, "mtia": _dt.float16,
                   "maia": _dt.bfloat16}
_DEVICES = tuple(_DEFAULT_DTYPES)
_SUPPORTED = (_dt.bfloat16, _dt.float16)
_f32, _f64 = _dt.float32, _dt.float64


class _State(threading.local):
    """Autocast state, one per thread (torch's autocast state is thread-local)."""

    def __init__(self):
        self.enabled = dict.fromkeys(_DEVICES, False)
        # any device type torch parses can hold a dtype; 'hip' starts at float16 as in torch
        self.dtype = dict(_DEFAULT_DTYPES, hip=_dt.float16)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}
        # the device type whose policy the op wrappers apply now (None: autocast off, or
        # suspended inside an autocast op). CUDA's wins when both are on: glasstorch's
        # tensors stand in for both devices.
        self.active = None

    def refresh(self):
        e = self.enabled
        self.active = "cuda" if e["cuda"] else ("cpu" if e["cpu"] else None)


_state = _State()


def _device_type(device_type, fn, position=1):
    """The device type named by ``device_type`` ('cuda:1' -> 'cuda'), parsed like torch.device
    (its RuntimeError for unknown names); TypeError for non-strings, as torch's bindings."""
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position {position}) must be str, not "
                        f"{type(device_type).__name__}")
    return _device(device_type).type


def _keyed(device_type, fn):
    """A device type that has autocast state; torch's RuntimeError for the others."""
    dt = _device_type(device_type, fn)
    if dt not in _state.enabled:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    return dt


def _check_bool(value, fn, position):
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument 'enabled' (position {position}) must be bool, not "
                        f"{type(value).__name__}")


def _check_device(device_type):
    """The autocast context manager's device check (ValueError for a non-string, as torch)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    dt = _device(device_type).type
    if dt not in _DEVICES:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'")
    if dt == "privateuseone":
        raise AssertionError(
            "Tried to use AMP with the `privateuseone` backend, but the backend has not "
            "registered a module or  the module miss some necessary funcs. The backend should "
            "register a module by `torch._register_device_module`, and the module must have "
            "these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n")
    return dt


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast has a state for ``device_type`` (cpu, cuda, mps, xpu, hpu, xla, ipu,
    privateuseone, mtia, maia); False for other device types, RuntimeError for unknown names."""
    return _device_type(device_type, "_is_autocast_available") in _state.enabled


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (default 'cuda', as in torch)."""
    if device_type is None:
        return _state.enabled["cuda"]
    return _state.enabled[_keyed(device_type, "is_autocast_enabled")]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on/off for a device type (``set_autocast_enabled(enabled)`` = 'cuda')."""
    if enabled is None:
        _check_bool(device_type, "set_autocast_enabled", 1)
        device_type, enabled = "cuda", device_type
    else:
        _check_bool(enabled, "set_autocast_enabled", 2)
    _state.enabled[_keyed(device_type, "set_autocast_enabled")] = enabled
    _state.refresh()


def get_autocast_dtype(device_type: str):
    """The lower-precision dtype autocast uses for ``device_type``."""
    d = _state.dtype.get(_device_type(device_type, "get_autocast_dtype"))
    if d is None:
        raise RuntimeError("unsupported scalarType")
    return d


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the lower-precision dtype autocast uses for ``device_type`` when ``autocast`` is given no
    dtype."""
    dt = _device_type(device_type, "set_autocast_dtype")
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _state.dtype[dt] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the low-precision casts of weights inside a region."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's weight-cast cache on or off."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached low-precision copies of weights."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    """Count one more entered autocast region; returns the depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """Count one autocast region less; returns the depth."""
    _state.nesting -= 1
    return _state.nesting


# the deprecated per-device spellings
def get_autocast_cpu_dtype():
    """Deprecated spelling of ``get_autocast_dtype('cpu')``."""
    return _state.dtype["cpu"]


def get_autocast_gpu_dtype():
    """Deprecated spelling of ``get_autocast_dtype('cuda')``."""
    return _state.dtype["cuda"]


def is_autocast_cpu_enabled() -> bool:
    """Deprecated spelling of ``is_autocast_enabled('cpu')``."""
    return _state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated spelling of ``set_autocast_enabled('cpu', enabled)``."""
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated spelling of ``set_autocast_dtype('cpu', dtype)``."""
    _state.dtype["cpu"] = dtype


def set_autocast_gpu_dtype(dtype) -> None:
    """Deprecated spelling of ``set_autocast_dtype('cuda', dtype)``."""
    _state.dtype["cuda"] = dtype


class autocast:
    """Context manager / decorator running the ops of a region in mixed precision.

    ``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: ``dtype``
    defaults to ``get_autocast_dtype(device_type)`` (bfloat16 on 'cpu', float16 on
    'cuda'); casts of weights (float32 leaves that require grad) are cached until the
    outermost region exits unless ``cache_enabled=False``.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        device_type = _check_device(device_type)
        self.device = device_type
        self.fast_dtype = _state.dtype[device_type] if dtype is None else dtype
        self._cache_enabled = _state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled and self.fast_dtype not in _SUPPORTED:
            name = device_type.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"torch.bfloat16, torch.float16 currently.", stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        st = _state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled[self.device]
        self.prev_fastdtype = st.dtype[self.device]
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.nesting += 1
        st.cache_enabled = self._cache_enabled
        st.refresh()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        st = _state
        st.nesting -= 1
        if st.nesting == 0:
            st.cache.clear()
        st.enabled[self.device] = self.prev
        st.dtype[self.device] = self.prev_fastdtype
        st.cache_enabled = self.prev_cache_enabled
        st.refresh()
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got "
                            f"{type(func).__name__}. Did you mean to use autocast as a context "
                            f"manager? For example:\n    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# ---------------------------------------------------------------------------------------
# casting


def _eligible(t):
    dt = t.dtype
    return dt.is_floating_point and dt is not _f64


def _cast_tensor(t, to, st, dev):
    dt = t.dtype
    if dt is to or not dt.is_floating_point or dt is _f64:
        return t
    # weights: float32 leaves that require grad, cast once per region (torch's cache)
    if (st.cache_enabled and to is st.dtype[dev] and dt is _f32 and t._requires_grad
            and t.grad_fn is None and t._base is None and is_grad_enabled()):
        hit = st.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        out = t.to(to)
        st.cache[id(t)] = (t, out)  # holding t keeps its id from being reused
        return out
    return t.to(to)


def _cast_value(v, to, st, dev):
    if isinstance(v, Tensor):
        return _cast_tensor(v, to, st, dev)
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], Tensor):
        return type(v)(_cast_value(x, to, st, dev) for x in v)
    return v


def _cast_all(args, kwargs, to, st, dev):
    args = tuple(_cast_value(a, to, st, dev) for a in args)
    if kwargs:
        kwargs = {k: _cast_value(v, to, st, dev) for k, v in kwargs.items()}
    return args, kwargs


def _lower(fn, st, dev, args, kwargs):
    args, kwargs = _cast_all(args, kwargs, st.dtype[dev], st, dev)
    return fn(*args, **kwargs)


def _fp32(fn, st, dev, args, kwargs):
    args, kwargs = _cast_all(args, kwargs, _f32, st, dev)
    return fn(*args, **kwargs)


def _fp32_opt(fn, st, dev, args, kwargs):
    # float32 math through the op's own dtype= argument, unless the caller chose a dtype
    first = args[0] if args else kwargs.get("input")
    if (isinstance(first, Tensor) and _eligible(first) and kwargs.get("dtype") is None
            and not any(isinstance(a, _dt.dtype) for a in args)):
        kwargs = dict(kwargs, dtype=_f32)
    return fn(*args, **kwargs)


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, Tensor))


def _promote(fn, st, dev, args, kwargs):
    lower = st.dtype[dev]
    to = lower
    for t in _tensors_in((*args, *kwargs.values())):
        nxt = t.dtype
        if not nxt.is_floating_point or nxt is _f64:
            continue
        if to is _f32 or nxt is _f32:
            to = _f32
        elif nxt is not lower:
            raise RuntimeError(f"Unexpected floating ScalarType in at::autocast::prioritize: "
                               f"{nxt} inside {dev} autocast to {lower}")
    args, kwargs = _cast_all(args, kwargs, to, st, dev)
    return fn(*args, **kwargs)


def _banned(fn, st, dev, args, kwargs):
    raise RuntimeError(
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
        "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
        "layer.\nIn this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
        "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


def _cpu_pad(fn, st, dev, args, kwargs):
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
    pad = args[1] if len(args) > 1 else kwargs.get("pad", ())
    if (mode, len(pad) // 2) in _policy.CPU_PAD_FP32:
        return _fp32(fn, st, dev, args, kwargs)
    return fn(*args, **kwargs)


def _einsum(fn, st, dev, args, kwargs):
    # torch's einsum reaches bmm (autocast) only to contract an index between operands
    eq = args[0] if args and isinstance(args[0], str) else None
    ops = list(_tensors_in(args[1:] if eq is not None else args))
    if len(ops) < 2:
        return fn(*args, **kwargs)
    if eq is not None:
        eq = eq.replace(" ", "").replace("...", "")
        lhs, arrow, out = eq.partition("->")
        letters = [c for c in lhs if c.isalpha()]
        if not arrow:
            out = "".join(c for c in letters if letters.count(c) == 1)
        if not set(letters) - set(out):
            return fn(*args, **kwargs)
    return _lower(fn, st, dev, args, kwargs)


def _inner(fn, st, dev, args, kwargs):
    a, b = (list(args) + [kwargs.get("input"), kwargs.get("other")])[:2]
    if (isinstance(a, Tensor) and isinstance(b, Tensor) and min(a.dim(), b.dim()) >= 1
            and max(a.dim(), b.dim()) >= 2):
        return _lower(fn, st, dev, args, kwargs)
    return fn(*args, **kwargs)


def _matrix_power(fn, st, dev, args, kwargs):
    n = args[1] if len(args) > 1 else kwargs.get("n", 1)
    if n == -1:
        return _fp32(fn, st, dev, args, kwargs)
    if abs(n) >= 2:
        return _lower(fn, st, dev, args, kwargs)
    return fn(*args, **kwargs)


def _lstm_only(fn, st, dev, args, kwargs):
    if args and args[0] == "LSTM":
        return _lower(fn, st, dev, args, kwargs)
    # GRU/RNN: not an autocast op on the CPU; the ops inside it autocast as in torch
    st.active = dev
    try:
        return fn(*args, **kwargs)
    finally:
        st.active = None


_POLICIES = {"lower": _lower, "fp32": _fp32, "fp32_opt": _fp32_opt, "promote": _promote,
             "banned": _banned, "einsum": _einsum, "inner": _inner,
             "matrix_power": _matrix_power, "lstm_only": _lstm_only}


def _make_wrapper(fn, cpu_policy, cuda_policy):
    @functools.wraps(fn)
    def autocast_op(*args, **kwargs):
        dev = _state.active
        if dev is None:
            return fn(*args, **kwargs)
        policy = cuda_policy if dev == "cuda" else cpu_policy
        if policy is None or "out" in kwargs:  # torch autocasts no out= overload
            return fn(*args, **kwargs)
        st = _state
        st.active = None
        try:
            return policy(fn, st, dev, args, kwargs)
        finally:
            st.active = dev
    autocast_op._autocast_wrapped = fn
    return autocast_op


def _namespaces():
    import glasstorch.linalg as linalg
    import glasstorch.nn.functional as F
    return {"": _gt, "Tensor.": Tensor, "F.": F, "linalg.": linalg}


def _resolve(name, spaces):
    if ":" in name:  # an internal kernel: "module:attribute"
        modname, _, attr = name.partition(":")
        mod = importlib.import_module(modname)
        return getattr(getattr(mod, attr, None), "_autocast_wrapped", getattr(mod, attr, None))
    prefix, _, attr = name.rpartition(".")
    ns = spaces[prefix + "." if prefix else ""]
    fn = ns.__dict__.get(attr) if isinstance(ns, type) else getattr(ns, attr, None)
    return getattr(fn, "_autocast_wrapped", fn)


def install():
    """Wrap every op of the policy tables in its namespaces (idempotent)."""
    spaces = _namespaces()
    per_fn = {}  # id(function) -> (function, {device: policy})
    for dev, table in _policy.TABLES.items():
        for kind, names in table.items():
            for name in names:
                fn = _resolve(name, spaces)
                if callable(fn):
                    per_fn.setdefault(id(fn), (fn, {}))[1][dev] = _POLICIES[kind]
    pad = _resolve("F.pad", spaces)
    if callable(pad):
        per_fn.setdefault(id(pad), (pad, {}))[1]["cpu"] = _cpu_pad
    wrappers = {key: _make_wrapper(fn, pol.get("cpu"), pol.get("cuda"))
                for key, (fn, pol) in per_fn.items()}
    for ns in spaces.values():
        for attr, value in list(vars(ns).items()):
            w = wrappers.get(id(value))
            if w is not None and getattr(value, "_autocast_wrapped", None) is None:
                setattr(ns, attr, w)
    # internal kernels: only the named attribute (the module's other globals stay as they
    # are, so its unlisted ops are not cast)
    for name in {n for table in _policy.TABLES.values() for names in table.values()
                 for n in names if ":" in n}:
        modname, _, attr = name.partition(":")
        mod = importlib.import_module(modname)
        w = wrappers.get(id(getattr(mod, attr, None)))
        if w is not None:
            setattr(mod, attr, w)


def _cast(value, device_type, dtype):
    """custom_fwd's input cast: floating tensors (not float64) in nested containers."""
    if isinstance(value, Tensor):
        return value.to(dtype) if _eligible(value) else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for ``forward`` of a custom autograd Function under autocast.

    With ``cast_inputs``, floating inputs are cast to it and ``forward`` runs with autocast
    off (inside an autocast region only); otherwise ``forward`` runs in the current state.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for ``backward``: runs it in the autocast state ``forward`` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
