"""Behaviour that tutorial-style PyTorch programs exposed, each compared with torch."""

import warnings

import numpy as np
import pytest
import torch

import glasstorch as gt


def test_python_range_indexes_like_a_list():
    def run(lib):
        x = lib.arange(12.).reshape(3, 4)
        y = x.clone()
        y[range(2)] = 0
        return (x[range(3), lib.tensor([0, 1, 3])].tolist(), x[:, range(1, 4, 2)].tolist(),
                tuple(x[range(0)].shape), y.tolist())
    assert run(gt) == run(torch)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_affine_grid_and_grid_sample_round_like_torch(name):
    # the identity transform lands exactly on pixel centres; a different rounding of the
    # unnormalised coordinate picks the other neighbour and changes the gradient (STN tutorial)
    size = (2, 1, 28, 28)
    theta = np.array([[[1., 0, 0], [0, 1, 0]]] * 2)
    x = np.sin(np.arange(np.prod(size))).reshape(size)
    out = {}
    for lib in (gt, torch):
        dt = getattr(lib, name)
        th = lib.tensor(theta, dtype=dt, requires_grad=True)
        grid = lib.nn.functional.affine_grid(th, size, align_corners=False)
        sampled = lib.nn.functional.grid_sample(lib.tensor(x, dtype=dt), grid,
                                                align_corners=False)
        sampled.pow(2).sum().backward()
        out[lib] = grid.detach().numpy(), th.grad.numpy()
    np.testing.assert_array_equal(out[gt][0], out[torch][0])
    scale = np.abs(out[torch][1]).max() * (1e-6 if name == "float32" else 1e-12)
    np.testing.assert_allclose(out[gt][1], out[torch][1], rtol=0, atol=scale)


def test_numpy_scalars_keep_their_dtype_in_tensor():
    cases = [np.float64(2.0), [np.float64(1.5), 2.0], [[np.float64(1)]], [np.float32(1.5), 2.0],
             [np.int32(1), 2], [np.int8(1), 2.5], [1, np.float32(2)]]
    for c in cases:
        assert str(gt.tensor(c).dtype) == str(torch.tensor(c).dtype), c
    batch = gt.utils.data.default_collate([np.float64(1.0), np.float64(2.0)])
    assert batch.dtype is gt.float64


def test_set_default_device():
    assert gt.get_default_device() == gt.device("cpu")
    try:
        gt.set_default_device("cpu")
        assert gt.zeros(1).device.type == "cpu"
        gt.set_default_device("cuda")
        assert gt.get_default_device().type == "cuda"
        with pytest.raises(AssertionError, match="not compiled with CUDA"):  # as torch's
            gt.zeros(1)
    finally:
        gt.set_default_device(None)
    assert gt.zeros(1).device.type == "cpu"


def test_converting_a_tensor_that_requires_grad():
    for lib in (gt, torch):
        t = lib.ones((), requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires"):
            np.asarray(lib.ones(2, requires_grad=True))
        with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True"):
            assert float(t) == 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with lib.no_grad():
                float(t)
            float(t.detach()), t.item(), int(t)


def test_small_integer_powers_match_torch_bit_for_bit():
    x = np.random.default_rng(0).standard_normal(10000) * 3
    for name in ("float32", "float64"):
        a, b = gt.tensor(x, dtype=getattr(gt, name)), torch.tensor(x, dtype=getattr(torch, name))
        for e in (2, 3, -1, -2, 2.0, 3.0):
            np.testing.assert_array_equal((a ** e).numpy(), (b ** e).numpy())


def test_functional_warnings_point_at_the_callers_line():
    # under autocast every policy op gains a wrapper frame; the warning must still name the
    # user's line, not glasstorch's
    F = gt.nn.functional
    x, grid = gt.ones(1, 1, 4, 4), gt.zeros(1, 2, 2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.grid_sample(x, grid); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
        with gt.autocast("cpu"):
            F.grid_sample(x, grid)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line), (__file__, line + 2)]


def test_inplace_view_methods_resize_and_legacy_type_classes():
    def run(lib):
        out = []
        t = lib.zeros(3)
        version = t._version
        out.append((t.unsqueeze_(0) is t, tuple(t.shape), t.stride(), t._version - version))
        y = lib.ones(2, 3, requires_grad=True)
        z = y * 2
        z.t_()
        (z * lib.arange(6.).view(3, 2)).sum().backward()
        out.append((tuple(z.shape), y.grad.tolist()))
        z = lib.arange(6.).view(2, 3)
        row = z[0]
        z.transpose_(0, 1)
        out.append((z.stride(), row.tolist(), z.tolist()))
        a = lib.ones(1, 3, 1)
        out.append((tuple(a.squeeze_(0).shape), tuple(lib.ones(2, 3).swapdims_(0, 1).shape)))
        c = lib.arange(6.)
        c.resize_(2, 2)
        out.append((c.tolist(), c.is_contiguous()))
        c.resize_(10)
        out.append((tuple(c.shape), c[:6].tolist()))
        d = lib.arange(6.)
        out.append(d.as_strided_((2, 2), (1, 2)).tolist())
        out.append((str(lib.ones(2).type(lib.LongTensor).dtype),
                    str(lib.nn.Linear(2, 2).type(lib.DoubleTensor).weight.dtype)))
        for bad in (lambda: lib.zeros(3, requires_grad=True).unsqueeze_(0),
                    lambda: lib.ones(2, requires_grad=True).resize_(4)):
            with pytest.raises(RuntimeError) as err:
                bad()
            out.append(str(err.value))
        return out
    assert run(gt) == run(torch)
