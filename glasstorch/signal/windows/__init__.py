"""glasstorch.signal.windows: the window functions of torch.signal.windows (SciPy-style
``sym`` keyword, float32/float64 only)."""

import sys

from .windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

from ... import overrides as _overrides  # noqa: E402

_overrides._install_module(sys.modules[__name__])
