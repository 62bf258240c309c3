"""Save/load of a ~500 MB state_dict: glasstorch next to torch, plus load(mmap=True) memory.

    python -m benchmarks.serialization [--mb 500] [--repeat 3]

Each library saves and loads the same float32 state_dict (a few large and many
small tensors) in the same run, alternating; the table shows the best seconds.
Peak RSS of ``glasstorch.load(mmap=True)`` is measured in a fresh subprocess.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

_RSS_CHILD = r"""
import sys
import glasstorch
from glasstorch.serialization import load

def hwm():  # peak RSS in kB (VmHWM restarts at exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

before = hwm()
sd = load(sys.argv[1], mmap={mmap})
total = sum(float(t[0, 0]) if t.ndim == 2 else 0.0 for t in sd.values())  # touch each
print(before, hwm(), total)
"""


def _state_dict(lib, mb):
    rng = np.random.default_rng(0)
    n_big = 8
    big = mb * 2 ** 20 // 4 // n_big // 1024  # rows of 1024 float32
    sd = {}
    for i in range(n_big):
        sd[f"layer{i}.weight"] = lib.from_numpy(rng.standard_normal((big, 1024), np.float32))
    for i in range(200):
        sd[f"small{i}.bias"] = lib.from_numpy(rng.standard_normal(256).astype(np.float32))
    return sd


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _peak_rss_mb(path, mmap):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD.format(mmap=mmap), path],
                         capture_output=True, text=True, check=True, cwd=root).stdout.split()
    before, after = int(out[0]), int(out[1])
    return before / 1024, after / 1024


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import glasstorch
    from glasstorch.serialization import load, save
    libs = {"glasstorch": (glasstorch, save, lambda p: load(p))}
    try:
        import torch
        libs["torch"] = (torch, torch.save, lambda p: torch.load(p, weights_only=True))
    except ImportError:
        pass
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, (lib, save_fn, load_fn) in libs.items():
            sd = _state_dict(lib, args.mb)
            path = os.path.join(d, f"{name}.pt")
            t_save = _best(lambda f=save_fn, s=sd, p=path: f(s, p), args.repeat)
            t_load = _best(lambda f=load_fn, p=path: f(p), args.repeat)
            size = os.path.getsize(path) / 2 ** 20
            rows.append((name, size, t_save, t_load))
            del sd  # keep only one library's copy in memory
        gpath = os.path.join(d, "glasstorch.pt")
        rss = {m: _peak_rss_mb(gpath, m) for m in (True, False)}
    print(f"{'library':<12}{'file MB':>10}{'save s':>10}{'load s':>10}")
    for name, size, ts, tl in rows:
        print(f"{name:<12}{size:>10.1f}{ts:>10.3f}{tl:>10.3f}")
    if len(rows) == 2:
        print(f"ratio glasstorch/torch: save {rows[0][2] / rows[1][2]:.2f}x, "
              f"load {rows[0][3] / rows[1][3]:.2f}x")
    for m, (before, after) in rss.items():
        print(f"glasstorch.load(mmap={m}): peak RSS {after:.0f} MB "
              f"(after import {before:.0f} MB)")


if __name__ == "__main__":
    main()
