"""conv2d forward+backward, glasstorch vs torch, at one thread.

    python -m benchmarks.conv [--repeat 5]

Batch 64, 32 -> 64 channels, 28x28, 3x3 kernel, padding 1: the median and best
wall time of one forward + backward (input, weight and bias gradients).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _step(lib, x, w, b):
    y = lib.conv2d(x, w, b, padding=1)
    y.sum().backward()


def _time(lib, arrays, repeat):
    x, w, b = (lib.from_numpy(a.copy()).requires_grad_() for a in arrays)
    _step(lib, x, w, b)  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        _step(lib, x, w, b)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((64, 32, 28, 28)).astype(np.float32),
              rng.standard_normal((64, 32, 3, 3)).astype(np.float32) * 0.1,
              rng.standard_normal(64).astype(np.float32))
    import glasstorch
    rows = [("glasstorch", *_time(glasstorch, arrays, args.repeat))]
    try:
        import torch
        torch.set_num_threads(1)
        rows.append(("torch", *_time(torch, arrays, args.repeat)))
    except ImportError:
        pass
    print("conv2d fwd+bwd  N=64 32->64 28x28 k3 p1, 1 thread")
    for name, med, best in rows:
        print(f"  {name:<11} median {med * 1e3:8.1f} ms   best {best * 1e3:8.1f} ms")
    if len(rows) == 2:
        print(f"  ratio glasstorch/torch (median): {rows[0][1] / rows[1][1]:.2f}")


if __name__ == "__main__":
    main()
