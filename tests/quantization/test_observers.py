"""Observers and QConfigs against torch: the same statistics give the same qparams."""

import warnings

import numpy as np
import pytest

import glasstorch as gt
import glasstorch.ao.quantization as gq

torch = pytest.importorskip("torch")
tq = torch.ao.quantization
warnings.filterwarnings("ignore", message="Please use quant_min")
warnings.filterwarnings("ignore", message="must run observer")


def _batches(seed, n=4, shape=(6, 10), grow=True):
    rng = np.random.default_rng(seed)
    # growing spread makes the histogram observer re-bin onto a wider range
    return [(rng.normal(0.3, 1 + (i if grow else 0), shape)).astype(np.float32)
            for i in range(n)]


def _run(name, kwargs, batches):
    t = getattr(tq, name)(**kwargs(torch))
    g = getattr(gq, name)(**kwargs(gt))
    for b in batches:
        t(torch.from_numpy(b))
        g(gt.tensor(b))
    return t, g


def _same_qparams(t, g):
    ts, tz = t.calculate_qparams()
    gs, gz = g.calculate_qparams()
    np.testing.assert_array_equal(gs.numpy(), ts.numpy())
    np.testing.assert_array_equal(gz.numpy(), tz.numpy())
    assert gs.dtype.__repr__() == ts.dtype.__repr__()
    assert gz.dtype.__repr__() == tz.dtype.__repr__()


CASES = [
    ("MinMaxObserver", lambda m: {}),
    ("MinMaxObserver", lambda m: {"dtype": m.qint8, "qscheme": m.per_tensor_symmetric}),
    ("MinMaxObserver", lambda m: {"quant_min": 0, "quant_max": 127}),
    ("MinMaxObserver", lambda m: {"reduce_range": True}),
    ("MinMaxObserver", lambda m: {"dtype": m.quint8, "qscheme": m.per_tensor_symmetric}),
    ("MovingAverageMinMaxObserver", lambda m: {}),
    ("MovingAverageMinMaxObserver", lambda m: {"averaging_constant": 0.3, "dtype": m.qint8}),
    ("PerChannelMinMaxObserver", lambda m: {}),
    ("PerChannelMinMaxObserver", lambda m: {"ch_axis": 1, "dtype": m.qint8,
                                            "qscheme": m.per_channel_symmetric}),
    ("MovingAveragePerChannelMinMaxObserver", lambda m: {"averaging_constant": 0.5}),
    ("HistogramObserver", lambda m: {}),
    ("HistogramObserver", lambda m: {"reduce_range": True}),
    ("HistogramObserver", lambda m: {"dtype": m.qint8, "qscheme": m.per_tensor_symmetric,
                                     "bins": 256}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_observer_qparams_match_torch(case):
    name, kwargs = CASES[case]
    t, g = _run(name, kwargs, _batches(case))
    _same_qparams(t, g)
    np.testing.assert_array_equal(g.min_val.numpy(), t.min_val.numpy())
    np.testing.assert_array_equal(g.max_val.numpy(), t.max_val.numpy())


def test_histogram_state_matches_torch():
    t, g = _run("HistogramObserver", lambda m: {"bins": 64}, _batches(5, n=3))
    np.testing.assert_allclose(g.histogram.numpy(), t.histogram.numpy(), rtol=1e-6)
    # a batch with the same range only adds counts
    b = _batches(5, n=1, grow=False)[0] * 0.1
    t(torch.from_numpy(b))
    g(gt.tensor(b))
    np.testing.assert_allclose(g.histogram.numpy(), t.histogram.numpy(), rtol=1e-6)
    _same_qparams(t, g)


def test_unobserved_and_placeholder():
    t, g = tq.MinMaxObserver(), gq.MinMaxObserver()
    _same_qparams(t, g)
    p = gq.PlaceholderObserver(dtype=gt.quint8, is_dynamic=True)
    x = gt.randn(3)
    assert p(x) is x
    with pytest.raises(Exception, match="should not be called"):
        p.calculate_qparams()
    with pytest.raises(NotImplementedError, match="qscheme"):
        gq.MinMaxObserver(qscheme=gt.per_channel_affine)
    with pytest.raises(NotImplementedError, match="symmetric"):
        gq.MinMaxObserver(qscheme=gt.per_tensor_symmetric, reduce_range=True)


def test_observer_state_dict_keys_match():
    t, g = _run("PerChannelMinMaxObserver", lambda m: {}, _batches(9))
    assert list(t.state_dict()) == list(g.state_dict())
    fresh = gq.PerChannelMinMaxObserver()
    fresh.load_state_dict({k: gt.tensor(v.numpy()) for k, v in t.state_dict().items()})
    _same_qparams(t, fresh)


@pytest.mark.parametrize("backend", ["x86", "fbgemm", "qnnpack", "onednn"])
def test_default_qconfigs(backend):
    tqc = tq.get_default_qconfig(backend)
    gqc = gq.get_default_qconfig(backend)
    for field in ("activation", "weight"):
        to, go = getattr(tqc, field)(), getattr(gqc, field)()
        assert type(to).__name__ == type(go).__name__
        assert (to.quant_min, to.quant_max, repr(to.dtype), repr(to.qscheme)) == \
            (go.quant_min, go.quant_max, repr(go.dtype), repr(go.qscheme))
    with pytest.raises(AssertionError, match="not supported"):
        gq.get_default_qconfig("arm")
    with pytest.raises(ValueError, match="observer instance"):
        gq.QConfig(activation=gq.MinMaxObserver(), weight=gq.MinMaxObserver)
    assert gt.quantization.QConfig is gq.QConfig


def test_with_args_makes_fresh_instances():
    f = gq.MinMaxObserver.with_args(dtype=gt.qint8).with_args(quant_min=-10, quant_max=10)
    a, b = f(), f()
    assert a is not b and a.dtype is gt.qint8 and (a.quant_min, a.quant_max) == (-10, 10)
