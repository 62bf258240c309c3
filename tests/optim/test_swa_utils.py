"""swa_utils vs torch: AveragedModel (SWA, EMA, buffers), update_bn, SWALR (see
test_lr_scheduler for SWALR's lr sequence)."""

import importlib

import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.optim  # noqa: F401

nn_g = pytest.importorskip("glasstorch.nn")
LIBS = (torch, glasstorch)


def _swa(lib):
    return importlib.import_module(lib.__name__ + ".optim.swa_utils")


def _arr(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _model(lib, seed=0):
    rng = np.random.default_rng(seed)
    m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _perturb(lib, m, k):
    rng = np.random.default_rng(100 + k)
    with lib.no_grad():
        for p in m.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        m[1].running_mean.add_(float(k))


def _averaged(lib, **kw):
    sw = _swa(lib)
    kw = {k: (v(sw) if callable(v) else v) for k, v in kw.items()}
    model = _model(lib)
    avg = sw.AveragedModel(model, **kw)
    for k in range(5):
        _perturb(lib, model, k)
        avg.update_parameters(model)
    return avg


@pytest.mark.parametrize("kw", [
    {}, {"multi_avg_fn": lambda sw: sw.get_ema_multi_avg_fn(0.9)},
    {"avg_fn": lambda sw: sw.get_ema_avg_fn(0.8)},
    {"avg_fn": lambda sw: sw.get_swa_avg_fn()},
    {"multi_avg_fn": lambda sw: sw.get_swa_multi_avg_fn(), "use_buffers": True},
    {"multi_avg_fn": lambda sw: sw.get_ema_multi_avg_fn(0.5), "use_buffers": True},
])
def test_averaged_model_matches_torch(kw):
    try:
        t = _averaged(torch, **kw)
    except RuntimeError:  # torch's SWA running mean rejects integer buffers
        with pytest.raises(RuntimeError):
            _averaged(glasstorch, **kw)
        return
    g = _averaged(glasstorch, **kw)
    ts, gs = t.state_dict(), g.state_dict()
    assert list(ts) == list(gs)
    for k in ts:
        assert str(ts[k].dtype) == str(gs[k].dtype), k
        np.testing.assert_allclose(_arr(gs[k]), _arr(ts[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    assert int(g.n_averaged) == 5
    x = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
    t.eval()
    g.eval()
    np.testing.assert_allclose(_arr(g(glasstorch.tensor(x))), _arr(t(torch.tensor(x))),
                               rtol=1e-5, atol=1e-5)


def test_update_bn_matches_torch():
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((8, 4)).astype(np.float32) for _ in range(4)]
    res = []
    for lib in LIBS:
        model = _model(lib)
        model.eval()
        loader = [(lib.tensor(d), lib.zeros(8)) for d in data]
        _swa(lib).update_bn(loader, model)
        assert not model.training
        bn = model[1]
        res.append((_arr(bn.running_mean), _arr(bn.running_var), int(bn.num_batches_tracked),
                    bn.momentum))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)
    assert res[1][2:] == res[0][2:]


def test_update_bn_without_batchnorm_is_a_no_op():
    m = glasstorch.nn.Linear(2, 2)
    _swa(glasstorch).update_bn([glasstorch.zeros(1, 2)], m)


def test_errors():
    for lib in LIBS:
        sw = _swa(lib)
        with pytest.raises(ValueError):
            sw.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError):
            sw.get_ema_avg_fn(-0.1)
        with pytest.raises(AssertionError):
            sw.AveragedModel(_model(lib), avg_fn=sw.get_swa_avg_fn(),
                             multi_avg_fn=sw.get_swa_multi_avg_fn())
        opt = lib.optim.SGD(_model(lib).parameters(), lr=0.1)
        with pytest.raises(ValueError):
            sw.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
        with pytest.raises(ValueError):
            sw.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
