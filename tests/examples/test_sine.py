"""The sine forecasting example: a GRU step and a rollout match PyTorch, the data are what the
docstring says, and a short run clearly beats the repeat-the-last-value forecast."""

import math

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import sine
from tests.examples.test_vae import (
    as_pytorch,
    assert_close,
    assert_same_grads_and_weights,
    copy_weights,
    to_torch,
)

torch = pytest.importorskip("torch")

SHORT_RUN = ["--epochs", "2", "--train-series", "640", "--batch-size", "16", "--test-series",
             "100", "--hidden", "16", "--length", "40", "--context", "20", "--horizon", "10",
             "--no-progress"]


def twin_forecaster(model, hidden):
    twin_module = as_pytorch("sine")
    twin = twin_module.Forecaster(hidden)
    copy_weights(model, twin)
    return twin_module, twin


def test_training_step_matches_pytorch():
    glasstorch.manual_seed(0)
    model = sine.Forecaster(hidden=12)
    twin_module, twin = twin_forecaster(model, 12)
    series, _ = sine.make_waves(8, 25, seed=3)
    # a large max norm, then a tiny one: the step without and with clipping
    for max_norm in (100.0, 0.05):
        ours = sine.train_step(model, glasstorch.optim.Adam(model.parameters(), lr=1e-2),
                               series, max_norm)
        theirs = twin_module.train_step(twin, torch.optim.Adam(twin.parameters(), lr=1e-2),
                                        to_torch(series), max_norm)
        assert_close(ours, theirs)
        assert_same_grads_and_weights(model, twin)


def test_rollout_matches_pytorch():
    glasstorch.manual_seed(1)
    model = sine.Forecaster(hidden=12)
    twin_module, twin = twin_forecaster(model, 12)
    series, _ = sine.make_waves(4, 30, seed=4)
    with glasstorch.no_grad():
        forecast = sine.rollout(model, series[:, :20], 10)
        # the rollout's first prediction is the one-step prediction after the context
        assert glasstorch.allclose(forecast[:, 0], model(series[:, :20])[0][:, -1])
    with torch.no_grad():
        assert_close(forecast, twin_module.rollout(twin, to_torch(series[:, :20]), 10))
    assert tuple(forecast.shape) == (4, 10)


def test_make_waves():
    noisy, clean = sine.make_waves(500, 48, noise=0.1, seed=5)
    assert tuple(noisy.shape) == (500, 48) and noisy.dtype == glasstorch.float32
    amplitude = clean.abs().max(1).values  # over >= 2 periods a wave reaches its peak
    assert 0.45 < amplitude.min().item() and amplitude.max().item() <= 1.5
    assert (noisy - clean).std().item() == pytest.approx(0.1, rel=0.05)
    again, _ = sine.make_waves(500, 48, noise=0.1, seed=5)
    assert glasstorch.equal(again, noisy)
    # the dominant period of each clean wave lies in [8, 24] steps
    spectrum = np.abs(np.fft.rfft(clean.numpy(), n=4800, axis=1))
    periods = 4800 / spectrum.argmax(1)
    assert periods.min() > 7.5 and periods.max() < 25
    assert not glasstorch.equal(sine.make_waves(500, 48, seed=6)[1], clean)


def test_short_run_beats_repeat_last_value_and_writes_outputs(tmp_path, capsys):
    result = sine.main(SHORT_RUN + ["--out", str(tmp_path / "run")])
    printed = capsys.readouterr().out
    assert "one-step" in printed and "naive" in printed
    assert result["one_step_mse"] < 0.4 * result["one_step_baseline_mse"]
    assert result["rollout_mse"] < 0.5 * result["rollout_baseline_mse"]

    ckpt = glasstorch.load(result["checkpoint"])
    model = sine.Forecaster(hidden=16)
    model.load_state_dict(ckpt["model"])
    test_series, _ = sine.make_waves(100, 30, noise=0.05, seed=sine.TEST_SEED)
    metrics = sine.evaluate(model, test_series, context=20, horizon=10)
    for key, value in metrics.items():  # the saved model scores what the run reported
        assert value == pytest.approx(ckpt["metrics"][key], rel=1e-6)
        assert value == pytest.approx(result[key], rel=1e-6)

    pytest.importorskip("matplotlib")
    from PIL import Image
    with Image.open(result["plot"]) as img:
        assert img.format == "PNG" and img.size == (900, 880)


def test_baselines_are_the_naive_forecast():
    t = glasstorch.arange(40, dtype=glasstorch.float32)
    series = glasstorch.sin(2 * math.pi * t / 16).unsqueeze(0)
    model = sine.Forecaster(hidden=4)
    metrics = sine.evaluate(model, series, context=20, horizon=10)
    values = series[0]
    naive_one_step = (values[sine.WARMUP + 1:] - values[sine.WARMUP:-1]).pow(2).mean().item()
    naive_rollout = (values[20:30] - values[19]).pow(2).mean().item()
    assert metrics["one_step_baseline_mse"] == pytest.approx(naive_one_step)
    assert metrics["rollout_baseline_mse"] == pytest.approx(naive_rollout)


def test_bad_context_is_refused(tmp_path):
    with pytest.raises(ValueError, match="context"):
        sine.main(["--context", "5", "--out", str(tmp_path / "run")])


def test_example_runs_on_pytorch(tmp_path):
    result = as_pytorch("sine").main(SHORT_RUN + ["--out", str(tmp_path / "run")])
    assert result["one_step_mse"] < 0.4 * result["one_step_baseline_mse"]
    assert result["rollout_mse"] < 0.5 * result["rollout_baseline_mse"]
    assert isinstance(torch.load(result["checkpoint"])["model"]["head.weight"], torch.Tensor)
