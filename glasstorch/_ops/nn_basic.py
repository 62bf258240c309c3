"""Basic nn kernels: linear/bilinear, dropout family, embedding (+bag), one_hot, distances.

Linear is one GEMM (``addmm`` on a 2-D view, AddmmBackward0 like torch); its
backward is the two GEMMs of AddmmBackward0. Dropout noise comes from
glasstorch's default generator, so ``manual_seed`` makes it reproducible.
"""

from __future__ import annotations

import math

from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    assign_inplace,
    compute_array,
    finish,
    int_arg,
    needs_grad,
    record,
    result_array,
    wrap,
    xp,
)

__all__ = ["bilinear", "dropout", "dropout_", "feature_dropout", "feature_dropout_",
           "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "native_dropout", "embedding", "embedding_renorm_",
           "embedding_bag", "cosine_similarity", "pairwise_distance", "pdist"]

_by_np = _dt._by_np


# ----------------------------------------------------------------------------- linear

def linear(input, weight, bias=None, *, out=None):
    """input @ weight.T + bias, as one GEMM (``addmm`` for 2-D input, like torch)."""
    if out is not None:
        return finish(linear(input, weight, bias), out)
    from .linalg import addmm, matmul, mm
    wt = weight.t()
    nd = input.dim()
    if weight.dim() == 2 and bias is not None and nd >= 1:
        if nd == 2:
            return addmm(bias, input, wt)
        # torch folds the batch dims into one GEMM and views the result back
        x2 = input.reshape(-1, input.shape[-1])
        out = addmm(bias, x2, wt)
        return out.view(*input.shape[:-1], out.shape[-1])
    if nd == 2 and weight.dim() == 2:
        return mm(input, wt)
    out = matmul(input, wt)
    return out if bias is None else out + bias


# ----------------------------------------------------------------------------- bilinear

def bilinear(input1, input2, weight, bias=None):
    """out[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    s1, s2 = tuple(input1.shape), tuple(input2.shape)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    if s1[:-1] != s2[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(s1[:-1])} and {list(s2[:-1])}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got "
                           f"{weight.dim()}")
    o, i, j = weight.shape
    if s1[-1] != i:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{s1[-1]} but expected {i}")
    if s2[-1] != j:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{s2[-1]} but expected {j}")
    if bias is not None and tuple(bias.shape) != (o,):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.dim() else 1} but expected {o}")
    dts = {input1.dtype, input2.dtype, weight.dtype}
    if len(dts) != 1:
        raise RuntimeError(f"expected scalar type {input1.dtype} but found "
                           f"{(dts - {input1.dtype}).pop()}")
    x1 = input1.reshape(-1, i)
    x2 = input2.reshape(-1, j)
    out = _trilinear(x1, weight, x2).view(*s1[:-1], o)
    return out if bias is None else out + bias


def _trilinear(x1, w, x2):
    # (N, I) x (O, I, J) x (N, J) -> (N, O): one GEMM over I, then a batched dot over J
    a, b, c = compute_array(x1._data), compute_array(w._data), compute_array(x2._data)
    n, o, j = a.shape[0], b.shape[0], b.shape[2]
    tmp = (a @ b.transpose(1, 0, 2).reshape(b.shape[1], o * j)).reshape(n, o, j)
    r = wrap(result_array(xp.matmul(tmp, c[:, :, None])[..., 0], x1.dtype))
    if needs_grad(x1, w, x2):
        record(r, TrilinearBackward0, (x1, w, x2), i1=x1, i2=w, i3=x2)
    return r


class TrilinearBackward0(Node):
    def backward(self, grad):
        from .linalg import einsum
        x1, w, x2 = self._saved_i1, self._saved_i2, self._saved_i3
        nf = self.next_functions
        g1 = einsum("no,oij,nj->ni", grad, w, x2) if nf[0][0] is not None else None
        gw = einsum("no,ni,nj->oij", grad, x1, x2) if nf[1][0] is not None else None
        g2 = einsum("no,oij,ni->nj", grad, w, x1) if nf[2][0] is not None else None
        return g1, gw, g2


# ----------------------------------------------------------------------------- dropout

_ALPHA = 1.7580993408473766  # -selu_scale * selu_alpha: where selu saturates


def _keep_mask(shape, p, dt):
    """Bernoulli(1 - p) noise of dtype ``dt`` from the default generator, drawn as torch's
    ``noise.bernoulli_(1 - p)`` (so masks match torch's for the seed)."""
    from .random import _bernoulli_mask
    keep = _bernoulli_mask(shape, 1 - p)
    return keep.astype(xp.float64 if dt is _dt.float64 else xp.float32)


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    from .pointwise import add, mul
    if p == 1:
        z = wrap(xp.zeros((), input._data.dtype))
        return assign_inplace(input, mul(input, z)) if inplace else mul(input, z)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    dt = input.dtype
    noise = _keep_mask(shape, p, dt)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = wrap(result_array((noise - 1) * (_ALPHA * a) + _ALPHA * a * p, dt))
        out = add(mul(input, wrap(result_array(noise * a, dt))), b)
    else:
        out = mul(input, wrap(result_array(noise / (1 - p), dt)))
    return assign_inplace(input, out) if inplace else out


def dropout(input, p, train):
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (train only)."""
    return _dropout_impl(input, p, train, False, False, False)


def dropout_(input, p, train):
    """In-place ``dropout``."""
    return _dropout_impl(input, p, train, False, False, True)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1) of an (N, C, ...) input."""
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input, p, train):
    """In-place ``feature_dropout``."""
    return _dropout_impl(input, p, train, True, False, True)


def alpha_dropout(input, p, train):
    """Dropout that keeps a selu network's zero mean and unit variance."""
    return _dropout_impl(input, p, train, False, True, False)


def alpha_dropout_(input, p, train):
    """In-place ``alpha_dropout``."""
    return _dropout_impl(input, p, train, False, True, True)


def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels."""
    return _dropout_impl(input, p, train, True, True, False)


def feature_alpha_dropout_(input, p, train):
    """In-place ``feature_alpha_dropout``."""
    return _dropout_impl(input, p, train, True, True, True)


def native_dropout(input, p, train):
    """(output, keep mask): the fused dropout kernel that records NativeDropoutBackward0."""
    if not train:
        from .copying import clone
        return clone(input), wrap(xp.ones(input._data.shape, xp.bool_))
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    dt = input.dtype
    if input.numel() == 0:  # torch returns an empty mask of the input's dtype here
        from .copying import clone
        return clone(input), wrap(xp.empty(input._data.shape, dt.np))
    keep = _keep_mask(tuple(input.shape), p, dt)
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    out = wrap(result_array(compute_array(input._data) * keep * keep.dtype.type(scale), dt))
    mask = wrap(keep.astype(xp.bool_))
    if needs_grad(input):
        record(out, NativeDropoutBackward0, (input,), mask=mask, scale=scale)
    return out, mask


class NativeDropoutBackward0(Node):
    def backward(self, grad):
        return grad * self._saved_mask * self._saved_scale


# ----------------------------------------------------------------------------- embedding

def _check_indices(indices, what):
    if indices._data.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_legacy(indices)} instead (while checking arguments for {what})")


def _legacy(t):
    from .._tensor import _legacy_type_name
    return _legacy_type_name(t.dtype)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices``: shape indices.shape + (embedding_dim,)."""
    _check_indices(indices, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if sparse:
        raise NotImplementedError("sparse gradients are not supported by glasstorch; use "
                                  "sparse=False")
    idx = indices._data
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    r = wrap(weight._data[idx])
    if needs_grad(weight):
        record(r, EmbeddingBackward0, (weight,), indices=indices, num_weights=n,
               padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)
    return r


def _index_counts(idx_flat, n):
    from .creation import tensor
    counts = xp.bincount(idx_flat._data.astype(xp.int64), minlength=n)
    return tensor(counts)


class EmbeddingBackward0(Node):
    def backward(self, grad):
        from .creation import zeros
        idx = self._saved_indices.reshape(-1)
        n = self._saved_num_weights
        d = grad.shape[-1]
        g = grad.reshape(-1, d)
        pad = self._saved_padding_idx
        if pad is not None and pad >= 0:
            g = g.masked_fill((idx == pad).unsqueeze(1), 0)
        if self._saved_scale_grad_by_freq:
            g = g / _index_counts(idx, n).index_select(0, idx).unsqueeze(1).to(g.dtype)
        return zeros(n, d, dtype=grad.dtype).index_add(0, idx, g)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Scale (in place) each row of ``input`` used by ``indices`` to norm <= max_norm."""
    _check_indices(indices, "embedding_renorm_")
    if input.dim() != 2:
        raise RuntimeError("'self' must be 2-D")
    a = input._data
    rows = xp.unique(indices._data.reshape(-1))
    if rows.size:
        w = compute_array(a[rows])
        p = float(norm_type)
        if p == math.inf:
            norms = xp.abs(w).max(axis=1)
        elif p == 0:
            norms = (w != 0).sum(axis=1).astype(w.dtype)
        else:
            norms = (xp.abs(w) ** p).sum(axis=1) ** (1.0 / p)
        big = norms > max_norm
        if big.any():
            scale = (max_norm / (norms[big] + 1e-7))[:, None]
            a[rows[big]] = result_array(w[big] * scale, input.dtype)
            input._bump_version()
    return input


_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embedding rows; returns (output, offset2bag,
    bag_size, max_indices) like torch.embedding_bag (1-D indices and offsets)."""
    _check_indices(indices, "embedding_bag")
    if sparse:
        raise NotImplementedError("sparse gradients are not supported by glasstorch; use "
                                  "sparse=False")
    if per_sample_weights is not None and mode != 0:
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum'")
    idx = indices._data.astype(xp.int64).reshape(-1)
    off = offsets._data.astype(xp.int64).reshape(-1)
    n, d = weight.shape
    m = idx.size
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    if include_last_offset:
        if off.size < 1:
            raise RuntimeError("include_last_offset: number of offsets should be at least 1")
        starts, ends = off[:-1], xp.append(off[1:-1], m)
    else:
        starts, ends = off, xp.append(off[1:], m)
    nb = starts.size
    if nb and (starts[0] != 0 or (xp.diff(starts) < 0).any()):
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           "has to start from position 0. However, got " + str(int(starts[0])))
    ends = xp.minimum(ends, m)
    bag = xp.searchsorted(starts, xp.arange(m), side="right") - 1 if nb else \
        xp.zeros(m, xp.int64)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    keep = idx != padding_idx if padding_idx is not None else xp.ones(m, bool)
    count = xp.bincount(bag[keep], minlength=nb)[:nb] if nb else xp.zeros(0, xp.int64)
    rows = compute_array(weight._data)[idx]
    if per_sample_weights is not None:
        rows = rows * compute_array(per_sample_weights._data).reshape(-1, 1)
    rows = xp.where(keep[:, None], rows, 0)
    out = xp.zeros((nb, d), rows.dtype)
    max_idx = xp.zeros((nb, d), xp.int64)
    if mode == 2:
        out.fill(-xp.inf)
        kb, kr = bag[keep], rows[keep]
        xp.maximum.at(out, kb, kr)
        pos = xp.arange(m)[keep]
        win = xp.where(kr == out[kb], pos[:, None], m)
        first = xp.full((nb, d), m, xp.int64)
        xp.minimum.at(first, kb, win)
        empty = first == m
        out[empty] = 0
        if m:
            max_idx = xp.where(empty, 0, idx[xp.minimum(first, m - 1)])
    else:
        xp.add.at(out, bag[keep], rows[keep])
        if mode == 1:
            out = out / xp.maximum(count, 1)[:, None].astype(out.dtype)
    r = wrap(result_array(out, weight.dtype))
    offset2bag = wrap(bag.astype(xp.int64))
    bag_size = wrap((ends - starts).astype(xp.int64))
    max_indices = wrap(max_idx)
    if needs_grad(weight, per_sample_weights):
        record(r, EmbeddingBagBackward0, (weight, per_sample_weights), weight=weight,
               indices=indices, offset2bag=offset2bag, keep=wrap(keep), count=wrap(count),
               mode=mode, per_sample_weights=per_sample_weights, max_indices=max_indices,
               scale_grad_by_freq=scale_grad_by_freq, nonempty=wrap(count > 0))
    return r, offset2bag, bag_size, max_indices


class EmbeddingBagBackward0(Node):
    def backward(self, grad):
        from .creation import zeros
        w = self._saved_weight
        n, d = w.shape
        idx = self._saved_indices.reshape(-1).long()
        mode = self._saved_mode
        gw = gp = None
        if mode == 2:
            if self.next_functions[0][0] is not None:
                nonempty = self._saved_nonempty.unsqueeze(1)
                cols = _arange(d).unsqueeze(0)
                flat = (self._saved_max_indices * d + cols).reshape(-1)
                g = grad.masked_fill(~nonempty, 0).reshape(-1)
                gw = zeros(n * d, dtype=grad.dtype).index_add(0, flat, g).reshape(n, d)
            return gw, None
        g = grad.index_select(0, self._saved_offset2bag) if grad.shape[0] else \
            zeros(0, d, dtype=grad.dtype)
        if mode == 1:
            cnt = self._saved_count.clamp_min(1).to(grad.dtype)
            g = g / cnt.index_select(0, self._saved_offset2bag).unsqueeze(1)
        g = g.masked_fill(~self._saved_keep.unsqueeze(1), 0)
        psw = self._saved_per_sample_weights
        if self.next_functions[0][0] is not None:
            gr = g if psw is None else g * psw.reshape(-1, 1)
            if self._saved_scale_grad_by_freq:
                gr = gr / _index_counts(idx, n).index_select(0, idx).unsqueeze(1).to(g.dtype)
            gw = zeros(n, d, dtype=grad.dtype).index_add(0, idx, gr)
        if psw is not None and self.next_functions[1][0] is not None:
            gp = (g * w.index_select(0, idx)).sum(1).reshape(psw.shape)
        return gw, gp


def _arange(n):
    from .creation import arange
    return arange(n)


def one_hot(input, num_classes=-1):
    """int64 one-hot encoding: shape input.shape + (num_classes,)."""
    num_classes = int_arg("one_hot", "num_classes", 2, num_classes)
    a = input._data
    if a.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap((a[..., None] == xp.arange(num_classes)).astype(xp.int64))


# ----------------------------------------------------------------------------- distances

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along ``dim``."""
    from ..autograd.grad_mode import no_grad
    from .linalg import vector_norm
    from .rearrange import broadcast_tensors
    dt = _dt.result_dtype(x1, x2)
    if dt._category < 2:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_SHORT[dt]}")
    a, b = broadcast_tensors(x1.to(dt), x2.to(dt))
    n1 = vector_norm(a, 2, dim, True).clone()
    n2 = vector_norm(b, 2, dim, True).clone()
    # torch clamps the norms without recording it: the gradient flows through the norm
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((a / n1) * (b / n2)).sum(dim)


class NormBackward1(Node):
    def backward(self, grad):
        from .linalg import _norm_grad
        return _norm_grad(self._saved_self, self._saved_result, grad, self._saved_p,
                          self._saved_dim, self._saved_keepdim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    from .linalg import _vector_norm
    nd = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if diff.dtype._category < 2:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_SHORT[diff.dtype]} instead.")
    axes = (nd - 1,) if nd else None
    r = wrap(_vector_norm(diff._data, p, axes, keepdim, diff.dtype))
    if needs_grad(diff):
        record(r, NormBackward1, (diff,), self=diff, result=r, p=float(p), dim=axes,
               keepdim=keepdim)
    return r


def pdist(input, p=2):
    """p-norm distances between every pair of rows i < j of a 2-D input."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input.dtype._category != 2:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    from .linalg import _vector_norm
    n = input.shape[0]
    i, j = xp.triu_indices(n, 1)
    a = input._data
    r = wrap(_vector_norm(a[i] - a[j], p, (1,), False, input.dtype))
    if needs_grad(input):
        record(r, PdistBackward0, (input,), self=input, p=float(p), result=r)
    return r


class PdistBackward0(Node):
    def backward(self, grad):
        from .creation import tensor, zeros_like
        from .linalg import _norm_grad
        x = self._saved_self
        n = x.shape[0]
        i, j = (tensor(v) for v in xp.triu_indices(n, 1))
        diff = x.index_select(0, i) - x.index_select(0, j)
        g = _norm_grad(diff, self._saved_result, grad, self._saved_p, (1,), False)
        return zeros_like(x).index_add(0, i, g).index_add(0, j, -g)
