"""DistributedSampler: each of ``num_replicas`` ranks gets a disjoint, equally long shard."""

from __future__ import annotations

import math

from ... import debug as _debug
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices for one rank: the (optionally shuffled) index list is padded by wrapping around
    (or truncated with ``drop_last``) to a multiple of ``num_replicas``, then rank ``r`` takes
    every ``num_replicas``-th index starting at ``r``. The shuffle is seeded by
    ``seed + epoch``; call ``set_epoch`` each epoch so the order changes."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            # glasstorch has no process groups to ask for the world size or rank.
            raise ValueError("Default process group has not been initialized: glasstorch has "
                             "no torch.distributed process group, so pass num_replicas and "
                             "rank explicitly")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle and _debug._on:
            _debug._impl().sampler_iter(self)
        if self.shuffle:
            import glasstorch
            g = glasstorch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = glasstorch.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch that (with ``seed``) determines this pass's shuffle."""
        self.epoch = epoch
        self.__dict__["_gt_set_epoch_called"] = True
