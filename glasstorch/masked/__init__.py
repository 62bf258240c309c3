"""torch.masked: reductions and normalizations that skip masked-out elements.

The MaskedTensor class (``masked_tensor``, ``as_masked_tensor``) is not provided yet."""

from ._ops import *  # noqa: F401,F403
from ._ops import __all__  # noqa: F401
