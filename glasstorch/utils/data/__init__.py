"""``glasstorch.utils.data``: datasets, samplers and the DataLoader (torch.utils.data)."""

from . import datapipes, graph_settings  # noqa: F401  (torch.utils.data.datapipes)
from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info
from .datapipes import DataChunk, IterDataPipe, MapDataPipe  # noqa: F401
from .dataset import (
           ChainDataset,
           ConcatDataset,
           Dataset,
           IterableDataset,
           StackDataset,
           Subset,
           TensorDataset,
           random_split,
)
from .distributed import DistributedSampler
from .sampler import (
           BatchSampler,
           RandomSampler,
           Sampler,
           SequentialSampler,
           SubsetRandomSampler,
           WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "_DatasetKind", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
