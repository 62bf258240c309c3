"""The training-step workloads of the benchmark suite, written once against the torch API
and run with ``lib`` = torch or glasstorch. Each ``cases()`` returns
``(name, make(lib) -> step callable, steps per timing round)``."""

from __future__ import annotations

import numpy as np


def _seeded(lib):
    lib.manual_seed(0)
    return np.random.default_rng(0)


def _from(lib, arr):
    return lib.from_numpy(np.ascontiguousarray(arr))


def mlp(lib):
    nn = lib.nn
    rng = _seeded(lib)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = _from(lib, rng.standard_normal((128, 784)).astype(np.float32))
    y = _from(lib, rng.integers(0, 10, 128))
    return _trainer(lib, model, opt, lambda: nn.functional.cross_entropy(model(x), y))


def cnn(lib):
    nn = lib.nn
    rng = _seeded(lib)
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128),
                          nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = _from(lib, rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = _from(lib, rng.integers(0, 10, 64))
    return _trainer(lib, model, opt, lambda: nn.functional.cross_entropy(model(x), y))


def lstm(lib):
    nn = lib.nn
    rng = _seeded(lib)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10000, 200)
            self.rnn = nn.LSTM(200, 200)
            self.dec = nn.Linear(200, 10000)

        def forward(self, tokens):
            out, _ = self.rnn(self.emb(tokens))
            return self.dec(out)

    model = LM()
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    tokens = _from(lib, rng.integers(0, 10000, (35, 20)))
    target = _from(lib, rng.integers(0, 10000, 35 * 20))
    return _trainer(lib, model, opt, lambda: nn.functional.cross_entropy(
        model(tokens).reshape(-1, 10000), target))


def small_lstm(lib):
    """A small LSTM classifier: per-node Python cost dominates, not the GEMMs."""
    nn = lib.nn
    rng = _seeded(lib)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(8, 32)
            self.head = nn.Linear(32, 4)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[-1])

    model = Tagger()
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = _from(lib, rng.standard_normal((20, 16, 8)).astype("float32"))
    target = _from(lib, rng.integers(0, 4, 16))
    return _trainer(lib, model, opt, lambda: nn.functional.cross_entropy(model(x), target))


def transformer(lib):
    nn = lib.nn
    rng = _seeded(lib)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(128, 4, 512, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            return self.head(self.encoder(x).mean(1))

    model = Classifier()
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x = _from(lib, rng.standard_normal((16, 64, 128)).astype(np.float32))
    y = _from(lib, rng.integers(0, 10, 16))
    return _trainer(lib, model, opt, lambda: nn.functional.cross_entropy(model(x), y))


def elementwise(lib):
    rng = _seeded(lib)
    x = _from(lib, rng.standard_normal(1_000_000).astype(np.float32)).requires_grad_()
    F = lib.nn.functional

    def step():
        x.grad = None
        y = F.gelu(x * 1.5 + 0.5).tanh() * x
        y.sum().backward()
    return step


def conv(lib):
    rng = _seeded(lib)
    layer = lib.nn.Conv2d(64, 64, 3, padding=1)
    x = _from(lib, rng.standard_normal((32, 64, 32, 32)).astype(np.float32)).requires_grad_()

    def step():
        layer.zero_grad()
        x.grad = None
        layer(x).sum().backward()
    return step


def optimizer(lib):
    rng = _seeded(lib)
    shapes = [(2048, 2048), (1024, 2048), (2048, 1024)] + [(256,)] * 200 + [(64, 64)] * 100
    params = [_from(lib, rng.standard_normal(s).astype(np.float32)).requires_grad_()
              for s in shapes]
    for p in params:
        p.grad = lib.ones_like(p) * 0.01
    opt = lib.optim.Adam(params, lr=1e-3)
    return opt.step


def _trainer(lib, model, opt, loss_fn):
    def step():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        return loss
    return step


def cases():
    return [("mlp 784-512-512-10, SGD momentum, batch 128", mlp, 5),
            ("cnn 2 conv + 2 fc, Adam, batch 64", cnn, 2),
            ("lstm LM 10k vocab, seq 35 x batch 20, SGD", lstm, 1),
            ("small lstm h32, seq 20 x batch 16, SGD", small_lstm, 20),
            ("transformer 2 layers d128, AdamW, 16x64", transformer, 1),
            ("elementwise gelu chain, 1M float32", elementwise, 2),
            ("conv 64->64 3x3 on 32x64x32x32 fwd+bwd", conv, 1),
            ("optimizer Adam step, ~10M params", optimizer, 2)]
