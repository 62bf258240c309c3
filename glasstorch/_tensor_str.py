"""Tensor printing (repr/str) in torch's layout.

The layout follows what torch prints, decision for decision:

* One formatter per tensor (two for complex: real and imaginary parts) decides
  the style from the nonzero finite values: integer-valued floats print as
  ``1.``, others with ``precision`` decimals, and scientific notation is used
  when max/min > 1000, max > 1e8 or (for non-integers) min < 1e-4.  Every
  element is right-aligned to the widest nonzero finite value; nan/inf/0 are
  padded to that width but do not widen it.
* Tensors with more than ``threshold`` elements are summarised: only the first
  and last ``edgeitems`` entries of each dimension are formatted (and looked
  at by the formatter), with ``...`` in between.
* Rows wrap to ``linewidth`` columns; suffixes (``size=``, ``dtype=``,
  ``requires_grad=``/``grad_fn=``) go on a new line when they do not fit.
"""

from __future__ import annotations

import math

from ._core import dtype as _dt
from ._core.backend import xp

__all__ = ["set_printoptions", "get_printoptions"]


class _PrintOptions:
    """The process-wide print settings (torch keeps them global too)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set tensor print options.

    ``profile`` ('default', 'short', 'full') sets precision, threshold, edgeitems
    and linewidth first; the explicit arguments then override it. Like torch, an
    unknown profile name is ignored and ``sci_mode`` is always assigned (None means
    choose automatically).
    """
    opts = PRINT_OPTS
    preset = _PROFILES.get(profile) if profile is not None else None
    if preset is not None:
        opts.precision, opts.threshold, opts.edgeitems, opts.linewidth = preset
    if precision is not None:
        opts.precision = precision
    if threshold is not None:
        opts.threshold = threshold
    if edgeitems is not None:
        opts.edgeitems = edgeitems
    if linewidth is not None:
        opts.linewidth = linewidth
    opts.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as a dict that can be passed to set_printoptions()."""
    opts = PRINT_OPTS
    return {"precision": opts.precision, "threshold": opts.threshold,
            "edgeitems": opts.edgeitems, "linewidth": opts.linewidth,
            "sci_mode": opts.sci_mode}


class printoptions:
    """Context manager that sets print options and restores the previous ones on exit."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __enter__(self):
        self._saved = get_printoptions()
        set_printoptions(**self._kwargs)

    def __exit__(self, *exc):
        set_printoptions(**self._saved)
        return False


# ----------------------------------------------------------------------------- formatters

class _IntFormatter:
    """Integers and bools: ``str(value)`` right-aligned to the widest value."""

    __slots__ = ("width",)

    def __init__(self, values):
        # Only the extremes can be the widest (most digits, or a minus sign).
        if values.size:
            self.width = max(1, len(str(values.max().item())), len(str(values.min().item())))
        else:
            self.width = 1

    def format(self, value):
        s = str(value)
        return " " * (self.width - len(s)) + s


class _FloatFormatter:
    """Real floating values; chooses integer / fixed / scientific style like torch."""

    __slots__ = ("width", "int_mode", "sci_mode", "precision")

    def __init__(self, values, chosen=None):
        self.precision = prec = PRINT_OPTS.precision
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        # ``chosen``: which values decide the style (default: the nonzero finite ones)
        vals = values[xp.isfinite(values) & (values != 0) if chosen is None else chosen]
        if vals.size:
            mags = xp.abs(vals).astype(xp.float64)
            lo = float(mags.min())
            hi = float(mags.max())
            self.int_mode = bool((vals == xp.ceil(vals)).all())
            sci = hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)
            # A forced sci_mode overrides the choice; widths follow the final style.
            self.sci_mode = sci if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
            floats = vals.tolist()
            if self.sci_mode:
                self.width = max(len(f"{v:.{prec}e}") for v in floats)
            elif self.int_mode:
                # the trailing "." marks the values as floating point
                self.width = max(len(f"{v:.0f}") for v in floats) + 1
            else:
                self.width = max(len(f"{v:.{prec}f}") for v in floats)
        # (with no nonzero finite value torch keeps the integer style even if sci_mode is set)

    def format(self, value):
        if self.sci_mode:
            s = f"{value:{self.width}.{self.precision}e}"
        elif self.int_mode:
            s = f"{value:.0f}"
            if math.isfinite(value):
                s += "."
        else:
            s = f"{value:.{self.precision}f}"
        return " " * (self.width - len(s)) + s


class _ComplexFormatter:
    """Complex values: separate real and imaginary formatters, printed as ``re+imj``."""

    __slots__ = ("real", "imag", "width")

    def __init__(self, values):
        self.real = _FloatFormatter(values.real)
        self.imag = _FloatFormatter(values.imag)
        # element width: real part, imaginary part and the "j"
        self.width = self.real.width + self.imag.width + 1

    def format(self, value):
        re = self.real.format(value.real)
        im = (self.imag.format(value.imag) + "j").lstrip()
        if im[0] in "+-":
            return re + im
        return re + "+" + im


def _summarized(arr, edge):
    """Only the edge entries of every dimension longer than ``2 * edge``."""
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            idx = list(range(edge)) + list(range(n - edge, n))
            arr = arr.take(idx, axis=axis)
    return arr


def _formatter_for(arr):
    kind = arr.dtype.kind
    if kind == "c":
        return _ComplexFormatter(arr)
    if kind == "f":
        return _FloatFormatter(arr)
    return _IntFormatter(arr)


# ----------------------------------------------------------------------------- layout

def _vector_str(arr, indent, summarize, fmt, opts):
    per_line = max(1, int(math.floor((opts.linewidth - indent) / (fmt.width + 2))))
    edge = opts.edgeitems
    form = fmt.format
    if summarize and arr.shape[0] > 2 * edge:
        items = [form(v) for v in arr[:edge].tolist()] + [" ..."] + \
            [form(v) for v in arr[-edge:].tolist()]
    else:
        items = [form(v) for v in arr.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(arr, indent, summarize, fmt, opts):
    ndim = arr.ndim
    if ndim == 0:
        return fmt.format(arr.item())
    if ndim == 1:
        return _vector_str(arr, indent, summarize, fmt, opts)
    n = arr.shape[0]
    edge = opts.edgeitems
    if summarize and n > 2 * edge:
        parts = [_nd_str(arr[i], indent + 1, summarize, fmt, opts) for i in range(edge)]
        parts.append("...")
        parts += [_nd_str(arr[i], indent + 1, summarize, fmt, opts) for i in range(n - edge, n)]
    else:
        parts = [_nd_str(arr[i], indent + 1, summarize, fmt, opts) for i in range(n)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


# half precision and float8 are printed through float32 (exact), like torch does
_VIA_FLOAT32 = _dt._ByNp({d: True for d in (_dt.float16, _dt.bfloat16) + _dt.float8_dtypes})


def _body_str(arr, indent):
    opts = PRINT_OPTS
    summarize = arr.size > opts.threshold
    if summarize and not opts.edgeitems and arr.ndim:
        return "[...]"
    sample = _summarized(arr, opts.edgeitems) if summarize else arr
    if _VIA_FLOAT32.get(arr.dtype):
        arr = arr.astype(xp.float32)
    if _dt._by_np.get(sample.dtype) is _dt.float8_e8m0fnu:
        # torch picks the style comparing in float8_e8m0fnu itself, where 0 rounds to 2**-127
        # (so 2**-127 counts as zero) and isfinite is True even for NaN
        fmt = _FloatFormatter(sample.astype(xp.float32), chosen=sample.view(xp.uint8) != 0)
    else:
        fmt = _formatter_for(sample.astype(arr.dtype, copy=False))
    return _nd_str(arr, indent, summarize, fmt, opts)


def _add_suffixes(text, suffixes, indent, linewidth):
    out = [text]
    # torch measures the last line this way (2 too long when there is no newline)
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > linewidth:
            out.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t):
    """``repr(t)``/``str(t)`` exactly as torch prints a CPU tensor."""
    arr = t._data
    dtype = _dt._by_np[arr.dtype]
    default = _dt.get_default_dtype()
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    cls = type(t)
    # subclasses print their own name (Parameter's repr adds its own header instead)
    prefix = "tensor(" if cls is Tensor or cls is Parameter else cls.__name__ + "("
    indent = len(prefix)
    suffixes = []
    if t.is_meta:  # no values to print: the device, the size, any dtype but the default
        suffixes += ["device='meta'", f"size={tuple(arr.shape)}"]
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "..."
    elif arr.size == 0:
        # numpy prints the shape of empty tensors unless it is (0,)
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        # no elements to infer the dtype from, so anything but the default is named
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype is not default and dtype is not _dt.int64 and dtype is not _dt.bool_ and \
                dtype is not (_dt.complex128 if default is _dt.float64 else _dt.complex64):
            suffixes.append(f"dtype={dtype}")
        body = _body_str(arr, indent)
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, PRINT_OPTS.linewidth)
