"""ZeroRedundancyOptimizer, DeviceMesh/DTensor, distributed checkpoint and FSDP on 2 ranks
(glasstorch on MPI under mpiexec, torch on gloo side by side, each checked inside against
one process on the whole data). GLASSTORCH_DIST_HEAVY=1 adds the same on 4 ranks
(oversubscribed)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_multiprocess import ROOT, env, free_port, heavy  # this folder, on sys.path

pytest.importorskip("mpi4py")
torch = pytest.importorskip("torch")

WORKER = str(Path(__file__).with_name("_worker_shard.py"))


def run_both(tmp_path, nproc, mine, theirs):
    """The result lines of glasstorch (scenarios ``mine``) and of torch (``theirs``)."""
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    results, scratch = tmp_path / "results", str(tmp_path / "scratch")
    results.mkdir()
    g = subprocess.Popen([mpiexec, "-n", str(nproc), sys.executable, WORKER, "glasstorch",
                          mine], env=env(GT_DIST_RESULTS=str(results), GT_SCRATCH=scratch),
                         cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = str(free_port())
    ts = [subprocess.Popen([sys.executable, WORKER, "torch", theirs], cwd=ROOT,
                           env=env(RANK=str(r), WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                                   MASTER_PORT=port, GT_SCRATCH=scratch),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for r in range(nproc)]
    _, err = g.communicate(timeout=240)
    assert g.returncode == 0, err[-3000:]
    their_lines = []
    for t in ts:
        out, terr = t.communicate(timeout=240)
        # torch's gloo may abort while tearing down after printing: the lines are what counts
        their_lines += [ln[len("RESULT "):] for ln in out.splitlines()
                        if ln.startswith("RESULT ")]
        assert any(ln.startswith("RESULT ") for ln in out.splitlines()), terr[-3000:]
    mine_lines = [ln for name in sorted(os.listdir(results))
                  for ln in Path(results, name).read_text().splitlines()]
    return sorted(mine_lines), sorted(their_lines)


def check(tmp_path, nproc):
    # glasstorch alone runs "fsdp" (torch's FSDP1 needs an accelerator) and "dtensor_train"
    mine, theirs = run_both(tmp_path, nproc, "zero,dtensor,dcp,fsdp,dtensor_train",
                            "zero,dtensor,dcp")
    assert len(mine) == 5 * nproc and len(theirs) == 3 * nproc
    assert [ln for ln in mine if " fsdp " not in ln and " dtensor_train " not in ln] == theirs
    shard = (4 if nproc == 2 else 2, 4)
    assert all(f"('trained', 'SGD', (Shard(dim=0),), {shard}, True), ('trained', 'Adam', "
               f"(Shard(dim=0),), {shard}, True)" in ln for ln in mine if " dtensor_train " in ln)
    # ZeRO and the ops on DTensors agree with the unsharded computation
    assert all("('same as one process', False, True)" in ln and "('resumed', True)" in ln
               for ln in mine if " zero " in ln)
    assert all("('pointwise', (5, 3), True)" in ln and "('mm S1 S0', (5, 2), True)" in ln
               for ln in mine if " dtensor " in ln)
    assert all("('restored', True, True)" in ln for ln in mine if " dcp " in ln)
    for ln in mine:
        if " fsdp " not in ln:
            continue
        shard = 34 if nproc == 2 else 17
        for strategy, numel in (("FULL_SHARD", shard), ("SHARD_GRAD_OP", shard),
                                ("NO_SHARD", 67)):
            assert f"('{strategy}', {numel}, ['0.weight', '0.bias', '2.weight', '2.bias'], " \
                f"True)" in ln, ln
        # FULL_SHARD frees the gathered parameters after forward, the others after backward
        assert "('FULL_SHARD', 'full params kept for backward', False, 'after', False)" in ln
        assert "('SHARD_GRAD_OP', 'full params kept for backward', True, 'after', False)" \
            in ln
        for fact in ("('no_sync leaves no grad', True)", "('clip norm', True)",
                     "('no_sync + clip + step', True)", "('load_state_dict', True)",
                     "('summon_full_params', ['0.weight', '0.bias', '2.weight', '2.bias'], "
                     "True, True)"):
            assert fact in ln, (fact, ln)
        rank = int(ln.split()[0])
        assert f"('rank0_only', {4 if rank == 0 else 0})" in ln


def test_sharded_two_ranks(tmp_path):
    check(tmp_path, 2)


@heavy
def test_sharded_four_ranks(tmp_path):
    check(tmp_path, 4)
