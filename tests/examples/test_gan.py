"""The GAN example: one D/G step matches PyTorch, the pixel Frechet distance is right, a short
run brings generated digits closer to real ones and writes a checkpoint and a real PNG."""

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import gan
from tests.examples.test_vae import (
    as_pytorch,
    assert_close,
    assert_same_grads_and_weights,
    copy_weights,
    to_torch,
)

torch = pytest.importorskip("torch")


def test_training_step_matches_pytorch():
    glasstorch.manual_seed(0)
    generator, discriminator = gan.Generator(8, 32), gan.Discriminator(32)
    twin_module = as_pytorch("gan")
    twin_g, twin_d = twin_module.Generator(8, 32), twin_module.Discriminator(32)
    copy_weights(generator, twin_g)
    copy_weights(discriminator, twin_d)
    real = gan.load_digits()[0][:16] * 2 - 1
    z = glasstorch.randn(16, 8)  # the same fakes in both

    def adam(params, lib):
        return lib.optim.Adam(params, lr=1e-2, betas=(0.5, 0.999))

    ours = gan.train_step(generator, discriminator, adam(generator.parameters(), glasstorch),
                          adam(discriminator.parameters(), glasstorch), real, z)
    theirs = twin_module.train_step(twin_g, twin_d, adam(twin_g.parameters(), torch),
                                    adam(twin_d.parameters(), torch), to_torch(real), to_torch(z))
    for a, b in zip(ours, theirs):  # discriminator loss, generator loss
        assert_close(a, b)
    # D's grads hold the D step's plus what the G step's backward left in them, in both
    assert_same_grads_and_weights(generator, twin_g)
    assert_same_grads_and_weights(discriminator, twin_d)


def test_pixel_frechet_distance():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    glasstorch.manual_seed(0)
    a = glasstorch.rand(300, 1, 8, 8)
    b = glasstorch.rand(200, 1, 8, 8).pow(2)
    x, y = a.flatten(1).double().numpy(), b.flatten(1).double().numpy()
    cov_x, cov_y = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    expected = (((x.mean(0) - y.mean(0)) ** 2).sum() + np.trace(cov_x + cov_y)
                - 2 * np.trace(scipy_linalg.sqrtm(cov_x @ cov_y).real))
    assert gan.pixel_frechet_distance(a, b) == pytest.approx(expected, rel=1e-6)
    assert gan.pixel_frechet_distance(a, a) == pytest.approx(0, abs=1e-6)


def test_short_run_brings_samples_closer_and_writes_outputs(tmp_path, capsys):
    result = gan.main(["--epochs", "8", "--out", str(tmp_path / "run"), "--no-progress",
                       "--log-every", "4", "--hidden", "128"])
    printed = capsys.readouterr().out
    assert "epoch    8  D loss" in printed and "pixel FD" in printed
    assert len(result["history"]) == 8
    assert all(np.isfinite([row["d_loss"], row["g_loss"]]).all() for row in result["history"])
    assert result["floor_pixel_fd"] < 0.5 < 8 < result["initial_pixel_fd"]
    assert result["pixel_fd"] < 0.7 * result["initial_pixel_fd"]

    ckpt = glasstorch.load(result["checkpoint"])
    generator = gan.Generator(hidden=128)
    generator.load_state_dict(ckpt["generator"])
    gan.Discriminator(hidden=128).load_state_dict(ckpt["discriminator"])
    _, _, x_test, _ = gan.load_digits()
    samples = gan.sample(generator, gan.EVAL_SAMPLES, seed=0)
    assert gan.pixel_frechet_distance(samples, x_test) == pytest.approx(ckpt["pixel_fd"])

    pytest.importorskip("PIL")
    from PIL import Image
    with Image.open(result["samples"]) as img:  # 8 x 8 images, 32 px each, 2 px padding
        assert img.format == "PNG" and img.size == (8 * 34 + 2, 8 * 34 + 2)
        assert np.asarray(img.convert("L")).std() > 20


def test_example_runs_on_pytorch(tmp_path):
    result = as_pytorch("gan").main(["--epochs", "2", "--out", str(tmp_path / "run"),
                                     "--no-progress", "--hidden", "32"])
    assert np.isfinite(result["pixel_fd"])
    assert isinstance(torch.load(result["checkpoint"])["generator"]["net.0.weight"],
                      torch.Tensor)
