"""Normalisation layers vs torch: functionals (values, gradients of input/weight/bias,
grad_fn names, running-stat updates), double backward, modules (repr, parameters,
buffers, train/eval, momentum=None, lazy variants), dtypes and errors."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF

torch = pytest.importorskip("torch")
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

from .util import compare_module, copy_weights, to_np  # noqa: E402


def _pair(a, grad):
    t = torch.from_numpy(a.copy())
    g = glasstorch.from_numpy(a.copy())
    if grad:
        t.requires_grad_()
        g.requires_grad_()
    return t, g


def check(fname, arrays, grads, *, rtol=1e-5, atol=1e-5, seed=0, **kwargs):
    """F.<fname>(*arrays, **kwargs) in both libraries: output, grad_fn name, gradients of the
    arrays marked in ``grads``, and the arrays themselves afterwards (running stats)."""
    pairs = [_pair(a, g) if isinstance(a, np.ndarray) else (a, a)
             for a, g in zip(arrays, grads)]
    t = getattr(TF, fname)(*[p[0] for p in pairs], **kwargs)
    g = getattr(GF, fname)(*[p[1] for p in pairs], **kwargs)
    assert str(g.dtype) == str(t.dtype) and tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(to_np(g), to_np(t), rtol=rtol, atol=atol)
    for tp, gp in pairs:
        if isinstance(tp, torch.Tensor):  # running stats updated in place the same way
            np.testing.assert_allclose(to_np(gp), to_np(tp), rtol=1e-5, atol=1e-6)
    if any(grads):
        assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__
        w = np.random.default_rng(seed).standard_normal(tuple(t.shape)).astype(np.float32)
        (t * torch.from_numpy(w).to(t.dtype)).sum().backward()
        (g * glasstorch.from_numpy(w).to(g.dtype)).sum().backward()
        for (tp, gp), need in zip(pairs, grads):
            if need:
                np.testing.assert_allclose(to_np(gp.grad), to_np(tp.grad), rtol=rtol * 10,
                                           atol=atol * 10)
    return g


def rand(rng, *shape, dtype=np.float32, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_functional(dtype):
    rng = np.random.default_rng(0)
    for shape in [(4, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 3, 2)]:
        x = rand(rng, *shape, dtype=dtype) * 3 + 1
        w, b = rand(rng, 3, dtype=dtype), rand(rng, 3, dtype=dtype)
        rm, rv = rand(rng, 3, dtype=dtype), rand(rng, 3, dtype=dtype, low=0.5, high=2)
        for training in (True, False):
            check("batch_norm", [x, rm, rv, w, b], [1, 0, 0, 1, 1], training=training,
                  momentum=0.3, eps=1e-3)
            check("batch_norm", [x, rm, rv], [1, 0, 0], training=training)
        check("batch_norm", [x, None, None, w, None], [1, 0, 0, 1, 0], training=True)
    # non-contiguous input
    x = rand(rng, 5, 4).T
    check("batch_norm", [np.ascontiguousarray(x), None, None], [1, 0, 0], training=True)


def test_batch_norm_low_precision_with_float_params():
    rng = np.random.default_rng(1)
    x = rand(rng, 4, 3, 5)
    tx, gx = torch.from_numpy(x).half(), glasstorch.from_numpy(x).half()
    t = TF.batch_norm(tx, torch.zeros(3), torch.ones(3), torch.ones(3), None, True)
    g = GF.batch_norm(gx, glasstorch.zeros(3), glasstorch.ones(3), glasstorch.ones(3), None, True)
    assert str(g.dtype) == str(t.dtype) == "torch.float16"
    np.testing.assert_allclose(to_np(g), to_np(t), rtol=2e-3, atol=2e-3)
    t = TF.layer_norm(torch.from_numpy(x).bfloat16(), (5,))
    g = GF.layer_norm(glasstorch.from_numpy(x).bfloat16(), (5,))
    assert str(g.dtype) == str(t.dtype)
    np.testing.assert_allclose(to_np(g), to_np(t), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_group_instance_rms_functional(dtype):
    rng = np.random.default_rng(2)
    x = rand(rng, 2, 6, 4, 3, dtype=dtype)
    for ns in [(3,), (4, 3), (6, 4, 3)]:
        w, b = rand(rng, *ns, dtype=dtype), rand(rng, *ns, dtype=dtype)
        check("layer_norm", [x, ns, w, b], [1, 0, 1, 1], eps=1e-4)
        check("layer_norm", [x, ns], [1, 0])
        check("rms_norm", [x, ns, w], [1, 0, 1])
        check("rms_norm", [x, ns, None], [1, 0, 0], eps=1e-3)
    w6, b6 = rand(rng, 6, dtype=dtype), rand(rng, 6, dtype=dtype)
    for groups in (1, 2, 3, 6):
        check("group_norm", [x, groups, w6, b6], [1, 0, 1, 1])
        check("group_norm", [x[:, :, 0], groups], [1, 0])
    rm, rv = rand(rng, 6, dtype=dtype), rand(rng, 6, dtype=dtype, low=0.5, high=2)
    check("instance_norm", [x], [1])
    check("instance_norm", [x[..., 0], rm, rv, w6, b6], [1, 0, 0, 1, 1], momentum=0.2)
    check("instance_norm", [x, rm, rv, w6, b6], [1, 0, 0, 1, 1], use_input_stats=False)
    for size in (1, 2, 3, 5):
        check("local_response_norm", [x[..., 0], size], [1, 0], alpha=0.1, beta=0.6, k=2.0)
        check("local_response_norm", [x, size], [1, 0], rtol=1e-4)


def test_double_backward():
    rng = np.random.default_rng(3)
    x = glasstorch.from_numpy(rand(rng, 4, 3, 2, dtype=np.float64)).requires_grad_()
    w = glasstorch.from_numpy(rand(rng, 3, dtype=np.float64)).requires_grad_()
    b = glasstorch.from_numpy(rand(rng, 3, dtype=np.float64)).requires_grad_()
    w2 = glasstorch.from_numpy(rand(rng, 2, dtype=np.float64)).requires_grad_()
    rm = glasstorch.zeros(3, dtype=glasstorch.float64)
    rv = glasstorch.ones(3, dtype=glasstorch.float64)
    fns = [
        (lambda a, c, d: GF.batch_norm(a, None, None, c, d, training=True), (x, w, b)),
        (lambda a, c, d: GF.batch_norm(a, rm, rv, c, d, training=False), (x, w, b)),
        (lambda a, c: GF.layer_norm(a, (2,), c), (x, w2)),
        (lambda a, c, d: GF.group_norm(a, 3, c, d), (x, w, b)),
        (lambda a: GF.instance_norm(a), (x,)),
        (lambda a, c: GF.rms_norm(a, (2,), c), (x, w2)),
    ]
    for fn, inputs in fns:
        assert glasstorch.autograd.gradcheck(fn, inputs)
        assert glasstorch.autograd.gradgradcheck(fn, inputs)


def test_native_kernels():
    rng = np.random.default_rng(4)
    x = rand(rng, 4, 3, 5)
    t = torch.native_batch_norm(torch.from_numpy(x), None, None, None, None, True, 0.1, 1e-5)
    g = glasstorch.native_batch_norm(glasstorch.from_numpy(x), None, None, None, None, True,
                                     0.1, 1e-5)
    for a, b in zip(g, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6)
    t = torch.native_layer_norm(torch.from_numpy(x), (5,), None, None, 1e-5)
    g = glasstorch.native_layer_norm(glasstorch.from_numpy(x), (5,), None, None, 1e-5)
    for a, b in zip(g, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6)
    t = torch.native_group_norm(torch.from_numpy(x), None, None, 4, 3, 5, 3, 1e-5)
    g = glasstorch.native_group_norm(glasstorch.from_numpy(x), None, None, 4, 3, 5, 3, 1e-5)
    for a, b in zip(g, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- modules

MODULES = [
    ("BatchNorm1d", (3,), {}, (4, 3)), ("BatchNorm1d", (3,), {"momentum": None}, (4, 3, 5)),
    ("BatchNorm1d", (3,), {"affine": False}, (4, 3, 5)),
    ("BatchNorm1d", (3,), {"track_running_stats": False}, (4, 3, 5)),
    ("BatchNorm2d", (3,), {"eps": 1e-3, "momentum": 0.5, "bias": False}, (2, 3, 4, 4)),
    ("BatchNorm3d", (3,), {}, (2, 3, 2, 2, 3)),
    ("SyncBatchNorm", (3,), {}, (2, 3, 4)),
    ("LayerNorm", ((4, 5),), {}, (2, 3, 4, 5)), ("LayerNorm", (5,), {"bias": False}, (3, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False, "eps": 1e-3}, (3, 5)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)), ("GroupNorm", (4, 4), {"affine": False}, (3, 4, 2, 2)),
    ("RMSNorm", (5,), {}, (3, 4, 5)), ("RMSNorm", ([4, 5],), {"eps": 1e-4}, (3, 4, 5)),
    ("RMSNorm", (5,), {"elementwise_affine": False}, (3, 5)),
    ("LocalResponseNorm", (3,), {}, (3, 4, 5)),
    ("LocalResponseNorm", (2,), {"alpha": 0.5, "beta": 1.0, "k": 2.0}, (3, 6, 2, 5)),
    ("CrossMapLRN2d", (3,), {}, (2, 5, 3, 3)),
    ("CrossMapLRN2d", (5,), {"alpha": 0.5, "beta": 0.8, "k": 2}, (2, 7, 2, 2)),
    ("CrossMapLRN2d", (4,), {"alpha": 0.3}, (2, 3, 2, 2)),
    ("InstanceNorm1d", (4,), {}, (3, 4, 5)), ("InstanceNorm1d", (4,), {}, (4, 5)),
    ("InstanceNorm1d", (4,), {"affine": True, "track_running_stats": True}, (3, 4, 5)),
    ("InstanceNorm2d", (4,), {"affine": True}, (3, 4, 5, 2)),
    ("InstanceNorm3d", (4,), {"track_running_stats": True}, (2, 4, 2, 3, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_matches_torch(name, args, kwargs, shape):
    rng = np.random.default_rng(5)
    t = getattr(tnn, name)(*args, **kwargs)
    g = getattr(gnn, name)(*args, **kwargs)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert [n for n, _ in g.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(g.state_dict()) == list(t.state_dict())
    # default initialisation (ones / zeros / running stats) is torch's exactly
    for (n, a), (_, b) in zip(g.state_dict().items(), t.state_dict().items()):
        np.testing.assert_array_equal(to_np(a), to_np(b), err_msg=n)
    # give the affine parameters non-trivial values, then train steps and eval
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.from_numpy(rand(rng, *p.shape)))
    copy_weights(g, t)
    for _step in range(3):
        x = rand(rng, *shape) * 2 + 0.5
        compare_module(g, t, x, copy=False)
        for (n, a), (_, b) in zip(g.state_dict().items(), t.state_dict().items()):
            np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6, err_msg=n)
    t.eval()
    g.eval()
    compare_module(g, t, rand(rng, *shape), copy=False)


def test_batchnorm_running_stats_semantics():
    rng = np.random.default_rng(6)
    m = gnn.BatchNorm1d(3, momentum=None)
    xs = [rand(rng, 8, 3) * (i + 1) + i for i in range(3)]
    for x in xs:
        m(glasstorch.from_numpy(x))
    assert int(m.num_batches_tracked) == 3
    # momentum=None: cumulative average of batch means and unbiased variances
    np.testing.assert_allclose(to_np(m.running_mean), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-5)
    np.testing.assert_allclose(to_np(m.running_var), np.mean([x.var(0, ddof=1) for x in xs], 0),
                               rtol=1e-5)
    m.eval()
    x = glasstorch.from_numpy(xs[0])
    out = m(x)
    expect = (xs[0] - to_np(m.running_mean)) / np.sqrt(to_np(m.running_var) + 1e-5)
    np.testing.assert_allclose(to_np(out), expect, rtol=1e-5, atol=1e-5)
    assert int(m.num_batches_tracked) == 3  # eval does not count batches
    m.reset_running_stats()
    assert int(m.num_batches_tracked) == 0 and float(m.running_var.sum()) == 3.0


def test_lazy_and_sync_batchnorm():
    lazy_t, lazy_g = tnn.LazyBatchNorm2d(), gnn.LazyBatchNorm2d()
    assert repr(lazy_g) == repr(lazy_t)
    x = np.random.default_rng(7).standard_normal((2, 5, 3, 3)).astype(np.float32)
    lazy_t(torch.from_numpy(x))
    lazy_g(glasstorch.from_numpy(x))
    assert type(lazy_g) is gnn.BatchNorm2d
    assert repr(lazy_g) == repr(lazy_t)
    for (n, a), (_, b) in zip(lazy_g.state_dict().items(), lazy_t.state_dict().items()):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6, err_msg=n)
    li = gnn.LazyInstanceNorm1d()
    li(glasstorch.randn(2, 3, 4))
    assert type(li) is gnn.InstanceNorm1d and li.num_features == 3
    seq = gnn.Sequential(gnn.Linear(3, 3), gnn.BatchNorm1d(3)) if hasattr(gnn, "Linear") \
        else gnn.Sequential(gnn.BatchNorm1d(3))
    conv = gnn.SyncBatchNorm.convert_sync_batchnorm(seq)
    assert isinstance(conv[-1], gnn.SyncBatchNorm)
    assert conv[-1].running_mean is seq[-1].running_mean


def test_module_errors_and_warnings():
    with pytest.raises(ValueError):
        gnn.BatchNorm2d(3)(glasstorch.randn(2, 3, 4))
    with pytest.raises(ValueError):
        gnn.BatchNorm1d(3)(glasstorch.randn(1, 3))
    with pytest.raises(ValueError):
        gnn.GroupNorm(3, 4)
    with pytest.raises(ValueError):
        gnn.InstanceNorm1d(3, affine=True)(glasstorch.randn(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        gnn.InstanceNorm1d(3)(glasstorch.randn(2, 4, 5))


def _both_raise(exc, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            fn(torch, TF)
        with pytest.raises(exc):
            fn(glasstorch, GF)


def test_functional_errors_match_torch():
    cases = [
        (ValueError, lambda L, F: F.batch_norm(L.randn(1, 3), L.zeros(3), L.ones(3),
                                               training=True)),
        (RuntimeError, lambda L, F: F.batch_norm(L.randn(4, 3), L.zeros(4), L.ones(3),
                                                 training=True)),
        (RuntimeError, lambda L, F: F.batch_norm(L.randn(4, 3).double(), L.zeros(3),
                                                 L.ones(3), training=True)),
        (RuntimeError, lambda L, F: F.batch_norm(L.randn(4, 3), None, None, training=False)),
        (NotImplementedError, lambda L, F: F.batch_norm(L.ones(4, 3, dtype=L.int32), None,
                                                        None, training=True)),
        (ValueError, lambda L, F: F.batch_norm(L.randn(4, 3), None, None, training=True,
                                               eps=0.0)),
        (RuntimeError, lambda L, F: F.layer_norm(L.randn(4, 3), (4,))),
        (RuntimeError, lambda L, F: F.layer_norm(L.randn(4, 3), (3,), L.ones(3).double())),
        (RuntimeError, lambda L, F: F.layer_norm(L.randn(4, 3), (3,), L.ones(4))),
        (NotImplementedError, lambda L, F: F.layer_norm(L.ones(4, 3, dtype=L.int32), (3,))),
        (RuntimeError, lambda L, F: F.group_norm(L.randn(4, 3, 2), 2)),
        (RuntimeError, lambda L, F: F.group_norm(L.randn(3), 1)),
        (ValueError, lambda L, F: F.group_norm(L.randn(1, 2, 1), 2)),
        (ValueError, lambda L, F: F.instance_norm(L.randn(2, 3, 1))),
        (RuntimeError, lambda L, F: F.rms_norm(L.randn(4, 3), (4,))),
        (ValueError, lambda L, F: F.local_response_norm(L.randn(4, 3), 2)),
    ]
    for exc, fn in cases:
        _both_raise(exc, fn)


def test_grad_fn_names_and_state_dict_compat():
    x = np.random.default_rng(8).standard_normal((2, 5, 3, 3)).astype(np.float32)
    for name, args in [("CrossMapLRN2d", (3,)), ("BatchNorm2d", (5,)), ("GroupNorm", (5, 5)),
                       ("LayerNorm", ((3, 3),)), ("InstanceNorm2d", (5,))]:
        t = getattr(tnn, name)(*args)(torch.from_numpy(x).requires_grad_())
        g = getattr(gnn, name)(*args)(glasstorch.from_numpy(x).requires_grad_())
        assert g.grad_fn.name() == t.grad_fn.name(), name
    # a pre-0.4.0 BatchNorm checkpoint (version 1) has no num_batches_tracked: accepted
    m = gnn.BatchNorm1d(3)
    sd = m.state_dict()
    sd._metadata[""]["version"] = 1
    del sd["num_batches_tracked"]
    res = m.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys
    # ...but from a current checkpoint the key is required, as in torch
    sd = m.state_dict()
    del sd["num_batches_tracked"]
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        m.load_state_dict(sd)
    # running stats in a state_dict for an InstanceNorm that does not track them: error
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        gnn.InstanceNorm1d(3).load_state_dict({"running_mean": glasstorch.zeros(3)},
                                              strict=False)
