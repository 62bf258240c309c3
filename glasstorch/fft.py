"""glasstorch.fft: discrete Fourier transforms, mirroring torch.fft.

The transforms are defined once in ``glasstorch._ops.fft`` (with their autograd nodes) and
collected here under torch.fft's names.
"""

import sys

from ._ops import fft as _impl

globals().update({name: getattr(_impl, name) for name in _impl.FFT_NAMES})

__all__ = list(_impl.FFT_NAMES)

from . import overrides as _overrides  # noqa: E402
from ._tensor import Tensor  # noqa: E402,F401  (torch.fft.Tensor, as torch's)

_overrides._install_module(sys.modules[__name__])
