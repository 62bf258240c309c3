"""glasstorch.autograd: the define-by-run graph, its engine, and grad modes."""

from . import _tensor_api  # noqa: F401  (attaches Tensor.backward and hooks)
from .engine import backward, grad
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node

__all__ = ["detect_anomaly", "set_detect_anomaly", "Function", "FunctionCtx", "once_differentiable", "backward", "grad", "gradcheck", "gradgradcheck", "Node", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled"]
