"""Dynamic quantization to float16 (``quantize_dynamic(..., dtype=torch.float16)``): weights
stored as float16 values (saturated to its range), products in float32, as torch's fbgemm."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", category=DeprecationWarning)


def _x(*shape):
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


def _quantized(L, build, spec):
    L.manual_seed(0)
    m = build(L)
    return L.ao.quantization.quantize_dynamic(m, spec(L) if spec else None, dtype=L.float16)


def _mlp(L):
    m = L.nn.Sequential(L.nn.Linear(6, 5), L.nn.ReLU(), L.nn.Linear(5, 4))
    with L.no_grad():
        m[0].weight[0, 0] = 1e6            # past float16's range: saturates to 65504
    return m


@pytest.mark.parametrize("spec", [None, lambda L: {L.nn.Linear}])
def test_linear_matches_torch(spec):
    tq, gq = _quantized(torch, _mlp, spec), _quantized(gt, _mlp, spec)
    assert repr(gq) == repr(tq)
    assert list(gq.state_dict()) == list(tq.state_dict())
    np.testing.assert_array_equal(gq[0].weight().numpy(), tq[0].weight().numpy())
    x = _x(3, 6)
    yt, yg = tq(torch.from_numpy(x)), gq(gt.from_numpy(x))
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-6)
    # the bias add is differentiable, the product is not (as torch's)
    assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
    gq[0](gt.from_numpy(x)).sum().backward()
    tq[0](torch.from_numpy(x)).sum().backward()
    np.testing.assert_allclose(gq[0].bias().grad.numpy(), tq[0].bias().grad.numpy())


def test_state_dict_round_trip_and_input_dtype():
    gq = _quantized(gt, _mlp, None)
    fresh = _quantized(gt, lambda L: L.nn.Sequential(L.nn.Linear(6, 5), L.nn.ReLU(),
                                                     L.nn.Linear(5, 4)), None)
    fresh.load_state_dict(gq.state_dict())
    np.testing.assert_array_equal(fresh[0].weight().numpy(), gq[0].weight().numpy())
    for lib, q in ((torch, _quantized(torch, _mlp, None)), (gt, gq)):
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            q(lib.from_numpy(_x(2, 6).astype(np.float64)))


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers_match_torch(kind):
    def build(L):
        return L.nn.Sequential(getattr(L.nn, kind)(4, 3, num_layers=2, bidirectional=True))
    def spec(L):
        return {getattr(L.nn, kind)}
    tq, gq = _quantized(torch, build, spec), _quantized(gt, build, spec)
    assert repr(gq) == repr(tq)
    x = _x(5, 2, 4)
    np.testing.assert_allclose(gq(gt.from_numpy(x))[0].numpy(),
                               tq(torch.from_numpy(x))[0].detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(kind):
    def build(L):
        return L.nn.Sequential(getattr(L.nn, kind)(4, 3))
    def spec(L):
        return {getattr(L.nn, kind)}
    tq, gq = _quantized(torch, build, spec), _quantized(gt, build, spec)
    assert repr(gq) == repr(tq)
    x = _x(2, 4)
    rt, rg = tq(torch.from_numpy(x)), gq(gt.from_numpy(x))
    rt, rg = (rt[0], rg[0]) if isinstance(rt, tuple) else (rt, rg)
    np.testing.assert_allclose(rg.numpy(), rt.detach().numpy(), atol=1e-6)
