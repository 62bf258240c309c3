"""torch.jit.annotations: the typing names and helpers TorchScript annotations are written
with (``from torch.jit.annotations import List, BroadcastingList2``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401, UP035

from ..futures import Future  # noqa: F401
from ._internal import (  # noqa: F401
    BroadcastingList1,
    BroadcastingList2,
    BroadcastingList3,
    is_dict,
    is_list,
    is_optional,
    is_tuple,
    is_union,
)
