"""The iterable DataPipes glasstorch has: ``IterableWrapper`` and ``Shuffler``."""

from .combinatorics import ShufflerIterDataPipe
from .utils import IterableWrapperIterDataPipe

Shuffler = ShufflerIterDataPipe
IterableWrapper = IterableWrapperIterDataPipe

__all__ = ["IterableWrapper", "Shuffler"]
