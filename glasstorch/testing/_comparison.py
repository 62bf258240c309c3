"""``assert_close``: torch.testing's comparison of tensors, scalars and nested containers.

The comparison runs in two passes, as torch's does: first the two inputs are walked together
and split into leaf pairs (a structural problem - sequences of different lengths, mappings
with different keys, inputs no pair kind accepts, a lone tolerance - fails at once), then each
pair is compared and the first mismatch is raised. A leaf pair is the first of these kinds
that accepts the inputs: both ``None``, both booleans, both numbers, or two tensor-likes of
directly related types (anything ``as_tensor`` accepts, e.g. NumPy arrays).
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings

import glasstorch

__all__ = ["assert_allclose", "assert_close", "default_tolerances"]

# (rtol, atol) by dtype; every other dtype (integers, bool) is compared exactly
_TOLERANCES = {
    glasstorch.float16: (1e-3, 1e-5),
    glasstorch.bfloat16: (1.6e-2, 1e-5),
    glasstorch.float32: (1.3e-6, 1e-5),
    glasstorch.float64: (1e-7, 1e-7),
    glasstorch.complex64: (1.3e-6, 1e-5),
    glasstorch.complex128: (1e-7, 1e-7),
}

# the dtype whose tolerances a Python number gets
_NUMBER_DTYPES = {int: glasstorch.int64, float: glasstorch.float64,
                  complex: glasstorch.complex128}


class _Failure(Exception):
    """A failed check: the exception type to raise, its message, and the path of container
    keys/indices leading to the leaf where it happened."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, tuple(path)

    def to_error(self, msg=None):
        """The user-facing exception; a string ``msg`` replaces the whole message, a
        callable one receives the generated message (with its location) and returns it."""
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _NotMine(Exception):
    """Raised by a pair kind that does not accept the given inputs: the next kind is tried."""


def default_tolerances(*inputs, dtype_precisions=None):
    """The loosest ``(rtol, atol)`` of the dtypes of ``inputs`` (tensors or dtypes)."""
    table = dtype_precisions or _TOLERANCES
    rtols, atols = [], []
    for item in inputs:
        if isinstance(item, glasstorch.Tensor):
            item = item.dtype
        elif not isinstance(item, glasstorch.dtype):
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(item)} "
                            f"instead.")
        r, a = table.get(item, (0.0, 0.0))
        rtols.append(r)
        atols.append(a)
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, path):
    if (rtol is None) != (atol is None):
        # one tolerance alone would be silently loosened or tightened by the other's default
        missing = "rtol" if rtol is None else "atol"
        raise _Failure(ValueError, f"Both 'rtol' and 'atol' must be either specified or "
                                   f"omitted, but got no {missing}.", path)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _difference_lines(abs_diff, abs_at, atol, rel_diff, rel_at, rtol):
    exact = rtol == 0 and atol == 0
    lines = []
    for kind, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        if at is None:
            line = f"{kind.title()} difference: {diff}"
        else:
            line = f"Greatest {kind} difference: {diff} at index {at}"
        if not exact:
            line += f" (up to {tol} allowed)"
        lines.append(line)
    return "close" if not exact else "equal", lines


def _mismatch_message(identifier, default, extra, abs_diff, abs_at, atol, rel_diff, rel_at,
                      rtol):
    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    word, lines = _difference_lines(abs_diff, abs_at, atol, rel_diff, rel_at, rtol)
    return f"{identifier} are not {word}!\n\n{extra}\n" + "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol, identifier=None):
    diff = abs(actual - expected)
    rel = math.inf if expected == 0 else diff / abs(expected)
    return _mismatch_message(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                             diff, None, atol, rel, None, rtol)


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        index.append(rem)
    return tuple(reversed(index))


def _tensor_message(actual, expected, matches, rtol, atol, identifier=None):
    total = matches.numel()
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, ok = actual.flatten(), expected.flatten(), matches.flatten()
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        # differences of integers (and booleans) are taken in int64 so they cannot wrap
        a, e = a.to(glasstorch.int64), e.to(glasstorch.int64)
    abs_diff = (a - e).abs()
    abs_diff[ok] = 0  # matching elements must not win the maximum
    worst_abs, abs_at = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[ok] = 0
    worst_rel, rel_at = rel_diff.max(0)
    shape = tuple(matches.shape)
    return _mismatch_message(identifier, "Tensor-likes", extra, worst_abs.item(),
                             _unravel(int(abs_at), shape), atol, worst_rel.item(),
                             _unravel(int(rel_at), shape), rtol)


class _Pair:
    """Two leaves to compare, with the path leading to them."""

    def __init__(self, actual, expected, path):
        self.actual, self.expected, self.path = actual, expected, path

    def fail(self, message, kind=AssertionError):
        """Raise a failure of this pair."""
        raise _Failure(kind, message, self.path)

    def __repr__(self):
        return (f"{type(self).__name__}(path={self.path}, actual={self.actual}, "
                f"expected={self.expected})")


class _NonePair(_Pair):
    def __init__(self, actual, expected, path, **options):
        if actual is not None and expected is not None:
            raise _NotMine
        super().__init__(actual, expected, path)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self.fail(f"None mismatch: {self.actual} is not {self.expected}")


def _bool_types():
    import numpy
    return (bool, numpy.bool_)


class _BoolPair(_Pair):
    def __init__(self, actual, expected, path, **options):
        kinds = _bool_types()
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _NotMine
        super().__init__(bool(actual), bool(expected), path)

    def compare(self):
        if self.actual is not self.expected:
            self.fail(f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual, expected, path, *, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **options):
        import numpy
        kinds = (int, float, complex, numpy.number)
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _NotMine
        actual, expected = (x.item() if isinstance(x, numpy.number) else x
                            for x in (actual, expected))
        super().__init__(actual, expected, path)
        # a bool (or other int subclass) paired with a number has no dtype: a KeyError here
        # becomes the RuntimeError torch raises for it
        dtypes = [_NUMBER_DTYPES[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(dtypes, rtol, atol, path)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self.fail(f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        self.fail(_scalar_message(a, e, self.rtol, self.atol))


def _sparse_compressed_layouts():
    # (layout, format name, compressed indices method, plain indices method)
    out = []
    for name, fmt, comp, plain in (("sparse_csr", "CSR", "crow_indices", "col_indices"),
                                   ("sparse_csc", "CSC", "ccol_indices", "row_indices"),
                                   ("sparse_bsr", "BSR", "crow_indices", "col_indices"),
                                   ("sparse_bsc", "BSC", "ccol_indices", "row_indices")):
        layout = getattr(glasstorch, name, None)
        if layout is not None:
            out.append((layout, fmt, comp, plain))
    return out


class _TensorPair(_Pair):
    def __init__(self, actual, expected, path, *, allow_subclasses=True, rtol=None,
                 atol=None, equal_nan=False, check_device=True, check_dtype=True,
                 check_layout=True, check_stride=False, **options):
        # only directly related types are paired (a tensor and an ndarray are not)
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _NotMine
        if not allow_subclasses and type(actual) is not type(expected):
            raise _NotMine
        actual, expected = self._as_tensor(actual), self._as_tensor(expected)
        super().__init__(actual, expected, path)
        self.rtol, self.atol = _tolerances((actual.dtype, expected.dtype), rtol, atol, path)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _as_tensor(x):
        if isinstance(x, glasstorch.Tensor):
            return x
        try:
            return glasstorch.as_tensor(x)
        except Exception:
            raise _NotMine from None

    def _attribute_mismatch(self, name, a, e):
        self.fail(f"The values for attribute '{name}' do not match: {a} != {e}.")

    def compare(self):
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._attribute_mismatch("shape", a.shape, e.shape)
        qa, qe = getattr(a, "is_quantized", False), getattr(e, "is_quantized", False)
        if qa != qe:
            self._attribute_mismatch("is_quantized", qa, qe)
        if a.layout != e.layout:
            if self.check_layout:
                self._attribute_mismatch("layout", a.layout, e.layout)
        elif (a.layout == glasstorch.strided and self.check_stride
              and a.stride() != e.stride()):
            self._attribute_mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._attribute_mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._attribute_mismatch("dtype", a.dtype, e.dtype)
        a, e = self._equalize(a, e)
        self._compare_values(a, e)

    @staticmethod
    def _equalize(a, e):
        # what the disabled checks allow to differ is made equal before comparing values
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            common = glasstorch.promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        if a.layout != e.layout:
            a = a if a.layout == glasstorch.strided else a.to_dense()
            e = e if e.layout == glasstorch.strided else e.to_dense()
        return a, e

    def _compare_values(self, a, e):
        tol = dict(rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)
        if a.layout == glasstorch.sparse_coo:
            if a.sparse_dim() != e.sparse_dim():
                self.fail(f"The number of sparse dimensions in sparse COO tensors does not "
                          f"match: {a.sparse_dim()} != {e.sparse_dim()}")
            if a._nnz() != e._nnz():
                self.fail(f"The number of specified values in sparse COO tensors does not "
                          f"match: {a._nnz()} != {e._nnz()}")
            self._values_close(a._indices(), e._indices(), rtol=0, atol=0, equal_nan=False,
                               identifier="Sparse COO indices")
            self._values_close(a._values(), e._values(), identifier="Sparse COO values", **tol)
            return
        for layout, fmt, comp, plain in _sparse_compressed_layouts():
            if a.layout != layout:
                continue
            if a._nnz() != e._nnz():
                self.fail(f"The number of specified values in sparse {fmt} tensors does not "
                          f"match: {a._nnz()} != {e._nnz()}")
            ca, ce = getattr(a, comp)(), getattr(e, comp)()
            index_dtype = glasstorch.promote_types(ca.dtype, ce.dtype)
            self._values_close(ca.to(index_dtype), ce.to(index_dtype), rtol=0, atol=0,
                               equal_nan=False, identifier=f"Sparse {fmt} {comp}")
            self._values_close(getattr(a, plain)().to(index_dtype),
                               getattr(e, plain)().to(index_dtype), rtol=0, atol=0,
                               equal_nan=False, identifier=f"Sparse {fmt} {plain}")
            self._values_close(a.values(), e.values(), identifier=f"Sparse {fmt} values", **tol)
            return
        self._values_close(a, e, **tol)

    def _values_close(self, a, e, *, rtol, atol, equal_nan, identifier=None):
        matches = glasstorch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        if a.dim() == 0:
            self.fail(_scalar_message(a.item(), e.item(), rtol, atol, identifier))
        self.fail(_tensor_message(a, e, matches, rtol, atol, identifier))


_PAIR_KINDS = (_NonePair, _BoolPair, _NumberPair, _TensorPair)


def _path_text(path):
    return "".join(f"[{k!r}]" for k in path)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _pairs(actual, expected, path, options):
    """Walk both inputs together and return their leaf pairs (raising structural failures)."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", path)
        out = []
        for i in range(len(actual)):
            out.extend(_pairs(actual[i], expected[i], (*path, i), options))
        return out
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            raise _Failure(AssertionError,
                           f"The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(ke - ka)}\n"
                           f"Additional keys in the actual mapping: {sorted(ka - ke)}", path)
        keys = ka
        with contextlib.suppress(Exception):  # a fixed order makes the first failure stable
            keys = sorted(ka)
        out = []
        for key in keys:
            out.extend(_pairs(actual[key], expected[key], (*path, key), options))
        return out
    for kind in _PAIR_KINDS:
        try:
            return [kind(actual, expected, path, **options)]
        except _NotMine:
            continue
        except _Failure:
            raise
        except Exception as error:
            where = f" at item {_path_text(path)}" if path else ""
            raise RuntimeError(
                f"assert_close could not set up a {kind.__name__[1:]} comparison of "
                f"{type(actual).__name__} {actual!r} with {type(expected).__name__} "
                f"{expected!r}{where}: {type(error).__name__}: {error}") from error
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise an ``AssertionError`` unless ``actual`` and ``expected`` are close.

    Values are close where ``|actual - expected| <= atol + rtol * |expected|``; infinities
    only equal themselves and NaNs only each other with ``equal_nan``. Tensors must also
    agree in shape and (unless disabled) device, dtype and layout, and with ``check_stride``
    in strides. Without ``rtol``/``atol`` the tolerances of the dtype are used (float16
    1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 and complex64 1.3e-6/1e-5, float64 and
    complex128 1e-7/1e-7, others exact). Sequences and mappings are compared element by
    element. ``msg`` (a string, or a callable given the generated message) replaces the
    message of a value or attribute mismatch.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Failure as failure:
        # structural problems are reported as found (``msg`` is for value mismatches)
        raise failure.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            raise failure.to_error(msg) from None
        except Exception as error:
            raise RuntimeError(f"Comparing {pair!r} raised the unexpected exception "
                               f"above.") from error


# assert_allclose's own, looser defaults
_ALLCLOSE_TOLERANCES = {glasstorch.float16: (1e-3, 1e-3), glasstorch.float32: (1e-4, 1e-5),
                        glasstorch.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12: use :func:`assert_close`. Compares like it, with NaNs
    equal, dtypes allowed to differ and looser default tolerances."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, glasstorch.Tensor):
        actual = glasstorch.tensor(actual)
    if not isinstance(expected, glasstorch.Tensor):
        expected = glasstorch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected,
                                        dtype_precisions=_ALLCLOSE_TOLERANCES)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
