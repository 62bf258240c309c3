"""Run one library's ecosystem program in this (fresh) process and write what it computed.

    python tests/ecosystem/_runner.py --backend glasstorch|torch --lib NAME --out DIR [--record]

With ``--backend glasstorch`` it calls ``install_as_torch()`` before anything imports torch, so
the library runs unmodified on glasstorch. Each case runs on its own; an exception is recorded
for that case (last line and traceback) and the next case still runs. DIR receives
``results.json`` (per case: status, error, seconds, strings, array keys) and ``results.npz``.
"""

import argparse
import importlib
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)

# torchvision (real) lacks its compiled ops against a CPU-only torch; defining the two op
# schemas it registers fake kernels for lets its pure-Python parts import (timm needs only
# torchvision.ops.misc.FrozenBatchNorm2d). Oracle runs only.
_TORCHVISION_SCHEMAS = {
    "nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}


def _prepare_oracle_torchvision():
    import importlib.util

    if importlib.util.find_spec("torchvision") is None:
        return
    import torch

    for name, schema in _TORCHVISION_SCHEMAS.items():
        try:
            torch.library.define(f"torchvision::{name}", schema)
        except RuntimeError:
            pass  # the compiled extension did define it


def _to_numpy(value):
    import numpy as np

    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach()
        if getattr(value, "dtype", None) is not None and str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return np.array(value.cpu().numpy())
    return np.asarray(value)


def _run_case(fn, ctx):
    """(status record, arrays) for one case."""
    started = time.perf_counter()
    record = {"status": "ok", "strings": {}, "arrays": []}
    arrays = {}
    try:
        import torch

        # the initial weights a recording saves are then the same every time it is re-run
        torch.manual_seed(0)
        out = fn(ctx)
        for key, value in out.items():
            if isinstance(value, str):
                record["strings"][key] = value
            else:
                arrays[f"{fn.__name__}/{key}"] = _to_numpy(value)
                record["arrays"].append(key)
    except BaseException as exc:  # noqa: B036 - a case may die of anything; record it
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.format_exc()
        record = {"status": "error", "error": _last_line(exc), "traceback": tb[-6000:]}
        arrays = {}
    record["seconds"] = round(time.perf_counter() - started, 3)
    return record, arrays


def _last_line(exc):
    """The exception's last line; for a chain (``raise X from Y``, as transformers' lazy
    imports do) the innermost cause, which names what glasstorch lacks."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        if inner is None:
            break
        exc = inner
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def main(argv=None):
    """Parse the command line, run every case of the library, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["torch", "glasstorch"], required=True)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--record", action="store_true",
                        help="real torch only: save the weights each case builds into fixtures/")
    parser.add_argument("--case", action="append", help="run only these cases")
    args = parser.parse_args(argv)
    if args.record and args.backend != "torch":
        parser.error("--record needs --backend torch")

    # the script folder must not shadow library modules; tests/ holds the `ecosystem` package
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    sys.path[:0] = [TESTS, ROOT]
    if args.backend == "glasstorch":
        from glasstorch._compat import install_as_torch
        install_as_torch()
    else:
        _prepare_oracle_torchvision()

    os.makedirs(args.out, exist_ok=True)
    result = {"library": args.lib, "backend": args.backend, "cases": {}}
    arrays = {}
    support = importlib.import_module("ecosystem._support")
    support.CASES.clear()
    started = time.perf_counter()
    try:
        program = importlib.import_module(f"ecosystem.programs.{args.lib}")
    except BaseException as exc:  # noqa: B036 - an import failure is the result to report
        if isinstance(exc, KeyboardInterrupt):
            raise
        result["import_error"] = {"error": _last_line(exc), "traceback": traceback.format_exc()}
        program = None
    result["import_seconds"] = round(time.perf_counter() - started, 3)
    if program is not None:
        result["version"] = program.version()
        ctx = support.Context(os.path.join(HERE, "fixtures", args.lib),
                              os.path.join(args.out, "scratch"), args.record)
        for fn in support.CASES:
            if args.case and fn.__name__ not in args.case:
                continue
            record, case_arrays = _run_case(fn, ctx)
            result["cases"][fn.__name__] = record
            arrays.update(case_arrays)
    import numpy as np

    np.savez(os.path.join(args.out, "results.npz"), **arrays)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
