"""glasstorch.autograd: the define-by-run graph, its engine, grad modes and tools."""

from . import (
    _tensor_api,  # noqa: F401  (attaches Tensor.backward and hooks)
    forward_ad,
    functional,
    graph,
)
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node
from .variable import Variable

__all__ = ["Variable", "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "Node",
           "gradcheck", "gradgradcheck", "detect_anomaly", "set_detect_anomaly", "functional",
           "graph", "forward_ad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]
