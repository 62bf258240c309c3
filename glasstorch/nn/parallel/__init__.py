"""glasstorch.nn.parallel: DataParallel and DistributedDataParallel for this CPU build."""

from __future__ import annotations

from ..modules.module import Module

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


class DistributedDataParallel(Module):
    """Wraps a module for data-parallel training in the default process group (one process
    for now: gradients need no averaging, so forward and backward are the module's own)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        from ... import distributed
        distributed.get_world_size()  # torch's error when no process group exists
        super().__init__()
        self.module = module
        self.device_ids = device_ids
        self.find_unused_parameters = find_unused_parameters

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def no_sync(self):
        import contextlib
        return contextlib.nullcontext()
