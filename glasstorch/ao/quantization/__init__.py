"""``torch.ao.quantization``: eager-mode post-training quantization (static and dynamic):
observers, QConfig, QuantStub/DeQuantStub, fuse_modules, prepare, convert,
quantize_dynamic; FX graph mode in ``quantize_fx`` with ``QConfigMapping``."""

from .fake_quantize import *  # noqa: F401,F403
from .fake_quantize import __all__ as _fake_quantize_all
from .fuse_modules import fuse_modules, fuse_modules_qat
from .observer import *  # noqa: F401,F403
from .observer import __all__ as _observer_all
from .qconfig import *  # noqa: F401,F403
from .qconfig import __all__ as _qconfig_all
from .qconfig_mapping import QConfigMapping, get_default_qconfig_mapping
from .quantization_mappings import *  # noqa: F401,F403
from .quantization_mappings import __all__ as _mappings_all
from .quantize import (
    add_quant_dequant,
    convert,
    prepare,
    prepare_qat,
    propagate_qconfig_,
    quantize,
    quantize_dynamic,
    quantize_qat,
    swap_module,
)
from .stubs import DeQuantStub, QuantStub, QuantWrapper

__all__ = (list(_observer_all) + list(_qconfig_all) + list(_mappings_all)
           + list(_fake_quantize_all) + ["prepare_qat", "quantize_qat",
    "fuse_modules", "fuse_modules_qat", "prepare", "convert", "quantize", "quantize_dynamic",
    "propagate_qconfig_", "swap_module", "add_quant_dequant", "QuantStub", "DeQuantStub",
    "QuantWrapper", "QConfigMapping", "get_default_qconfig_mapping",
])
