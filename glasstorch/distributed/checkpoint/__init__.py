"""torch.distributed.checkpoint: every rank saves and loads its own part of a state dict.

``save`` flattens nested dicts to dotted keys; each rank writes the tensors it holds to its
own file (``__<rank>_0.distcp``) and rank 0 writes the index (``.metadata``): a plain tensor
or an object once (by rank 0), a DTensor as one chunk per distinct shard with its global
offsets. ``load`` fills the given state dict in place, each rank reading the region its own
tensors cover, so a checkpoint saved with one sharding loads into another. The files are
glasstorch's own (pickled chunks), not torch's storage layout."""

from .api import CheckpointException
from .filesystem import FileSystemReader, FileSystemWriter
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import save, save_state_dict

__all__ = ["save", "load", "save_state_dict", "load_state_dict", "FileSystemWriter",
           "FileSystemReader", "CheckpointException"]
