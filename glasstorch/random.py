"""glasstorch.random: RNG state helpers, mirroring torch.random."""

from __future__ import annotations

import contextlib

from ._core.random import Generator, default_generator
from ._ops.random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run the body with the default generator's state saved and restored afterwards.

    Only the CPU generator exists here, so ``devices`` is accepted and ignored."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
