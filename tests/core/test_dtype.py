"""dtypes, promotion, finfo/iinfo against torch."""

import itertools

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name):
    ours, theirs = getattr(gt, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) == str(ours)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_complex == theirs.is_complex
    assert ours.is_signed == theirs.is_signed
    assert ours.itemsize == theirs.itemsize


def test_aliases():
    for alias in ["half", "float", "double", "short", "int", "long", "cfloat", "cdouble"]:
        assert repr(getattr(gt, alias)) == repr(getattr(torch, alias))


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_and_can_cast(a, b):
    ta, tb = getattr(torch, a), getattr(torch, b)
    ga, gb = getattr(gt, a), getattr(gt, b)
    assert repr(gt.promote_types(ga, gb)) == repr(torch.promote_types(ta, tb))
    assert gt.can_cast(ga, gb) == torch.can_cast(ta, tb)


SCALARS = [True, 3, 2.5, 1 + 2j]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("ndim", [0, 1])
def test_result_type_with_scalars(name, ndim):
    shape = (2,) * ndim
    t = torch.zeros(shape, dtype=getattr(torch, name))
    g = gt.zeros(shape, dtype=getattr(gt, name))
    for s in SCALARS:
        expected = repr(torch.result_type(t, s))
        # glasstorch has no complex32 (chalf); float16 with a complex scalar gives complex64
        expected = expected.replace("complex32", "complex64")
        assert repr(gt.result_type(g, s)) == expected, s


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_result_type_zero_dim_participates_by_category(a, b):
    ta = torch.zeros(3, dtype=getattr(torch, a))
    tb = torch.zeros((), dtype=getattr(torch, b))
    ga = gt.zeros(3, dtype=getattr(gt, a))
    gb = gt.zeros((), dtype=getattr(gt, b))
    for ours, theirs in [(gt.result_type(ga, gb), torch.result_type(ta, tb)),
                         (gt.result_type(gb, ga), torch.result_type(tb, ta))]:
        assert repr(ours) == repr(theirs).replace("complex32", "complex64")  # no chalf here


def test_default_dtype_drives_float_scalars():
    try:
        gt.set_default_dtype(gt.float64)
        assert gt.tensor([1.5]).dtype is gt.float64
        assert gt.result_type(gt.tensor([1, 2]), 2.5) is gt.float64
        assert gt.tensor([1j]).dtype is gt.complex128
    finally:
        gt.set_default_dtype(gt.float32)
    assert gt.get_default_dtype() is gt.float32
    with pytest.raises(TypeError):
        gt.set_default_dtype(gt.int64)


def test_documented_promotion_examples():
    assert (gt.tensor([1, 2]) / 2).dtype is gt.float32
    assert (gt.tensor([1, 2]) + gt.ones(2)).dtype is gt.float32
    assert (gt.ones(2, dtype=gt.float16) + gt.ones(2, dtype=gt.bfloat16)).dtype is gt.float32
    assert (gt.ones(2) + gt.tensor(1.0, dtype=gt.float64)).dtype is gt.float32
    assert (gt.ones(2, dtype=gt.int32) + 5).dtype is gt.int32


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(name):
    ours, theirs = gt.finfo(getattr(gt, name)), torch.finfo(getattr(torch, name))
    for attr in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"]:
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.dtype == theirs.dtype
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    ours, theirs = gt.iinfo(getattr(gt, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max,
                                                           theirs.dtype)
    assert repr(ours) == repr(theirs)


def test_finfo_iinfo_errors():
    with pytest.raises(TypeError):
        gt.finfo(gt.int32)
    with pytest.raises(TypeError):
        gt.iinfo(gt.float32)
    assert gt.finfo().dtype == "float32"


def test_dtype_pickles_to_the_same_object():
    import pickle
    assert pickle.loads(pickle.dumps(gt.bfloat16)) is gt.bfloat16
