"""vmap's batching rules: each case runs batched (no per-sample fallback) and matches both
the per-sample loop and torch's vmap; the data-dependent refusals are torch's."""

import warnings

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _data(lib, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s)) for s in shapes]


# (name, function of (lib, *samples), input shapes with the batch dim first, in_dims)
CASES = [
    ("unary", lambda lib, x: x.sin().exp(), [(3, 4)], 0),
    ("binary broadcast", lambda lib, x, y: x * y + 1, [(3, 4), (3, 2, 4)], 0),
    ("unbatched operand", lambda lib, x, y: lib.sub(x, y), [(3, 2, 4), (4,)], (0, None)),
    ("in_dim 1", lambda lib, x: x.tanh(), [(4, 3)], 1),
    ("sum all", lambda lib, x: x.sum(), [(3, 2, 4)], 0),
    ("sum dim keepdim", lambda lib, x: x.sum(-1, keepdim=True), [(3, 2, 4)], 0),
    ("mean dims", lambda lib, x: x.mean((0, 1)), [(3, 2, 4, 2)], 0),
    ("amax", lambda lib, x: x.amax(1), [(3, 2, 4)], 0),
    ("max dim", lambda lib, x: tuple(x.max(0)), [(3, 2, 4)], 0),
    ("argmax all", lambda lib, x: x.argmax(), [(3, 2, 4)], 0),
    ("std", lambda lib, x: x.std(0), [(3, 5, 2)], 0),
    ("softmax", lambda lib, x: lib.softmax(x, -1), [(3, 2, 4)], 0),
    ("log_softmax F", lambda lib, x: lib.nn.functional.log_softmax(x, dim=0), [(3, 2, 4)], 0),
    ("cumsum", lambda lib, x: x.cumsum(1), [(3, 2, 4)], 0),
    ("sort", lambda lib, x: tuple(x.sort(0)), [(3, 5)], 0),
    ("view", lambda lib, x: x.view(4, 2), [(3, 2, 4)], 0),
    ("reshape -1", lambda lib, x: x.reshape(-1), [(3, 2, 4)], 0),
    ("flatten", lambda lib, x: x.flatten(), [(3, 2, 2, 2)], 0),
    ("unsqueeze squeeze", lambda lib, x: x.unsqueeze(0).unsqueeze(-1).squeeze(), [(3, 4)], 0),
    ("transpose", lambda lib, x: x.transpose(0, 1), [(3, 2, 4)], 0),
    ("t T mT", lambda lib, x: (x.t(), x.T, x.mT), [(3, 2, 4)], 0),
    ("permute", lambda lib, x: x.permute(2, 0, 1), [(3, 2, 4, 5)], 0),
    ("movedim", lambda lib, x: x.movedim(0, -1), [(3, 2, 4)], 0),
    ("expand", lambda lib, x: x.expand(2, 3, 4), [(3, 4)], 0),
    ("expand_as", lambda lib, x, y: x.expand_as(y), [(3, 1, 4), (3, 2, 4)], 0),
    ("select narrow", lambda lib, x: (x.select(1, 2), x.narrow(0, 1, 1)), [(3, 2, 4)], 0),
    ("getitem", lambda lib, x: x[0, 1:3, None, ...], [(3, 2, 4)], 0),
    ("getitem index tensor",
     lambda lib, x: x[:, lib.tensor([0, 2])], [(3, 2, 4)], 0),
    ("chunk unbind", lambda lib, x: (*x.chunk(2, 1), *x.unbind(0)), [(3, 2, 4)], 0),
    ("split", lambda lib, x: x.split(1), [(3, 2, 4)], 0),
    ("cat stack", lambda lib, x, y: (lib.cat([x, y], 1), lib.stack([x, y], -1)),
     [(3, 2, 4), (2, 4)], (0, None)),
    ("matmul mm", lambda lib, x, y: (x @ y, lib.mm(x, y)), [(3, 2, 4), (3, 4, 5)], 0),
    ("matmul vector", lambda lib, x, y: (x @ y, y @ x.t()), [(3, 2, 4), (3, 4)], 0),
    ("matmul unbatched", lambda lib, x, y: (x @ y, y.t() @ x.t()), [(3, 2, 4), (4, 5)],
     (0, None)),
    ("matmul broadcast", lambda lib, x, y: lib.matmul(x, y), [(3, 4), (3, 2, 4, 5)], 0),
    ("dot mv outer", lambda lib, x, y: (lib.dot(x, x), lib.mv(y, x), lib.outer(x, x)),
     [(3, 4), (3, 2, 4)], 0),
    ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
     [(3, 2, 4), (5, 4), (5,)], (0, None, None)),
    ("linear batched weight", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
     [(3, 2, 4), (3, 5, 4), (3, 5)], 0),
    ("conv2d", lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
     [(3, 2, 2, 5, 5), (4, 2, 3, 3)], (0, None)),
    ("conv2d unbatched sample", lambda lib, x, w: lib.nn.functional.conv2d(x, w),
     [(3, 2, 5, 5), (4, 2, 3, 3)], (0, None)),
    ("conv1d batched weight", lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b),
     [(3, 2, 2, 7), (3, 4, 2, 3), (3, 4)], 0),
    ("max_pool2d", lambda lib, x: lib.nn.functional.max_pool2d(x, 2), [(3, 2, 2, 4, 4)], 0),
    ("layer_norm", lambda lib, x: lib.nn.functional.layer_norm(x, (4,)), [(3, 2, 4)], 0),
    ("mse_loss", lambda lib, x, y: lib.nn.functional.mse_loss(x, y), [(3, 2, 4), (3, 2, 4)],
     0),
    ("where masked_fill", lambda lib, x: (lib.where(x > 0, x, -x), x.masked_fill(x < 0, 0)),
     [(3, 2, 4)], 0),
    ("gather", lambda lib, x: x.gather(1, lib.tensor([[0, 0], [1, 0]])), [(3, 2, 2)], 0),
    ("clamp pow", lambda lib, x: x.clamp(-0.5, 0.5) ** 2, [(3, 4)], 0),
]


def _run(lib, fn, shapes, in_dims, batched):
    xs = _data(lib, *shapes)
    f = lambda *a: fn(lib, *a)  # noqa: E731
    if batched:
        return lib.vmap(f, in_dims=in_dims)(*xs)
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(xs)
    n = next(x.shape[d] for x, d in zip(xs, dims) if d is not None)
    outs = [f(*[x if d is None else x.select(d, b) for x, d in zip(xs, dims)])
            for b in range(n)]
    flat = [lib.utils._pytree.tree_flatten(o) for o in outs]
    return lib.utils._pytree.tree_unflatten(
        [lib.stack([f[0][i] for f in flat]) for i in range(len(flat[0][0]))], flat[0][1])


def _leaves(lib, tree):
    return [t for t in lib.utils._pytree.tree_leaves(tree)]


@pytest.mark.parametrize("name, fn, shapes, in_dims", CASES, ids=[c[0] for c in CASES])
def test_rule_matches_loop_and_torch(name, fn, shapes, in_dims):
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        ours = _run(glasstorch, fn, shapes, in_dims, True)
    loop = _run(glasstorch, fn, shapes, in_dims, False)
    theirs = _run(torch, fn, shapes, in_dims, True)
    for o, lp, t in zip(_leaves(glasstorch, ours), _leaves(glasstorch, loop),
                        _leaves(torch, theirs), strict=True):
        assert type(o) is glasstorch.Tensor
        assert tuple(o.shape) == tuple(t.shape) == tuple(lp.shape)
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(o.numpy(), lp.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-7, atol=1e-10)


def _mlp_grads(lib, in_dims_params):
    rng = np.random.default_rng(1)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-1, 1, tuple(p.shape))))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(rng.standard_normal((5, 4)), dtype=lib.float32)
    y = lib.tensor(rng.integers(0, 3, 5))

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def test_per_sample_grads_batched():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        ours = _mlp_grads(glasstorch, None)
    theirs = _mlp_grads(torch, None)
    for k in theirs:
        assert tuple(ours[k].shape) == tuple(theirs[k].shape)
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_rule(reduction):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5))
    t = np.array([[0, 1, -100, 4], [2, 2, 2, 2], [1, -100, 3, 0]])
    w = rng.uniform(0.5, 2, 5)
    out = []
    for lib in (glasstorch, torch):
        F = lib.nn.functional
        out.append([lib.vmap(lambda a, b: F.cross_entropy(a, b, reduction=reduction))(
                        lib.tensor(x), lib.tensor(t)),
                    lib.vmap(lambda a, b: F.cross_entropy(a, b, lib.tensor(w),
                                                          reduction=reduction))(
                        lib.tensor(x), lib.tensor(t)),
                    lib.vmap(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1,
                                                          reduction=reduction))(
                        lib.tensor(x), lib.tensor(t))])
    for o, t_ in zip(*out):
        np.testing.assert_allclose(o.numpy(), t_.numpy(), rtol=1e-10)


def _error(lib, fn, x):
    try:
        lib.vmap(fn)(x)
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return type(e), str(e)
    return None


ERRORS = {
    "item": lambda lib, r: r.sum().item(),
    "float": lambda lib, r: float(r.sum()),
    "bool": lambda lib, r: bool(r.sum() > 0),
    "if": lambda lib, r: r if r.sum() > 0 else -r,
    "tolist": lambda lib, r: r.tolist(),
    "numpy": lambda lib, r: r.numpy(),
    "nonzero": lambda lib, r: r.nonzero(),
    "inplace into unbatched": lambda lib, r: lib.zeros(4).add_(r),
    "copy_ into unbatched": lambda lib, r: lib.zeros(4).copy_(r),
    "random": lambda lib, r: r + lib.randn(4),
    "backward": lambda lib, r: r.sum().backward(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_data_dependent_errors(name):
    ours = _error(glasstorch, lambda r: ERRORS[name](glasstorch, r), glasstorch.ones(3, 4))
    theirs = _error(torch, lambda r: ERRORS[name](torch, r), torch.ones(3, 4))
    assert theirs is not None and ours == theirs


def test_inplace_on_batched():
    x = glasstorch.zeros(3, 4)

    def f(r):
        r.add_(1)
        r[0] = 5
        return r
    out = glasstorch.vmap(f)(x)
    assert (x[:, 0] == 5).all() and (x[:, 1:] == 1).all()
    assert (out == x).all()


def test_randomness_modes():
    glasstorch.manual_seed(0)
    x = glasstorch.zeros(4, 3)
    diff = glasstorch.vmap(lambda r: r + glasstorch.rand(3), randomness="different")(x)
    assert not (diff[0] == diff[1]).all()
    same = glasstorch.vmap(lambda r: r + glasstorch.rand(3), randomness="same")(x)
    assert (same[0] == same[1]).all()
    drop = glasstorch.vmap(lambda r: glasstorch.nn.functional.dropout(r + 1, 0.5),
                           randomness="same")(glasstorch.zeros(4, 50))
    assert (drop[0] == drop[3]).all()
    drop = glasstorch.vmap(lambda r: glasstorch.nn.functional.dropout(r + 1, 0.5),
                           randomness="different")(glasstorch.zeros(4, 50))
    assert not (drop[0] == drop[3]).all()


def test_chunk_size_matches():
    x, = _data(glasstorch, (7, 3))
    f = glasstorch.vmap(lambda r: (r.sin(), r.sum()), chunk_size=3)
    a, b = f(x)
    assert a.allclose(x.sin()) and b.allclose(x.sum(1))


def test_custom_function_vmap_staticmethod():
    calls = []

    class Double(glasstorch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vmap(info, in_dims, x):
            calls.append((info.batch_size, in_dims))
            return Double.apply(x), in_dims[0]

    x = glasstorch.ones(3, 2)
    assert (glasstorch.vmap(Double.apply)(x) == 2).all()
    assert calls == [(3, (0,))]
    g = glasstorch.vmap(glasstorch.func.grad(lambda r: Double.apply(r).sum()))(x)
    assert (g == 2).all()


def test_nested_vmap():
    x, y = _data(glasstorch, (3, 4), (5, 4))
    tx, ty = _data(torch, (3, 4), (5, 4))
    ours = glasstorch.vmap(glasstorch.vmap(glasstorch.dot, (None, 0)), (0, None))(x, y)
    theirs = torch.vmap(torch.vmap(torch.dot, (None, 0)), (0, None))(tx, ty)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_graph_of_batched_results_is_their_values():
    """A BatchedTensor's graph is its value's: jacfwd's results keep theirs every time
    (reading the wrapper's own grad_fn slot lost it whenever an id was reused)."""
    x = glasstorch.tensor([0.3, -1.2, 0.7, 0.1], dtype=glasstorch.float64,
                          requires_grad=True)
    for _ in range(60):
        assert glasstorch.func.jacfwd(lambda v: v.softmax(0))(x).requires_grad
