"""dtype objects and PyTorch's type-promotion rules.

torch promotes differently from NumPy: dtypes are ranked by category
(bool < integer < floating < complex), Python scalars and 0-dim tensors take
part only when they raise the category, and float16 + bfloat16 is float32.
Everything here is table-driven and cached, because promotion sits on the
per-op hot path.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "dtype", "finfo", "iinfo", "promote_types", "result_type", "can_cast",
    "get_default_dtype", "set_default_dtype",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type. Prints as ``torch.float32`` so reprs match PyTorch's."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex",
                 "is_signed", "_category", "_aliases", "_limited")

    def __init__(self, name, np_dtype, category, aliases=(), signed=None, limited=False,
                 itemsize=None):
        self.name = name
        if np_dtype is not None:  # None: an ml_dtypes type, set when ml_dtypes loads
            self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self._category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = (name not in ("bool", "uint8")) if signed is None else signed
        self._aliases = aliases
        # the "barebones" dtypes (uint16/32/64, float8): torch promotes them with almost
        # nothing and has kernels for only a few ops on them
        self._limited = limited

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
        float64 -> complex128); complex dtypes unchanged; RuntimeError for the others, as torch."""
        if self._category == _COMPLEX:
            return self
        c = {"float32": complex64, "float64": complex128, "float16": complex64,
             "bfloat16": complex64}.get(self.name)
        if c is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(self)}")
        return c


class _MlDtype(dtype):
    """A dtype whose NumPy type comes from ml_dtypes (bfloat16, the float8 formats). Importing
    ml_dtypes costs about half of ``import glasstorch``, so it happens the first time such a
    type is needed: reading ``.np``, or meeting an array of one (``_by_np`` lookups)."""

    __slots__ = ()

    def __getattr__(self, name):
        if name == "np":
            _load_ml_dtypes()
            return object.__getattribute__(self, "np")
        raise AttributeError(f"'torch.dtype' object has no attribute '{name}'")


def _load_ml_dtypes():
    global _F8_NP, _UNSIGNED_NAN
    if _F8_NP:
        return
    import ml_dtypes
    for d in _ML_DTYPES:
        d.np = np.dtype(getattr(ml_dtypes, d.name))
    _F8_NP = frozenset(d.np for d in float8_dtypes)
    _UNSIGNED_NAN = frozenset(d.np for d in (float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu))
    for table in _NP_TABLES:
        table._add_ml_dtypes()
    _by_np[np.dtype(bfloat16.np.str)] = bfloat16  # as for the other types' spellings


class _ByNp(dict):
    """A dict keyed by NumPy dtypes, built from ``{glasstorch dtype: value}``; the entries of
    ml_dtypes' types appear when ml_dtypes loads, which a missed lookup triggers."""

    def __init__(self, by_dtype=()):
        super().__init__()
        self._by_dtype = dict(by_dtype)
        for d, v in self._by_dtype.items():
            if not isinstance(d, _MlDtype):
                self[d.np] = v
        _NP_TABLES.append(self)
        if _F8_NP:  # ml_dtypes already loaded
            self._add_ml_dtypes()

    def _add_ml_dtypes(self):
        for d, v in self._by_dtype.items():
            if isinstance(d, _MlDtype):
                self[d.np] = v

    def __missing__(self, key):  # (``get`` does not load: use it only after a lookup has)
        if _F8_NP:
            raise KeyError(key)
        _load_ml_dtypes()
        return dict.__getitem__(self, key)


_NP_TABLES = []
_F8_NP = _UNSIGNED_NAN = frozenset()  # filled when ml_dtypes loads

bool_ = dtype("bool", np.bool_, _BOOL)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT, ("short",))
int32 = dtype("int32", np.int32, _INT, ("int",))
int64 = dtype("int64", np.int64, _INT, ("long",))
float16 = dtype("float16", np.float16, _FLOAT, ("half",))
bfloat16 = _MlDtype("bfloat16", None, _FLOAT, itemsize=2)
float32 = dtype("float32", np.float32, _FLOAT, ("float",))
float64 = dtype("float64", np.float64, _FLOAT, ("double",))
complex64 = dtype("complex64", np.complex64, _COMPLEX, ("cfloat",))
complex128 = dtype("complex128", np.complex128, _COMPLEX, ("cdouble",))
uint16 = dtype("uint16", np.uint16, _INT, signed=False, limited=True)
uint32 = dtype("uint32", np.uint32, _INT, signed=False, limited=True)
uint64 = dtype("uint64", np.uint64, _INT, signed=False, limited=True)
float8_e4m3fn = _MlDtype("float8_e4m3fn", None, _FLOAT, limited=True, itemsize=1)
float8_e5m2 = _MlDtype("float8_e5m2", None, _FLOAT, limited=True, itemsize=1)
float8_e4m3fnuz = _MlDtype("float8_e4m3fnuz", None, _FLOAT, limited=True, itemsize=1)
float8_e5m2fnuz = _MlDtype("float8_e5m2fnuz", None, _FLOAT, limited=True, itemsize=1)
# a bare power-of-two exponent: no sign bit, no zero
float8_e8m0fnu = _MlDtype("float8_e8m0fnu", None, _FLOAT, signed=False, limited=True,
                          itemsize=1)

float8_dtypes = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
_ML_DTYPES = (bfloat16,) + float8_dtypes


class _QuantizedDtype(dtype):
    """A quantized element type (``torch.quint8``...): integers standing for
    ``scale * (q - zero_point)``. ``int_dtype`` is the plain integer dtype of its values
    (``int_repr``), ``qmin``/``qmax`` their range. torch refuses ``is_signed`` on these."""

    __slots__ = ("int_dtype", "qmin", "qmax")

    def __init__(self, name, int_dtype, qmin, qmax):
        self.name = name
        self.np = int_dtype.np
        self.itemsize = int_dtype.itemsize
        self._category = _INT  # never promoted: the promotion table has no quantized pairs
        self.is_floating_point = self.is_complex = False
        self._aliases = ()
        self._limited = True
        self.int_dtype, self.qmin, self.qmax = int_dtype, qmin, qmax

    @property
    def is_signed(self):
        """Raises RuntimeError, as torch does for quantized dtypes."""
        raise RuntimeError("isSignedType not supported for quantized types")


quint8 = _QuantizedDtype("quint8", uint8, 0, 255)
qint8 = _QuantizedDtype("qint8", int8, -128, 127)
qint32 = _QuantizedDtype("qint32", int32, -(2 ** 31), 2 ** 31 - 1)
# two 4-bit values per byte, low nibble first
quint4x2 = _QuantizedDtype("quint4x2", uint8, 0, 15)
quantized_dtypes = (quint8, qint8, qint32, quint4x2)
all_dtypes = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16,
              float32, float64, complex64, complex128, uint16, uint32, uint64) + float8_dtypes
_by_name = {d.name: d for d in all_dtypes + quantized_dtypes}
_by_np = _ByNp({d: d for d in all_dtypes})
# numpy spells some types differently on some platforms (e.g. longlong vs long).
for _d in all_dtypes:
    if not isinstance(_d, _MlDtype):
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
            "int16, int8, uint64, uint32, uint16, uint8, and bool.")
    return d


# ----------------------------------------------------------------------------- promotion

def _promote_pair(a: dtype, b: dtype) -> dtype | None:
    if a is b:
        return a
    if a._limited or b._limited:
        # torch promotes the barebones dtypes only as uint16/32/64 with the four real floats
        u, other = (a, b) if a._limited else (b, a)
        if u._category == _INT and not other._limited and other._category == _FLOAT:
            return other
        return None
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


class _PromotionTable(dict):
    """(dtype, dtype) -> promoted dtype; pairs torch refuses to promote are absent, and looking
    one up raises torch's RuntimeError (a plain dict lookup on the hot path otherwise)."""

    def __missing__(self, key):
        a, b = key
        if a in quantized_dtypes or b in quantized_dtypes:
            raise RuntimeError(
                "promoteTypes with quantized numbers is not handled yet; figure out what the "
                f"correct rules should be, offending types: {scalar_type_name(a)} "
                f"{scalar_type_name(b)}")
        kind = ("Float8 Types" if a in float8_dtypes or b in float8_dtypes
                else "uint16, uint32, uint64 types")
        raise RuntimeError(f"Promotion for {kind} is not supported, attempted to promote "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)}")


_promote_table = _PromotionTable(
    ((a, b), r) for a in all_dtypes for b in all_dtypes
    if (r := _promote_pair(a, b)) is not None)


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both ``type1`` and ``type2`` can be cast to, by torch's lattice;
    RuntimeError for the pairs torch does not promote (float8 with anything else; uint16/32/64
    with anything but float16, bfloat16, float32 and float64)."""
    return _promote_table[type1, type2]


# torch's C++ ScalarType names, used in its error messages ("not implemented for 'UInt16'")
_SCALAR_TYPE_NAMES = {
    bool_: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int", int64: "Long",
    float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double",
    complex64: "ComplexFloat", complex128: "ComplexDouble", uint16: "UInt16",
    uint32: "UInt32", uint64: "UInt64", float8_e4m3fn: "Float8_e4m3fn",
    float8_e5m2: "Float8_e5m2", float8_e4m3fnuz: "Float8_e4m3fnuz",
    float8_e5m2fnuz: "Float8_e5m2fnuz", float8_e8m0fnu: "Float8_e8m0fnu",
    quint8: "QUInt8", qint8: "QInt8", qint32: "QInt32", quint4x2: "QUInt4x2",
}


def scalar_type_name(d: dtype) -> str:
    """torch's ScalarType name of ``d`` as its error messages spell it (float32 -> 'Float')."""
    return _SCALAR_TYPE_NAMES[d]


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


# ----------------------------------------------------------------------------- conversions

_F32, _U8, _U32 = np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.uint32)
# _F8_NP: the float8 formats; _UNSIGNED_NAN: those whose NaN has no sign (a single NaN
# encoding, or no sign bit at all); both set by _load_ml_dtypes


def cast_array(arr, to: dtype):
    """A new array holding ``arr`` converted to ``to`` with torch's conversion rules.

    torch converts to a float8 format from float32 (a float64 is rounded to float32 first) and
    rounds to nearest-even like ml_dtypes, but differs from ml_dtypes on the edges: it
    saturates float8_e4m3fn (out-of-range values and infinities become +-448), writes NaN as
    0x7F/0xFF in float8_e4m3fn and float8_e5m2 (keeping the sign), and takes float8_e8m0fnu
    from the float32 exponent bits, rounding half up on the mantissa, with 0 becoming 2**-127
    and the sign dropped. Other conversions are NumPy's (or ml_dtypes') own cast.
    """
    target = to.np
    if target not in _F8_NP or arr.dtype == target:
        if np.can_cast(arr.dtype, target):  # widening: nothing to overflow (and errstate
            return arr.astype(target, order="K")  # costs more than a small cast)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf/NaN is the result
            return arr.astype(target, order="K")
    with np.errstate(over="ignore", invalid="ignore"):
        return _to_float8(arr, to, target)


def _to_float8(arr, to, target):
    src = arr if arr.dtype == _F32 else arr.astype(_F32, order="K")
    if to is float8_e8m0fnu:
        b = src.view(_U32) & 0x7FFFFFFF
        exp, mant = b >> 23, b & 0x7FFFFF
        up = (mant > 0x400000) | ((mant == 0x400000) & (exp != 0))
        # exponent 0xFF (inf, NaN) and anything rounding past 2**127 is NaN (0xFF)
        return np.minimum(exp + up, 0xFF).astype(_U8).view(target)
    if to is float8_e4m3fn:
        out = np.clip(src, -448.0, 448.0).astype(target)  # NaN stays NaN
    else:
        out = src.astype(target)
    if to is float8_e4m3fn or to is float8_e5m2:
        nan = np.isnan(src)
        if nan.any():
            neg = np.signbit(src[nan]) if arr.dtype not in _UNSIGNED_NAN else False
            out.view(_U8)[nan] = np.where(neg, 0xFF, 0x7F)
    return out



# ----------------------------------------------------------------------------- finfo / iinfo

class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    def __init__(self, type: dtype | None = None):
        type = type or get_default_dtype()
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type. "
                            f"Use torch.iinfo to handle '{type}'")
        import ml_dtypes
        info = ml_dtypes.finfo(type.to_real().np)
        self.dtype = type.to_real().name
        self.bits = int(info.bits)
        # torch reports 2**-3 for float8_e5m2fnuz (its numeric_limits), not 2**-2
        self.eps = 0.125 if type is float8_e5m2fnuz else float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        # torch: 10 ** -(decimal digits the mantissa holds), so 1.0 for the float8 formats
        self.resolution = 10.0 ** -math.floor(info.nmant * math.log10(2))

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
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.min = int(info.min)
        self.max = int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
