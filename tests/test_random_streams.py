"""Random streams against torch, bit for bit: the same seed gives the same values and uses
the same number of draws (a trailing ``rand`` must agree too), and generator states travel
between the two libraries in torch's 5056-byte format."""

import math
import pickle
import struct
from fractions import Fraction

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def _bits(t):
    """The raw bytes of a tensor of either library, element by element."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        a = t.contiguous().numpy()
    elif isinstance(t, gt.Tensor):
        a = np.ascontiguousarray(t.detach().numpy()).reshape(tuple(t.shape))
    else:
        return t
    return a.shape, str(a.dtype).replace("bfloat16", "int16"), a.tobytes()


def same_stream(fn, seed=0):
    """Run ``fn(lib)`` after ``lib.manual_seed(seed)`` in both libraries; the results and a
    trailing draw must be identical."""
    out = []
    for lib in (torch, gt):
        lib.manual_seed(seed)
        r = fn(lib)
        out.append((_bits(r) if not isinstance(r, (list, tuple)) else r, lib.rand(4).tolist()))
    (tr, ttail), (gr, gtail) = out
    assert gr == tr
    assert gtail == ttail, "the number of draws differs from torch's"


# ----------------------------------------------------------------------------- generator

def test_seeding_and_state_bytes_match_torch():
    for s in (0, 1, 42, 2 ** 32 + 5, -1, 2 ** 64 - 1, -(2 ** 63)):
        torch.manual_seed(s)
        gt.manual_seed(s)
        assert gt.initial_seed() == torch.initial_seed()
        assert bytes(gt.get_rng_state().numpy()) == bytes(torch.get_rng_state().numpy())
    assert gt.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    g = gt.Generator().manual_seed(7)
    assert bytes(g.get_state().numpy()) == bytes(torch.Generator().manual_seed(7)
                                                 .get_state().numpy())


@pytest.mark.parametrize("pre", [0, 3, 623, 624, 625, 1500])
def test_state_travels_both_ways(pre):
    for lib in (torch, gt):
        lib.manual_seed(11)
        lib.rand(pre)
        lib.randn(3)                      # leaves torch's cached second normal
    ts, gs = torch.get_rng_state(), gt.get_rng_state()
    assert gs.dtype is gt.uint8 and tuple(gs.shape) == (5056,)
    assert bytes(gs.numpy()) == bytes(ts.numpy())
    # a state saved by torch continues identically here, and the reverse
    gt.set_rng_state(gt.tensor(ts.numpy()))
    assert gt.randn(5).tolist() == torch.randn(5).tolist()
    torch.set_rng_state(torch.from_numpy(gs.numpy().copy()))
    gt.set_rng_state(gs)
    assert gt.rand(700).tolist() == torch.rand(700).tolist()


def test_state_layout_fields():
    gt.manual_seed(5)
    gt.rand(3)
    gt.randn(1)
    raw = bytes(gt.get_rng_state().numpy())
    seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw, 0)
    assert (seed, left, seeded, nxt) == (5, 618, 1, 7)
    _, ny, _, valid = struct.unpack_from("<dddi", raw, 24 + 624 * 8)
    assert valid == 1 and ny != 0


def test_state_and_seed_errors_match_torch():
    g, tg = gt.Generator(), torch.Generator()
    for bad in (gt.zeros(10, dtype=gt.uint8), gt.zeros(5056), gt.zeros(5056, dtype=gt.uint8)):
        tbad = torch.from_numpy(bad.numpy())
        with pytest.raises(Exception) as te:
            tg.set_state(tbad)
        with pytest.raises(type(te.value)) as ge:
            g.set_state(bad)
        assert str(ge.value) == str(te.value)
    for s in (2 ** 64, -(2 ** 63) - 1, 1.5, True):
        with pytest.raises(Exception) as te:
            tg.manual_seed(s)
        with pytest.raises(type(te.value)):
            g.manual_seed(s)
    with pytest.raises(RuntimeError, match="offset"):
        g.get_offset()


def test_pickle_clone_and_fork_rng():
    g = gt.Generator().manual_seed(3)
    gt.rand(5, generator=g)
    h = pickle.loads(pickle.dumps(g))
    c = g.clone_state()
    assert h.initial_seed() == 3
    expect = gt.rand(6, generator=g).tolist()
    assert gt.rand(6, generator=h).tolist() == expect == gt.rand(6, generator=c).tolist()
    torch.manual_seed(9)
    gt.manual_seed(9)
    with torch.random.fork_rng():
        torch.rand(10)
    with gt.random.fork_rng():
        gt.rand(10)
    assert gt.rand(3).tolist() == torch.rand(3).tolist()


# ----------------------------------------------------------------------------- uniform, normal

FLOATS = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]


@pytest.mark.parametrize("dt", FLOATS)
def test_rand_and_uniform(dt):
    same_stream(lambda L: L.rand(257, dtype=getattr(L, dt)))
    same_stream(lambda L: L.empty(300, dtype=getattr(L, dt)).uniform_(-1 / 3, 1 / 7))
    same_stream(lambda L: L.empty(300, dtype=getattr(L, dt)).uniform_(2.5, 100.1))


def test_uniform_value_rounding_to_the_upper_bound_becomes_from():
    same_stream(lambda L: L.empty(5000).uniform_(1.0, 1.0 + 2 ** -20))
    same_stream(lambda L: L.empty(5000, dtype=L.float64).uniform_(1.0, 1.0 + 2 ** -49))


@pytest.mark.parametrize("n", [1, 2, 3, 15, 16, 17, 31, 33, 100, 1001])
def test_randn_float32_both_paths(n):
    same_stream(lambda L: L.randn(n))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 16, 33, 257])
def test_randn_dtypes(dt, n):
    same_stream(lambda L: L.randn(n, dtype=getattr(L, dt)))


def test_randn_vectorised_path_on_many_values():
    # 2**20 float32 normals through torch's AVX2 Box-Muller (Cephes log/sincos, FMA)
    same_stream(lambda L: L.randn(1 << 20), seed=3)


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_normal_in_place_with_mean_and_std(dt):
    same_stream(lambda L: L.empty(40, dtype=getattr(L, dt)).normal_(0.3, 1.7))
    same_stream(lambda L: L.empty(5, dtype=getattr(L, dt)).normal_(0.3, 1.7))
    same_stream(lambda L: L.empty(64, dtype=getattr(L, dt)).normal_(0.0, 0.02))


def test_normal_cache_and_non_contiguous_fills():
    same_stream(lambda L: L.cat([L.randn(3), L.randn(3), L.randn(1, dtype=L.float64).float()]))
    same_stream(lambda L: L.empty(5, 7).t().normal_())
    same_stream(lambda L: L.empty(5, 7).t().uniform_())
    same_stream(lambda L: L.empty(6, 7)[:, ::2].uniform_())
    same_stream(lambda L: L.randn_like(L.ones(3, 40)))
    same_stream(lambda L: L.rand_like(L.ones(3, 4)))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_normal_overloads(dt):
    d = lambda L: getattr(L, dt)                                        # noqa: E731
    std = lambda L: L.tensor(np.linspace(0.1, 2, 40)).to(d(L))          # noqa: E731
    same_stream(lambda L: L.normal(L.arange(40.).to(d(L)), std(L)))
    same_stream(lambda L: L.normal(L.arange(40.).to(d(L)), 0.3))
    same_stream(lambda L: L.normal(0.7, std(L)))
    same_stream(lambda L: L.normal(0.7, 1.3, (40,), dtype=d(L)))
    same_stream(lambda L: L.normal(L.zeros(2, 1).to(d(L)), L.ones(3).to(d(L))))


def test_generator_argument():
    same_stream(lambda L: L.randn(50, generator=L.Generator().manual_seed(4)))
    same_stream(lambda L: L.randint(9, (20,), generator=L.Generator().manual_seed(4)))


# ----------------------------------------------------------------------------- integers

INTS = ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16",
        "bfloat16", "uint16", "uint32", "uint64"]


def _both_or_same_error(fn):
    try:
        same_stream(fn)
    except (RuntimeError, NotImplementedError, ValueError) as e:
        # torch raised: glasstorch must raise the same type with the same message
        with pytest.raises(type(e)) as ge:
            gt.manual_seed(0)
            fn(gt)
        assert str(ge.value) == str(e)


@pytest.mark.parametrize("dt", INTS)
def test_random_and_randint(dt):
    d = lambda L: getattr(L, dt)                                        # noqa: E731
    _both_or_same_error(lambda L: L.empty(50, dtype=d(L)).random_())
    _both_or_same_error(lambda L: L.empty(50, dtype=d(L)).random_(2))
    _both_or_same_error(lambda L: L.empty(50, dtype=d(L)).random_(0, 100))
    _both_or_same_error(lambda L: L.empty(50, dtype=d(L)).random_(5, None))
    _both_or_same_error(lambda L: L.empty(50, dtype=d(L)).random_(-2 ** 63, None))
    _both_or_same_error(lambda L: L.randint(-3, 2 ** 30, (50,), dtype=d(L)))


@pytest.mark.parametrize("high", [1, 7, 2 ** 28 - 1, 2 ** 28, 2 ** 40, 2 ** 62])
def test_randint_32_and_64_bit_draws(high):
    same_stream(lambda L: L.randint(high, (40,)))


def test_randint_full_range_and_like():
    same_stream(lambda L: L.randint(-2 ** 63, 2 ** 63 - 1, (40,)))
    same_stream(lambda L: L.randint_like(L.ones(3, 4), 3, 10))
    same_stream(lambda L: L.empty(5, 7, dtype=L.int64).t().random_(0, 1000))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 1000, 4095, 4096, 5000, 60000, 300000])
def test_randperm(n):
    same_stream(lambda L: L.randperm(n))


@pytest.mark.parametrize("dt", ["int32", "int16", "uint8", "float32", "float64", "float16"])
def test_randperm_dtypes(dt):
    same_stream(lambda L: L.randperm(200, dtype=getattr(L, dt)))


# ----------------------------------------------------------------------------- bernoulli, dropout

@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
def test_bernoulli(dt):
    d = lambda L: getattr(L, dt)                                        # noqa: E731
    same_stream(lambda L: L.empty(100, dtype=d(L)).bernoulli_(0.3))
    same_stream(lambda L: L.empty(4, 25, dtype=d(L)).bernoulli_(L.linspace(0, 1, 25)))
    same_stream(lambda L: L.empty(100, dtype=d(L)).bernoulli_(
        L.linspace(0, 1, 100, dtype=L.float64)))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_bernoulli_functional(dt):
    same_stream(lambda L: L.bernoulli(L.linspace(0, 1, 100).to(getattr(L, dt))))
    same_stream(lambda L: L.bernoulli(L.ones(100).to(getattr(L, dt)), 0.2))
    same_stream(lambda L: L.bernoulli(L.rand(5, 7).t()))
    same_stream(lambda L: L.rand(5, 7).t().bernoulli_(L.rand(7, 5)))


def _x(L):
    return L.arange(60.).reshape(2, 3, 10)


@pytest.mark.parametrize("name, call", [
    ("dropout", lambda L: L.nn.functional.dropout(_x(L), 0.3)),
    ("dropout f64", lambda L: L.nn.functional.dropout(_x(L).double(), 0.3)),
    ("dropout inplace", lambda L: L.nn.functional.dropout(_x(L), 0.4, inplace=True)),
    ("dropout grad", lambda L: L.nn.functional.dropout(_x(L).requires_grad_(), 0.4)),
    ("Dropout module", lambda L: L.nn.Dropout(0.4)(_x(L))),
    ("dropout1d", lambda L: L.nn.functional.dropout1d(_x(L), 0.5)),
    ("dropout2d", lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4, 4), 0.5)),
    ("dropout3d", lambda L: L.nn.functional.dropout3d(L.ones(2, 3, 2, 4, 4), 0.5)),
    ("alpha_dropout", lambda L: L.nn.functional.alpha_dropout(_x(L), 0.2, True)),
    ("feature_alpha_dropout",
     lambda L: L.nn.functional.feature_alpha_dropout(_x(L), 0.2, True)),
    ("sdpa dropout", lambda L: L.nn.functional.scaled_dot_product_attention(
        L.ones(1, 2, 4, 8), L.ones(1, 2, 4, 8), L.arange(64.).reshape(1, 2, 4, 8),
        dropout_p=0.5)),
])
def test_dropout_masks(name, call):
    same_stream(call)


# ----------------------------------------------------------------------------- other samplers

@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_continuous_in_place_samplers(dt):
    d = lambda L: getattr(L, dt)                                        # noqa: E731
    same_stream(lambda L: L.empty(100, dtype=d(L)).exponential_(2.5))
    same_stream(lambda L: L.empty(100, dtype=d(L)).geometric_(0.3))
    same_stream(lambda L: L.empty(100, dtype=d(L)).cauchy_(0.5, 2.0))
    same_stream(lambda L: L.empty(100, dtype=d(L)).cauchy_())
    same_stream(lambda L: L.empty(100, dtype=d(L)).log_normal_(0.5, 0.7))


def test_geometric_integers_and_shared_normal_cache():
    same_stream(lambda L: L.empty(100, dtype=L.int64).geometric_(0.3))
    same_stream(lambda L: L.cat([L.empty(3).log_normal_(), L.randn(3)]))


def _weights(L, dt):
    return L.tensor([0.1, 2.0, 0.3, 1.5, 0.05, 3.0, 0.7]).to(getattr(L, dt))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_multinomial(dt):
    same_stream(lambda L: L.multinomial(_weights(L, dt), 1))
    same_stream(lambda L: L.multinomial(_weights(L, dt), 4))
    same_stream(lambda L: L.multinomial(_weights(L, dt), 20, True))
    same_stream(lambda L: L.multinomial(_weights(L, dt).repeat(3, 1), 5, True))
    same_stream(lambda L: L.multinomial(_weights(L, dt).repeat(3, 1), 5))


def test_multinomial_large_and_with_zero_weights():
    same_stream(lambda L: L.multinomial(L.arange(1., 5001.), 30))
    same_stream(lambda L: L.multinomial(L.tensor([0., 1, 0, 3, 1]), 3))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
def test_poisson(dt):
    rates = [0., 0.5, 3, 9.9, 10, 30, 1000, 1e6]
    same_stream(lambda L: L.poisson(L.tensor(rates).to(getattr(L, dt))))
    same_stream(lambda L: L.poisson(L.rand(4, 5).t() * 20))


def test_gamma_kernel_matches_standard_gamma():
    from glasstorch._ops import random as R
    for dt in ("float32", "float64"):
        alpha = np.tile(np.array([0.1, 0.5, 0.99, 1.0, 2.5, 7.0, 100.0, 0.0], dtype=dt), 10)
        torch.manual_seed(2)
        ref = torch._standard_gamma(torch.from_numpy(alpha)).numpy()
        gt.manual_seed(2)
        got = R._gamma_values(gt.default_generator, alpha, getattr(gt, dt)).astype(dt)
        assert got.tobytes() == ref.tobytes()
        assert gt.rand(3).tolist() == torch.rand(3).tolist()


# ----------------------------------------------------------------------------- nn.init, modules

@pytest.mark.parametrize("name, call", [
    ("uniform_", lambda L: L.nn.init.uniform_(L.empty(30, 20), -0.1, 0.3)),
    ("normal_", lambda L: L.nn.init.normal_(L.empty(30, 20), 0.1, 0.02)),
    ("trunc_normal_", lambda L: L.nn.init.trunc_normal_(L.empty(30, 20), 0.0, 0.02, -0.04,
                                                        0.04)),
    ("trunc_normal_ default", lambda L: L.nn.init.trunc_normal_(L.empty(300))),
    ("trunc_normal_ narrow", lambda L: L.nn.init.trunc_normal_(L.empty(300), 0., 1., 0.5, .8)),
    ("trunc_normal_ f64", lambda L: L.nn.init.trunc_normal_(L.empty(300, dtype=L.float64))),
    ("xavier_uniform_", lambda L: L.nn.init.xavier_uniform_(L.empty(30, 20))),
    ("xavier_normal_", lambda L: L.nn.init.xavier_normal_(L.empty(30, 20), gain=2)),
    ("kaiming_uniform_", lambda L: L.nn.init.kaiming_uniform_(L.empty(30, 20, 3, 3),
                                                              a=5 ** 0.5)),
    ("kaiming_normal_", lambda L: L.nn.init.kaiming_normal_(L.empty(30, 20), mode="fan_out",
                                                            nonlinearity="relu")),
    ("sparse_", lambda L: L.nn.init.sparse_(L.empty(10, 6), 0.3)),
    ("Linear", lambda L: L.cat([p.reshape(-1) for p in L.nn.Linear(20, 30).parameters()])),
    ("Conv2d", lambda L: L.cat([p.reshape(-1) for p in L.nn.Conv2d(3, 8, 3).parameters()])),
    ("Embedding", lambda L: L.nn.Embedding(10, 7).weight),
    ("LSTM", lambda L: L.cat([p.reshape(-1) for p in L.nn.LSTM(5, 7, 2).parameters()])),
    ("TransformerEncoderLayer", lambda L: L.cat(
        [p.reshape(-1) for p in L.nn.TransformerEncoderLayer(8, 2, 16).parameters()])),
])
def test_init(name, call):
    same_stream(call)


def test_orthogonal_draws_match():
    # the Gaussian draws and their count match; QR itself may differ in the last bit
    for lib in (torch, gt):
        lib.manual_seed(0)
    a = torch.nn.init.orthogonal_(torch.empty(6, 4)).numpy()
    b = gt.nn.init.orthogonal_(gt.empty(6, 4)).numpy()
    np.testing.assert_allclose(b, a, atol=1e-6)
    assert gt.rand(3).tolist() == torch.rand(3).tolist()


# ----------------------------------------------------------------------------- data

def _D(L):
    return L.utils.data


@pytest.mark.parametrize("name, call", [
    ("RandomSampler", lambda L: list(_D(L).RandomSampler(range(50)))
     + list(_D(L).RandomSampler(range(50)))),
    ("RandomSampler generator", lambda L: list(_D(L).RandomSampler(
        range(50), generator=L.Generator().manual_seed(3)))),
    ("RandomSampler replacement", lambda L: list(_D(L).RandomSampler(
        range(50), replacement=True, num_samples=77))),
    ("RandomSampler num_samples", lambda L: list(_D(L).RandomSampler(range(10),
                                                                     num_samples=25))),
    ("SubsetRandomSampler", lambda L: list(_D(L).SubsetRandomSampler(list(range(100, 140))))),
    ("WeightedRandomSampler", lambda L: list(_D(L).WeightedRandomSampler([.1, .9, .4, .3],
                                                                         20))),
    ("random_split", lambda L: [list(s.indices) for s in _D(L).random_split(range(30),
                                                                            [10, 15, 5])]),
    ("random_split fractions", lambda L: [list(s.indices) for s in _D(L).random_split(
        range(31), [0.3, 0.7])]),
    ("DistributedSampler", lambda L: (lambda s: (s.set_epoch(2), list(s))[1])(
        _D(L).DistributedSampler(range(23), num_replicas=3, rank=1, seed=4))),
])
def test_samplers(name, call):
    same_stream(call)


def test_dataloader_shuffle_and_base_seed():
    def order(L):
        ds = _D(L).TensorDataset(L.arange(40))
        dl = _D(L).DataLoader(ds, batch_size=8, shuffle=True)
        seeds = []
        out = []
        for _ in range(3):
            it = iter(dl)
            seeds.append(it._base_seed)     # what the workers would be seeded from
            out += [int(v) for (b,) in it for v in b]
        return out + seeds
    same_stream(order)


# ----------------------------------------------------------------------------- a training run

def _train(L, dtype, steps=24):
    nn = L.nn
    L.manual_seed(1234)
    dt = getattr(L, dtype)
    x = L.rand(64, 1, 10, 10, dtype=dt)
    y = L.randint(0, 5, (64,))
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Dropout2d(0.25), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Dropout(0.4), nn.Linear(64, 32), nn.ReLU(),
                          nn.Dropout(0.2), nn.Linear(32, 5)).to(dt)
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dl = L.utils.data.DataLoader(L.utils.data.TensorDataset(x, y), batch_size=16, shuffle=True)
    losses = []
    while len(losses) < steps:
        for xb, yb in dl:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
    return losses, L.rand(3).tolist()


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 1e-5)])
def test_cnn_with_dropout_and_shuffled_loader_trains_like_torch(dtype, rtol):
    # same initial weights, dropout masks and batch order: the losses follow torch's step by
    # step (the float arithmetic of conv/matmul may differ in the last bit)
    t_losses, t_tail = _train(torch, dtype)
    g_losses, g_tail = _train(gt, dtype)
    np.testing.assert_allclose(g_losses, t_losses, rtol=rtol)
    assert g_tail == t_tail


# ----------------------------------------------------------------------------- exact arithmetic

def test_fused_multiply_add_helpers_are_correctly_rounded():
    from glasstorch._core.random import fma32, fma64
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(2000), rng.standard_normal(2000)
    for c in (-a * b * (1 + rng.standard_normal(2000) * 1e-12), rng.standard_normal(2000),
              rng.standard_normal(2000) * 1e-20):
        ref = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
        assert fma64(a, b, c).tolist() == ref
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c32 = (rng.standard_normal(2000) * 1e-6).astype(np.float32)
    got = fma32(a32, b32, c32)
    # float32 reference: the exact value rounded once (via float64 round-to-nearest is not
    # enough near ties, so compare with the neighbours' distances)
    exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
             for x, y, z in zip(a32, b32, c32)]
    for g, e in zip(got.tolist(), exact):
        g32 = np.float32(g)
        up, down = np.nextafter(g32, np.float32(math.inf)), np.nextafter(g32, np.float32(-1e30))
        err = abs(Fraction(float(g32)) - e)
        assert err <= abs(Fraction(float(up)) - e) and err <= abs(Fraction(float(down)) - e)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_binomial(dt):
    count = [0., 1, 5, 10, 30, 100, 1000, 20, 7, 3.]
    prob = [0.3, 0.5, 0.1, 0.01, 0.5, 0.3, 0.9, 0.95, 1.0, 0.0]
    same_stream(lambda L: L.binomial(L.tensor(count).to(getattr(L, dt)).repeat(8),
                                     L.tensor(prob).to(getattr(L, dt)).repeat(8)))
    same_stream(lambda L: L.binomial(L.tensor([10., 50]).to(getattr(L, dt)),
                                     L.tensor([0.3]).to(getattr(L, dt))))


def test_binomial_errors_and_grad_fn_match_torch():
    with pytest.raises(NotImplementedError, match="binomial_cpu"):
        gt.binomial(gt.ones(2, dtype=gt.float16), gt.ones(2, dtype=gt.float16))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        gt.binomial(gt.ones(2), gt.ones(2, dtype=gt.float64))
    r = gt.binomial(gt.tensor([10.], requires_grad=True), gt.tensor([0.3]))
    assert type(r.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::binomial"):
        r.sum().backward()


def test_like_factories_fill_torch_s_result_layout():
    cl = lambda L: L.rand(2, 3, 4, 5).to(memory_format=L.channels_last)      # noqa: E731
    same_stream(lambda L: L.rand_like(cl(L)).contiguous())
    same_stream(lambda L: L.randn_like(cl(L)).contiguous())
    same_stream(lambda L: L.randint_like(cl(L), 10).contiguous())
    same_stream(lambda L: L.randn_like(L.rand(30, 7).t()).contiguous())
    same_stream(lambda L: L.rand_like(L.rand(6, 8)[:, ::2]).contiguous())
    same_stream(lambda L: L.randn_like(cl(L), memory_format=L.contiguous_format))
    same_stream(lambda L: L.randn_like(L.rand(2, 3, 4, 5),
                                       memory_format=L.channels_last).contiguous())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_rrelu_noise_helper_matches_torch(dt):
    # the helper for rrelu's training noise (one draw per element <= 0)
    from glasstorch._ops.random import _rrelu_noise
    x = torch.linspace(-1, 1, 41, dtype=getattr(torch, dt))
    torch.manual_seed(0)
    ref = torch.nn.functional.rrelu(x, training=True).numpy()
    gt.manual_seed(0)
    got = x.numpy() * _rrelu_noise(x.numpy(), 1 / 8, 1 / 3)
    assert got.tobytes() == ref.tobytes()
    assert gt.rand(3).tolist() == torch.rand(3).tolist()


# ------------------------------------------------------------------- rrelu, gamma, dirichlet

@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("n", [3, 17, 100])
def test_rrelu_training_draws_match_torch(dt, n):
    d = lambda L: getattr(L, dt)                                        # noqa: E731
    x = lambda L: L.linspace(-1, 1, n).to(d(L))                         # noqa: E731
    same_stream(lambda L: L.nn.functional.rrelu(x(L), training=True), seed=n)
    same_stream(lambda L: L.nn.functional.rrelu_(x(L), 0.1, 0.9, training=True))
    same_stream(lambda L: L.nn.RReLU(0.2, 0.5)(x(L).reshape(-1, 1).t()))

    def grad(L):
        leaf = x(L).requires_grad_()
        L.nn.functional.rrelu(leaf, training=True).sum().backward()
        return leaf.grad
    same_stream(grad)


def test_rrelu_half_training_raises_like_torch():
    with pytest.raises(NotImplementedError) as te:
        torch.nn.functional.rrelu(torch.ones(3, dtype=torch.float16), training=True)
    with pytest.raises(NotImplementedError) as ge:
        gt.nn.functional.rrelu(gt.ones(3, dtype=gt.float16), training=True)
    assert str(ge.value) == str(te.value)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 17, 100])
def test_standard_gamma(dt, n):
    a = lambda L: L.linspace(0.05, 5, n).to(getattr(L, dt))             # noqa: E731
    same_stream(lambda L: L._standard_gamma(a(L)), seed=n)
    same_stream(lambda L: L._standard_gamma(L.linspace(0.05, 5, 2 * n).to(getattr(L, dt))
                                            .reshape(n, 2).t()))


def test_standard_gamma_edge_rates_and_generator():
    for dt in ("float32", "float64"):
        same_stream(lambda L: L._standard_gamma(L.tensor(
            [-1., -2 / 3, 1e-45, float("nan"), float("inf"), 0., 1e-30, 1e30]).to(
                getattr(L, dt))))
    same_stream(lambda L: L._standard_gamma(L.ones(5), generator=L.Generator().manual_seed(3)))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("k", [2, 3, 5, 8, 9, 17, 26, 33, 100])
def test_sample_dirichlet(dt, k):
    # float64 shows torch's summation order (SIMD lanes and interleaved accumulators)
    same_stream(lambda L: L._sample_dirichlet(L.linspace(0.05, 3, 3 * k).to(
        getattr(L, dt)).reshape(3, k)), seed=k)


def test_sample_dirichlet_edges():
    same_stream(lambda L: L._sample_dirichlet(L.tensor([[-1., 1], [1e-3, 1e-3], [0, 0]])))
    same_stream(lambda L: L._sample_dirichlet(L.tensor(2.)))
    same_stream(lambda L: L._sample_dirichlet(L.ones(0, 3)))


def test_gamma_and_dirichlet_errors_and_grad_fns():
    for name, kernel in (("_standard_gamma", "gamma_cpu"), ("_sample_dirichlet", "dirichlet")):
        for dt in ("bfloat16", "float16", "int64"):
            with pytest.raises(NotImplementedError) as te:
                getattr(torch, name)(torch.ones(3, dtype=getattr(torch, dt)))
            with pytest.raises(NotImplementedError) as ge:
                getattr(gt, name)(gt.ones(3, dtype=getattr(gt, dt)))
            assert str(ge.value) == str(te.value) and kernel in str(te.value)
    a = gt.tensor([0.5, 2.], requires_grad=True)
    r = gt._standard_gamma(a)
    assert type(r.grad_fn).__name__ == "StandardGammaBackward0"
    r.sum().backward()
    assert a.grad is not None and bool((a.grad > 0).all())
    r = gt._sample_dirichlet(a)
    assert type(r.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet"):
        r.sum().backward()


def test_torch_sum_order_helper():
    from glasstorch._core.random import torch_sum_last
    rng = np.random.default_rng(0)
    for n in (1, 5, 6, 7, 8, 9, 25, 26, 31, 64, 127, 1000, 5000):
        x = rng.standard_normal((20, n))
        assert torch_sum_last(x).tobytes() == torch.from_numpy(x).sum(-1, True).numpy().tobytes()


# ----------------------------------------------------------------------------- worker seeding

class _NoisyData:
    """Items drawn in the worker from the worker's torch, numpy and random seeds."""

    def __init__(self, lib, n=200):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import random
        L = self.lib
        info = L.utils.data.get_worker_info()
        x = L.full((1, 10, 10), i / self.n) + 0.1 * L.randn(1, 10, 10)
        extra = L.tensor([float(np.random.rand()), random.random(), float(info.seed % 1000)],
                         dtype=L.float64)
        return x, i % 5, extra


def _train_with_workers(L, steps=24):
    nn = L.nn
    L.manual_seed(77)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Dropout2d(0.25), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Dropout(0.4), nn.Linear(64, 5)).double()
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dl = L.utils.data.DataLoader(_NoisyData(L), batch_size=8, shuffle=True, num_workers=2)
    losses, extras = [], []
    while len(losses) < steps:
        for xb, yb, extra in dl:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb.double()), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            extras.append(extra.numpy().tolist())
            if len(losses) == steps:
                break
    return losses, extras, L.rand(3).tolist()


def test_training_with_worker_processes_follows_torch():
    # base_seed drawn as torch draws it; each worker seeds torch, random and numpy from it
    t_losses, t_extras, t_tail = _train_with_workers(torch)
    g_losses, g_extras, g_tail = _train_with_workers(gt)
    assert g_extras == t_extras
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-12)
    assert g_tail == t_tail
