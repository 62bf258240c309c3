"""glasstorch.nn.attention: choosing the kernel behind ``scaled_dot_product_attention``
(``SDPBackend``, ``sdpa_kernel``), as torch.nn.attention; ``flex_attention`` lives in the
submodule of that name.

On the CPU, torch (and glasstorch) have two of the backends: ``FLASH_ATTENTION`` (the fused
CPU kernel, used when its constraints hold: 4-D inputs, no dropout, same batch size and head
count, a 2-D or 4-D mask...) and ``MATH`` (the composite path that runs everything). The
others (``EFFICIENT_ATTENTION``, ``CUDNN_ATTENTION``, ``OVERRIDEABLE``) are CUDA-only:
enabling only them leaves SDPA without a kernel, and it raises as torch does.

torch's CausalBias (``torch.nn.attention.bias``) and its registry of CUDA flash-attention
implementations are not provided.
"""

from __future__ import annotations

import contextlib
import enum
import warnings

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

# torch's switch: warn with the reasons whenever a fused kernel cannot be used (read by
# torch only for its CausalBias attention masks, which glasstorch does not have)
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels ``scaled_dot_product_attention`` can run on, with torch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__

    def __hash__(self):
        return hash(self.value)


_REAL_BACKENDS = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                  SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)

# process-wide state, as torch's global context: the enabled backends and their priority
_enabled = set(_REAL_BACKENDS)
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]


def _cur_sdpa_kernel_backends(with_priority=False):
    """The enabled backends (in priority order with ``with_priority``)."""
    out = [b for b in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                       SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.OVERRIDEABLE)
           if b in _enabled]
    if with_priority:
        out.sort(key=_priority.index)
    return out


def _sdpa_kernel(backends, set_priority=False):
    """Enable exactly ``backends``; with ``set_priority`` they also go first, in order."""
    global _priority
    _enabled.clear()
    _enabled.update(b for b in _REAL_BACKENDS if b in backends)
    if set_priority:
        first = [b for b in backends if b in _REAL_BACKENDS]
        _priority = first + [b for b in _priority if b not in first]
    _install_choice()


def _install_choice():
    # SDPA consults the backends only while one it can run on the CPU is disabled, so the
    # default path costs nothing
    from ..._ops import attention
    cpu_both = SDPBackend.MATH in _enabled and SDPBackend.FLASH_ATTENTION in _enabled
    attention._backend_choice = None if cpu_both else _choose_cpu_kernel


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Context manager: ``scaled_dot_product_attention`` may only use ``backends`` (an
    ``SDPBackend`` or a list of them) inside it; ``set_priority=True`` also tries them in
    the given order. The previous backends are restored on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


def _sizes(t):
    return list(t.shape)


def _flash_obstacle(query, key, value, attn_mask, dropout_p, enable_gqa, mask_grad):
    """Why torch's fused CPU kernel cannot take these inputs (its message; ``""`` when it
    gives none), or None when it can. The checks run in torch's order; the first fails."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not (query.dim() == key.dim() == value.dim() == 4):
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {query.dim()}, Key dim: {key.dim()}, Value dim: {value.dim()} "
                f"instead.")
    hint = ("To broadcast dense inputs, try using unsqueeze and expand_to before passing them "
            "into the kernel.")
    if not (query.shape[0] == key.shape[0] == value.shape[0]):
        return (f"For dense inputs, both fused kernels require query, key and value to have the "
                f"same batch_size. Query.sizes(): {_sizes(query)}, Key.sizes(): {_sizes(key)}, "
                f"Value.sizes(): {_sizes(value)} instead. {hint}")
    hq, hk, hv = query.shape[1], key.shape[1], value.shape[1]
    if enable_gqa and hk != hv:
        return (f"Both fused kernels require key and value to have the same num_heads and "
                f"batch_size but got: Key sizes: {_sizes(key)}, Value sizes: {_sizes(value)}, "
                f"Query sizes: {_sizes(query)} instead.")
    if enable_gqa and hq % hk:
        return (f"The number of heads in key/value must divide number of heads in query.Got "
                f"input Key sizes(): {hk}, Value sizes(): {hv}, Query sizes(): {hq} instead.")
    if not enable_gqa and not hq == hk == hv:
        return (f"For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. Query.sizes(): {_sizes(query)}, Key sizes(): {_sizes(key)}, "
                f"Value sizes(): {_sizes(value)} instead. {hint}")
    if attn_mask is not None and attn_mask.dim() not in (2, 4):
        return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x "
                "{KV_seq_len, 1}); 4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x "
                "{KV_seq_len, 1})")
    e = (query.shape[-1], key.shape[-1], value.shape[-1])
    if not e[0] == e[1] == e[2]:
        return (f"Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {e[0]}, Key.size(-1): {e[1]}, Value.size(-1): {e[2]} "
                f"instead.")
    strides = (query.stride(-1), key.stride(-1), value.stride(-1))
    if strides != (1, 1, 1):
        return (f"All fused kernels require the last dimension of the input to have stride 1. "
                f"Got Query.stride(-1): {strides[0]}, Key.stride(-1): {strides[1]}, "
                f"Value.stride(-1): {strides[2]}")
    if mask_grad:  # a mask that needs a gradient goes to the math path, without a message
        return ""
    return None


def _choose_cpu_kernel(fused, query, key, value, attn_mask, dropout_p, enable_gqa,
                       mask_grad):
    """Called by SDPA while ``sdpa_kernel`` has disabled the flash or the math kernel:
    whether to run the fused kernel, or raise torch's error when no enabled one can run."""
    flash = SDPBackend.FLASH_ATTENTION in _enabled
    math_ok = SDPBackend.MATH in _enabled
    if not (flash or math_ok):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                           "This is likely due to turning off both the math kernel and the "
                           "fused kernels.")
    if flash:
        obstacle = _flash_obstacle(query, key, value, attn_mask, dropout_p, enable_gqa,
                                   mask_grad)
        if obstacle is None:
            return fused
        if not math_ok:
            warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
            if obstacle:
                warnings.warn(obstacle, UserWarning, stacklevel=3)
            raise RuntimeError("No available kernel.  Aborting execution.")
    return False
