"""Padding, interpolate, shuffles, fold/unfold, affine_grid vs torch; their modules."""

import warnings

import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.nn as nn
import glasstorch.nn.functional as F

from ._cmp import compare_fn
from .util import compare_module

TF = torch.nn.functional
SIZES = {1: (5,), 2: (5, 4), 3: (5, 4, 6)}


@pytest.mark.parametrize("nd", (1, 2, 3))
def test_pad(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + SIZES[nd]).astype(np.float32)
    for mode in ("constant", "reflect", "replicate", "circular"):
        for pad in [(1, 2, 0, 3, 2, 1)[:2 * nd], (3, 0, 1, 1, 0, 2)[:2 * nd]]:
            compare_fn(lambda x: TF.pad(x, pad, mode), lambda x: F.pad(x, pad, mode), [x], rng)
    compare_fn(lambda x: TF.pad(x, (-1, 2)), lambda x: F.pad(x, (-1, 2)), [x], rng)
    compare_fn(lambda x: TF.pad(x, (1, 1), value=2.5), lambda x: F.pad(x, (1, 1), value=2.5),
               [x], rng)
    if nd < 3:  # unbatched input
        compare_fn(lambda x: TF.pad(x[0], (2, 1), "reflect"),
                   lambda x: F.pad(x[0], (2, 1), "reflect"), [x], rng)


@pytest.mark.parametrize("call", [
    lambda f, x: f.pad(x, (1, 1), mode="reflect"),     # 2 pads on 4-D: unsupported
    lambda f, x: f.pad(x, (4, 1, 0, 0), mode="reflect"),
    lambda f, x: f.pad(x, (1, 1, 1)),
    lambda f, x: f.pad(x, (1, 1), mode="foo"),
    lambda f, x: f.pad(x, (1, 1, 1, 1), mode="reflect", value=1.0),
    lambda f, x: f.interpolate(x, scale_factor=2, mode="linear"),
    lambda f, x: f.interpolate(x, scale_factor=2, align_corners=True),
    lambda f, x: f.interpolate(x, size=(2, 3, 4)),
    lambda f, x: f.interpolate(x),
    lambda f, x: f.interpolate(x, size=2, scale_factor=2),
    lambda f, x: f.interpolate(x, size=2, antialias=True),
    lambda f, x: f.interpolate(x, size=2, mode="fooo"),
    lambda f, x: f.pixel_shuffle(x, 3),
    lambda f, x: f.channel_shuffle(x, 3),
])
def test_vision_errors(call):
    with pytest.raises(Exception) as e:
        call(TF, torch.zeros(1, 4, 4, 4))
    with pytest.raises(e.type):
        call(F, glasstorch.zeros(1, 4, 4, 4))


def _interp_cases(nd):
    modes = ["nearest", "nearest-exact", "area", {1: "linear", 2: "bilinear", 3: "trilinear"}[nd]]
    if nd == 2:
        modes.append("bicubic")
    for mode in modes:
        for kw in (dict(scale_factor=2), dict(scale_factor=0.6), dict(size=(7, 3, 5)[:nd]),
                   dict(scale_factor=1.7, recompute_scale_factor=True), dict(size=3)):
            acs = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
            for ac in acs:
                yield mode, dict(kw, align_corners=ac)
                if nd == 2 and mode in ("bilinear", "bicubic"):
                    yield mode, dict(kw, align_corners=ac, antialias=True)


@pytest.mark.parametrize("nd", (1, 2, 3))
def test_interpolate(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + SIZES[nd]).astype(np.float32)
    for mode, kw in _interp_cases(nd):
        compare_fn(lambda x: TF.interpolate(x, mode=mode, **kw),
                   lambda x: F.interpolate(x, mode=mode, **kw), [x], rng)


def test_interpolate_dtypes():
    rng = np.random.default_rng(0)
    xu = (rng.random((1, 2, 5, 5)) * 255).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        compare_fn(lambda x: TF.interpolate(x, scale_factor=1.7, mode=mode),
                   lambda x: F.interpolate(x, scale_factor=1.7, mode=mode), [xu], rng,
                   grad=False, tol=0)
    x64 = rng.standard_normal((1, 2, 5, 5))
    compare_fn(lambda x: TF.interpolate(x, scale_factor=1.5, mode="bicubic"),
               lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"), [x64], rng,
               tol=1e-10)
    with pytest.raises(NotImplementedError):
        F.interpolate(glasstorch.zeros(1, 1, 2, 2, dtype=glasstorch.int64), scale_factor=2)


def test_interpolate_gradcheck():
    rng = np.random.default_rng(0)
    x = glasstorch.from_numpy(rng.standard_normal((1, 2, 4, 3))).requires_grad_()
    for mode in ("bilinear", "bicubic", "nearest"):
        assert glasstorch.autograd.gradcheck(
            lambda x: F.interpolate(x, size=(5, 2), mode=mode), (x,))
    assert glasstorch.autograd.gradcheck(lambda x: F.pad(x, (1, 2, 2, 1), "reflect"), (x,))
    assert glasstorch.autograd.gradgradcheck(
        lambda x: F.interpolate(x, size=(5, 2), mode="bilinear"), (x,))


def test_shuffles_fold_affine():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 3, 4)).astype(np.float32)
    compare_fn(lambda x: TF.pixel_shuffle(x, 2), lambda x: F.pixel_shuffle(x, 2), [x], rng)
    compare_fn(lambda x: TF.pixel_unshuffle(x.reshape(2, 2, 6, 8), 2),
               lambda x: F.pixel_unshuffle(x.reshape(2, 2, 6, 8), 2), [x], rng)
    compare_fn(lambda x: TF.channel_shuffle(x, 4), lambda x: F.channel_shuffle(x, 4), [x], rng)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    for k, d, p, s in [(2, 1, 0, 1), (3, 2, 1, 2), ((2, 3), 1, (1, 0), (2, 1))]:
        compare_fn(lambda x: TF.unfold(x, k, d, p, s), lambda x: F.unfold(x, k, d, p, s), [x],
                   rng)
        cols = rng.standard_normal(tuple(TF.unfold(torch.from_numpy(x), k, d, p, s).shape))
        compare_fn(lambda c: TF.fold(c, (7, 6), k, d, p, s),
                   lambda c: F.fold(c, (7, 6), k, d, p, s), [cols.astype(np.float32)], rng)
    for ac in (False, True):
        th = rng.standard_normal((2, 2, 3)).astype(np.float32)
        compare_fn(lambda t: TF.affine_grid(t, (2, 3, 4, 5), align_corners=ac),
                   lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=ac), [th], rng)
        th = rng.standard_normal((2, 3, 4)).astype(np.float32)
        compare_fn(lambda t: TF.affine_grid(t, (2, 3, 4, 5, 3), align_corners=ac),
                   lambda t: F.affine_grid(t, (2, 3, 4, 5, 3), align_corners=ac), [th], rng)


MODULES = [
    ("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad2d", ((1, 2, 0, 1),), (2, 3, 5, 4)),
    ("ZeroPad3d", (1,), (1, 2, 3, 3, 3)), ("ConstantPad1d", (2, 3.5), (2, 3, 5)),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0), (2, 3, 5, 4)),
    ("ConstantPad3d", (1, 2.0), (1, 2, 3, 3, 3)), ("ReflectionPad1d", (2,), (2, 3, 5)),
    ("ReflectionPad2d", ((1, 2, 0, 3),), (2, 3, 5, 4)), ("ReflectionPad3d", (1,), (1, 2, 3, 3, 3)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 5)), ("ReplicationPad2d", (2,), (2, 3, 5, 4)),
    ("ReplicationPad3d", (1,), (1, 2, 3, 3, 3)), ("CircularPad1d", (2,), (2, 3, 5)),
    ("CircularPad2d", ((1, 2, 0, 3),), (2, 3, 5, 4)), ("CircularPad3d", (1,), (1, 2, 3, 3, 3)),
    ("Upsample", (None, 2, "bilinear"), (2, 3, 5, 4)),
    ("Upsample", ((7, 3), None, "nearest"), (2, 3, 5, 4)),
    ("Upsample", (None, (2.0, 1.5), "bicubic", True), (2, 3, 5, 4)),
    ("UpsamplingNearest2d", (None, 2), (2, 3, 5, 4)),
    ("UpsamplingBilinear2d", ((6, 7),), (2, 3, 5, 4)),
    ("PixelShuffle", (2,), (2, 8, 3, 3)), ("PixelUnshuffle", (2,), (2, 2, 4, 6)),
    ("ChannelShuffle", (2,), (2, 4, 3, 3)),
    ("Unfold", ((2, 3), 1, 1, 2), (2, 3, 6, 5)),
    ("Fold", ((4, 5), 2), (2, 12, 12)),
]


@pytest.mark.parametrize("name,args,shape", MODULES)
def test_vision_modules(name, args, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(torch.nn, name)(*args)
        gm = getattr(nn, name)(*args)
        assert repr(gm) == repr(tm)
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        compare_module(gm, tm, x, rtol=1e-5, atol=1e-5)
