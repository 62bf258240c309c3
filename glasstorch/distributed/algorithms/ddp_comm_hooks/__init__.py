"""torch.distributed.algorithms.ddp_comm_hooks: gradient communication hooks for DDP
(``default_hooks``: allreduce, fp16/bf16 compression) and ``register_ddp_comm_hook``."""

from __future__ import annotations

from enum import Enum
from functools import partial

from . import default_hooks
from . import default_hooks as default  # noqa: F401 (torch's alias)

__all__ = ["DDPCommHookType", "register_ddp_comm_hook", "default_hooks"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    """The built-in hooks by name, each registering itself on a DDP model."""
    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Register the built-in hook ``comm_hook_type`` (a DDPCommHookType) on ``model``."""
    comm_hook_type.value(model=model, state=state)
