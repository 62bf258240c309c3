"""torch.nested against torch: construction, metadata, printing, operators, errors."""

import re
import warnings

import numpy as np
import pytest
import torch

import glasstorch as gt

warnings.filterwarnings("ignore", message=".*nested tensors is in prototype stage")
warnings.filterwarnings("ignore", message=".*is_fx_tracing")


def _np(t):
    return t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def _same(g, t):
    """Same values, dtype and shape: for nested tensors component by component."""
    assert repr(g.dtype) == repr(t.dtype)
    if t.is_nested:
        assert g.is_nested and repr(g.layout) == repr(t.layout)
        assert g.dim() == t.dim() and g.numel() == t.numel()
        for gp, tp in zip(g.unbind(), t.unbind(), strict=True):
            _same(gp, tp)
        return
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(g), _np(t), rtol=1e-6, atol=1e-6)


def _both(fn):
    return fn(gt), fn(torch)


def _strided(lib):
    return lib.nested.nested_tensor([[1, 2, 3], [1], [1, 2]])


def _jagged(lib):
    a = lib.arange(6.0).reshape(3, 2)
    return lib.nested.nested_tensor([a, a[:2] * 2], layout=lib.jagged)


@pytest.mark.parametrize("make", [_strided, _jagged])
def test_construct_and_metadata(make):
    g, t = _both(make)
    _same(g, t)
    assert isinstance(g, gt.Tensor) and g.size(0) == t.size(0) and not g.requires_grad
    assert g.is_contiguous() == t.is_contiguous()
    _same(g.values(), t.values())
    _same(gt.nested.to_padded_tensor(g, -1), torch.nested.to_padded_tensor(t, -1))
    _same(g[1], t[1])


def test_strided_printing_and_sizes():
    g, t = _both(_strided)
    assert repr(g) == repr(t)
    assert repr(gt.nested.nested_tensor([])) == repr(torch.nested.nested_tensor([]))
    for fn in (lambda x: x.size(), lambda x: x.size(1), lambda x: x.stride(), len):
        with pytest.raises(RuntimeError) as ge:
            fn(g)
        with pytest.raises(RuntimeError) as te:
            fn(t)
        assert str(ge.value) == str(te.value)
    g2, t2 = _both(lambda lib: lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(4, 3)]))
    assert g2.size(2) == t2.size(2) == 3


def test_jagged_shape_offsets_and_printing():
    g, t = _both(_jagged)
    assert [repr(s)[0] for s in g.shape] == [repr(s)[0] for s in t.shape]  # [2, j., 2]
    assert g.shape[0] == 2 and g.shape[2] == 2 and len(g) == len(t)
    assert g.shape[1] == (g * 2).shape[1]  # the same offsets, the same ragged size
    assert g.shape[1] != _jagged(gt).shape[1]
    _same(g.offsets(), t.offsets())
    assert g.lengths() is None and t.lengths() is None
    assert repr(g).split("j")[0] == repr(t).split("j")[0]
    assert repr(g).split("offsets")[1] == repr(t).split("offsets")[1]


def test_components_are_views_of_values():
    g = _jagged(gt)
    g.unbind()[1].add_(100)
    assert g.values()[3:].min().item() >= 100
    g.mul_(0)
    assert g.values().abs().sum().item() == 0


OPS = [
    lambda x: x + 1, lambda x: x * x, lambda x: (x * 2.5).relu(), lambda x: -x, abs,
    lambda x: x.float().softmax(-1), lambda x: x.to(x.dtype.__class__ and x.dtype),
    lambda x: x.masked_fill(x > 1, 0), lambda x: x.clone(), lambda x: x.float().sin(),
]


@pytest.mark.parametrize("make", [_strided, _jagged])
@pytest.mark.parametrize("i", range(len(OPS)))
def test_pointwise(make, i):
    _same(*_both(lambda lib: OPS[i](make(lib))))


def _jagged_ops(lib):
    nt = _jagged(lib)
    w = lib.arange(6.0).reshape(3, 2) / 10
    return [nt.sum(), nt.sum(1), nt.mean(-1), nt + lib.ones(2), nt.matmul(w.T),
            lib.nn.functional.linear(nt, w, lib.ones(3)),
            lib.nn.functional.layer_norm(nt, (2,)), nt.softmax(1), nt.amax(-1)]


def test_jagged_reductions_and_products():
    for g, t in zip(*_both(_jagged_ops), strict=True):
        _same(g, t)


def test_strided_dims_and_transpose():
    def f(lib):
        nt = lib.nested.nested_tensor([lib.arange(6.0).reshape(2, 3), lib.ones(4, 3)])
        return [nt.transpose(1, 2), nt.sum(-1, keepdim=True), nt.to_padded_tensor(0, (2, 5, 4))]
    for g, t in zip(*_both(f), strict=True):
        _same(g, t)


def test_from_jagged_and_as_nested():
    def f(lib):
        v = lib.arange(10.0).reshape(5, 2)
        return [lib.nested.nested_tensor_from_jagged(v, lib.tensor([0, 2, 5])),
                lib.nested.nested_tensor_from_jagged(v, lengths=lib.tensor([2, 3])),
                lib.nested.as_nested_tensor(lib.ones(2, 3)),
                lib.nested.as_nested_tensor(lib.ones(2, 3), layout=lib.jagged),
                lib.nested.nested_tensor([lib.ones(2, dtype=lib.int64), lib.ones(2)])]
    for g, t in zip(*_both(f), strict=True):
        _same(g, t)
    g, t = _both(lambda lib: lib.nested.nested_tensor_from_jagged(
        lib.arange(10.0).reshape(5, 2), lib.tensor([0, 2, 5]), lengths=lib.tensor([1, 2])))
    assert not g.is_contiguous() and not t.is_contiguous()
    for gp, tp in zip(g.unbind(), t.unbind(), strict=True):
        _same(gp, tp)


ERRORS = [
    lambda lib: lib.nested.nested_tensor([lib.ones(2), lib.ones(2, 2)]),
    lambda lib: lib.nested.nested_tensor((lib.ones(2),)),
    lambda lib: lib.nested.nested_tensor([lib.ones(())], layout=lib.jagged),
    lambda lib: lib.nested.to_padded_tensor(lib.ones(2), 0.0),
    lambda lib: _strided(lib) + lib.nested.nested_tensor([[1], [3], [4]]),
    lambda lib: _strided(lib) + lib.ones(1),
    lambda lib: _jagged(lib) + lib.ones(2, 3),
    lambda lib: _strided(lib).float().softmax(0),
    lambda lib: _jagged(lib).softmax(0),
    lambda lib: _strided(lib).sum(-1),
    lambda lib: _strided(lib).sum(),
    lambda lib: lib.nested.nested_tensor([lib.ones(2, 3)]).to_padded_tensor(0, (1, 1, 3)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with pytest.raises(Exception) as te:
        ERRORS[i](torch)
    with pytest.raises(te.type) as ge:
        ERRORS[i](gt)
    def first_line(e):  # (ragged sizes are numbered per process)
        return re.sub(r"j\d+", "j", str(e.value).split("\n")[0])
    assert first_line(ge) == first_line(te) or te.type is NotImplementedError


def test_no_result_requires_grad_without_backward():
    nt = gt.nested.nested_tensor([[1.0, 2.0], [3.0]], requires_grad=True)
    assert nt.requires_grad and nt.is_leaf
    with pytest.raises(RuntimeError, match="autograd through nested tensors"):
        nt * 2
    with gt.no_grad():
        assert not (nt * 2).requires_grad
    with pytest.raises(RuntimeError, match="autograd through nested tensors"):
        gt.nested.as_nested_tensor([gt.ones(2, requires_grad=True)])


@pytest.mark.parametrize("make", [_strided, _jagged])
def test_copies_and_pickle_keep_the_components(make):
    import copy
    import io
    import pickle
    nt, ref = make(gt), make(torch)
    for other in (copy.deepcopy(nt), copy.copy(nt), pickle.loads(pickle.dumps(nt))):
        _same(other, ref)
    with pytest.raises(RuntimeError, match="nested tensor is not supported"):
        gt.save(nt, io.BytesIO())
