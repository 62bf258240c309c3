"""The VAE example: one training step matches PyTorch, a short run improves the ELBO and writes
a loadable checkpoint and a real PNG, and the example itself runs on PyTorch.

Also home of ``as_pytorch``, the PyTorch twin of an example module, used by the other example
tests."""

import os
import re
import sys
import types

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import vae

torch = pytest.importorskip("torch")

EXAMPLES = os.path.dirname(os.path.abspath(vae.__file__))
TWIN_PACKAGE = "_pytorch_twin_examples"


def _rewrite_imports(source):
    """Point an example's glasstorch import statements at PyTorch (glasstorch.vision at
    torchvision, sibling examples at their own twins); prose and strings stay as they are."""
    def rewrite(match):
        module = match.group(2)
        if module.startswith("glasstorch.examples."):
            module = TWIN_PACKAGE + module[len("glasstorch.examples"):]
        elif module.startswith("glasstorch.vision"):
            module = "torchvision" + module[len("glasstorch.vision"):]
        else:
            module = "torch" + module[len("glasstorch"):]
        return match.group(1) + module
    return re.sub(r"^(\s*(?:import|from) )(glasstorch[\w.]*)", rewrite, source, flags=re.M)


def as_pytorch(name):
    """``glasstorch.examples.<name>`` with its imports rewritten to real torch, as the
    examples' docstrings promise: the same source, run by PyTorch (a twin to compare with)."""
    full_name = f"{TWIN_PACKAGE}.{name}"
    if full_name in sys.modules:
        return sys.modules[full_name]
    if TWIN_PACKAGE not in sys.modules:
        package = types.ModuleType(TWIN_PACKAGE)
        package.__path__ = []
        sys.modules[TWIN_PACKAGE] = package
    path = os.path.join(EXAMPLES, name + ".py")
    with open(path) as f:
        source = _rewrite_imports(f.read())
    for sibling in set(re.findall(rf"^from {TWIN_PACKAGE}\.(\w+) import", source, re.M)):
        as_pytorch(sibling)
    module = types.ModuleType(full_name)
    module.__file__ = path
    sys.modules[full_name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except BaseException:
        del sys.modules[full_name]  # no half-built twin for the next test
        raise
    return module


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().numpy()))


def copy_weights(glasstorch_model, torch_model):
    """Load the glasstorch model's state (parameters and buffers) into its torch twin."""
    torch_model.load_state_dict({k: to_torch(v)
                                 for k, v in glasstorch_model.state_dict().items()})


def assert_close(ours, theirs, atol=1e-5, rtol=1e-5):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                               atol=atol, rtol=rtol)


def assert_same_grads_and_weights(ours, theirs):
    """Same parameter names, gradients (or both None) and values after a step."""
    ours, theirs = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert ours.keys() == theirs.keys()
    for name, p in ours.items():
        q = theirs[name]
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert_close(p.grad, q.grad)
        assert_close(p, q)


def test_training_step_matches_pytorch():
    glasstorch.manual_seed(0)
    model = vae.VAE(latent=4, hidden=32)
    twin_module = as_pytorch("vae")
    twin = twin_module.VAE(latent=4, hidden=32)
    copy_weights(model, twin)
    x_train = vae.load_digits()[0][:16]
    eps = glasstorch.randn(16, 4)  # the same reparameterisation noise in both
    ours = vae.train_step(model, glasstorch.optim.Adam(model.parameters(), lr=1e-2),
                          x_train, eps)
    theirs = twin_module.train_step(twin, torch.optim.Adam(twin.parameters(), lr=1e-2),
                                    to_torch(x_train), to_torch(eps))
    for a, b in zip(ours, theirs):  # -ELBO, reconstruction, KL
        assert_close(a, b)
    assert_same_grads_and_weights(model, twin)


def test_kl_term_is_the_closed_form_gaussian_kl():
    glasstorch.manual_seed(1)
    mu, logvar = glasstorch.randn(5, 3), glasstorch.randn(5, 3)
    x = glasstorch.rand(5, 1, 8, 8)
    _, _, kl = vae.negative_elbo(glasstorch.zeros(5, 1, 8, 8), x, mu, logvar)
    posterior = torch.distributions.Normal(to_torch(mu), to_torch(logvar).mul(0.5).exp())
    prior = torch.distributions.Normal(0.0, 1.0)
    expected = torch.distributions.kl_divergence(posterior, prior).sum() / 5
    assert kl.item() == pytest.approx(expected.item(), rel=1e-5)


def test_short_run_improves_elbo_and_writes_outputs(tmp_path, capsys):
    result = vae.main(["--epochs", "3", "--out", str(tmp_path / "run"), "--no-progress",
                       "--log-every", "1", "--hidden", "64"])
    printed = capsys.readouterr().out
    assert "epoch    3" in printed and "test ELBO" in printed
    elbos = [row["test_elbo"] for row in result["history"]]
    assert result["initial_test_elbo"] < -40  # an untrained decoder: about 64 log 2 nats
    assert elbos[-1] > result["initial_test_elbo"] + 10 and elbos[-1] > elbos[0]
    assert all(row["test_kl"] > 0 for row in result["history"])

    ckpt = glasstorch.load(result["checkpoint"])
    model = vae.VAE(hidden=64)
    model.load_state_dict(ckpt["model"])
    _, _, x_test, _ = vae.load_digits()
    assert vae.evaluate(model, x_test)[0] == pytest.approx(ckpt["test_elbo"], rel=1e-6)
    assert ckpt["test_elbo"] == result["test_elbo"]

    pytest.importorskip("PIL")
    from PIL import Image
    with Image.open(result["grid"]) as img:  # 4 rows of 8 images, 32 px each, 2 px padding
        assert img.format == "PNG" and img.size == (8 * 34 + 2, 4 * 34 + 2)
        pixels = np.asarray(img.convert("L"))
    assert pixels.std() > 20  # digits, not a blank image


def test_runs_without_pillow(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` fail
    monkeypatch.setattr("glasstorch.vision._pil._Image", None)  # forget a cached import
    result = vae.main(["--epochs", "1", "--out", str(tmp_path / "run"), "--hidden", "16"])
    assert "pip install pillow" in capsys.readouterr().out
    assert result["grid"] is None and os.listdir(tmp_path / "run") == ["vae.pt"]


def test_example_runs_on_pytorch(tmp_path, capsys):
    result = as_pytorch("vae").main(["--epochs", "2", "--out", str(tmp_path / "run"),
                                     "--no-progress", "--hidden", "32"])
    assert result["test_elbo"] > result["initial_test_elbo"] + 5
    assert isinstance(torch.load(result["checkpoint"])["model"]["to_mu.weight"], torch.Tensor)
