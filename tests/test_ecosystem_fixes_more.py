"""Regression tests for differences from torch met by the second set of ecosystem libraries
(kornia, pyro, torch-optimizer, torch-ema), each compared with torch live."""

import copy
import warnings

import numpy as np
import pytest

import glasstorch
from glasstorch import overrides

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return (type(e).__name__, str(e))


# ------------------------------------------------- deepcopy of a non-leaf (torch-ema's state)

def test_deepcopy_refuses_non_leaf_like_torch():
    def run(L):
        a = L.ones(2, requires_grad=True)
        with L.no_grad():
            c = copy.deepcopy(a * 2)  # no graph: a leaf
        return _outcome(lambda: copy.deepcopy(a * 2)), c.requires_grad, c.is_leaf

    assert run(glasstorch) == run(torch)


# ---------------------------------- deprecated scalar-first overloads (torch-optimizer's Ranger)

_DEPRECATED = [lambda L, x, a, b: x.clone().add_(2, a), lambda L, x, a, b: L.add(x, 2, a),
               lambda L, x, a, b: x.sub(0.5, a), lambda L, x, a, b: x.clone().sub_(3, b),
               lambda L, x, a, b: x.clone().addcmul_(0.5, a, b),
               lambda L, x, a, b: L.addcmul(x, 0.5, a, b),
               lambda L, x, a, b: x.addcdiv(0.5, a, b), lambda L, x, a, b: L.addcdiv(x, 2, a, b),
               lambda L, x, a, b: L.add(x, 2, 3), lambda L, x, a, b: x.add(a, 2, alpha=3)]


@pytest.mark.parametrize("call", _DEPRECATED)
def test_deprecated_overloads_match_torch(call):
    def run(L):
        x, a, b = L.ones(3), L.arange(3.0), L.full((3,), 2.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kind, value = _outcome(lambda: call(L, x, a, b))
        return kind, value.tolist() if kind == "ok" else None

    assert run(glasstorch) == run(torch)


def test_deprecated_overload_gradient():
    a = glasstorch.arange(3.0, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glasstorch.ones(3).addcmul(0.5, a, a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 1.0, 2.0])


def test_deprecated_overload_warns_once_with_torch_text(monkeypatch):
    monkeypatch.setattr(overrides, "_deprecated_warned", False)
    x, a, b = glasstorch.ones(3), glasstorch.arange(3.0), glasstorch.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.clone().addcmul_(0.5, a, b)
        glasstorch.add(x, 2, a)
    assert [str(w.message) for w in caught] == [
        "This overload of addcmul_ is deprecated:\n\taddcmul_(Number value, Tensor tensor1, "
        "Tensor tensor2)\nConsider using one of the following signatures instead:\n\t"
        "addcmul_(Tensor tensor1, Tensor tensor2, *, Number value = 1)"]
    assert caught[0].filename == __file__


# ------------------------------------------------------------ names kornia and pyro import

def test_package_holds_itself():
    assert glasstorch.torch is glasstorch and torch.torch is torch


def test_nn_modules_utils_match_torch():
    from torch.nn.modules import utils as theirs

    from glasstorch.nn.modules import utils as mine

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), "ab", [4]):
            assert getattr(mine, name)(arg) == getattr(theirs, name)(arg)
        assert getattr(mine, name).__name__ == getattr(theirs, name).__name__
    assert mine._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    for args in ((5, (1, 2)), ([None, 3], (1, 2, 5, 6)), ([None, 3], (1, 2))):
        assert _outcome(lambda: mine._list_with_default(*args)) == \
            _outcome(lambda: theirs._list_with_default(*args))

    def stripped(L, m):
        state = L.nn.Sequential(L.nn.Linear(2, 2)).state_dict()
        state = type(state)(("module." + k, v) for k, v in state.items())
        state._metadata = {"module": {"version": 1}, "module.0": {"version": 1}, "": {}}
        m.consume_prefix_in_state_dict_if_present(state, "module.")
        return list(state), state._metadata

    assert stripped(glasstorch, mine) == stripped(torch, theirs)


def test_functorch_transforms_active():
    def run(L):
        inside = L.func.vmap(lambda x: x * 0 + L._C._are_functorch_transforms_active())
        in_grad = []
        L.func.grad(lambda x: (in_grad.append(L._C._are_functorch_transforms_active()),
                               x.sum())[1])(L.ones(2))
        return L._C._are_functorch_transforms_active(), inside(L.ones(2)).tolist(), in_grad

    assert run(glasstorch) == run(torch)


@pytest.mark.parametrize("args", [(True,), (False,), (False, "labels must be >= 0"), (0.0,),
                                  ([1, 1],), ([],)])
def test_assert_async_matches_torch(args):
    def run(L):
        return _outcome(lambda: L._assert_async(L.tensor(args[0]), *args[1:]))

    assert run(glasstorch) == run(torch)


def test_register_kl_takes_any_class_like_torch():
    class Base:  # pyro's Distribution is a class beside torch's
        pass

    def run(L):
        from_kl = L.distributions.kl.register_kl
        return (_outcome(lambda: from_kl(L.distributions.Normal, Base)(lambda p, q: 0) and 1),
                _outcome(lambda: from_kl(L.distributions.Normal, 3)))

    assert run(glasstorch) == run(torch)


def test_tracing_queries_answer_no_tracing():
    from torch._subclasses.fake_tensor import is_fake as torch_is_fake

    from glasstorch._subclasses.fake_tensor import is_fake
    from glasstorch.fx.experimental.proxy_tensor import get_proxy_mode

    for L, fake in ((glasstorch, is_fake), (torch, torch_is_fake)):
        assert fake(L.ones(2)) is False and fake(L.empty(2, device="meta")) is False
    assert get_proxy_mode() is None
    assert isinstance(3, (int, glasstorch.SymInt))
