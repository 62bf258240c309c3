"""optimizer.step() time for Adam / AdamW / SGD-momentum on a ~10M-parameter model made of a
few large and many small tensors, glasstorch next to torch (torch at one thread, its default
CPU implementation: the per-tensor loop).

    python -m benchmarks.optim [--repeat 5] [--small 400]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _shapes(n_small):
    # three large matrices (~9.4M) plus many small weights/biases (~0.6M)
    shapes = [(2048, 2048), (2048, 1536), (1024, 2048)]
    rng = np.random.default_rng(0)
    for _ in range(n_small):
        shapes.append(tuple(int(s) for s in rng.integers(8, 64, size=int(rng.integers(1, 3)))))
    return shapes


def _setup(lib, name, shapes):
    rng = np.random.default_rng(1)
    params = []
    for s in shapes:
        p = lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32) * 1e-2)
        params.append(p)
    if name == "Adam":
        opt = lib.optim.Adam(params, lr=1e-3)
    elif name == "AdamW":
        opt = lib.optim.AdamW(params, lr=1e-3, weight_decay=1e-2)
    else:
        opt = lib.optim.SGD(params, lr=1e-2, momentum=0.9)
    opt.step()  # create the state outside the timed region
    return opt


def _time(opt, repeat):
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        opt.step()
        rounds.append(time.perf_counter() - t0)
    return statistics.median(rounds), min(rounds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--small", type=int, default=400, help="number of small tensors")
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    import glasstorch
    import glasstorch.optim  # noqa: F401
    libs = {"glasstorch": glasstorch}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    shapes = _shapes(args.small)
    n = sum(int(np.prod(s)) for s in shapes)
    print(f"{len(shapes)} tensors, {n / 1e6:.2f}M parameters, float32, 1 thread")
    print(f"{'optimizer':<14}" + "".join(f"{k + ' median':>20}{'best':>10}" for k in libs)
          + f"{'ratio':>8}")
    for name in ("Adam", "AdamW", "SGD-momentum"):
        res = {}
        for lib_name, lib in libs.items():
            opt = _setup(lib, name, shapes)
            res[lib_name] = _time(opt, args.repeat)
            del opt
        line = f"{name:<14}" + "".join(f"{m * 1e3:>17.1f} ms{b * 1e3:>7.1f} ms"
                                      for m, b in res.values())
        if "torch" in res:
            line += f"{res['glasstorch'][0] / res['torch'][0]:>8.2f}"
        print(line)


if __name__ == "__main__":
    main()
