"""Record real torch's outputs of the ecosystem programs into ``tests/ecosystem/fixtures/``.

    python tests/ecosystem/record.py [--lib NAME ...] [--oracle-path DIR]

Each program runs twice under real torch in fresh interpreters: once with ``--record`` (its
cases build models from tiny configs and save the weights with ``torch.save``), once replaying
those weights; the two runs must agree, so the recording is reproducible. ``expected.json`` and
``expected.npz`` of the replay become the fixtures the smoke tests compare glasstorch with.

timm needs torchvision under real torch. Its PyPI wheel is built for CUDA and requires exactly
torch 2.13.0: unpack it outside the venv instead of installing it, so nothing replaces torch::

    pip download --no-deps -d /tmp/tv torchvision==0.28.0
    mkdir -p /work/ecosystem-suites/_oracle_site
    unzip -q -o /tmp/tv/torchvision-0.28.0-*.whl -d /work/ecosystem-suites/_oracle_site
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]

from ecosystem import _harness  # noqa: E402

LIBRARIES = ["einops", "torchinfo", "torchmetrics", "timm", "transformers", "peft",
             "accelerate", "lightning", "x_transformers", "sentence_transformers",
             "kornia", "pyro", "gpytorch", "skorch", "pytorch_optimizer", "torch_optimizer",
             "vector_quantize_pytorch", "ema_pytorch", "entmax", "lion_pytorch", "torch_ema",
             "torchdiffeq", "rotary_embedding_torch"]
FIXTURE_BUDGET = 2 * 1024 * 1024


def _fixture_size():
    total = 0
    for folder, _, files in os.walk(_harness.FIXTURES):
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    return total


def record(lib, oracle_path):
    """Record one library; return a list of problems (empty when it recorded cleanly)."""
    extra = [oracle_path] if oracle_path and os.path.isdir(oracle_path) else []
    folder = os.path.join(_harness.FIXTURES, lib)
    shutil.rmtree(folder, ignore_errors=True)  # everything in it is written anew
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        results, _, proc = _harness.run_program(lib, "torch", out=first, record=True,
                                                extra_path=extra)
        if results is None or "import_error" in results:
            why = results["import_error"]["traceback"] if results else proc.stderr[-3000:]
            return [f"{lib}: the program did not run under torch:\n{why}"]
        broken = {n: c for n, c in results["cases"].items() if c["status"] != "ok"}
        if broken:
            return [f"{lib}.{n} failed under torch: {c['traceback']}" for n, c in broken.items()]
        replay, arrays, proc = _harness.run_program(lib, "torch", out=second, extra_path=extra)
        with np.load(os.path.join(first, "results.npz")) as data:
            rec_arrays = {k: data[k] for k in data.files}
        problems = []
        for name, case in results["cases"].items():
            got = replay["cases"].get(name, {"status": "missing"})
            if got["status"] != "ok":
                problems.append(f"{lib}.{name}: replay under torch: {got.get('traceback')}")
                continue
            problems += [f"{lib}.{name} (torch replay): {p}" for p in
                         _harness.compare_case(name, case, rec_arrays, got, arrays)]
        if problems:
            return problems
        replay.pop("import_seconds", None)  # timings would make every re-record a change
        for case in replay["cases"].values():
            case.pop("traceback", None)
            case.pop("seconds", None)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump(replay, f, indent=1, sort_keys=True)
            f.write("\n")
        shutil.copyfile(os.path.join(second, "results.npz"),
                        os.path.join(folder, "expected.npz"))
    return []


def main(argv=None):
    """Record the named libraries (all by default) and report the fixtures' size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", action="append", choices=LIBRARIES)
    parser.add_argument("--oracle-path", default="/work/ecosystem-suites/_oracle_site",
                        help="folder with the unpacked torchvision wheel (timm needs it)")
    args = parser.parse_args(argv)
    failed = False
    for lib in args.lib or LIBRARIES:
        problems = record(lib, args.oracle_path)
        print(f"{lib}: {'recorded' if not problems else 'FAILED'}")
        for p in problems:
            print("  " + p.replace("\n", "\n  "))
        failed |= bool(problems)
    size = _fixture_size()
    print(f"fixtures: {size / 1024:.0f} KiB (budget {FIXTURE_BUDGET // 1024} KiB)")
    return 1 if failed or size > FIXTURE_BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
