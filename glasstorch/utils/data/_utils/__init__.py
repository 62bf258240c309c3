"""Internals of the DataLoader: collation, fetchers, worker processes, shared memory."""

from . import collate, fetch, worker  # noqa: F401

# How often (seconds) a waiting main process or an idle worker checks that its peers are
# still alive; it bounds how long a dead worker or parent goes unnoticed.
MP_STATUS_CHECK_INTERVAL = 0.1
