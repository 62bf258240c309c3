"""Convolutions vs torch: functionals (all options, grads, gradcheck), modules, init."""

import itertools
import warnings

import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.nn as nn
import glasstorch.nn.functional as F

from ._cmp import compare_fn
from .util import compare_module, copy_weights

TF = torch.nn.functional
CONV = [(1, (7,), (3,)), (2, (7, 6), (3, 2)), (3, (6, 7, 5), (2, 3, 2))]


@pytest.mark.parametrize("nd,size,k", CONV)
def test_conv_functional(nd, size, k):
    rng = np.random.default_rng(nd)
    name = f"conv{nd}d"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stride, pad, dil, groups, bias in itertools.product(
                (1, 2), (0, 1, "same", "valid"), (1, 2), (1, 2), (True, False)):
            if pad == "same" and stride != 1:
                continue
            x = rng.standard_normal((2, 4) + size).astype(np.float32)
            w = rng.standard_normal((6, 4 // groups) + k).astype(np.float32)
            arrays = [x, w] + ([rng.standard_normal(6).astype(np.float32)] if bias else [])

            def run(lib, fn):
                return lambda x, w, *b: fn(x, w, b[0] if b else None, stride, pad, dil, groups)
            compare_fn(run(torch, getattr(TF, name)), run(glasstorch, getattr(F, name)), arrays,
                       rng, tol=1e-4)


@pytest.mark.parametrize("nd,size,k", CONV)
def test_conv_transpose_functional(nd, size, k):
    rng = np.random.default_rng(10 + nd)
    name = f"conv_transpose{nd}d"
    for stride, pad, dil, groups, op in itertools.product((1, 3), (0, 1), (1, 2), (1, 2), (0, 1)):
        if op >= stride and op >= dil:
            continue
        x = rng.standard_normal((2, 4) + tuple(s // 2 + 1 for s in size)).astype(np.float32)
        w = rng.standard_normal((4, 6 // groups) + k).astype(np.float32)
        b = rng.standard_normal(6).astype(np.float32)

        def run(fn):
            return lambda x, w, b: fn(x, w, b, stride, pad, op, groups, dil)
        compare_fn(run(getattr(TF, name)), run(getattr(F, name)), [x, w, b], rng, tol=1e-4)


def test_conv_unbatched_and_dtypes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    compare_fn(lambda x, w: TF.conv2d(x, w, padding=1), lambda x, w: F.conv2d(x, w, padding=1),
               [x, w], rng, tol=1e-4)
    for dt in (np.float64, np.int64):
        xs, ws = (x * 3).astype(dt), (w * 3).astype(dt)
        compare_fn(lambda x, w: TF.conv2d(x, w), lambda x, w: F.conv2d(x, w), [xs, ws], rng,
                   grad=False, tol=1e-9)
    t = TF.conv2d(torch.from_numpy(x[None]).half(), torch.from_numpy(w).half())
    g = F.conv2d(glasstorch.from_numpy(x[None]).half(), glasstorch.from_numpy(w).half())
    assert g.dtype == glasstorch.float16
    np.testing.assert_allclose(g.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-2)


def test_conv_gradcheck():
    rng = np.random.default_rng(1)
    x = glasstorch.from_numpy(rng.standard_normal((2, 4, 5, 4))).requires_grad_()
    w = glasstorch.from_numpy(rng.standard_normal((6, 2, 3, 2))).requires_grad_()
    b = glasstorch.from_numpy(rng.standard_normal(6)).requires_grad_()
    assert glasstorch.autograd.gradcheck(
        lambda x, w, b: F.conv2d(x, w, b, 2, 1, (1, 2), 2), (x, w, b))
    wt = glasstorch.from_numpy(rng.standard_normal((4, 3, 3, 2))).requires_grad_()
    assert glasstorch.autograd.gradcheck(
        lambda x, w: F.conv_transpose2d(x, w, None, 2, 1, 1, 1, 1), (x, wt))


@pytest.mark.parametrize("args,kwargs", [
    (((1, 2, 5, 5), (3, 3, 3, 3)), {}),
    (((1, 2, 2, 2), (3, 2, 3, 3)), {}),
    (((1, 2, 5), (3, 2, 3, 3)), {}),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"stride": 2, "padding": "same"}),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"groups": 2}),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"padding": -1}),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"stride": 0}),
    (((1, 2, 5, 5), (3, 2, 3, 3)), {"padding": "foo"}),
])
def test_conv_errors(args, kwargs):
    xt, wt = torch.randn(args[0]), torch.randn(args[1])
    with pytest.raises(Exception) as e:
        TF.conv2d(xt, wt, **kwargs)
    with pytest.raises(e.type):
        F.conv2d(glasstorch.from_numpy(xt.numpy()), glasstorch.from_numpy(wt.numpy()), **kwargs)


def test_conv_bias_and_dtype_errors():
    x, w = glasstorch.randn(1, 2, 5, 5), glasstorch.randn(3, 2, 3, 3)
    with pytest.raises(RuntimeError, match="bias"):
        F.conv2d(x, w, glasstorch.randn(2))
    with pytest.raises(RuntimeError, match="scalar type"):
        F.conv2d(x, w.double())


MODULES = [
    ("Conv1d", (4, 6, 3), {}, (2, 4, 9)),
    ("Conv1d", (4, 6, 4), {"padding": "same", "padding_mode": "circular"}, (2, 4, 9)),
    ("Conv2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2}, (2, 4, 9, 8)),
    ("Conv2d", (4, 6, (3, 2)), {"padding": (1, 2), "padding_mode": "reflect", "bias": False},
     (2, 4, 7, 6)),
    ("Conv2d", (4, 6, 3), {"padding": 2, "dilation": 2, "padding_mode": "replicate"},
     (4, 7, 6)),
    ("Conv3d", (2, 4, 2), {"padding": "same"}, (2, 2, 4, 5, 3)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "output_padding": 1}, (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2, "dilation": 2},
     (2, 4, 4, 5)),
    ("ConvTranspose3d", (2, 4, 2), {"stride": (1, 2, 2), "bias": False}, (2, 2, 3, 3, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES)
def test_conv_modules(name, args, kwargs, shape):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(torch.nn, name)(*args, **kwargs)
        gm = getattr(nn, name)(*args, **kwargs)
        assert repr(gm) == repr(tm)
        assert [(n, tuple(p.shape)) for n, p in gm.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        compare_module(gm, tm, x, rtol=1e-4, atol=1e-4)


def test_conv_transpose_output_size():
    tm = torch.nn.ConvTranspose2d(3, 2, 3, stride=2)
    gm = nn.ConvTranspose2d(3, 2, 3, stride=2)
    copy_weights(gm, tm)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    t = tm(torch.from_numpy(x), output_size=[10, 10])
    g = gm(glasstorch.from_numpy(x), output_size=[10, 10])
    assert tuple(g.shape) == tuple(t.shape) == (1, 2, 10, 10)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        gm(glasstorch.from_numpy(x), output_size=[12, 12])


def test_conv_module_errors():
    for kw in ({"groups": 0}, {"groups": 3}, {"padding": "foo"}, {"padding_mode": "x"},
               {"padding": "same", "stride": 2}):
        with pytest.raises(ValueError):
            torch.nn.Conv2d(4, 6, 3, **kw)
        with pytest.raises(ValueError):
            nn.Conv2d(4, 6, 3, **kw)
    with pytest.raises(ValueError):
        nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")


def test_conv_default_init_statistics():
    gm = nn.Conv2d(64, 128, 5)
    bound = 1 / np.sqrt(64 * 25)
    w = gm.weight.detach().numpy()
    assert np.abs(w).max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.02 * bound
    b = gm.bias.detach().numpy()
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.8 * bound
    gt_ = nn.ConvTranspose2d(64, 32, 3, groups=2)
    bound = 1 / np.sqrt(16 * 9)  # fan_in of the transposed weight: size(1) * prod(k)
    assert np.abs(gt_.weight.detach().numpy()).max() <= bound


def test_lazy_conv():
    m = nn.LazyConv2d(8, 3, padding=1)
    tm = torch.nn.LazyConv2d(8, 3, padding=1)
    assert repr(m) == repr(tm)
    y = m(glasstorch.randn(2, 5, 6, 6))
    tm(torch.randn(2, 5, 6, 6))
    assert type(m) is nn.Conv2d and repr(m) == repr(tm)
    assert tuple(m.weight.shape) == (8, 5, 3, 3) and tuple(y.shape) == (2, 8, 6, 6)
    mt = nn.LazyConvTranspose1d(4, 3)
    assert tuple(mt(glasstorch.randn(2, 3, 5)).shape) == (2, 4, 7)
    assert tuple(mt.weight.shape) == (3, 4, 3)


def test_conv_double_backward_records_a_graph():
    x = glasstorch.randn(1, 2, 5, 5, requires_grad=True)
    w = glasstorch.randn(3, 2, 3, 3, requires_grad=True)
    y = (F.conv2d(x, w) ** 2).sum()
    gx, = glasstorch.autograd.grad(y, x, create_graph=True)
    assert gx.grad_fn is not None  # values vs torch: tests/autograd/test_double_backward_conv.py
