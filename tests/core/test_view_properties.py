"""Property tests: reshape/view strides, views sharing storage, broadcasting - vs torch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glasstorch as gt

torch = pytest.importorskip("torch")

dims = st.lists(st.integers(1, 4), min_size=0, max_size=4)


def _factorisations(n, max_len=4):
    """Shapes whose product is n."""
    return st.lists(st.sampled_from([d for d in range(1, n + 1) if n % d == 0] or [1]),
                    max_size=max_len).filter(lambda s: int(np.prod(s)) == n)


@st.composite
def strided_case(draw):
    shape = draw(dims)
    perm = draw(st.permutations(range(len(shape))))
    n = int(np.prod(shape)) if shape else 1
    new_shape = draw(st.one_of(_factorisations(n), st.just([n])))
    return shape, list(perm), new_shape


def _pair(shape, perm):
    data = np.arange(int(np.prod(shape)) if shape else 1, dtype=np.float32).reshape(shape)
    t = torch.from_numpy(data.copy()).permute(perm)
    g = gt.from_numpy(data.copy()).permute(perm)
    return t, g


def _same_view(g, t, g_in, t_in):
    assert tuple(g.shape) == tuple(t.shape)
    assert [s for s, n in zip(g.stride(), g.shape) if n != 1] == \
        [s for s, n in zip(t.stride(), t.shape) if n != 1]
    assert g.storage_offset() == t.storage_offset()
    g_shares = g.untyped_storage().data_ptr() == g_in.untyped_storage().data_ptr()
    t_shares = t.untyped_storage().data_ptr() == t_in.untyped_storage().data_ptr()
    assert g_shares == t_shares
    np.testing.assert_array_equal(g.numpy(), t.numpy())


@settings(max_examples=150, deadline=None)
@given(strided_case())
def test_view_matches_torch(case):
    shape, perm, new_shape = case
    t, g = _pair(shape, perm)
    try:
        tv = t.view(new_shape)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            g.view(new_shape)
        return
    _same_view(g.view(new_shape), tv, g, t)


@settings(max_examples=150, deadline=None)
@given(strided_case())
def test_reshape_views_exactly_when_torch_does(case):
    shape, perm, new_shape = case
    t, g = _pair(shape, perm)
    tr, gr = t.reshape(new_shape), g.reshape(new_shape)
    assert (gr._base is not None) == (tr._base is not None)
    if tr._base is not None:
        _same_view(gr, tr, g, t)
    else:
        np.testing.assert_array_equal(gr.numpy(), tr.numpy())


@settings(max_examples=150, deadline=None)
@given(dims, dims)
def test_broadcasting_matches_torch(sa, sb):
    a = np.ones(sa, dtype=np.float32)
    b = np.ones(sb, dtype=np.float32)
    try:
        expected = torch.from_numpy(a) + torch.from_numpy(b)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            gt.from_numpy(a) + gt.from_numpy(b)
        assert str(info.value) == str(e)
        return
    assert tuple((gt.from_numpy(a) + gt.from_numpy(b)).shape) == tuple(expected.shape)


def test_version_counter_is_shared_by_views():
    x = gt.zeros(3, 4)
    v = x.t().select(0, 1)
    w = x.view(12)
    assert x._version == v._version == w._version == 0
    v.add_(1)
    assert x._version == v._version == w._version == 1
    x.mul_(2)
    assert w._version == 2
    assert w._base is x and v._base is x


def test_untyped_storage_and_offsets():
    x = gt.arange(12).view(3, 4)
    col = x.t().select(0, 1)
    assert col.storage_offset() == 1 and col.stride() == (4,)
    assert col.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert x.untyped_storage().nbytes() == 12 * 8
    assert x.data_ptr() + 8 == col.data_ptr()


def test_views_of_dense_permuted_storage_share_memory():
    # elementwise results of permuted inputs are dense but neither C- nor F-ordered
    x = gt.arange(24.0).view(2, 3, 4)
    b = x.transpose(-2, -1) * 1.0
    for v in (b.expand(b.shape), b.unsqueeze(0)[0], b.diagonal(0, 1, 2)):
        assert v.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        np.testing.assert_array_equal(v.numpy(), b.numpy() if v.shape == b.shape else
                                      np.diagonal(b.numpy(), 0, 1, 2))
    b.unsqueeze(0)[0, 1, 2, 0] = -1.0
    assert b[1, 2, 0].item() == -1.0
    assert b.untyped_storage().nbytes() == 24 * 4
