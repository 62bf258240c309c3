"""torch.func transforms: vmap against the Python loop it replaces (both libraries run
both forms, so the table gives vmap vs loop in each and glasstorch vs torch per form)."""

import numpy as np


def _mlp(lib, batch):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.Tanh(), lib.nn.Linear(32, 4))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(rng.standard_normal((batch, 16)), dtype=lib.float32)
    y = lib.tensor(rng.integers(0, 4, batch))

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
    return model, params, x, y, loss


def _per_sample_vmap(batch):
    def make(lib):
        _, params, x, y, loss = _mlp(lib, batch)
        fn = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        return lambda: fn(params, x, y)
    return make


def _per_sample_loop(batch):
    def make(lib):
        model, _, x, y, _ = _mlp(lib, batch)

        def step():
            grads = []
            for i in range(batch):
                model.zero_grad()
                lib.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
                grads.append([p.grad.clone() for p in model.parameters()])
            return grads
        return step
    return make


def _per_sample_cnn(batch):
    def make(lib):
        rng = np.random.default_rng(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                                  lib.nn.Flatten(), lib.nn.Linear(36, 10))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = lib.tensor(rng.standard_normal((batch, 1, 8, 8)), dtype=lib.float32)
        y = lib.tensor(rng.integers(0, 10, batch))

        def loss(params, sample, target):
            out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
        fn = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        return lambda: fn(params, x, y)
    return make


def _elementwise(form):
    def make(lib):
        x = lib.ones(64, 128)

        def f(r):
            return (r.sin() * r + 1).sum()
        if form == "vmap":
            fn = lib.vmap(f)
            return lambda: fn(x)
        return lambda: lib.stack([f(r) for r in x])
    return make


def _jacobian(kind):
    def make(lib):
        x = lib.ones(16)

        def f(v):
            return (v.sin().outer(v) ** 2).sum(0)
        fn = {"jacrev": lib.func.jacrev, "jacfwd": lib.func.jacfwd,
              "hessian": lambda g: lib.func.hessian(lambda v: g(v).sum())}[kind](f)
        return lambda: fn(x)
    return make


def cases():
    """(name, make(lib) -> zero-arg callable, calls per timing round)."""
    return [
        ("per-sample grads MLP b=32: vmap(grad)", _per_sample_vmap(32), 2),
        ("per-sample grads MLP b=32: Python loop", _per_sample_loop(32), 2),
        ("per-sample grads CNN b=16: vmap(grad)", _per_sample_cnn(16), 2),
        ("sum(sin(r)*r+1) over 64 rows: vmap", _elementwise("vmap"), 5),
        ("sum(sin(r)*r+1) over 64 rows: Python loop", _elementwise("loop"), 5),
        ("jacrev 16 -> 16", _jacobian("jacrev"), 3),
        ("jacfwd 16 -> 16", _jacobian("jacfwd"), 3),
        ("hessian 16 -> 1", _jacobian("hessian"), 1),
    ]
