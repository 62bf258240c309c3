"""The bundled text, and the char-LSTM example: it trains, samples, checkpoints, matches torch."""

import collections
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import glasstorch
from glasstorch.examples import _text, char_lstm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_bundled_text():
    text = _text.load_text()
    assert 100_000 <= len(text.encode("utf-8")) <= 1_000_000
    assert text.startswith("PRIDE AND PREJUDICE\n\nBy Jane Austen")
    assert "gutenberg" not in text.lower()  # shipped without the Project Gutenberg licence
    assert text.isascii()
    vocab, train_ids, val_ids = _text.load_corpus()
    assert len(vocab) == len(set(text)) == 75
    assert len(train_ids) + len(val_ids) == len(text)
    assert len(val_ids) == pytest.approx(0.1 * len(text), abs=1)
    assert vocab.decode(val_ids[-20:]) == text[-20:]


def test_vocab_round_trip_and_errors():
    vocab = _text.Vocab.from_text("hello world")
    assert vocab.chars == " dehlorw"
    ids = vocab.encode("world")
    assert ids.dtype == np.int64 and vocab.decode(ids) == "world"
    with pytest.raises(KeyError, match="'z' is not in the vocabulary"):
        vocab.encode("zoo")
    with pytest.raises(ValueError, match="distinct"):
        _text.Vocab("aa")


def test_unigram_loss_is_the_cross_entropy_of_smoothed_counts():
    train, val = [0, 0, 1, 2, 0], [0, 2]
    counts = collections.Counter(train)
    p = {c: (counts[c] + 1) / (len(train) + 4) for c in range(4)}
    expected = -(math.log(p[0]) + math.log(p[2])) / 2
    assert _text.unigram_loss(np.array(train), np.array(val), 4) == pytest.approx(expected)


def small_text(tmp_path, chars=12_000):
    """The first ``chars`` characters of the book as a file, so validation stays quick."""
    path = tmp_path / "small.txt"
    path.write_text(_text.load_text()[:chars], encoding="utf-8")
    return str(path)


TINY = ["--steps", "12", "--eval-every", "6", "--batch-size", "4", "--seq-len", "16",
        "--embed", "8", "--hidden", "32", "--lr", "0.02", "--sample-len", "30"]


def test_short_run_learns_samples_and_checkpoints(tmp_path, capsys):
    text = small_text(tmp_path)
    result = char_lstm.main(TINY + ["--text", text, "--out", str(tmp_path / "run"),
                                    "--no-progress"])
    printed = capsys.readouterr().out
    assert "unigram" in printed and "step    12" in printed
    assert "sample (temperature 0.8):\nElizabeth" in printed
    losses = [row["val_loss"] for row in result["history"]]
    assert [row["step"] for row in result["history"]] == [0, 6, 12]
    assert losses[0] > math.log(len(result["vocab"])) - 0.1  # untrained: about uniform
    assert losses[2] < losses[1] < losses[0]
    sample, vocab = result["sample"], result["vocab"]
    assert len(sample) == 30 and set(sample) <= set(vocab.chars)

    # the checkpoint rebuilds the model: same validation loss, same sample from the same seed
    model, loaded_vocab = char_lstm.load_model(result["checkpoint"])
    assert loaded_vocab.chars == vocab.chars
    _, _, val_ids = _text.load_corpus(text)
    val = char_lstm.streams(val_ids, 4)
    assert char_lstm.evaluate(model, val, 16) == pytest.approx(result["val_loss"], rel=1e-6)
    again = char_lstm.generate(model, vocab, "Elizabeth", 30, 0.8,
                               glasstorch.Generator().manual_seed(0))
    assert again == sample


def test_bad_arguments_are_refused():
    vocab = _text.Vocab.from_text("abc")
    model = char_lstm.CharLSTM(len(vocab), embed=4, hidden=8)
    with pytest.raises(ValueError, match="non-empty prompt"):
        char_lstm.generate(model, vocab, "", 5)
    with pytest.raises(ValueError, match="temperature"):
        char_lstm.generate(model, vocab, "a", 5, temperature=0)
    assert len(char_lstm.generate(model, vocab, "ab", 7)) == 7
    with pytest.raises(SystemExit):
        char_lstm.parse_args(["--eval-every", "0"])


def test_report_prints_a_history_row(capsys):
    row = {"step": 7, "train_loss": 2.0, "val_loss": math.log(5.0)}
    _text.report(row, 1234.4, range(3))  # no tqdm bar: a plain print
    assert capsys.readouterr().out == ("step     7  train loss 2.000  val loss 1.609 "
                                       "(perplexity 5.00)    1234 chars/s\n")


# --- parity with PyTorch ---------------------------------------------------------------------

def torch_char_lstm(torch, vocab_size, embed, hidden, layers):
    """The example's CharLSTM written independently in torch."""

    class TorchCharLSTM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab_size, embed)
            self.lstm = torch.nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
            self.head = torch.nn.Linear(hidden, vocab_size)

        def forward(self, ids, state=None):
            out, state = self.lstm(self.embed(ids), state)
            return self.head(out), state

    return TorchCharLSTM()


def assert_grads_match(model, twin, atol=1e-5):
    twin_params = dict(twin.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), twin_params[name].grad.numpy(),
                                   rtol=1e-4, atol=atol, err_msg=name)


def loss_over_windows(functional, model, windows):
    """Summed loss over consecutive windows, state carried (detached) between them, as in
    training; backpropagated, and returned as a float."""
    state, total = None, 0.0
    for window in windows:
        logits, state = model(window[:, :-1], state)
        state = tuple(s.detach() for s in state)
        targets = window[:, 1:].reshape(-1)
        total = total + functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets)
    total.backward()
    return total.item()


def test_loss_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    from tests.examples.test_vae import copy_weights

    glasstorch.manual_seed(0)
    model = char_lstm.CharLSTM(11, embed=8, hidden=16, layers=2)
    twin = torch_char_lstm(torch, 11, 8, 16, 2)
    copy_weights(model, twin)
    windows = np.random.default_rng(0).integers(0, 11, size=(2, 3, 9))  # 2 windows of 3x9
    ours = loss_over_windows(glasstorch.nn.functional, model,
                             [glasstorch.from_numpy(w) for w in windows])
    theirs = loss_over_windows(torch.nn.functional, twin, [torch.from_numpy(w) for w in windows])
    assert ours == pytest.approx(theirs, abs=1e-5)
    assert_grads_match(model, twin)


def test_runs_on_torch_and_its_checkpoint_loads_here(tmp_path):
    pytest.importorskip("torch")
    from tests.examples.test_vae import as_pytorch

    text = small_text(tmp_path)
    result = as_pytorch("char_lstm").main(TINY + ["--text", text, "--out", str(tmp_path / "pt")])
    assert result["history"][-1]["val_loss"] < result["history"][0]["val_loss"]
    model, _ = char_lstm.load_model(result["checkpoint"])  # saved by torch, loaded here
    _, _, val_ids = _text.load_corpus(text)
    loss = char_lstm.evaluate(model, char_lstm.streams(val_ids, 4), 16)
    assert loss == pytest.approx(result["val_loss"], abs=1e-5)


def run_module(name, args, cwd):
    """``python -m glasstorch.examples.<name> args`` as a user runs it, with the tqdm bar."""
    proc = subprocess.run([sys.executable, "-m", f"glasstorch.examples.{name}", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_module_entry_point(tmp_path):
    printed = run_module("char_lstm", TINY + ["--text", small_text(tmp_path)], str(tmp_path))
    assert "done in" in printed and "\nElizabeth" in printed
    assert os.path.exists(tmp_path / "char_lstm_run" / "char_lstm.pt")  # the default --out
