"""conv2d forward+backward, glasstorch vs torch, at one thread.

    python -m benchmarks.conv [--repeat 5] [--gemm-only]

A few 3x3 padding-1 layer shapes (an early layer, the models workload's conv, a deep
layer) and the second conv of the models workload's cnn: the median and best CPU time
of one forward + backward (input, weight and bias gradients), rounds alternating between
the libraries (one thread each, so CPU time is the run time minus other jobs' noise).
``--gemm-only`` turns the Winograd path off, to time the im2col + GEMM kernels it
replaces.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

# (label, input shape, output channels, padding)
CASES = [("N=64 32->64 28x28", (64, 32, 28, 28), 64, 1),
         ("N=32 64->64 32x32", (32, 64, 32, 32), 64, 1),
         ("N=8 256->256 8x8", (8, 256, 8, 8), 256, 1),
         ("N=64 32->64 13x13 p0", (64, 32, 13, 13), 64, 0)]


def _step(lib, x, w, b, padding):
    y = lib.conv2d(x, w, b, padding=padding)
    y.sum().backward()


def _time(libs, arrays, padding, repeat):
    """Median and best CPU time per library, rounds interleaved between the libraries."""
    runs = []
    for _, lib in libs:
        x, w, b = (lib.from_numpy(a.copy()).requires_grad_() for a in arrays)
        _step(lib, x, w, b, padding)  # warm-up
        runs.append((lib, x, w, b))
    times = [[] for _ in libs]
    for _ in range(repeat):
        for run, ts in zip(runs, times):
            t = time.process_time()
            _step(*run, padding)
            ts.append(time.process_time() - t)
    return [(statistics.median(ts), min(ts)) for ts in times]


def _arrays(rng, shape, out_channels):
    c = shape[1]
    return (rng.standard_normal(shape).astype(np.float32),
            (rng.standard_normal((out_channels, c, 3, 3)) / math.sqrt(9 * c)).astype(np.float32),
            rng.standard_normal(out_channels).astype(np.float32))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--gemm-only", action="store_true",
                   help="disable the Winograd path (time im2col + GEMM)")
    args = p.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    import glasstorch
    libs = [("glasstorch", glasstorch)]
    if args.gemm_only:
        from glasstorch._ops import _winograd
        _winograd._MIN_CHANNELS = math.inf
    try:
        import torch
        torch.set_num_threads(1)
        libs.append(("torch", torch))
    except ImportError:
        pass
    rng = np.random.default_rng(0)
    print("conv2d 3x3 fwd+bwd, float32, 1 thread" + (" (glasstorch: GEMM path only)"
                                                   if args.gemm_only else ""))
    for label, shape, out_channels, padding in CASES:
        arrays = _arrays(rng, shape, out_channels)
        rows = [(name, *t) for (name, _), t in zip(libs, _time(libs, arrays, padding,
                                                                 args.repeat))]
        print(f" {label}")
        for name, med, best in rows:
            print(f"  {name:<11} median {med * 1e3:8.1f} ms   best {best * 1e3:8.1f} ms")
        if len(rows) == 2:
            print(f"  ratio glasstorch/torch (median): {rows[0][1] / rows[1][1]:.2f}")


if __name__ == "__main__":
    main()
