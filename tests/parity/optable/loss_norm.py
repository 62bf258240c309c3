"""Loss and normalisation kernels exposed as ``torch.xxx``."""

import numpy as np

from ..harness import F32, FLOATS, INTS, E, OpInfo, S, T, make_array

RED = (0, 1, 2)  # torch.xxx entry points take the integer reduction enum


def _pair(dtype, rng, shapes=((4, 5), (3,), (), (0, 4))):
    for shape in shapes:
        yield make_array(rng, shape, dtype, -3, 3), make_array(rng, shape, dtype, 0, 1)


def _bce_logits(dtype, rng):
    for x, t in _pair(dtype, rng):
        for r in RED:
            yield S(x, t, reduction=r)
    x, t = make_array(rng, (4, 5), dtype, -3, 3), make_array(rng, (4, 5), dtype, 0, 1)
    # weights as lists: constants built in the op's function (not autograd leaves)
    w = make_array(rng, (5,), dtype, 0.1, 2).astype(np.float64).tolist()
    pw = make_array(rng, (5,), dtype, 0.1, 3).astype(np.float64).tolist()
    yield S(x, t, w, None, reduction=0)
    yield S(T(x), t, w, None, reduction=1)
    yield S(x, t, None, pw, reduction=2)
    yield S(x, E(t[:1], (4, 5)), w, pw, reduction=1)
    yield S(np.array([1000.0, -1000.0, 0.0], dtype), np.array([0.0, 1.0, 1.0], dtype))


def _bce_logits_fn(lib, x, t, w=None, pw=None, reduction=1):
    w = lib.tensor(w, dtype=x.dtype) if w is not None else None
    pw = lib.tensor(pw, dtype=x.dtype) if pw is not None else None
    return lib.binary_cross_entropy_with_logits(x, t, w, pw, reduction)


def _kl(dtype, rng):
    for x, t in _pair(dtype, rng):
        for r in RED:
            yield S(x, t, r, False)
            yield S(x, x[::-1].copy() if x.ndim else x, r, True)
    x = make_array(rng, (3, 4), dtype, -3, 0)
    yield S(T(x), E(make_array(rng, (1, 4), dtype, 0, 1), (3, 4)), 1, False)


def _poisson(dtype, rng):
    for x, t in _pair(dtype, rng):
        for r in RED:
            t4 = np.asarray(t * 4)
            yield S(x, t4, True, False, 1e-8, r)
            yield S(x, t4, True, True, 1e-8, r)
            yield S(np.asarray(np.abs(x) + 0.5), t4, False, False, 1e-8, r)


def _signs(rng, shape, dtype):
    return np.where(rng.random(shape) > 0.5, 1.0, -1.0).astype(dtype)


def _hinge(dtype, rng):
    for shape in ((4, 5), (3,), (), (0, 2)):
        x = make_array(rng, shape, dtype, -2, 2)
        for r in RED:
            yield S(x, _signs(rng, shape, dtype), 0.7, r)
    yield S(T(make_array(rng, (3, 4), dtype)), _signs(rng, (3, 4), dtype))


def _ranking(dtype, rng):
    for shape in ((4, 5), (3,), ()):
        a, b = make_array(rng, shape, dtype, -2, 2), make_array(rng, shape, dtype, -2, 2)
        for r in RED:
            yield S(a, b, _signs(rng, shape, dtype), 0.3, r)


def _cosine(dtype, rng):
    a, b = make_array(rng, (4, 5), dtype), make_array(rng, (4, 5), dtype)
    for r in RED:
        yield S(a, b, _signs(rng, (4,), dtype), 0.2, r)
    yield S(a[0], b[0], np.asarray(-1.0, dtype), 0.0, 1)
    yield S(T(a.T.copy()), b.T.copy(), _signs(rng, (5,), dtype), 0.1, 2)
    yield S(a, b[:3], _signs(rng, (4,), dtype), 0.0, 1)  # shape mismatch: error


def _triplet(dtype, rng):
    a, p, n = (make_array(rng, (4, 5), dtype) for _ in range(3))
    for r in RED:
        yield S(a, p, n, 1.0, 2, 1e-6, False, r)
    yield S(a, p, n, 0.5, 1, 1e-6, True, 1)
    yield S(T(a.T.copy()), p.T.copy(), n.T.copy(), 2.0, 3, 1e-3, False, 2)
    yield S(a[0], p[0], n[0], 1.0, 2, 1e-6, False, 1)
    yield S(a, p[0], n, 1.0, 2, 1e-6, False, 1)  # ndim mismatch: error


def _ctc(dtype, rng):
    t_len, n, c = 6, 3, 4
    lp = make_array(rng, (t_len, n, c), dtype, -2, 2)
    tg = rng.integers(1, c, (n, 4))
    for r in RED:
        yield S(lp, tg, [6, 5, 6], [4, 2, 3], 0, r)
    yield S(lp, tg - 1, [6, 6, 4], [3, 0, 2], c - 1, 1)
    yield S(lp, np.concatenate([tg[0, :2], tg[1, :3], tg[2, :1]]), [6, 5, 4], [2, 3, 1], 0, 2)
    yield S(lp[:, 0], tg[0, :3], [6], [3], 0, 0)


def _ctc_fn(lib, x, targets, il, tl, blank, reduction):
    # through log_softmax, as in use: torch's gradient assumes normalised log-probabilities
    return lib.ctc_loss(x.log_softmax(-1), targets, il, tl, blank, reduction, False)


def _stats(rng, dtype):
    """Running mean/var as Python lists: built into tensors inside the op's function, so
    they are buffers (updated in place, compared as outputs), not autograd leaves."""
    return (make_array(rng, (3,), dtype, -1, 1).astype(np.float64).tolist(),
            make_array(rng, (3,), dtype, 0.5, 2).astype(np.float64).tolist())


def _buffers(lib, x, rm, rv):
    rm = lib.tensor(rm, dtype=x.dtype) if rm is not None else None
    rv = lib.tensor(rv, dtype=x.dtype) if rv is not None else None
    return rm, rv


def _bn(dtype, rng, shapes=((4, 3), (2, 3, 2, 3))):
    for shape in shapes:
        x = make_array(rng, shape, dtype, -3, 3)
        w, b = make_array(rng, (3,), dtype), make_array(rng, (3,), dtype)
        rm, rv = _stats(rng, dtype)
        yield S(x, w, b, rm, rv, True, 0.2, 1e-5)
        yield S(x, w, b, rm, rv, False, 0.2, 1e-3)
        yield S(x, None, None, None, None, True, 0.1, 1e-5)
    x = make_array(rng, (5, 3), dtype)
    yield S(T(x.T.copy()), None, b, None, None, True, 0.1, 1e-5)


def _bn_errors(dtype, rng):
    yield from _bn(dtype, rng)
    # (torch.native_batch_norm itself crashes on these, so only batch_norm gets them)
    x = make_array(rng, (5, 3), dtype)
    yield S(x, None, None, None, None, False, 0.1, 1e-5)  # eval without stats: error
    yield S(x, make_array(rng, (4,), dtype), None, None, None, True, 0.1, 1e-5)  # bad weight


def _bn_fn(native):
    def fn(lib, x, w, b, rm, rv, training, momentum, eps):
        rm, rv = _buffers(lib, x, rm, rv)
        if native:
            out = lib.native_batch_norm(x, w, b, rm, rv, training, momentum, eps)
            return out[0], out[1].detach(), out[2].detach(), rm, rv
        return lib.batch_norm(x, w, b, rm, rv, training, momentum, eps, False), rm, rv
    return fn


def _ln(dtype, rng):
    x = make_array(rng, (2, 3, 4), dtype, -3, 3)
    yield S(x, (4,), make_array(rng, (4,), dtype), make_array(rng, (4,), dtype), 1e-5)
    yield S(x, (3, 4), make_array(rng, (3, 4), dtype), None, 1e-3)
    yield S(T(make_array(rng, (4, 5), dtype)), [5], None, None, 1e-5)
    yield S(make_array(rng, (0, 4), dtype), (4,), None, None, 1e-5)
    yield S(x, (3,), None, None, 1e-5)  # shape mismatch: error


def _native_ln_fn(lib, x, ns, w, b, eps):
    out, mean, rstd = lib.native_layer_norm(x, ns, w, b, eps)
    return out, mean.detach(), rstd.detach()


def _gn(dtype, rng):
    x = make_array(rng, (2, 6, 4), dtype, -3, 3)
    w, b = make_array(rng, (6,), dtype), make_array(rng, (6,), dtype)
    for g in (1, 2, 3, 6):
        yield S(x, g, w, b, 1e-5)
    yield S(make_array(rng, (3, 4), dtype), 2, None, None, 1e-3)
    yield S(make_array(rng, (2, 4, 2, 3), dtype), 2, w[:4].copy(), None, 1e-5)
    yield S(x, 4, None, None, 1e-5)  # channels not divisible: error


def _native_gn_fn(lib, x, groups, w, b, eps):
    n, c = x.shape[0], x.shape[1]
    out, mean, rstd = lib.native_group_norm(x, w, b, n, c, x.numel() // (n * c), groups, eps)
    return out, mean.detach(), rstd.detach()


def _in(dtype, rng):
    x = make_array(rng, (2, 3, 5), dtype, -3, 3)
    w, b = make_array(rng, (3,), dtype), make_array(rng, (3,), dtype)
    rm, rv = _stats(rng, dtype)
    yield S(x, w, b, rm, rv, True, 0.1, 1e-5)
    yield S(x, None, None, None, None, True, 0.1, 1e-5)
    yield S(make_array(rng, (2, 3, 2, 2), dtype), w, None, rm, rv, False, 0.1, 1e-5)


def _in_fn(lib, x, w, b, rm, rv, use_input_stats, momentum, eps):
    rm, rv = _buffers(lib, x, rm, rv)
    return lib.instance_norm(x, w, b, rm, rv, use_input_stats, momentum, eps, False), rm, rv


def _rms(dtype, rng):
    x = make_array(rng, (2, 3, 4), dtype, -3, 3)
    yield S(x, (4,), make_array(rng, (4,), dtype), None)
    yield S(x, [3, 4], None, 1e-3)
    yield S(T(make_array(rng, (4, 5), dtype)), (5,), None, None)
    yield S(x, (3,), None, None)  # shape mismatch: error


def _int_input(dtype, rng):
    yield S(make_array(rng, (4, 3), dtype), None, None, None, None, True, 0.1, 1e-5)


_LOW = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}

OPS = [
    OpInfo("binary_cross_entropy_with_logits", _bce_logits_fn, _bce_logits, dtypes=FLOATS,
           covers=("nn.functional.binary_cross_entropy_with_logits",), grad=True, tol=_LOW),
    OpInfo("kl_div", lambda lib, *a: lib.kl_div(*a[:-1], log_target=a[-1]), _kl, dtypes=F32,
           covers=("nn.functional.kl_div",), grad=True),
    OpInfo("poisson_nll_loss", lambda lib, *a: lib.poisson_nll_loss(*a), _poisson, dtypes=F32,
           covers=("nn.functional.poisson_nll_loss",), grad=True),
    OpInfo("hinge_embedding_loss", lambda lib, *a: lib.hinge_embedding_loss(*a), _hinge,
           dtypes=F32, covers=("nn.functional.hinge_embedding_loss",), grad=True),
    OpInfo("margin_ranking_loss", lambda lib, *a: lib.margin_ranking_loss(*a), _ranking,
           dtypes=F32, covers=("nn.functional.margin_ranking_loss",), grad=True),
    OpInfo("cosine_embedding_loss", lambda lib, *a: lib.cosine_embedding_loss(*a), _cosine,
           dtypes=F32, covers=("nn.functional.cosine_embedding_loss",), grad=True),
    OpInfo("triplet_margin_loss", lambda lib, *a: lib.triplet_margin_loss(*a), _triplet,
           dtypes=F32, covers=("nn.functional.triplet_margin_loss",), grad=True),
    OpInfo("ctc_loss", _ctc_fn, _ctc, dtypes=F32, covers=("nn.functional.ctc_loss",),
           grad=True, tol={"float32": (1e-4, 1e-5)}),
    OpInfo("batch_norm", _bn_fn(False), _bn_errors, dtypes=FLOATS,
           covers=("nn.functional.batch_norm",), grad=True, tol=_LOW),
    OpInfo("native_batch_norm", _bn_fn(True), lambda dt, rng: _bn(dt, rng, ((4, 3, 5),)),
           dtypes=F32, grad=True),
    OpInfo("batch_norm_int", _bn_fn(False), _int_input, dtypes=INTS),
    OpInfo("layer_norm", lambda lib, *a: lib.layer_norm(*a), _ln, dtypes=FLOATS,
           covers=("nn.functional.layer_norm",), grad=True, tol=_LOW),
    OpInfo("native_layer_norm", _native_ln_fn, _ln, dtypes=F32, grad=True),
    OpInfo("group_norm", lambda lib, *a: lib.group_norm(*a), _gn, dtypes=FLOATS,
           covers=("nn.functional.group_norm",), grad=True, tol=_LOW),
    OpInfo("native_group_norm", _native_gn_fn, _gn, dtypes=F32, grad=True),
    OpInfo("instance_norm", _in_fn, _in, dtypes=F32, covers=("nn.functional.instance_norm",),
           grad=True),
    OpInfo("rms_norm", lambda lib, *a: lib.rms_norm(*a), _rms, dtypes=FLOATS,
           covers=("nn.functional.rms_norm",), grad=True, tol=_LOW),
]
