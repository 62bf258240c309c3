"""Activation kernels (relu family, elu family, gelu, silu, ...) and the softmax family.

Forwards run in NumPy (float16/bfloat16 in float32, rounded once); each records a
node named like torch's whose derivative is written with glasstorch ops, so double
backward works. Kernels torch only exposes through ``torch.nn.functional`` (gelu,
silu, elu, ...) live here too but are not exported as ``glasstorch.<name>``.
"""

from __future__ import annotations

import math

from .._core import dtype as _dt
from ..autograd.grad_mode import _state
from ._common import (
    _SHORT,
    Node,
    Tensor,
    assign_inplace,
    compute_array,
    finish,
    needs_grad,
    record,
    register,
    register_inplace,
    result_array,
    wrap,
    wrap_dim,
    xp,
)
from .pointwise import _erf

__all__ = ["relu", "relu_", "prelu", "rrelu", "rrelu_", "selu", "selu_", "celu", "celu_",
           "hardshrink", "threshold", "threshold_", "softmax", "log_softmax"]

_by_np = _dt._by_np
_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_GELU_BETA = math.sqrt(2.0 / math.pi)
_GELU_KAPPA = 0.044715
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _not_impl(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_SHORT[dt]}\'')


def _float_input(input, kernel):
    """The input's array in its compute dtype and its dtype; refuses non-float dtypes."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{kernel.split('_cpu')[0]}(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    a = input._data
    dt = _by_np[a.dtype]
    if dt._category != 2:
        raise _not_impl(kernel, dt)
    return compute_array(a), dt


def _finish(input, arr, dt, node_cls, save_self=True, result_saved=False, **saved):
    r = wrap(result_array(arr, dt))
    if needs_grad(input):
        if save_self:
            saved["self"] = input
        if result_saved:
            saved["result"] = r
        record(r, node_cls, (input,), **saved)
    return r


_BACKWARD1 = {}


def _inplace(fn, *backward1):
    """``fn_`` for torch/F in-place activations: compute, then write into the input.

    ``backward1`` lists node classes that torch names ``...Backward1`` in the in-place
    form (same formula; the overwritten input is kept as a clone by assign_inplace).
    """
    def inplace(input, *args, **kwargs):
        r = fn(input, *args, **kwargs)
        node = r.grad_fn
        if node is not None and type(node) in backward1:
            node.__class__ = _backward1(type(node))
        return assign_inplace(input, r)
    inplace.__name__ = inplace.__qualname__ = fn.__name__ + "_"
    inplace.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return inplace


def _backward1(cls):
    b1 = _BACKWARD1.get(cls)
    if b1 is None:
        b1 = _BACKWARD1[cls] = type(cls.__name__[:-1] + "1", (cls,), {"__module__": __name__})
    return b1


# ----------------------------------------------------------------------------- relu family

@register()
def relu(input):
    """max(input, 0); integer dtypes allowed, bool refused like torch."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt is _dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if dt._category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    r = wrap(xp.maximum(a, a.dtype.type(0)) if a.dtype.kind != "V" else
             result_array(xp.maximum(compute_array(a), 0), dt))
    if needs_grad(input):
        record(r, ReluBackward0, (input,), result=r)
    return r


class ReluBackward0(Node):
    def backward(self, grad):
        return grad * (self._saved_result > 0)


relu_ = register_inplace(relu)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """Clamp to [min_val, max_val] (relu6 is hardtanh(0, 6))."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt is _dt.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt._category == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt._category == 1:
        if dt is _dt.uint8 and min_val < 0:
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative lower "
                               "bound.")
        r = wrap(xp.clip(a, int(min_val), int(max_val)).astype(a.dtype))
    else:
        r = wrap(result_array(xp.clip(compute_array(a), min_val, max_val), dt))
    if needs_grad(input):
        record(r, HardtanhBackward0, (input,), self=input, min_val=min_val, max_val=max_val)
    return r


class HardtanhBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        return grad * ((x > self._saved_min_val) & (x < self._saved_max_val))


hardtanh_ = _inplace(hardtanh)


def relu6(input):
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0)


relu6_ = _inplace(relu6)


def leaky_relu(input, negative_slope=0.01):
    """input where positive, negative_slope * input elsewhere."""
    a, dt = _float_input(input, "leaky_relu_cpu")
    r = xp.where(a > 0, a, a * a.dtype.type(negative_slope))
    return _finish(input, r, dt, LeakyReluBackward0, negative_slope=negative_slope)


class LeakyReluBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        return grad * (x > 0).to(grad.dtype).masked_fill(x <= 0, self._saved_negative_slope)


leaky_relu_ = _inplace(leaky_relu, LeakyReluBackward0)


@register()
def prelu(input, weight):
    """Leaky relu with a learned slope per channel (dim 1) or one shared slope."""
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    n = weight.numel()
    channels = input.shape[1] if input.dim() >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {n} and channel size = {channels}.")
    a, dt = _float_input(input, "prelu_cpu")
    if input.dim() >= 2:
        shape = [1] * input.dim()
        shape[1] = n
        weight = weight.reshape(shape)
    w = compute_array(weight._data)
    r = wrap(result_array(xp.where(a > 0, a, a * w), dt))
    if needs_grad(input, weight):
        record(r, PreluKernelBackward0, (input, weight), self=input, weight=weight)
    return r


class PreluKernelBackward0(Node):
    def backward(self, grad):
        x, w = self._saved_self, self._saved_weight
        pos = x > 0
        gx = grad * w.expand_as(x).masked_fill(pos, 1) if self.next_functions[0][0] else None
        gw = (grad * x).masked_fill(pos, 0) if self.next_functions[1][0] else None
        return gx, gw


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky relu: slopes ~ U(lower, upper) in training, their mean otherwise."""
    a, dt = _float_input(input, "leaky_relu_cpu")
    if training:
        if dt is _dt.float16:
            raise _not_impl("rrelu_with_noise_out_cpu", dt)
        from .random import _rrelu_noise
        # torch multiplies by the unrounded slope (float for bfloat16), then stores the noise
        noise = _rrelu_noise(a, lower, upper, generator)
    else:
        noise = xp.where(a > 0, 1, (lower + upper) / 2).astype(a.dtype)
    noise_t = wrap(result_array(noise, dt))
    return _finish(input, a * noise, dt, RreluWithNoiseBackward0, save_self=False,
                   noise=noise_t)


class RreluWithNoiseBackward0(Node):
    def backward(self, grad):
        return grad * self._saved_noise


rrelu_ = _inplace(rrelu, RreluWithNoiseBackward0)


def threshold(input, threshold, value, *, out=None):
    """input where input > threshold, else value."""
    a = input._data
    dt = _by_np[a.dtype]
    if dt is _dt.bool_ or dt._category == 3:
        raise _not_impl("threshold_cpu", dt)
    if dt._category == 1:
        info = xp.iinfo(a.dtype)
        for v in (threshold, value):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {a.dtype}_t without "
                                   "overflow")
    c = compute_array(a)
    r = wrap(result_array(xp.where(c > threshold, c, xp.asarray(value).astype(c.dtype)), dt))
    if needs_grad(input):
        record(r, ThresholdBackward0, (input,), self=input, threshold=threshold)
    return finish(r, out)


class ThresholdBackward0(Node):
    def backward(self, grad):
        return grad.masked_fill(self._saved_self <= self._saved_threshold, 0)


threshold_ = _inplace(threshold, ThresholdBackward0)


# ----------------------------------------------------------------------------- elu family

def _elu(input, alpha, scale, input_scale, node_cls):
    a, dt = _float_input(input, "elu_cpu")
    t = a.dtype.type
    with xp.errstate(all="ignore"):
        r = xp.where(a > 0, a * t(scale), xp.expm1(a * t(input_scale)) * t(alpha * scale))
    return _finish(input, r, dt, node_cls, alpha=alpha, scale=scale, input_scale=input_scale)


class EluBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        alpha, scale, iscale = self._saved_alpha, self._saved_scale, self._saved_input_scale
        neg = (x * iscale).exp() * (iscale * alpha * scale)
        return grad * neg.masked_fill(x > 0, scale)


class CeluBackward0(EluBackward0):
    pass


def elu(input, alpha=1.0):
    """input where positive, alpha * (exp(input) - 1) elsewhere."""
    return _elu(input, alpha, 1.0, 1.0, EluBackward0)


elu_ = _inplace(elu, EluBackward0)


@register()
def selu(input):
    """scale * elu(input, alpha) with the self-normalising constants."""
    return _elu(input, SELU_ALPHA, SELU_SCALE, 1.0, EluBackward0)


selu_ = _inplace(selu, EluBackward0)


@register()
def celu(input, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu(input, alpha, 1.0, 1.0 / alpha, CeluBackward0)


celu_ = _inplace(celu, CeluBackward0)


# ----------------------------------------------------------------------------- smooth ones

def gelu(input, *, approximate="none", out=None):
    """x * Phi(x), or its tanh approximation with ``approximate='tanh'``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    a, dt = _float_input(input, "GeluKernelImpl")
    if approximate == "tanh":
        t = a.dtype.type
        r = t(0.5) * a * (1 + xp.tanh(t(_GELU_BETA) * (a + t(_GELU_KAPPA) * a * a * a)))
    else:
        # fused: one erf pass and in-place updates (float32 stays float32 throughout)
        t = a.dtype.type
        r = _erf(a * t(_SQRT1_2))
        r += t(1.0)
        r *= a
        r *= t(0.5)
    return finish(_finish(input, r, dt, GeluBackward0, approximate=approximate), out)


class GeluBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        if not _state.grad_enabled and self._saved_approximate != "tanh":
            return _gelu_grad_fast(x, grad)
        if self._saved_approximate == "tanh":
            inner = (x + x * x * x * _GELU_KAPPA) * _GELU_BETA
            th = inner.tanh()
            d = (th + 1) * 0.5 + x * 0.5 * (1 - th * th) * (x * x * (3 * _GELU_KAPPA) + 1) \
                * _GELU_BETA
        else:
            cdf = ((x * _SQRT1_2).erf() + 1) * 0.5
            d = cdf + x * (x * x * -0.5).exp() * _INV_SQRT_2PI
        return grad * d


def _gelu_grad_fast(x, grad):
    """grad * (Phi(x) + x phi(x)) in NumPy, fused (used when no graph is built)."""
    dt = _by_np[x._data.dtype]
    a = compute_array(x._data)
    shape = a.shape
    if not shape:  # ufuncs return scalars on 0-d arrays; the out= steps need arrays
        a = a.reshape(1)
    t = a.dtype.type
    cdf = _erf(a * t(_SQRT1_2))
    cdf += t(1.0)
    cdf *= t(0.5)
    e = a * a
    e *= t(-0.5)
    xp.exp(e, out=e)
    e *= a
    e *= t(_INV_SQRT_2PI)
    e += cdf
    g = grad._data
    if g.dtype != e.dtype:
        g = g.astype(e.dtype)
    e *= g
    return wrap(result_array(e.reshape(shape) if not shape else e, dt))


def silu(input):
    """x * sigmoid(x)."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        a, dt = input._data, input.dtype
    else:
        a, dt = _float_input(input, "silu_cpu")
    with xp.errstate(all="ignore"):
        r = a / (1 + xp.exp(-a))
    return _finish(input, r, dt, SiluBackward0)


class SiluBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))


def _softplus_arr(a):
    # log(1 + exp(a)) without overflow
    return xp.maximum(a, 0) + xp.log1p(xp.exp(-xp.abs(a)))


def mish(input):
    """x * tanh(softplus(x))."""
    a, dt = _float_input(input, "mish_cpu")
    with xp.errstate(all="ignore"):
        r = a * xp.tanh(_softplus_arr(a))
    return _finish(input, r, dt, MishBackward0)


class MishBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        th = softplus(x).tanh()
        return grad * (th + x * x.sigmoid() * (1 - th * th))


def logsigmoid(input, *, out=None):
    """log(sigmoid(x)), computed without overflow."""
    a, dt = _float_input(input, "log_sigmoid_cpu")
    with xp.errstate(all="ignore"):
        r = xp.minimum(a, 0) - xp.log1p(xp.exp(-xp.abs(a)))
    return finish(_finish(input, r, dt, LogSigmoidBackward0), out)


class LogSigmoidBackward0(Node):
    def backward(self, grad):
        return grad * (-self._saved_self).sigmoid()


def softplus(input, beta=1.0, threshold=20.0, *, out=None):
    """log(1 + exp(beta * x)) / beta; linear where beta * x > threshold."""
    a, dt = _float_input(input, "softplus_cpu")
    t = a.dtype.type
    with xp.errstate(all="ignore"):
        z = a * t(beta)
        r = xp.where(z > threshold, a, xp.log1p(xp.exp(z)) / t(beta))
    return finish(_finish(input, r, dt, SoftplusBackward0, beta=beta, threshold=threshold), out)


class SoftplusBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        z = x * self._saved_beta
        return grad * z.sigmoid().masked_fill(z > self._saved_threshold, 1)


# ----------------------------------------------------------------------------- hard ones

def hardswish(input):
    """x * relu6(x + 3) / 6."""
    a, dt = _float_input(input, "hardswish_cpu")
    r = a * xp.clip(a + 3, 0, 6) / a.dtype.type(6)
    return _finish(input, r, dt, HardswishBackward0)


class HardswishBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        d = (x / 3 + 0.5).masked_fill(x < -3, 0).masked_fill(x > 3, 1)
        return grad * d


hardswish_ = _inplace(hardswish)


def hardsigmoid(input):
    """relu6(x + 3) / 6."""
    a, dt = _float_input(input, "hardsigmoid_cpu")
    r = xp.clip(a + 3, 0, 6) / a.dtype.type(6)
    return _finish(input, r, dt, HardsigmoidBackward0)


class HardsigmoidBackward0(Node):
    def backward(self, grad):
        x = self._saved_self
        return (grad / 6).masked_fill((x <= -3) | (x >= 3), 0)


hardsigmoid_ = _inplace(hardsigmoid)


@register()
def hardshrink(input, lambd=0.5, *, out=None):
    """x where |x| > lambd, else 0."""
    a, dt = _float_input(input, "hardshrink_cpu")
    r = xp.where((a >= -lambd) & (a <= lambd), a.dtype.type(0), a)
    return finish(_finish(input, r, dt, HardshrinkBackward0, lambd=lambd), out)


class HardshrinkBackward0(Node):
    def backward(self, grad):
        x, lam = self._saved_self, self._saved_lambd
        return grad.masked_fill((x >= -lam) & (x <= lam), 0)


def softshrink(input, lambd=0.5, *, out=None):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    a, dt = _float_input(input, "softshrink_check")
    if not lambd >= 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    t = a.dtype.type
    r = xp.where(a > lambd, a - t(lambd), xp.where(a < -lambd, a + t(lambd), t(0)))
    return finish(_finish(input, r, dt, SoftshrinkBackward0, lambd=lambd), out)


class SoftshrinkBackward0(Node):
    def backward(self, grad):
        x, lam = self._saved_self, self._saved_lambd
        return grad.masked_fill((x >= -lam) & (x <= lam), 0)


# ----------------------------------------------------------------------------- glu

def glu(input, dim=-1):
    """First half of ``input`` along ``dim`` times sigmoid of the second half."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, dt = _float_input(input, "glu_cpu")
    first, second = xp.split(a, 2, axis=d)
    with xp.errstate(all="ignore"):
        r = first / (1 + xp.exp(-second))
    return _finish(input, r, dt, GluBackward0, dim=d)


class GluBackward0(Node):
    def backward(self, grad):
        from .rearrange import cat
        x, d = self._saved_self, self._saved_dim
        first, second = x.chunk(2, d)
        s = second.sigmoid()
        return cat([grad * s, grad * first * s * (1 - s)], d)


# ----------------------------------------------------------------------------- softmax

def _softmax_input(input, dim, dtype, kernel):
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    a = input._data
    dt = _by_np[a.dtype]
    d = wrap_dim(dim, a.ndim)
    if dt._category != 2 and a.size:  # torch returns empty inputs of any dtype as they are
        raise _not_impl(kernel, dt)
    return input, compute_array(a), dt, d


@register()
def softmax(input, dim, dtype=None, *, out=None):
    """exp(x) / sum(exp(x)) along ``dim`` (after casting to ``dtype`` if given)."""
    input, a, dt, d = _softmax_input(input, dim, dtype, "softmax_lastdim_kernel_impl")
    if a.ndim == 0:
        r = xp.ones_like(a)
    else:
        with xp.errstate(all="ignore"):
            e = xp.exp(a - a.max(axis=d, keepdims=True)) if a.size else a.copy()
            r = e / e.sum(axis=d, keepdims=True)
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, SoftmaxBackward0, (input,), result=r, dim=d)
    return finish(r, out)


class SoftmaxBackward0(Node):
    def backward(self, grad):
        y, d = self._saved_result, self._saved_dim
        gy = grad * y
        if y.dim() == 0:
            return gy - gy
        return gy - y * gy.sum(d, keepdim=True)


@register()
def log_softmax(input, dim, dtype=None, *, out=None):
    """x - logsumexp(x) along ``dim`` (after casting to ``dtype`` if given)."""
    input, a, dt, d = _softmax_input(input, dim, dtype, "log_softmax_lastdim_kernel_impl")
    if a.ndim == 0:
        r = xp.zeros_like(a)
    elif a.size == 0:
        r = a.copy()
    else:
        with xp.errstate(all="ignore"):
            m = a.max(axis=d, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
            s = a - m
            r = s - xp.log(xp.exp(s).sum(axis=d, keepdims=True))
    r = wrap(result_array(r, dt))
    if needs_grad(input):
        record(r, LogSoftmaxBackward0, (input,), result=r, dim=d)
    return finish(r, out)


class LogSoftmaxBackward0(Node):
    def backward(self, grad):
        y, d = self._saved_result, self._saved_dim
        if y.dim() == 0:
            return grad - grad
        return grad - y.exp() * grad.sum(d, keepdim=True)
