"""Functional collectives, fully_shard (FSDP2) and distributed checkpoints of fully_shard
models on 2 ranks: glasstorch under mpiexec and torch on gloo run the same worker, each
checked inside against one process on the whole batch, and must print the same lines; the
checkpoint is then loaded whole by one process (another world size). GLASSTORCH_DIST_HEAVY=1
adds the same on 4 ranks (oversubscribed)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_multiprocess import ROOT, env, free_port, heavy  # this folder, on sys.path

pytest.importorskip("mpi4py")
torch = pytest.importorskip("torch")

WORKER = str(Path(__file__).with_name("_worker_fsdp2.py"))
SCENARIOS = "funcol,fully_shard,dcp2"


def run_both(tmp_path, nproc):
    """The result lines of glasstorch and of torch, then each one's single-process reload
    of the checkpoint its ranks saved."""
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    results = tmp_path / "results"
    results.mkdir()
    scratch = {lib: str(tmp_path / lib) for lib in ("glasstorch", "torch")}
    g = subprocess.Popen([mpiexec, "-n", str(nproc), sys.executable, WORKER, "glasstorch",
                          SCENARIOS], cwd=ROOT,
                         env=env(GT_DIST_RESULTS=str(results), GT_SCRATCH=scratch["glasstorch"]),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = str(free_port())
    ts = [subprocess.Popen([sys.executable, WORKER, "torch", SCENARIOS], cwd=ROOT,
                           env=env(RANK=str(r), WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                                   MASTER_PORT=port, GT_SCRATCH=scratch["torch"]),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for r in range(nproc)]
    _, err = g.communicate(timeout=240)
    assert g.returncode == 0, err[-3000:]
    theirs = []
    for t in ts:
        out, terr = t.communicate(timeout=240)
        # torch's gloo may abort while tearing down after printing: the lines are what counts
        lines = [ln[len("RESULT "):] for ln in out.splitlines() if ln.startswith("RESULT ")]
        assert lines, terr[-3000:]
        theirs += lines
    mine = [ln for name in sorted(os.listdir(results))
            for ln in Path(results, name).read_text().splitlines()]
    jobs = ",".join(f"{lib}={folder}" for lib, folder in scratch.items())
    p = subprocess.run([sys.executable, WORKER, jobs, "reload"], cwd=ROOT, timeout=120,
                       env=env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    reloads = [ln.split(" ", 3)[3] for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    return sorted(mine), sorted(theirs), reloads


def check(tmp_path, nproc):
    mine, theirs, (my_reload, their_reload) = run_both(tmp_path, nproc)
    assert len(mine) == 3 * nproc
    assert mine == theirs
    # and what both say is right: training as one process, the checkpoint restored
    assert all(", True), ('trained', False," in ln and ", True), ('no sync then sync', True,"
               " True)" in ln and "('unshard', False, (8, 4), True), ('reshard', True)" in ln
               and "], True), ('no sync" in ln for ln in mine if " fully_shard " in ln)
    assert all("('restored', True, True)" in ln for ln in mine if " dcp2 " in ln)
    assert my_reload == their_reload
    assert my_reload.count("True)") == 4, my_reload


def test_fsdp2_and_functional_collectives_on_2_ranks_match_torch(tmp_path):
    check(tmp_path, 2)


@heavy
def test_fsdp2_and_functional_collectives_on_4_ranks_match_torch(tmp_path):
    check(tmp_path, 4)
