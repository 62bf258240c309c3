"""glasstorch.testing: torch.testing's public tools for tests: ``assert_close`` (compare
tensors, scalars, arrays and nested containers with per-dtype tolerances), ``make_tensor``
(random tensors of a given shape and dtype) and the deprecated ``assert_allclose``.

torch also exports ``FileCheck``, a TorchScript IR matcher; glasstorch has no TorchScript
IR for it to match, so it is not provided.
"""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
