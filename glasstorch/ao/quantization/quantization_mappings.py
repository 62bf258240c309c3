"""Which quantized module replaces which float module in ``convert`` and
``quantize_dynamic``."""

from __future__ import annotations

import copy

from glasstorch import nn
from glasstorch.ao.nn import intrinsic as nni
from glasstorch.ao.nn import qat as nnqat
from glasstorch.ao.nn import quantized as nnq
from glasstorch.ao.nn.intrinsic import qat as nniqat
from glasstorch.ao.nn.intrinsic import quantized as nniq
from glasstorch.ao.nn.intrinsic.quantized import dynamic as nniqd
from glasstorch.ao.nn.quantized import dynamic as nnqd

from .stubs import DeQuantStub, QuantStub

__all__ = [
    "DEFAULT_STATIC_QUANT_MODULE_MAPPINGS", "DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS",
    "DEFAULT_QAT_MODULE_MAPPINGS", "get_default_qat_module_mappings",
    "get_default_static_quant_module_mappings", "get_default_dynamic_quant_module_mappings",
    "get_default_qconfig_propagation_list", "no_observer_set",
]

DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: nnq.Quantize,
    DeQuantStub: nnq.DeQuantize,
    nn.Conv1d: nnq.Conv1d,
    nn.Conv2d: nnq.Conv2d,
    nn.Conv3d: nnq.Conv3d,
    nn.Linear: nnq.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnq.Linear,
    nn.BatchNorm2d: nnq.BatchNorm2d,
    nn.BatchNorm3d: nnq.BatchNorm3d,
    nn.LayerNorm: nnq.LayerNorm,
    nn.GroupNorm: nnq.GroupNorm,
    nn.InstanceNorm1d: nnq.InstanceNorm1d,
    nn.InstanceNorm2d: nnq.InstanceNorm2d,
    nn.InstanceNorm3d: nnq.InstanceNorm3d,
    nn.ReLU6: nnq.ReLU6,
    nn.Hardswish: nnq.Hardswish,
    nn.LeakyReLU: nnq.LeakyReLU,
    nn.ELU: nnq.ELU,
    nn.Dropout: nnq.Dropout,
    nni.ConvReLU1d: nniq.ConvReLU1d,
    nni.ConvReLU2d: nniq.ConvReLU2d,
    nni.ConvReLU3d: nniq.ConvReLU3d,
    nni.BNReLU2d: nniq.BNReLU2d,
    nni.BNReLU3d: nniq.BNReLU3d,
    nni.LinearReLU: nniq.LinearReLU,
    nnq.FloatFunctional: nnq.QFunctional,
    nnqat.Linear: nnq.Linear,
    nnqat.Conv2d: nnq.Conv2d,
    nniqat.LinearReLU: nniq.LinearReLU,
    nniqat.ConvReLU2d: nniq.ConvReLU2d,
}

DEFAULT_QAT_MODULE_MAPPINGS = {
    nn.Conv2d: nnqat.Conv2d,
    nn.Linear: nnqat.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnqat.Linear,
    nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.LinearReLU: nniqat.LinearReLU,
}

DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS = {
    nn.Linear: nnqd.Linear,
    nn.LSTM: nnqd.LSTM,
    nn.GRU: nnqd.GRU,
    nn.LSTMCell: nnqd.LSTMCell,
    nn.GRUCell: nnqd.GRUCell,
    nn.RNNCell: nnqd.RNNCell,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnqd.Linear,
    nni.LinearReLU: nniqd.LinearReLU,
}

# float modules torch also observes (and so gives qconfig) though glasstorch has no quantized
# kernel for them yet: their outputs still get observers, as in torch
_OBSERVED_WITHOUT_KERNEL = {
    nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Embedding,
    nn.EmbeddingBag, nn.PReLU,
}


def get_default_static_quant_module_mappings():
    """A copy of the float -> quantized module mapping ``convert`` uses."""
    return copy.deepcopy(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings():
    """A copy of the float -> QAT module mapping ``prepare_qat`` uses."""
    return copy.deepcopy(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_dynamic_quant_module_mappings():
    """A copy of the float -> dynamically quantized module mapping."""
    return DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS


def get_default_qconfig_propagation_list():
    """The module types ``prepare`` gives a qconfig (and an output observer)."""
    return (set(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS) | set(DEFAULT_QAT_MODULE_MAPPINGS)
            | set(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)
            | _OBSERVED_WITHOUT_KERNEL | {nn.Sequential})


def no_observer_set():
    """Module types that never get an output observer."""
    return set()
