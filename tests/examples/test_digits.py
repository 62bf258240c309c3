"""The digits example trains, and writes a loadable checkpoint, TensorBoard events and a PNG."""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import digits

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_bundled_data_and_split():
    with np.load(digits.DATA) as data:
        images, labels = data["images"], data["labels"]
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8 and images.max() == 16
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert np.bincount(labels).min() >= 170
    x_train, y_train, x_test, y_test = digits.load_digits()
    assert tuple(x_train.shape) == (1438, 1, 8, 8) and x_train.dtype == glasstorch.float32
    assert tuple(x_test.shape) == (359, 1, 8, 8) and y_test.dtype == glasstorch.int64
    assert 0 <= float(x_train.min()) and float(x_train.max()) == 1.0
    again = digits.load_digits()  # the split is fixed
    assert glasstorch.equal(again[3], y_test) and glasstorch.equal(again[0], x_train)


def test_one_epoch_writes_outputs(tmp_path, capsys):
    out = str(tmp_path / "run")
    result = digits.main(["--epochs", "1", "--out", out, "--no-progress", "--amp",
                          "--compile", "--batch-size", "64"])
    printed = capsys.readouterr().out
    assert "epoch   1" in printed and "samples/s" in printed
    (row,) = result["history"]
    assert row["train_loss"] < 2.31 and row["test_acc"] > 0.2  # better than chance
    if not hasattr(glasstorch, "autocast"):
        assert "autocast is not yet available" in printed

    # checkpoint: loads back into a fresh model that scores the same
    ckpt = glasstorch.load(result["checkpoint"])
    assert ckpt["epoch"] == 1 and ckpt["test_acc"] == row["test_acc"]
    model = digits.DigitsCNN()
    model.load_state_dict(ckpt["model"])
    _, _, x_test, y_test = digits.load_digits()
    assert digits.evaluate(model, x_test, y_test)[1] == pytest.approx(row["test_acc"])

    # curves.png is a real PNG
    pytest.importorskip("matplotlib")
    from PIL import Image
    with Image.open(result["curves"]) as img:
        assert img.format == "PNG" and img.size == (1000, 400)

    # TensorBoard events hold the logged scalars
    pytest.importorskip("tensorboardX")
    from tests.test_tensorboard import summaries
    logged = {(t, s): v for t, s, v in summaries(result["tensorboard"])}
    assert logged[("acc/test", 1)].simple_value == pytest.approx(row["test_acc"])
    assert logged[("loss/train", 1)].simple_value == pytest.approx(row["train_loss"], rel=1e-6)
    assert logged[("digits/train_samples", 0)].image.width > 0
    assert any(t.startswith("params/") for t, _ in logged)
    assert glob.glob(os.path.join(result["tensorboard"], "hparams", "events.out.tfevents.*"))


def test_profile_flag_and_module_entry_point(tmp_path):
    # as the README runs it: python -m glasstorch.examples.digits
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "glasstorch.examples.digits", "--epochs", "1", "--out",
         str(tmp_path / "run"), "--profile", "--no-progress", "--workers", "1"],
        capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "profile of the training loop" in proc.stdout and "cumulative" in proc.stdout
    assert os.path.exists(tmp_path / "run" / "digits_cnn.pt")


@pytest.mark.skipif(not os.environ.get("GLASSTORCH_SLOW_TESTS"),
                    reason="full training run; set GLASSTORCH_SLOW_TESTS=1")
def test_default_run_reaches_97_percent_quickly(tmp_path):
    result = digits.main(["--out", str(tmp_path / "run"), "--no-progress"])
    assert result["test_acc"] >= 0.97
    assert result["seconds"] < 60


def test_runs_without_optional_dependencies(tmp_path, monkeypatch, capsys):
    for name in ("tqdm", "tqdm.auto", "tensorboardX", "matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import name` fail
    result = digits.main(["--epochs", "1", "--out", str(tmp_path / "run"), "--lr", "0.01"])
    printed = capsys.readouterr().out
    assert "pip install tensorboardX" in printed and "pip install matplotlib" in printed
    assert "epoch   1" in printed  # plain per-epoch prints instead of a bar
    assert result["tensorboard"] is None and result["curves"] is None
    assert os.path.exists(result["checkpoint"])
    assert sorted(os.listdir(tmp_path / "run")) == ["digits_cnn.pt"]
