"""DLPack: zero-copy exchange with NumPy and PyTorch (bfloat16 included)."""

import numpy as np
import pytest
import torch

import glasstorch as gt
from glasstorch._dlpack import from_dlpack

from ._util import DTYPES, pair, same


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_both_ways_zero_copy(dtype):
    t, g = pair(dtype, (3, 4))
    t_view, g_view = t.t()[1:], g.t()[1:]
    got = from_dlpack(t_view)
    same(g_view, got, offset=False)
    assert got.data_ptr() == t_view.data_ptr()
    back = torch.from_dlpack(g_view)
    same(t_view, back, offset=False)
    assert back.data_ptr() == g_view.data_ptr()
    assert g.__dlpack_device__() == (1, 0)


def test_writes_are_shared():
    t = torch.zeros(4, dtype=torch.bfloat16)
    g = from_dlpack(t)
    g[1] = 3.0
    assert t[1].item() == 3.0
    h = gt.zeros(3)
    torch.from_dlpack(h)[2] = 7.0
    assert h[2].item() == 7.0


def test_numpy_and_capsules():
    arr = np.arange(6.0).reshape(2, 3)
    g = from_dlpack(arr)
    assert g.data_ptr() == arr.ctypes.data and g.dtype is gt.float64
    out = np.from_dlpack(g)
    assert out.ctypes.data == arr.ctypes.data
    cap = torch.utils.dlpack.to_dlpack(torch.arange(3))
    same(gt.arange(3), from_dlpack(cap))


def test_errors():
    with pytest.raises(BufferError):
        gt.ones(2).requires_grad_().__dlpack__()
    with pytest.raises(BufferError):
        torch.ones(2, requires_grad=True).__dlpack__()
    assert from_dlpack(np.arange(3, dtype=np.uint32)).dtype is gt.uint32  # as torch 2.13
    with pytest.raises(RuntimeError):  # as torch's
        from_dlpack([1, 2])


def test_jax_if_installed():
    jnp = pytest.importorskip("jax.numpy")
    g = from_dlpack(jnp.arange(4.0))
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0]
