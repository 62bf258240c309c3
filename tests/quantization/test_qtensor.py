"""Quantized tensors against torch: rounding and clamping bit for bit, qparams, printing,
errors for ops without quantized kernels, save/load in torch's format both ways."""

import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="torch.quantize_per_tensor")

QDTYPES = ["quint8", "qint8", "qint32"]
RANGES = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-100, 100)}


def _values(rng, n, scale):
    # half-way points of the grid (ties), random values and out-of-range ones
    ties = (rng.integers(-700, 700, n) / 2.0) * scale
    return np.concatenate([ties, rng.normal(0, 4, n), [1e6, -1e6, 0.0]]).astype(np.float32)


@pytest.mark.parametrize("name", QDTYPES + ["quint4x2"])
def test_quantize_per_tensor_bit_for_bit(name):
    rng = np.random.default_rng(0)
    lo, hi = RANGES.get(name, (0, 15))
    for _ in range(40):
        scale = float(rng.choice([0.1, 0.05, 1 / 3, 0.25, rng.uniform(1e-3, 1)]))
        zp = int(rng.integers(lo, hi + 1))
        x = _values(rng, int(rng.integers(1, 40)), scale)
        t = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, getattr(torch, name))
        g = gt.quantize_per_tensor(gt.tensor(x), scale, zp, getattr(gt, name))
        assert g.dtype is getattr(gt, name) and g.is_quantized
        np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())
        np.testing.assert_array_equal(g.dequantize().numpy(), t.dequantize().numpy())
        assert g.q_scale() == t.q_scale() and g.q_zero_point() == t.q_zero_point()


@pytest.mark.parametrize("name", ["quint8", "qint8", "qint32"])
def test_quantize_per_channel_bit_for_bit(name):
    rng = np.random.default_rng(1)
    lo, hi = RANGES[name]
    for axis in (0, 1, 2):
        shape = [3, 4, 5]
        c = shape[axis]
        scales = rng.uniform(0.01, 0.5, c)
        zps = rng.integers(max(lo, -20), min(hi, 20) + 1, c)
        bshape = [1, 1, 1]
        bshape[axis] = c
        x = ((rng.integers(-600, 600, shape) / 2.0) * scales.reshape(bshape)).astype(np.float32)
        t = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                       torch.from_numpy(zps), axis, getattr(torch, name))
        g = gt.quantize_per_channel(gt.tensor(x), gt.tensor(scales), gt.tensor(zps), axis,
                                    getattr(gt, name))
        np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())
        np.testing.assert_array_equal(g.dequantize().numpy(), t.dequantize().numpy())
        assert g.q_per_channel_axis() == axis
        assert g.q_per_channel_scales().dtype is gt.float64
        assert g.q_per_channel_zero_points().dtype is gt.int64
        assert g.qscheme() is gt.per_channel_affine
        assert str(g) == str(t)


@pytest.mark.parametrize("name,reduce_range", [("quint8", False), ("quint8", True),
                                               ("qint8", False), ("qint8", True)])
def test_quantize_per_tensor_dynamic(name, reduce_range):
    rng = np.random.default_rng(2)
    for shift in (0.0, 3.0, -3.0):
        x = (rng.normal(0, 2, 50) + shift).astype(np.float32)
        t = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), getattr(torch, name),
                                              reduce_range)
        g = gt.quantize_per_tensor_dynamic(gt.tensor(x), getattr(gt, name), reduce_range)
        assert g.q_scale() == t.q_scale() and g.q_zero_point() == t.q_zero_point()
        np.testing.assert_array_equal(g.int_repr().numpy(), t.int_repr().numpy())


def test_printing_and_metadata():
    x = [-1.0, 0.05, 0.15, 0.25, 2.0, 100.0, -0.35]
    t = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.quint8)
    g = gt.quantize_per_tensor(gt.tensor(x), 0.1, 3, gt.quint8)
    assert repr(g) == repr(t)
    assert repr(g[1:3]) == repr(t[1:3])
    assert repr(g.reshape(7, 1).t()) == repr(t.reshape(7, 1).t())
    assert g.shape == gt.Size([7]) and g.stride() == (1,) and g.element_size() == 1
    assert repr(gt.per_tensor_affine) == "torch.per_tensor_affine"
    assert isinstance(gt.per_tensor_affine, gt.qscheme)
    assert not gt.tensor(x).is_quantized
    assert gt.quint8.itemsize == 1 and gt.qint32.itemsize == 4
    assert not gt.qint8.is_floating_point
    with pytest.raises(RuntimeError, match="quantized types"):
        _ = gt.qint8.is_signed
    with pytest.raises(RuntimeError, match="quantized"):
        gt.promote_types(gt.quint8, gt.float32)
    z = gt.quantize_per_tensor(gt.zeros(0), 0.5, 0, gt.quint8)
    assert repr(z) == repr(torch.quantize_per_tensor(torch.zeros(0), 0.5, 0, torch.quint8))


def test_views_share_memory_and_relu():
    t = torch.quantize_per_tensor(torch.randn(2, 6), 0.05, 128, torch.quint8)
    g = gt.quantize_per_tensor(gt.tensor(t.dequantize().numpy()), 0.05, 128, gt.quint8)
    for f in (lambda a: a.view(3, 4), lambda a: a.permute(1, 0), lambda a: a[1],
              lambda a: a.flatten(), lambda a: a.clone(), lambda a: a.unsqueeze(0)):
        np.testing.assert_array_equal(f(g).int_repr().numpy(), f(t).int_repr().numpy())
        assert f(g).dtype is gt.quint8
    np.testing.assert_array_equal(gt.relu(g).int_repr().numpy(),
                                  torch.relu(t).int_repr().numpy())
    np.testing.assert_array_equal(gt.nn.functional.relu(g).int_repr().numpy(),
                                  torch.nn.functional.relu(t).int_repr().numpy())
    v = g.view(12)
    assert v._base is not None


def test_max_pool_on_quantized():
    x = torch.randn(1, 2, 6, 6)
    t = torch.quantize_per_tensor(x, 0.02, 120, torch.quint8)
    g = gt.quantize_per_tensor(gt.tensor(x.numpy()), 0.02, 120, gt.quint8)
    tr = torch.nn.functional.max_pool2d(t, 2)
    gr = gt.nn.functional.max_pool2d(g, 2)
    assert gr.dtype is gt.quint8 and gr.q_scale() == tr.q_scale()
    np.testing.assert_array_equal(gr.int_repr().numpy(), tr.int_repr().numpy())


def test_ops_without_quantized_kernel_raise():
    g = gt.quantize_per_tensor(gt.randn(4), 0.1, 0, gt.qint8)
    t = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)
    for f in (lambda m, a: a + a, lambda m, a: a.sum(), lambda m, a: m.exp(a),
              lambda m, a: m.matmul(a, a), lambda m, a: a + 1):
        with pytest.raises(Exception) as et:
            f(torch, t)
        with pytest.raises(type(et.value)) as eg:
            f(gt, g)
        assert "QuantizedCPU" in str(eg.value) or "quantized" in str(eg.value)
    with pytest.raises(TypeError, match="unsupported ScalarType QInt8"):
        g.numpy()
    with pytest.raises(NotImplementedError, match="'CPU' backend"):
        gt.randn(3).int_repr()
    with pytest.raises(RuntimeError, match="Float Tensor, got Double"):
        gt.quantize_per_tensor(gt.zeros(2, dtype=gt.float64), 0.1, 0, gt.quint8)
    with pytest.raises(RuntimeError, match="above upper bound"):
        gt.quantize_per_tensor(gt.zeros(2), 0.1, 300, gt.quint8)
    with pytest.raises(RuntimeError, match="length of scales"):
        gt.quantize_per_channel(gt.zeros(2, 3), gt.tensor([0.1, 0.2]), gt.tensor([0, 0]), 1,
                                gt.qint8)
    with pytest.raises(RuntimeError, match="Expected quantizer"):
        g.q_per_channel_scales()
    # a float tensor passes through dequantize unchanged, as in torch
    f = gt.randn(3)
    assert gt.dequantize(f) is f


def test_save_load_both_ways():
    qs = {
        "a": torch.quantize_per_tensor(torch.randn(3, 4), 0.05, 7, torch.quint8),
        "b": torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]),
                                        torch.tensor([1, 2, 3]), 0, torch.qint8),
        "c": torch.quantize_per_tensor(torch.randn(5), 0.3, 1, torch.quint4x2),
        "d": torch.quantize_per_tensor(torch.randn(5) * 100, 0.3, -3, torch.qint32),
    }
    qs["e"] = qs["a"].t()
    buf = io.BytesIO()
    torch.save(qs, buf)
    g = gt.load(io.BytesIO(buf.getvalue()))
    for k, t in qs.items():
        assert str(g[k]) == str(t)
        np.testing.assert_array_equal(g[k].int_repr().numpy(), t.int_repr().numpy())
        assert g[k].stride() == t.stride()
    buf2 = io.BytesIO()
    gt.save(g, buf2)
    back = torch.load(io.BytesIO(buf2.getvalue()))  # weights_only: torch's allow-list
    for k, t in qs.items():
        assert torch.equal(back[k].int_repr(), t.int_repr())
        assert back[k].qscheme() == t.qscheme() and str(back[k]) == str(t)
    assert str(pickle.loads(pickle.dumps(g["b"]))) == str(qs["b"])
    assert str(copy.deepcopy(g["a"])) == str(qs["a"])


def test_make_quantized_from_ints():
    ints = torch.tensor([0, 5, 255], dtype=torch.uint8)
    t = torch._make_per_tensor_quantized_tensor(ints, 0.5, 3)
    g = gt._make_per_tensor_quantized_tensor(gt.tensor([0, 5, 255], dtype=gt.uint8), 0.5, 3)
    assert repr(g) == repr(t)


def test_fake_quantize_matches_and_grads():
    rng = np.random.default_rng(3)
    x = ((rng.integers(-600, 600, 40) / 2.0) * 0.1).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    gx = gt.tensor(x, requires_grad=True)
    ty = torch.fake_quantize_per_tensor_affine(tx, 0.1, 3, 0, 255)
    gy = gt.fake_quantize_per_tensor_affine(gx, 0.1, 3, 0, 255)
    np.testing.assert_array_equal(gy.detach().numpy(), ty.detach().numpy())
    assert type(gy.grad_fn).__name__ == type(ty.grad_fn).__name__
    ty.sum().backward()
    gy.sum().backward()
    np.testing.assert_array_equal(gx.grad.numpy(), tx.grad.numpy())
    w = rng.normal(0, 1, (3, 5)).astype(np.float32)
    s, z = np.array([0.01, 0.02, 0.03], np.float32), np.array([0, 1, -1], np.int32)
    ty = torch.fake_quantize_per_channel_affine(torch.tensor(w), torch.tensor(s),
                                                torch.tensor(z), 0, -128, 127)
    gy = gt.fake_quantize_per_channel_affine(gt.tensor(w), gt.tensor(s), gt.tensor(z), 0,
                                             -128, 127)
    np.testing.assert_array_equal(gy.numpy(), ty.numpy())


def test_dynamic_qparams_tiny_ranges():
    # torch raises scales below 6.1e-5 and widens the range to match
    rng = np.random.default_rng(7)
    for i in range(60):
        v = (rng.normal(0, 1, 5) * 10.0 ** rng.uniform(-10, 0)).astype(np.float32)
        v = np.abs(v) if i % 3 == 0 else (-np.abs(v) if i % 3 == 1 else v)
        for name, rr in (("quint8", False), ("qint8", True)):
            t = torch.quantize_per_tensor_dynamic(torch.tensor(v), getattr(torch, name), rr)
            g = gt.quantize_per_tensor_dynamic(gt.tensor(v), getattr(gt, name), rr)
            assert (g.q_scale(), g.q_zero_point()) == (t.q_scale(), t.q_zero_point())
            assert g.int_repr().tolist() == t.int_repr().tolist()
