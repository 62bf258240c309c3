"""DDP step time and scaling on this machine: ``python -m benchmarks.distributed
[--ranks 1 2 4] [--steps 10] [--workloads mlp cnn] [--strategies ddp zero fsdp fsdp2]``.

Weak scaling: every rank trains on the same per-rank batch, so ideal scaling keeps the step
time constant and the efficiency (1-rank step time / N-rank step time) at 1. Also reported:
the gradient bytes each rank all-reduces per step, and the overlap of communication with
backward: ``(local backward + one all-reduce of all gradients - DDP backward) / all-reduce``,
1 when the reduction hides entirely behind backward, 0 when it runs after it. ``zero`` (DDP with
ZeroRedundancyOptimizer), ``fsdp`` (FullyShardedDataParallel, FULL_SHARD) and ``fsdp2``
(``fully_shard`` on every Linear/Conv2d, then the root) report their step time and how many
elements of the sharded state each rank keeps (``shard_numel``: parameters for FSDP, parameters
whose optimizer state it holds for ZeRO). Rank counts above
the number of CPU cores are marked as oversubscribed (they measure contention, not scaling).
Needs mpi4py and mpich (``pip install -e '.[distributed]'``) for more than one rank.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def _model(L, workload):
    if workload == "cnn":
        return L.nn.Sequential(L.nn.Conv2d(3, 16, 3, padding=1), L.nn.ReLU(),
                               L.nn.MaxPool2d(2), L.nn.Conv2d(16, 32, 3, padding=1),
                               L.nn.ReLU(), L.nn.AdaptiveAvgPool2d(1), L.nn.Flatten(),
                               L.nn.Linear(32, 10))
    return L.nn.Sequential(L.nn.Linear(256, 512), L.nn.ReLU(), L.nn.Linear(512, 512),
                           L.nn.ReLU(), L.nn.Linear(512, 10))


def _batch(L, workload):
    x = L.randn(32, 3, 32, 32) if workload == "cnn" else L.randn(64, 256)
    return x, L.randint(0, 10, (x.shape[0],))


def _wrapped(L, workload, strategy):
    """The model wrapped for ``strategy`` and its optimizer (SGD, Adam for ZeRO whose point
    is the optimizer state); how many elements this rank keeps of what is sharded (the
    parameters for FSDP, the optimizer state's parameters for ZeRO)."""
    model = _model(L, workload)
    total = sum(p.numel() for p in model.parameters())
    if strategy == "fsdp":
        from glasstorch.distributed.fsdp import FullyShardedDataParallel
        wrapped = FullyShardedDataParallel(model)
        return wrapped, L.optim.SGD(wrapped.parameters(), lr=0.01), wrapped._flat_param.numel()
    if strategy == "fsdp2":
        from glasstorch.distributed.fsdp import fully_shard
        for layer in model:
            if isinstance(layer, (L.nn.Linear, L.nn.Conv2d)):
                fully_shard(layer)
        fully_shard(model)
        return model, L.optim.SGD(model.parameters(), lr=0.01), \
            sum(p.to_local().numel() for p in model.parameters())
    wrapped = L.nn.parallel.DistributedDataParallel(model)
    if strategy == "zero":
        from glasstorch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(wrapped.parameters(), L.optim.Adam, lr=0.01)
        return wrapped, opt, sum(p.numel() for g in opt._partition_parameters()[opt.rank]
                                 for p in g["params"])
    return wrapped, L.optim.SGD(wrapped.parameters(), lr=0.01), total


def _worker(task, steps):
    """One rank: time training steps (for DDP also local backward and a flat all-reduce);
    rank 0 prints JSON."""
    import glasstorch as L
    workload, _, strategy = task.partition(":")
    strategy = strategy or "ddp"
    dist = L.distributed
    dist.init_process_group("gloo")
    L.manual_seed(0)
    ddp, opt, shard_numel = _wrapped(L, workload, strategy)
    x, y = _batch(L, workload)
    loss_fn = L.nn.functional.cross_entropy

    def timed(fn):
        times = []
        for _ in range(steps + 2):
            dist.barrier()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times[2:])      # the first two warm up

    def step():
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
    t_step = timed(step)
    if strategy != "ddp":
        if dist.get_rank() == 0:
            print("BENCH " + json.dumps({
                "workload": workload, "strategy": strategy, "ranks": dist.get_world_size(),
                "step_ms": t_step * 1e3, "shard_numel": shard_numel}), flush=True)
        dist.destroy_process_group()
        return

    def local_backward():
        with ddp.no_sync():
            loss_fn(ddp(x), y).backward()

    def synced_backward():
        loss_fn(ddp(x), y).backward()
    flat = L.cat([p.detach().reshape(-1) for p in ddp.parameters()])
    t_local = timed(local_backward)
    t_ddp = timed(synced_backward)
    t_comm = timed(lambda: dist.all_reduce(flat))
    if dist.get_rank() == 0:
        n = dist.get_world_size()
        overlap = None if n == 1 or t_comm <= 0 else \
            max(0.0, min(1.0, (t_local + t_comm - t_ddp) / t_comm))
        print("BENCH " + json.dumps({
            "workload": workload, "strategy": "ddp", "ranks": n, "step_ms": t_step * 1e3,
            "grad_bytes": flat.numel() * flat.element_size(), "allreduce_ms": t_comm * 1e3,
            "overlap": overlap, "buckets": len(ddp._buckets)}), flush=True)
    dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(ranks, workload, steps, strategy="ddp"):
    cmd = [sys.executable, "-m", "glasstorch.distributed.run", "--nproc_per_node", str(ranks),
           "--master_port", str(_free_port()), "-m", "benchmarks.distributed", "--worker",
           f"{workload}:{strategy}", "--steps", str(steps)]
    # one BLAS thread per rank at every rank count, so that 1 rank is a fair baseline
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for line in out.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[len("BENCH "):])
    raise RuntimeError(f"{ranks} ranks of {workload} failed:\n{out.stderr[-3000:]}")


def _line(r):
    eff = "-" if r["efficiency"] is None else f"{r['efficiency']:.2f}"
    head = (f"{r['workload']:4s} {r['strategy']:4s} ranks={r['ranks']}"
            f"{' (oversubscribed)' if r['oversubscribed'] else ''}  step {r['step_ms']:8.2f} ms"
            f"  efficiency {eff}")
    if r["strategy"] != "ddp":
        return f"{head}  sharded elements kept per rank {r['shard_numel']}"
    ov = "-" if r["overlap"] is None else f"{r['overlap']:.2f}"
    return (f"{head}  all-reduce {r['grad_bytes'] / 1e6:.2f} MB in {r['allreduce_ms']:.2f} ms"
            f"  overlap {ov}  buckets {r['buckets']}")


def main(argv=None):
    """Run the benchmark (or, with ``--worker``, one rank of it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--workloads", nargs="+", default=["mlp", "cnn"])
    p.add_argument("--strategies", nargs="+", default=["ddp"],
                   choices=["ddp", "zero", "fsdp", "fsdp2"])
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    if args.worker:
        return _worker(args.worker, args.steps)
    cores = os.cpu_count() or 1
    rows = []
    for workload in args.workloads:
        for strategy in args.strategies:
            base = None
            for ranks in args.ranks:
                r = _run(ranks, workload, args.steps, strategy)
                base = r["step_ms"] if ranks == 1 else base
                r["efficiency"] = None if base is None else base / r["step_ms"]
                r["oversubscribed"] = ranks > cores
                rows.append(r)
                print(_line(r), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": cores, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
