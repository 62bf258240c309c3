"""glasstorch.linalg: linear algebra, mirroring torch.linalg.

The functions are defined once in ``glasstorch._ops.linalg`` (next to the flat
``torch.matmul``, ``torch.det``...) and collected here under their torch.linalg names.
"""

from ._ops import linalg as _impl

LinAlgError = _impl.LinAlgError

globals().update(_impl.LINALG)

__all__ = ["LinAlgError"] + sorted(_impl.LINALG)
