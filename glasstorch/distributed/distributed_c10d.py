"""torch.distributed.distributed_c10d: where torch defines the process-group functions
(glasstorch defines them in ``torch.distributed`` itself), and the default group."""

from . import *  # noqa: F403 - this module answers with the same names
from . import __all__ as _names
from . import _pg

__all__ = list(_names)


def _get_default_group():
    """The default process group (ValueError before ``init_process_group``)."""
    return _pg(None)
