import os
import signal

import pytest


def _segments():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("gtdl_")}
    except OSError:
        return set()


@pytest.fixture(autouse=True)
def guard():
    """Fail (instead of hanging) after 20 s, and fail if a test leaves shared memory behind."""
    def on_alarm(signum, frame):
        raise TimeoutError("test exceeded its 20 s guard (DataLoader hang?)")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(20)
    before = _segments()
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    leaked = _segments() - before
    if leaked:  # give unreachable iterators a chance to run their shutdown first
        import gc
        gc.collect()
        leaked = _segments() - before
    assert not leaked, f"leaked shared-memory segments: {sorted(leaked)}"
