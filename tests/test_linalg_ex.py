"""torch.linalg.inv_ex / cholesky_ex / solve_ex against torch: info, errors, out=, autograd."""

from __future__ import annotations

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

SINGULAR = [
    [[1.0, 2.0], [2.0, 4.0]],                           # second pivot zero
    [[0.0, 0.0], [1.0, 1.0]],                           # zero row: pivoting swaps it down
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
    [[0.0, 1.0], [1.0, 0.0]],                           # invertible, needs a row swap
    [[0.0, 0.0], [0.0, 0.0]],
]
NOT_PD = [
    [[1.0, 2.0], [2.0, 1.0]],
    [[4.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 3.0]],
    [[-1.0, 0.0], [0.0, -1.0]],
    [[float("nan"), 0.0], [0.0, 1.0]],
    [[4.0, 2.0], [2.0, 5.0]],                           # positive-definite
]


def _np(t):
    return t.detach().numpy()


def _same(ours, theirs, equal_nan=True):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6, atol=1e-6, equal_nan=equal_nan)


@pytest.mark.parametrize("m", SINGULAR)
def test_inv_ex_info_and_values(m):
    ours, theirs = gt.linalg.inv_ex(gt.tensor(m)), torch.linalg.inv_ex(torch.tensor(m))
    _same(ours.info, theirs.info)
    _same(ours.inverse, theirs.inverse)  # LAPACK's inf/nan pattern for a failed solve too
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_inv_ex"
    assert ours._fields == ("inverse", "info")


def test_inv_ex_batched_and_errors():
    batch = [np.eye(2), np.array(SINGULAR[0]), np.zeros((2, 2))]
    ours = gt.linalg.inv_ex(gt.tensor(np.stack(batch)))
    theirs = torch.linalg.inv_ex(torch.tensor(np.stack(batch)))
    _same(ours.info, theirs.info)
    assert ours.info.tolist() == [0, 2, 1]
    for lib in (gt, torch):
        with pytest.raises(lib.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal "
                                                         r"element 2 is zero"):
            lib.linalg.inv_ex(lib.tensor(np.stack(batch)), check_errors=True)
        with pytest.raises(lib.linalg.LinAlgError, match="diagonal element 2 is zero"):
            lib.linalg.inv(lib.tensor(SINGULAR[0]))  # the plain inverse names it too
        with pytest.raises(RuntimeError, match="Expected a floating point"):
            lib.linalg.inv_ex(lib.ones(2, 2, dtype=lib.int64))
    e = gt.linalg.inv_ex(gt.zeros(0, 0))
    assert e.inverse.shape == (0, 0) and e.info.dtype is gt.int32 and e.info.item() == 0


@pytest.mark.parametrize("m", NOT_PD)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_info_and_partial_factor(m, upper):
    ours = gt.linalg.cholesky_ex(gt.tensor(m), upper=upper)
    theirs = torch.linalg.cholesky_ex(torch.tensor(m), upper=upper)
    _same(ours.info, theirs.info)
    _same(ours.L, theirs.L)
    assert ours._fields == ("L", "info") and theirs.L is theirs[0]


def test_cholesky_ex_reads_one_triangle_and_raises_on_request():
    a = np.array([[4.0, 9.0], [1.0, 3.0]])  # lower and upper triangles disagree
    for upper in (False, True):
        _same(gt.linalg.cholesky_ex(gt.tensor(a), upper=upper).L,
              torch.linalg.cholesky_ex(torch.tensor(a), upper=upper).L)
    batch = np.stack([np.eye(3), -np.eye(3)])
    for lib in (gt, torch):
        with pytest.raises(lib.linalg.LinAlgError, match=r"\(Batch element 1\): .*leading "
                                                         r"minor of order 1"):
            lib.linalg.cholesky_ex(lib.tensor(batch), check_errors=True)


def test_solve_ex_info_values_and_layouts():
    A = np.stack([np.eye(2), np.array(SINGULAR[1])])
    for b_shape, kw in [((2,), {}), ((2, 3), {}), ((3, 2), {"left": False}),
                        ((4, 1, 2, 1), {})]:
        b = np.arange(np.prod(b_shape), dtype=np.float64).reshape(b_shape) + 1
        ours = gt.linalg.solve_ex(gt.tensor(A), gt.tensor(b), **kw)
        theirs = torch.linalg.solve_ex(torch.tensor(A), torch.tensor(b), **kw)
        _same(ours.info, theirs.info)
        _same(ours.result, theirs.result)
    for lib in (gt, torch):
        with pytest.raises(lib.linalg.LinAlgError, match="solver failed"):
            lib.linalg.solve_ex(lib.tensor(A), lib.ones(2, dtype=lib.float64),
                                check_errors=True)


def test_out_and_autograd_as_the_plain_functions():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for lib in (gt, torch):
        o1, o2 = lib.empty(2, 2, dtype=lib.float64), lib.empty((), dtype=lib.int32)
        r = lib.linalg.inv_ex(lib.tensor(a), out=(o1, o2))
        assert r.inverse is o1 and r.info is o2
        with pytest.raises(RuntimeError, match="dtype int"):
            lib.linalg.inv_ex(lib.tensor(a), out=(o1, lib.empty((), dtype=lib.int64)))
    grads, names = [], []
    for lib in (gt, torch):
        A = lib.tensor(a, requires_grad=True)
        b = lib.tensor([1.0, -2.0], dtype=lib.float64)
        outs = [lib.linalg.inv_ex(A).inverse, lib.linalg.cholesky_ex(A).L,
                lib.linalg.solve_ex(A, b).result]
        names.append([type(o.grad_fn).__name__ for o in outs])
        assert not lib.linalg.inv_ex(A).info.requires_grad
        (g,) = lib.autograd.grad(sum(o.sum() for o in outs), A)
        grads.append(g)
    assert names[0] == names[1]
    _same(grads[0], grads[1])
