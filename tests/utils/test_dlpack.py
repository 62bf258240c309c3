"""glasstorch.utils.dlpack: from_dlpack/to_dlpack round trips with NumPy and real torch, and
torch's errors."""

import numpy as np
import pytest

import glasstorch
from glasstorch.utils import dlpack as gdl

torch = pytest.importorskip("torch")
import torch.utils.dlpack as tdl  # noqa: E402


def test_module_surface_matches_torch():
    assert gdl.__all__ == tdl.__all__
    assert [(m.name, m.value) for m in gdl.DLDeviceType] == \
        [(m.name, m.value) for m in tdl.DLDeviceType]
    assert gdl.from_dlpack is glasstorch.from_dlpack


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "bfloat16",
                                   "complex64", "uint8"])
def test_to_dlpack_capsule_into_torch_shares_memory(dtype):
    g = glasstorch.arange(12).reshape(3, 4).to(getattr(glasstorch, dtype)).t()[1:]
    cap = gdl.to_dlpack(g)
    assert "dltensor" in repr(cap)
    t = tdl.from_dlpack(cap)
    assert str(t.dtype) == str(g.dtype) and t.shape == g.shape and t.stride() == g.stride()
    assert t.data_ptr() == g.data_ptr()
    assert t.tolist() == g.tolist()
    with pytest.raises(RuntimeError, match="consumed only once"):
        tdl.from_dlpack(cap)


def test_torch_capsule_into_glasstorch_and_numpy_round_trip():
    t = torch.arange(6.0)
    g = gdl.from_dlpack(tdl.to_dlpack(t))
    g[1] = 10.0
    assert t[1].item() == 10.0
    arr = np.arange(5, dtype=np.int32)
    g2 = gdl.from_dlpack(arr)
    assert g2.data_ptr() == arr.ctypes.data and g2.dtype is glasstorch.int32
    back = np.from_dlpack(g2)
    assert back.ctypes.data == arr.ctypes.data
    cap = gdl.to_dlpack(glasstorch.ones(3))
    g3 = gdl.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        gdl.from_dlpack(cap)
    assert g3.tolist() == [1.0, 1.0, 1.0]


def test_from_dlpack_of_a_tensor_is_a_new_tensor_on_the_same_memory():
    for lib in (glasstorch, torch):
        a = lib.arange(4.0)
        b = lib.from_dlpack(a)
        assert b is not a and b.data_ptr() == a.data_ptr()
        b[0] = 7.0
        assert a[0].item() == 7.0
        c = lib.from_dlpack(a, copy=True)
        assert c.data_ptr() != a.data_ptr() and c.tolist() == a.tolist()


def test_errors_match_torch():
    for lib, mod in ((glasstorch, gdl), (torch, tdl)):
        needs_grad = lib.ones(2, requires_grad=True)
        mod.to_dlpack(needs_grad)  # the legacy export does not refuse (torch neither)
        with pytest.raises(BufferError):
            lib.from_dlpack(needs_grad)
        with pytest.raises(RuntimeError):
            lib.from_dlpack([1, 2])
        with pytest.raises(TypeError):
            mod.to_dlpack(np.ones(2))
        with pytest.raises(AssertionError):
            lib.from_dlpack(mod.to_dlpack(lib.ones(2)), copy=True)
        with pytest.raises(BufferError):
            lib.from_dlpack(lib.ones(2, 2).to_sparse())
        with pytest.raises(RuntimeError):
            mod.to_dlpack(lib.ones(2, 2).to_sparse())
