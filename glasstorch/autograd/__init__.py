"""glasstorch.autograd: grad modes now; the graph engine arrives with the autograd issue."""

from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
