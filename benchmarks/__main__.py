"""Run the benchmark workloads in glasstorch and (when importable) torch, interleaved.

    python -m benchmarks [--workloads overhead models] [--cases lstm conv] [--threads 1]
                         [--compile]
                         [--repeat 7]
                         [--json out.json] [--png out.png] [--memory] [--smoke]

Each case is timed in rounds that alternate between the two libraries; warm-up
is excluded; the table shows median and best wall time per library, the ratio
glasstorch/torch (lower is better) and the same ratio in CPU time (process time,
which a busy machine distorts less). Thread counts are set through each
library's API and threadpoolctl, alike for both. ``--memory`` measures the peak
RSS of a few training steps, each system in its own process. ``--smoke`` runs
every case once (CI uses it so the suite never rots).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from . import func, models, overhead, rng

WORKLOADS = {"overhead": overhead.cases, "models": models.cases, "func": func.cases,
             "rng": rng.cases}
MEMORY_CASES = ("mlp", "cnn", "transformer")


def _libraries(threads, with_torch=True):
    import glasstorch
    libs = {"glasstorch": glasstorch}
    glasstorch.set_num_threads(threads)
    if with_torch:
        try:
            import torch
            torch.set_num_threads(threads)
            libs["torch"] = torch
        except ImportError:
            pass
    return libs


def _blas_info(threads):
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        return "threadpoolctl not installed"
    threadpool_limits(threads)
    return sorted({f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()})


def _time_round(fn, inner):
    """(wall, CPU) seconds per call: CPU time is what a busy machine distorts least."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner, (time.process_time() - c0) / inner


def run_timings(libs, workloads, repeat, smoke, only=None):
    rows = []
    header = f"{'case':46s} {'glasstorch µs':>13s} {'best':>10s} {'torch µs':>10s} " \
             f"{'best':>10s} {'ratio':>6s} {'cpu ratio':>9s}"
    print(header)
    print("-" * len(header))
    for workload in workloads:
        for name, make, inner in WORKLOADS[workload]():
            if only and not any(o in name for o in only):
                continue
            fns = {}
            for lib_name, lib in libs.items():
                try:
                    fns[lib_name] = make(lib)
                    fns[lib_name]()  # warm-up (and build lazily created state)
                except Exception as e:  # a missing feature must not hide the other rows
                    print(f"{name:46s} {lib_name}: {type(e).__name__}: {e}")
                    fns.pop(lib_name, None)
            if "glasstorch" not in fns:
                continue
            rounds = 1 if smoke else repeat
            inner = 1 if smoke else inner
            samples = {k: [] for k in fns}
            cpu = {k: [] for k in fns}
            for _ in range(rounds):  # interleave the libraries round by round
                for lib_name, fn in fns.items():
                    wall, cpu_time = _time_round(fn, inner)
                    samples[lib_name].append(wall)
                    cpu[lib_name].append(cpu_time)
            med = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
            best = {k: min(v) * 1e6 for k, v in samples.items()}
            cpu_med = {k: statistics.median(v) * 1e6 for k, v in cpu.items()}
            nan = float("nan")
            ratio = med["glasstorch"] / med["torch"] if "torch" in med else nan
            cpu_ratio = (cpu_med["glasstorch"] / cpu_med["torch"]
                         if cpu_med.get("torch") else nan)
            rows.append({"workload": workload, "case": name, "median_us": med, "best_us": best,
                         "cpu_median_us": cpu_med, "ratio": ratio, "cpu_ratio": cpu_ratio})
            print(f"{name:46s} {med['glasstorch']:13.2f} {best['glasstorch']:10.2f} "
                  f"{med.get('torch', nan):10.2f} {best.get('torch', nan):10.2f} {ratio:6.2f} "
                  f"{cpu_ratio:9.2f}")
    return rows


def _peak_rss_child(lib_name, case, threads):
    """In a fresh process: a few training steps of ``case``; print peak RSS in MiB."""
    libs = _libraries(threads, with_torch=lib_name == "torch")
    step = getattr(models, case)(libs[lib_name])
    for _ in range(3):
        step()
    print(_peak_rss_mib())


def _peak_rss_mib():
    # VmHWM restarts with each exec'd process; ru_maxrss would carry the parent's peak over
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_memory(threads, with_torch):
    print(f"\n{'peak RSS of a training step (MiB)':46s} {'glasstorch':>10s} {'torch':>10s} "
          f"{'ratio':>6s}")
    rows = []
    for case in MEMORY_CASES:
        peaks = {}
        for lib_name in ("glasstorch", "torch") if with_torch else ("glasstorch",):
            out = subprocess.run([sys.executable, "-m", "benchmarks", "--_memory-child",
                                  lib_name, case, "--threads", str(threads)],
                                 capture_output=True, text=True)
            if out.returncode == 0:
                peaks[lib_name] = float(out.stdout.strip().splitlines()[-1])
            else:
                print(f"{case:46s} {lib_name}: {out.stderr.strip().splitlines()[-1:]}")
        if "glasstorch" in peaks:
            ratio = peaks["glasstorch"] / peaks["torch"] if "torch" in peaks else float("nan")
            print(f"{case:46s} {peaks['glasstorch']:10.1f} "
                  f"{peaks.get('torch', float('nan')):10.1f} {ratio:6.2f}")
            rows.append({"case": case, "peak_mib": peaks, "ratio": ratio})
    return rows


def _png(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG written (pip install matplotlib)")
        return
    names = [r["case"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(names) + 1))
    ax.barh(names, ratios)
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xlabel("time ratio glasstorch / torch (lower is better)")
    fig.tight_layout()
    fig.savefig(path)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="glasstorch vs torch benchmarks")
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--cases", nargs="*", default=None,
                        help="only the cases whose name contains one of these strings")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default=None, help="write results to this JSON file")
    parser.add_argument("--png", default=None, help="write a bar chart of the ratios")
    parser.add_argument("--memory", action="store_true", help="also measure peak RSS")
    parser.add_argument("--smoke", action="store_true", help="one step per case (CI)")
    parser.add_argument("--no-torch", action="store_true", help="glasstorch only")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile workloads: glasstorch compiled vs torch eager and "
                             "torch.compile (benchmarks/compile.py)")
    parser.add_argument("--_memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._memory_child:
        _peak_rss_child(*args._memory_child, args.threads)
        return
    libs = _libraries(args.threads, with_torch=not args.no_torch)
    import numpy
    meta = {"python": platform.python_version(), "numpy": numpy.__version__,
            "glasstorch": libs["glasstorch"].version.glasstorch_version,
            "torch": libs["torch"].__version__ if "torch" in libs else None,
            "threads": args.threads, "blas": _blas_info(args.threads),
            "env": {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}}
    print("  ".join(f"{k}={v}" for k, v in meta.items()))
    if args.compile:
        from . import compile as compile_bench
        rows = compile_bench.run(libs, args.repeat, args.smoke, args.cases)
    else:
        rows = run_timings(libs, args.workloads, args.repeat, args.smoke, args.cases)
    memory = run_memory(args.threads, "torch" in libs) if args.memory else []
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": rows, "memory": memory}, f, indent=2)
    if args.png:
        _png(rows, args.png)


if __name__ == "__main__":
    main()
