"""Random ops: distributions (statistics on large samples), seeding and generator state."""

import math

import numpy as np
import pytest

import glasstorch as torch

N = 200_000


def _np(t):
    return t.double().numpy() if t.dtype is not torch.bool else t.numpy()


# ----------------------------------------------------------------------------- distributions

def test_rand_uniform_statistics():
    torch.manual_seed(1)
    x = _np(torch.rand(N))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.005
    assert abs(x.var() - 1 / 12) < 0.002


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16])
def test_rand_low_precision_stays_below_one(dt):
    torch.manual_seed(2)
    x = _np(torch.rand(N, dtype=dt))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.01


def test_randn_statistics():
    torch.manual_seed(3)
    x = _np(torch.randn(N))
    assert abs(x.mean()) < 0.01
    assert abs(x.std() - 1) < 0.01


def test_randn_complex_has_unit_variance():
    torch.manual_seed(3)
    z = torch.randn(N, dtype=torch.complex64).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.02
    assert abs(z.real.var() - 0.5) < 0.01


def test_randint_range_and_coverage():
    torch.manual_seed(4)
    x = torch.randint(-3, 4, (N,))
    assert x.dtype is torch.int64
    v = x.numpy()
    assert v.min() == -3 and v.max() == 3
    counts = np.bincount(v + 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)
    assert torch.randint(5, (2, 3)).shape == (2, 3)
    assert torch.randint(5, (3,), dtype=torch.float32).dtype is torch.float32


def test_randperm_is_permutation():
    torch.manual_seed(5)
    p = torch.randperm(1000)
    assert p.dtype is torch.int64
    assert sorted(p.tolist()) == list(range(1000))
    assert p.tolist() != list(range(1000))
    assert torch.randperm(0).shape == (0,)


def test_normal_overloads():
    torch.manual_seed(6)
    x = _np(torch.normal(2.0, 3.0, size=(N,)))
    assert abs(x.mean() - 2) < 0.05 and abs(x.std() - 3) < 0.05
    mean = torch.tensor([0.0, 10.0]).expand(N // 2, 2)
    y = _np(torch.normal(mean, torch.tensor([1.0, 0.5])))
    assert abs(y[:, 0].mean()) < 0.02 and abs(y[:, 1].mean() - 10) < 0.02
    assert abs(y[:, 1].std() - 0.5) < 0.02
    z = _np(torch.normal(torch.full((N,), -1.0), 2.0))
    assert abs(z.mean() + 1) < 0.03 and abs(z.std() - 2) < 0.03
    w = _np(torch.normal(5.0, torch.full((N,), 0.1)))
    assert abs(w.mean() - 5) < 0.01 and abs(w.std() - 0.1) < 0.005
    assert torch.normal(0.0, 1.0, (2, 3)).dtype is torch.float32


def test_bernoulli_probability():
    torch.manual_seed(7)
    p = torch.full((N,), 0.3)
    b = torch.bernoulli(p)
    assert b.dtype is torch.float32
    assert set(np.unique(_np(b))) <= {0.0, 1.0}
    assert abs(_np(b).mean() - 0.3) < 0.005
    assert abs(_np(torch.bernoulli(torch.zeros(N), 0.8)).mean() - 0.8) < 0.005
    assert _np(torch.bernoulli(torch.ones(100))).min() == 1
    x = torch.zeros(N, dtype=torch.int64).bernoulli_(torch.tensor(0.25))
    assert abs(x.numpy().mean() - 0.25) < 0.005


def test_multinomial_with_replacement_frequencies():
    torch.manual_seed(8)
    w = torch.tensor([1.0, 0.0, 3.0, 4.0])
    s = torch.multinomial(w, N, replacement=True).numpy()
    freq = np.bincount(s, minlength=4) / N
    assert freq[1] == 0
    assert np.allclose(freq, [0.125, 0, 0.375, 0.5], atol=0.01)


def test_multinomial_without_replacement_distinct():
    torch.manual_seed(9)
    w = torch.rand(50, 10) + 0.01
    s = torch.multinomial(w, 10)
    assert s.shape == (50, 10) and s.dtype is torch.int64
    for row in s.tolist():
        assert sorted(row) == list(range(10))
    # the first draw follows the weights
    first = torch.multinomial(torch.tensor([1.0, 9.0]).expand(20000, 2), 1).numpy()
    assert abs(first.mean() - 0.9) < 0.01


def test_multinomial_errors():
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.ones(3), 4)
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.zeros(3), 1)


def test_poisson_statistics():
    torch.manual_seed(10)
    x = _np(torch.poisson(torch.full((N,), 4.0)))
    assert np.all(x == np.round(x))
    assert abs(x.mean() - 4) < 0.03 and abs(x.var() - 4) < 0.1


def test_inplace_samplers_statistics():
    torch.manual_seed(11)
    u = _np(torch.empty(N).uniform_(-2, 3))
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.02
    n = _np(torch.empty(N, dtype=torch.float64).normal_(1.0, 2.0))
    assert abs(n.mean() - 1) < 0.02 and abs(n.std() - 2) < 0.02
    e = _np(torch.empty(N).exponential_(2.0))
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    g = _np(torch.empty(N).geometric_(0.25))
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4) < 0.05
    c = _np(torch.empty(N).cauchy_(1.0, 2.0))
    assert abs(np.median(c) - 1) < 0.03
    q1, q3 = np.percentile(c, [25, 75])
    assert abs((q3 - q1) / 2 - 2) < 0.05
    ln = _np(torch.empty(N).log_normal_(0.5, 0.25))
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    r = torch.empty(N, dtype=torch.int32).random_(-5, 5).numpy()
    assert r.min() == -5 and r.max() == 4
    r = torch.empty(N, dtype=torch.uint8).random_().numpy()
    assert r.min() == 0 and r.max() == 255
    r = _np(torch.empty(N).random_(10))
    assert r.min() == 0 and r.max() == 9 and np.all(r == np.round(r))
    b = torch.empty(N, dtype=torch.bool).random_().numpy()
    assert 0.45 < b.mean() < 0.55


def test_inplace_samplers_bump_version_and_return_self():
    for name, args in [("uniform_", ()), ("normal_", ()), ("random_", (5,)),
                       ("exponential_", ()), ("geometric_", (0.5,)), ("cauchy_", ()),
                       ("log_normal_", ()), ("bernoulli_", (0.5,))]:
        x = torch.zeros(4)
        view = x[1:]
        v = x._version
        assert getattr(x, name)(*args) is x
        assert x._version == v + 1 and view._version == v + 1, name


def test_inplace_on_view_writes_base():
    torch.manual_seed(12)
    x = torch.zeros(4, 4)
    x[:, 1].uniform_(1, 2)
    a = x.numpy()
    assert np.all((a[:, 1] >= 1) & (a[:, 1] < 2))
    assert np.all(a[:, [0, 2, 3]] == 0)


# ----------------------------------------------------------------------------- dtypes

def test_default_dtypes():
    assert torch.rand(2).dtype is torch.float32
    assert torch.randn(2, 3).dtype is torch.float32
    assert torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype is torch.float64
    assert torch.randn_like(torch.zeros(2, dtype=torch.float16)).dtype is torch.float16
    assert torch.randint_like(torch.zeros(2, dtype=torch.int32), 5).dtype is torch.int32
    assert torch.randint(3, (2,)).dtype is torch.int64
    assert torch.randperm(3).dtype is torch.int64
    assert torch.poisson(torch.ones(3, dtype=torch.float64)).dtype is torch.float64
    assert torch.rand(2, dtype=torch.float64).dtype is torch.float64
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.rand(2).dtype is torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_size_forms():
    assert torch.rand(2, 3).shape == (2, 3)
    assert torch.rand((2, 3)).shape == (2, 3)
    assert torch.rand([2, 3]).shape == (2, 3)
    assert torch.rand(size=(2, 3)).shape == (2, 3)
    assert torch.randn(torch.Size([4])).shape == (4,)
    assert torch.rand(()).shape == ()
    t = torch.rand(2, requires_grad=True)
    assert t.requires_grad


def test_rand_out():
    out = torch.empty(5)
    assert torch.rand(5, out=out) is out
    assert 0 < _np(out).sum() < 5


# ----------------------------------------------------------------------------- seeding/state

def test_same_seed_same_values():
    ops = [lambda g: torch.rand(5, generator=g), lambda g: torch.randn(5, generator=g),
           lambda g: torch.randint(0, 100, (5,), generator=g),
           lambda g: torch.randperm(10, generator=g),
           lambda g: torch.multinomial(torch.ones(10), 5, generator=g),
           lambda g: torch.normal(0.0, 1.0, (3,), generator=g),
           lambda g: torch.empty(5).uniform_(generator=g)]
    for op in ops:
        torch.manual_seed(123)
        a = op(None).tolist()
        torch.manual_seed(123)
        b = op(None).tolist()
        assert a == b
        g1, g2 = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
        assert op(g1).tolist() == op(g2).tolist()
    torch.manual_seed(123)
    a = torch.rand(5).tolist()
    torch.manual_seed(124)
    assert torch.rand(5).tolist() != a


def test_manual_seed_returns_default_generator():
    g = torch.manual_seed(42)
    assert isinstance(g, torch.Generator)
    assert g is torch.default_generator is torch.random.default_generator
    assert torch.initial_seed() == 42 == torch.random.initial_seed()
    assert torch.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(ValueError):
        torch.manual_seed(2 ** 64)


def test_seed_is_random_and_recorded():
    s = torch.seed()
    assert isinstance(s, int) and torch.initial_seed() == s
    g = torch.Generator()
    assert g.seed() == g.initial_seed()


def test_rng_state_round_trip():
    torch.manual_seed(99)
    torch.rand(3)
    state = torch.get_rng_state()
    assert state.dtype is torch.uint8 and state.dim() == 1
    a = torch.randn(10).tolist()
    torch.rand(7)
    torch.set_rng_state(state)
    assert torch.randn(10).tolist() == a
    assert torch.get_rng_state().dtype is torch.uint8
    torch.random.set_rng_state(state)
    assert torch.random.get_rng_state().tolist() == state.tolist()
    assert torch.initial_seed() == 99


def test_set_state_errors():
    g = torch.Generator()
    with pytest.raises(TypeError):
        g.set_state(torch.ones(3))
    with pytest.raises(RuntimeError):
        g.set_state(torch.ones(3, dtype=torch.uint8))


def test_generator_state_round_trip_and_independence():
    g = torch.Generator().manual_seed(5)
    assert g.device == torch.device("cpu")
    assert g.manual_seed(5) is g
    state = g.get_state()
    a = torch.rand(4, generator=g).tolist()
    g.set_state(state)
    assert torch.rand(4, generator=g).tolist() == a
    # another generator and the default one do not disturb g's stream
    g.set_state(state)
    h = torch.Generator().manual_seed(5)
    torch.rand(100, generator=h)
    torch.rand(100)
    assert torch.rand(4, generator=g).tolist() == a
    # drawing from g leaves the default generator untouched
    torch.manual_seed(0)
    d_state = torch.get_rng_state()
    torch.rand(10, generator=g)
    assert torch.get_rng_state().tolist() == d_state.tolist()


def test_fork_rng_restores_state():
    torch.manual_seed(17)
    with torch.random.fork_rng():
        inside = torch.rand(5).tolist()
        torch.manual_seed(1000)
        torch.rand(5)
    after = torch.rand(5).tolist()
    assert after == inside
    torch.manual_seed(17)
    with torch.random.fork_rng(enabled=False):
        torch.rand(5)
    assert torch.rand(5).tolist() != inside


def test_fork_rng_restores_on_error():
    torch.manual_seed(3)
    state = torch.get_rng_state().tolist()
    with pytest.raises(ZeroDivisionError):
        with torch.random.fork_rng(devices=[]):
            torch.rand(3)
            raise ZeroDivisionError("boom")
    assert torch.get_rng_state().tolist() == state


def test_generator_kw_type_checked():
    with pytest.raises(TypeError):
        torch.rand(2, generator=np.random.default_rng(0))


def test_default_initial_seed_matches_torch():
    # a fresh Generator starts from torch's documented default seed
    assert torch.Generator().initial_seed() == 67280421310721
    assert math.isfinite(torch.rand(1).item())
