"""torch.jit names (eager behaviour), torch.futures and torch._C behave as torch's."""
# The typing spellings (Optional, Union) are what these checks are about:
# ruff: noqa: UP007, UP045

import os
import subprocess
import sys
import threading
import typing
import warnings

import pytest

import glasstorch
import glasstorch.jit.annotations
from tests._compare import both, outcome

torch = pytest.importorskip("torch")
pytest.importorskip("torch.jit.annotations")

# both libraries warn that TorchScript's entry points are deprecated; the tests call them
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.(fork|wait)` is deprecated")


# ---------------------------------------------------------------------------- torch.jit
def test_types_and_annotations_match_torch():
    def run(L):
        j = L.jit
        out = [j.Final is typing.Final, j.annotate(typing.List[int], [1]),  # noqa: UP006
               j.is_scripting(),
               j.is_tracing(), issubclass(j.ScriptModule, L.nn.Module),
               issubclass(j.RecursiveScriptModule, j.ScriptModule),
               isinstance(L.nn.Linear(1, 1), j.ScriptModule), repr(j.ScriptModule()),
               outcome(lambda: j.ScriptFunction()), j.ScriptFunction.__name__]
        a = j.Attribute(1, int)
        out += [a.value, a.type, tuple(a), repr(a)]
        A = L.jit.annotations
        out += [A.BroadcastingList2[int], A.BroadcastingList1[float], A.List is typing.List,  # noqa: UP006
                A.Optional is typing.Optional, A.is_tuple(typing.Tuple[int]),  # noqa: UP006
                A.is_tuple(tuple), A.is_list(list[int]), A.is_optional(typing.Optional[int]),
                A.is_optional(typing.Union[int, str, None]), A.is_union(int | str),
                A.is_dict(dict[str, int]),
                outcome(lambda: A.is_tuple(typing.Tuple))]  # noqa: UP006
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_markers_tag_functions_like_torch():
    def run(L):
        j = L.jit
        out = []

        def f(x):
            return x
        out += [j.export(f) is f, f._torchscript_modifier]

        def g(x):
            return x
        out += [j.unused(g) is g, g._torchscript_modifier]

        def h(x):
            return x
        out += [j.ignore(h) is h, h._torchscript_modifier]

        def k(x):
            return x
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out += [j.ignore(drop=True)(k) is k, k._torchscript_modifier]

            def m(x):
                return x
            j.ignore(drop_on_export=True)(m)
            out += [m._torchscript_modifier, [x.category for x in w]]
        out.append(j.ignore(False)(lambda: 5)())
        out.append(outcome(lambda: j.ignore(3)))
        prop = property(lambda self: 1)
        out += [j.unused(prop) is prop, prop.fget._torchscript_modifier]
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_overload_declarations_match_torch():
    def run(L):
        def decl(x: int) -> int: ...

        def decl_pass(x: float) -> float:
            pass

        def not_a_decl(x: int) -> int:
            return x
        return [L.jit._overload(decl) is decl, L.jit._overload(decl_pass) is decl_pass,
                L.jit._overload_method(decl) is decl, outcome(lambda: L.jit._overload(not_a_decl))]
    mine, theirs = both(run)
    assert mine == theirs


def test_fork_wait_and_typed_isinstance_match_torch():
    def run(L):
        j = L.jit
        fut = j.fork(lambda a, b=2: a + b, 1, b=3)
        out = [j.wait(fut), fut.done(), fut.value(), j.fork(L.add, L.ones(1), 1).wait().tolist(),
               outcome(lambda: j.fork(lambda: 1 / 0))]
        out += [j.isinstance([1], typing.List[int]),  # noqa: UP006
                j.isinstance([1], list[str]),
                j.isinstance([1], (list[str], list[int])),
                j.isinstance({"a": [1]}, dict[str, list[int]]),
                j.isinstance((1, "a"), tuple[int, str]), j.isinstance((1,), tuple[int, str]),
                j.isinstance(None, typing.Optional[int]), j.isinstance(3, typing.Optional[int]),
                j.isinstance("a", typing.Optional[int]), j.isinstance(1, int),
                outcome(lambda: j.isinstance([1], list)),
                outcome(lambda: j.isinstance({}, typing.Dict)),  # noqa: UP006
                outcome(lambda: j.isinstance(1, typing.Optional))]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out += [j.isinstance([], list[int]), len(w)]
        out += [j.script_if_tracing(lambda x: x * 2)(3), j._unwrap_optional(3),
                outcome(lambda: j._unwrap_optional(None))]
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_fork_and_wait_warn_deprecation_like_torch():
    for L in (glasstorch, torch):
        with pytest.warns(DeprecationWarning, match="torch.jit.fork` is deprecated"):
            fut = L.jit.fork(lambda: 1)
        with pytest.warns(DeprecationWarning, match="torch.jit.wait` is deprecated"):
            assert L.jit.wait(fut) == 1


def test_script_and_trace_compile_and_warn_deprecation():
    def plus_one(x):
        return x + 1

    with pytest.warns(DeprecationWarning, match="torch.jit.script` is deprecated"):
        scripted = glasstorch.jit.script(plus_one)
    assert isinstance(scripted, glasstorch.jit.ScriptFunction)
    assert scripted(glasstorch.ones(1)).tolist() == [2.0]
    with pytest.warns(DeprecationWarning, match="torch.jit.trace` is deprecated"):
        traced = glasstorch.jit.trace(lambda x: x * 2, (glasstorch.ones(1),))
    assert isinstance(traced, glasstorch.jit.ScriptFunction)
    assert traced(glasstorch.ones(1)).tolist() == [2.0]


PYTORCH_JIT_OFF = """
import warnings
warnings.simplefilter("ignore")
import {lib} as L
f = lambda x: x
m = L.nn.Linear(1, 1)
print(L.jit.script(f) is f, L.jit.script(m) is m, L.jit.trace(f, (L.ones(1),)) is f,
      L.jit.Attribute(3, int), L.jit.script_method(f) is f)
"""


def _run_with_pytorch_jit(lib, value):
    proc = subprocess.run([sys.executable, "-c", PYTORCH_JIT_OFF.format(lib=lib)],
                          env=dict(os.environ, PYTORCH_JIT=value), capture_output=True,
                          text=True, timeout=120)
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    return proc.returncode, proc.stdout.strip(), last


def test_pytorch_jit_0_makes_script_and_trace_return_their_argument_like_torch():
    mine = _run_with_pytorch_jit("glasstorch", "0")
    assert mine == _run_with_pytorch_jit("torch", "0")
    assert mine[1] == "True True True 3 True"


def test_an_unknown_pytorch_jit_setting_fails_the_import():
    # torch raises "ValueError: Unknown setting of PYTORCH_JIT. Try using 0 or 1." at import
    code, _, last = _run_with_pytorch_jit("glasstorch", "bogus")
    assert code != 0 and last == "ValueError: Unknown setting of PYTORCH_JIT. Try using 0 or 1."


# ---------------------------------------------------------------------------- torch.futures
def test_future_semantics_match_torch():
    def run(L):
        Future = L.futures.Future
        f = Future()
        out = [f.done(), outcome(f.value)]
        g = f.then(lambda fut: fut.value() + 1)
        seen = []
        f.add_done_callback(lambda fut: seen.append(fut.value()))
        f.set_result(3)
        out += [f.done(), f.value(), f.wait(), g.wait(), seen, outcome(lambda: f.set_result(4))]
        h = Future()
        h.set_exception(ValueError("bad"))
        out += [h.done(), outcome(h.wait), outcome(h.value), h.then(lambda fut: 1).wait()]
        m = Future()
        n = m.then(lambda fut: 1 / 0)
        m.set_result(1)
        out.append(outcome(n.wait))
        a, b = Future(), Future()
        c = L.futures.collect_all([a, b])
        a.set_result(1)
        out.append(c.done())
        b.set_result(2)
        out += [c.done(), [x.value() for x in c.wait()], L.futures.wait_all([a, b]),
                outcome(lambda: L.futures.wait_all([h])),
                outcome(lambda: Future().set_exception(3)), outcome(lambda: Future(3)),
                outcome(lambda: Future(devices=["cpu"])), outcome(lambda: Future(devices=[0])),
                Future(devices=["cpu:0"]).done(), L.jit.Future is Future, Future[int] is not None]
        return out
    mine, theirs = both(run)
    assert mine == theirs


def test_future_wait_blocks_until_another_thread_sets_it():
    f = glasstorch.futures.Future()
    release = threading.Event()

    def worker():
        release.wait()
        f.set_result(glasstorch.ones(2))
    t = threading.Thread(target=worker)
    t.start()
    assert not f.done()
    release.set()
    assert f.wait().tolist() == [1.0, 1.0]
    t.join()


def test_failing_done_callback_is_reported_not_raised(capsys):
    f = glasstorch.futures.Future()
    f.add_done_callback(lambda fut: 1 / 0)
    f.set_result(1)
    assert f.value() == 1
    assert "ZeroDivisionError" in capsys.readouterr().err


# ---------------------------------------------------------------------------- torch._C
def test_c_names_libraries_use_match_torch():
    def run(L):
        C = L._C
        out = [C._log_api_usage_once("torchmetrics.metric.X"), outcome(
            lambda: C._log_api_usage_once(3)), C._log_api_usage_metadata("a", {"b": "c"}),
            outcome(lambda: C._log_api_usage_metadata("a", {"b": 1})), C._get_tracing_state(),
            C._TensorMeta is type(L.Tensor), C._get_accelerator(),
            outcome(lambda: C._get_accelerator(True)), C._get_privateuse1_backend_name(),
            C.is_grad_enabled(), outcome(lambda: C._set_grad_enabled(1)),
            C.Generator is L.Generator, C.Stream is L.Stream, C.Event is L.Event]
        C._set_grad_enabled(False)
        out.append(L.is_grad_enabled())
        C._set_grad_enabled(True)
        out.append(L.is_grad_enabled())
        return out
    mine, theirs = both(run)
    assert [str(v) for v in mine] == [str(v) for v in theirs]


PARSE_TO_CASES = [((), {}), ((glasstorch.float16,), {}), (("cpu",), {}),
                  (("cpu", glasstorch.float64), {"non_blocking": True}),
                  ((), {"dtype": glasstorch.float64}), (("cuda:1",), {}),
                  ((None, glasstorch.float32, True, False), {}), ((glasstorch.float32, True), {}),
                  ((glasstorch.float32,), {"device": "cpu"}),
                  (("cpu",), {"dtype": glasstorch.int32}),
                  ((), {"foo": 1}), ((glasstorch.float32, glasstorch.float32), {}),
                  (("cpu",), {"device": "cpu"}), ((), {"memory_format": None}), ((0,), {}),
                  ((), {"device": "cpu", "copy": True})]


def _to_torch(v):
    if isinstance(v, glasstorch.dtype):
        return getattr(torch, str(v).split(".")[-1])
    return v


@pytest.mark.parametrize("args,kwargs", PARSE_TO_CASES)
def test_parse_to_matches_torch(args, kwargs):
    mine = outcome(lambda: glasstorch._C._nn._parse_to(*args, **kwargs))
    theirs = outcome(lambda: torch._C._nn._parse_to(*[_to_torch(a) for a in args],
                                                    **{k: _to_torch(v) for k, v in
                                                       kwargs.items()}))
    assert str(mine) == str(theirs)


def test_parse_to_reads_a_tensor_argument():
    dev, dt, nb, mf = glasstorch._C._nn._parse_to(glasstorch.ones(1, dtype=glasstorch.int8),
                                                  True)
    assert (str(dev), dt, nb, mf) == ("cpu", glasstorch.int8, True, None)
