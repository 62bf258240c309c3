"""Observers: modules that watch the tensors flowing through a model during calibration and
turn the statistics into quantization parameters (scale, zero point), with torch's formulas
(computed in float32 tensors, as torch does, so the qparams match bit for bit)."""

from __future__ import annotations

import math
import warnings
from functools import partial

import glasstorch as torch
from glasstorch import nn

__all__ = [
    "ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
    "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "PlaceholderObserver",
    "NoopObserver", "FixedQParamsObserver", "default_observer", "default_weight_observer",
    "default_histogram_observer", "default_per_channel_weight_observer",
    "default_dynamic_quant_observer", "default_placeholder_observer",
    "default_float_qparams_observer", "per_channel_weight_observer_range_neg_127_to_127",
    "weight_observer_range_neg_127_to_127", "default_debug_observer", "get_observer_state_dict",
    "load_observer_state_dict", "default_fixed_qparams_range_0to1_observer",
    "default_fixed_qparams_range_neg1to1_observer",
]

_EPS = torch.finfo(torch.float32).eps


class _PartialWrapper:
    """A constructor with bound keyword arguments (``Observer.with_args(...)``); calling it
    builds a fresh instance each time."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return repr(self.p) + repr(self.callable_args)

    def with_args(self, **kwargs):
        """Bind more keyword arguments."""
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        """Bind keyword arguments computed (by calling them) at construction time."""
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


def _is_per_tensor(qscheme):
    return qscheme in (torch.per_tensor_affine, torch.per_tensor_symmetric)


def _is_per_channel(qscheme):
    return qscheme in (torch.per_channel_affine, torch.per_channel_symmetric,
                       torch.per_channel_affine_float_qparams)


def _calculate_qmin_qmax(quant_min, quant_max, customized, dtype, reduce_range):
    if customized:
        lo, hi = quant_min, quant_max
        span = hi - lo + 1
        if dtype in (torch.qint8, torch.int8) and not 0 < span <= 256:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=256).")
        if dtype in (torch.qint32, torch.int32) and not 0 < span <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=4294967296).")
        if reduce_range:
            lo, hi = lo // 2, hi // 2
        return lo, hi
    if dtype in (torch.qint8, torch.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (torch.quint8, torch.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (torch.qint32, torch.int32):
        return -(2 ** 31), 2 ** 31 - 1
    if dtype is torch.uint16:
        return 0, 2 ** 16 - 1
    if dtype is torch.int16:
        return -(2 ** 15), 2 ** 15 - 1
    return 0, 15


def _check_min_max_valid(min_val, max_val):
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default "
                      "values.", stacklevel=3)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if min_val.item() == math.inf and max_val.item() == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=3)
            return False
        if not min_val.item() <= max_val.item():
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif not bool(torch.all(min_val <= max_val)):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class ObserverBase(nn.Module):
    """Base of all observers: ``forward`` records statistics and returns its input;
    ``calculate_qparams`` turns them into quantization parameters."""

    def __init__(self, dtype, is_dynamic: bool = False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        """Record statistics of ``x`` and return it unchanged."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def calculate_qparams(self, **kwargs):
        """The quantization parameters for what was observed."""
        raise NotImplementedError(f"{type(self).__name__} must define calculate_qparams")

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


_ALLOWED_DTYPES = (torch.qint8, torch.quint8, torch.quint4x2, torch.qint32, torch.int8,
                   torch.uint8, torch.int16, torch.int32, torch.float8_e5m2,
                   torch.float8_e4m3fn, torch.uint16)


class UniformQuantizationObserverBase(ObserverBase):
    """Common base of the observers for affine/symmetric uniform quantization: holds
    ``qscheme``, the quantized range (``quant_min``/``quant_max``) and ``eps``."""

    _version = 3

    def __init__(self, dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers. reduce_range will be deprecated in a future release of "
                          "PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", torch.tensor([eps]))
        if not (_is_per_tensor(qscheme) or _is_per_channel(qscheme)):
            raise AssertionError(
                "Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                "quantization scheme")
        if self.dtype not in _ALLOWED_DTYPES:
            raise AssertionError(f"Default Observer only works for {_ALLOWED_DTYPES} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if quant_min >= quant_max:
                raise AssertionError("qmin must be strictly less than qmax for user-specified "
                                     "quantization range.")
        self.quant_min, self.quant_max = _calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, self.reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """(scale, zero_point) tensors for per-tensor or per-channel ``min_val``/``max_val``."""
        if not _check_min_max_valid(min_val, max_val):
            return torch.tensor([1.0]), torch.tensor([0])
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = torch.min(min_val, torch.zeros_like(min_val))
        max_pos = torch.max(max_val, torch.zeros_like(max_val))
        zero_point = torch.zeros(min_neg.size(), dtype=torch.int64)
        if self.qscheme in (torch.per_tensor_symmetric, torch.per_channel_symmetric):
            max_pos = torch.max(-min_neg, max_pos)
            scale = max_pos / (float(qmax - qmin) / 2)
            scale = torch.max(scale, self.eps)
            if self.dtype in (torch.quint8, torch.uint8):
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = torch.full(zero_point.size(), mid, dtype=torch.int64)
            elif self.dtype is torch.uint16:
                zero_point = torch.full(zero_point.size(), 2 ** 15, dtype=torch.int64)
        elif self.qscheme is torch.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = torch.where(scale > self.eps, scale, torch.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_pos - min_neg) / float(qmax - qmin)
            scale = torch.max(scale, self.eps)
            zero_point = qmin - torch.round(min_neg / scale).to(torch.int)
            zero_point = torch.clamp(zero_point, qmin, qmax)
        if scale.dim() == 0:
            scale = torch.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            zero_point = torch.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        """Forget the observed range."""
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


class MinMaxObserver(UniformQuantizationObserverBase):
    """Per-tensor qparams from the running minimum and maximum of everything observed."""

    def __init__(self, dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False, **kwargs):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError("MinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and torch.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))
        if qscheme is torch.per_tensor_symmetric and reduce_range and dtype is torch.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        """Fold ``x_orig``'s range into the running min/max; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        cur_min, cur_max = torch.aminmax(x)
        self.min_val.copy_(torch.min(cur_min, self.min_val))
        self.max_val.copy_(torch.max(cur_max, self.max_val))
        return x_orig

    def calculate_qparams(self):
        """(scale, zero_point), each a 1-element tensor."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        """Forget the observed range."""
        self.min_val.copy_(torch.tensor(float("inf")))
        self.max_val.copy_(torch.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Per-tensor qparams from exponential moving averages of the minimum and maximum
    (``min += c * (cur_min - min)``)."""

    def __init__(self, averaging_constant=0.01, dtype=torch.quint8,
                 qscheme=torch.per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                f"MovingAverageMinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                f"and torch.per_tensor_affine. but got: {qscheme}")
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError(
                "MovingAverageMinMaxObserver doesn't support dynamic quantization for averaging "
                f"constant of {averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        """Move the running min/max towards ``x_orig``'s; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if min_val.item() == math.inf and max_val.item() == -math.inf:
            min_val, max_val = torch.aminmax(x)
        else:
            cur_min, cur_max = torch.aminmax(x)
            c = self.averaging_constant
            min_val = min_val + c * (cur_min - min_val)
            max_val = max_val + c * (cur_max - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Per-channel qparams (along ``ch_axis``) from running minima and maxima."""

    def __init__(self, ch_axis=0, dtype=torch.quint8, qscheme=torch.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_channel(qscheme):
            raise NotImplementedError(
                "PerChannelMinMaxObserver's qscheme only support torch.per_channel_symmetric, "
                "torch.per_channel_affine and torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError(
                "PerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", torch.tensor([]))
        self.register_buffer("max_val", torch.tensor([]))
        if qscheme is torch.per_channel_symmetric and reduce_range and dtype is torch.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def _channel_minmax(self, x_orig):
        x = x_orig.detach()
        axes = list(range(x.dim()))
        axes[self.ch_axis], axes[0] = 0, self.ch_axis
        y = torch.flatten(x.permute(axes).to(self.min_val.dtype), start_dim=1)
        return torch.aminmax(y, dim=1)

    def _store(self, min_val, max_val):
        # the buffers change shape on the first batch (torch resizes them in place)
        self.min_val = min_val.clone()
        self.max_val = max_val.clone()

    def forward(self, x_orig):
        """Fold each channel's range of ``x_orig`` into the running min/max."""
        if x_orig.numel() == 0:
            return x_orig
        cur_min, cur_max = self._channel_minmax(x_orig)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            self._store(cur_min, cur_max)
        else:
            self._store(torch.min(cur_min, self.min_val), torch.max(cur_max, self.max_val))
        return x_orig

    def calculate_qparams(self):
        """(scales, zero_points), one per channel."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # the stored vectors decide the buffers' shapes
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                setattr(self, name, torch.empty(state_dict[key].shape))
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def reset_min_max_vals(self):
        """Forget the observed ranges."""
        self.min_val = torch.rand(0)
        self.max_val = torch.rand(0)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel qparams from moving averages of each channel's minimum and maximum."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=torch.quint8,
                 qscheme=torch.per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_channel(qscheme):
            raise NotImplementedError(
                "MovingAveragePerChannelMinMaxObserver's qscheme only support "
                "torch.per_channel_symmetric, torch.per_channel_affine and "
                "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support "
                                      "dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min, quant_max=quant_max,
                         eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        """Move each channel's running min/max towards ``x_orig``'s."""
        if x_orig.numel() == 0:
            return x_orig
        cur_min, cur_max = self._channel_minmax(x_orig)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            self._store(cur_min, cur_max)
        else:
            c = self.averaging_constant
            self._store(self.min_val + c * (cur_min - self.min_val),
                        self.max_val + c * (cur_max - self.max_val))
        return x_orig


class HistogramObserver(UniformQuantizationObserverBase):
    """Per-tensor qparams from a histogram of everything observed: the range is narrowed to
    the one minimising the L2 quantization error (torch's non-linear parameter search)."""

    def __init__(self, bins: int = 2048, dtype=torch.quint8, qscheme=torch.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError("HistogramObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.bins = bins
        self.register_buffer("histogram", torch.zeros(bins))
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))
        self.dst_nbins = 2 ** torch.iinfo(self.dtype).bits
        self.upsample_rate = 16  # finer sub-bins when re-binning onto a wider range

    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        # density * integral of x^2 from delta_begin to delta_end
        return density * ((delta_end * delta_end * delta_end
                           - delta_begin * delta_begin * delta_begin) / 3)

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = torch.arange(self.bins)
        src_begin = (src_bin - next_start_bin) * bin_width
        src_end = src_begin + bin_width
        dst_of_begin = torch.clamp(torch.div(src_begin, dst_bin_width, rounding_mode="floor"),
                                   0, self.dst_nbins - 1)
        dst_of_begin_center = (dst_of_begin + 0.5) * dst_bin_width
        dst_of_end = torch.clamp(torch.div(src_end, dst_bin_width, rounding_mode="floor"),
                                 0, self.dst_nbins - 1)
        density = self.histogram / bin_width
        norm = torch.zeros(self.bins)
        norm += self._get_norm(src_begin - dst_of_begin_center,
                               torch.ones(self.bins) * (dst_bin_width / 2), density)
        norm += (dst_of_end - dst_of_begin - 1) * self._get_norm(
            torch.tensor(-dst_bin_width / 2), torch.tensor(dst_bin_width / 2), density)
        dst_of_end_center = dst_of_end * dst_bin_width + dst_bin_width / 2
        norm += self._get_norm(torch.tensor(-dst_bin_width / 2), src_end - dst_of_end_center,
                               density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        if self.histogram.size()[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = torch.sum(self.histogram).item()
        csum = torch.cumsum(self.histogram, dim=0).numpy()
        step = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        f32 = csum.dtype.type
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            lo_thr, hi_thr = f32(next_alpha * total), f32(next_beta * total)
            l, r = start_bin, end_bin
            while l < end_bin and csum[l] < lo_thr:
                l += 1
            while r > start_bin and csum[r] > hi_thr:
                r -= 1
            next_start, next_end = start_bin, end_bin
            if (l - start_bin) > (end_bin - r):
                next_start = l
                alpha = next_alpha
            else:
                next_end = r
                beta = next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._compute_quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start, next_end
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        rate = self.upsample_rate
        histogram = histogram.repeat_interleave(rate) / rate
        bin_size = (orig_max - orig_min) / (self.bins * rate)
        mids = torch.linspace(orig_min.item(), orig_max.item(), self.bins * rate + 1)[:-1] \
            + 0.5 * bin_size
        bounds = torch.linspace(update_min.item(), update_max.item(), self.bins + 1)
        assign = torch.bucketize(mids, bounds, right=True) - 1
        assign = torch.clamp(assign, 0, self.bins - 1)
        return torch.bincount(assign, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min,
                            update_max):
        if update_min.item() == orig_min.item() and update_max.item() == orig_max.item():
            return orig_hist + update_hist
        if orig_min.item() == orig_max.item():
            value = torch.sum(orig_hist)
            moved = torch.histc(orig_min, bins=self.bins, min=update_min.item(),
                                max=update_max.item()) * value
            return moved + update_hist
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, update_min,
                                                     update_max)

    def reset_histogram(self, x, min_val, max_val):
        """Start a fresh histogram of ``x`` over [min_val, max_val]."""
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        self.histogram.copy_(torch.histc(x, self.bins, min=min_val.item(), max=max_val.item()))

    def forward(self, x_orig):
        """Add ``x_orig`` to the histogram (re-binning it when the range grows)."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = torch.aminmax(x)
        if x_min.item() == -math.inf or x_max.item() == math.inf:
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != math.inf]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = torch.aminmax(x)
        cur_min, cur_max = self.min_val, self.max_val
        if cur_min.item() == math.inf or cur_max.item() == -math.inf:
            self.reset_histogram(x, x_min, x_max)
            return x_orig
        new_min = torch.min(cur_min, x_min)
        new_max = torch.max(cur_max, x_max)
        update = torch.histc(x, self.bins, min=new_min.item(), max=new_max.item())
        if new_min.item() == cur_min.item() and new_max.item() == cur_max.item():
            self.histogram.copy_(self.histogram + update)
        else:
            combined = self._combine_histograms(self.histogram, cur_min, cur_max, update,
                                                new_min, new_max)
            self.histogram.copy_(combined)
            self.min_val.copy_(new_min)
            self.max_val.copy_(new_max)
        return x_orig

    def calculate_qparams(self):
        """(scale, zero_point) for the error-minimising range of the histogram."""
        if self.min_val.item() == math.inf and self.max_val.item() == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default scale and zero point ", stacklevel=2)
            return torch.tensor([1.0]), torch.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the "
                                 "number of bins supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PlaceholderObserver(ObserverBase):
    """Records nothing: carries the dtype (and for dynamic quantization the range) that
    ``convert`` reads."""

    def __init__(self, dtype=torch.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        if qscheme is None:
            qscheme = torch.per_tensor_affine
        if eps is None:
            eps = _EPS
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.qscheme = qscheme
        self.eps = eps
        self.custom_op = custom_op_name
        if compute_dtype:
            self.is_dynamic = True
            warnings.warn("Please use `is_dynamic` instead of `compute_dtype`. `compute_dtype` "
                          "will be deprecated in a future release of PyTorch.", stacklevel=2)

    def forward(self, x):
        """Return ``x`` unchanged."""
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        """Raises: a placeholder has no statistics."""
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


class NoopObserver(ObserverBase):
    """Does nothing (used for float16 dynamic quantization)."""

    def __init__(self, dtype=torch.float16, custom_op_name=""):
        super().__init__(dtype=dtype)
        self.dtype = dtype
        self.custom_op = custom_op_name

    def forward(self, x):
        """Return ``x`` unchanged."""
        return x

    def calculate_qparams(self):
        """Raises: a no-op observer has no statistics."""
        raise Exception("calculate_qparams should not be called for NoopObserver")


class FixedQParamsObserver(ObserverBase):
    """Observes nothing: its qparams are fixed by the op's output range (sigmoid's [0, 1],
    tanh's [-1, 1]), kept as ``scale``/``zero_point`` buffers."""

    def __init__(self, scale, zero_point, dtype=torch.quint8, qscheme=torch.per_tensor_affine,
                 quant_min=0, quant_max=255, is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype)
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer("scale", torch.tensor([scale], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([zero_point], dtype=torch.int))
        self.qscheme = qscheme

    def forward(self, X):
        """Return ``X`` unchanged."""
        return X

    def calculate_qparams(self):
        """The fixed (scale, zero_point)."""
        return self.scale, self.zero_point


def get_observer_state_dict(mod):
    """The observer entries of ``mod``'s state dict (keys containing 'activation_post_process'
    or 'observer')."""
    from collections import OrderedDict
    return OrderedDict((k, v) for k, v in mod.state_dict().items()
                       if "observer" in k or "activation_post_process" in k)


def load_observer_state_dict(mod, obs_dict):
    """Load observer statistics saved with ``get_observer_state_dict``."""
    missing, unexpected = [], []
    for name, module in mod.named_modules():
        prefix = name + "." if name else ""
        if isinstance(module, ObserverBase):
            module._load_from_state_dict(obs_dict, prefix, {}, False, missing, unexpected, [])
    for k in missing:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")
    for k in unexpected:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Unexpected keys for observer {k} in state_dict")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = MinMaxObserver
default_weight_observer = MinMaxObserver.with_args(dtype=torch.qint8,
                                                   qscheme=torch.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=torch.qint8, qscheme=torch.per_tensor_symmetric, quant_min=-127, quant_max=127,
    eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=torch.qint8, qscheme=torch.per_channel_symmetric, quant_min=-127, quant_max=127,
    eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=torch.quint8, quant_min=0, quant_max=255, is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=torch.quint8, qscheme=torch.per_channel_affine_float_qparams, ch_axis=0)

default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=torch.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=torch.quint8, quant_min=0, quant_max=255)
