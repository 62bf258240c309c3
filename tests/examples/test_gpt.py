"""The small GPT example: it trains, samples, checkpoints, and matches torch."""

import functools
import math
import os

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import _text, gpt
from tests.examples.test_char_lstm import assert_grads_match, run_module, small_text

TINY = ["--steps", "12", "--eval-every", "6", "--batch-size", "4", "--seq-len", "16",
        "--hidden", "16", "--layers", "2", "--heads", "2", "--lr", "0.02", "--warmup", "2",
        "--sample-len", "30"]


def test_short_run_learns_samples_and_checkpoints(tmp_path, capsys):
    text = small_text(tmp_path)
    result = gpt.main(TINY + ["--text", text, "--out", str(tmp_path / "run"), "--no-progress"])
    printed = capsys.readouterr().out
    assert "unigram" in printed and "step    12" in printed
    assert "sample (temperature 0.8):\nElizabeth" in printed
    assert [row["step"] for row in result["history"]] == [0, 6, 12]
    losses = [row["val_loss"] for row in result["history"]]
    assert losses[2] < losses[1] < losses[0]
    sample, vocab = result["sample"], result["vocab"]
    assert len(sample) == 30 and set(sample) <= set(vocab.chars)

    # the checkpoint rebuilds the model: same validation loss, same sample from the same seed
    model, loaded_vocab = gpt.load_model(result["checkpoint"])
    assert loaded_vocab.chars == vocab.chars
    assert model.head.weight is model.tok_emb.weight  # still tied after loading
    _, _, val_ids = _text.load_corpus(text)
    loss = gpt.evaluate(model, glasstorch.from_numpy(val_ids), 16)
    assert loss == pytest.approx(result["val_loss"], rel=1e-6)
    again = gpt.generate(model, vocab, "Elizabeth", 30, 0.8, glasstorch.Generator().manual_seed(0))
    assert again == sample


def test_learning_rate_warms_up_then_follows_a_cosine_to_the_floor():
    factors = [gpt.lr_factor(step, warmup=4, total=20) for step in range(25)]
    assert factors[:4] == [0.25, 0.5, 0.75, 1.0]
    assert factors[4] == 1.0 and factors[12] == pytest.approx(0.55)  # halfway down the cosine
    assert all(a >= b for a, b in zip(factors[3:], factors[4:]))
    assert factors[20] == factors[24] == pytest.approx(0.1)


def test_weight_decay_only_on_matrices_and_tied_head():
    model = gpt.GPT(10, block_size=8, dim=8, layers=2, heads=2)
    assert model.head.weight is model.tok_emb.weight
    decay, no_decay = gpt.make_optimizer(model, 1e-3, 0.1).param_groups
    named = dict(model.named_parameters())
    assert "head.weight" not in named  # the tied weight is one parameter
    assert {id(p) for p in decay["params"]} == {id(p) for p in named.values() if p.dim() == 2}
    assert all(p.dim() == 1 for p in no_decay["params"])
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert len(decay["params"]) + len(no_decay["params"]) == len(named)


def test_attention_is_causal_and_context_is_bounded():
    glasstorch.manual_seed(0)
    model = gpt.GPT(10, block_size=8, dim=8, layers=2, heads=2)
    ids = glasstorch.tensor([[1, 2, 3, 4, 5, 6]])
    changed = ids.clone()
    changed[0, 4] = 9
    with glasstorch.no_grad():
        before, after = model(ids), model(changed)
    assert glasstorch.equal(before[:, :4], after[:, :4])  # the past cannot see the future
    assert not glasstorch.allclose(before[:, 4:], after[:, 4:])
    with pytest.raises(ValueError, match="longer than block_size 8"):
        model(glasstorch.zeros(1, 9, dtype=glasstorch.int64))
    with pytest.raises(ValueError, match="not divisible"):
        gpt.GPT(10, dim=10, heads=4)


def test_random_windows_and_evaluate_windows():
    data = glasstorch.arange(100)
    x, y = gpt.random_windows(data, 5, 7, glasstorch.Generator().manual_seed(1))
    assert tuple(x.shape) == (5, 7) and glasstorch.equal(y, x + 1)  # consecutive ids
    with pytest.raises(ValueError, match="too few"):
        gpt.evaluate(gpt.GPT(10, block_size=8, dim=8, layers=1, heads=2), data[:8], 8)


# --- parity with PyTorch ---------------------------------------------------------------------

def torch_gpt(torch, vocab_size, block_size, dim, layers, heads):
    """The example's GPT written independently in torch, attention spelled out with a mask."""
    nn = torch.nn

    class TorchBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = nn.Module()
            self.attn.qkv, self.attn.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * dim, dim))

        def attention(self, x):
            b, t, _ = x.shape
            q, k, v = (z.reshape(b, t, heads, -1).permute(0, 2, 1, 3)
                       for z in self.attn.qkv(x).chunk(3, dim=-1))
            scores = q @ k.transpose(-1, -2) / math.sqrt(dim // heads)
            future = torch.ones(t, t, dtype=torch.bool).triu(1)
            y = scores.masked_fill(future, float("-inf")).softmax(-1) @ v
            return self.attn.proj(y.permute(0, 2, 1, 3).reshape(b, t, dim))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab_size, dim)
            self.pos_emb = nn.Embedding(block_size, dim)
            self.blocks = nn.ModuleList([TorchBlock() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab_size, bias=False)
            self.head.weight = self.tok_emb.weight

        def forward(self, ids):
            x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return TorchGPT()


def train_steps(lib, model, optimizer, scheduler, batches):
    """A few steps of the example's recipe; returns the losses."""
    losses = []
    for x, y in batches:
        logits = model(lib.from_numpy(x))
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               lib.from_numpy(y).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


SIZES = {"block_size": 8, "dim": 16, "layers": 2, "heads": 4}


def model_and_twin(torch, weight_std=None):
    """The example's GPT (its own init, or every weight redrawn from N(0, weight_std)) and the
    torch twin holding the same values."""
    from tests.examples.test_vae import copy_weights

    glasstorch.manual_seed(0)
    model = gpt.GPT(13, **SIZES)
    if weight_std is not None:
        with glasstorch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, weight_std)
    twin = torch_gpt(torch, 13, **SIZES)
    copy_weights(model, twin)
    return model, twin


def random_batches(n):
    ids = np.random.default_rng(0).integers(0, 13, size=(n, 3, 9))
    return [(w[:, :-1], w[:, 1:]) for w in ids]


def test_loss_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    # weights larger than GPT-2's init, so that every nonlinearity is exercised
    model, twin = model_and_twin(torch, weight_std=0.3)
    (x, y), = random_batches(1)
    ours = gpt.sequence_loss(model(glasstorch.from_numpy(x)), glasstorch.from_numpy(y))
    theirs = torch.nn.functional.cross_entropy(twin(torch.from_numpy(x)).reshape(-1, 13),
                                               torch.from_numpy(y).reshape(-1))
    ours.backward()
    theirs.backward()
    assert ours.item() == pytest.approx(theirs.item(), abs=1e-5)
    assert_grads_match(model, twin)


def without_key_bias(name, values):
    """``values`` less the key third of a qkv bias. Adding a constant to every key shifts each
    row of attention scores equally, which softmax ignores: that gradient is rounding noise,
    which Adam's normalised steps turn into lr-sized moves that differ between libraries."""
    if not name.endswith("attn.qkv.bias"):
        return values
    dim = len(values) // 3
    return np.concatenate([values[:dim], values[2 * dim:]])


def test_training_steps_match_torch():
    torch = pytest.importorskip("torch")
    model, twin = model_and_twin(torch)
    batches = random_batches(4)
    schedule = functools.partial(gpt.lr_factor, warmup=2, total=4)
    optimizer = gpt.make_optimizer(model, 1e-2, 0.1)
    twin_optimizer = torch.optim.AdamW(
        [{"params": [p for p in twin.parameters() if p.dim() >= 2], "weight_decay": 0.1},
         {"params": [p for p in twin.parameters() if p.dim() < 2], "weight_decay": 0.0}],
        lr=1e-2, betas=(0.9, 0.99))
    losses = train_steps(glasstorch, model, optimizer,
                         glasstorch.optim.lr_scheduler.LambdaLR(optimizer, schedule), batches)
    twin_losses = train_steps(torch, twin, twin_optimizer,
                              torch.optim.lr_scheduler.LambdaLR(twin_optimizer, schedule),
                              batches)
    np.testing.assert_allclose(losses, twin_losses, rtol=0, atol=1e-5)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(twin_optimizer.param_groups[0]["lr"])
    twin_params = dict(twin.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(without_key_bias(name, p.detach().numpy()),
                                   without_key_bias(name, twin_params[name].detach().numpy()),
                                   rtol=0, atol=1e-5, err_msg=name)


def test_runs_on_torch_and_its_checkpoint_loads_here(tmp_path):
    pytest.importorskip("torch")
    from tests.examples.test_vae import as_pytorch

    text = small_text(tmp_path)
    result = as_pytorch("gpt").main(TINY + ["--text", text, "--out", str(tmp_path / "pt")])
    assert result["history"][-1]["val_loss"] < result["history"][0]["val_loss"]
    model, _ = gpt.load_model(result["checkpoint"])  # saved by torch, loaded here
    _, _, val_ids = _text.load_corpus(text)
    loss = gpt.evaluate(model, glasstorch.from_numpy(val_ids), 16)
    assert loss == pytest.approx(result["val_loss"], abs=1e-5)


def test_module_entry_point(tmp_path):
    printed = run_module("gpt", TINY + ["--text", small_text(tmp_path)], str(tmp_path))
    assert "done in" in printed and "\nElizabeth" in printed
    assert os.path.exists(tmp_path / "gpt_run" / "gpt.pt")  # the default --out
