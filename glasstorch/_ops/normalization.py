"""Normalization kernels: batch norm (with in-place running-stat updates), layer norm,
group norm, instance norm and RMS norm.

Statistics are whole-array NumPy reductions in the compute dtype (float32 for
float16/bfloat16). Backward formulas recompute the statistics with glasstorch ops
from the saved input, so they are themselves differentiable (double backward works).
"""

from __future__ import annotations

from .._core import dtype as _dt
from ._common import (
    _SHORT,
    Node,
    compute_dtype,
    needs_grad,
    record,
    register,
    register_inplace,
    result_array,
    wrap,
    xp,
)

__all__ = [
    "batch_norm", "native_batch_norm", "layer_norm", "native_layer_norm", "group_norm",
    "native_group_norm", "instance_norm", "rms_norm",
]

_LOW = (_dt.float16, _dt.bfloat16)


def _check_float(input, kernel):
    dt = input.dtype
    if dt._category < 2 or dt.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_SHORT[dt]}\'')
    return dt


def _check_params(dt, *params):
    """torch's CPU rule: parameters share the input's dtype, or are float32 for a
    float16/bfloat16 input."""
    for p in params:
        if p is None:
            continue
        pd = p.dtype
        if pd is dt or (dt in _LOW and pd is _dt.float32):
            continue
        if dt in _LOW and pd in _LOW:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        want = "Float" if dt in _LOW or pd is not dt else _SHORT[dt]
        raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of {want}")


def _param(p, shape, cd):
    return None if p is None else p._data.astype(cd, copy=False).reshape(shape)


def _affine(xhat, w, b):
    if w is not None:
        xhat = xhat * w
    if b is not None:
        xhat = xhat + b
    return xhat


def _normalized_grad(g, xhat, invstd, w, axes):
    """Input gradient of ``w * xhat`` where xhat is normalised over ``axes`` (glasstorch ops)."""
    gw = g if w is None else g * w
    return (gw - gw.mean(axes, keepdim=True) - xhat * (gw * xhat).mean(axes, keepdim=True)) \
        * invstd


# ----------------------------------------------------------------------------- batch norm

def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps, *, out=None):
    """``(output, save_mean, save_invstd)``; in training the running stats (if given) are
    updated in place with the unbiased variance, the output uses the biased one."""
    if out is not None:
        from .reduction import _finish_tuple
        return _finish_tuple(native_batch_norm(input, weight, bias, running_mean, running_var,
                                               training, momentum, eps), out)
    dt = _check_float(input, "batch_norm")
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm(): expected input to have at least 2 dims, got "
                           f"{input.dim()}")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_params(dt, weight, bias, running_mean, running_var)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    cd = compute_dtype(dt)
    x = input._data.astype(cd, copy=False)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, c) + (1,) * (x.ndim - 2)
    stat_dt = running_mean.dtype if running_mean is not None else dt
    with xp.errstate(all="ignore"):
        if training:
            mean = x.mean(axes)
            var = x.var(axes)
            invstd = 1 / xp.sqrt(var + eps)
            if running_mean is not None or running_var is not None:
                n = x.size // c if c else 0
                unbiased = var * (n / (n - 1)) if n > 1 else var * xp.inf
                for rs, v in ((running_mean, mean), (running_var, unbiased)):
                    if rs is not None:
                        r = rs._data
                        upd = (1 - momentum) * r.astype(cd) + momentum * v
                        xp.copyto(r, upd.astype(r.dtype), casting="unsafe")
                        rs._bump_version()
            save_mean = wrap(result_array(mean, stat_dt))
            save_invstd = wrap(result_array(invstd, stat_dt))
        else:
            mean = running_mean._data.astype(cd, copy=False)
            invstd = 1 / xp.sqrt(running_var._data.astype(cd, copy=False) + eps)
            save_mean = wrap(xp.empty(0, stat_dt.np))
            save_invstd = wrap(xp.empty(0, stat_dt.np))
        out = _affine((x - mean.reshape(shape)) * invstd.reshape(shape),
                      _param(weight, shape, cd), _param(bias, shape, cd))
    r = wrap(result_array(out, dt))
    if needs_grad(input, weight, bias):
        record(r, NativeBatchNormBackward0, (input, weight, bias), input=input, weight=weight,
               running_mean=None if training else running_mean,
               running_var=None if training else running_var, training=training, eps=eps,
               axes=axes, shape=shape)
    return r, save_mean, save_invstd


class NativeBatchNormBackward0(Node):
    def backward(self, grad):
        x, w = self._saved_input, self._saved_weight
        axes, shape, eps = list(self._saved_axes), self._saved_shape, self._saved_eps
        wv = None if w is None else w.view(shape)
        if self._saved_training:
            mean = x.mean(axes, keepdim=True)
            xc = x - mean
            invstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
            xhat = xc * invstd
            gx = _normalized_grad(grad, xhat, invstd, wv, axes) \
                if self.next_functions[0][0] is not None else None
        else:
            rm = self._saved_running_mean
            invstd = (self._saved_running_var + eps).rsqrt().view(shape).to(x.dtype)
            xhat = (x - rm.view(shape).to(x.dtype)) * invstd
            gx = None
            if self.next_functions[0][0] is not None:
                gx = grad * invstd if wv is None else grad * (wv * invstd)
        gw = (grad * xhat).sum(axes) if self.next_functions[1][0] is not None else None
        gb = grad.sum(axes) if self.next_functions[2][0] is not None else None
        return gx, gw, gb


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """Batch normalisation over every dim but 1 (``torch.batch_norm``)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)[0]


# ----------------------------------------------------------------------------- layer norm

def _norm_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)`` normalising over the trailing ``normalized_shape`` dims."""
    ns = _norm_shape(normalized_shape)
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(ns)}")
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    dt = _check_float(input, "LayerNormKernelImpl")
    _check_params(dt, weight, bias)
    cd = compute_dtype(dt)
    x = input._data.astype(cd, copy=False)
    axes = tuple(range(x.ndim - k, x.ndim))
    with xp.errstate(all="ignore"):
        mean = x.mean(axes, keepdims=True)
        rstd = 1 / xp.sqrt(x.var(axes, keepdims=True) + eps)
        out = _affine((x - mean) * rstd, _param(weight, ns, cd), _param(bias, ns, cd))
    r = wrap(result_array(out, dt))
    if needs_grad(input, weight, bias):
        record(r, NativeLayerNormBackward0, (input, weight, bias), input=input, weight=weight,
               eps=eps, axes=axes)
    return r, wrap(result_array(mean, dt)), wrap(result_array(rstd, dt))


class NativeLayerNormBackward0(Node):
    def backward(self, grad):
        x, w, eps = self._saved_input, self._saved_weight, self._saved_eps
        axes = list(self._saved_axes)
        lead = list(range(x.dim() - len(axes)))
        mean = x.mean(axes, keepdim=True)
        xc = x - mean
        rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
        xhat = xc * rstd
        gx = _normalized_grad(grad, xhat, rstd, w, axes) \
            if self.next_functions[0][0] is not None else None
        gw = gb = None
        if self.next_functions[1][0] is not None:
            gw = (grad * xhat).sum(lead) if lead else grad * xhat
        if self.next_functions[2][0] is not None:
            gb = grad.sum(lead) if lead else grad
        return gx, gw, gb


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """Layer normalisation over the trailing ``normalized_shape`` dims (``torch.layer_norm``)."""
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


# ----------------------------------------------------------------------------- group norm

def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)`` with statistics per (sample, group of channels)."""
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} "
                               f"and input of shape {list(input.shape)}")
    dt = _check_float(input, "GroupNormKernelImpl")
    _check_params(dt, weight, bias)
    cd = compute_dtype(dt)
    x = input._data.astype(cd, copy=False).reshape(N, group, -1)
    with xp.errstate(all="ignore"):
        mean = x.mean(2, keepdims=True)
        rstd = 1 / xp.sqrt(x.var(2, keepdims=True) + eps)
        xhat = ((x - mean) * rstd).reshape(N, C, -1)
        out = _affine(xhat, _param(weight, (1, C, 1), cd), _param(bias, (1, C, 1), cd))
    r = wrap(result_array(out.reshape(input.shape), dt))
    if needs_grad(input, weight, bias):
        record(r, NativeGroupNormBackward0, (input, weight, bias), input=input, weight=weight,
               eps=eps, N=N, C=C, group=group)
    return (r, wrap(result_array(mean.reshape(N, group), dt)),
            wrap(result_array(rstd.reshape(N, group), dt)))


class NativeGroupNormBackward0(Node):
    def backward(self, grad):
        x, w, eps = self._saved_input, self._saved_weight, self._saved_eps
        n, c, grp = self._saved_N, self._saved_C, self._saved_group
        xg = x.reshape(n, grp, -1)
        xc = xg - xg.mean(2, keepdim=True)
        rstd = ((xc * xc).mean(2, keepdim=True) + eps).rsqrt()
        xhat = (xc * rstd).reshape(n, c, -1)
        g = grad.reshape(n, c, -1)
        gx = gw = gb = None
        if self.next_functions[0][0] is not None:
            gwx = g if w is None else g * w.view(1, c, 1)
            gwx = gwx.reshape(n, grp, -1)
            xh = xhat.reshape(n, grp, -1)
            gx = ((gwx - gwx.mean(2, keepdim=True) - xh * (gwx * xh).mean(2, keepdim=True))
                  * rstd).reshape(x.shape)
        if self.next_functions[1][0] is not None:
            gw = (g * xhat).sum([0, 2])
        if self.next_functions[2][0] is not None:
            gb = g.sum([0, 2])
        return gx, gw, gb


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """Group normalisation (``torch.group_norm``)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    hw = input.numel() // (n * c) if n * c else 0
    return native_group_norm(input, weight, bias, n, c, hw, num_groups, eps)[0]


# ----------------------------------------------------------------------------- instance / rms

def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """Instance normalisation: batch norm of the input viewed as one sample of N*C channels;
    running stats (if given) get the batch average of the per-instance updates."""
    from ..autograd.grad_mode import no_grad
    n, c = input.shape[0], input.shape[1]
    shape = (1, n * c) + tuple(input.shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = batch_norm(input.contiguous().view(shape), w, b, rm, rv, use_input_stats, momentum,
                     eps, cudnn_enabled)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input^2) + eps) * weight`` over the trailing dims."""
    ns = _norm_shape(normalized_shape)
    k = len(ns)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(ns)}")
    dt = input.dtype
    if dt._category < 2 or dt.is_complex:
        raise RuntimeError(f"rms_norm only supports floating-point inputs, got {dt}")
    if eps is None:
        # the epsilon of the compute type: float32's for float16/bfloat16 inputs
        eps = float(xp.finfo(compute_dtype(dt)).eps)
    dims = list(range(input.dim() - k, input.dim()))
    x = input if dt not in _LOW else input.float()
    out = x * ((x.pow(2)).mean(dims, keepdim=True) + eps).rsqrt()
    if dt in _LOW:
        out = out.to(dt)
    if weight is not None:
        return out * weight
    # torch returns a contiguous result (a recorded copy when the input was strided)
    return out if input.is_contiguous() else out.contiguous()


# ----------------------------------------------------------------------------- cross-map LRN

def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Legacy ``nn.CrossMapLRN2d``: ``x * (k + alpha/size * S)^-beta`` where ``S`` sums the
    squares over a channel window, built exactly like torch's running-window loop (which
    never drops channel 0 from the window). Not in ``__all__``: torch has no ``torch.xxx``."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    dt = _check_float(input, "CrossMapLRN2d")
    x = input._data.astype(compute_dtype(dt), copy=False)
    c = x.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    sq = x * x
    cum = xp.cumsum(sq, 1)
    ch = xp.arange(c)
    s = cum[:, xp.minimum(ch + pre_pad - 1, c - 1)]
    drop = ch > pre_pad
    if drop.any():
        # channels 1 .. c - pre_pad have left the window; channel 0 never does
        s[:, drop] -= cum[:, ch[drop] - pre_pad] - sq[:, :1]
    scale = k + alpha / size * s
    out = x * scale ** -beta
    r = wrap(result_array(out, dt))
    if needs_grad(input):
        record(r, CrossMapLRN2dBackward, (input,), scale=scale, out=out, x=x, size=size,
               alpha=alpha, beta=beta)
    return r


class CrossMapLRN2dBackward(Node):
    """torch's legacy backward formula (a symmetric window over ``grad * out / scale``)."""
    once_differentiable = True


    def backward(self, grad):
        scale, out, x = self._saved_scale, self._saved_out, self._saved_x
        size, alpha, beta = self._saved_size, self._saved_alpha, self._saved_beta
        g = grad._data.astype(x.dtype, copy=False)
        n, c = x.shape[:2]
        inv_pre_pad = int(size - (size - 1) / 2)
        if inv_pre_pad + c > c + size - 1:
            raise RuntimeError(f"start ({inv_pre_pad}) + length ({c}) exceeds dimension size "
                               f"({c + size - 1}).")
        padded = xp.zeros((n, c + size) + x.shape[2:], x.dtype)
        padded[:, 1 + inv_pre_pad:1 + inv_pre_pad + c] = g * out / scale
        cum = xp.cumsum(padded, 1)                 # cum[:, j] = sum of padded rows < j
        accum = cum[:, size:size + c] - cum[:, :c]
        gi = scale ** -beta * g - (2 * alpha * beta / size) * x * accum
        return wrap(gi.astype(self._input_meta[0][1], copy=False))


def renorm(input, p, dim, maxnorm, *, out=None):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (the others unchanged)."""
    from ..autograd.grad_mode import no_grad
    from ._common import finish, wrap_dim
    from .linalg import vector_norm
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    d = wrap_dim(dim, input.dim())
    with no_grad():
        factor = _renorm_factor(vector_norm(input, p, _other_dims(input, d), True), maxnorm)
        r = input * factor
    if needs_grad(input):
        record(r, RenormBackward0, (input,), self=input, p=p, dim=d, maxnorm=maxnorm)
    return finish(r, out)


def _other_dims(t, d):
    return tuple(i for i in range(t.dim()) if i != d)


def _renorm_factor(norm, maxnorm):
    return (maxnorm / (norm + 1e-7)).masked_fill(norm <= maxnorm, 1)


def _norm_grad(g, x, p, norm, dims):
    """``g`` (the gradient of a p-norm of ``x`` over ``dims``, kept as size 1) taken to ``x``."""
    safe = norm.masked_fill(norm == 0, 1)
    if p == 1:
        return g * x.sgn()
    if p == 2:
        return (g * x / safe).masked_fill(norm == 0, 0)
    if p == float("inf"):
        top = (x.abs() == norm).to(g.dtype)
        return g * x.sgn() * top / top.sum(dims, keepdim=True)
    return (g * x * x.abs().pow(p - 2) / safe.pow(p - 1)).masked_fill(norm == 0, 0)


class RenormBackward0(Node):
    def backward(self, grad):
        from .linalg import vector_norm
        x, p, maxnorm = self._saved_self, self._saved_p, self._saved_maxnorm
        dims = _other_dims(x, self._saved_dim)
        norm = vector_norm(x, p, dims, True)
        g_norm = _norm_grad((x.conj() * grad).sum(dims, keepdim=True), x, p, norm, dims)
        inv = 1 / (norm + 1e-7)
        scaled = inv * maxnorm * grad - maxnorm * inv * inv * g_norm
        return scaled.where(norm > maxnorm, grad)


register()(renorm)
register_inplace(renorm)
__all__ += ["renorm"]
