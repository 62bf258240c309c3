"""torch._dynamo.config: the settings of the graph capturer, with torch's names and defaults.

They are kept as torch keeps them (reading, assigning, ``patch`` as a context manager or
decorator). The capturer reads ``recompile_limit`` (alias ``cache_size_limit``),
``automatic_dynamic_shapes``, ``error_on_recompile``, ``suppress_errors`` and ``disable``; the
others are recorded so that programs which tune them run unchanged. Unknown names are an
AttributeError, as in torch.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import types
import warnings

# name -> default, as in torch 2.13 (env-derived defaults read at import, as torch does)
_DEFAULTS = {
    "verbose": os.environ.get("TORCHDYNAMO_VERBOSE", "0") == "1",
    "suppress_errors": bool(os.environ.get("TORCHDYNAMO_SUPPRESS_ERRORS", False)),
    "disable": os.environ.get("TORCH_COMPILE_DISABLE", "0") == "1",
    "recompile_limit": 8,
    "accumulated_recompile_limit": 256,
    "fail_on_recompile_limit_hit": False,
    "error_on_recompile": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "capture_autograd_function": True,
    "capture_func_transforms": True,
    "dynamic_shapes": True,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "specialize_int": False,
    "specialize_float": False,
    "force_parameter_static_shapes": True,
    "force_nn_module_property_static_shapes": True,
    "allow_unspec_int_on_nn_module": False,
    "guard_nn_modules": True,
    "skip_nnmodule_hook_guards": True,
    "skip_fwd_side_effects_in_bwd_under_checkpoint": False,
    "optimize_ddp": True,
    "optimize_ddp_lazy_compile": False,
    "allow_rnn": False,
    "raise_on_ctx_manager_usage": True,
    "replay_record_enabled": False,
    "trace_numpy": True,
    "numpy_default_float": "float64",
    "numpy_default_complex": "complex128",
    "numpy_default_int": "int64",
    "use_numpy_random_stream": False,
    "compiled_autograd": False,
    "log_compilation_metrics": True,
    "do_not_emit_runtime_asserts": False,
    "minimum_call_count": 1,
    "debug_dir_root": os.path.join(os.getcwd(), "torch_compile_debug"),
}
# old names that read and write another setting
_ALIASES = {"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"}
# settings torch still accepts but ignores: reading or writing one warns
_DEPRECATED = {"inline_inbuilt_nn_modules": (True, "inline_inbuilt_nn_modules is always True")}

globals().update(_DEFAULTS)
_deprecated_values = {k: v for k, (v, _) in _DEPRECATED.items()}


def _warn_deprecated(name):
    warnings.warn(f"torch._dynamo.config.{name} is deprecated and does not do anything, "
                  f"{_DEPRECATED[name][1]}. It will be removed in a future version of PyTorch.",
                  FutureWarning, stacklevel=3)


def _resolve(name):
    """The stored setting behind ``name``; AttributeError for an unknown one."""
    name = _ALIASES.get(name, name)
    if name not in _DEFAULTS and name not in _DEPRECATED:
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")
    return name


def get_config_copy() -> dict:
    """A dict of every setting and its current value."""
    module = sys.modules[__name__]
    out = {k: getattr(module, k) for k in _DEFAULTS}
    out.update(_deprecated_values)
    return out


def save_config() -> bytes:
    """The current settings as a pickled blob (for ``load_config``)."""
    return pickle.dumps(get_config_copy(), protocol=2)


def load_config(maybe_pickled_config) -> None:
    """Restore settings from ``save_config``'s blob (or from a dict)."""
    config = maybe_pickled_config
    if not isinstance(config, dict):
        config = pickle.loads(config)
    module = sys.modules[__name__]
    for k, v in config.items():
        if k in _DEFAULTS or k in _ALIASES:
            setattr(module, k, v)


def patch(arg1=None, arg2=None, **kwargs):
    """Change settings for a while: ``with config.patch(verbose=True):``, also
    ``patch("verbose", True)``, ``patch({"verbose": True})``, or as a function decorator.
    Unknown names are an AttributeError on entry."""
    changes = {}
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    elif arg1 is not None:
        raise TypeError("patch() takes a setting name and value, a dict, or keyword arguments")
    changes.update(kwargs)
    return _ConfigPatch(changes)


class _ConfigPatch(contextlib.ContextDecorator):
    """What ``config.patch`` returns: a context manager that is also a decorator."""

    def __init__(self, changes):
        self.changes = changes
        self._saved = []

    def __enter__(self):
        module = sys.modules[__name__]
        for k in self.changes:
            _resolve(k)
        self._saved.append({k: getattr(module, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(module, k, v)
        return self

    def __exit__(self, *exc):
        module = sys.modules[__name__]
        for k, v in self._saved.pop().items():
            setattr(module, k, v)
        return False


class _ConfigModule(types.ModuleType):
    """The module type of this config: aliases and deprecated names are served, and
    assigning an unknown name is refused like torch's config modules do."""

    def __getattr__(self, name):
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        if name in _DEPRECATED:
            _warn_deprecated(name)
            return _deprecated_values[name]
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__"):
            return super().__setattr__(name, value)
        name = _resolve(name)
        if name in _DEPRECATED:
            _warn_deprecated(name)
            _deprecated_values[name] = value
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ConfigModule
