"""The bundled text and its character vocabulary, shared by the char_lstm and gpt examples.

Plain Python and NumPy only (no tensors), so the examples that use it still run on PyTorch when
their ``import glasstorch as torch`` lines become ``import torch``.
"""

import math
import os

import numpy as np

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                    "pride_and_prejudice.txt")
VAL_FRACTION = 0.1  # the last 10% of the text is held out for validation


def load_text(path=TEXT):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Vocab:
    """The characters of a text, sorted; ``encode``/``decode`` map between text and ids."""

    def __init__(self, chars):
        self.chars = "".join(chars)
        self._index = {ch: i for i, ch in enumerate(self.chars)}
        if len(self._index) != len(self.chars):
            raise ValueError("vocabulary characters must be distinct")

    @classmethod
    def from_text(cls, text):
        return cls(sorted(set(text)))

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        """int64 ids of ``text``; a character outside the vocabulary raises KeyError."""
        try:
            return np.array([self._index[ch] for ch in text], dtype=np.int64)
        except KeyError as err:
            raise KeyError(f"character {err.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def load_corpus(path=TEXT):
    """(vocab, train_ids, val_ids): the text encoded as int64 arrays, split at 90%."""
    text = load_text(path)
    vocab = Vocab.from_text(text)
    ids = vocab.encode(text)
    n_train = int(len(ids) * (1 - VAL_FRACTION))
    return vocab, ids[:n_train], ids[n_train:]


def unigram_loss(train_ids, val_ids, vocab_size):
    """Cross-entropy (nats/char) on ``val_ids`` of character frequencies counted on
    ``train_ids`` (add-one smoothed): the loss a model must beat to have learnt any context."""
    counts = np.bincount(train_ids, minlength=vocab_size) + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[val_ids].mean())


def report(row, chars_per_s, bar):
    """Print a validation row of a training history, through the tqdm bar if there is one."""
    line = (f"step {row['step']:5d}  train loss {row['train_loss']:.3f}  val loss "
            f"{row['val_loss']:.3f} (perplexity {math.exp(row['val_loss']):.2f})  "
            f"{chars_per_s:6.0f} chars/s")
    if hasattr(bar, "write"):
        bar.write(line)
    else:
        print(line)
