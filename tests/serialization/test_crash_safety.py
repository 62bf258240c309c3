"""A save killed at a random moment leaves either the old or the new complete checkpoint."""

import os
import random
import signal
import subprocess
import sys
import time

import numpy as np

import glasstorch as gt
from glasstorch.serialization import load, save

_CHILD = r"""
import sys
sys.path.insert(0, {root!r})
import glasstorch as gt
from glasstorch.serialization import save
path = sys.argv[1]
i = 1
while True:
    # each checkpoint is self-consistent: every tensor element equals 'step'
    save({{"step": i, "w": gt.full((512, 1024), float(i)), "b": gt.full((3000,), float(i))}},
         path)
    print(i, flush=True)  # the parent kills only after a first complete save
    i += 1
"""


def _check_complete(path):
    ck = load(path)
    step = ck["step"]
    assert ck["w"].shape == (512, 1024) and ck["b"].shape == (3000,)
    assert np.all(ck["w"]._data == step) and np.all(ck["b"]._data == step)
    return step


def test_killed_save_leaves_old_or_new_file(tmp_path):
    # No time budget: a fixed number of kills, each after the child's first complete save
    # (however slowly a busy machine imports it), at a random moment of a later one.
    root = os.path.dirname(os.path.dirname(gt.__file__))
    path = tmp_path / "ckpt.pt"
    save({"step": 0, "w": gt.zeros(512, 1024), "b": gt.zeros(3000)}, path)
    rng = random.Random(1234)
    steps = []
    for _ in range(4):
        child = subprocess.Popen([sys.executable, "-c", _CHILD.format(root=root), str(path)],
                                 stdout=subprocess.PIPE)
        try:
            assert int(child.stdout.readline()) >= 1
            time.sleep(rng.uniform(0.0, 0.2))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        steps.append(_check_complete(path))
    assert all(s > 0 for s in steps)  # each child replaced the file at least once
    # leftover temporaries are hidden files next to the target, never the target itself
    for name in os.listdir(tmp_path):
        assert name == "ckpt.pt" or name.startswith(".ckpt.pt.")
    # the next save removes what the killed saves left behind
    save({"step": -1}, path)
    assert os.listdir(tmp_path) == ["ckpt.pt"]


def test_stale_temporaries_are_removed_only_when_their_writer_is_gone(tmp_path):
    path = tmp_path / "ckpt.pt"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".ckpt.pt.{dead.pid}.abc123.tmp"
    live = tmp_path / f".ckpt.pt.{os.getppid()}.def456.tmp"  # our parent is alive
    other = tmp_path / f".other.pt.{dead.pid}.abc123.tmp"  # another target's
    for p in (stale, live, other):
        p.write_bytes(b"partial")
    save({"step": 1}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(["ckpt.pt", live.name, other.name])
    live.unlink()
    stale.write_bytes(b"partial")
    assert load(path)["step"] == 1  # a load cleans up too
    assert sorted(os.listdir(tmp_path)) == sorted(["ckpt.pt", other.name])


def test_failed_save_keeps_previous_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    save({"step": 1, "w": gt.ones(4)}, path)

    class Boom:
        def __reduce__(self):
            raise OSError("disk full")

    try:
        save({"step": 2, "w": gt.ones(4), "x": Boom()}, path)
    except OSError:
        pass
    else:
        raise AssertionError("save should have failed")
    assert load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["ckpt.pt"]
    # a failure while writing the zip (after pickling) is cleaned up too
    import glasstorch.serialization as ser
    real = ser._write_zip

    def failing(fh, *args):
        fh.write(b"PK\x03\x04partial")
        raise OSError("No space left on device")

    ser._write_zip = failing
    try:
        try:
            save({"step": 3}, path)
        except OSError:
            pass
    finally:
        ser._write_zip = real
    assert load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["ckpt.pt"]
