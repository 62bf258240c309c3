"""jvp and vmap over the parity op table, compared with torch.func: for each differentiable
op, its first float64 sample with plain array inputs, differentiated by ``func.jvp`` with a
random tangent and mapped by ``vmap`` over a batch of two perturbed copies.

The suite checks every 8th op; ``GLASSTORCH_FUNC_OPTABLE=1`` checks them all.
"""

import os

import numpy as np
import pytest

import glasstorch
from tests.parity.harness import _is_float_array, to_lib, to_numpy
from tests.parity.optable import all_ops

torch = pytest.importorskip("torch")

_STEP = 1 if os.environ.get("GLASSTORCH_FUNC_OPTABLE") else 8
OPS = [o for o in all_ops() if o.grad and "float64" in o.dtypes][::_STEP]

_SYMMETRIC = ("the op reads one triangle of a symmetric input; the random tangent is not "
              "symmetric, where torch's forward formula and the double-vjp of the symmetrised "
              "backward part ways")
_NAN = "torch's forward formula gives nan where the backward (so double-vjp) gives 0"
JVP_KNOWN = {
    "embedding_pad_freq": "scale_grad_by_freq's backward is not the adjoint of the forward, "
                          "and double-vjp inherits it",
    "scatter_reduce_grad_prod_True": "torch's forward formula for 'prod' gives zero tangents "
                                     "(ours is the derivative)",
    "scatter_reduce_grad_prod_False": "torch's forward formula for 'prod' gives zero tangents "
                                      "(ours is the derivative)",
    "linalg.cholesky": _SYMMETRIC, "linalg.cholesky_upper": _SYMMETRIC,
    "linalg.cholesky_ex_grad": _SYMMETRIC, "linalg.eigh": _SYMMETRIC,
    "linalg.eig_invariants": _SYMMETRIC, "cholesky_inverse": _SYMMETRIC,
    "var_mean": _NAN, "std_mean": _NAN, "special.softmax": _NAN,
}
VMAP_KNOWN = {
    "linalg.cholesky_upper": "forward parity: on a non-symmetric input glasstorch's "
                             "cholesky(upper=True) reads the upper triangle, torch's the lower",
}


def _xfail_known(known, info):
    if info.name in known:
        pytest.xfail(known[info.name])


def _first_sample(info):
    rng = np.random.default_rng(0)
    for s in info.samples("float64", rng):
        if any(_is_float_array(a) for a in s.args):
            return s
    return None


def _restricted(info, sample, lib):
    """(f, primals): f takes the sample's float arrays and returns its float outputs."""
    where = [i for i, a in enumerate(sample.args) if _is_float_array(a)]
    fixed = [to_lib(lib, a) for a in sample.args]
    kwargs = {k: to_lib(lib, v) for k, v in sample.kwargs.items()}

    def f(*xs):
        args = list(fixed)
        for i, x in zip(where, xs):
            args[i] = x
        out = info.fn(lib, *args, **kwargs)
        flat = lib.utils._pytree.tree_leaves(out)
        return tuple(o for o in flat if isinstance(o, lib.Tensor) and o.dtype.is_floating_point)

    return f, [sample.args[i] for i in where]


def _compare(ours, theirs, name):
    assert len(ours) == len(theirs), name
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape), name
        np.testing.assert_allclose(to_numpy(o), to_numpy(t), rtol=1e-6, atol=1e-8,
                                   equal_nan=True, err_msg=name)


def _torch_or_skip(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - torch itself has no rule for this op
        pytest.skip(f"torch: {type(e).__name__}: {str(e)[:80]}")


@pytest.mark.parametrize("info", OPS, ids=lambda o: o.name)
def test_jvp_matches_torch(info):
    _xfail_known(JVP_KNOWN, info)
    sample = _first_sample(info)
    if sample is None:
        pytest.skip("no float sample")
    rng = np.random.default_rng(1)
    f_t, arrays = _restricted(info, sample, torch)
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    expected = _torch_or_skip(lambda: torch.func.jvp(
        f_t, tuple(torch.from_numpy(a.copy()) for a in arrays),
        tuple(torch.from_numpy(t) for t in tangents)))
    f_g, _ = _restricted(info, sample, glasstorch)
    out, tan = glasstorch.func.jvp(f_g, tuple(glasstorch.from_numpy(a.copy()) for a in arrays),
                                   tuple(glasstorch.from_numpy(t) for t in tangents))
    _compare(out, expected[0], info.name + " primal")
    _compare(tan, expected[1], info.name + " tangent")


@pytest.mark.parametrize("info", OPS, ids=lambda o: o.name)
def test_vmap_matches_torch(info):
    _xfail_known(VMAP_KNOWN, info)
    sample = _first_sample(info)
    if sample is None:
        pytest.skip("no float sample")
    rng = np.random.default_rng(2)
    f_t, arrays = _restricted(info, sample, torch)
    batched = [np.stack([a, a * (1 + 0.01 * rng.uniform(-1, 1, a.shape))]) for a in arrays]
    expected = _torch_or_skip(lambda: torch.vmap(f_t)(*[torch.from_numpy(b) for b in batched]))
    f_g, _ = _restricted(info, sample, glasstorch)
    _compare(glasstorch.vmap(f_g)(*[glasstorch.from_numpy(b) for b in batched]), expected,
             info.name)


def _forward_ad_tangents(lib, f, arrays, tangents):
    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        duals = [fwAD.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(t))
                 for a, t in zip(arrays, tangents)]
        outs = f(*duals)
        return [fwAD.unpack_dual(o).tangent for o in outs]


@pytest.mark.parametrize("info", OPS, ids=lambda o: o.name)
def test_forward_ad_matches_torch(info):
    """autograd.forward_ad's tangents (the generic double-vjp rule under the dual-level
    mode) against torch's forward formulas."""
    _xfail_known(JVP_KNOWN, info)
    sample = _first_sample(info)
    if sample is None:
        pytest.skip("no float sample")
    rng = np.random.default_rng(1)
    f_t, arrays = _restricted(info, sample, torch)
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    expected = _torch_or_skip(lambda: _forward_ad_tangents(torch, f_t, arrays, tangents))
    f_g, _ = _restricted(info, sample, glasstorch)
    ours = _forward_ad_tangents(glasstorch, f_g, arrays, tangents)
    assert [t is None for t in ours] == [t is None for t in expected], info.name
    _compare([t for t in ours if t is not None], [t for t in expected if t is not None],
             info.name)
