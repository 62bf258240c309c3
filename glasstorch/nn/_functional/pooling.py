"""torch.nn.functional pooling (torch's signatures) over ``glasstorch._ops.pooling``."""

from __future__ import annotations

from ..._ops import pooling as _P
from ..._ops.activation import relu as _relu
from ..._ops.pointwise import sign as _sign

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]

avg_pool1d = _P.avg_pool1d
avg_pool2d = _P.avg_pool2d
avg_pool3d = _P.avg_pool3d
adaptive_avg_pool1d = _P.adaptive_avg_pool1d
adaptive_avg_pool2d = _P.adaptive_avg_pool2d
adaptive_avg_pool3d = _P.adaptive_avg_pool3d


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-D max pooling returning ``(values, indices)``."""
    return _P.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-D max pooling returning ``(values, indices)``."""
    return _P.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-D max pooling returning ``(values, indices)``."""
    return _P.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling; ``return_indices`` also gives the argmax positions."""
    r = _P.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling; ``return_indices`` also gives the argmax positions."""
    return _P.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling; ``return_indices`` also gives the argmax positions."""
    return _P.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)


def _lp(input, norm_type, kernel_size, stride, ceil_mode, nd):
    ks = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    maxp = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
    if norm_type == float("inf"):
        return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avgp = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = avgp(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    n = 1
    for k in ks:
        n *= k
    return (_sign(out) * _relu(out.abs())).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum x^p)^(1/p)`` over 1-D windows."""
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum x^p)^(1/p)`` over 2-D windows."""
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum x^p)^(1/p)`` over 3-D windows."""
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 3)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling returning ``(values, indices)``."""
    return _P.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling returning ``(values, indices)``."""
    return _P.adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling returning ``(values, indices)``."""
    return _P.adaptive_max_pool3d(input, output_size, True)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling to ``output_size``."""
    r = _P.adaptive_max_pool1d(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling to ``output_size``."""
    return _P.adaptive_max_pool2d(input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling to ``output_size``."""
    return _P.adaptive_max_pool3d(input, output_size, return_indices)


def _ntuple(v, n):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    return v * n if len(v) == 1 else v


def _unpool_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')
    return output_size


def _unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride, nd) if stride is not None else k
    p = _ntuple(padding, nd)
    size = _unpool_size(input, k, s, p, output_size)
    if nd == 1:
        return _P.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1),
                               size + [1]).squeeze(-1)
    return (_P.max_unpool2d if nd == 2 else _P.max_unpool3d)(input, indices, size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: values back at their argmax positions, zeros elsewhere."""
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d: values back at their argmax positions, zeros elsewhere."""
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool3d: values back at their argmax positions, zeros elsewhere."""
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _fractional(input, nd, kernel_size, output_size, output_ratio, random_samples):
    """Fractional max pooling (Graham, 2014): windows of ``kernel_size`` at pseudo-random
    starts spread over the input to give ``output_size`` (or ``output_ratio`` of the input's
    size); ``random_samples`` (one uniform per batch, plane and dim, drawn here with
    ``torch.rand`` when not given) fix the starts."""
    from ... import rand
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    if output_size is None:
        if len(output_ratio) > nd:  # a float ratio has no len() in torch's check either
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             f"tuple of Ints.")
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.size(-nd + i) * ratio[i]) for i in range(nd)]
    if random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        random_samples = rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype)
    pool = _P.fractional_max_pool2d if nd == 2 else _P.fractional_max_pool3d
    return pool(input, kernel_size, output_size, random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """2-D fractional max pooling returning ``(values, indices)``."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """3-D fractional max pooling returning ``(values, indices)``."""
    return _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling; ``(values, indices)`` with ``return_indices``."""
    r = _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling; ``(values, indices)`` with ``return_indices``."""
    r = _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return r if return_indices else r[0]


__all__ += ["fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]
