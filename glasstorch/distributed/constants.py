"""torch.distributed.constants: the default timeout of process groups."""

from . import default_pg_timeout

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_nccl_timeout = None       # torch's value when it is built without NCCL
