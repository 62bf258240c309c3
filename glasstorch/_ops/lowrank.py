"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``).

Halko, Martinsson and Tropp (2009), algorithm 5.1: a Gaussian sketch of the range of A,
``niter`` rounds of subspace (power) iteration re-orthonormalised by QR, then an exact SVD of
the small projected matrix. Built from differentiable ops (randn, matmul, linalg.qr,
linalg.svd), so gradients flow as in torch, and the sketch comes from the default generator
in the order torch draws it, so a seeded call gives torch's factors.
"""

from __future__ import annotations

from .._core import dtype as _dt

__all__ = ["pca_lowrank", "svd_lowrank"]


def _floating_dtype(A):
    """A's dtype when it is a real floating type torch's low-rank code keeps, else float32."""
    return A.dtype if A.dtype in (_dt.float16, _dt.float32, _dt.float64) else _dt.float32


def _matmul(A, B):
    """``A @ B`` for a dense or sparse ``A``."""
    if A is None:
        return None
    if A.is_sparse:
        from .. import sparse
        return sparse.mm(A, B)
    return A.matmul(B)


def _mH(A):
    """The conjugate transpose; a sparse ``A`` (2-D here) goes through its own ``t()``."""
    if A.is_sparse:
        return A.t().conj() if A.is_complex() else A.t()
    return A.mH


def _approximate_basis(A, q, niter, M):
    """An orthonormal ``(m, q)`` basis Q with ``A - M`` close to ``Q Q^H (A - M)``."""
    from .. import linalg, randn

    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = _matmul(A, R)
    if M is not None:
        X = X - _matmul(M, R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = _matmul(_mH(A), Q)
        if M is not None:
            X = X - _matmul(M.mH, Q)
        Q = linalg.qr(X).Q
        X = _matmul(A, Q)
        if M is not None:
            X = X - _matmul(M, Q)
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    from .. import linalg

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:  # the sketch is taken of the tall orientation
        A = _mH(A)
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter, M)
    # Q^H A, computed as (A^H Q)^H when A is sparse (sparse-times-dense is what exists)
    B = _matmul(_mH(A), Q).mH if A.is_sparse else Q.mH.matmul(A)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if wide:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """Approximate rank-``q`` SVD ``(U, S, V)`` of ``A`` (or of ``A - M``) with
    ``A ~= U diag(S) V^H``, by randomized subspace iteration (``niter`` power rounds)."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """Randomized PCA: ``(U, S, V)`` of ``A`` after subtracting its column means (when
    ``center``); ``q`` defaults to ``min(6, m, n)``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.is_sparse:
        if A.dim() != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        from .. import ones
        # the column means as a dense (m, n) matrix to subtract: A stays sparse
        c = A.to_dense().to(_floating_dtype(A)).sum(dim=-2, keepdim=True) / m
        M = ones(m, 1, dtype=c.dtype, device=A.device).matmul(c)
        return _svd_lowrank(A, q, niter, M)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)
