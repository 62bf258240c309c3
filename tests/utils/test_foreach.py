"""``_foreach_*`` beyond the op table: the exported names, return conventions, out-of-place
gradients against torch, and glasstorch.utils._foreach_utils."""

import numpy as np
import pytest

import glasstorch
from glasstorch.utils import _foreach_utils as gfu

torch = pytest.importorskip("torch")
from torch.utils import _foreach_utils as tfu  # noqa: E402

# glasstorch has no lgamma operator to apply to each tensor
_MISSING = {"_foreach_lgamma", "_foreach_lgamma_"}


def test_names_match_torch():
    theirs = {n for n in dir(torch) if n.startswith("_foreach_")}
    ours = {n for n in dir(glasstorch) if n.startswith("_foreach_")}
    assert ours == theirs - _MISSING
    for n in ours:
        assert getattr(glasstorch, n).__doc__


def test_return_conventions():
    for lib in (glasstorch, torch):
        xs = [lib.ones(2), lib.ones(3)]
        out = lib._foreach_add(xs, 1)
        assert type(out) is tuple and out[0] is not xs[0]
        assert lib._foreach_add_(xs, 1) is xs
        assert xs[0].tolist() == [2.0, 2.0]
        as_tuple = tuple(xs)
        assert lib._foreach_mul_(as_tuple, 2) is as_tuple
        assert lib._foreach_zero_(xs) is xs and xs[1].tolist() == [0.0] * 3
        assert lib._foreach_copy_(xs, [lib.ones(2), lib.full((3,), 4.0)]) is xs
        assert xs[1].tolist() == [4.0] * 3
        assert type(lib._foreach_norm(xs)) is tuple


_RNG = np.random.default_rng(7)
_A = [_RNG.uniform(0.5, 2, s) for s in ((3,), (2, 3), ())]
_B = [_RNG.uniform(0.5, 2, s) for s in ((3,), (3,), ())]
_C = [_RNG.uniform(0.5, 2, s) for s in ((3,), (2, 3), ())]

# (name, fn(lib, xs, ys, zs)) for out-of-place ops with torch derivatives. torch's backward
# fails for a 0-dim ``other`` requiring grad beside several tensors ("inconsistent range for
# TensorList output") and for addcdiv over 0-dim tensors (select() on a 0-dim tensor), so
# those cases use shorter lists.
CASES = [
    ("add_list_alpha", lambda lib, x, y, z: lib._foreach_add(x, y, alpha=-1.5)),
    ("add_tensor", lambda lib, x, y, z: lib._foreach_add(x, y[2].detach())),
    ("add_tensor_grad", lambda lib, x, y, z: lib._foreach_add(x[:1], y[2])),
    ("sub_scalarlist", lambda lib, x, y, z: lib._foreach_sub(x, [1, 2.5, -1])),
    ("mul_list", lambda lib, x, y, z: lib._foreach_mul(x, y)),
    ("mul_tensor", lambda lib, x, y, z: lib._foreach_mul(x, y[2].detach())),
    ("mul_tensor_grad", lambda lib, x, y, z: lib._foreach_mul(x[1:2], y[2])),
    ("div_list", lambda lib, x, y, z: lib._foreach_div(x, y)),
    ("div_tensor", lambda lib, x, y, z: lib._foreach_div(x, y[2].detach())),
    ("div_tensor_grad", lambda lib, x, y, z: lib._foreach_div(x[:1], y[2])),
    ("pow_scalar", lambda lib, x, y, z: lib._foreach_pow(x, 2.5)),
    ("pow_list", lambda lib, x, y, z: lib._foreach_pow(x, y)),
    ("pow_scalar_base", lambda lib, x, y, z: lib._foreach_pow(1.5, x)),
    ("maximum_list", lambda lib, x, y, z: lib._foreach_maximum(x, y)),
    ("clamp_max_scalar", lambda lib, x, y, z: lib._foreach_clamp_max(x, 1.2)),
    ("addcmul", lambda lib, x, y, z: lib._foreach_addcmul(x, y, z, 0.5)),
    ("addcdiv_scalarlist", lambda lib, x, y, z: lib._foreach_addcdiv(x[:2], y[:2], z[:2],
                                                                     [1, -2])),
    ("lerp_list", lambda lib, x, y, z: lib._foreach_lerp(x, y, z)),
    ("lerp_scalar", lambda lib, x, y, z: lib._foreach_lerp(x, z, 0.3)),
    ("norm", lambda lib, x, y, z: lib._foreach_norm(x)),
    ("norm_1", lambda lib, x, y, z: lib._foreach_norm(x, 1)),
    ("max", lambda lib, x, y, z: lib._foreach_max(x)),
    ("exp", lambda lib, x, y, z: lib._foreach_exp(x)),
    ("sqrt", lambda lib, x, y, z: lib._foreach_sqrt(x)),
    ("sigmoid", lambda lib, x, y, z: lib._foreach_sigmoid(x)),
    ("neg", lambda lib, x, y, z: lib._foreach_neg(x)),
    ("clone", lambda lib, x, y, z: lib._foreach_clone(x)),
    ("mm", lambda lib, x, y, z: lib._foreach_mm([x[1]], [z[1].T])),
]


def _leaves(lib, arrays):
    return [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_out_of_place_gradients_match_torch(name, fn):
    grads = {}
    for lib in (glasstorch, torch):
        leaves = [_leaves(lib, arrs) for arrs in (_A, _B, _C)]
        out = fn(lib, *leaves)
        assert type(out) is tuple
        weights = [lib.from_numpy(np.linspace(-1, 2, o.numel()).reshape(tuple(o.shape)))
                   for o in out]
        loss = sum((o * w).sum() for o, w in zip(out, weights))
        flat = [t for group in leaves for t in group]
        got = lib.autograd.grad(loss, flat, allow_unused=True)
        grads[lib.__name__] = ([o.detach().numpy() for o in out],
                               [None if g is None else g.numpy() for g in got])
    (g_out, g_grads), (t_out, t_grads) = grads["glasstorch"], grads["torch"]
    for a, b in zip(g_out, t_out):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    for a, b in zip(g_grads, t_grads):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_gradcheck():
    xs = _leaves(glasstorch, _A)
    ys = _leaves(glasstorch, _C)

    def f(*ts):
        a, b = list(ts[:3]), list(ts[3:])
        return glasstorch._foreach_addcdiv(glasstorch._foreach_lerp(a, b, 0.25), a, b, 0.5) + \
            glasstorch._foreach_norm(b, 3)

    assert glasstorch.autograd.gradcheck(f, tuple(xs + ys))


def test_powsum_is_differentiable():
    # torch has no derivative for _foreach_powsum; glasstorch composes |x| ** p and sums
    x = glasstorch.tensor([-2.0, 3.0, 0.5], dtype=glasstorch.float64, requires_grad=True)
    (r,) = glasstorch._foreach_powsum([x], 3)
    r.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.abs([-2.0, 3.0, 0.5]) ** 2 *
                               np.sign([-2.0, 3.0, 0.5]))


def test_group_tensors_by_device_and_dtype_matches_torch():
    def build(lib):
        a, b, c = lib.ones(2), lib.ones(3, dtype=lib.float64), lib.zeros(2)
        return [[a, b, c], [c, None, a], []], (a, b, c)

    for with_indices in (False, True):
        g_lists, g_ts = build(glasstorch)
        t_lists, _ = build(torch)
        got = gfu._group_tensors_by_device_and_dtype(g_lists, with_indices)
        want = tfu._group_tensors_by_device_and_dtype(t_lists, with_indices)
        # torch's C++ grouping returns the groups in hash order; compare by key
        assert sorted(str(k) for k in got) == sorted(str(k) for k in want)
        for (dev, dt), (lists, idx) in got.items():
            t_lists_, t_idx = want[(torch.device(str(dev)), getattr(torch, str(dt)[6:]))]
            assert idx == t_idx
            assert [[None if t is None else t.tolist() for t in tl] for tl in lists] == \
                [[None if t is None else t.tolist() for t in tl] for tl in t_lists_]
        a = g_ts[0]
        assert got[(a.device, a.dtype)][0][0][0] is a  # the same tensor objects
    a = glasstorch.ones(2)
    with pytest.raises(RuntimeError, match="supposed to be defined"):
        gfu._group_tensors_by_device_and_dtype([[a, None]])
    with pytest.raises(RuntimeError):
        gfu._group_tensors_by_device_and_dtype([[a], [a, a]])
    with pytest.raises(RuntimeError):
        gfu._group_tensors_by_device_and_dtype([])
    with pytest.raises(TypeError):
        gfu._group_tensors_by_device_and_dtype([[a], [1.0]])


def test_support_queries_match_torch():
    assert gfu._get_foreach_kernels_supported_devices() == \
        tfu._get_foreach_kernels_supported_devices()
    assert gfu._get_fused_kernels_supported_devices() == \
        tfu._get_fused_kernels_supported_devices()
    for dev in ("cpu", "cuda", "meta"):
        assert gfu._device_has_foreach_support(glasstorch.device(dev)) == \
            tfu._device_has_foreach_support(torch.device(dev))
    for lib, mod in ((glasstorch, gfu), (torch, tfu)):
        t = lib.ones(2)
        assert mod._has_foreach_support([t, None], lib.device("cpu")) is True
        # subclasses (Parameter) do not qualify, as in torch
        assert mod._has_foreach_support([lib.nn.Parameter(t)], lib.device("cpu")) is False
