"""Worker processes: seeding, worker info, persistence, shared memory, and failure behaviour
(exceptions, killed workers, timeouts, interruption, no leaked /dev/shm segments — the
conftest guard checks the last one after every test and bounds each test to 20 s)."""

import gc
import os
import random
import signal
import time

import numpy as np
import pytest

import glasstorch
import glasstorch.utils.data as gdata


class Seeds(gdata.Dataset):
    def __getitem__(self, i):
        info = gdata.get_worker_info()
        return (info.id, info.seed, random.random(), float(glasstorch.rand(1)),
                float(np.random.rand()))

    def __len__(self):
        return 8


def _epoch(loader):
    return [tuple(x.tolist() for x in b) for b in loader]


def test_worker_seeds_distinct_per_worker_and_epoch_and_reproducible():
    glasstorch.manual_seed(123)
    loader = gdata.DataLoader(Seeds(), batch_size=2, num_workers=2)
    e1, e2 = _epoch(loader), _epoch(loader)
    ids = {w for b in e1 for w in b[0]}
    assert ids == {0, 1}
    seeds = {}
    for b in e1:
        for w, s in zip(b[0], b[1]):
            seeds.setdefault(w, set()).add(s)
    assert all(len(v) == 1 for v in seeds.values())
    assert seeds[1] == {next(iter(seeds[0])) + 1}           # base_seed + worker_id
    randoms = [b[k] for b in e1 for k in (2, 3, 4)]
    assert len({tuple(r) for r in randoms}) == len(randoms)  # workers draw different numbers
    assert e1 != e2                                          # new base seed each epoch
    glasstorch.manual_seed(123)
    assert _epoch(loader) == e1                              # reproducible


def test_worker_info_and_init_fn():
    calls = []

    class DS(gdata.Dataset):
        def __getitem__(self, i):
            info = gdata.get_worker_info()
            with pytest.raises(RuntimeError):
                info.id = 5
            return (info.id, info.num_workers, info.dataset is self, os.environ.get("WINIT"))

        def __len__(self):
            return 4

    def init(wid):
        calls.append(wid)  # runs in the child; visible only there
        os.environ["WINIT"] = f"w{wid}"

    assert gdata.get_worker_info() is None
    out = list(gdata.DataLoader(DS(), batch_size=None, num_workers=2, worker_init_fn=init))
    # default_convert turns tuples into lists, as torch's does
    assert out == [[0, 2, True, "w0"], [1, 2, True, "w1"], [0, 2, True, "w0"],
                   [1, 2, True, "w1"]]
    assert calls == []


def test_persistent_workers_reuse_processes():
    class Pid(gdata.Dataset):
        def __getitem__(self, i):
            return os.getpid(), i

        def __len__(self):
            return 6

    loader = gdata.DataLoader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    e1 = [(b[0].tolist(), b[1].tolist()) for b in loader]
    it = next(iter([loader._iterator]))
    # Abandon epoch 2 half-way: epoch 3 must still start cleanly from index 0.
    for _ in zip(range(1), loader):
        pass
    e3 = [(b[0].tolist(), b[1].tolist()) for b in loader]
    assert [x[1] for x in e1] == [x[1] for x in e3] == [[0, 1], [2, 3], [4, 5]]
    assert {p for x in e1 for p in x[0]} == {p for x in e3 for p in x[0]}
    assert loader._iterator is it
    pool = it._pool
    del loader, it
    gc.collect()
    assert all(not w.is_alive() for w in pool.workers)


def test_persistent_iterable_restarts_streams():
    class S(gdata.IterableDataset):
        def __iter__(self):
            info = gdata.get_worker_info()
            return iter(range(info.id, 5, info.num_workers))

    loader = gdata.DataLoader(S(), batch_size=2, num_workers=2, persistent_workers=True)
    e1 = [b.tolist() for b in loader]
    assert e1 == [b.tolist() for b in loader] == [[0, 2], [1, 3], [4]]


def test_in_order_false_and_prefetch():
    class Slow(gdata.Dataset):
        def __getitem__(self, i):
            if i == 0:
                time.sleep(0.3)
            return i

        def __len__(self):
            return 8

    out = [b.tolist() for b in gdata.DataLoader(Slow(), batch_size=2, num_workers=2,
                                                in_order=False, prefetch_factor=3)]
    assert sorted(sum(out, [])) == list(range(8)) and out[0] != [0, 1]


def test_batches_come_through_shared_memory():
    import mmap

    ds = gdata.TensorDataset(glasstorch.arange(64 * 48, dtype=glasstorch.float32)
                             .reshape(64, 3, 4, 4).to(glasstorch.bfloat16))
    loader = gdata.DataLoader(ds, batch_size=16, num_workers=2,
                              collate_fn=lambda b: (gdata.default_collate(b)[0],
                                                    glasstorch.ones(2, 3)[:, 1]))
    batches = list(loader)
    ref = list(gdata.DataLoader(ds, batch_size=16))
    for (x, view), (r,) in zip(batches, ref):
        assert x.dtype == glasstorch.bfloat16 and glasstorch.equal(x, r)
        assert view.tolist() == [1.0, 1.0]
        base = x._data
        while getattr(base, "base", None) is not None and not isinstance(base, mmap.mmap):
            base = base.base
        assert isinstance(base, mmap.mmap)     # mapped, not unpickled
    x = batches[0][0]
    x[0, 0, 0, 0] = 5                         # memory stays valid and writable after unlink
    del batches
    gc.collect()
    assert float(x[0, 0, 0, 0]) == 5


# ------------------------------------------------------------------ failures
class Boom(gdata.Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"bad sample {i}")
        if i == 5:
            raise KeyError("missing")
        return i

    def __len__(self):
        return 8


def test_worker_exception_reraised_with_traceback():
    it = iter(gdata.DataLoader(Boom(), batch_size=None, num_workers=2))
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError) as exc:
        next(it)
    msg = str(exc.value)
    assert "Caught ValueError in DataLoader worker process 1" in msg
    assert "Traceback (most recent call last)" in msg and "bad sample 3" in msg
    assert "__getitem__" in msg
    assert next(it) == 4                       # the iterator carries on, like torch's
    with pytest.raises(KeyError, match="worker process 1"):
        next(it)
    del exc
    del it


def test_worker_init_fn_exception():
    def init(wid):
        raise RuntimeError("init failed")
    with pytest.raises(RuntimeError, match="init failed"):
        list(gdata.DataLoader(range(4), num_workers=2, worker_init_fn=init))


class Killer(gdata.Dataset):
    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return np.full((64, 64), i, np.float32)

    def __len__(self):
        return 8


def test_killed_worker_raises():
    loader = gdata.DataLoader(Killer(), batch_size=2, num_workers=2)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) exited "
                                           r"unexpectedly with exit code -9.*SIGKILL"):
        for _ in loader:
            pass
    assert time.monotonic() - t0 < 5


def test_timeout_raises():
    class Sleepy(gdata.Dataset):
        def __getitem__(self, i):
            time.sleep(0.5 if i == 2 else 0)
            return i

        def __len__(self):
            return 4

    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        list(gdata.DataLoader(Sleepy(), batch_size=None, num_workers=1, timeout=0.2))


def test_deleting_iterator_shuts_workers_down():
    loader = gdata.DataLoader(Killer(), batch_size=1, num_workers=2, prefetch_factor=4,
                              sampler=[0, 1, 2, 4, 5, 6, 7])
    it = iter(loader)
    next(it)
    time.sleep(0.2)     # let workers fill shared memory with prefetched batches
    pool = it._pool
    del it
    gc.collect()
    assert all(not w.is_alive() for w in pool.workers)


def test_interrupt_mid_epoch_cleans_up():
    loader = gdata.DataLoader(Killer(), batch_size=2, num_workers=2, sampler=[0, 1, 2, 4, 5])
    with pytest.raises(KeyboardInterrupt):
        for _ in loader:
            raise KeyboardInterrupt   # what Ctrl-C in the training loop looks like
    gc.collect()


def test_spawn_context():
    loader = gdata.DataLoader(gdata.TensorDataset(glasstorch.arange(6)), batch_size=4,
                              num_workers=1, multiprocessing_context="spawn")
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]
