"""Second derivatives of the common linear-algebra ops: gradgradcheck, and
torch.autograd.grad(..., create_graph=True) compared with torch's."""

import numpy as np
import pytest
import torch

import glasstorch

CASES = {
    "mm": (lambda lib, a, b: lib.mm(a, b), [(3, 4), (4, 2)]),
    "matmul_batched": (lambda lib, a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "matmul_vec": (lambda lib, a, b: a @ b, [(4,), (2, 4, 3)]),
    "bmm": (lambda lib, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 2)]),
    "mv": (lambda lib, a, b: lib.mv(a, b), [(3, 4), (4,)]),
    "dot": (lambda lib, a, b: lib.dot(a, b), [(4,), (4,)]),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.0),
              [(2,), (3, 4), (4, 2)]),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=3.0), [(2, 3, 2), (2, 3, 4),
                                                                       (2, 4, 2)]),
    "trace": (lambda lib, a: lib.trace(a @ a), [(3, 3)]),
    "inv": (lambda lib, a: lib.linalg.inv(a), [(3, 3)]),
    "det": (lambda lib, a: lib.linalg.det(a), [(3, 3)]),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, dim=1), [(3, 4)]),
}


# decompositions: second derivatives through gradgradcheck only (symmetric inputs where the
# op reads one triangle)
DECOMP = {
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a)[1], [(3, 3)]),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(a @ a.mT), [(3, 3)]),
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a + a.mT), [(3, 3)]),
    "eigh_vectors": (lambda lib, a: lib.linalg.eigh(a + a.mT)[1].abs(), [(3, 3)]),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [(4, 3)]),
    "qr": (lambda lib, a: lib.linalg.qr(a)[1].abs(), [(4, 3)]),
    "pinv": (lambda lib, a: lib.linalg.pinv(a), [(4, 3)]),
    "cross": (lambda lib, a, b: lib.linalg.cross(a, b), [(3, 3), (3, 3)]),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [(4, 3), (2, 3)]),
}


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.uniform(-1, 1, size=s)
        if len(s) == 2 and s[0] == s[1]:
            a = a + 3 * np.eye(s[0])  # invertible, well conditioned
        out.append(a)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    fn, shapes = CASES[name]
    leaves = [glasstorch.tensor(a, requires_grad=True) for a in _inputs(shapes)]
    assert glasstorch.autograd.gradgradcheck(lambda *xs: fn(glasstorch, *xs), tuple(leaves))


@pytest.mark.parametrize("name", sorted(DECOMP))
def test_gradgradcheck_decompositions(name):
    fn, shapes = DECOMP[name]
    leaves = [glasstorch.tensor(a, requires_grad=True) for a in _inputs(shapes, seed=4)]
    assert glasstorch.autograd.gradgradcheck(lambda *xs: fn(glasstorch, *xs), tuple(leaves))


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_matches_torch(name):
    fn, shapes = CASES[name]
    arrays = _inputs(shapes, seed=1)
    results = []
    for lib in (torch, glasstorch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        grads = lib.autograd.grad((out * w).sum(), xs, create_graph=True)
        # a scalar of the first derivatives, differentiated again
        total = sum((g * g).sum() for g in grads)
        second = lib.autograd.grad(total, xs, allow_unused=True)
        results.append([np.zeros(a.shape) if g is None else g.detach().numpy()
                        for g, a in zip(second, arrays)])
    for t, g in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-7, atol=1e-9)


def test_mm_backward_skips_unneeded_input():
    a = glasstorch.randn(3, 4, requires_grad=True)
    b = glasstorch.randn(4, 2)
    glasstorch.mm(a, b).sum().backward()
    assert b.grad is None and tuple(a.grad.shape) == (3, 4)
    np.testing.assert_allclose(a.grad.numpy(), np.ones((3, 2)) @ b.numpy().T, rtol=1e-6)


# einsum records one node of its own (torch records a chain of views and bmm whose exact
# names depend on its contraction path), so its gradients are compared here instead
EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
          ("ij->", [(2, 3)]), ("i,j->ij", [(2,), (3,)]), ("iij->j", [(3, 3, 2)]),
          ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("...ij,...jk", [(2, 3, 4), (4, 5)]),
          ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
          ("i,i", [(4,), (4,)]), ("ij,jj->ij", [(2, 3), (3, 3)])]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_gradients_match_torch(eq, shapes):
    arrays = [np.random.default_rng(2).uniform(-1, 1, size=s) for s in shapes]
    results = []
    for lib in (torch, glasstorch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(eq, *xs)
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        results.append([g.numpy() for g in lib.autograd.grad((out * w).sum(), xs)])
    for t, g in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    leaves = tuple(glasstorch.tensor(a, requires_grad=True) for a in arrays)
    assert glasstorch.autograd.gradcheck(lambda *xs: glasstorch.einsum(eq, *xs), leaves)


def test_einsum_sublist_and_double_backward():
    a = glasstorch.randn(2, 3, dtype=glasstorch.float64, requires_grad=True)
    b = glasstorch.randn(3, 4, dtype=glasstorch.float64, requires_grad=True)
    assert glasstorch.autograd.gradcheck(
        lambda x, y: glasstorch.einsum(x, [0, 1], y, [1, 2], [0, 2]), (a, b))
    assert glasstorch.autograd.gradgradcheck(lambda x, y: glasstorch.einsum("ij,jk", x, y),
                                             (a, b))


def test_qr_complete_tall_is_not_differentiable_like_torch():
    a = np.random.default_rng(3).uniform(-1, 1, size=(4, 3))
    for lib in (torch, glasstorch):
        x = lib.tensor(a, requires_grad=True)
        q, r = lib.linalg.qr(x, mode="complete")
        with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
            lib.autograd.grad(q.sum(), x)
