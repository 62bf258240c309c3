"""Property tests: random index expressions on random tensors, glasstorch vs torch.

Each example builds the same tensor in both libraries (sometimes transposed, so it is
non-contiguous), indexes it with one random expression mixing ints, strided slices,
None, Ellipsis, index lists/tensors and boolean masks, and compares values, shape,
strides, storage offset and view-ness; then assigns a broadcastable value through the
same expression and compares the written tensors.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glasstorch

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tensor_and_index(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=4)))
    transposed = draw(st.booleans()) and len(shape) > 1
    items = []
    dim = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, len(shape) + 1))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "list",
                                     "mask", "scalar_tensor", "bool"]))
        if kind == "none":
            items.append(("none",))
            continue
        if kind == "bool":
            items.append(("bool", draw(st.booleans())))
            continue
        if kind == "ellipsis":
            if not ellipsis:
                ellipsis = True
                items.append(("ellipsis",))
            continue
        if dim >= len(shape):
            break
        size = shape[dim]
        if kind in ("int", "scalar_tensor"):
            # sometimes out of range, to compare the errors too
            i = draw(st.integers(-size - 1, size)) if size else draw(st.integers(-1, 1))
            items.append((kind, i))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-size - 2, size + 2))
            stop = draw(st.none() | st.integers(-size - 2, size + 2))
            step = draw(st.none() | st.integers(1, 3))
            items.append(("slice", slice(start, stop, step)))
        elif kind == "list":
            n = draw(st.integers(0, 3))
            hi = max(size - 1, 0)
            items.append(("list", draw(st.lists(st.integers(-size, hi), min_size=n,
                                                max_size=n)) if size else []))
        else:
            items.append(("mask", draw(st.lists(st.booleans(), min_size=size, max_size=size))))
        dim += 1
    return shape, transposed, items


def _make(lib, shape, transposed):
    n = int(np.prod(shape))
    if transposed:
        t = lib.arange(n, dtype=lib.float32).reshape(*reversed(shape))
        return t.permute(*reversed(range(len(shape))))
    return lib.arange(n, dtype=lib.float32).reshape(*shape)


def _index(lib, items):
    out = []
    for it in items:
        kind = it[0]
        if kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind in ("int", "slice", "bool"):
            out.append(it[1])
        elif kind == "scalar_tensor":
            out.append(lib.tensor(it[1]))
        elif kind == "list":
            out.append(lib.tensor(it[1], dtype=lib.int64))
        else:
            out.append(lib.tensor(it[1], dtype=lib.bool))
    return tuple(out)


def _compare(ours, theirs, base_g, base_t):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    t_view = theirs.untyped_storage().data_ptr() == base_t.untyped_storage().data_ptr()
    g_view = ours.untyped_storage().data_ptr() == base_g.untyped_storage().data_ptr()
    if theirs.numel():
        assert g_view == t_view, f"view-ness {g_view} != {t_view}"
    if t_view and theirs.numel():
        keep = [i for i, s in enumerate(theirs.shape) if s != 1]
        assert [ours.stride(i) for i in keep] == [theirs.stride(i) for i in keep]
        assert ours.storage_offset() == theirs.storage_offset()


def _run_both(fn_t, fn_g):
    try:
        expected = fn_t()
    except Exception as e:  # torch refuses: glasstorch must refuse with the same type
        with pytest.raises(type(e)):
            fn_g()
        return None, None
    return fn_g(), expected


@SETTINGS
@given(tensor_and_index())
def test_getitem_matches_torch(case):
    shape, transposed, items = case
    xt, xg = _make(torch, shape, transposed), _make(glasstorch, shape, transposed)
    it, ig = _index(torch, items), _index(glasstorch, items)
    ours, theirs = _run_both(lambda: xt[it], lambda: xg[ig])
    if theirs is not None:
        _compare(ours, theirs, xg, xt)


@SETTINGS
@given(tensor_and_index(), st.data())
def test_setitem_matches_torch(case, data):
    shape, transposed, items = case
    xt, xg = _make(torch, shape, transposed), _make(glasstorch, shape, transposed)
    it, ig = _index(torch, items), _index(glasstorch, items)
    try:
        target = tuple(xt[it].shape)
    except Exception:
        target = (2,)
    # a value that broadcasts to the target: a suffix of its shape with some dims set to 1
    k = data.draw(st.integers(0, len(target)))
    vshape = [s if data.draw(st.booleans()) else 1 for s in target[len(target) - k:]]
    if data.draw(st.booleans()):
        value_t = value_g = data.draw(st.integers(-100, 100))
    else:
        vals = np.arange(1000, 1000 + int(np.prod(vshape)), dtype=np.float32).reshape(vshape)
        value_t, value_g = torch.from_numpy(vals.copy()), glasstorch.from_numpy(vals.copy())

    def set_t():
        xt[it] = value_t
        return xt

    def set_g():
        xg[ig] = value_g
        return xg

    ours, theirs = _run_both(set_t, set_g)
    if theirs is not None:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_gather_scatter_match_torch(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    ishape = [data.draw(st.integers(0, s)) for s in shape]
    ishape[dim] = data.draw(st.integers(0, 4))
    n = int(np.prod(ishape))
    idx = np.asarray(data.draw(st.lists(st.integers(0, shape[dim] - 1), min_size=n,
                                        max_size=n)), dtype=np.int64).reshape(ishape)
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    src = -np.arange(n, dtype=np.float64).reshape(ishape) - 1
    g = glasstorch.gather(glasstorch.from_numpy(x), dim, glasstorch.from_numpy(idx))
    t = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(idx))
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        inc = data.draw(st.booleans())
        g = glasstorch.from_numpy(x).scatter_reduce(dim, glasstorch.from_numpy(idx),
                                                    glasstorch.from_numpy(src), reduce,
                                                    include_self=inc)
        t = torch.from_numpy(x).scatter_reduce(dim, torch.from_numpy(idx), torch.from_numpy(src),
                                               reduce, include_self=inc)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)
