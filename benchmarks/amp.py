"""Mixed-precision training step: the benchmark MLP (784-512-512-10, SGD momentum, batch
128) in float32, under bfloat16 autocast, and torch's bfloat16 autocast, one thread.

    python -m benchmarks.amp [--repeat 7] [--inner 5] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _mlp_step(lib, autocast):
    nn = lib.nn
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.from_numpy(rng.standard_normal((128, 784)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, 128))

    def step():
        opt.zero_grad()
        with autocast():
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _cases(with_torch):
    import glasstorch
    import glasstorch.amp as gamp
    cases = [("glasstorch float32", glasstorch,
              lambda: gamp.autocast("cpu", enabled=False)),
             ("glasstorch bfloat16 autocast", glasstorch,
              lambda: gamp.autocast("cpu", dtype=glasstorch.bfloat16))]
    if with_torch:
        try:
            import torch
        except ImportError:
            return cases
        cases += [("torch float32", torch, lambda: torch.autocast("cpu", enabled=False)),
                  ("torch bfloat16 autocast", torch,
                   lambda: torch.autocast("cpu", dtype=torch.bfloat16))]
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--inner", type=int, default=5, help="steps per timing round")
    ap.add_argument("--smoke", action="store_true", help="one step per case, no timing")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    cases = _cases(not args.no_torch)
    for _, lib, _ac in cases:
        lib.set_num_threads(1)
    steps = [(name, _mlp_step(lib, ac)) for name, lib, ac in cases]
    losses = {name: step().item() for name, step in steps}  # warm-up
    if args.smoke:
        for name, loss in losses.items():
            print(f"{name:32s} loss {loss:.4f}")
        return
    times = {name: [] for name, _ in steps}
    for _ in range(args.repeat):  # rounds interleave the cases
        for name, step in steps:
            t0 = time.perf_counter()
            for _ in range(args.inner):
                step()
            times[name].append((time.perf_counter() - t0) / args.inner)
    base = statistics.median(times[steps[0][0]])
    print(f"{'case (1 thread)':32s} {'median ms':>10s} {'best ms':>9s} {'vs gt f32':>10s}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:32s} {med * 1e3:10.2f} {min(ts) * 1e3:9.2f} {med / base:9.2f}x")


if __name__ == "__main__":
    main()
