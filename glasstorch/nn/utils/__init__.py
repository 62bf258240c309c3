"""glasstorch.nn.utils: gradient clipping, parameter vectors, parametrizations, fusion,
stateless calls and (in ``rnn``) packed sequences, as in torch.nn.utils."""

from . import parametrizations, parametrize, stateless
from .clip_grad import _clip_grads_with_norm_ as clip_grads_with_norm_  # noqa: I001
from .clip_grad import _get_total_norm as get_total_norm
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
    "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init", "spectral_norm",
    "stateless", "vector_to_parameters", "weight_norm",
]


def skip_init(module_cls, *args, **kwargs):
    """Build ``module_cls(*args, **kwargs)`` whose parameters' values are unspecified.

    torch builds it on the meta device and allocates uninitialised memory; here the
    module is built normally (its values are then one valid "uninitialised" state).
    """
    import inspect
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


def _in_memory_format(w, memory_format):
    # A copy laid out densely in the dim order of ``memory_format`` (strides of size-1
    # dims included, as torch's resize_ gives them, unlike contiguous() which may keep them).
    import glasstorch
    if memory_format is glasstorch.channels_last and w.ndim == 4:
        order, back = (0, 2, 3, 1), (0, 3, 1, 2)
    elif memory_format is glasstorch.channels_last_3d and w.ndim == 5:
        order, back = (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)
    else:
        return w.contiguous(memory_format=memory_format)
    src = w.permute(*order)
    return w.new_empty(src.shape).copy_(src).permute(*back)


def _convert_conv_weight_memory_format(module, memory_format, kinds):
    from ..modules import conv
    classes = tuple(getattr(conv, k) for k in kinds if hasattr(conv, k))
    if classes and isinstance(module, classes):
        module.weight.data = _in_memory_format(module.weight.detach(), memory_format)
    for child in module.children():
        _convert_conv_weight_memory_format(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weight of every Conv2d/ConvTranspose2d in ``module`` in ``memory_format``."""
    return _convert_conv_weight_memory_format(module, memory_format,
                                              ("Conv2d", "ConvTranspose2d"))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Lay out the weight of every Conv3d/ConvTranspose3d in ``module`` in ``memory_format``."""
    return _convert_conv_weight_memory_format(module, memory_format,
                                              ("Conv3d", "ConvTranspose3d"))


def __getattr__(name):
    # ``rnn`` is written separately; import it on first use so that this package
    # imports whether or not it exists yet. ``prune`` (which torch only provides once
    # imported) is loaded on first use too.
    if name in ("rnn", "prune"):
        import importlib
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
