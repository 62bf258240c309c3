"""DataLoader benchmark: glasstorch vs torch in the same run.

    python -m benchmarks.dataloader [--quick]

Prints the per-batch time of a full pass (loader overhead: sampling, fetching, collating and,
with workers, the trip through shared memory) for small batches (32 x 16 floats) and large
ones (64 x 3 x 224 x 224 float32), each with num_workers=0 and 2, and the throughput of a
dataset whose ``__getitem__`` burns ~2 ms of CPU with num_workers=0 vs 2 (ideal speed-up 2x).
The datasets return NumPy arrays, so both libraries do the same work per item.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


class Small:
    def __init__(self, n):
        self.n = n
        self.item = np.arange(16, dtype=np.float32)

    def __getitem__(self, i):
        return self.item

    def __len__(self):
        return self.n


class Large:
    def __init__(self, n):
        self.n = n
        self.item = np.random.default_rng(0).random((3, 224, 224), dtype=np.float32)

    def __getitem__(self, i):
        return self.item

    def __len__(self):
        return self.n


class Busy:
    """~2 ms of pure-Python CPU work per item."""

    def __init__(self, n, ms=2.0):
        self.n = n
        self.s = ms / 1000

    def __getitem__(self, i):
        end = time.perf_counter() + self.s
        while time.perf_counter() < end:
            pass
        return np.float32(i)

    def __len__(self):
        return self.n


def _loaders():
    out = {}
    import glasstorch.utils.data as g
    out["glasstorch"] = g.DataLoader
    try:
        import torch
        import torch.utils.data as t
        torch.set_num_threads(1)
        out["torch"] = t.DataLoader
    except ImportError:
        pass
    return out


def _pass_time(DataLoader, ds, batch_size, workers, repeat):
    """Median seconds per batch over ``repeat`` full passes (worker start-up excluded by
    persistent workers and a warm-up pass)."""
    kw = dict(num_workers=workers, persistent_workers=workers > 0)
    loader = DataLoader(ds, batch_size=batch_size, **kw)
    for _ in loader:           # warm-up (starts the workers)
        pass
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = 0
        for _ in loader:
            n += 1
        times.append((time.perf_counter() - t0) / n)
    del loader
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer batches and repeats")
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else 3
    libs = _loaders()
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    print(f"DataLoader benchmark ({cpus} CPUs); per-batch seconds, median of {repeat} passes")
    cases = [
        ("small 32x16 float32", Small(32 * (100 if args.quick else 300)), 32),
        ("large 64x3x224x224 float32", Large(64 * (4 if args.quick else 10)), 64),
    ]
    header = f"{'case':30s} {'workers':>7s} " + " ".join(f"{n:>12s}" for n in libs)
    if len(libs) == 2:
        header += f" {'ratio':>7s}"
    print(header)
    for name, ds, bs in cases:
        for workers in (0, 2):
            res = [_pass_time(dl, ds, bs, workers, repeat) for dl in libs.values()]
            line = f"{name:30s} {workers:7d} " + " ".join(f"{r * 1e3:10.3f}ms" for r in res)
            if len(res) == 2:
                line += f" {res[0] / res[1]:7.2f}"
            print(line)

    n = 100 if args.quick else 200
    print(f"\n~2 ms/item dataset, {n} items, batch_size=8: items per second")
    print(f"{'library':12s} {'workers=0':>10s} {'workers=2':>10s} {'speed-up':>9s}")
    for lib, dl in libs.items():
        rate = {}
        for workers in (0, 2):
            per_batch = _pass_time(dl, Busy(n), 8, workers, 1 if args.quick else 2)
            rate[workers] = 8 / per_batch
        print(f"{lib:12s} {rate[0]:10.0f} {rate[2]:10.0f} {rate[2] / rate[0]:8.2f}x")


if __name__ == "__main__":
    main()
