"""Datasets: map-style ``Dataset``, ``IterableDataset`` and their combinators, ``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``).

    ``__getitems__(indices)`` may be defined to fetch a whole batch at once; the DataLoader
    uses it when present."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses implement ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy, so shard inside ``__iter__``
    with ``get_worker_info()`` or the data is duplicated once per worker."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the ``index``-th rows of each tensor (all share the first dimension)."""

    def __init__(self, *tensors):
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), \
            "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zip datasets of equal length: positional ones give tuples, keyword ones give dicts."""

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """A batch of samples, using each dataset's own ``__getitems__`` where it has one."""
        n = len(indices)
        if isinstance(self.datasets, dict):
            batch = [{} for _ in range(n)]
            for k, d in self.datasets.items():
                for sample, value in zip(batch, self._column(d, indices)):
                    sample[k] = value
            return batch
        columns = [self._column(d, indices) for d in self.datasets]
        return [tuple(row) for row in zip(*columns)]

    @staticmethod
    def _column(d, indices):
        if callable(getattr(d, "__getitems__", None)):
            items = d.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. Expected "
                                 f"{len(indices)}, got {len(items)}")
            return items
        return [d[i] for i in indices]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another."""

    @staticmethod
    def cumsum(sequence):
        """Running totals of the datasets' lengths: where each dataset ends in the concatenation."""
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), \
                "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (chained lazily)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths, or of
    fractions of its length (which must sum to 1; the remainder goes round-robin)."""
    from ... import randperm
    from ..._core.random import default_generator
    if generator is None:
        generator = default_generator
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - size:end])
            for end, size in zip(itertools.accumulate(lengths), lengths)]
