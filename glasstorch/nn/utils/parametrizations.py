"""weight_norm, spectral_norm and orthogonal as parametrizations (``nn.utils.parametrize``)."""

from __future__ import annotations

import math
from enum import Enum, auto

import glasstorch as torch

from ..._core.backend import xp
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _normalize(x, dim, eps):
    # F.normalize(x, p=2, dim=dim, eps=eps): divide by the norm clamped below at eps
    return x / torch.linalg.vector_norm(x, 2, dim=dim, keepdim=True).clamp_min(eps)


def _matrix_exp(a):
    """exp(a) for (batches of) square matrices, from differentiable ops.

    Scaling and squaring: exp(a) = exp(a / 2^s)^(2^s) with ||a / 2^s|| <= 1/2, where a
    degree-18 Taylor polynomial is exact to well below float64 rounding.
    """
    n = a.shape[-1]
    with no_grad():
        norm = float(torch.linalg.matrix_norm(a.detach(), 1).amax()) if a.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = a / (2.0 ** s) if s else a
    eye = torch.eye(n, dtype=a.dtype).expand_as(a)
    # Horner form of sum_k x^k / k!
    result = eye + x / 18.0
    for k in range(17, 0, -1):
        result = eye + torch.matmul(x, result) / float(k)
    for _ in range(s):
        result = torch.matmul(result, result)
    return result


def _householder_product(a, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, from differentiable ops.

    v_i is column i of ``a`` below the diagonal with an implicit 1 on it (LAPACK's form).
    """
    n, k = a.shape[-2], a.shape[-1]
    eye = torch.eye(n, dtype=a.dtype)
    below = torch.tril(a, -1) + eye[:, :k]  # the v_i as columns, unit diagonal
    q = eye.expand(*a.shape[:-2], n, n)
    for i in range(k):
        v = below[..., :, i:i + 1]  # (..., n, 1)
        qv = torch.matmul(q, v)
        q = q - (tau[..., i:i + 1].unsqueeze(-1) * qv) @ v.mH
    return q[..., :k]


def _geqrf(a):
    """LAPACK geqrf of a (batch of) n x k matrices, n >= k: (Householder vectors + R, tau).

    Values only (no autograd); it is used where torch's use is under no_grad.
    """
    arr = a.detach().numpy()
    flat = arr.reshape(-1, *arr.shape[-2:])
    hs, taus = [], []
    for m in flat:  # numpy's raw QR is 2-D only; one call per matrix of the batch
        h, tau = xp.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    h = xp.stack(hs).reshape(arr.shape).astype(arr.dtype)
    tau = xp.stack(taus).reshape(*arr.shape[:-2], -1).astype(arr.dtype)
    return torch.from_numpy(h), torch.from_numpy(tau)


def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eye = torch.eye(k, dtype=q.dtype)
    eps = 10.0 * n * torch.finfo(q.dtype).eps
    return torch.allclose(q.mH @ q, eye.expand(q.mH.shape[:-1] + (k,)), atol=eps)


def _make_orthogonal(a):
    # The Q of a = QR with R's diagonal made positive (unique for full-rank a).
    q, r = torch.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = torch.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mH  # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _matrix_exp(a)
            else:
                eye = torch.eye(n, dtype=a.dtype)
                q = torch.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q):
        with no_grad():
            if q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.size(-2), q.size(-1)
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                a, tau = _geqrf(q)
                # forward reads the sign of the diagonal; keep the reflections as they are
                diag = a.diagonal(dim1=-2, dim2=-1)
                diag.copy_(torch.where(tau == 0.0, -diag.sign(), diag.sign()))
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                # complete the columns to a square matrix, then orthogonalise
                noise = torch.randn(*(q.shape[:-2] + (n, n - k)), dtype=q.dtype)
                q = _make_orthogonal(torch.cat([q, noise], dim=-1))
            self.base = q
            # the original that maps to the identity, so that the weight is base
            neg_id = torch.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize ``module.<name>`` to be an orthogonal (unitary) matrix or batch of them.

    ``orthogonal_map``: "matrix_exp" (default for square or complex), "cayley" or
    "householder" (default otherwise).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize ``module.<name>`` as ``g * v / ||v||`` (original0 = g, original1 = v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        # state dicts saved with the legacy hook-based weight_norm use <name>_g / <name>_v
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", _normalize(u, 0, eps))
            self.register_buffer("_v", _normalize(v, 0, eps))
            # a good first estimate of the top singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # Updates the buffers in place (so that they keep their identity), without grad.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(torch.mv(weight_mat, self._v), 0, self.eps))
                self._v.copy_(_normalize(torch.mv(weight_mat.mH, self._u), 0, self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, 0, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: backward must see u, v as they are now, not after the next power step
        u = self._u.clone(memory_format=torch.contiguous_format)
        v = self._v.clone(memory_format=torch.contiguous_format)
        sigma = torch.vdot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _is_conv_transpose(module):
    from ..modules import conv
    kinds = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d",
                                              "ConvTranspose3d") if hasattr(conv, n))
    return bool(kinds) and isinstance(module, kinds)


def _default_dim(module, dim):
    if dim is not None:
        return dim
    try:
        return 1 if _is_conv_transpose(module) else 0
    except ImportError:
        return 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrize ``module.<name>`` as ``W / sigma(W)``, sigma from power iteration."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = _default_dim(module, dim)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module

