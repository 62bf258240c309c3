"""``ShufflerIterDataPipe`` (functional name ``shuffle``): a buffered shuffle."""

import random
from collections.abc import Sized

from ..datapipe import IterDataPipe

__all__ = ["ShufflerIterDataPipe"]


class ShufflerIterDataPipe(IterDataPipe):
    """Yields ``datapipe``'s items in random order: a buffer of ``buffer_size`` items is
    filled, then each new item replaces a randomly chosen one that is yielded. Each iteration
    draws its seed from glasstorch's generator unless ``set_seed`` gave one."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        if unbatch_level:
            raise NotImplementedError("glasstorch: Shuffler(unbatch_level=) needs the unbatch "
                                      "DataPipe, which glasstorch does not have")
        self.datapipe = datapipe
        self.buffer_size = buffer_size
        self._buffer = []
        self._enabled = True
        self._seed = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        for x in self.datapipe:
            if len(self._buffer) == self.buffer_size:
                i = self._rng.randint(0, len(self._buffer) - 1)
                x, self._buffer[i] = self._buffer[i], x
                yield x
            else:
                self._buffer.append(x)
        while self._buffer:
            yield self._buffer.pop(self._rng.randint(0, len(self._buffer) - 1))

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")

    def reset(self):
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                import glasstorch  # (its default generator; imported late: a cycle)
                self._seed = int(glasstorch.empty((), dtype=glasstorch.int64).random_().item())
            self._rng.seed(self._seed)
            self._seed = None


IterDataPipe.register_datapipe_as_function("shuffle", ShufflerIterDataPipe)
