"""Helpers shared by the serialization tests: build matching tensors, compare them."""

import numpy as np
import torch

import glasstorch as gt

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def values(name, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) > 0.5
    if name.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(name)
    if name.startswith("float") or name == "bfloat16":
        return rng.standard_normal(shape).astype(np.float32)
    return rng.integers(0, 100, shape).astype(name)


def pair(name, shape=(3, 4), seed=0):
    """The same values as a torch tensor and a glasstorch tensor of dtype ``name``."""
    v = values(name, shape, seed)
    return (torch.tensor(v).to(getattr(torch, name)),
            gt.tensor(v).to(getattr(gt, name)))


def as_numpy(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return t._data.astype(np.float32) if t.dtype is gt.bfloat16 else t._data


def same(a, b, offset=True):
    """a and b (either library) agree on dtype, shape, strides, offset and every value
    (``offset=False`` where the exchange starts a new storage at the data pointer)."""
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    assert tuple(a.stride()) == tuple(b.stride()), (a.stride(), b.stride())
    assert not offset or a.storage_offset() == b.storage_offset()
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def same_tree(a, b):
    if isinstance(a, (torch.Tensor, gt.Tensor)):
        same(a, b)
    elif isinstance(a, dict):
        assert type(a).__name__ == type(b).__name__ and list(a) == list(b)
        for k in a:
            same_tree(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            same_tree(x, y)
    elif isinstance(a, (torch.dtype, gt.dtype, torch.device, gt.device)):
        assert str(a) == str(b)
    else:
        assert a == b and type(a) is type(b), (a, b)


def shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
