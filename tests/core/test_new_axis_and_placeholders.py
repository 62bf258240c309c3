"""Leftover defects checked against torch: the strides of dims that indexing with None adds,
placeholders of lazy modules used before materialization, and integer arguments of the random
factories."""

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

_SOURCES = [lambda L: L.zeros(2, 3, 4), lambda L: L.zeros(2, 3).t(),
            lambda L: L.zeros(4, 3)[::2], lambda L: L.zeros(5), lambda L: L.zeros(()),
            lambda L: L.zeros(2, 3)[:, 1:]]
_INDEXES = [(None,), (slice(None), None), (Ellipsis, None), (None, None), (0, None),
            (slice(None, None, 2), None), (None, 0), (None, Ellipsis, None),
            (None, slice(1, None), None), (Ellipsis, None, slice(None))]


@pytest.mark.parametrize("src", range(len(_SOURCES)))
def test_new_axis_strides_and_offsets_match_torch(src):
    for ix in _INDEXES:
        try:
            t = _SOURCES[src](torch)[ix]
        except IndexError:
            with pytest.raises(IndexError):
                _SOURCES[src](gt)[ix]
            continue
        g = _SOURCES[src](gt)[ix]
        assert (tuple(g.shape), g.stride(), g.storage_offset()) == (
            tuple(t.shape), t.stride(), t.storage_offset()), ix
        assert g.is_contiguous() == t.is_contiguous(), ix


def test_new_axis_result_stays_a_view():
    x = gt.zeros(2, 3)
    v = x[:, None]
    assert v._base is x
    v[1, 0, 2] = 5
    assert x[1, 2].item() == 5
    y = gt.arange(6.).reshape(2, 3).requires_grad_()
    y[None, :, None].sum().backward()
    assert y.grad.tolist() == [[1.0] * 3] * 2


def _uses(L):
    p = L.nn.parameter.UninitializedParameter()
    return [lambda: p + 1, lambda: p.sum(), lambda: L.mul(p, 2), lambda: p.numel(),
            lambda: L.nn.functional.linear(L.ones(2, 3), p), lambda: p.view(2),
            lambda: p.detach(), lambda: p.clone(), lambda: p.shape,
            lambda: L.nn.parameter.UninitializedBuffer() * 2]


def test_uninitialized_parameter_refuses_computation_like_torch():
    for tf, gf in zip(_uses(torch), _uses(gt)):
        with pytest.raises(Exception) as te:
            tf()
        with pytest.raises(type(te.value)) as ge:
            gf()
        head = str(te.value).split(" in ")[0]
        assert str(ge.value).startswith(head)


def test_uninitialized_parameter_allowed_uses_and_materialize():
    p = gt.nn.parameter.UninitializedParameter()
    tp = torch.nn.parameter.UninitializedParameter()
    assert tuple(p.size()) == tuple(tp.size()) and p.dtype is gt.float32
    assert p.requires_grad and p.ndim == tp.ndim
    p.materialize((2, 3))
    assert type(p) is gt.nn.Parameter and tuple((p * 0 + 1).shape) == (2, 3)
    m = gt.nn.LazyLinear(4)
    assert tuple(m(gt.ones(2, 3)).shape) == (2, 4)


@pytest.mark.parametrize("call", [
    lambda L: L.randint(5.5, (2,)), lambda L: L.randint(0, 5.5, (2,)),
    lambda L: L.randint(0.0, 5, (2,)), lambda L: L.randint(True, (2,)),
    lambda L: L.randint(L.tensor(5.), (2,)), lambda L: L.randperm(5.0),
    lambda L: L.randperm(True)])
def test_random_factories_refuse_non_integers_like_torch(call):
    with pytest.raises(TypeError) as te:
        call(torch)
    with pytest.raises(TypeError) as ge:
        call(gt)
    assert str(ge.value).split(" - got")[0].split(", but")[0] == str(te.value).split(
        " - got")[0].split(", but")[0]


@pytest.mark.parametrize("call", [
    lambda L: L.randint(L.tensor(5), (20,)), lambda L: L.randint(np.int64(5), (20,)),
    lambda L: L.randperm(L.tensor(7)), lambda L: L.randperm(np.int64(7))])
def test_random_factories_take_integer_likes_like_torch(call):
    torch.manual_seed(3)
    gt.manual_seed(3)
    assert call(gt).tolist() == call(torch).tolist()


def _lazy_module_uses(L):
    import copy
    m = L.nn.LazyLinear(4)
    out = [sorted(m.state_dict()), type(m.to(L.float64)).__name__,
           type(copy.deepcopy(m)).__name__, len(list(m.parameters()))]
    try:
        m.requires_grad_(False)
    except ValueError as e:
        out.append(str(e).split(" in ")[0])
    out.append(str(m.load_state_dict(L.nn.Linear(3, 4).state_dict())))
    out.append(tuple(m(L.ones(2, 3, dtype=L.float64)).shape))
    return out


def test_lazy_modules_before_their_first_forward_behave_like_torch():
    # state_dict keeps the placeholders, Module.to sets their dtype, ops on them refuse
    assert _lazy_module_uses(gt) == _lazy_module_uses(torch)
