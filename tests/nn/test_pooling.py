"""Pooling vs torch: max/avg/lp/adaptive pools and unpooling, functionals and modules."""

import itertools

import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.nn as nn
import glasstorch.nn.functional as F

from ._cmp import compare_fn
from .util import compare_module

TF = torch.nn.functional
SIZES = {1: (9,), 2: (9, 8), 3: (7, 6, 7)}


@pytest.mark.parametrize("nd", (1, 2, 3))
def test_max_pool(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + SIZES[nd]).astype(np.float32)
    name = f"max_pool{nd}d"
    for k, s, p, d, ceil in itertools.product((2, 3), (None, 2), (0, 1), (1, 2), (False, True)):
        if p > (d * (k - 1) + 1) // 2:
            continue
        compare_fn(lambda x: getattr(TF, name)(x, k, s, p, d, ceil, True),
                   lambda x: getattr(F, name)(x, k, s, p, d, ceil, True), [x], rng)


@pytest.mark.parametrize("nd", (1, 2, 3))
def test_avg_pool(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + SIZES[nd]).astype(np.float32)
    name = f"avg_pool{nd}d"
    for k, s, p, ceil, cip in itertools.product((2, 3), (None, 2), (0, 1), (False, True),
                                                (True, False)):
        for dov in ((None, 3) if nd > 1 else (None,)):
            args = (k, s, p, ceil, cip) + ((dov,) if nd > 1 else ())
            compare_fn(lambda x: getattr(TF, name)(x, *args),
                       lambda x: getattr(F, name)(x, *args), [x], rng)


@pytest.mark.parametrize("nd", (1, 2, 3))
def test_adaptive_pools(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + SIZES[nd]).astype(np.float32)
    for o in (1, 2, 3, 5, 9):
        compare_fn(lambda x: getattr(TF, f"adaptive_avg_pool{nd}d")(x, o),
                   lambda x: getattr(F, f"adaptive_avg_pool{nd}d")(x, o), [x], rng)
        compare_fn(lambda x: getattr(TF, f"adaptive_max_pool{nd}d")(x, o, True),
                   lambda x: getattr(F, f"adaptive_max_pool{nd}d")(x, o, True), [x], rng)
    if nd == 2:
        compare_fn(lambda x: TF.adaptive_avg_pool2d(x, (None, 3)),
                   lambda x: F.adaptive_avg_pool2d(x, (None, 3)), [x], rng)


def test_pool_unbatched_lp_unpool():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8, 8)).astype(np.float32)
    compare_fn(lambda x: TF.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2), [x], rng)
    compare_fn(lambda x: TF.avg_pool2d(x, 3, 2, 1), lambda x: F.avg_pool2d(x, 3, 2, 1), [x], rng)
    xp = np.abs(x) + 0.1
    for p in (2, 3.0, float("inf")):
        compare_fn(lambda x: TF.lp_pool2d(x, p, 2), lambda x: F.lp_pool2d(x, p, 2), [xp], rng,
                   tol=1e-4)
    compare_fn(lambda x: TF.lp_pool1d(x, 2, 3, 2), lambda x: F.lp_pool1d(x, 2, 3, 2), [xp[0]],
               rng, tol=1e-4)
    x4 = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    compare_fn(lambda x: TF.max_unpool2d(*TF.max_pool2d(x, 2, return_indices=True), 2),
               lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), [x4], rng)
    compare_fn(lambda x: TF.max_unpool2d(*TF.max_pool2d(x, 3, 2, return_indices=True), 3, 2,
                                         output_size=(8, 8)),
               lambda x: F.max_unpool2d(*F.max_pool2d(x, 3, 2, return_indices=True), 3, 2,
                                        output_size=(8, 8)), [x4], rng)
    x1 = rng.standard_normal((2, 3, 8)).astype(np.float32)
    compare_fn(lambda x: TF.max_unpool1d(*TF.max_pool1d(x, 2, return_indices=True), 2),
               lambda x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2), [x1], rng)
    x5 = rng.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
    compare_fn(lambda x: TF.max_unpool3d(*TF.max_pool3d(x, 2, return_indices=True), 2),
               lambda x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2), [x5], rng)


def test_pool_dtypes():
    rng = np.random.default_rng(0)
    xi = rng.integers(-50, 50, (1, 2, 6, 6))
    compare_fn(lambda x: TF.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2), [xi], rng, grad=False)
    compare_fn(lambda x: TF.avg_pool2d(x, 3, 2), lambda x: F.avg_pool2d(x, 3, 2), [xi], rng,
               grad=False)
    for fn in (lambda f, x: f.adaptive_avg_pool2d(x, 2),
               lambda f, x: f.avg_pool2d(x.abs().byte(), 2)):
        with pytest.raises(NotImplementedError):
            fn(TF, torch.from_numpy(xi))
        with pytest.raises(NotImplementedError):
            fn(F, glasstorch.from_numpy(xi))
    xh = rng.standard_normal((1, 2, 6, 6)).astype(np.float16)
    t = TF.avg_pool2d(torch.from_numpy(xh), 2)
    g = F.avg_pool2d(glasstorch.from_numpy(xh), 2)
    assert g.dtype == glasstorch.float16
    np.testing.assert_allclose(g.float().numpy(), t.float().numpy(), atol=1e-3)


@pytest.mark.parametrize("kwargs", [{"padding": 2}, {"kernel_size": 7}])
def test_pool_errors(kwargs):
    kw = {"kernel_size": 2, **kwargs}
    with pytest.raises(RuntimeError):
        TF.max_pool2d(torch.randn(1, 2, 6, 6), **kw)
    with pytest.raises(RuntimeError):
        F.max_pool2d(glasstorch.randn(1, 2, 6, 6), **kw)
    with pytest.raises(RuntimeError):
        F.avg_pool2d(glasstorch.randn(1, 2, 6, 6), **kw)
    with pytest.raises(RuntimeError):
        F.max_pool2d(glasstorch.randn(6), 2)


MODULES = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("MaxPool2d", (3,), {"stride": 2, "ceil_mode": True, "dilation": 2}, (2, 3, 9, 8)),
    ("MaxPool3d", (2,), {}, (2, 3, 4, 4, 4)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     (2, 3, 9, 8)),
    ("AvgPool3d", (2,), {"divisor_override": 3}, (2, 3, 4, 4, 4)),
    ("LPPool1d", (2, 3), {}, (2, 3, 9)),
    ("LPPool2d", (2, 3), {"stride": 2}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, 5),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool3d", (2,), {}, (2, 3, 4, 5, 4)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 3, 9, 8)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES)
def test_pool_modules(name, args, kwargs, shape):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    gm = getattr(nn, name)(*args, **kwargs)
    assert repr(gm) == repr(tm)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if name.startswith("LP"):
        x = np.abs(x) + 0.1
    compare_module(gm, tm, x, rtol=1e-4, atol=1e-5)


def test_unpool_modules():
    for name, k in (("MaxUnpool1d", 2), ("MaxUnpool2d", 2), ("MaxUnpool3d", 2)):
        tm, gm = getattr(torch.nn, name)(k), getattr(nn, name)(k)
        assert repr(gm) == repr(tm)
    pool_t, pool_g = torch.nn.MaxPool2d(2, return_indices=True), nn.MaxPool2d(2,
                                                                              return_indices=True)
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
    t = torch.nn.MaxUnpool2d(2)(*pool_t(torch.from_numpy(x)))
    g = nn.MaxUnpool2d(2)(*pool_g(glasstorch.from_numpy(x)))
    np.testing.assert_array_equal(g.numpy(), t.numpy())
