"""torch.compile workloads: each step compiled in glasstorch next to torch eager and
torch.compile, timed in the same run (``python -m benchmarks --compile``).

The compiled function is the forward + loss; backward and optimizer step run as usual, as
in a torch training loop that compiles the model. Compile time (the first call: capture,
lowering, kernel generation) is reported separately from the steady-state step time.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from . import models


def _elementwise(lib, compile_fn):
    rng = models._seeded(lib)
    x = models._from(lib, rng.standard_normal(1_000_000).astype(np.float32)).requires_grad_()
    F = lib.nn.functional

    def f(x):
        return (F.gelu(x * 1.5 + 0.5).tanh() * x).sum()
    g = compile_fn(f)

    def step():
        x.grad = None
        g(x).backward()
    return step


def _chain(lib, compile_fn):
    x = lib.ones(16, requires_grad=True)

    def f(y):
        for _ in range(250):
            y = ((y * 1.0001) + 0.5).sin() - y
        return y.sum()
    g = compile_fn(f)

    def step():
        x.grad = None
        g(x).backward()
    return step


def _model_step(build):
    def make(lib, compile_fn):
        model, opt, x, y = build(lib)
        m = compile_fn(model)
        F = lib.nn.functional

        def step():
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
        return step
    return make


def _mlp(lib):
    nn = lib.nn
    rng = models._seeded(lib)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = models._from(lib, rng.standard_normal((128, 784)).astype(np.float32))
    y = models._from(lib, rng.integers(0, 10, 128))
    return model, opt, x, y


def _cnn(lib):
    nn = lib.nn
    rng = models._seeded(lib)
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128),
                          nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = models._from(lib, rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = models._from(lib, rng.integers(0, 10, 64))
    return model, opt, x, y


CASES = [("elementwise gelu chain, 1M float32", _elementwise, 2),
         ("1000-op chain fwd+bwd (per chain)", _chain, 3),
         ("mlp 784-512-512-10, SGD momentum, batch 128", _model_step(_mlp), 5),
         ("cnn 2 conv + 2 fc, Adam, batch 64", _model_step(_cnn), 2)]


def _timed(fn, inner):
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner, (time.process_time() - c0) / inner


def run(libs, repeat=5, smoke=False, only=None):
    """Print the table; return its rows. Columns: glasstorch compiled, torch eager, torch
    compiled (µs per step, median), ratios to torch eager, and first-call compile times."""
    import glasstorch
    variants = [("glasstorch compiled", glasstorch, glasstorch.compile)]
    torch = libs.get("torch")
    if torch is not None:
        variants += [("torch eager", torch, lambda f: f), ("torch compiled", torch,
                                                           torch.compile)]
    header = (f"{'case':46s} {'gt compiled µs':>14s} {'torch µs':>10s} {'torch.compile µs':>16s}"
              f" {'ratio':>6s} {'cpu ratio':>9s} {'vs t.c':>6s} {'gt compile s':>12s}"
              f" {'t.c compile s':>13s}")
    print(header)
    print("-" * len(header))
    rows = []
    for name, make, inner in CASES:
        if only and not any(o in name for o in only):
            continue
        steps, compile_s = {}, {}
        for label, lib, compile_fn in variants:
            try:
                step = make(lib, compile_fn)
                t0 = time.perf_counter()
                step()                       # first call: compiles
                compile_s[label] = time.perf_counter() - t0
                step()
                steps[label] = step
            except Exception as e:         # noqa: BLE001 (a failing column must not hide the rest)
                print(f"{name:46s} {label}: unavailable ({type(e).__name__}: "
                      f"{str(e).splitlines()[0][:80] if str(e) else ''})")
        wall = {k: [] for k in steps}
        cpu = {k: [] for k in steps}
        for _ in range(1 if smoke else repeat):
            for label, step in steps.items():
                w, c = _timed(step, 1 if smoke else inner)
                wall[label].append(w)
                cpu[label].append(c)
        med = {k: statistics.median(v) * 1e6 for k, v in wall.items()}
        cmed = {k: statistics.median(v) * 1e6 for k, v in cpu.items()}
        nan = float("nan")
        gt, te, tc = (med.get(k, nan) for k in ("glasstorch compiled", "torch eager",
                                                 "torch compiled"))
        ratio = gt / te
        cpu_ratio = cmed.get("glasstorch compiled", nan) / cmed.get("torch eager", nan)
        rows.append({"case": name, "median_us": med, "cpu_median_us": cmed, "ratio": ratio,
                     "cpu_ratio": cpu_ratio, "vs_torch_compile": gt / tc,
                     "compile_s": compile_s})
        print(f"{name:46s} {gt:14.1f} {te:10.1f} {tc:16.1f} {ratio:6.2f} {cpu_ratio:9.2f} "
              f"{gt / tc:6.2f} {compile_s.get('glasstorch compiled', nan):12.2f} "
              f"{compile_s.get('torch compiled', nan):13.2f}")
    return rows
