"""Sparse COO/CSR tensors against torch: construction, conversion, products, sums, grads."""

import warnings

import numpy as np
import pytest
import torch

import glasstorch as gt
import glasstorch.sparse  # noqa: F401 - makes gt.sparse available

warnings.filterwarnings("ignore", message="Sparse invariant checks")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]
VAL = [3.0, 4.0, 5.0, 1.0]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _same(g, t, tol=1e-5):
    assert g.dtype.__repr__() == t.dtype.__repr__()
    assert tuple(g.shape) == tuple(t.shape)
    if t.layout == torch.sparse_coo:
        assert g.layout is gt.sparse_coo and g.is_sparse
        g, t = g.to_dense(), t.to_dense()
    np.testing.assert_allclose(_np(g), _np(t), rtol=tol, atol=tol)


def _both(fn):
    return fn(gt), fn(torch)


def _coo(lib, idx=IDX, val=VAL, size=(2, 3), **kw):
    return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(val), size, **kw)


def test_construct_metadata_and_repr():
    g, t = _both(_coo)
    assert g.shape == t.shape and g.ndim == 2 and g.numel() == 6
    assert (g.sparse_dim(), g.dense_dim(), g._nnz()) == (2, 0, 4)
    assert not g.is_coalesced() and g.layout is gt.sparse_coo
    assert repr(g) == repr(t)
    c = g.coalesce()
    assert repr(c) == repr(t.coalesce())
    assert c.is_coalesced()
    np.testing.assert_array_equal(c.indices().numpy(), t.coalesce().indices().numpy())
    _same(c.values(), t.coalesce().values())
    e = _both(lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 2)))
    assert repr(e[0]) == repr(e[1])
    d = _both(lambda L: _coo(L, size=(2, 3), dtype=L.float64))
    assert repr(d[0]) == repr(d[1])
    n = _both(lambda L: L.sparse_coo_tensor(IDX, [1, 2, 3, 4]))  # inferred size, int64
    assert repr(n[0]) == repr(n[1])
    h = _both(lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.ones(4, 2), (2, 3, 2)))
    assert repr(h[0]) == repr(h[1]) and h[0].dense_dim() == 1
    _same(*h)


@pytest.mark.parametrize("make", [
    lambda L: _coo(L, val=VAL[:3]),
    lambda L: _coo(L, size=(2,)),
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.ones(4, 1), (2, 3)),
    lambda L: _coo(L, idx=IDX[0]),
    lambda L: _coo(L, idx=[[0, 1, 1, 0], [2, 0, 2, 3]], check_invariants=True),
    lambda L: _coo(L, idx=[[0, -1, 1, 0], [2, 0, 2, 2]], check_invariants=True),
    lambda L: L.ones(2, 2).coalesce(),
    lambda L: L.ones(2, 2).indices(),
    lambda L: L.ones(2, 2).values(),
    lambda L: L.ones(2, 2).crow_indices(),
    lambda L: L.ones(2, 2)._nnz(),
    lambda L: _coo(L).indices(),
    lambda L: _coo(L).values(),
    lambda L: _coo(L).data_ptr(),
    lambda L: _coo(L).crow_indices(),
    lambda L: L.sparse.mm(_coo(L), L.ones(2, 2)),
    lambda L: L.sparse.mm(_coo(L), L.ones(3, 2, dtype=L.float64)),
    lambda L: L.sparse.mm(_coo(L), L.ones(3)),
    lambda L: _coo(L) + L.ones(2, 3),
    lambda L: L.sparse.sum(_coo(L), 2),
])
def test_errors(make):
    with pytest.raises(Exception) as te:
        make(torch)
    with pytest.raises(te.type):
        make(gt)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
def test_to_dense_coalesce_to_sparse(dt):
    g, t = _both(lambda L: _coo(L, dtype=getattr(L, dt)))
    _same(g.to_dense(), t.to_dense())
    _same(g.coalesce().to_dense(), t.coalesce().to_dense())
    _same(g.t().to_dense(), t.t().to_dense())
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 5, 2)) * (rng.random((4, 5, 1)) < 0.4)).astype(dt)
    for sd in (None, 1, 2):
        gs, ts = _both(lambda L: L.tensor(x).to_sparse() if sd is None else
                       L.tensor(x).to_sparse(sd))
        assert repr(gs) == repr(ts)
    _same(gt.tensor(x).to_sparse_coo(), torch.tensor(x).to_sparse_coo())
    _same(gt.tensor(x).to_dense(), torch.tensor(x).to_dense())


def test_arithmetic():
    for fn in (lambda L: _coo(L) * 2, lambda L: 0.5 * _coo(L), lambda L: -_coo(L),
               lambda L: _coo(L) + _coo(L, idx=[[1, 0, 0, 0], [1, 1, 1, 0]]),
               lambda L: L.ones(2, 3) + _coo(L), lambda L: _coo(L) / 4,
               lambda L: _coo(L).double(), lambda L: _coo(L).to(L.float64)):
        _same(*_both(fn))


def test_softmax_hybrid():
    for fn in (lambda L: L.sparse.softmax(L.sparse_coo_tensor(L.tensor(IDX), L.arange(8.0)
                                                              .reshape(4, 2), (2, 3, 2)), d)
               for d in (0, 1, 2)):
        _same(*_both(fn))
    _same(*_both(lambda L: L.sparse.log_softmax(_coo(L), -1)))
    r = _both(lambda L: L.sparse.softmax(_coo(L), 1))
    assert repr(r[0]) == repr(r[1])


def test_csr():
    g, t = _both(lambda L: _coo(L).coalesce().to_sparse_csr())
    assert repr(g) == repr(t) and g.layout is not gt.sparse_coo and not g.is_sparse
    assert g.is_sparse_csr and not gt.ones(2).is_sparse_csr and not _coo(gt).is_sparse_csr
    for name in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(getattr(g, name)().numpy(), getattr(t, name)().numpy())
    _same(g.to_dense(), t.to_dense())
    _same(g.to_sparse_coo(), t.to_sparse_coo())
    x = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, 3]], np.float32)
    g2, t2 = gt.tensor(x).to_sparse_csr(), torch.tensor(x).to_sparse_csr()
    assert repr(g2) == repr(t2)
    d = np.arange(6, dtype=np.float32).reshape(3, 2)
    _same(g2 @ gt.tensor(d), t2 @ torch.tensor(d))
    m = _both(lambda L: L.sparse_csr_tensor(L.tensor([0, 1, 3]), L.tensor([2, 0, 2]),
                                            L.tensor([1., 2, 3]), (2, 3)))
    assert repr(m[0]) == repr(m[1])


def _grad_case(lib, fn, seed=0):
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((3, 2)).astype(np.float32)
    v = lib.tensor(VAL, requires_grad=True)
    D = lib.tensor(d, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (2, 3))
    out = fn(lib, s, D)
    if out.layout != lib.strided:
        out = out.to_dense()
    (out * lib.linspace(-1, 2, out.numel()).reshape(out.shape)).sum().backward()
    return out, v.grad, D.grad


@pytest.mark.parametrize("fn", [
    lambda L, s, D: L.sparse.mm(s, D),
    lambda L, s, D: L.spmm(s, D) if L is gt else L.mm(s, D),
    lambda L, s, D: s @ D,
    lambda L, s, D: D @ D.t()[:, :2] @ s,
    lambda L, s, D: s.to_dense(),
    lambda L, s, D: s.coalesce().to_dense() * 2,
    lambda L, s, D: L.sparse.sum(s) * D.sum(),
    lambda L, s, D: L.sparse.sum(s, 0),
    lambda L, s, D: L.sparse.sum(s, dim=1).to_dense(),
    lambda L, s, D: L.sparse.sum(s, (0, 1)),
    lambda L, s, D: L.sparse.addmm(D.t()[:, :1].t().expand(2, 2).t()[:2], s, D, beta=0.5,
                                   alpha=2.0),
    lambda L, s, D: (s * 3).coalesce().values(),
    lambda L, s, D: L.sparse.softmax(s, 1),
    lambda L, s, D: L.sparse.softmax(s * 2, 0),
    # dim=1, not -1: torch 2.13's sparse softmax backward mishandles negative dims
    lambda L, s, D: L.sparse.log_softmax(s, 1),
    lambda L, s, D: L.sparse.log_softmax(s.coalesce(), 0, dtype=L.float64).to_dense().float(),
])
def test_grads(fn):
    go, gv, gd = _grad_case(gt, fn)
    to, tv, td = _grad_case(torch, fn)
    _same(go, to)
    _same(gv, tv)
    assert (gd is None) == (td is None)
    if td is not None:
        _same(gd, td)
    g = gt.tensor(VAL).requires_grad_()
    s = gt.sparse_coo_tensor(gt.tensor(IDX), g, (2, 3))
    assert type(s.grad_fn).__name__ == "SparseCooTensorWithDimsAndTensorsBackward0"


def test_sparse_leaf_grads():
    def run(L, sparse_mm):
        s = _coo(L).requires_grad_()
        D = L.arange(6.0).reshape(3, 2)
        (L.sparse.mm(s, D) if sparse_mm else L.mm(s, D) if L is torch else L.spmm(s, D)) \
            .sum().backward()
        return s.grad
    for sparse_mm in (True, False):
        g, t = run(gt, sparse_mm), run(torch, sparse_mm)
        assert g.layout is (gt.sparse_coo if t.layout == torch.sparse_coo else gt.strided)
        _same(g, t)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sparse_leaf_grads_accumulate_over_backward_calls():
    def run(L):
        s = _coo(L).requires_grad_()
        D = L.arange(6.0).reshape(3, 2)
        for _ in range(3):
            L.sparse.mm(s, D).sum().backward()
        dense = L.ones(3, 3, requires_grad=True)  # dense leaf, dense grads, as before
        for _ in range(2):
            (dense * 2).sum().backward()
        return s.grad, dense.grad
    (g, gd), (t, td) = run(gt), run(torch)
    assert g.layout is gt.sparse_coo and t.layout == torch.sparse_coo
    _same(g, t)
    _same(gd, td)


def _gcn_losses(lib, steps=5):
    rng = np.random.default_rng(0)
    n, f, h, c = 12, 6, 8, 3
    edges = rng.integers(0, n, size=(2, 30))
    edges = np.concatenate([edges, edges[::-1], np.tile(np.arange(n), (2, 1))], axis=1)
    a = np.zeros((n, n), np.float32)
    a[edges[0], edges[1]] = 1
    dinv = 1 / np.sqrt(a.sum(1))
    rows, cols = np.nonzero(a)
    vals = (dinv[rows] * a[rows, cols] * dinv[cols]).astype(np.float32)
    adj = lib.sparse_coo_tensor(lib.tensor(np.stack([rows, cols])), lib.tensor(vals), (n, n))
    x = lib.tensor(rng.standard_normal((n, f)).astype(np.float32))
    y = lib.tensor(rng.integers(0, c, n))
    w1 = lib.nn.Parameter(lib.tensor(rng.standard_normal((f, h)).astype(np.float32) * 0.3))
    w2 = lib.nn.Parameter(lib.tensor(rng.standard_normal((h, c)).astype(np.float32) * 0.3))
    losses = []
    for _ in range(steps):
        w1.grad = w2.grad = None
        hid = lib.relu(lib.sparse.mm(adj, x @ w1))
        out = adj @ (hid @ w2)
        loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        with lib.no_grad():  # plain SGD (torch.optim's first step is slow to import)
            w1 -= 0.5 * w1.grad
            w2 -= 0.5 * w2.grad
        losses.append(loss.item())
    return losses


def test_gcn_trains_like_torch():
    g, t = _gcn_losses(gt), _gcn_losses(torch)
    np.testing.assert_allclose(g, t, rtol=1e-4)
    assert g[-1] < g[0]


@pytest.mark.parametrize("how", ["transpose", "T", "mT", "mH", "T3"])
def test_coo_transposes_stay_sparse_with_torchs_values_and_gradients(how):
    # they used to return dense zeros
    def run(L):
        if how == "T3":
            s = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0], [2, 1]]), L.tensor([1., 2.]),
                                    (2, 2, 3))
            return s.T.layout, tuple(s.T.shape), s.T.to_dense().tolist(), None
        s = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([1., 2.]), (2, 3),
                                requires_grad=True)
        r = s.transpose(0, 1) if how == "transpose" else getattr(s, how)
        (r.to_dense() * L.arange(6.).reshape(3, 2)).sum().backward()
        return r.layout, tuple(r.shape), r.to_dense().tolist(), s.grad.to_dense().tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = run(gt), run(torch)
    assert str(mine[0]) == str(theirs[0]) and mine[1:] == theirs[1:]


def test_coo_transpose_of_dense_dims_is_refused_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for L in (gt, torch):
            s = L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(2, 3), (2, 3))
            with pytest.raises(RuntimeError, match="transposed dimensions must be sparse"):
                s.transpose(0, 1)
