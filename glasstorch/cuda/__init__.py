"""glasstorch.cuda: torch.cuda as a CPU-only torch build answers it (no CUDA backend yet).

Probes answer truthfully (``is_available()`` is False, ``device_count()`` 0, memory counters
0); seeding and cache-emptying are harmless no-ops, as in torch, so device-agnostic code runs;
anything that needs a GPU (streams, events, graphs, device properties) fails the way torch's
CPU build fails: ``AssertionError: Torch not compiled with CUDA enabled`` from the calls that
first initialise CUDA, RuntimeError from constructing CUDA objects.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from .._core.device import device as _device
from . import graphs, nvtx
from .graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "synchronize", "current_device", "get_device_name",
           "is_bf16_supported", "is_tf32_supported", "set_device", "is_initialized", "init",
           "Stream", "ExternalStream", "Event", "StreamContext", "stream", "current_stream",
           "default_stream", "set_stream", "CUDAGraph", "graph", "graphs", "graph_pool_handle",
           "make_graphed_callables", "is_current_stream_capturing", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "memory_stats_as_nested_dict", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached",
           "reset_accumulated_memory_stats", "empty_cache", "mem_get_info", "ipc_collect",
           "get_device_properties", "get_device_capability", "get_arch_list",
           "get_gencode_flags", "set_per_process_memory_fraction", "get_rng_state",
           "get_rng_state_all", "set_rng_state", "set_rng_state_all", "default_generators",
           "device", "device_of", "nvtx", "OutOfMemoryError"]


class OutOfMemoryError(RuntimeError):
    """Raised when a CUDA allocation fails (never, without CUDA)."""


def _lazy_init():
    """What torch's CPU build raises from every call that has to initialise CUDA."""
    raise AssertionError("Torch not compiled with CUDA enabled (glasstorch runs on the CPU "
                         "only for now; torch.cuda.is_available() is False)")


def _device_index(device) -> int:
    """The CUDA index ``device`` names (-1 for None or a negative int); ValueError for a
    device of another type, as torch."""
    if device is None:
        return -1
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _device) else _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return 0 if d.index is None else d.index


# -- probes and seeding
def is_available() -> bool:
    """False: glasstorch has no CUDA backend yet."""
    return False


def device_count() -> int:
    """0: there is no CUDA device."""
    return 0


def is_initialized() -> bool:
    """False: CUDA was never initialised (there is none)."""
    return False


def init() -> None:
    """Initialise CUDA: AssertionError, there is none."""
    _lazy_init()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no CUDA device."""
    return False


def is_tf32_supported() -> bool:
    """False: there is no CUDA device."""
    return False


def get_arch_list() -> list:
    """The CUDA architectures this build was compiled for: none."""
    return []


def get_gencode_flags() -> str:
    """The nvcc gencode flags of this build: none."""
    return ""


def manual_seed(seed: int) -> None:
    """A no-op without CUDA, as in torch (seeding code can run unchanged)."""


def manual_seed_all(seed: int) -> None:
    """A no-op without CUDA, as in torch."""


def seed() -> None:
    """Seed the CUDA generator randomly: a no-op without CUDA, as in torch."""


def seed_all() -> None:
    """Seed every CUDA generator randomly: a no-op without CUDA, as in torch."""


def initial_seed() -> int:
    """The CUDA generator's seed: AssertionError, there is no CUDA generator."""
    _lazy_init()


# torch.cuda.default_generators: one Generator per device, so none here
default_generators = ()


def get_rng_state(device="cuda"):
    """A CUDA generator's state: AssertionError, there is no CUDA generator."""
    _lazy_init()


def get_rng_state_all() -> list:
    """The states of all CUDA generators: an empty list."""
    return []


def set_rng_state(new_state, device="cuda") -> None:
    """Set a CUDA generator's state: nothing to set without CUDA (as in torch)."""


def set_rng_state_all(new_states) -> None:
    """Set every CUDA generator's state: nothing to set without CUDA (as in torch)."""


def synchronize(device=None) -> None:
    """Wait for a CUDA device: AssertionError, there is none."""
    _lazy_init()


def current_device() -> int:
    """The current CUDA device: AssertionError, there is none."""
    _lazy_init()


def get_device_name(device=None) -> str:
    """A CUDA device's name: AssertionError, there is none."""
    _lazy_init()


def get_device_properties(device=None):
    """A CUDA device's properties: AssertionError, there is none."""
    _lazy_init()


def get_device_capability(device=None) -> tuple:
    """A CUDA device's compute capability: AssertionError, there is none."""
    _lazy_init()


def set_device(device) -> None:
    """Select the current CUDA device: a negative index selects none (a no-op, as in torch);
    a non-CUDA device is a ValueError; any CUDA device an AssertionError."""
    if _device_index(device) >= 0:
        _lazy_init()


class device:  # noqa: N801 (torch's name)
    """Context manager that makes ``device`` the current CUDA device. Index -1 (what
    ``device_of`` gives for a CPU tensor) does nothing; a real CUDA index is a RuntimeError
    on entry, as in torch's CPU build."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx != -1:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


class device_of(device):  # noqa: N801
    """``device`` of a tensor's CUDA device; a CPU tensor gives index -1 (nothing happens)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# -- memory: nothing is allocated on a device that does not exist
def memory_allocated(device=None) -> int:
    """Bytes of CUDA memory held by tensors: 0."""
    return 0


def max_memory_allocated(device=None) -> int:
    """Peak bytes of CUDA memory held by tensors: 0."""
    return 0


def memory_reserved(device=None) -> int:
    """Bytes of CUDA memory held by the caching allocator: 0."""
    return 0


def max_memory_reserved(device=None) -> int:
    """Peak bytes held by the caching allocator: 0."""
    return 0


def memory_stats(device=None) -> dict:
    """The caching allocator's statistics: none were ever collected (an empty OrderedDict,
    as torch returns before CUDA is initialised)."""
    return OrderedDict()


def memory_stats_as_nested_dict(device=None) -> dict:
    """The allocator's statistics as a nested dict: empty."""
    return {}


def reset_peak_memory_stats(device=None) -> None:
    """Reset the allocator's peak counters: a non-CUDA device is a ValueError, otherwise
    AssertionError (there is no CUDA allocator)."""
    _device_index(device)
    _lazy_init()


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated spelling of ``reset_peak_memory_stats``: warns as torch does, then calls it."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    """Deprecated spelling of ``reset_peak_memory_stats``: warns as torch does, then calls it."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """Reset the allocator's accumulated counters: as ``reset_peak_memory_stats``."""
    _device_index(device)
    _lazy_init()


def empty_cache() -> None:
    """Release cached CUDA memory: there is none, so nothing happens (as in torch)."""


def ipc_collect() -> None:
    """Free CUDA memory shared between processes: AssertionError, there is no CUDA."""
    _lazy_init()


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of a CUDA device: AssertionError, there is none."""
    _lazy_init()


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Cap this process's share of a CUDA device's memory: AssertionError, there is none."""
    _lazy_init()


# -- streams and events
class Stream:
    """A CUDA stream. Constructing one needs CUDA: RuntimeError, as on torch's CPU build
    (``glasstorch.Stream()`` is the device-generic stream, which works on the CPU)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class ExternalStream(Stream):
    """A CUDA stream allocated outside torch; needs CUDA, like ``Stream``."""


class Event:
    """A CUDA event. Constructing one needs CUDA: RuntimeError (torch's CPU build refuses it
    too); ``glasstorch.Event()`` is the device-generic event."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, external=False):
        raise RuntimeError("torch.cuda.Event requires CUDA support: glasstorch runs on the "
                           "CPU only for now (torch.cuda.is_available() is False)")


def current_stream(device=None):
    """The current CUDA stream: AssertionError, there is no CUDA."""
    _lazy_init()


def default_stream(device=None):
    """The default CUDA stream: AssertionError, there is no CUDA."""
    _lazy_init()


def set_stream(stream) -> None:
    """Make ``stream`` current: None does nothing (as in torch); a stream needs CUDA."""
    if stream is None:
        return
    _lazy_init()


class StreamContext:
    """Context manager selecting a CUDA stream. Without CUDA (or with ``stream=None``) it does
    nothing, as in torch, so ``with torch.cuda.stream(s):`` code paths still run on the CPU."""

    def __init__(self, stream):
        self.stream = stream
        self.idx = -1

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream) -> StreamContext:
    """``StreamContext(stream)``: selects ``stream`` inside a ``with`` block (nothing happens
    without CUDA)."""
    return StreamContext(stream)


def _is_compiled() -> bool:
    """False: glasstorch has no CUDA build."""
    return False
