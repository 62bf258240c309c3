"""glasstorch.utils.tensorboard.SummaryWriter writes real event files (read back here)."""

import glob
import io
import os
import struct

import numpy as np
import pytest

import glasstorch as gt
from glasstorch.utils.tensorboard import SummaryWriter

pytest.importorskip("tensorboardX")
from tensorboardX.proto.event_pb2 import Event  # noqa: E402
from tensorboardX.record_writer import masked_crc32c  # noqa: E402


def read_events(run_dir):
    """Every Event in the event files of one run directory (TFRecord framing, CRCs checked)."""
    events = []
    files = sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*")))
    assert files, f"no event file in {run_dir}"
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            header = data[pos:pos + 8]
            (length,) = struct.unpack("<Q", header)
            (hcrc,) = struct.unpack("<I", data[pos + 8:pos + 12])
            assert hcrc == masked_crc32c(header)
            body = data[pos + 12:pos + 12 + length]
            (bcrc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
            assert bcrc == masked_crc32c(body)
            pos += 16 + length
            events.append(Event.FromString(body))
    return events


def summaries(run_dir):
    """(tag, step, Summary.Value) for every summary value in a run."""
    out = []
    for ev in read_events(run_dir):
        if ev.HasField("summary"):
            for v in ev.summary.value:
                out.append((v.tag, ev.step, v))
    return out


def test_scalars_histogram_images_text(tmp_path):
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        assert w.get_logdir() == log_dir
        for step in range(3):
            w.add_scalar("loss", gt.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.5, 7)
        w.add_histogram("weights", gt.arange(100, dtype=gt.float32), 1)
        w.add_histogram("half", gt.ones(10, dtype=gt.bfloat16), 1)
        w.add_image("img", gt.zeros(3, 8, 4), 2)
        w.add_image("img_hw", gt.ones(5, 6), 2, dataformats="HW")
        w.add_images("batch", gt.rand(4, 1, 8, 8), 3)
        w.add_text("note", "hello **glasstorch**", 4)
    got = summaries(log_dir)
    loss = [(s, v.simple_value) for t, s, v in got if t == "loss"]
    assert loss == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    assert [(s, v.simple_value) for t, s, v in got if t == "lr"] == [(7, 0.5)]
    (hist,) = [v.histo for t, _, v in got if t == "weights"]
    assert hist.num == 100 and hist.min == 0 and hist.max == 99 and hist.sum == 4950
    (half,) = [v.histo for t, _, v in got if t == "half"]
    assert half.num == 10 and half.sum == 10
    (img,) = [v.image for t, _, v in got if t == "img"]
    assert (img.height, img.width, img.colorspace) == (8, 4, 3)
    assert img.encoded_image_string.startswith(b"\x89PNG")
    (img_hw,) = [v.image for t, _, v in got if t == "img_hw"]
    assert (img_hw.height, img_hw.width) == (5, 6)
    (batch,) = [v.image for t, _, v in got if t == "batch"]
    assert batch.height == 8 and batch.width == 32  # tiled in one row of up to 8, as torch
    (text,) = [v for t, _, v in got if t.startswith("note")]
    assert b"hello **glasstorch**" in text.tensor.string_val[0]


def test_add_scalars_uses_torch_layout(tmp_path):
    log_dir = str(tmp_path / "run")
    w = SummaryWriter(log_dir)
    for step in range(2):
        w.add_scalars("acc/all", {"train": gt.tensor(0.5 + step), "test": 0.25 * step}, step)
    w.flush()
    w.close()
    train = summaries(os.path.join(log_dir, "acc_all_train"))
    assert [(t, s, v.simple_value) for t, s, v in train] == [("acc/all", 0, 0.5),
                                                            ("acc/all", 1, 1.5)]
    test = summaries(os.path.join(log_dir, "acc_all_test"))
    assert [v.simple_value for _, _, v in test] == [0.0, 0.25]


def test_add_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        w.add_figure("curve", fig, 5)
    ((tag, step, v),) = summaries(log_dir)
    assert (tag, step) == ("curve", 5)
    assert (v.image.width, v.image.height) == (100, 50)
    from PIL import Image
    assert Image.open(io.BytesIO(v.image.encoded_image_string)).size == (100, 50)


def test_add_hparams_writes_sub_run(tmp_path):
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        w.add_hparams({"lr": 0.01, "bs": 32, "opt": "adam"}, {"hparam/acc": gt.tensor(0.9)},
                      run_name="trial")
        with pytest.raises(TypeError):
            w.add_hparams([("lr", 1)], {"m": 1})
        with pytest.raises(TypeError):
            w.add_hparams({"lr": 0.1}, {"m": 1}, hparam_domain_discrete={"lr": ["a"]})
    got = summaries(os.path.join(log_dir, "trial"))
    tags = [t for t, _, _ in got]
    assert "_hparams_/experiment" in tags and "_hparams_/session_start_info" in tags
    (acc,) = [v.simple_value for t, _, v in got if t == "hparam/acc"]
    assert acc == pytest.approx(0.9)


def test_read_back_with_tensorboard(tmp_path):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    log_dir = str(tmp_path / "run")
    with SummaryWriter(log_dir) as w:
        for step in range(4):
            w.add_scalar("train/loss", 2.0 - step, step)
        w.add_image("digit", np.full((1, 4, 4), 0.5, dtype=np.float32), 0)
    acc = ea_mod.EventAccumulator(log_dir)
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("train/loss")] == [
        (0, 2.0), (1, 1.0), (2, 0.0), (3, -1.0)]
    (img,) = acc.Images("digit")
    assert (img.width, img.height) == (4, 4)


def test_default_log_dir_and_add_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with pytest.raises(NotImplementedError, match="add_graph"):
        w.add_graph(object(), gt.zeros(1, 2))
    w.close()
    assert glob.glob(os.path.join(w.get_logdir(), "events.out.tfevents.*"))
