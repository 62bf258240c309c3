"""A full MLP training step written with tensor ops only (no nn yet): 784-512-512-10,
ReLU, batch 128, cross-entropy, SGD with momentum. The same code runs in both libraries."""

import numpy as np


def _step_factory(lib):
    rng = np.random.default_rng(0)

    def param(*shape):
        w = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
        return lib.from_numpy(w).requires_grad_()

    params = [param(784, 512), param(512), param(512, 512), param(512), param(512, 10),
              param(10)]
    bufs = [lib.zeros_like(p) for p in params]
    x = lib.from_numpy(rng.standard_normal((128, 784)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, (128, 1)))

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = (x @ w1 + b1).clamp(min=0)
        h = (h @ w2 + b2).clamp(min=0)
        logits = h @ w3 + b3
        loss = (logits.logsumexp(1) - logits.gather(1, y).squeeze(1)).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p, b in zip(params, bufs):
                b.mul_(0.9).add_(p.grad)
                p.sub_(b, alpha=0.01)
        return loss
    return step


def cases():
    return [("mlp 784-512-512-10 train step (batch 128)", _step_factory, 5)]
