"""Eager-mode workflow: ``prepare`` (propagate qconfigs, attach observers), calibrate by
running the model, ``convert`` (swap observed float modules for quantized ones);
``quantize`` and ``quantize_dynamic`` wrap the steps."""

from __future__ import annotations

import copy
import warnings

from glasstorch import nn
from glasstorch.ao.nn.intrinsic.modules.fused import _FusedModule

from .fake_quantize import FakeQuantizeBase
from .observer import ObserverBase
from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from .quantization_mappings import (
    get_default_dynamic_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_qconfig_propagation_list,
    get_default_static_quant_module_mappings,
)
from .stubs import DeQuantStub

__all__ = ["propagate_qconfig_", "add_quant_dequant", "prepare", "convert", "quantize",
           "quantize_dynamic", "swap_module", "prepare_qat", "quantize_qat"]


def _propagate(module, qconfig_dict, parent_qconfig=None, prefix="", allow_list=None):
    qconfig = qconfig_dict.get(type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, prefix + "." + name if prefix else name,
                   allow_list)


def propagate_qconfig_(module, qconfig_dict=None, prepare_custom_config_dict=None):
    """Give every submodule a ``qconfig``: its own, else one from ``qconfig_dict`` (keyed by
    type or qualified name), else its parent's."""
    _propagate(module, qconfig_dict or {})


def _observer_forward_hook(self, input, output):
    return self.activation_post_process(output)


def _needs_observation(m):
    return getattr(m, "qconfig", None) is not None


def _insert_observer(m):
    # DeQuantStub's output is float: nothing to observe
    if _needs_observation(m) and not isinstance(m, DeQuantStub):
        m.add_module("activation_post_process", m.qconfig.activation())
        m.register_forward_hook(_observer_forward_hook)


def _add_observer_(module, propagation_list, non_leaf=frozenset()):
    from glasstorch.ao.nn.quantized import FloatFunctional, QFunctional
    for child in module.children():
        if type(child) in (FloatFunctional, QFunctional):
            # its methods call activation_post_process themselves: no hook
            if _needs_observation(child):
                child.activation_post_process = child.qconfig.activation()
        elif isinstance(child, _FusedModule) or type(child) in non_leaf:
            # fused and QAT modules are observed as a whole (their insides are not)
            if _needs_observation(child):
                _insert_observer(child)
        else:
            _add_observer_(child, propagation_list, non_leaf)
    if not list(module.children()) and not isinstance(module, nn.Sequential) \
            and type(module) in propagation_list:
        _insert_observer(module)


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Attach observers (from each module's qconfig) to the modules that will be quantized;
    returns the prepared model (a copy unless ``inplace``). Run calibration data through it,
    then ``convert``."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    if not any(getattr(m, "qconfig", None) for m in model.modules()):
        warnings.warn("None of the submodule got qconfig applied. Make sure you passed correct "
                      "configuration through `qconfig_dict` or by assigning the `.qconfig` "
                      "attribute directly on submodules", stacklevel=2)
    _add_observer_(model, allow_list or get_default_qconfig_propagation_list(),
                   frozenset(observer_non_leaf_module_list or ()))
    return model


def _remove_qconfig(module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    if isinstance(getattr(module, "activation_post_process", None),
                  (ObserverBase, FakeQuantizeBase)):
        del module.activation_post_process
        from glasstorch.ao.nn.quantized import FloatFunctional, QFunctional
        if type(module) in (FloatFunctional, QFunctional):
            module.activation_post_process = nn.Identity()
        for k, h in list(module._forward_hooks.items()):
            if h is _observer_forward_hook:
                del module._forward_hooks[k]


def swap_module(mod, mapping, custom_module_class_mapping=None,
                use_precomputed_fake_quant=False):
    """The quantized replacement of ``mod`` from ``mapping`` (``mod`` itself when it has no
    qconfig or no entry). Forward hooks other than the observer's carry over."""
    if getattr(mod, "qconfig", None) is None:
        return mod
    target = (custom_module_class_mapping or {}).get(type(mod)) or mapping.get(type(mod))
    if target is None:
        return mod
    new = target.from_float(mod)
    for h in mod._forward_pre_hooks.values():
        new.register_forward_pre_hook(h)
    for h in mod._forward_hooks.values():
        if h is not _observer_forward_hook:
            new.register_forward_hook(h)
    return new


def _convert(module, mapping, custom_mapping):
    swaps = {}
    for name, child in module.named_children():
        if not isinstance(child, _FusedModule) and type(child) not in custom_mapping:
            _convert(child, mapping, custom_mapping)
        swaps[name] = swap_module(child, mapping, custom_mapping)
    for name, new in swaps.items():
        if new is not getattr(module, name):
            setattr(module, name, new)


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Swap every observed module for its quantized counterpart (``mapping``: float type ->
    quantized type, torch's default static mapping by default); returns the converted model
    (a copy unless ``inplace``)."""
    if is_reference:
        raise NotImplementedError("glasstorch: reference quantized modules (is_reference=True) "
                                  "are not supported")
    if not inplace:
        module = copy.deepcopy(module)
    custom = (convert_custom_config_dict or {}).get("observed_to_quantized_custom_module_class",
                                                    {})
    _convert(module, mapping or get_default_static_quant_module_mappings(), custom)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, ``run_fn(model, run_args)`` to calibrate, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, run_args)
    convert(model, mapping, inplace=True)
    return model


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """Replace the listed module types (by default Linear) with dynamically quantized ones:
    int8 weights now, activations quantized on the fly. ``qconfig_spec`` is a set of types
    or a dict of type/name -> qconfig."""
    import glasstorch as torch
    if dtype is None:
        dtype = torch.qint8
    if qconfig_spec is None:
        if dtype in (torch.qint8, torch.float16):
            qconfig_spec = dict.fromkeys((nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell,
                                          nn.GRUCell), default_dynamic_qconfig
                                         if dtype is torch.qint8 else float16_dynamic_qconfig)
        else:
            raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                             "Provide full qconfig please")
    elif isinstance(qconfig_spec, set):
        if dtype is torch.qint8:
            default = default_dynamic_qconfig
        elif dtype is torch.float16:
            default = float16_dynamic_qconfig
        else:
            raise RuntimeError(f"Unknown dtype specified for quantize_dynamic: {dtype}")
        qconfig_spec = dict.fromkeys(qconfig_spec, default)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    convert(model, mapping, inplace=True)
    return model


def add_quant_dequant(module):
    """Wrap every leaf module that has a qconfig in a QuantWrapper."""
    from .stubs import QuantWrapper
    if not list(module.children()) and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        setattr(module, name, add_quant_dequant(child))
    return module


def prepare_qat(model, mapping=None, inplace=False):
    """Swap modules for their QAT versions (weights fake-quantized) and attach fake-quantize
    modules to their outputs; train the result, then ``convert``."""
    from glasstorch.ao.nn.intrinsic.modules.fused import (
        ConvBn1d,
        ConvBn2d,
        ConvBn3d,
        ConvBnReLU1d,
        ConvBnReLU2d,
        ConvBnReLU3d,
        LinearBn1d,
    )
    if not model.training:
        raise AssertionError("prepare_qat only works on models in training mode")
    if mapping is None:
        mapping = get_default_qat_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    for name, m in model.named_modules():
        if isinstance(m, (ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d,
                          ConvBnReLU3d, LinearBn1d)) and getattr(m, "qconfig", None) is not None:
            raise NotImplementedError(f"glasstorch: QAT with batch norm kept ({type(m).__name__} "
                                      f"'{name}') is not supported; fuse in eval mode (folding "
                                      f"the batch norm) or leave the batch norm unfused")
    convert(model, mapping=mapping, inplace=True, remove_qconfig=False)
    prepare(model, inplace=True, observer_non_leaf_module_list=set(mapping.values()))
    return model


def quantize_qat(model, run_fn, run_args, inplace=False):
    """prepare_qat, ``run_fn(model, *run_args)`` to train, convert."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, inplace=True)
    return model
