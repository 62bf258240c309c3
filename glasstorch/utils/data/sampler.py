"""Samplers: iterables of dataset indices (or of index batches) for the DataLoader."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


def _torch():
    # The package imports this module while glasstorch itself is still importing.
    import glasstorch
    return glasstorch


def _check_positive_int(value, what, allow_bool=False):
    if (not isinstance(value, int) or (isinstance(value, bool) and not allow_bool)
            or value <= 0):
        raise ValueError(f"{what} should be a positive integer value, but got {what}={value}")


class Sampler(Generic[T_co]):
    """Base class: subclasses implement ``__iter__`` (and ``__len__`` where it is known)."""

    def __init__(self, data_source=None):
        if data_source is not None:
            import warnings
            warnings.warn("`data_source` argument is not used and will be removed in 2.2.0."
                          "You may still have custom implementation that utilizes it.",
                          stacklevel=2)

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Indices ``0 .. len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    # Like torch: without a generator, seed a private one from the global RNG each epoch.
    torch = _torch()
    seed = int(torch.empty((), dtype=torch.int64).random_().item())
    g = torch.Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """Random indices: a permutation per pass (``replacement=False``) or independent draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        """How many indices one pass yields: ``num_samples`` when given, else the dataset's
        length."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        torch = _torch()
        n = len(self.data_source)
        g = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # Draw in chunks so a long pass does not hold one huge index tensor.
            for _ in range(self.num_samples // 32):
                yield from torch.randint(0, n, (32,), generator=g).tolist()
            yield from torch.randint(0, n, (self.num_samples % 32,), generator=g).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from torch.randperm(n, generator=g).tolist()
            yield from torch.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (without replacement)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        perm = _torch().randperm(len(self.indices), generator=self.generator).tolist()
        for i in perm:
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive_int(num_samples, "num_samples")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        torch = _torch()
        weights_tensor = torch.as_tensor(weights, dtype=torch.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rand = _torch().multinomial(self.weights, self.num_samples, self.replacement,
                                    generator=self.generator)
        yield from iter(rand.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int(batch_size, "batch_size")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        size = self.batch_size
        batch = []
        append = batch.append
        for idx in it:
            append(idx)
            if len(batch) == size:
                yield batch
                batch = []
                append = batch.append
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
