"""Optimizer base class: param groups, per-parameter state, hooks and state_dict.

The layout (group dicts with defaults filled in, ``state`` keyed by parameter,
``state_dict()`` keyed by integer index) is torch's, so checkpoints carry over.
Each algorithm's update is a plain function over lists of tensors working
in place on the backend arrays (``._data``); see e.g. ``adam.py``.
"""

from __future__ import annotations

import functools
import itertools
import threading
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from .. import debug as _debug
from .._core import dtype as _dt
from .._core.backend import xp
from .._tensor import Tensor, _wrap
from ..autograd import grad_mode as _gm

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyperparameter that has no default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class RemovableHandle:
    """Handle returned by the hook registration methods; ``remove()`` unregisters."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a pre hook ``hook(optimizer, args, kwargs)`` run before every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a post hook ``hook(optimizer, args, kwargs)`` run after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


# ---------------------------------------------------------------------------- numeric helpers
def _get_scalar_dtype(is_fused=None):
    """dtype of the ``step`` counters: float64 under a float64 default dtype, else float32."""
    if is_fused:
        return _dt.float32
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def _scalar_tensor(value, dtype=None):
    """A fresh 0-d tensor (the ``step``/``mu_product``-style state entries)."""
    dtype = dtype or _get_scalar_dtype()
    return _wrap(xp.array(value, dtype=dtype.np))


def _get_value(x):
    """A Python number from a 0-d tensor or number."""
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x):
    """Hyperparameters may be 1-element tensors; the update math uses their value.

    torch keeps them as tensors but on the CPU path they enter every kernel as scalars,
    so the float value is what matters."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _zeros_like(p):
    """A zero state buffer laid out like ``p`` (torch's ``preserve_format``)."""
    return _wrap(xp.zeros_like(p._data))


def _f32(v, arr):
    """``v`` rounded to ``arr``'s float type, as torch's kernels convert scalar arguments."""
    return arr.dtype.type(v)


def _real(a):
    """A real view of a complex backend array (torch's ``view_as_real``); real arrays as is.

    0-d arrays become 1-element views so in-place ufuncs with ``out=`` keep returning arrays."""
    if a.dtype.kind != "c":
        return a.reshape(1) if a.ndim == 0 else a
    return a[..., None].view(a.real.dtype)


# Large contiguous tensors are updated block by block: every pass of an update then runs on
# data already in cache, so a many-pass numpy update costs about one trip through memory.
# 64Ki elements (256 KiB of float32 per array) keeps Adam's six arrays within L2 + L3 while
# the Python loop stays short: 1.3x faster SGD/Adam steps than 16Ki on a 1 MiB-L2 core.
_BLOCK = 1 << 16
_scratch_local = threading.local()


def _blocks(arrays):
    """Yield matching pieces of same-shaped ``arrays``: flat blocks when all are C-contiguous,
    otherwise the arrays themselves (one piece)."""
    n = arrays[0].size
    if n > _BLOCK and all(a.flags.c_contiguous for a in arrays):
        flats = [a.reshape(-1) for a in arrays]
        for s in range(0, n, _BLOCK):
            yield [f[s:s + _BLOCK] for f in flats]
    else:
        yield arrays


def _scratch(like, k=2):
    """``k`` scratch arrays shaped like ``like`` (reused buffers for block-sized pieces)."""
    n = like.size
    if n > _BLOCK:
        return [xp.empty_like(like) for _ in range(k)]
    cache = getattr(_scratch_local, "bufs", None)
    if cache is None:
        cache = _scratch_local.bufs = {}
    dt = like.dtype
    bufs = cache.get(dt)
    if bufs is None or len(bufs) < k:
        bufs = cache[dt] = [xp.empty(_BLOCK, dtype=dt) for _ in range(max(k, 2))]
    return [b[:n].reshape(like.shape) for b in bufs[:k]]


def _lerp_(a, end, w):
    """``a.lerp_(end, w)`` with torch's two-sided formula (stable for weights near 1)."""
    w = a.dtype.type(w)
    tmp = xp.subtract(end, a)
    if abs(w) < 0.5:
        tmp *= w
        a += tmp
    else:
        tmp *= a.dtype.type(1) - w
        xp.subtract(end, tmp, out=a)


def _check_differentiable(differentiable):
    if differentiable:
        raise RuntimeError("glasstorch optimizers do not support differentiable=True: the step "
                           "is not recorded by autograd")


def _check_capturable(capturable, fused=None):
    if capturable:
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             "devices: ['cuda', 'xpu', 'hpu']. glasstorch runs on the CPU only.")


def _maybe_neg(g, maximize):
    return xp.negative(g) if maximize else g


def _no_grad_step(func):
    @functools.wraps(func)
    def step(self, *args, **kwargs):
        with _gm.no_grad():
            return func(self, *args, **kwargs)
    return step


def _call_closure(closure):
    if closure is None:
        return None
    with _gm.enable_grad():
        return closure()


# ---------------------------------------------------------------------------- the base class
class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts
    defining parameter groups; ``defaults`` holds the default hyperparameters."""

    # options that old pickled groups may lack, and state entries that old states kept as
    # plain numbers (restored by __setstate__); optimizers override them
    _group_defaults = {}
    _scalar_state_keys = ("step",)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + params.type())
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._warned_capturable_if_run_uncaptured = True
        if _debug._on:
            _debug._impl().optimizer_built(self)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def _params_with_grad(self, group, new_state):
        """The group's parameters that have a gradient, their gradients and their state
        dicts; an empty state is filled with ``new_state(p, group)`` (entries in torch's order)."""
        params, grads, states = [], [], []
        state_of = self.state
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            params.append(p)
            grads.append(g)
            st = state_of[p]
            if len(st) == 0:
                st.update(new_state(p, group))
            states.append(st)
        return params, grads, states

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        # groups pickled by older versions lack newer options; old states hold plain numbers
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
            for p in group["params"]:
                st = self.state.get(p)
                if st:
                    for key in self._scalar_state_keys:
                        if key in st and not isinstance(st[key], Tensor):
                            st[key] = _scalar_tensor(float(st[key]))

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ------------------------------------------------------------------ step hooks
    @staticmethod
    def profile_hook_step(func):
        """Wrap ``step`` so the global and per-optimizer pre/post hooks run around it."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            if _debug._on:
                _debug._impl().before_step(self)
            out = func(*args, **kwargs)
            if _debug._on:
                _debug._impl().after_step(self)
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        wrapper.hooked = True
        return wrapper

    def _patch_step_function(self):
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = self.profile_hook_step(cls.step)

    def _add_hook(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` runs before ``step``."""
        return self._add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None`` runs after ``step``."""
        return self._add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None`` runs before ``state_dict()`` builds its result."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None`` runs on ``state_dict()``'s
        result."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None`` runs before loading."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None`` runs after loading."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state_dict
    def state_dict(self) -> dict[str, Any]:
        """The optimizer state: ``state`` keyed by parameter index, ``param_groups`` with
        ``params`` as index lists."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                if id(p) not in mapping:
                    mapping[id(p)] = i
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dt.float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state produced by ``state_dict()`` (glasstorch's or torch's layout)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ------------------------------------------------------------------ grads and groups
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (default) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g._data[...] = 0
                        g._bump_version()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with optional per-group hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                from .._ops.metadata import typename
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_fused_foreach(opt, fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        opt._step_supports_amp_scaling = True

