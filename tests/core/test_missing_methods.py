"""cov/corrcoef beyond the op table (warnings, double backward), pin_memory on a machine without
an accelerator, share_memory_ across a fork, as_subclass and numpy(force=True), against torch."""

import multiprocessing
import sys
import warnings

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")


def outcome(fn):
    """('ok', None) or (exception type name, first line of its message)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return type(e).__name__, str(e).splitlines()[0]
    return "ok", None


def caught_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category, str(x.message).split(" (Triggered internally")[0]) for x in w]


# ----------------------------------------------------------------------------- cov, corrcoef

@pytest.mark.parametrize("call", [
    lambda L: L.cov(L.ones(3, 1)),
    lambda L: L.cov(L.tensor(2.0)),
    lambda L: L.cov(L.ones(2, 4), correction=4),
    lambda L: L.cov(L.ones(2, 3), aweights=L.ones(3), correction=5),
    lambda L: L.corrcoef(L.ones(3, 1)),
    lambda L: L.cov(L.ones(3, 4)),  # no warning
], ids=["one-observation", "0-d", "correction=n", "aweights", "corrcoef", "none"])
def test_cov_warns_like_torch(call):
    assert caught_warnings(lambda: call(gt)) == caught_warnings(lambda: call(torch))


def test_cov_leaves_a_single_observation_input_alone():
    # torch 2.13 zeroes the input here (cov with fweights and one observation); we do not
    x = np.array([[3.0], [1.0]])
    expected = torch.cov(torch.from_numpy(x.copy()), fweights=torch.tensor([3]))
    g = gt.from_numpy(x.copy())
    got = gt.cov(g, fweights=gt.tensor([3]))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    np.testing.assert_array_equal(g.numpy(), x)


@pytest.mark.parametrize("fn", ["cov", "corrcoef"])
def test_cov_double_backward(fn):
    rng = np.random.default_rng(0)
    x = gt.from_numpy(rng.standard_normal((3, 6))).requires_grad_()
    assert gt.autograd.gradgradcheck(getattr(gt, fn), (x,))


def test_cov_aweights_double_backward_matches_torch():
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((3, 5)), rng.uniform(0.5, 2, 5)

    def second_grads(L):
        x = L.from_numpy(xs.copy()).requires_grad_()
        w = L.from_numpy(ws.copy()).requires_grad_()
        c = L.cov(x, aweights=w, correction=2)
        gx, gw = L.autograd.grad((c * c).sum(), (x, w), create_graph=True)
        return L.autograd.grad(gx.sum() + gw.sum(), (x, w))

    for g, t in zip(second_grads(gt), second_grads(torch)):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-10)


# ----------------------------------------------------------------------------- pin_memory

_x = {"glasstorch": gt.ones(3), "torch": torch.ones(3)}  # by module name

FACTORIES = {
    "zeros": lambda L, pm: L.zeros(3, pin_memory=pm),
    "ones": lambda L, pm: L.ones(3, pin_memory=pm),
    "empty": lambda L, pm: L.empty(3, pin_memory=pm),
    "full": lambda L, pm: L.full((3,), 1.0, pin_memory=pm),
    "arange": lambda L, pm: L.arange(3, pin_memory=pm),
    "linspace": lambda L, pm: L.linspace(0, 1, 3, pin_memory=pm),
    "logspace": lambda L, pm: L.logspace(0, 1, 3, pin_memory=pm),
    "eye": lambda L, pm: L.eye(2, pin_memory=pm),
    "empty_strided": lambda L, pm: L.empty_strided((3,), (1,), pin_memory=pm),
    "tensor": lambda L, pm: L.tensor([1], pin_memory=pm),
    "scalar_tensor": lambda L, pm: L.scalar_tensor(1, pin_memory=pm),
    "zeros_like": lambda L, pm: L.zeros_like(_x[L.__name__], pin_memory=pm),
    "ones_like": lambda L, pm: L.ones_like(_x[L.__name__], pin_memory=pm),
    "empty_like": lambda L, pm: L.empty_like(_x[L.__name__], pin_memory=pm),
    "full_like": lambda L, pm: L.full_like(_x[L.__name__], 2, pin_memory=pm),
    "rand_like": lambda L, pm: L.rand_like(_x[L.__name__], pin_memory=pm),
    "randn_like": lambda L, pm: L.randn_like(_x[L.__name__], pin_memory=pm),
    "randint_like": lambda L, pm: L.randint_like(_x[L.__name__], 3, pin_memory=pm),
    "rand": lambda L, pm: L.rand(3, pin_memory=pm),
    "randn": lambda L, pm: L.randn(3, pin_memory=pm),
    "randint": lambda L, pm: L.randint(3, (3,), pin_memory=pm),
    "randperm": lambda L, pm: L.randperm(3, pin_memory=pm),
    "normal": lambda L, pm: L.normal(0.0, 1.0, (3,), pin_memory=pm),
    "new_zeros": lambda L, pm: _x[L.__name__].new_zeros(3, pin_memory=pm),
    "new_ones": lambda L, pm: _x[L.__name__].new_ones(3, pin_memory=pm),
    "new_empty": lambda L, pm: _x[L.__name__].new_empty(3, pin_memory=pm),
    "new_full": lambda L, pm: _x[L.__name__].new_full((3,), 1, pin_memory=pm),
    # these take no pin_memory at all
    "as_tensor": lambda L, pm: L.as_tensor([1], pin_memory=pm),
    "asarray": lambda L, pm: L.asarray([1], pin_memory=pm),
    "new_tensor": lambda L, pm: _x[L.__name__].new_tensor([1], pin_memory=pm),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_pin_memory_argument_like_torch(name):
    make = FACTORIES[name]
    for pm in (False, None, True, 1):
        got, expected = outcome(lambda: make(gt, pm)), outcome(lambda: make(torch, pm))
        if expected[0] == "TypeError" and ("unexpected keyword" in expected[1] or pm == 1):
            assert got[0] == "TypeError", (pm, got)  # torch's wording varies by overload
        else:
            assert got == expected, pm


def test_tensor_pin_memory_and_is_pinned_like_torch():
    for L in (gt, torch):
        assert L.zeros(2).is_pinned() is False
    assert outcome(lambda: gt.zeros(2).pin_memory()) == outcome(lambda: torch.zeros(2).pin_memory())
    # the deprecated device argument: a DeprecationWarning, then the same answer
    for call in (lambda L: L.zeros(2).is_pinned("cpu"),
                 lambda L: outcome(lambda: L.zeros(2).pin_memory("cpu"))):
        assert caught_warnings(lambda: call(gt))[:1] == caught_warnings(lambda: call(torch))[:1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert call(gt) == call(torch)


# ----------------------------------------------------------------------------- share_memory_

def _write_in_child(t, index, value):
    t[index] = value


def _run_forked(target, *args):
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=target, args=args)
    p.start()
    p.join(10)
    assert p.exitcode == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
def test_share_memory_makes_a_forked_childs_writes_visible():
    private = gt.zeros(3)
    _run_forked(_write_in_child, private, 1, 5.0)
    assert private.tolist() == [0.0, 0.0, 0.0]  # copy-on-write: the parent never sees it

    for L in (gt, torch):
        t = L.zeros(4)
        view = t[1:]
        assert not t.is_shared()
        assert t.share_memory_() is t
        assert t.is_shared() and view.is_shared()
        _run_forked(_write_in_child, view, 1, 5.0)  # through a view made before sharing
        assert t.tolist() == [0.0, 0.0, 5.0, 0.0], L.__name__


def test_share_memory_keeps_views_aliases_and_version_counter():
    results = []
    for L in (gt, torch):
        t = L.arange(12.0).reshape(3, 4).t()  # a non-contiguous tensor over a 12-float storage
        view, alias, array = t[1], t.detach(), t.numpy()
        version, offset = t._version, view.storage_offset()
        t.share_memory_()
        view.add_(100)  # an in-place write through an old view reaches all of them
        results.append((t.is_shared(), view.is_shared(), alias.is_shared(), t.stride(),
                        view.storage_offset() - offset, t._version - version, view._version,
                        alias._version, t.tolist(), alias.tolist(),
                        np.shares_memory(array, t.numpy()), t.clone().is_shared()))
    assert results[0] == results[1]


def test_share_memory_through_a_view_shares_the_base_and_is_idempotent():
    base = gt.zeros(5)
    view = base[2:]
    view.share_memory_()
    assert base.is_shared() and view.is_shared()
    ptr = base.data_ptr()
    base.share_memory_()
    assert base.data_ptr() == ptr
    assert gt.zeros(0).share_memory_().is_shared()


def test_share_memory_keeps_autograd_working():
    w = gt.ones(3, requires_grad=True)
    w.share_memory_()
    assert w.is_leaf and w.requires_grad and w.is_shared()
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


# ----------------------------------------------------------------------------- as_subclass

def _subclass_facts(L):
    class Sub(L.Tensor):
        def __init__(self, *args, **kwargs):
            raise AssertionError("as_subclass must not call __init__")

    x = L.arange(3.0).requires_grad_()
    y = x * 2
    s = y.as_subclass(Sub)
    facts = [type(s) is Sub, s is not y, s.data_ptr() == y.data_ptr(), s._is_view(),
             s._base is y, type(s.grad_fn).__name__, s.requires_grad, s.is_leaf]
    leaf = x.as_subclass(Sub)
    facts += [leaf.is_leaf, type(leaf.grad_fn).__name__, leaf._base is x]
    (leaf * leaf).sum().backward()
    facts.append(x.grad.tolist())
    with L.no_grad():
        quiet = x.as_subclass(Sub)
    facts += [quiet.requires_grad, quiet.is_leaf]
    plain = L.ones(2)
    alias = plain.as_subclass(Sub)
    alias.add_(1)
    facts += [plain.tolist(), plain._version, alias._version, alias.grad_fn is None]
    back = alias.as_subclass(L.Tensor)
    facts.append(type(back) is L.Tensor)
    facts.append(outcome(lambda: plain.as_subclass(int)))
    return facts


def test_as_subclass_like_torch():
    assert _subclass_facts(gt) == _subclass_facts(torch)


# ----------------------------------------------------------------------------- numpy(force=True)

def test_numpy_force_shares_memory_like_torch():
    for L in (gt, torch):
        x = L.arange(6.0).reshape(2, 3).t().requires_grad_()
        assert outcome(x.numpy)[0] == "RuntimeError"
        forced = x.numpy(force=True)
        assert np.shares_memory(forced, x.detach().numpy())
        assert forced.strides == x.detach().numpy().strides and forced.flags.writeable
        forced[0, 0] = 9
        assert x[0, 0].item() == 9
    assert outcome(lambda: gt.ones(1).numpy(True))[0] == "TypeError"


def test_share_memory_keeps_memory_accounting():
    import gc

    import glasstorch.memory as memory
    was_on = memory.is_enabled()
    memory.enable()
    try:
        gc.collect()  # earlier tests' cyclic garbage must not be freed while we count
        before = memory.memory_allocated()
        t = gt.zeros(1000)
        view = t[1:]
        t.share_memory_()
        assert memory.memory_allocated() - before == 4000
        del t, view
        assert memory.memory_allocated() == before
    finally:
        if not was_on:
            memory.disable()


def test_module_share_memory_moves_parameters_and_buffers():
    m = gt.nn.BatchNorm1d(3)
    assert m.share_memory() is m
    assert all(t.is_shared() for t in (*m.parameters(), *m.buffers()))


def test_gradcheck_warns_about_single_precision_inputs_by_position():
    x = gt.randn(3, requires_grad=True)
    y = gt.randn(3, dtype=gt.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #1 requires gradient and is not a double"):
        gt.autograd.gradcheck(lambda a, b: (a * b).sum(), (y, x), raise_exception=False)


def test_subclass_prints_its_class_name_like_torch():
    ours = gt.arange(12.).reshape(3, 4).as_subclass(type("Marked", (gt.Tensor,), {}))
    theirs = torch.arange(12.).reshape(3, 4).as_subclass(type("Marked", (torch.Tensor,), {}))
    assert repr(ours) == repr(theirs) and repr(ours).startswith("Marked([[ 0.,")
    assert repr(gt.nn.Parameter(gt.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))
