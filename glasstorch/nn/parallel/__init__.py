"""glasstorch.nn.parallel: DataParallel and DistributedDataParallel for this CPU build."""

from __future__ import annotations

from ..modules.module import Module
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """With no GPUs (always, here) torch's DataParallel simply runs the wrapped module."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module on the inputs unchanged (there is no device to scatter to)."""
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch raises this on a machine without accelerators; so does glasstorch."""
    raise RuntimeError("device type could not be determined")
