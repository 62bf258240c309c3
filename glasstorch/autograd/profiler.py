"""``torch.autograd.profiler``: the legacy profiler API, on glasstorch's profiler.

``profile`` records what ``torch.profiler.profile`` records (ops, backward nodes, optimizer
steps) with the legacy keywords; its events are ``function_events`` (an ``EventList``).
"""

from __future__ import annotations

import warnings

from ..profiler.profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    kineto_available,
    record_function,
)
from ..profiler.profiler import profile as _profile

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent",
           "FunctionEventAvg", "kineto_available"]


class profile(_profile):
    """The legacy autograd profiler: ``with profile() as prof: ...`` then
    ``prof.key_averages().table()``; ``enabled=False`` records nothing (and, as in torch,
    the ``with`` target is None)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        if use_cuda or use_device not in (None, "cpu"):
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops,
                         with_modules=with_modules, acc_events=acc_events)
        self.enabled = enabled
        self.function_events = None

    def __enter__(self):
        if not self.enabled:
            return None
        self.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop()
            self.function_events = self.events()
        return False


class emit_nvtx:
    """NVTX ranges for a CUDA profiler: raises on entry, as torch built without CUDA does."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, *exc):
        return False
