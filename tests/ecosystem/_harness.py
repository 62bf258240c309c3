"""Run an ecosystem program in a fresh interpreter and compare it with torch's recording."""

import concurrent.futures
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
RUNNER = os.path.join(HERE, "_runner.py")

# float32 round-off after a few layers and an optimizer step; the scale term keeps large
# logits from failing on their last bits
RTOL = 2e-4
ATOL = 2e-5
# a weight's gradient sums over every position of every image: its float32 round-off depends
# on the BLAS build's summation order (AVX2 against AVX512 machines), so it gets more room
GRAD_ATOL = 1e-4


def offline_env(extra_path=()):
    """The environment for a program run: offline hubs, no telemetry, glasstorch importable."""
    path = [ROOT, *extra_path]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false",
               DO_NOT_TRACK="1", PYTHONHASHSEED="0", WANDB_DISABLED="true",
               PL_DISABLE_FORK="1", OMP_NUM_THREADS="1")
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def run_program(lib, backend, out=None, record=False, timeout=300, extra_path=()):
    """Run ``programs/<lib>.py`` under ``backend`` in a subprocess; return its results.

    The result is ``(results_dict, arrays, completed_process)``; ``results_dict`` is None when
    the process died before writing anything (the process output then says why).
    """
    own_dir = out is None
    if own_dir:
        tmp = tempfile.TemporaryDirectory(prefix=f"eco-{lib}-")
        out = tmp.name
    cmd = [sys.executable, RUNNER, "--backend", backend, "--lib", lib, "--out", out]
    if record:
        cmd.append("--record")
    try:
        proc = subprocess.run(cmd, cwd=out, env=offline_env(extra_path), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        proc = subprocess.CompletedProcess(cmd, -9, exc.stdout or "", (exc.stderr or "")
                                           + f"\n[timed out after {timeout}s]")
        proc.stdout = proc.stdout.decode() if isinstance(proc.stdout, bytes) else proc.stdout
        proc.stderr = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    results, arrays = None, {}
    try:
        if os.path.exists(os.path.join(out, "results.json")):
            with open(os.path.join(out, "results.json")) as f:
                results = json.load(f)
            with np.load(os.path.join(out, "results.npz")) as data:
                arrays = {k: data[k] for k in data.files}
    finally:
        if own_dir:
            tmp.cleanup()
    return results, arrays, proc


def load_expected(lib):
    """torch's recorded results for ``lib``: ``(results_dict, arrays)``."""
    folder = os.path.join(FIXTURES, lib)
    with open(os.path.join(folder, "expected.json")) as f:
        results = json.load(f)
    with np.load(os.path.join(folder, "expected.npz")) as data:
        arrays = {k: data[k] for k in data.files}
    return results, arrays


def recorded_cases(lib):
    """Case names recorded for ``lib`` (empty when the fixtures are missing)."""
    try:
        return list(load_expected(lib)[0]["cases"])
    except FileNotFoundError:
        return []


def installed(*modules):
    """Whether every named top-level module can be imported."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def compare_case(name, expected, exp_arrays, got, got_arrays):
    """Mismatch messages between torch's record and glasstorch's run of one case."""
    problems = []
    for key, want in expected.get("strings", {}).items():
        have = got.get("strings", {}).get(key)
        if have != want:
            problems.append(f"string {key!r} differs:\n--- torch\n{want}\n--- glasstorch\n{have}")
    for key in expected.get("arrays", []):
        full = f"{name}/{key}"
        want = exp_arrays[full]
        if full not in got_arrays:
            problems.append(f"{key}: missing in glasstorch's output")
            continue
        have = got_arrays[full]
        if have.shape != want.shape:
            problems.append(f"{key}: shape {have.shape} != torch's {want.shape}")
            continue
        if have.dtype != want.dtype:
            problems.append(f"{key}: dtype {have.dtype} != torch's {want.dtype}")
            continue
        if want.dtype.kind in "fc":
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            atol = (GRAD_ATOL if key.startswith("grad.") else ATOL) * max(1.0, scale)
            if not np.allclose(have, want, rtol=RTOL, atol=atol, equal_nan=True):
                err = np.max(np.abs(have.astype(np.float64) - want.astype(np.float64)))
                problems.append(f"{key}: values differ (max abs err {err:.3g}, "
                                f"tolerance {atol:.3g} + {RTOL} * |torch|)")
        elif not np.array_equal(have, want):
            problems.append(f"{key}: values differ:\n torch      {want.ravel()[:20]}\n"
                            f" glasstorch {have.ravel()[:20]}")
    extra = set(got.get("strings", {})) - set(expected.get("strings", {}))
    extra |= set(got.get("arrays", [])) - set(expected.get("arrays", []))
    if extra:
        problems.append(f"outputs torch did not produce: {sorted(extra)}")
    return problems


RUN_TIMEOUT = 180
SELECTED = []  # libraries whose smoke tests this session will run (conftest.py fills it)
_started = {}
_lock = threading.Lock()
# one program per core at once: the runs are independent interpreters, mostly importing
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))


def start(lib):
    """Start (once) the glasstorch run of ``lib`` in the background; return its future."""
    with _lock:
        if lib not in _started:
            _started[lib] = _pool.submit(run_program, lib, "glasstorch", None, False,
                                         RUN_TIMEOUT)
        return _started[lib]


class LibraryRun:
    """One glasstorch run of a library's program, shared by that library's test cases."""

    def __init__(self, lib):
        self.lib = lib
        # the first library needed starts the others too (one per core), so the rest of the
        # session is not slowed before the ecosystem tests begin
        future = start(lib)
        for other in SELECTED:
            start(other)
        self.results, self.arrays, self.proc = future.result()
        self.expected, self.expected_arrays = load_expected(lib)

    def check(self, name):
        """Assert that case ``name`` ran on glasstorch and matches torch's record."""
        if self.results is None:
            raise AssertionError(f"the {self.lib} program died before reporting "
                                 f"(exit {self.proc.returncode}):\n{self.proc.stderr[-4000:]}")
        if "import_error" in self.results:
            err = self.results["import_error"]
            raise AssertionError(f"importing the {self.lib} program failed on glasstorch: "
                                 f"{err['error']}\n{err['traceback'][-3000:]}")
        got = self.results["cases"].get(name)
        if got is None:
            raise AssertionError(f"case {name} did not run on glasstorch")
        if got["status"] != "ok":
            raise AssertionError(f"{self.lib}.{name} raised on glasstorch: {got['error']}\n"
                                 f"{got['traceback']}")
        problems = compare_case(name, self.expected["cases"][name], self.expected_arrays,
                                got, self.arrays)
        if problems and self.results.get("version") != self.expected.get("version"):
            problems.append(f"note: recorded with {self.lib} {self.expected.get('version')}, "
                            f"installed is {self.results.get('version')}: re-run record.py")
        assert not problems, f"{self.lib}.{name} differs from torch:\n" + "\n".join(problems)
