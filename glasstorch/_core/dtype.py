"""dtype objects and PyTorch's type-promotion rules.

torch promotes differently from NumPy: dtypes are ranked by category
(bool < integer < floating < complex), Python scalars and 0-dim tensors take
part only when they raise the category, and float16 + bfloat16 is float32.
Everything here is table-driven and cached, because promotion sits on the
per-op hot path.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "finfo", "iinfo", "promote_types", "result_type", "can_cast",
    "get_default_dtype", "set_default_dtype",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type. Prints as ``torch.float32`` so reprs match PyTorch's."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex",
                 "is_signed", "_category", "_aliases")

    def __init__(self, name, np_dtype, category, aliases=()):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = name not in ("bool", "uint8")
        self._aliases = aliases

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        """The real counterpart of a complex dtype (complex64 -> float32); other dtypes
        unchanged."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        """The complex dtype holding this floating dtype (float32, float16, bfloat16 -> complex64;
        float64 -> complex128); others unchanged."""
        return {"float32": complex64, "float64": complex128, "float16": complex64,
                "bfloat16": complex64}.get(self.name, self)


bool_ = dtype("bool", np.bool_, _BOOL)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT, ("short",))
int32 = dtype("int32", np.int32, _INT, ("int",))
int64 = dtype("int64", np.int64, _INT, ("long",))
float16 = dtype("float16", np.float16, _FLOAT, ("half",))
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT, ("float",))
float64 = dtype("float64", np.float64, _FLOAT, ("double",))
complex64 = dtype("complex64", np.complex64, _COMPLEX, ("cfloat",))
complex128 = dtype("complex128", np.complex128, _COMPLEX, ("cdouble",))

all_dtypes = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16,
              float32, float64, complex64, complex128)
_by_name = {d.name: d for d in all_dtypes}
_by_np = {d.np: d for d in all_dtypes}
# numpy spells some types differently on some platforms (e.g. longlong vs long).
for _d in all_dtypes:
    _by_np[np.dtype(_d.np.str)] = _d


def _dtype_by_name(name):
    return _by_name[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The glasstorch dtype of a NumPy dtype; TypeError for ones torch lacks."""
    try:
        return _by_np[np_dtype]
    except KeyError:
        pass
    except TypeError:
        np_dtype = np.dtype(np_dtype)
    d = _by_np.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, "
            "int16, int8, uint8, and bool.")
    return d


# ----------------------------------------------------------------------------- promotion

def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca < cb or (ca == cb and a.itemsize < b.itemsize):
        a, b, ca, cb = b, a, cb, ca
    # now a is in the higher (or equal) category
    if cb == _BOOL:
        return a
    if ca == _INT:  # int with int
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return {uint8: uint8, int8: int16}.get(other, other)
        return a
    if ca == _FLOAT:
        if cb == _INT:
            return a
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    # complex
    if cb == _COMPLEX:
        return a
    if cb == _FLOAT and b is float64:
        return complex128
    return a


_promote_table = {(a, b): _promote_pair(a, b) for a in all_dtypes for b in all_dtypes}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` can be cast to, by torch's lattice."""
    return _promote_table[type1, type2]


_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of new floating-point tensors built from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype (float32, float64, float16 or bfloat16); TypeError for
    others."""
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError(
            f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def default_complex_dtype() -> dtype:
    return complex128 if _default[0] is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype torch gives a Python scalar used as a tensor (bool, int64, default float...)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default[0]
    if isinstance(value, complex):
        return default_complex_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"expected a number, but got {type(value).__name__}")


def _combine_categories(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        return higher.to_complex() if higher._category == _FLOAT else lower
    if higher._category == _FLOAT:
        return higher
    if higher is bool_ or lower._category == _FLOAT:
        return _promote_table[higher, lower]
    return higher


def result_dtype(*operands) -> dtype:
    """torch.result_type over any mix of Tensors and Python scalars."""
    dim_r = zero_r = wrapped_r = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim_r = d if dim_r is None else _promote_table[dim_r, d]
            else:
                zero_r = d if zero_r is None else _promote_table[zero_r, d]
        else:
            # Python numbers (and NumPy scalars) are "wrapped numbers": only their
            # category counts, so floats stand for the default dtype.
            d = scalar_dtype(x)
            if d.is_floating_point:
                d = _default[0]
            elif d.is_complex:
                d = default_complex_dtype()
            wrapped_r = d if wrapped_r is None else _promote_table[wrapped_r, d]
    return _combine_categories(dim_r, _combine_categories(zero_r, wrapped_r))


def result_type(tensor, other) -> dtype:
    """torch.result_type: the dtype an arithmetic op on these operands produces."""
    return result_dtype(tensor, other)


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether torch's same-kind casting allows ``from_`` -> ``to`` (no category lowering)."""
    return from_._category <= to._category


# ----------------------------------------------------------------------------- finfo / iinfo

class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    def __init__(self, type: dtype | None = None):
        type = type or get_default_dtype()
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type. "
                            f"Use torch.iinfo to handle '{type}'")
        info = ml_dtypes.finfo(type.to_real().np)
        self.dtype = type.to_real().name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type: dtype):
        if type.is_floating_point or type.is_complex:
            raise TypeError(f"torch.iinfo() requires an integer input type. "
                            f"Use torch.finfo to handle '{type}'")
        info = np.iinfo(type.np) if type is not bool_ else None
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.min = int(info.min) if info else 0
        self.max = int(info.max) if info else 1

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
