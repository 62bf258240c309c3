"""Eager-mode fusion: replace runs of modules (conv, bn, relu / linear, bn, relu) by one
fused module, folding eval-mode batch norm into the preceding layer."""

from __future__ import annotations

import copy

from glasstorch import nn
from glasstorch.ao.nn import intrinsic as nni
from glasstorch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["fuse_modules", "fuse_known_modules", "get_fuser_method", "fuse_conv_bn",
           "fuse_conv_bn_relu", "fuse_linear_bn"]


def fuse_conv_bn(is_qat, conv, bn):
    """Conv + BatchNorm: the folded conv (eval) or ConvBn (QAT)."""
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        if bn.num_features != conv.out_channels:
            raise AssertionError("Output channel of Conv2d must match num_features of "
                                 "BatchNorm2d")
        return {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d,
                nn.Conv3d: nni.ConvBn3d}[type(conv)](conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    """Conv + BatchNorm + ReLU: ConvReLU over the folded conv (eval) or ConvBnReLU (QAT)."""
    if conv.training != bn.training or bn.training != relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        return {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d,
                nn.Conv3d: nni.ConvBnReLU3d}[type(conv)](conv, bn, relu)
    fused = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d,
             nn.Conv3d: nni.ConvReLU3d}[type(conv)]
    return fused(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    """Linear + BatchNorm1d: the folded linear (eval) or LinearBn1d (QAT)."""
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if is_qat:
        return nni.LinearBn1d(linear, bn)
    return fuse_linear_bn_eval(linear, bn)


def _sequential(cls):
    return lambda is_qat, *mods: cls(*mods)


_FUSER = {
    (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv1d, nn.ReLU): _sequential(nni.ConvReLU1d),
    (nn.Conv2d, nn.ReLU): _sequential(nni.ConvReLU2d),
    (nn.Conv3d, nn.ReLU): _sequential(nni.ConvReLU3d),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.Linear, nn.ReLU): _sequential(nni.LinearReLU),
    (nn.BatchNorm2d, nn.ReLU): _sequential(nni.BNReLU2d),
    (nn.BatchNorm3d, nn.ReLU): _sequential(nni.BNReLU3d),
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The function fusing modules of the types in ``op_list``."""
    mapping = {**_FUSER, **(additional_fuser_method_mapping or {})}
    fn = mapping.get(tuple(op_list))
    if fn is None:
        raise AssertionError(f"did not find fuser method for: {tuple(op_list)} ")
    return fn


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """The fused modules for ``mod_list``: the fused one first, then Identity for each of
    the others."""
    types = tuple(type(m) for m in mod_list)
    fuser = get_fuser_method(types, additional_fuser_method_mapping)
    new = [None] * len(mod_list)
    fused = fuser(is_qat, *mod_list)
    # hooks of the first module stay with the fused one; the last one's forward hooks too
    for h in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(h)
    for h in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(h)
    new[0] = fused
    for i in range(1, len(mod_list)):
        ident = nn.Identity()
        ident.training = mod_list[0].training
        new[i] = ident
    return new


def _get_module(model, name):
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set_module(model, name, new):
    parts = name.split(".")
    for part in parts[:-1]:
        model = getattr(model, part)
    setattr(model, parts[-1], new)


def _fuse_modules(model, modules_to_fuse, is_qat, fuser_func=fuse_known_modules,
                  fuse_custom_config_dict=None):
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    mods = [_get_module(model, n) for n in modules_to_fuse]
    new = fuser_func(mods, is_qat, extra)
    for name, m in zip(modules_to_fuse, new):
        _set_module(model, name, m)


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuse each listed run of submodules (names like ``['conv1', 'bn1', 'relu1']``, or a
    list of such lists) into one module; the others become Identity. Eval-mode batch norm is
    folded into the conv/linear. Returns the model (a fused copy unless ``inplace``)."""
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(m, str) for m in modules_to_fuse):
        modules_to_fuse = [modules_to_fuse]
    for group in modules_to_fuse:
        _fuse_modules(model, group, False, fuser_func, fuse_custom_config_dict)
    return model


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """``fuse_modules`` for quantization-aware training (batch norm kept, as ConvBn...)."""
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(m, str) for m in modules_to_fuse):
        modules_to_fuse = [modules_to_fuse]
    for group in modules_to_fuse:
        _fuse_modules(model, group, True, fuser_func, fuse_custom_config_dict)
    return model
