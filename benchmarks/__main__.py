"""Run the benchmark workloads in glasstorch and (when importable) torch, interleaved.

    python -m benchmarks [--workloads overhead] [--repeat 7] [--json out.json]

Each workload is timed in repeated rounds that alternate between the two
libraries; warm-up rounds are excluded; the table shows the median and best
time per library and the ratio glasstorch/torch (lower is better). Runs at
one thread so the comparison is about per-op cost, not the BLAS thread pool.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from . import mlp, overhead

WORKLOADS = {"overhead": overhead.cases, "mlp": mlp.cases}


def _libraries():
    import glasstorch
    libs = {"glasstorch": glasstorch}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    return libs


def _limit_blas_threads():
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return None, "threadpoolctl not installed"
    threadpool_limits(1)
    return threadpool_limits, [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]


def time_case(make, lib, repeat, inner):
    """Median and best seconds per call of ``make(lib)()`` over ``repeat`` rounds."""
    fn = make(lib)
    for _ in range(max(1, inner // 10)):  # warm-up
        fn()
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        rounds.append((time.perf_counter() - t0) / inner)
    return rounds


def main(argv=None):
    parser = argparse.ArgumentParser(description="glasstorch vs torch benchmarks")
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", default=None, help="write results to this JSON file")
    args = parser.parse_args(argv)
    libs = _libraries()
    _, blas = _limit_blas_threads()
    import numpy
    meta = {"python": platform.python_version(), "numpy": numpy.__version__,
            "glasstorch": libs["glasstorch"].__version__, "blas": blas,
            "torch": libs["torch"].__version__ if "torch" in libs else None, "threads": 1}
    print("  ".join(f"{k}={v}" for k, v in meta.items()))
    rows = []
    header = f"{'case':44s} {'glasstorch µs':>14s} {'torch µs':>10s} {'ratio':>7s}"
    print(header)
    print("-" * len(header))
    for workload in args.workloads:
        for name, make, inner in WORKLOADS[workload]():
            samples = {lib_name: [] for lib_name in libs}
            for _ in range(args.repeat):  # interleave the libraries round by round
                for lib_name, lib in libs.items():
                    samples[lib_name] += time_case(make, lib, 1, inner)
            med = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
            best = {k: min(v) * 1e6 for k, v in samples.items()}
            ratio = med["glasstorch"] / med["torch"] if "torch" in med else float("nan")
            rows.append({"workload": workload, "case": name, "median_us": med, "best_us": best,
                         "ratio": ratio})
            print(f"{name:44s} {med['glasstorch']:14.2f} {med.get('torch', float('nan')):10.2f} "
                  f"{ratio:7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
