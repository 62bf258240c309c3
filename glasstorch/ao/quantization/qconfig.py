"""QConfig: which observer (class or ``with_args`` factory) watches a module's activations
and which its weights; the default configurations of each backend."""

from __future__ import annotations

from collections import namedtuple

import glasstorch as torch
from glasstorch import nn

from .fake_quantize import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    default_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
)
from .observer import (
    HistogramObserver,
    MovingAverageMinMaxObserver,
    PlaceholderObserver,
    default_debug_observer,
    default_dynamic_quant_observer,
    default_float_qparams_observer,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_weight_observer,
)

__all__ = [
    "QConfig", "QConfigAny", "get_default_qconfig", "default_qconfig", "default_debug_qconfig",
    "default_per_channel_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
    "float16_static_qconfig", "per_channel_dynamic_qconfig",
    "float_qparams_weight_only_qconfig", "qconfig_equals", "get_default_qat_qconfig",
    "default_qat_qconfig",
]

_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """A pair of observer factories (``activation``, ``weight``); each is called to make a
    fresh observer per module. Instances are refused: pass classes or ``with_args``."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError(
                "QConfig received observer instance, please pass observer class instead. "
                "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigAny = QConfig | None

default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer,
                                activation=default_debug_observer)
default_per_channel_qconfig = QConfig(activation=default_observer,
                                      weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=torch.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=torch.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=torch.float16),
                                 weight=PlaceholderObserver.with_args(dtype=torch.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)


def get_default_qconfig(backend="x86", version=0):
    """The post-training static quantization QConfig of ``backend`` ('x86', 'fbgemm',
    'qnnpack' or 'onednn'): a histogram observer on activations (7-bit range for x86/fbgemm)
    and symmetric qint8 weights (per channel except qnnpack)."""
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             f"{_BACKENDS}")
    if version != 0:
        return default_qconfig
    if backend in ("fbgemm", "x86"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)


def get_default_qat_qconfig(backend="x86", version=1):
    """The quantization-aware training QConfig of ``backend``: fake quantization over moving
    average observers (``version=1``: the fused observer + fake-quantize module;
    ``version=0``: FakeQuantize)."""
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             f"{_BACKENDS}")
    if version not in (0, 1):
        return default_qat_qconfig
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    kw = {"reduce_range": backend in ("fbgemm", "x86")} if backend != "onednn" else {}
    act = fq.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **kw)
    if backend == "qnnpack":
        weight = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    else:
        weight = default_per_channel_weight_fake_quant if version == 0 \
            else default_fused_per_channel_wt_fake_quant
    return QConfig(activation=act, weight=weight)


def _partial_key(f):
    p = getattr(f, "p", None)
    if p is not None:
        return (p.func, p.args, tuple(sorted(p.keywords.items(), key=lambda kv: kv[0])))
    return f


def qconfig_equals(q1, q2):
    """Whether two QConfigs build the same observers."""
    if q1 is None or q2 is None:
        return q1 is q2
    return (_partial_key(q1.activation) == _partial_key(q2.activation)
            and _partial_key(q1.weight) == _partial_key(q2.weight))
