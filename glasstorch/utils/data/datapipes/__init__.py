"""glasstorch.utils.data.datapipes: torch's (deprecated) DataPipes, the part libraries use:
the ``IterDataPipe``/``MapDataPipe`` bases with functional forms, ``IterableWrapper`` and the
buffered ``Shuffler``."""

from . import iter  # noqa: F401  (torch.utils.data.datapipes.iter)
from .datapipe import DataChunk, IterDataPipe, MapDataPipe  # noqa: F401
