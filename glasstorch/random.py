"""glasstorch.random: RNG state helpers, mirroring torch.random.

The default generator is torch's CPU mt19937 (see ``glasstorch._core.random``): the same
seed gives torch's streams, and ``get_rng_state``/``set_rng_state`` exchange torch's
5056-byte state, so a state saved by torch restores here and the reverse.
"""

from __future__ import annotations

import contextlib

from ._core.random import Generator, default_generator
from ._ops.random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed",
           "fork_rng", "thread_safe_generator", "Generator", "default_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Run the body with the default (CPU) generator's state saved and restored afterwards.

    The CPU state is always forked, as in torch; there are no accelerator generators here,
    so ``devices`` and ``device_type`` select nothing more (``device_type="meta"`` forks
    nothing, as torch)."""
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None:
        devices = list(devices)  # torch traverses it; a generator argument is consumed
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """The calling DataLoader thread worker's own ``Generator``, or ``None`` (use the default
    generator) in the main process and in process workers."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread":
        rng = getattr(info, "rng", None)
        if rng is not None:
            return rng.torch_generator
    return None
