"""Learning-rate schedulers vs torch: 200-step lr (and momentum) sequences, including a
state_dict save/restore of optimizer and scheduler in the middle."""

import copy
import importlib
import math
import warnings

import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.optim  # noqa: F401

LIBS = (torch, glasstorch)


def _sched_mod(lib):
    return importlib.import_module(lib.__name__ + ".optim.lr_scheduler")


def _swa(lib):
    return importlib.import_module(lib.__name__ + ".optim.swa_utils")


def _opt(lib, kind="sgd"):
    a = lib.zeros(3, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _metric(i):
    # a noisy, plateauing curve for ReduceLROnPlateau
    return 1.0 / (1 + i) ** 0.3 + 0.05 * math.sin(i * 1.7)


S = {
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.97 ** e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (1 + e)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.98),
    "StepLR": lambda m, o: m.StepLR(o, step_size=30, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[20, 50, 50, 150], gamma=0.3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=40),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=120),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.99),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=150, power=2.0),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=60, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=10, T_mult=2, eta_min=1e-4),
    "CosineAnnealingWarmRestarts-1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=17),
    "CyclicLR-triangular": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=15),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=10,
                                                    step_size_down=25, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=20,
                                                  mode="exp_range", gamma=0.995,
                                                  base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-nomomentum": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=12,
                                                   cycle_momentum=False),
    "OneCycleLR-cos": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=201),
    "OneCycleLR-linear-3": lambda m, o: m.OneCycleLR(o, max_lr=0.3, epochs=4,
                                                     steps_per_epoch=51,
                                                     anneal_strategy="linear",
                                                     three_phase=True, pct_start=0.25),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.2, total_iters=30),
            m.ExponentialLR(o, gamma=0.98), m.StepLR(o, 20)], milestones=[30, 110]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=25), m.ExponentialLR(o, gamma=0.99)]),
    "ReduceLROnPlateau": lambda m, o: m.ReduceLROnPlateau(o, patience=3, cooldown=2,
                                                          factor=0.5, min_lr=[1e-3, 1e-4]),
    "ReduceLROnPlateau-max-abs": lambda m, o: m.ReduceLROnPlateau(
        o, mode="max", threshold_mode="abs", threshold=0.01, patience=2, min_lr=1e-3,
        eps=1e-5),
    "SWALR-cos": lambda m, o: _swa_from(m).SWALR(o, swa_lr=0.02, anneal_epochs=15),
    "SWALR-linear": lambda m, o: _swa_from(m).SWALR(o, swa_lr=[0.02, 0.01], anneal_epochs=0,
                                                    anneal_strategy="linear"),
}


def _swa_from(m):
    return _swa(torch if m.__name__.startswith("torch") else glasstorch)


def _is_plateau(s):
    return s.__class__.__name__ == "ReduceLROnPlateau"


def _sequence(lib, key, restore_at=100, steps=200, kind="sgd"):
    m = _sched_mod(lib)
    opt = _opt(lib, "adam" if "exp_range" in key else kind)
    sched = S[key](m, opt)
    out = []
    for i in range(steps):
        if i == restore_at:
            osd = copy.deepcopy(opt.state_dict())
            ssd = copy.deepcopy(sched.state_dict())
            opt = _opt(lib, "adam" if "exp_range" in key else kind)
            sched = S[key](m, opt)
            opt.load_state_dict(osd)
            sched.load_state_dict(ssd)
        opt.step()
        if _is_plateau(sched):
            sched.step(_metric(i))
        else:
            sched.step()
        mom = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        out.append((list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups], mom))
    return out


@pytest.mark.parametrize("key", list(S))
@pytest.mark.parametrize("restore_at", [None, 100])
def test_sequence_matches_torch(key, restore_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _sequence(torch, key, restore_at)
        g = _sequence(glasstorch, key, restore_at)
    for i, (a, b) in enumerate(zip(t, g)):
        np.testing.assert_allclose(np.array(b[:2], float), np.array(a[:2], float), rtol=1e-12,
                                   atol=0, err_msg=f"step {i}")
        assert b[2] == pytest.approx(a[2], rel=1e-12), i


@pytest.mark.parametrize("key", ["StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
                                 "CosineAnnealingLR", "ConstantLR", "PolynomialLR",
                                 "CosineAnnealingWarmRestarts"])
def test_explicit_epoch_closed_form(key):
    res = []
    for lib in LIBS:
        m = _sched_mod(lib)
        opt = _opt(lib)
        s = S[key](m, opt)
        seq = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for e in [3, 7, 7, 40, 41, 90, 12]:
                opt.step()
                s.step(e)
                seq.append(s.get_last_lr())
        res.append((seq, sorted({str(x.message)[:40] for x in w})))
    assert res[1][1] == res[0][1]  # the same deprecation warnings (or none)
    res = [r[0] for r in res]
    np.testing.assert_allclose(np.array(res[1]), np.array(res[0]), rtol=1e-12)


def test_last_epoch_resume():
    res = []
    for lib in LIBS:
        m = _sched_mod(lib)
        opt = _opt(lib)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"]
        s = m.CosineAnnealingLR(opt, T_max=50, last_epoch=10)
        seq = [s.get_last_lr()]
        for _ in range(20):
            opt.step()
            s.step()
            seq.append(s.get_last_lr())
        res.append(seq)
        with pytest.raises(KeyError):
            m.StepLR(_opt(lib), 3, last_epoch=5)
    np.testing.assert_allclose(np.array(res[1]), np.array(res[0]), rtol=1e-12)


def test_step_order_warning():
    for lib in LIBS:
        m = _sched_mod(lib)
        opt = _opt(lib)
        s = m.StepLR(opt, 3)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            s.step()
        opt = _opt(lib)
        s = m.StepLR(opt, 3)
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            s.step()
        with pytest.warns(UserWarning, match="get_last_lr"):
            s.get_lr()


def test_state_dict_keys_match_torch():
    for key in ["StepLR", "CyclicLR-triangular", "OneCycleLR-cos", "SequentialLR",
                "ReduceLROnPlateau", "LambdaLR", "SWALR-cos"]:
        keys = []
        for lib in LIBS:
            sd = S[key](_sched_mod(lib), _opt(lib)).state_dict()
            keys.append(sorted(sd))
        assert keys[0] == keys[1], key


@pytest.mark.parametrize("make", [
    lambda m, o: m.StepLR(object(), 3),
    lambda m, o: m.ConstantLR(o, factor=1.5),
    lambda m, o: m.LinearLR(o, start_factor=0),
    lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
    lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.ReduceLROnPlateau(o, mode="middle"),
    lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="bogus"),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=2),
    lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="x"),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2), m.ReduceLROnPlateau(o)], milestones=[3]),
    lambda m, o: m.ChainedScheduler([]),
])
def test_scheduler_errors(make):
    excs = []
    for lib in LIBS:
        with pytest.raises(Exception) as e:
            make(_sched_mod(lib), _opt(lib))
        excs.append(type(e.value))
    assert excs[0] is excs[1]


def test_onecycle_overrun_and_cyclic_requires_momentum():
    for lib in LIBS:
        m = _sched_mod(lib)
        opt = _opt(lib)
        s = m.OneCycleLR(opt, max_lr=0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            s.step()
        with pytest.raises(ValueError, match="Tried to step"):
            s.step()
        o2 = lib.optim.Adagrad([lib.zeros(2, requires_grad=True)])
        with pytest.raises(ValueError, match="momentum"):
            m.CyclicLR(o2, 0.01, 0.1)


def test_tensor_lr_is_updated_in_place():
    res = []
    for lib in LIBS:
        p = lib.zeros(2, requires_grad=True)
        lr = lib.tensor(0.1)
        opt = lib.optim.Adam([p], lr=lr)
        s = _sched_mod(lib).StepLR(opt, 2, gamma=0.5)
        seq = []
        for _ in range(6):
            opt.step()
            s.step()
            seq.append(float(opt.param_groups[0]["lr"]))
        assert opt.param_groups[0]["lr"] is lr
        res.append(seq)
    np.testing.assert_allclose(res[1], res[0], rtol=1e-7)
