"""glasstorch.testing (assert_close, make_tensor, assert_allclose) against torch.testing:
each case runs in both libraries and must raise the same exception type with the same
message (or pass in both), and emit the same warnings."""

import warnings

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _close_cases(T):
    t = T.tensor
    ac = T.testing.assert_close
    nan, inf = float("nan"), float("inf")
    return {
        "one_mismatch": lambda: ac(t([1., 2., 3.]), t([1., 2.5, 3.])),
        "two_mismatches": lambda: ac(t([1., 4., 5.]), t([1., 2., 3.])),
        "2d_index": lambda: ac(t([[1., 2.], [3., 4.]]), t([[1., 2.], [3.3, 4.]])),
        "within_tolerance": lambda: ac(t([1., 2.]), t([1., 2. + 1e-7])),
        "float64": lambda: ac(t([1., 2.], dtype=T.float64), t([1., 2.001], dtype=T.float64)),
        "float16": lambda: ac(t([1., 2.], dtype=T.float16), t([1., 2.01], dtype=T.float16)),
        "bfloat16": lambda: ac(t([1., 2.], dtype=T.bfloat16), t([1., 2.5], dtype=T.bfloat16)),
        "complex64": lambda: ac(t([3 + 4j, 2.]), t([3 + 4.5j, 2.])),
        "complex128": lambda: ac(t([1 + 1j], dtype=T.complex128), t([1 + 2j], dtype=T.complex128)),
        "int": lambda: ac(t([1, 2, 3]), t([1, 2, 4])),
        "int_zero_expected": lambda: ac(t([1, 2, 3]), t([1, 3, 0])),
        "uint8_no_wrap": lambda: ac(t([1, 200], dtype=T.uint8), t([3, 2], dtype=T.uint8)),
        "bool": lambda: ac(t([True, False]), t([True, True])),
        "0d": lambda: ac(t(1.1), t(1.0)),
        "0d_int": lambda: ac(t(1), t(2)),
        "nan_0d": lambda: ac(t(nan), t(nan)),
        "nan_equal": lambda: ac(t([nan]), t([nan]), equal_nan=True),
        "nan_vector": lambda: ac(t([1., nan]), t([1., 2.])),
        "inf": lambda: ac(t([1., inf]), t([1., 2.])),
        "zero_expected": lambda: ac(t([1., 0.5]), t([1., 0.])),
        "dtype": lambda: ac(t([1.]), t([1.], dtype=T.float64)),
        "dtype_unchecked": lambda: ac(t([1.]), t([1.001], dtype=T.float64), check_dtype=False),
        "shape": lambda: ac(t([1., 2.]), t([1., 2., 3.])),
        "stride": lambda: ac(t([[1., 2.], [3., 4.]]).t(), t([[1., 3.], [2., 4.]]),
                             check_stride=True),
        "stride_unchecked": lambda: ac(t([[1., 2.], [3., 4.]]).t(), t([[1., 3.], [2., 4.]])),
        "layout": lambda: ac(t([[1., 0.]]).to_sparse(), t([[1., 0.]])),
        "layout_unchecked": lambda: ac(t([[1., 0.]]).to_sparse(), t([[1., 1.]]),
                                       check_layout=False),
        "sparse_values": lambda: ac(t([[1., 0.]]).to_sparse(), t([[2., 0.]]).to_sparse()),
        "sparse_nnz": lambda: ac(t([[1., 0.]]).to_sparse(), t([[1., 1.]]).to_sparse()),
        "sparse_indices": lambda: ac(t([[1., 0.]]).to_sparse(), t([[0., 1.]]).to_sparse()),
        "msg_str": lambda: ac(t([1.]), t([2.]), msg="custom"),
        "msg_callable": lambda: ac(t([1.]), t([2.]), msg=lambda m: f"Header\n{m}\nFooter"),
        "msg_ignored_for_structure": lambda: ac([t([1.])], [t([1.]), t(2.)], msg="custom"),
        "list_item": lambda: ac([t([1.]), t([2.])], [t([1.]), t([3.])]),
        "list_item_msg_callable": lambda: ac([t([1.]), t([2.])], [t([1.]), t([3.])],
                                             msg=lambda m: m + "!"),
        "list_item_msg_str": lambda: ac([t([1.]), t([2.])], [t([1.]), t([3.])], msg="x"),
        "tuple_vs_list": lambda: ac((t([1.]), 2.0), [t([1.]), 2.0]),
        "length": lambda: ac([1, 2], [1, 2, 3]),
        "dict_item": lambda: ac({"a": t([1.]), "b": t([2.])}, {"a": t([1.]), "b": t([2.5])}),
        "dict_keys": lambda: ac({"a": 1, "c": 2}, {"a": 1, "b": 2}),
        "nested": lambda: ac({"a": [1, {"x": 2.0}]}, {"a": [1, {"x": 2.5}]}),
        "scalars": lambda: ac(1.0, 1.1),
        "scalars_exact": lambda: ac(1e-9, 1e-10, rtol=0, atol=0),
        "int_scalars": lambda: ac(1, 2),
        "int_vs_float": lambda: ac(1, 1.0),
        "int_vs_float_unchecked": lambda: ac(1, 1.0, check_dtype=False),
        "complex_scalars": lambda: ac(1 + 1j, 1 + 2j),
        "numpy_scalar": lambda: ac(np.float32(1.0), 1.5),
        "numpy_arrays": lambda: ac(np.array([1., 2.]), np.array([1., 3.])),
        "bools": lambda: ac(True, False),
        "numpy_bool": lambda: ac(np.bool_(True), False),
        "none": lambda: ac(None, 1),
        "none_ok": lambda: ac(None, None),
        "strings": lambda: ac("a", "b"),
        "only_rtol": lambda: ac(t([1.]), t([1.]), rtol=1e-3),
        "only_atol": lambda: ac(1.0, 1.0, atol=1e-3),
        "given_tolerances": lambda: ac(t([1., 2.]), t([1., 2.5]), rtol=0.1, atol=0.1),
        "zero_tolerances": lambda: ac(t([1., 2.]), t([1., 2.5]), rtol=0, atol=0),
        "subclass_ok": lambda: ac(T.nn.Parameter(t([1.])), t([1.])),
        "empty": lambda: ac(t([]), t([])),
        "many": lambda: ac(T.arange(12.).reshape(3, 4), T.arange(12.).reshape(3, 4) * 1.01),
        "ties": lambda: ac(t([1., 2., 3.]), t([2., 3., 4.])),
        "negative": lambda: ac(t([-1., -2.]), t([-1.5, -3.])),
        "requires_grad": lambda: ac(t([1., 2.], requires_grad=True) * 2, t([2., 5.])),
        "allclose_ok": lambda: T.testing.assert_allclose(t([1., 2.]), [1., 2.0001]),
        "allclose_fail": lambda: T.testing.assert_allclose(t([1., 2.]), [1., 2.1]),
        "allclose_nan": lambda: T.testing.assert_allclose(t([nan]), [nan]),
        "allclose_int": lambda: T.testing.assert_allclose(3, 4),
    }


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
            result = ("passed",)
        except Exception as e:  # the exception type and message are what is compared
            result = (type(e).__name__, str(e))
    return result + (sorted({(w.category.__name__, str(w.message)) for w in caught}),)


CASES = sorted(_close_cases(glasstorch))


@pytest.mark.parametrize("case", CASES)
def test_assert_close_matches_torch(case):
    expected = _outcome(_close_cases(torch)[case])
    actual = _outcome(_close_cases(glasstorch)[case])
    assert actual == expected


def test_cases_exercise_failures():
    # guards the table: most cases must fail in torch, or the comparison proves little
    outcomes = [_outcome(f)[0] for f in _close_cases(torch).values()]
    assert outcomes.count("AssertionError") > 30
    assert {"TypeError", "ValueError"} <= set(outcomes)


def test_bool_paired_with_int_is_an_error_as_in_torch():
    # torch cannot pair a bool with an int either; it reports it as an internal RuntimeError
    # whose wording (a bug-report request) glasstorch does not copy
    for T in (torch, glasstorch):
        with pytest.raises(RuntimeError, match="NumberPair"):
            T.testing.assert_close(True, 1)


@pytest.mark.parametrize("pair", [
    ("tensor_vs_ndarray", lambda T: (np.array([1., 2.]), T.tensor([1., 2.]))),
    ("tensor_vs_float", lambda T: (T.tensor(1.), 1.0)),
    ("no_subclasses", lambda T: (T.nn.Parameter(T.tensor([1.])), T.tensor([1.]))),
])
def test_unrelated_types_raise_type_error(pair):
    # the message names the classes, which differ between the libraries
    _, make = pair
    for T in (torch, glasstorch):
        a, e = make(T)
        kw = {"allow_subclasses": False}
        with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
            T.testing.assert_close(a, e, **kw)


def test_failure_location_in_message():
    with pytest.raises(AssertionError) as info:
        glasstorch.testing.assert_close({"w": [glasstorch.ones(2), glasstorch.zeros(2)]},
                                        {"w": [glasstorch.ones(2), glasstorch.ones(2)]})
    assert str(info.value).endswith("The failure occurred for item ['w'][1]")


def _make_cases(T):
    mk = T.testing.make_tensor
    return {
        "float32": lambda: mk(3, 4, dtype=T.float32, device="cpu"),
        "tuple_shape": lambda: mk((2, 3), dtype=T.float64, device="cpu"),
        "size_shape": lambda: mk(T.Size([2, 3]), dtype=T.int64, device="cpu"),
        "bool": lambda: mk(5, dtype=T.bool, device="cpu"),
        "uint8": lambda: mk(5, dtype=T.uint8, device="cpu"),
        "complex64": lambda: mk(5, dtype=T.complex64, device="cpu"),
        "noncontiguous": lambda: mk(3, 4, dtype=T.float32, device="cpu", noncontiguous=True),
        "noncontiguous_one_element": lambda: mk(1, dtype=T.float32, device="cpu",
                                                noncontiguous=True),
        "channels_last": lambda: mk(2, 3, 4, 5, dtype=T.float32, device="cpu",
                                    memory_format=T.channels_last),
        "both_layouts": lambda: mk(2, 3, 4, 5, dtype=T.float32, device="cpu",
                                   noncontiguous=True, memory_format=T.channels_last),
        "grad_int": lambda: mk(2, dtype=T.int32, device="cpu", requires_grad=True),
        "grad": lambda: mk(2, dtype=T.float32, device="cpu", requires_grad=True),
        "low_above_high": lambda: mk(2, dtype=T.float32, device="cpu", low=3, high=2),
        "low_equals_high_int": lambda: mk(2, dtype=T.int64, device="cpu", low=3, high=3),
        "low_equals_high_float": lambda: mk(2, dtype=T.float32, device="cpu", low=3, high=3),
        "nan_bound": lambda: mk(2, dtype=T.float32, device="cpu", low=float("nan")),
        "below_range": lambda: mk(2, dtype=T.uint8, device="cpu", low=-5, high=-1),
        "above_range": lambda: mk(2, dtype=T.int8, device="cpu", low=300, high=400),
        "clamped": lambda: mk(40, dtype=T.uint8, device="cpu", low=-5, high=3),
        "fractional_bounds": lambda: mk(50, dtype=T.int64, device="cpu", low=0.5, high=2.5),
        "huge_range": lambda: mk(50, dtype=T.float32, device="cpu", low=-1e39, high=1e39),
        "exclude_zero": lambda: mk(50, dtype=T.int8, device="cpu", low=-1, high=1,
                                   exclude_zero=True),
        "exclude_zero_float": lambda: mk(5, dtype=T.float16, device="cpu", low=0, high=0,
                                         exclude_zero=True),
        "scalar": lambda: mk((), dtype=T.float32, device="cpu"),
    }


def _describe(T, fn):
    """What must agree: layout, dtype, grad flag, errors and warnings (values are random;
    their range is checked separately)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = fn()
            out = (tuple(r.shape), str(r.dtype), r.stride(), r.storage_offset(),
                   r.requires_grad, r.is_contiguous(), bool((r.detach() == 0).any()))
        except Exception as e:
            out = (type(e).__name__, str(e))
    return out + (sorted({(w.category.__name__, str(w.message)) for w in caught}),)


MAKE_CASES = sorted(_make_cases(glasstorch))


@pytest.mark.parametrize("case", MAKE_CASES)
def test_make_tensor_matches_torch(case):
    actual = _describe(glasstorch, _make_cases(glasstorch)[case])
    expected = _describe(torch, _make_cases(torch)[case])
    if case.startswith(("bool", "uint8", "size_shape", "complex", "float", "tuple", "grad",
                        "noncontiguous", "channels", "scalar", "huge")):
        # "contains a zero" is random for these; compare everything else
        actual, expected = actual[:-2] + actual[-1:], expected[:-2] + expected[-1:]
    assert actual == expected


@pytest.mark.parametrize("dtype, low, high, lo, hi", [
    ("float32", None, None, -9, 9), ("int64", None, None, -9, 9), ("uint8", None, None, 0, 9),
    ("bool", None, None, 0, 1), ("int8", -5, 3, -5, 2), ("uint8", -5, 3, 0, 2),
    ("int64", 0.5, 2.5, 1, 2), ("float64", -1.5, 0.5, -1.5, 0.5),
])
def test_make_tensor_ranges(dtype, low, high, lo, hi):
    t = glasstorch.testing.make_tensor(4000, dtype=getattr(glasstorch, dtype), device="cpu",
                                       low=low, high=high)
    x = t.to(glasstorch.float64)
    assert float(x.min()) >= lo and float(x.max()) <= hi
    if dtype in ("int8", "uint8", "int64", "bool"):  # every allowed integer gets drawn
        assert float(x.min()) == lo and float(x.max()) == hi
    else:
        assert float(x.max()) < hi


def test_make_tensor_complex_parts_and_exclude_zero():
    t = glasstorch.testing.make_tensor(2000, dtype=glasstorch.complex64, device="cpu", low=-1,
                                       high=1)
    parts = glasstorch.view_as_real(t)
    assert float(parts.min()) >= -1 and float(parts.max()) < 1 and float(parts.min()) < -0.9
    z = glasstorch.testing.make_tensor(200, dtype=glasstorch.int16, device="cpu", low=0, high=2,
                                       exclude_zero=True)
    assert bool((z == 1).all())
