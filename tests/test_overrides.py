"""__torch_function__ and torch.overrides: each scenario runs in glasstorch and in torch and the
handlers must see the same calls (function names, types, stack depth) with the same results."""

import copy
import inspect
import json
import os
import pickle
import re
import threading

import pytest

import glasstorch
import glasstorch.nn.functional as gF
from glasstorch import overrides as gov

torch = pytest.importorskip("torch")
import torch.nn.functional as tF  # noqa: E402
import torch.overrides as tov  # noqa: E402

LIBS = {"glasstorch": (glasstorch, gF, gov), "torch": (torch, tF, tov)}


def both(scenario):
    """Run ``scenario(lib, F, overrides)`` in both libraries; return (glasstorch's, torch's)."""
    return tuple(scenario(*LIBS[name]) for name in ("glasstorch", "torch"))


def _clean(msg):
    # torch's C++ message ends with a TORCH_LOGS hint glasstorch has no use for
    msg = str(msg).split("\n\nFor more information")[0]
    msg = re.sub(r" at 0x[0-9a-f]+", "", msg)
    return msg.replace("glasstorch._tensor.Tensor", "torch.Tensor")


def _error(fn):
    try:
        fn()
    except Exception as e:  # the scenarios compare the exception across libraries
        return type(e).__name__, _clean(e)
    return None


def _logging_subclass(lib, log):
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, [t.__name__ for t in types]))
            return super().__torch_function__(func, types, args, kwargs)
    return Logged


def test_a_logging_subclass_sees_the_calls_torch_hands_it():
    def scenario(lib, F, ov):
        log, out = [], []
        Logged = _logging_subclass(lib, log)
        x = lib.ones(2, 3).as_subclass(Logged)
        y = lib.ones(2, 3)
        calls = [
            lambda: lib.add(x, y), lambda: x + y, lambda: y + x, lambda: 2 - x, lambda: -x,
            lambda: x.sum(), lambda: F.relu(x), lambda: F.linear(x, lib.ones(4, 3)),
            lambda: x[0], lambda: lib.cat([y, x]), lambda: lib.stack((x, y)), lambda: x.shape,
            lambda: x.dtype, lambda: x.T, lambda: x.max(0), lambda: x.split(1),
            lambda: x.add_(1), lambda: x.view(3, 2), lambda: x == y, lambda: len(x),
            lambda: [r for r in x], lambda: lib.linalg.norm(x), lambda: x.tolist(),
            lambda: lib.where(x > 0, x, y), lambda: x.requires_grad, lambda: lib.is_tensor(x),
            lambda: x.__setitem__(0, 1.0), lambda: x @ y.T,
        ]
        for call in calls:
            del log[:]
            r = call()
            kinds = [type(v).__name__ for v in r] if isinstance(r, (tuple, list)) else None
            out.append((list(log), type(r).__name__, kinds))
        return out

    ours, theirs = both(scenario)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, i


def test_default_torch_function_keeps_the_subclass_and_autograd_flows():
    def scenario(lib, F, ov):
        class Sub(lib.Tensor):
            pass
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        s = leaf.as_subclass(Sub)
        r = s * 3
        r.sum().backward()
        made = lib.Tensor._make_subclass(Sub, lib.ones(2), True)
        with lib.no_grad():
            nograd = s * 2
        return (type(s).__name__, s.grad_fn.name(), type(r).__name__, r.grad_fn.name(),
                r.grad_fn.next_functions[0][0].name(), type(leaf.grad).__name__,
                leaf.grad.tolist(), type(made).__name__, made.requires_grad, made.is_leaf,
                type(nograd).__name__, nograd.requires_grad, repr(s))

    ours, theirs = both(scenario)
    assert ours == theirs


def test_mode_counts_calls_and_nests():
    def scenario(lib, F, ov):
        seen = []

        class Tag(ov.TorchFunctionMode):
            def __init__(self, tag):
                super().__init__()
                self.tag = tag

            def __torch_function__(self, func, types, args=(), kwargs=None):
                depth = len(ov._get_current_function_mode_stack())
                seen.append((self.tag, func.__name__, [t.__name__ for t in types], depth))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with Tag("outer"):
            with Tag("inner") as inner:
                lib.add(x, x)
                x + x
                F.relu(x)
                F.softmax(x, 0)
                assert x.shape == (2,)
                lib.ones(2)
                lib.tensor([1.0])
                x.sum()
                lib.einsum("i,i->", x, x)
            enabled = ov._is_torch_function_mode_enabled() if lib is glasstorch else \
                lib._C._is_torch_function_mode_enabled()
        return seen, type(inner).__name__, enabled

    ours, theirs = both(scenario)
    assert ours == theirs
    assert not gov._is_torch_function_mode_enabled()


def test_mode_rewriting_add_into_mul():
    def scenario(lib, F, ov):
        class AddIsMul(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func is lib.add or func is lib.Tensor.add:
                    return lib.mul(*args)
                return func(*args, **(kwargs or {}))
        a, b = lib.tensor([2.0, 3.0]), lib.tensor([4.0, 5.0])
        with AddIsMul():
            return (lib.add(a, b).tolist(), (a + b).tolist(), a.add(b).tolist(),
                    (a - b).tolist())

    ours, theirs = both(scenario)
    assert ours == theirs == ([8.0, 15.0], [8.0, 15.0], [8.0, 15.0], [-2.0, -2.0])


def test_not_implemented_everywhere_raises_torchs_type_error():
    def scenario(lib, F, ov):
        class Refuses(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        class RefusingMode(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        x = lib.ones(2)
        s = lib.ones(2).as_subclass(Refuses)

        def in_mode(fn):
            def run():
                with RefusingMode():
                    fn()
            return run
        cases = [lambda: lib.add(s, x), lambda: s + x, lambda: x + s, lambda: F.relu(s),
                 lambda: s[0], lambda: s.shape, lambda: x.add(s), in_mode(lambda: lib.add(x, x)),
                 in_mode(lambda: F.relu(x)), in_mode(lambda: lib.add(s, x))]
        return [_error(c) for c in cases]

    ours, theirs = both(scenario)
    assert ours == theirs
    assert ours[0][0] == "TypeError" and "Multiple dispatch failed for 'torch.add'" in ours[0][1]


def test_dispatch_order_subclasses_before_parents():
    def scenario(lib, F, ov):
        log = []

        class Parent(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(("Parent", [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)

        class Child(Parent):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(("Child", [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)

        class Other(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(("Other", [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)

        p, c, o = (lib.ones(1).as_subclass(k) for k in (Parent, Child, Other))
        x = lib.ones(1)
        results = [type(lib.add(p, c)).__name__, type(lib.cat([p, x, c])).__name__,
                   _error(lambda: lib.add(p, o)), _error(lambda: lib.add(o, p))]
        return log, results

    ours, theirs = both(scenario)
    assert ours == theirs


def test_disabling_contexts():
    def scenario(lib, F, ov):
        C = gov if lib is glasstorch else lib._C
        seen = []

        class Watch(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        class Sub(lib.Tensor):
            pass
        x, s = lib.ones(2), lib.ones(2).as_subclass(Sub)
        out = []
        with Watch():
            with C.DisableTorchFunction():
                out.append(type(lib.add(x, s)).__name__)
                out.append((C._is_torch_function_enabled(), C._is_torch_function_mode_enabled()))
            with C.DisableTorchFunctionSubclass():
                out.append(type(lib.add(x, s)).__name__)
                out.append((C._is_torch_function_enabled(), C._is_torch_function_mode_enabled()))
                out.append(ov.has_torch_function((s,)))
            out.append(type(C._disabled_torch_function_impl(lib.add, (Sub,), (s, x), {})).__name__)
            out.append(type(lib.add(s, x)).__name__)
        return out, seen

    ours, theirs = both(scenario)
    assert ours == theirs


def test_parameters_take_no_part_in_dispatch():
    def scenario(lib, F, ov):
        seen = []

        class Watch(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append([t.__name__ for t in types])
                return func(*args, **(kwargs or {}))

        class MyParam(lib.nn.Parameter):
            pass
        p = lib.nn.Parameter(lib.ones(2))
        q = MyParam(lib.ones(2))
        with Watch():
            lib.add(p, q)
        kinds = [type(v).__name__ for v in (p + 1, p.data, p.detach(), p[0], p.clone(), q,
                                            q * 2, q.detach())]
        return (kinds, seen, ov.has_torch_function((p,)), ov.has_torch_function((q,)),
                ov.is_tensor_like(p), _error(lambda: lib.nn.Parameter(lib.ones(2).long())),
                repr(p).splitlines()[0])

    ours, theirs = both(scenario)
    assert ours == theirs
    assert glasstorch.nn.Parameter.__torch_function__ is \
        gov._disabled_torch_function_impl


def test_overrides_helpers_match_torch():
    def scenario(lib, F, ov):
        class Sub(lib.Tensor):
            pass
        s, x = lib.ones(2).as_subclass(Sub), lib.ones(2)

        @ov.wrap_torch_function(lambda a, b=None: (a,))
        def wrapped(a, b=None):
            return a + 0

        def handled(a):
            if ov.has_torch_function_unary(a):
                return ov.handle_torch_function(handled, (a,), a)
            return a * 2
        overrides = ov.get_testing_overrides()
        return (ov.has_torch_function((x,)), ov.has_torch_function((x, s)),
                ov.has_torch_function_unary(s), ov.has_torch_function_variadic(x, s),
                ov.is_tensor_like(x), ov.is_tensor_like(1.0),
                ov.is_tensor_method_or_property(lib.Tensor.add),
                ov.is_tensor_method_or_property(lib.add),
                ov.is_tensor_method_or_property(lib.Tensor.shape.__get__),
                ov.resolve_name(lib.add), ov.resolve_name(lib.Tensor.add),
                ov.resolve_name(lib.Tensor.shape.__get__), ov.resolve_name(F.relu),
                ov.resolve_name(lib.linalg.norm),
                lib.Tensor.as_subclass in ov.get_ignored_functions(),
                lib.is_tensor in ov.get_ignored_functions(), lib.add in ov.get_ignored_functions(),
                lib.add in ov.get_overridable_functions()[lib],
                F.relu in ov.get_overridable_functions()[F],
                lib.Tensor.grad.__get__ in ov.get_default_nowrap_functions(),
                str(inspect.signature(overrides[lib.Tensor.shape.__get__])),
                overrides[lib.Tensor.sum](x), type(wrapped(s)).__name__,
                type(wrapped(x)).__name__, type(handled(s)).__name__)

    ours, theirs = both(scenario)
    assert ours == theirs


def test_testing_overrides_keep_the_signature():
    dummy = gov.get_testing_overrides()[glasstorch.add]
    assert inspect.signature(dummy) == inspect.signature(glasstorch.add)
    assert dummy(1, 2) == -1
    with pytest.raises(TypeError):
        dummy(1, 2, 3, 4)


def test_a_non_tensor_type_with_torch_function_is_dispatched(monkeypatch):
    # as met for the first time: the op fails on it, then the dispatcher hands it the call
    monkeypatch.setattr(gov, "_overriders_met", False)
    monkeypatch.setattr(gov, "_meta_met", False)  # an earlier test may have made a meta tensor
    gov._refresh()
    assert not gov._active

    def scenario(lib, F, ov):
        class Scalar:
            handled = {}

            def __init__(self, n, value):
                self.n, self.value = n, value

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func not in cls.handled:
                    return NotImplemented
                return cls.handled[func](*args, **(kwargs or {}))

        Scalar.handled[lib.mean] = lambda d: float(d.value)
        Scalar.handled[lib.Tensor.add] = lambda a, b: ("added", type(a).__name__)
        d = Scalar(5, 2)
        return (lib.mean(d), lib.ones(1).add(d), _error(lambda: lib.sum(d)),
                ov.is_tensor_like(d))

    ours, theirs = both(scenario)
    monkeypatch.undo()
    gov._refresh()
    assert ours == theirs


def test_nothing_active_means_the_one_flag_is_off(monkeypatch):
    monkeypatch.setattr(gov, "_overriders_met", False)
    monkeypatch.setattr(gov, "_meta_met", False)  # an earlier test may have made a meta tensor
    gov._refresh()
    assert not gov._active
    with gov.BaseTorchFunctionMode():
        assert gov._active
    assert not gov._active
    glasstorch.nn.Parameter(glasstorch.ones(1))  # a Parameter does not switch it on
    assert not gov._active

    class Fresh(glasstorch.Tensor):
        pass
    glasstorch.ones(1).as_subclass(Fresh)  # the first dispatching instance does
    assert gov._active
    monkeypatch.undo()
    gov._refresh()


def test_modes_are_per_thread():
    seen = []

    class Watch(gov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(threading.current_thread().name)
            return func(*args, **(kwargs or {}))

    x = glasstorch.ones(1)
    worker = threading.Thread(target=lambda: x + x, name="worker")
    with Watch():
        worker.start()
        worker.join()
        x + x
    assert seen == ["MainThread"]


def test_push_is_deprecated_and_returns_an_instance():
    with pytest.warns(UserWarning, match="no longer necessary"):
        mode = gov.BaseTorchFunctionMode.push()
    assert isinstance(mode, gov.BaseTorchFunctionMode)


def test_dispatch_points_keep_names_signatures_and_pickle():
    assert glasstorch.Tensor.add is not glasstorch.add  # two public functions, as in torch
    assert inspect.signature(glasstorch.add) == inspect.signature(glasstorch.Tensor.add)
    assert glasstorch.linalg.norm.__name__ == torch.linalg.norm.__name__ == "linalg_norm"
    for fn in (glasstorch.add, glasstorch.Tensor.add, gF.relu, glasstorch.linalg.norm):
        assert pickle.loads(pickle.dumps(fn)) is fn
    assert repr(glasstorch.nn.Parameter(glasstorch.ones(1))).startswith("Parameter containing")


def test_tv_tensors_keep_torchvisions_types_with_dispatch_on():
    from glasstorch.vision import tv_tensors
    path = os.path.join(os.path.dirname(__file__), "vision", "fixtures",
                        "tv_tensors_cases.json")
    with open(path) as f:
        types = json.load(f)["types"]  # recorded from torchvision
    with gov.BaseTorchFunctionMode():
        for name, entry in sorted(types.items()):
            t = tv_tensors.Image(glasstorch.rand(3, 4, 5))
            out = eval(entry["source"], {"t": t, "torch": glasstorch, "copy": copy,
                                         "pickle": pickle})
            assert type(out).__name__ == entry["type"], name
            assert (out is t) == entry["same"], name


def test_autograd_entry_points_are_dispatch_points():
    def scenario(lib, F, ov):
        seen, log = [], []

        class Watch(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))
        Logged = _logging_subclass(lib, log)
        x = lib.ones(3, requires_grad=True)
        with Watch():
            lib.autograd.grad((x.sin() * x).sum(), x)
            lib.autograd.backward((x * x).sum())
        s = x.as_subclass(Logged)
        y = (s.sin() * s).sum()
        del log[:]
        y.backward()
        return seen, log

    ours, theirs = both(scenario)
    assert ours == theirs


NUMPY_KEYWORD_CALLS = {
    "all axis keepdims": lambda L, x: L.all(x > 0, axis=-1, keepdims=True),
    "method axis": lambda L, x: x.sum(axis=0),
    "cat axis": lambda L, x: L.cat([x, x], axis=1),
    "x for input": lambda L, x: L.abs(x=x),
    "a for input": lambda L, x: L.abs(a=x),
    "x2 for other": lambda L, x: L.add(x, x2=x),
    "max axis": lambda L, x: L.max(x, axis=1).values,
    "Python-level F refuses": lambda L, x: L.nn.functional.softmax(x, axis=0),
    "both spellings refused": lambda L, x: L.abs(x=x, input=x),
}


@pytest.mark.parametrize("case", NUMPY_KEYWORD_CALLS)
def test_builtins_take_numpys_keyword_names_like_torch(case):
    def outcome(L):
        x = L.arange(6.).reshape(2, 3)
        try:
            return NUMPY_KEYWORD_CALLS[case](L, x).tolist()
        except TypeError:
            return "TypeError"
    assert outcome(glasstorch) == outcome(torch)


OPERAND_CASES = {
    "t + ndarray": lambda L, np, x: x + np.ones(2),
    "ndarray + t": lambda L, np, x: np.ones(2) + x,
    "t + float32 ndarray": lambda L, np, x: x + np.ones(2, dtype=np.float32),
    "t - ndarray": lambda L, np, x: x - np.ones(2),
    "t @ ndarray": lambda L, np, x: x @ np.ones(2),
    "t ** ndarray": lambda L, np, x: x ** np.ones(2),
    "t + list": lambda L, np, x: x + [1, 2],
    "t + str": lambda L, np, x: x + "s",
    "t + None": lambda L, np, x: x + None,
    "t == str": lambda L, np, x: x == "a",
    "t != None": lambda L, np, x: x != None,  # noqa: E711
    "t < str": lambda L, np, x: x < "a",
    "t.__iadd__(ndarray)": lambda L, np, x: x.__iadd__(np.ones(2)),
}


@pytest.mark.parametrize("case", OPERAND_CASES)
def test_operators_hand_unknown_operands_back_to_python_like_torch(case):
    # an operand an operator does not take gives NotImplemented: NumPy computes t + a itself
    # (a float64 tensor through __array_wrap__), other types raise Python's TypeError
    import warnings

    import numpy as np

    def outcome(L):
        x = L.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = OPERAND_CASES[case](L, np, x)
            except TypeError:
                return "TypeError"
        return type(r).__name__, str(getattr(r, "dtype", "")), getattr(r, "tolist", lambda: r)()
    assert outcome(glasstorch) == outcome(torch)
