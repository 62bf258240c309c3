"""``IterableWrapper``: any iterable as an IterDataPipe."""

import copy

from ..datapipe import IterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yields the items of ``iterable``; with ``deepcopy`` (the default) of a copy made for
    each iteration, so changes to the source do not show."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:  # not copyable (a generator): iterate it as it is
                pass
        yield from source

    def __len__(self):
        return len(self.iterable)
