"""Helpers shared by the quantized modules."""

from __future__ import annotations

import glasstorch as torch
from glasstorch._ops import quantized as _q

__all__ = []


def _zeros_qweight(shape):
    # torch's initial weight: a zero qint8 tensor with scale 1, zero point 0
    import numpy as np
    return _q._make(np.zeros(shape, np.int8), torch.qint8, torch.per_tensor_affine, 1.0, 0)


def _quantize_weight(float_wt, observer):
    """``float_wt`` quantized with the qparams of ``observer`` (which has seen it)."""
    scale, zp = observer.calculate_qparams()
    if observer.qscheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return torch.quantize_per_tensor(float_wt.detach(), float(scale), int(zp), torch.qint8)
    if observer.qscheme in (torch.per_channel_affine, torch.per_channel_symmetric):
        return torch.quantize_per_channel(float_wt.detach(), scale.to(torch.double),
                                          zp.to(torch.int64), observer.ch_axis, torch.qint8)
    raise ValueError(f"Unexpected qscheme {observer.qscheme}")


def _unwrap_fused(mod):
    """The float layer inside a fused module (``nni.LinearReLU`` -> its Linear)."""
    from ...intrinsic.modules.fused import _FusedModule
    return mod[0] if isinstance(mod, _FusedModule) else mod
