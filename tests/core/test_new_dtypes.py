"""uint16/uint32/uint64 and the float8 dtypes against torch: properties, limits, promotion,
conversion bits, printing, checkpoints and safetensors."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import glasstorch as gt
from glasstorch._core import dtype as _dt

torch = pytest.importorskip("torch")

UINTS = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
NEW = UINTS + FLOAT8
OLD = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]


def _both(name):
    return getattr(gt, name), getattr(torch, name)


def _outcome(fn):
    try:
        return ("ok", str(fn()))
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", NEW)
def test_dtype_properties(name):
    g, t = _both(name)
    assert repr(g) == repr(t) == f"torch.{name}" and str(g) == str(t)
    for attr in ("itemsize", "is_floating_point", "is_complex", "is_signed"):
        assert getattr(g, attr) == getattr(t, attr), attr
    assert g.to_real() is g
    assert _outcome(g.to_complex) == _outcome(t.to_complex)
    assert pickle.loads(pickle.dumps(g)) is g


@pytest.mark.parametrize("name", NEW + ["float16", "bfloat16", "float32", "float64", "int64"])
def test_finfo_iinfo(name):
    g, t = _both(name)
    if g.is_floating_point:
        a, b = gt.finfo(g), torch.finfo(t)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype"):
            assert getattr(a, attr) == getattr(b, attr), attr
        assert repr(a) == repr(b)
        with pytest.raises(TypeError):
            gt.iinfo(g)
    else:
        a, b = gt.iinfo(g), torch.iinfo(t)
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(a, attr) == getattr(b, attr), attr
        assert repr(a) == repr(b)
        with pytest.raises(TypeError):
            gt.finfo(g)
    with pytest.raises(TypeError):
        gt.iinfo(gt.bool)
    with pytest.raises(TypeError):
        torch.iinfo(torch.bool)


@pytest.mark.parametrize("name", NEW)
def test_promote_types_every_pair(name):
    for other in NEW + OLD:
        for a, b in ((name, other), (other, name)):
            ours = _outcome(lambda: gt.promote_types(getattr(gt, a), getattr(gt, b)))
            theirs = _outcome(lambda: torch.promote_types(getattr(torch, a), getattr(torch, b)))
            assert ours == theirs, (a, b)


def test_result_type_with_scalars_and_zero_dim():
    cases = []
    for name in NEW:
        for other in (1, 1.5, True, 1j, ("t", "float32"), ("t", "int64"), ("t", "bool")):
            cases.append((name, other))
    def with_other(lib, name, other):
        t = lib.ones(2, dtype=getattr(lib, name))
        if isinstance(other, tuple):
            other = lib.tensor(1, dtype=getattr(lib, other[1]))
        return lib.result_type(t, other)

    def as_zero_dim(lib, name, dim_dtype):
        return lib.result_type(lib.ones(2, dtype=getattr(lib, dim_dtype)),
                               lib.tensor(1, dtype=getattr(lib, name)))

    for name, other in cases:
        assert _outcome(lambda: with_other(gt, name, other)) == \
            _outcome(lambda: with_other(torch, name, other)), (name, other)
    for name in NEW:  # a new dtype as the 0-d operand
        for dim_dtype in ("float32", "int64", "bool"):
            assert _outcome(lambda: as_zero_dim(gt, name, dim_dtype)) == \
                _outcome(lambda: as_zero_dim(torch, name, dim_dtype)), (name, dim_dtype)


@pytest.mark.parametrize("name", NEW)
def test_creation_and_basic_ops(name):
    g, t = _both(name)
    for make in (lambda lib, d: lib.zeros(3, dtype=d), lambda lib, d: lib.ones(2, 3, dtype=d),
                 lambda lib, d: lib.tensor([1, 2, 4], dtype=d),
                 lambda lib, d: lib.full((2,), 2, dtype=d),
                 lambda lib, d: lib.tensor([1.0, 2.0, 4.0, 8.0]).to(d),
                 lambda lib, d: lib.tensor([1.0, 2.0, 4.0, 8.0]).to(d).view(2, 2).t().contiguous(),
                 lambda lib, d: lib.cat([lib.ones(2, dtype=d), lib.zeros(1, dtype=d)]),
                 lambda lib, d: lib.tensor([1.0, 2.0, 4.0]).to(d)[lib.tensor([2, 0])],
                 lambda lib, d: lib.tensor([1.0, 2.0, 4.0]).to(d).clone().view(lib.uint8),
                 lambda lib, d: lib.tensor([1.0, 2.0, 4.0]).to(d).to(lib.float32)):
        ours, theirs = make(gt, g), make(torch, t)
        assert str(ours.dtype) == str(theirs.dtype)
        assert ours.view(gt.uint8).tolist() == theirs.view(torch.uint8).tolist() \
            if ours.element_size() == 1 or ours.dtype is gt.float32 \
            else ours.tolist() == theirs.tolist()
    x = gt.tensor([1.0, 2.0]).to(g)
    assert (x == x).tolist() == [True, True] and x[1].item() == 2.0
    assert isinstance(x.tolist()[0], (int, float))


def test_uint_extremes_and_numpy():
    big = [2 ** 64 - 1, 0, 12345678901234567890]
    ours, theirs = gt.tensor(big, dtype=gt.uint64), torch.tensor(big, dtype=torch.uint64)
    assert ours.tolist() == theirs.tolist() == big and ours[0].item() == 2 ** 64 - 1
    assert repr(ours) == repr(theirs)
    for npd, name in ((np.uint16, "uint16"), (np.uint32, "uint32"), (np.uint64, "uint64")):
        assert gt.from_numpy(np.zeros(2, npd)).dtype is getattr(gt, name)
        assert str(torch.from_numpy(np.zeros(2, npd)).dtype) == f"torch.{name}"


def test_mixed_dtype_ops_refuse_like_torch():
    for name in NEW:
        for op in (lambda lib, a: a + a.float(), lambda lib, a: a == a.to(lib.int8),
                   lambda lib, a: lib.cat([a, a.to(lib.float16)])):
            def run(lib, op=op, name=name):
                return op(lib, lib.ones(2, dtype=getattr(lib, name))).dtype
            assert _outcome(lambda: run(gt))[0] == _outcome(lambda: run(torch))[0], name


# ----------------------------------------------------------------------------- conversion bits

def _values():
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448, 449, 464, 465, 480, 1e6, -1e6,
             57344, 61440, 61441, 240, 250, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -17,
             2.0 ** -16, 2.0 ** -126, 2.0 ** -127, 2.0 ** -128, 8.5e-39, 6.2e-39, 2.0 ** 127,
             1.7e38, 3.4e38, 1e-45, 0.75, 1.5, 1.4, 1.6, 1.0625, 1.0625 + 2 ** -20]
    return np.concatenate([edges, rng.standard_normal(4000) * 10,
                           rng.standard_normal(2000) * 1e4, np.exp(rng.uniform(-90, 90, 4000))])


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("name", FLOAT8)
def test_cast_to_float8_bits_match_torch(src, name):
    # torch saturates float8_e4m3fn, writes NaN as 0x7F/0xFF, and derives float8_e8m0fnu from
    # the float32 exponent bits: cast_array follows it where ml_dtypes' own cast differs
    x = _values()
    if src == "int64":
        arr = np.clip(np.nan_to_num(x), -1e6, 1e6).astype(np.int64)
    elif src == "bool":
        arr = x > 0
    else:
        with np.errstate(over="ignore"):
            arr = x.astype(getattr(_dt, src).np)
    t = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16) if src == "bfloat16" else \
        torch.from_numpy(arr)
    want = t.to(getattr(torch, name)).view(torch.uint8).numpy()
    got = _dt.cast_array(arr, getattr(_dt, name)).view(np.uint8)
    bad = np.flatnonzero(want != got)
    assert not bad.size, (arr[bad[:5]], want[bad[:5]], got[bad[:5]])


@pytest.mark.parametrize("src", FLOAT8)
@pytest.mark.parametrize("name", FLOAT8 + ["float32", "float16"])
def test_cast_from_float8_values_match_torch(src, name):
    codes = np.arange(256, dtype=np.uint8)
    want = torch.from_numpy(codes).view(getattr(torch, src)).to(getattr(torch, name))
    got = _dt.cast_array(codes.view(getattr(_dt, src).np), getattr(_dt, name))
    if want.element_size() == 1:  # float8 -> float8: every bit
        assert (want.view(torch.uint8).numpy() == got.view(np.uint8)).all()
    else:  # wider floats: values (NaN payload bits are not reproduced)
        np.testing.assert_array_equal(want.float().numpy(), got.astype(np.float32))


def test_representable_values_round_trip_through_to():
    for name in FLOAT8:
        codes = torch.arange(256, dtype=torch.uint8).view(getattr(torch, name))
        finite = codes.float().isfinite()
        vals = codes.float()[finite]
        g = gt.tensor(vals.tolist()).to(getattr(gt, name))
        assert g.view(gt.uint8).tolist() == vals.to(getattr(torch, name)).view(
            torch.uint8).tolist()


# ----------------------------------------------------------------------------- printing

@pytest.mark.parametrize("name", NEW)
def test_printing_matches_torch(name):
    g, t = _both(name)
    if name in UINTS:
        samples = [[1, 65535, 3], [[1, 2], [30, 4]], [], 7]
        pairs = [(gt.tensor(s, dtype=g), torch.tensor(s, dtype=t)) for s in samples]
    else:
        codes = np.arange(256, dtype=np.uint8)
        rows = [codes, codes[:128], codes[120:136], codes[56:72].reshape(4, 4), codes[60:61]]
        pairs = [(gt.from_numpy(r.copy()).view(g), torch.from_numpy(r.copy()).view(t))
                 for r in rows]
        pairs.append((gt.zeros(3, dtype=g), torch.zeros(3, dtype=t)))
        pairs.append((gt.empty(0, dtype=g), torch.empty(0, dtype=t)))
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


# ----------------------------------------------------------------------------- files

def _sample(lib, name):
    # 1..12 are exact in every format (0 is not a float8_e8m0fnu value)
    return lib.arange(1, 13, dtype=lib.float32).reshape(3, 4).to(getattr(lib, name))


@pytest.mark.parametrize("name", NEW)
def test_torch_save_load_both_ways(name):
    t = _sample(torch, name)
    buf = io.BytesIO()
    torch.save({"x": t, "v": t[1:, ::2]}, buf)
    for weights_only in (True, False):
        buf.seek(0)
        d = gt.load(buf, weights_only=weights_only)
        assert d["x"].dtype is getattr(gt, name)
        assert d["x"].view(gt.uint8).tolist() == t.view(torch.uint8).tolist()
        assert d["v"].stride() == (4, 2) and d["v"].storage_offset() == 4
    g = _sample(gt, name)
    buf = io.BytesIO()
    gt.save({"x": g, "v": g[1:, ::2], "p": gt.nn.Parameter(g, requires_grad=False)}, buf)
    buf.seek(0)
    d = torch.load(buf, weights_only=True)
    assert d["x"].dtype is getattr(torch, name)
    assert d["x"].view(torch.uint8).tolist() == g.view(gt.uint8).tolist()
    assert d["v"].stride() == (4, 2) and d["v"].storage_offset() == 4
    assert d["v"].untyped_storage().data_ptr() == d["x"].untyped_storage().data_ptr()
    assert isinstance(d["p"], torch.nn.Parameter)


@pytest.mark.parametrize("name", NEW)
def test_safetensors_both_ways(name, tmp_path):
    st = pytest.importorskip("safetensors.torch")
    from glasstorch.utils import safetensors as gst
    t = _sample(torch, name)
    path = tmp_path / "t.safetensors"
    st.save_file({"x": t, "y": torch.ones(2)}, str(path))
    for got in (gst.load_file(path)["x"], gst.load(path.read_bytes())["x"]):
        assert got.dtype is getattr(gt, name)
        assert got.view(gt.uint8).tolist() == t.view(torch.uint8).tolist()
    with gst.safe_open(path, framework="pt") as f:
        part = f.get_slice("x")[1:, :2]
        assert part.contiguous().view(gt.uint8).tolist() == \
            t[1:, :2].contiguous().view(torch.uint8).tolist()
        assert f.get_tensor("y").tolist() == [1.0, 1.0]
    out = tmp_path / "g.safetensors"
    gst.save_file({"x": _sample(gt, name)}, out)
    back = st.load_file(str(out))["x"]
    assert back.dtype is getattr(torch, name) and torch.equal(back.view(torch.uint8),
                                                              t.view(torch.uint8))
