"""Tensor metadata, conversions and Python protocol behaviour, against torch."""

import copy
import pickle

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def both(fn):
    return fn(gt), fn(torch)


def test_metadata_matches_torch():
    for make in (lambda L: L.zeros(2, 3, 4), lambda L: L.zeros(2, 3, 4).transpose(0, 2),
                 lambda L: L.tensor(3.5), lambda L: L.zeros(0, 3)):
        g, t = both(make)
        assert g.shape == t.shape and g.size() == t.size() and str(g.shape) == str(t.shape)
        assert g.dim() == t.dim() and g.ndim == t.ndim and g.numel() == t.numel()
        assert g.stride() == t.stride() and g.is_contiguous() == t.is_contiguous()
        assert g.element_size() == t.element_size() and g.nbytes == t.nbytes
        assert repr(g.dtype) == repr(t.dtype) and str(g.device) == str(t.device)
        assert g.is_leaf and not g.requires_grad and g.grad is None and g.grad_fn is None
        assert repr(g.layout) == repr(t.layout) and g.type() == t.type()


def test_size_behaves_like_torch_size():
    g, t = both(lambda L: L.zeros(2, 3))
    assert repr(g.shape) == repr(t.shape) == "torch.Size([2, 3])"
    assert g.size(-1) == 3 and g.shape.numel() == 6 and isinstance(g.shape[0:1], gt.Size)
    with pytest.raises(IndexError, match="Dimension out of range"):
        g.size(2)


def test_item_tolist_numpy():
    g = gt.tensor([[1.5, 2.0]])
    assert g.tolist() == [[1.5, 2.0]]
    assert gt.tensor(7).item() == 7 and isinstance(gt.tensor(7).item(), int)
    assert gt.tensor(True).item() is True
    assert gt.tensor(1.5, dtype=gt.bfloat16).item() == 1.5
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        gt.ones(2).item()
    x = gt.zeros(3)
    n = x.numpy()
    n[0] = 5
    assert x.tolist()[0] == 5  # numpy() shares memory
    x.requires_grad = True
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()
    assert np.asarray(gt.ones(2)).dtype == np.float32


def test_from_numpy_shares_memory_and_refuses_negative_strides():
    a = np.arange(6.0).reshape(2, 3)
    t = gt.from_numpy(a)
    a[0, 0] = 42
    assert t.tolist()[0][0] == 42 and t.dtype is gt.float64
    with pytest.raises(ValueError):
        gt.from_numpy(a[:, ::-1])
    with pytest.raises(TypeError):
        gt.from_numpy(np.array(["a"]))


def test_python_protocols():
    assert len(gt.zeros(4, 2)) == 4
    with pytest.raises(TypeError):
        len(gt.tensor(1.0))
    assert bool(gt.tensor([1])) and not bool(gt.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(gt.ones(2))
    assert float(gt.tensor([2.5])) == 2.5 and int(gt.tensor(3.9)) == 3
    assert [1, 2, 3][gt.tensor(1)] == 2
    with pytest.raises(TypeError):
        [1, 2][gt.tensor(1.0)]
    assert f"{gt.tensor(2.5):.2f}" == "2.50"
    assert [r.tolist() for r in gt.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        iter(gt.tensor(1))


def test_requires_grad_rules():
    x = gt.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        gt.ones(2, dtype=gt.int64).requires_grad_()
    assert gt.zeros(2, requires_grad=True).requires_grad
    assert x.detach().requires_grad is False


def test_legacy_constructors():
    for name in ("FloatTensor", "LongTensor", "DoubleTensor", "ByteTensor", "BoolTensor"):
        g, t = getattr(gt, name)([1, 0]), getattr(torch, name)([1, 0])
        assert repr(g.dtype) == repr(t.dtype) and isinstance(g, getattr(gt, name))
    assert not isinstance(gt.zeros(1), gt.LongTensor)
    assert gt.Tensor(2, 3).shape == (2, 3) and gt.Tensor([1, 2]).dtype is gt.float32
    assert gt.Tensor().shape == (0,)


def test_copy_deepcopy_pickle():
    x = gt.arange(6.0).view(2, 3)
    x.requires_grad = True
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert y.tolist() == x.tolist() and y.requires_grad
        assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_data_and_detach_share_storage():
    x = gt.ones(3)
    for y in (x.data, x.detach()):
        assert y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    x.detach().add_(1)
    assert x.tolist() == [2.0, 2.0, 2.0] and x._version == 1


def test_inplace_cast_and_shape_rules_match_torch():
    for fn in (lambda L: L.ones(3, dtype=L.int64).add_(1.5),
               lambda L: L.ones(3).add_(L.ones(2, 3)),
               lambda L: L.ones(3, dtype=L.float16).add_(L.ones(3)).dtype):
        try:
            expected = fn(torch)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as info:
                fn(gt)
            assert str(info.value) == str(e)
        else:
            assert repr(fn(gt)) == repr(expected)


def test_out_argument():
    out = gt.empty(0)
    r = gt.add(gt.ones(2), gt.ones(2), out=out)
    assert r is out and out.tolist() == [2.0, 2.0]


def test_out_of_range_python_ints_wrap_like_torch():
    for op in (lambda t: t & -16, lambda t: t + (-16), lambda t: t * 300, lambda t: t | 256):
        g = op(gt.tensor([1, 200], dtype=gt.uint8))
        t = op(torch.tensor([1, 200], dtype=torch.uint8))
        assert g.tolist() == t.tolist() and repr(g.dtype) == repr(t.dtype)
    assert (gt.tensor([5], dtype=gt.int8) - 300).tolist() == \
        (torch.tensor([5], dtype=torch.int8) - 300).tolist()
