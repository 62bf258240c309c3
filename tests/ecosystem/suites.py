"""Run libraries' OWN test suites under real torch and under glasstorch, side by side.

    python -m tests.ecosystem.suites [--lib NAME ...] [--max-tests N] [--suites-dir DIR]
    python -m tests.ecosystem.suites --prepare [--lib NAME ...]     # get the test files
    python -m tests.ecosystem.suites --list                         # libraries and subsets

Each library's tests come from the release that is installed (never from this repository):

- ``sdist``: its source distribution on PyPI ships the tests; ``--prepare`` downloads it with
  pip (``pip download --no-binary :all: --no-deps NAME==VERSION``) and unpacks the test folders
  into ``<suites-dir>/<lib>/``.
- ``git``: the tests are only in the GitHub repository. Bring a snapshot of it with the
  session's ``fetch github:OWNER/NAME`` tool (it lands in ``/work/.mirror/OWNER+NAME/repo``);
  ``--prepare`` then runs ``git --git-dir MIRROR archive TAG PATHS | tar -x -C <suites-dir>/<lib>``
  (or prints that command when the mirror is elsewhere: ``--mirror-dir``).

Running: the documented CPU/offline subset (``--list`` shows it) is collected under real torch,
``--max-tests`` of those node ids are picked evenly, and the same ids run twice in fresh
interpreters, once under torch and once with ``install_as_torch()`` in effect
(``_pytest_launch.py``), with pytest-timeout's ``--timeout`` per test when installed. It prints
pass/fail/error/skip counts side by side and writes ``<out>/<lib>.json``: every test's outcome
under both, and glasstorch's failures where torch passes grouped by cause (the "not implemented
in glasstorch" line when there is one, else the exception's last line).
"""

import argparse
import collections
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "_pytest_launch.py")
DEFAULT_SUITES = "/work/ecosystem-suites"
DEFAULT_MIRRORS = "/work/.mirror"
ORACLE_SITE = "_oracle_site"  # in the suites dir: the unpacked torchvision wheel (record.py)

sys.path.insert(0, os.path.dirname(HERE))
from ecosystem._harness import offline_env  # noqa: E402

CONFIG_FILES = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")


@dataclasses.dataclass
class Suite:
    """Where a library's tests come from and which CPU/offline subset to run."""

    dist: str  # the distribution whose installed version picks the tests
    module: str  # what must be importable
    source: str  # "sdist", or "git:OWNER/NAME@REF" (REF may use {version})
    paths: tuple  # folders/files to take from the source
    args: tuple  # pytest arguments selecting the subset (paths, -k, -m)
    env: dict = dataclasses.field(default_factory=dict)
    needs_torchvision: bool = False  # the oracle run needs the unpacked torchvision wheel
    note: str = ""
    requires: tuple = ()  # test-only packages the suite imports (see --prepare)
    # folders the sdist ships without the (empty) __init__.py the repository has; the tests
    # import each other relatively, so --prepare adds it
    packages: tuple = ()
    # text replacements in the test files, as the project's own packaging does for a
    # standalone distribution (lightning's monorepo tests import lightning.pytorch)
    rewrite: tuple = ()


SUITES = {
    "einops": Suite("einops", "einops", "sdist", ("einops/tests",), ("einops/tests",),
                    env={"EINOPS_TEST_BACKENDS": "torch"},
                    note="all of einops' tests, torch backend only"),
    "torchinfo": Suite("torchinfo", "torchinfo", "git:TylerYep/torchinfo@v{version}",
                       ("tests", "setup.cfg"), ("tests", "-k", "not gpu and not half"),
                       needs_torchvision=True,
                       note="all CPU tests; the torchinfo_xl ones use torchvision models"),
    "torchmetrics": Suite(
        "torchmetrics", "torchmetrics", "git:Lightning-AI/torchmetrics@v{version}",
        ("tests", "pyproject.toml"),
        ("tests/unittests/classification/test_accuracy.py",
         "tests/unittests/classification/test_f_beta.py",
         "tests/unittests/classification/test_precision_recall.py",
         "tests/unittests/classification/test_confusion_matrix.py",
         "tests/unittests/classification/test_auroc.py",
         "tests/unittests/regression/test_mean_error.py",
         "tests/unittests/regression/test_r2.py",
         "tests/unittests/regression/test_pearson.py",
         "tests/unittests/bases/test_collections.py",
         "tests/unittests/bases/test_metric.py",
         "-k", "not ddp and not cuda and not gpu"),
        # sklearn reference results are cached on disk: one cache per backend's run
        env={"PYTEST_REFERENCE_CACHE": "{workdir}/{backend}-references"},
        requires=("cachier==4.1.0", "scikit-learn"),
        note="classification/regression metrics and the Metric/MetricCollection bases, "
             "no DDP"),
    "timm": Suite("timm", "timm", "sdist", ("tests",),
                  ("tests/test_layers.py", "tests/test_models.py", "-k",
                   "not test_models or resnet18 or vit_tiny_patch16_224 or efficientnet_b0 "
                   "or convnext_atto"),
                  needs_torchvision=True,
                  note="all layer tests; model tests for the four smoke-test architectures"),
    "peft": Suite("peft", "peft", "sdist", ("tests",),
                  ("tests/test_config.py", "tests/test_custom_models.py", "-k",
                   "not gpu and not cuda"), packages=("tests",),
                  requires=("diffusers", "datasets"),
                  note="config tests and the custom-model matrix (local tiny models)"),
    "accelerate": Suite("accelerate", "accelerate", "sdist", ("tests",),
                        ("tests/test_accelerator.py", "tests/test_data_loader.py",
                         "tests/test_state_checkpointing.py", "tests/test_optimizer.py",
                         "tests/test_scheduler.py", "tests/test_hooks.py",
                         "tests/test_modeling_utils.py", "tests/test_utils.py",
                         "-k", "not gpu and not cuda and not xpu and not mps"),
                        packages=("tests",), requires=("parameterized",),
                        note="single-process CPU tests (no launcher, no multi-device)"),
    "lightning": Suite(
        "pytorch-lightning", "pytorch_lightning", "git:Lightning-AI/pytorch-lightning@HEAD",
        ("tests/tests_pytorch",),
        ("tests/tests_pytorch/callbacks/test_early_stopping.py",
         "tests/tests_pytorch/checkpointing/test_model_checkpoint.py",
         "tests/tests_pytorch/core/test_lightning_module.py",
         "tests/tests_pytorch/trainer/test_dataloaders.py",
         "tests/tests_pytorch/loops/test_training_loop.py",
         "-k", "not gpu and not cuda and not tpu and not mps and not ddp"),
        rewrite=(("lightning.pytorch", "pytorch_lightning"),
                 ("lightning.fabric", "lightning_fabric")),
        note="callbacks, checkpointing, LightningModule, dataloaders, training loop; the "
             "monorepo has no per-package tags, so HEAD's tests may differ from the "
             "installed version; imports rewritten to pytorch_lightning as upstream's "
             "packaging does"),
    "x_transformers": Suite("x-transformers", "x_transformers",
                            "git:lucidrains/x-transformers@HEAD", ("tests",), ("tests",),
                            note="all tests; the repository has no release tags, so the "
                                 "snapshot's HEAD may differ from the installed version"),
    # The sdist ships the shared mixins and a few standalone test files, not tests/models/ nor
    # tests/generation/; the GitHub snapshot is over the fetch size limit, and the session's
    # file index holds model tests of other releases (4.x, without the 5.x CausalLMModelTester
    # they rely on) with no way to pick 5.24.0's, so the subset is the standalone files.
    "transformers": Suite("transformers", "transformers", "sdist", ("tests",),
                          ("tests/test_image_transforms.py", "tests/test_monkey_patching.py",
                           "tests/test_executorch.py"), packages=("tests",),
                          note="the standalone test files of the sdist: image transforms, "
                               "monkey patching, the ExecuTorch/torch.export wrappers"),
    "gpytorch": Suite("gpytorch", "gpytorch", "sdist", ("test",),
                      ("test/kernels", "test/means", "test/likelihoods", "test/mlls",
                       "test/constraints", "test/examples/test_simple_gp_regression.py",
                       "-k", "not cuda and not keops"),
                      note="kernels, means, likelihoods, marginal likelihoods, constraints, "
                           "exact GP regression"),
    "torch_optimizer": Suite("torch-optimizer", "torch_optimizer", "sdist", ("tests",),
                             ("tests",), note="all tests"),
}

UNAVAILABLE = {
    "sentence_transformers": "the GitHub snapshot is of 5.2.0.dev0 (installed: 6.2.0) and "
                             "the sdist ships one test file",
}


def installed_version(dist):
    """The installed version of ``dist`` (None when it is not installed)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _copy_paths(src_root, dest, paths):
    os.makedirs(dest, exist_ok=True)
    for rel in (*paths, *CONFIG_FILES):
        src = os.path.join(src_root, rel)
        target = os.path.join(dest, rel)
        if os.path.isdir(src):
            shutil.copytree(src, target, dirs_exist_ok=True)
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(src, target)
        elif rel in paths:
            raise FileNotFoundError(f"{rel} is not in {src_root}")


def prepare(lib, suites_dir, mirror_dir):
    """Put ``lib``'s tests into ``<suites_dir>/<lib>``; return a sentence saying what was done."""
    said = _prepare_files(lib, suites_dir, mirror_dir)
    missing = [r for r in SUITES[lib].requires
               if installed_version(re.split("[=<>]", r)[0]) is None]
    if missing:
        said += ("\n  its tests also import: pip install -c CONSTRAINTS " + " ".join(missing)
                 + "  (CONSTRAINTS pinning torch==2.13.0 and the installed numpy)")
    return said


def _prepare_files(lib, suites_dir, mirror_dir):
    suite = SUITES[lib]
    version = installed_version(suite.dist)
    if version is None:
        return f"{lib}: {suite.dist} is not installed; install the ecosystem extra first"
    dest = os.path.join(suites_dir, lib)
    if suite.source == "sdist":
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
                   "-q", "-d", tmp, f"{suite.dist}=={version}"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            archives = [f for f in os.listdir(tmp) if f.endswith((".tar.gz", ".zip"))]
            if proc.returncode != 0 or not archives:
                return f"{lib}: pip download failed:\n{proc.stderr[-2000:]}"
            with tarfile.open(os.path.join(tmp, archives[0])) as tar:
                tar.extractall(tmp, filter="data")
            top = next(os.path.join(tmp, d) for d in os.listdir(tmp)
                       if os.path.isdir(os.path.join(tmp, d)))
            _copy_paths(top, dest, suite.paths)
        for package in suite.packages:
            init = os.path.join(dest, package, "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()
        return f"{lib}: tests of {suite.dist} {version} (sdist) in {dest}"
    repo, _, ref = suite.source[len("git:"):].partition("@")
    ref = ref.format(version=version)
    mirror = os.path.join(mirror_dir, repo.replace("/", "+"), "repo")
    archive = (f"git --git-dir {mirror} archive {ref} {' '.join(suite.paths)} "
               f"| tar -x -C {dest}")
    if not os.path.isdir(mirror):
        return (f"{lib}: no snapshot of {repo} at {mirror}. Bring one with the session's "
                f"`fetch github:{repo}` tool, then run --prepare again (it runs: {archive})")
    os.makedirs(dest, exist_ok=True)
    git = subprocess.Popen(["git", "--git-dir", mirror, "archive", ref, *suite.paths],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", dest], stdin=git.stdout, capture_output=True)
    git.stdout.close()
    err = git.stderr.read().decode()
    if git.wait() != 0 or tar.returncode != 0:
        return f"{lib}: `{archive}` failed: {err or tar.stderr.decode()}"
    _rewrite(dest, suite.rewrite)
    sha = subprocess.run(["git", "--git-dir", mirror, "rev-parse", ref], capture_output=True,
                         text=True).stdout.strip()
    with open(os.path.join(dest, ".source"), "w") as f:
        f.write(f"{repo}@{ref} {sha}\n")
    return f"{lib}: tests of {repo}@{ref} ({sha[:10]}) in {dest}"


def _rewrite(dest, replacements):
    if not replacements:
        return
    for folder, _, files in os.walk(dest):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                new = text
                for old, repl in replacements:
                    new = new.replace(old, repl)
                if new != text:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(new)


def _base_args(timeout):
    args = ["-p", "no:cacheprovider", "-o", "addopts=", "-q", "-p", "no:randomly",
            "--continue-on-collection-errors", "-W", "ignore::DeprecationWarning"]
    if timeout and importlib.util.find_spec("pytest_timeout") is not None:
        args += ["--timeout", str(timeout)]
    return args


def _launch(suite, backend, checkout, pytest_args, record, timeout, log, only=None):
    extra = []
    oracle = os.path.join(os.path.dirname(checkout), ORACLE_SITE)
    if backend == "torch" and suite.needs_torchvision and os.path.isdir(oracle):
        extra.append(oracle)
    env = offline_env(extra)
    workdir = os.path.dirname(record)
    env.update({k: v.format(workdir=workdir, backend=backend) for k, v in suite.env.items()})
    env["CUDA_VISIBLE_DEVICES"] = ""
    cmd = [sys.executable, LAUNCH, "--backend", backend, "--record", record,
           *(["--only", only] if only else []), "--", *pytest_args]
    out = open(log, "w")
    return subprocess.Popen(cmd, cwd=checkout, env=env, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL), out, timeout


def _wait(proc_out_timeout):
    proc, out, timeout = proc_out_timeout
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    out.close()
    return code


def collect(suite, checkout, workdir, timeout):
    """Node ids of the suite's subset, collected under real torch."""
    record = os.path.join(workdir, "collect-torch.jsonl")
    log = os.path.join(workdir, "collect-torch.log")
    args = [*_base_args(0), "--collect-only", *suite.args]
    code = _wait(_launch(suite, "torch", checkout, args, record, timeout, log))
    with open(log) as f:
        text = f.read()
    ids = read_records(record)[2]
    if not ids:
        raise RuntimeError(f"collecting under torch found no tests (exit {code}); "
                           f"see {log}:\n{text[-2000:]}")
    return ids


def pick(ids, max_tests):
    """At most ``max_tests`` ids spread evenly over the collected order."""
    if not max_tests or len(ids) <= max_tests:
        return list(ids)
    step = len(ids) / max_tests
    return [ids[int(i * step)] for i in range(max_tests)]


def read_records(path):
    """``(tests, collection_errors, collected_ids)`` from a launcher's JSON lines."""
    tests, errors, collected = {}, [], []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                entry = json.loads(line)
                if entry["outcome"] == "collection_error":
                    errors.append(entry)
                elif entry["outcome"] == "collected":
                    collected.append(entry["nodeid"])
                else:
                    tests[entry["nodeid"]] = entry
    return tests, errors, collected


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_MISSING = re.compile(r"[\w.]+ is not implemented in glasstorch \(yet\)[^\n]*")


def cause_of(entry):
    """The line that says why a test failed: glasstorch's missing-feature message when the
    failure text has one (also from a chained exception), else the crash message."""
    text = entry.get("text", "") + "\n" + entry.get("message", "")
    found = _MISSING.search(text)
    if found:
        line = found.group(0)
    else:
        lines = [ln for ln in (entry.get("message") or "").strip().splitlines() if ln.strip()]
        line = lines[0] if lines else entry.get("outcome", "")
    line = _ADDRESS.sub("0x…", line.strip())
    return line[:300]


OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "not run")


def session_error(log):
    """What stopped a pytest session before any test ran (a conftest that failed to import):
    its last ``E   `` line, with the text before it."""
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    errors = [i for i, ln in enumerate(lines) if ln.startswith("E   ")]
    if not errors:
        return None
    last = errors[-1]
    return {"outcome": "error", "message": lines[last][4:].strip(),
            "text": "\n".join(lines[max(0, last - 30):last + 1])}


def compare(ids, torch_tests, gt_tests, gt_collection_errors, gt_session_error=None):
    """Per-test table and the grouped causes of glasstorch's failures where torch passes."""
    by_file = {e["nodeid"]: e for e in gt_collection_errors}
    table, causes = {}, collections.Counter()
    examples = {}
    for nodeid in ids:
        t = torch_tests.get(nodeid, {"outcome": "not run"})
        g = gt_tests.get(nodeid)
        if g is None:
            file_error = by_file.get(nodeid.split("::")[0])
            if file_error:
                g = {"outcome": "error", "message": file_error["message"],
                     "text": file_error["text"]}
            else:
                g = gt_session_error or {"outcome": "not run"}
        row = {"torch": t["outcome"], "glasstorch": g["outcome"]}
        if g["outcome"] not in ("passed", "xpassed", "skipped", "xfailed"):
            row["cause"] = cause_of(g)
            if t["outcome"] in ("passed", "xpassed"):
                causes[row["cause"]] += 1
                examples.setdefault(row["cause"], nodeid)
        if t["outcome"] in ("failed", "error"):
            row["torch_cause"] = cause_of(t)
        table[nodeid] = row
    grouped = [{"cause": c, "count": n, "example": examples[c]} for c, n in causes.most_common()]
    return table, grouped


def counts(table, side):
    """Outcome counts of one backend's column."""
    c = collections.Counter(row[side] for row in table.values())
    return {k: c.get(k, 0) for k in OUTCOMES}


def run_suite(lib, suites_dir, out_dir, max_tests, timeout, run_timeout):
    """Run one library's subset under both backends; return its report dict."""
    suite = SUITES[lib]
    checkout = os.path.join(suites_dir, lib)
    version = installed_version(suite.dist)
    report = {"library": lib, "version": version, "source": suite.source, "note": suite.note}
    if version is None or importlib.util.find_spec(suite.module) is None:
        report["skipped"] = f"{suite.dist} is not installed"
        return report
    if not os.path.isdir(checkout):
        report["skipped"] = (f"no tests at {checkout}: run `python -m tests.ecosystem.suites "
                             f"--prepare --lib {lib}`")
        return report
    workdir = os.path.join(out_dir, lib)
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    started = time.perf_counter()
    ids = collect(suite, checkout, workdir, run_timeout)
    chosen = pick(ids, max_tests)
    report["collected"], report["selected"] = len(ids), len(chosen)
    argfile = os.path.join(workdir, "nodeids.txt")
    with open(argfile, "w") as f:
        f.write("\n".join(chosen) + "\n")
    args = [*_base_args(timeout), *suite.args]
    runs = {}
    for backend in ("torch", "glasstorch"):  # both at once: two cores, two interpreters
        runs[backend] = _launch(suite, backend, checkout,
                                [*args, "--junitxml", os.path.join(workdir, f"{backend}.xml")],
                                os.path.join(workdir, f"{backend}.jsonl"), run_timeout,
                                os.path.join(workdir, f"{backend}.log"), only=argfile)
    report["exit"] = {backend: _wait(r) for backend, r in runs.items()}
    torch_tests = read_records(os.path.join(workdir, "torch.jsonl"))[0]
    gt_tests, gt_errors, _ = read_records(os.path.join(workdir, "glasstorch.jsonl"))
    stopped = None if gt_tests else session_error(os.path.join(workdir, "glasstorch.log"))
    table, grouped = compare(chosen, torch_tests, gt_tests, gt_errors, stopped)
    report["torch"], report["glasstorch"] = counts(table, "torch"), counts(table, "glasstorch")
    both = sum(1 for r in table.values()
               if r["torch"] in ("passed", "xpassed") and r["glasstorch"] in ("passed",
                                                                               "xpassed"))
    torch_pass = report["torch"]["passed"] + report["torch"]["xpassed"]
    report["pass_both"] = both
    report["ratio"] = round(both / torch_pass, 3) if torch_pass else None
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["collection_errors"] = [{"nodeid": e["nodeid"], "cause": cause_of(e)}
                                   for e in gt_errors]
    report["causes"] = grouped
    report["tests"] = table
    with open(os.path.join(out_dir, f"{lib}.json"), "w") as f:
        json.dump(report, f, indent=1)
    return report


def print_table(reports, top):
    """Counts side by side, then each library's most frequent causes."""
    head = (f"{'library':<16}{'version':<12}{'run':>5}  {'torch p/f/e/s':>16}  "
            f"{'glasstorch p/f/e/s':>19}  {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for r in reports:
        if "skipped" in r or "failed" in r:
            why = r.get("skipped") or r["failed"]
            print(f"{r['library']:<16}{str(r['version']):<12}  -- {why}")
            continue

        def pfes(c):
            return (f"{c['passed'] + c['xpassed']}/{c['failed']}/{c['error'] + c['not run']}/"
                    f"{c['skipped'] + c['xfailed']}")

        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.0%}"
        print(f"{r['library']:<16}{r['version']:<12}{r['selected']:>5}  "
              f"{pfes(r['torch']):>16}  {pfes(r['glasstorch']):>19}  {ratio:>6}")
    for r in reports:
        if r.get("causes"):
            print(f"\n{r['library']}: glasstorch failures where torch passes, by cause")
            for c in r["causes"][:top]:
                print(f"  {c['count']:>4}  {c['cause']}")


def main(argv=None):
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.ecosystem.suites",
        description=__doc__.split("\n\n")[0],
        epilog="Getting the tests: " + __doc__.split("\n\n")[2].split("Running:")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", choices=sorted(SUITES))
    parser.add_argument("--max-tests", type=int, default=200,
                        help="run at most this many of the subset's tests (0: all)")
    parser.add_argument("--suites-dir", default=DEFAULT_SUITES,
                        help="where <lib>/ test checkouts live (default %(default)s)")
    parser.add_argument("--mirror-dir", default=DEFAULT_MIRRORS,
                        help="where fetched repository snapshots live (default %(default)s)")
    parser.add_argument("--out", help="report folder (default <suites-dir>/_results)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test")
    parser.add_argument("--run-timeout", type=int, default=1800,
                        help="seconds for one backend's whole run of one library")
    parser.add_argument("--top", type=int, default=10, help="causes shown per library")
    parser.add_argument("--prepare", action="store_true", help="fetch the test files")
    parser.add_argument("--list", action="store_true", help="show libraries and subsets")
    parser.add_argument("--report", action="store_true",
                        help="print the table of the last runs (<out>/<lib>.json), run nothing")
    args = parser.parse_args(argv)
    libs = args.lib or list(SUITES)
    if args.list:
        for lib in libs:
            s = SUITES[lib]
            print(f"{lib}: {s.source}; pytest {' '.join(s.args)}\n    {s.note}")
        for lib, why in UNAVAILABLE.items():
            print(f"{lib}: not available: {why}")
        return 0
    if args.prepare:
        for lib in libs:
            print(prepare(lib, args.suites_dir, args.mirror_dir))
        return 0
    out = args.out or os.path.join(args.suites_dir, "_results")
    if args.report:
        reports = []
        for lib in libs:
            path = os.path.join(out, f"{lib}.json")
            if os.path.exists(path):
                with open(path) as f:
                    reports.append(json.load(f))
        print_table(reports, args.top)
        return 0
    os.makedirs(out, exist_ok=True)
    reports = []
    for lib in libs:
        try:
            report = run_suite(lib, args.suites_dir, out, args.max_tests, args.timeout,
                               args.run_timeout)
        except RuntimeError as exc:
            report = {"library": lib, "version": installed_version(SUITES[lib].dist),
                      "failed": str(exc)}
        reports.append(report)
        print(f"[{lib} done]", file=sys.stderr)
    print_table(reports, args.top)
    summary = [{k: v for k, v in r.items() if k != "tests"} for r in reports]
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"\nper-test tables: {out}/<lib>.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
