"""glasstorch.utils.hooks against torch.utils.hooks: RemovableHandle, unserializable_hook,
warn_if_has_hooks and BackwardHook."""

import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import glasstorch
from glasstorch.utils import hooks as ghooks

torch = pytest.importorskip("torch")
import torch.utils.hooks as thooks  # noqa: E402


@pytest.mark.parametrize("mod", [ghooks, thooks], ids=["glasstorch", "torch"])
def test_removable_handle(mod):
    hooks, extra, extra2 = OrderedDict(), OrderedDict(), OrderedDict()
    start = mod.RemovableHandle.next_id
    h1 = mod.RemovableHandle(hooks)
    h2 = mod.RemovableHandle(hooks, extra_dict=extra)
    h3 = mod.RemovableHandle(hooks, extra_dict=[extra, extra2])
    assert (h1.id, h2.id, h3.id) == (start, start + 1, start + 2)
    assert mod.RemovableHandle.next_id == start + 3
    for h in (h1, h2, h3):
        hooks[h.id] = "hook"
    extra[h2.id] = extra[h3.id] = extra2[h3.id] = True
    h2.remove()
    assert list(hooks) == [h1.id, h3.id] and list(extra) == [h3.id]
    h2.remove()  # removing twice is fine
    with h3:
        pass
    assert list(hooks) == [h1.id] and not extra and not extra2
    with pytest.raises(TypeError):
        mod.RemovableHandle({})  # a plain dict cannot be weakly referenced


@pytest.mark.parametrize("mod", [ghooks, thooks], ids=["glasstorch", "torch"])
def test_handle_pickling(mod):
    hooks, extra = OrderedDict(), OrderedDict()
    h = mod.RemovableHandle(hooks, extra_dict=extra)
    hooks[h.id] = 1
    extra[h.id] = 1
    state = h.__getstate__()
    assert state[0] is hooks and state[1] == h.id and state[2] == (extra,)
    # unpickled together with its dicts, the handle still removes from the copies
    h2, hooks2, extra2 = pickle.loads(pickle.dumps((h, hooks, extra)))
    assert h2.id == h.id
    h2.remove()
    assert not hooks2 and not extra2 and list(hooks) == [h.id]
    # a handle whose dict died unpickles with a dead reference; later ids skip past it
    h3 = mod.RemovableHandle.__new__(mod.RemovableHandle)
    h3.__setstate__((None, mod.RemovableHandle.next_id + 10))
    assert h3.hooks_dict_ref() is None and h3.extra_dict_ref == ()
    h3.remove()
    assert mod.RemovableHandle(OrderedDict()).id == h3.id + 1


def test_module_and_optimizer_handles_are_this_class():
    lin = glasstorch.nn.Linear(2, 2)
    calls = []
    h = lin.register_forward_hook(lambda m, i, o: calls.append("hook"), always_call=True)
    assert type(h) is ghooks.RemovableHandle
    assert h.id in lin._forward_hooks and h.id in lin._forward_hooks_always_called
    lin(glasstorch.ones(1, 2))
    h.remove()
    assert h.id not in lin._forward_hooks and h.id not in lin._forward_hooks_always_called
    lin(glasstorch.ones(1, 2))
    assert calls == ["hook"]
    with lin.register_forward_pre_hook(lambda m, i: calls.append("pre")):
        lin(glasstorch.ones(1, 2))
    lin(glasstorch.ones(1, 2))
    assert calls == ["hook", "pre"]
    a, b = lin.register_forward_hook(lambda *a: None), lin.register_forward_hook(lambda *a: None)
    assert b.id == a.id + 1  # one counter for every handle, as torch


def _count_warnings(mod, tensor):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        mod.warn_if_has_hooks(tensor)
    return [str(w.message) for w in rec]


def test_unserializable_hook_and_warn_if_has_hooks():
    for lib, mod in ((glasstorch, ghooks), (torch, thooks)):
        leaf = lib.ones(2, requires_grad=True)
        assert _count_warnings(mod, leaf) == []
        leaf.register_hook(lambda g: g)

        @mod.unserializable_hook
        def quiet(g):
            return g

        assert quiet.__torch_unserializable__ is True
        leaf.register_hook(quiet)
        msgs = _count_warnings(mod, leaf)
        assert len(msgs) == 1 and "will not be serialized" in msgs[0]
        nonleaf = leaf * 2
        handle = nonleaf.register_hook(lambda g: g)
        assert len(_count_warnings(mod, nonleaf)) == 1
        handle.remove()
        assert _count_warnings(mod, nonleaf) == []


def _run_backward_hook(lib, mod, weight, x_val):
    lin = lib.nn.Linear(3, 2, bias=False)
    with lib.no_grad():
        lin.weight.copy_(lib.from_numpy(weight))
    seen = {}

    def pre(module, grad_output):
        seen["pre"] = [g.detach().numpy().copy() for g in grad_output]
        return (grad_output[0] * 2,)

    def hook(module, grad_input, grad_output):
        seen["in"] = [None if g is None else g.detach().numpy().copy() for g in grad_input]
        seen["out"] = [g.detach().numpy().copy() for g in grad_output]

    bw = mod.BackwardHook(lin, [hook], [pre])
    x = lib.from_numpy(x_val).requires_grad_()
    args = bw.setup_input_hook((x, 5))
    assert args[1] == 5  # non-tensor inputs pass through (and show up as None)
    out = bw.setup_output_hook(lin(args[0]))
    out.sum().backward()
    return seen, x.grad.numpy()


def test_backward_hook_like_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    g_seen, g_grad = _run_backward_hook(glasstorch, ghooks, w, x)
    t_seen, t_grad = _run_backward_hook(torch, thooks, w, x)
    np.testing.assert_allclose(g_grad, t_grad)
    np.testing.assert_allclose(g_seen["pre"][0], t_seen["pre"][0])
    np.testing.assert_allclose(g_seen["out"][0], t_seen["out"][0])  # after the pre-hook
    assert len(g_seen["in"]) == len(t_seen["in"]) == 2 and g_seen["in"][1] is None
    np.testing.assert_allclose(g_seen["in"][0], t_seen["in"][0])
    lin = glasstorch.nn.Linear(3, 2)
    bw = ghooks.BackwardHook(lin, [], [])
    assert bw.user_hooks == [] and bw.user_pre_hooks == [] and bw.module is lin
