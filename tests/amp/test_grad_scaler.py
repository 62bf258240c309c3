"""GradScaler against torch.amp.GradScaler('cpu'): scale sequence, skipped steps, errors,
clipping after unscale_, several optimizers, state_dict; and an autocast training loop."""

import pickle

import numpy as np
import pytest
import torch

import glasstorch as gt
import glasstorch.amp as amp

rng = np.random.default_rng(0)
P0 = rng.standard_normal((3, 4)).astype(np.float32)
P1 = rng.standard_normal(4).astype(np.float32)


def _grad_sequence(n):
    seq = []
    for i in range(n):
        g0 = rng.standard_normal((3, 4)).astype(np.float32)
        g1 = rng.standard_normal(4).astype(np.float32)
        if i in (2, 7):
            g0[1, 2] = np.inf
        if i == 5:
            g1[0] = np.nan
        if i == 8:
            g0[0, 0], g1[1] = -np.inf, np.nan
        seq.append((g0, g1))
    return seq


def _run(lib, scaler, opts, seq, clip=None, params=None):
    log = []
    for g0, g1 in seq:
        for opt in opts:
            opt.zero_grad()
        s = scaler.get_scale()
        for p, g in zip(params, (g0, g1)):
            p.grad = lib.tensor(g * s)
        if clip is not None:
            for opt in opts:
                scaler.unscale_(opt)
            norm = lib.nn.utils.clip_grad_norm_(params, clip)
        before = [p.detach().numpy().copy() for p in params]
        for opt in opts:
            scaler.step(opt)
        after = [p.detach().numpy().copy() for p in params]
        scaler.update()
        log.append((scaler.get_scale(), scaler._get_growth_tracker(),
                    [np.array_equal(x, y) for x, y in zip(before, after)], after,
                    None if clip is None else float(norm)))
    return log


def _compare(a, b):
    assert len(a) == len(b)
    for (sa, ta, ra, pa, na), (sb, tb, rb, pb, nb) in zip(a, b):
        assert sa == sb and ta == tb and ra == rb
        for x, y in zip(pa, pb):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
        if na is not None and np.isfinite(nb):
            assert abs(na - nb) <= 1e-4 * max(1.0, abs(nb))


def _setup(lib, opt_names=("SGD",)):
    params = [lib.tensor(P0.copy(), requires_grad=True), lib.tensor(P1.copy(),
                                                                    requires_grad=True)]
    opts = []
    for i, name in enumerate(opt_names):
        ps = params if len(opt_names) == 1 else [params[i]]
        opts.append(lib.optim.SGD(ps, lr=0.1, momentum=0.9) if name == "SGD"
                    else lib.optim.Adam(ps, lr=0.01))
    return params, opts


def _scalers(**kw):
    return amp.GradScaler("cpu", **kw), torch.amp.GradScaler("cpu", **kw)


@pytest.mark.parametrize("clip", [None, 1.0])
def test_scale_sequence_and_skipped_steps_match_torch(clip):
    seq = _grad_sequence(14)
    g_sc, t_sc = _scalers(init_scale=2.0 ** 10, growth_interval=3, growth_factor=4.0,
                          backoff_factor=0.25)
    for sc, lib in ((g_sc, gt), (t_sc, torch)):
        sc.scale(lib.ones(()))  # creates the scale lazily, as in a real loop
    gp, go = _setup(gt)
    tp, to = _setup(torch)
    a = _run(gt, g_sc, go, seq, clip, gp)
    b = _run(torch, t_sc, to, seq, clip, tp)
    _compare(a, b)
    assert any(r[2][0] for r in a) and not all(r[2][0] for r in a)
    assert g_sc.state_dict() == t_sc.state_dict()


def test_two_optimizers_match_torch():
    seq = _grad_sequence(10)
    g_sc, t_sc = _scalers(init_scale=256.0, growth_interval=2)
    g_sc.scale(gt.ones(()))
    t_sc.scale(torch.ones(()))
    gp, go = _setup(gt, ("SGD", "Adam"))
    tp, to = _setup(torch, ("SGD", "Adam"))
    _compare(_run(gt, g_sc, go, seq, 0.5, gp), _run(torch, t_sc, to, seq, 0.5, tp))


def test_scale_outputs_and_dtypes():
    sc = amp.GradScaler("cpu", init_scale=8.0)
    assert sc.get_scale() == 8.0 and sc._scale is None
    out = sc.scale(gt.tensor([1.0, 2.0]))
    assert out.tolist() == [8.0, 16.0] and out.dtype is gt.float32
    assert sc.scale(gt.tensor([1.0], dtype=gt.bfloat16)).dtype is gt.bfloat16
    lst = sc.scale([gt.ones(1), (gt.ones(1), gt.ones(2))])
    assert isinstance(lst, list) and isinstance(lst[1], tuple) and lst[1][1].tolist() == [8, 8]
    with pytest.raises(ValueError):
        sc.scale(3.0)
    off = amp.GradScaler("cpu", enabled=False)
    x = gt.ones(2)
    assert off.scale(x) is x and off.get_scale() == 1.0 and not off.is_enabled()
    assert off.state_dict() == {}
    assert amp.GradScaler("cuda").is_enabled()


def test_errors_match_torch():
    for lib, sc_cls in ((gt, amp.GradScaler), (torch, torch.amp.GradScaler)):
        with pytest.raises(AssertionError, match="growth factor"):
            sc_cls("cpu", growth_factor=1.0)
        with pytest.raises(AssertionError, match="backoff factor"):
            sc_cls("cpu", backoff_factor=1.0)
        sc = sc_cls("cpu")
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        with pytest.raises(AssertionError):
            sc.step(opt)
        with pytest.raises(AssertionError):
            sc.update()
        sc.scale(p.sum()).backward()
        sc.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            sc.unscale_(opt)
        sc.step(opt)
        with pytest.raises(RuntimeError, match="after step"):
            sc.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            sc.step(opt)
        with pytest.raises(RuntimeError, match="Closure"):
            sc.step(opt, closure=lambda: None)
        sc.update()
        h = lib.ones(2, dtype=lib.float16, requires_grad=True)
        h.grad = lib.ones(2, dtype=lib.float16)
        with pytest.raises(ValueError, match="FP16"):
            sc.unscale_(lib.optim.SGD([h], lr=0.1))
        with pytest.raises(AssertionError):
            sc.update(new_scale=lib.ones(2))


def test_update_new_scale_and_state_dict_roundtrip():
    g_sc, t_sc = _scalers(init_scale=64.0, growth_interval=5)
    for sc, lib in ((g_sc, gt), (t_sc, torch)):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        sc.scale(p.sum()).backward()
        sc.step(opt)
        sc.update(new_scale=3.0)
        assert sc.get_scale() == 3.0
        sc.update(new_scale=lib.tensor(5.0))
        with pytest.raises(RuntimeError):  # torch copies a [1] tensor into the 0-d scale
            sc.update(new_scale=lib.tensor([5.0]))
    assert g_sc.state_dict() == t_sc.state_dict()
    fresh = amp.GradScaler("cpu")
    fresh.load_state_dict(t_sc.state_dict())
    assert fresh.state_dict() == t_sc.state_dict()
    fresh.scale(gt.ones(()))
    assert fresh.get_scale() == 5.0
    with pytest.raises(RuntimeError, match="empty"):
        fresh.load_state_dict({})
    clone = pickle.loads(pickle.dumps(g_sc))
    assert clone.state_dict() == g_sc.state_dict() and clone._scale is None


def _train(ac, scaler, steps=60):
    gt.manual_seed(0)
    x = gt.tensor(XS)
    y = gt.tensor(YS)
    model = gt.nn.Sequential(gt.nn.Linear(8, 32), gt.nn.ReLU(), gt.nn.Linear(32, 3))
    opt = gt.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        with ac():
            loss = gt.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    with gt.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    return loss.item(), acc, model


XS = rng.standard_normal((256, 8)).astype(np.float32)
YS = (XS[:, :3] @ rng.standard_normal((3, 3)).astype(np.float32)).argmax(1)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_mlp_converges_like_float32(dtype):
    ref_loss, ref_acc, _ = _train(lambda: amp.autocast("cpu", enabled=False),
                                  amp.GradScaler("cpu", enabled=False))
    loss, acc, model = _train(lambda: amp.autocast("cpu", dtype=getattr(gt, dtype)),
                              amp.GradScaler("cpu", init_scale=2.0 ** 8))
    assert all(p.dtype is gt.float32 for p in model.parameters())
    assert ref_acc > 0.9
    assert acc >= ref_acc - 0.03 and loss < ref_loss + 0.05


IMGS = rng.standard_normal((64, 1, 8, 8)).astype(np.float32)
IMG_Y = (IMGS[:, 0, :4].mean((1, 2)) > IMGS[:, 0, 4:].mean((1, 2))).astype(np.int64)


def _train_cnn(ac, scaler, steps=40):
    gt.manual_seed(0)
    nn = gt.nn
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(128, 2))
    opt = gt.optim.Adam(model.parameters(), lr=1e-2)
    x, y = gt.tensor(IMGS), gt.tensor(IMG_Y)
    for _ in range(steps):
        opt.zero_grad()
        with ac():
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    assert out.dtype is (gt.float32 if scaler.get_scale() == 1.0 else gt.bfloat16)
    with gt.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def test_autocast_cnn_converges_like_float32():
    ref = _train_cnn(lambda: amp.autocast("cpu", enabled=False),
                     amp.GradScaler("cpu", enabled=False))
    got = _train_cnn(lambda: amp.autocast("cpu"), amp.GradScaler("cpu", init_scale=2.0 ** 8))
    assert ref > 0.9 and got >= ref - 0.05
