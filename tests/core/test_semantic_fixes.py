"""Behaviours libraries rely on: bare grad-mode decorators, device comparisons with anything,
autocast queries for every device type torch knows."""

from __future__ import annotations

import warnings

import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")
LIBS = (gt, torch)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the exception type and message are compared
        return type(e).__name__, str(e)


# ----------------------------------------------------------------------------- grad modes

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_bare_grad_mode_decorators(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.no_grad
    def f(a):
        return (a * 2).requires_grad, lib.is_grad_enabled()

    assert f(x) == (False, False) and f.__name__ == "f" and lib.is_grad_enabled()

    @lib.inference_mode
    def g(a):
        return (a * 2).requires_grad, lib.is_inference_mode_enabled()

    assert g(x) == (False, True) and callable(g) and not lib.is_inference_mode_enabled()

    @lib.inference_mode(False)
    def h():
        return lib.is_inference_mode_enabled()

    assert h() is False
    with lib.no_grad():
        @lib.enable_grad
        def k(a):
            return (a * 2).requires_grad

        assert k(x) is True and not lib.is_grad_enabled()

    @lib.no_grad
    def gen():
        yield lib.is_grad_enabled()

    assert list(gen()) == [False]
    assert lib.no_grad(lambda: lib.is_grad_enabled())() is False


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_set_grad_enabled_function_context_and_decorator(lib):
    lib.set_grad_enabled(False)
    assert not lib.is_grad_enabled()
    lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def f():
        return lib.is_grad_enabled()

    # decorating undoes the constructor's switch: only calls run with grad disabled
    assert lib.is_grad_enabled() and f() is False and lib.is_grad_enabled()
    with pytest.raises(TypeError, match="must be bool, not int"):
        lib.set_grad_enabled(1)
    assert "set_grad_enabled(mode=False)" in repr(lib.set_grad_enabled(False))
    lib.set_grad_enabled(True)


def test_decorating_a_class_warns_like_torch():
    for lib in LIBS:
        class A:
            def __init__(self):
                self.grad = lib.is_grad_enabled()

        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            made = lib.no_grad()(A)
        assert made().grad is False


# ----------------------------------------------------------------------------- device

OTHERS = ["cpu", "cpu:0", "npu", "cuda", "cuda:1", "", "foo:bar", "CPU", "hpu", 0, 1, None,
          3.5, ("cpu",)]


def test_device_compares_with_anything_like_torch():
    for spec in ["cpu", "cuda:1", ("cpu", 0)]:
        args = spec if isinstance(spec, tuple) else (spec,)
        g, t = gt.device(*args), torch.device(*args)
        for other in OTHERS:
            assert (g == other) == (t == other) and (g != other) == (t != other), other
            assert (other == g) == (other == t), other
        for other_args in [("cpu",), ("cpu", 0), ("cuda", 1), ("cuda",)]:
            assert (g == gt.device(*other_args)) == (t == torch.device(*other_args))
        assert ("cpu" in [g]) == ("cpu" in [t])
    assert hash(gt.device("cpu")) == hash(gt.device("cpu"))
    assert len({gt.device("cpu"), gt.device("cpu"), gt.device("cpu", 0)}) == 2
    for lib in LIBS:
        with pytest.raises(TypeError):
            assert lib.device("cpu") < lib.device("cuda")


@pytest.mark.parametrize("spec", ["hpu", "xla", "ipu", "privateuseone", "mtia", "maia", "lazy",
                                  "fpga", "ve", "vulkan", "opengl", "opencl", "ideep", "hip",
                                  "npu", "cuda:x", "cuda:-1", "cuda:1:2", " cpu", "cuda:01",
                                  "", "meta:0"])
def test_device_strings_parse_like_torch(spec):
    def run(lib):
        d = lib.device(spec)
        return d.type, d.index, repr(d)
    assert _outcome(lambda: run(gt)) == _outcome(lambda: run(torch))


def test_device_constructor_errors_like_torch():
    for args in [("cuda", -1), (-1,), (2,), (True,), ("cpu", "0"), ("cuda:1", 1)]:
        ours, theirs = _outcome(lambda: gt.device(*args)), _outcome(lambda: torch.device(*args))
        assert ours[0] == theirs[0], args
        if theirs[0] == "RuntimeError":
            assert ours == theirs


# ----------------------------------------------------------------------------- autocast

AUTOCAST_TYPES = ["cpu", "cuda", "mps", "xpu", "hpu", "xla", "meta", "ipu", "privateuseone",
                  "mtia", "maia", "npu", "lazy", "fpga", "ve", "vulkan", "hip", "foo", "CPU",
                  "cuda:0", ""]


@pytest.mark.parametrize("device_type", AUTOCAST_TYPES)
def test_autocast_queries_for_every_device_type(device_type):
    def run(lib):
        am = lib.amp.autocast_mode
        return [_outcome(lambda: lib.is_autocast_enabled(device_type)),
                _outcome(lambda: str(lib.get_autocast_dtype(device_type))),
                _outcome(lambda: lib.amp.is_autocast_available(device_type)),
                _outcome(lambda: am.is_autocast_available(device_type))]
    assert run(gt) == run(torch)


def test_autocast_setters_and_argument_errors():
    def run(lib):
        out = [_outcome(lambda: lib.set_autocast_enabled("mps", True)),
               _outcome(lambda: lib.is_autocast_enabled("mps")),
               _outcome(lambda: lib.set_autocast_enabled("mps", False)),
               _outcome(lambda: lib.set_autocast_dtype("xpu", lib.bfloat16)),
               _outcome(lambda: str(lib.get_autocast_dtype("xpu"))),
               _outcome(lambda: lib.set_autocast_dtype("xpu", lib.float16)),
               _outcome(lambda: lib.is_autocast_enabled(1)),
               _outcome(lambda: lib.get_autocast_dtype(None)),
               _outcome(lambda: lib.set_autocast_enabled("cpu", 1)),
               _outcome(lambda: lib.set_autocast_enabled("mps")),
               _outcome(lambda: lib.set_autocast_dtype("cpu", "x")),
               _outcome(lambda: lib.set_autocast_enabled("meta", True))]
        return out
    assert run(gt) == run(torch)


@pytest.mark.parametrize("device_type", ["mps", "xpu", "hpu", "xla", "ipu", "mtia", "maia",
                                         "meta", "privateuseone", "foo"])
def test_autocast_context_for_other_devices(device_type):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ctx = lib.autocast(device_type, dtype=lib.bfloat16)
            with ctx:
                inside = lib.is_autocast_enabled(device_type)
                # CPU tensors are not autocast by another device's region
                out = (lib.ones(2, 2) @ lib.ones(2, 2)).dtype
            return str(ctx.fast_dtype), inside, str(out), lib.is_autocast_enabled(device_type)
    ours, theirs = _outcome(lambda: run(gt)), _outcome(lambda: run(torch))
    assert ours[0] == theirs[0] and (ours[0] != "ok" or ours == theirs)
