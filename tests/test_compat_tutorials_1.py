"""Tutorial-style PyTorch programs, unmodified, through ``python -m glasstorch run``.

The DQN script draws every random number from Python's ``random`` and NumPy, so real torch
(run in this process) prints the same episodes and losses. The CIFAR-10 script needs
torchvision, which the test environment lacks, so its outcome is checked against bounds taken
from real torch 2.14 + torchvision 0.29 runs of the same script with seeds 0-6 (first loss
2.29-2.31, final running loss 0.006-0.142, test accuracy 90-100 %, FakeData accuracy 8-12.5 %).
"""

import contextlib
import io
import math
import os
import re
import runpy
import sys

import pytest

from tests.test_compat import NUMBER, SCRIPTS, run_glasstorch


def _run_torch(monkeypatch, script, *args):
    """The script on the real torch, in this process (torch is not served here)."""
    monkeypatch.setattr(sys, "argv", [script, *args])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(script, run_name="__main__")
    return buf.getvalue()


def test_dqn_tutorial_follows_torch_episode_for_episode(monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    script = os.path.join(SCRIPTS, "tutorial_dqn_cartpole.py")
    proc = run_glasstorch("run", script, "20")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ours = proc.stdout.strip().splitlines()
    theirs = _run_torch(monkeypatch, script, "20").strip().splitlines()
    assert len(ours) == len(theirs) == 4, (ours, theirs)
    for a, b in zip(ours, theirs):
        # durations and step counts are integers and must agree exactly; the losses are printed
        # rounded, so allow the last printed digit
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b), (a, b)
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
            assert float(x) == pytest.approx(float(y), rel=1e-3, abs=2e-4), (a, b)
    assert ours[-1].startswith("best duration") and "reward dtype torch.float32" in ours[-1]


def _number(pattern, text):
    return [float(m) for m in re.findall(pattern, text, re.M)]


def test_cifar10_tutorial_reaches_torchs_accuracy(tmp_path):
    pytest.importorskip("PIL")
    pytest.importorskip("matplotlib")
    script = os.path.join(SCRIPTS, "tutorial_cifar10_classifier.py")
    proc = run_glasstorch("run", script, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # make_grid of 4 images 3x32x32 with padding 2, after Normalize to [-1, 1]
    assert out.splitlines()[0] == "grid (3, 36, 138) torch.float32 True"
    assert (tmp_path / "batch.png").stat().st_size > 0
    assert (tmp_path / "cifar_net.pth").stat().st_size > 0
    losses = _number(r"^\[\d, +\d+\] loss: (\S+)$", out)
    assert len(losses) == 14
    assert losses[0] == pytest.approx(math.log(10), abs=0.05)  # chance level at the start
    assert losses[-1] < 0.3
    assert _number(r"^Accuracy of the network on the 500 test images: (\d+) %$", out)[0] >= 85
    per_class = _number(r"^Accuracy for class: \w+ +is (\S+) %$", out)
    assert len(per_class) == 10 and all(0 <= a <= 100 for a in per_class)
    assert len(re.search(r"^Predicted: (.*)$", out, re.M).group(1).split()) == 4
    fake = _number(r"^FakeData accuracy (\S+) % on 200 images \(50, 3, 32, 32\)$", out)
    assert len(fake) == 1 and fake[0] <= 25  # random labels: chance, not what it learned
    assert out.rstrip().endswith("device cpu")
