"""repr/str of tensors must match torch 2.13 character for character."""

import time
import zlib

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import glasstorch as gt
from glasstorch import _tensor_str

gt_set = _tensor_str.set_printoptions
gt_get = _tensor_str.get_printoptions

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True)
def _reset_options():
    yield
    torch.set_printoptions(profile="default")
    gt_set(profile="default")
    torch.set_default_dtype(torch.float32)
    gt.set_default_dtype(gt.float32)


def _pair(arr, dtype=None):
    """The same values as a torch tensor and a glasstorch tensor."""
    dtype = dtype or arr.dtype.name
    if dtype == "bfloat16":
        t = torch.from_numpy(np.array(arr, dtype=np.float32)).to(torch.bfloat16)
        g = gt.from_numpy(np.asarray(arr, dtype=np.float32).astype(ml_dtypes.bfloat16))
        return t, g
    arr = np.asarray(arr, dtype=dtype)
    return torch.from_numpy(arr.copy()), gt.from_numpy(arr)


def _check(arr, dtype=None, **opts):
    t, g = _pair(arr, dtype)
    if opts:
        torch.set_printoptions(**opts)
        gt_set(**opts)
    expected = repr(t)
    assert repr(g) == expected, f"\nglasstorch:\n{g!r}\ntorch:\n{expected}"
    assert str(g) == str(t)


def _values(dtype, shape, rng, kind="normal"):
    """Values suited to ``dtype``; ``kind`` picks the scale / special values for floats."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.random(n).reshape(shape) > 0.5
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        vals = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dtype)
        if n >= 2:
            vals[:2] = (info.min, info.max)
        return vals.reshape(shape)
    real = dtype if not dtype.startswith("complex") else \
        {"complex64": "float32", "complex128": "float64"}[dtype]
    wide = "float32" if real == "bfloat16" else real

    def part():
        if kind == "int":
            v = rng.integers(-50, 50, size=n).astype(wide)
        elif kind == "tiny":
            v = rng.standard_normal(n).astype(wide) * np.asarray(1e-5, wide)
        elif kind == "huge":
            v = rng.standard_normal(n).astype(wide) * np.asarray(1e4 if real == "float16"
                                                                 else 1e9, wide)
        elif kind == "special":
            v = rng.standard_normal(n).astype(wide)
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=wide)
            v[: min(n, 5)] = specials[: min(n, 5)]
        else:
            v = rng.standard_normal(n).astype(wide) * np.asarray(3, wide)
        return v.reshape(shape)

    if dtype.startswith("complex"):
        # assign the parts: inf * 1j would turn the real part into nan
        out = np.empty(shape, dtype=dtype)
        out.real = part()
        out.imag = part()
        return out
    return part()


SHAPES = [(), (1,), (5,), (2, 3), (2, 3, 4), (2, 1, 2, 3), (0,), (0, 3), (2, 0, 3)]
KINDS = ["normal", "int", "tiny", "huge", "special"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dtypes_and_shapes(dtype, shape):
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{shape}".encode()))
    kinds = KINDS if dtype.startswith(("float", "bfloat", "complex")) else ["normal"]
    for kind in kinds:
        _check(_values(dtype, shape, rng, kind), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1001,), (40, 40), (11, 11, 11), (3, 400), (400, 3),
                                   (2, 3, 2, 100)], ids=str)
def test_summarised(dtype, shape):
    rng = np.random.default_rng(7)
    for kind in (["normal", "special"] if dtype.startswith(("float", "bf", "c")) else
                 ["normal"]):
        _check(_values(dtype, shape, rng, kind), dtype)


@pytest.mark.parametrize("values", [
    [1.0, 2.0, 3.0], [1.5, 2.0], [1e-5, 1.0], [1e-4, 1.0], [1.0, 1000.0], [1.0, 1001.0],
    [0.5, 600.0], [1.0, 1e8], [1.0, 1.5e8], [123456789.0], [1e20, -1e-20],
    [np.nan], [np.inf, -np.inf], [np.nan, 1.5], [np.inf, 2.0], [np.nan, 1e10],
    [0.0], [-0.0], [-0.0, 1.0], [-0.0, 1.5], [0.0, 0.0, -1.0], [-1e-5, 2.5e-3],
    [0.99999, 1.00001], [12345.678, -0.5], [1e-300, 1.0], [2.0**60, 3.0],
    [-3.0, 17.0, 250.0], [0.1, 0.25, -7.125],
], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_styles(values, dtype):
    arr = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        _check(arr, dtype)
        _check(arr[0], dtype)  # 0-d
        _check(np.stack([arr, arr[::-1]]), dtype)


@pytest.mark.parametrize("values", [
    [1 + 2j, 3 - 4j], [1 + 1j, -2.5 - 3e-5j], [1e10 + 1j, -2.5 - 3j],
    [complex(np.nan, np.inf), 1 + 1j], [complex(0.0, -0.0)], [complex(-0.0, 0.0), 2j],
    [0.5 + 0.25j, -1.5j], [1e-6 - 1e-6j, 1e6 + 0j],
], ids=str)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex(values, dtype):
    arr = np.array(values, dtype=dtype)
    _check(arr)
    _check(arr[0])
    _check(np.stack([arr, -arr]))


@pytest.mark.parametrize("values", [
    [2**62, -2**63], [2**63 - 1], [0], [-1, 10, -100], [7],
], ids=str)
def test_int64_extremes(values):
    arr = np.array(values, dtype=np.int64)
    _check(arr)
    _check(arr[0])


def test_bool():
    _check(np.array([True, False]))
    _check(np.array(True))
    _check(np.array([[True, True], [True, True]]))


@pytest.mark.parametrize("opts", [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"threshold": 5},
    {"threshold": 0}, {"edgeitems": 1, "threshold": 5}, {"edgeitems": 0},
    {"edgeitems": 0, "threshold": 5}, {"edgeitems": 5, "threshold": 10},
    {"linewidth": 10}, {"linewidth": 0}, {"linewidth": 40}, {"linewidth": 200},
    {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 6},
], ids=str)
@pytest.mark.parametrize("dtype", ["int16", "int64", "float32", "float64", "complex64", "bool"])
def test_options(opts, dtype):
    rng = np.random.default_rng(3)
    for shape in [(), (7,), (3, 9), (4, 3, 5), (0,), (0, 2)]:
        for kind in ("normal", "tiny", "int"):
            _check(_values(dtype, shape, rng, kind), dtype, **opts)


@pytest.mark.parametrize("linewidth", range(12, 60, 1))
def test_suffix_wrapping(linewidth):
    # Every boundary of the "does the suffix still fit on this line" rule.
    _check(np.arange(4, dtype=np.int16), linewidth=linewidth)
    _check(np.arange(6.0).reshape(2, 3), linewidth=linewidth)
    _check(np.array([], dtype=np.float64).reshape(0, 3), linewidth=linewidth)
    _check(np.arange(12, dtype=np.int8).reshape(2, 2, 3), linewidth=linewidth)


def test_requires_grad_and_grad_fn():
    t = torch.tensor([1.0, 2.5], dtype=torch.float64, requires_grad=True)
    g = gt.from_numpy(np.array([1.0, 2.5]))
    g.requires_grad = True
    assert repr(g) == repr(t)
    t2 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) + 1
    assert type(t2.grad_fn).__name__ == "AddBackward0"

    class AddBackward0:
        pass

    g2 = gt.from_numpy(np.array([[2.0, 3.0], [4.0, 5.0]], dtype=np.float32))
    g2.requires_grad = True
    g2.grad_fn = AddBackward0()
    assert repr(g2) == repr(t2)
    # a long line pushes the suffixes onto their own lines
    torch.set_printoptions(linewidth=20)
    gt_set(linewidth=20)
    assert repr(g) == repr(t)
    assert repr(g2) == repr(t2)


def test_default_dtype_changes_suffixes():
    torch.set_default_dtype(torch.float64)
    gt.set_default_dtype(gt.float64)
    for dtype in ("float32", "float64", "complex64", "complex128", "float16", "int64"):
        _check(np.array([1.5, 2.0]).astype(dtype))
        _check(np.zeros((0,), dtype=dtype))
        _check(np.zeros((2, 0), dtype=dtype))


def test_non_contiguous_and_views():
    base = np.arange(24.0, dtype=np.float32).reshape(4, 6) / 7
    t = torch.from_numpy(base.copy())
    g = gt.from_numpy(base)
    assert repr(g.t()) == repr(t.t())
    for view in (base.T, base[:, ::2], base[1], base[1, 2, ...]):
        assert repr(gt.from_numpy(view)) == repr(torch.from_numpy(view.copy()))


def test_printoptions_api():
    assert gt_get() == torch._tensor_str.get_printoptions()
    for kwargs in ({"precision": 2}, {"profile": "short"}, {"profile": "full"},
                   {"profile": "nonsense"}, {"precision": 3, "profile": "full"},
                   {"sci_mode": True}, {"edgeitems": 1, "linewidth": 30, "threshold": 9},
                   {}, {"profile": "default"}):
        torch.set_printoptions(**kwargs)
        gt_set(**kwargs)
        assert gt_get() == torch._tensor_str.get_printoptions(), kwargs
    # the dict round-trips through set_printoptions
    gt_set(**{"precision": 6, "threshold": 7, "edgeitems": 1, "linewidth": 33,
              "sci_mode": False})
    saved = gt_get()
    gt_set(profile="default")
    gt_set(**saved)
    assert gt_get() == saved
    with _tensor_str.printoptions(precision=1):
        assert gt_get()["precision"] == 1
    assert gt_get() == saved


def test_large_is_fast():
    arr = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    g = gt.from_numpy(arr)
    start = time.perf_counter()
    text = repr(g)
    elapsed = time.perf_counter() - start
    assert text == repr(torch.from_numpy(arr))
    assert elapsed < 0.25, elapsed


_opts_strategy = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 8), "linewidth": st.integers(5, 120),
    "threshold": st.integers(0, 40), "edgeitems": st.integers(0, 4),
    "sci_mode": st.sampled_from([None, True, False])})


@settings(max_examples=150, deadline=None)
@given(arr=hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
                      elements=st.floats(width=32)),
       opts=_opts_strategy)
def test_hypothesis_float32(arr, opts):
    try:
        _check(arr, **opts)
    finally:
        torch.set_printoptions(profile="default")
        gt_set(profile="default")


@settings(max_examples=60, deadline=None)
@given(arr=hnp.arrays(st.sampled_from([np.float64, np.int32, np.complex64, np.bool_]),
                      hnp.array_shapes(min_dims=0, max_dims=3, max_side=6)))
def test_hypothesis_other_dtypes(arr):
    _check(arr)
