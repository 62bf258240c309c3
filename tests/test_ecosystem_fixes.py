"""Regression tests for differences from torch that the ecosystem's own code ran into
(transformers, torchmetrics, accelerate, safetensors, peft), each compared with torch live."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# ---------------------------------------------------------------- TransformGetItemToIndex
# transformers' masking_utils enters it around its vmapped mask functions

_INDICES = [lambda L: L.tensor(1), lambda L: (L.tensor(1), 2), lambda L: [0, 2],
            lambda L: 1, lambda L: (slice(None), 1), lambda L: True,
            lambda L: (L.tensor([0, 2]),), lambda L: ((0, 1),),
            lambda L: (L.tensor([True, False, True]),)]


@pytest.mark.parametrize("make_index", _INDICES)
def test_transform_getitem_to_index_matches_torch(make_index):
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TMode

    from glasstorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    def run(L, mode):
        x = L.arange(12.).reshape(3, 4).requires_grad_()
        with mode():
            y = x[make_index(L)]
        shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        (y * L.arange(1., y.numel() + 1).reshape(y.shape)).sum().backward()
        return (_np(y), y.dtype.__repr__(), tuple(y.shape), y.stride(), y.grad_fn.name(),
                shares, _np(x.grad))

    mine, theirs = run(glasstorch, TransformGetItemToIndex), run(torch, TMode)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


def test_transform_getitem_to_index_other_functions_and_errors():
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as TMode

    from glasstorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    def run(L, mode):
        x = L.arange(5)
        with mode():
            z = x[L.tensor(2)]
            w = L.add(x, 1)
            try:
                x[1.5]
                err = None
            except Exception as e:  # noqa: BLE001 - the type is compared
                err = type(e).__name__
        return z.item(), z.dtype.__repr__(), _np(w).tolist(), err, z._base is None

    assert run(glasstorch, TransformGetItemToIndex) == run(torch, TMode)


# ---------------------------------------------------------------- tensors in Python/NumPy


def test_clone_contiguous_format_copies_a_dense_tensor():
    # ascontiguousarray returned the dense input itself: the "clone" wrote through to it
    def run(L):
        x = L.arange(12.).reshape(3, 4)
        a = x[1].clone(memory_format=L.contiguous_format)
        a[0] = 100
        y = L.zeros(2, 3, 4, 5).to(memory_format=L.channels_last)
        b = y.clone(memory_format=L.channels_last)
        b[0, 0, 0, 0] = 7
        c = L.tensor(3.).clone(memory_format=L.contiguous_format)
        return (x[1, 0].item(), y[0, 0, 0, 0].item(), b.stride(),
                b.is_contiguous(memory_format=L.channels_last), c.item())

    assert run(glasstorch) == run(torch)


def test_contains_tests_every_element():
    # transformers: ``pad_token_id in input_ids[:, [-1, 0]]``
    def run(L):
        t = L.tensor([[1, 2], [3, 0]])
        out = [0 in t, 5 in t, L.tensor(0) in t, L.tensor([1, 2]) in t, 2.0 in t, True in t]
        for bad in ("a", [1]):
            try:
                bad in t  # noqa: B015 - the membership test is what is checked
            except RuntimeError as e:
                out.append(str(e))
        return out

    assert run(glasstorch) == run(torch)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's __array_wrap__ signature
def test_numpy_functions_on_tensors_return_tensors():
    # torchmetrics' tests apply scipy's expit to a tensor and call .numpy() on the result
    scipy_special = pytest.importorskip("scipy.special")

    def run(L):
        t = L.tensor([[-1., 0.5], [2., 3.]])
        out = []
        for fn in (np.sin, scipy_special.expit, lambda a: np.greater(a, 0), np.isnan,
                   lambda a: np.add(a, 1), lambda a: np.maximum(a, np.zeros(2)), np.argmax,
                   np.cumsum, lambda a: np.round(a, 1), lambda a: np.sin(a[0, 0])):
            r = fn(t)
            out.append((type(r).__name__, repr(r.dtype), r.numpy().tolist()))
        halves = np.modf(t)
        out.append([type(h).__name__ for h in halves])
        out.append(type(np.asarray(t)).__name__)
        return out

    mine, theirs = run(glasstorch), run(torch)
    assert [m[:2] if isinstance(m, tuple) else m for m in mine] == \
        [m[:2] if isinstance(m, tuple) else m for m in theirs]
    for m, t in zip(mine, theirs):
        if isinstance(m, tuple):
            np.testing.assert_allclose(m[2], t[2], rtol=1e-6)


def test_untyped_storage_untyped_and_safetensors_safe_open(tmp_path):
    # safetensors' safe_open(framework="pt") maps the file with from_file, then untyped()
    def run(L):
        s = L.UntypedStorage(4)
        return s.untyped() is s

    assert run(glasstorch) == run(torch)
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from safetensors import safe_open
    path = str(tmp_path / "a.safetensors")
    safetensors_torch.save_file({"a": torch.arange(6.).reshape(2, 3)}, path)
    from glasstorch._compat import install_as_torch  # noqa: F401 - documented entry point
    storage = glasstorch.UntypedStorage.from_file(path, shared=False, nbytes=8)
    assert storage.untyped() is storage
    with safe_open(path, framework="pt") as f:   # real torch here: the reference layout
        expected = f.get_tensor("a").numpy()
    np.testing.assert_array_equal(expected, np.arange(6.).reshape(2, 3))


# ---------------------------------------------------------------- randomized low-rank SVD


def _lowrank(L, fn, a, **kw):
    L.manual_seed(0)
    u, s, v = getattr(L, fn)(L.from_numpy(a), **kw)
    return (u * s[..., None, :]) @ v.mH, s, tuple(u.shape), tuple(v.shape), repr(u.dtype)


@pytest.mark.parametrize("fn,shape,kw", [
    ("svd_lowrank", (8, 5), {"q": 3}), ("svd_lowrank", (4, 9), {"q": 2, "niter": 1}),
    ("svd_lowrank", (2, 6, 4), {"q": 2}), ("pca_lowrank", (7, 4), {"q": 2}),
    ("pca_lowrank", (5, 6), {"center": False}), ("pca_lowrank", (3, 5, 4), {}),
])
def test_svd_and_pca_lowrank_match_torch(fn, shape, kw):
    # peft imports torch.svd_lowrank at import (its LoRA initialisations use it)
    a = np.random.default_rng(0).standard_normal(shape)
    mine, theirs = _lowrank(glasstorch, fn, a, **kw), _lowrank(torch, fn, a, **kw)
    np.testing.assert_allclose(_np(mine[0]), _np(theirs[0]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_np(mine[1]), _np(theirs[1]), rtol=1e-9, atol=1e-9)
    assert mine[2:] == theirs[2:]


def test_lowrank_sparse_input_and_errors():
    a = np.random.default_rng(1).standard_normal((6, 4)).clip(0)

    def run(L):
        out = []
        sp = L.from_numpy(a).to_sparse()
        for fn in ("svd_lowrank", "pca_lowrank"):
            L.manual_seed(0)
            out.append(_np(getattr(L, fn)(sp, q=2)[1]))
        for call in (lambda: L.pca_lowrank(L.randn(4, 3), q=5),
                     lambda: L.pca_lowrank(L.randn(4, 3), niter=-1),
                     lambda: L.svd_lowrank(L.randint(0, 5, (5, 4)), q=2)):
            try:
                call()
            except Exception as e:  # noqa: BLE001 - type and message are compared
                out.append((type(e).__name__, str(e)))
        return out

    mine, theirs = run(glasstorch), run(torch)
    for m, t in zip(mine[:2], theirs[:2]):
        np.testing.assert_allclose(m, t, rtol=1e-6)
    assert mine[2:] == theirs[2:]


# ---------------------------------------------------------------- torch.compile


def test_compile_wraps_modules_and_functions_as_torch():
    # accelerate unwraps compiled models through ``_orig_mod``
    def run(L):
        lin = L.nn.Linear(2, 3)
        c = L.compile(lin)

        def f(x):
            return x + 1
        g = L.compile(f)
        out = [type(c).__name__, c._orig_mod is lin, list(c.state_dict()), c.training,
               L.compile(lin, disable=True) is lin, type(L.compile()(lin)).__name__,
               g is f, g._torchdynamo_orig_callable is f, g.__wrapped__ is f, g.__name__,
               repr(c).splitlines()[1].strip()]
        c.train(False)
        out.append(lin.training)
        for bad in (lambda: L.compile(3), lambda: L.compile(lin, mode="max-autotune",
                                                             options={"a": 1})):
            try:
                bad()
            except Exception as e:  # noqa: BLE001 - type and message are compared
                out.append((type(e).__name__, str(e)))
        return out

    assert run(glasstorch) == run(torch)


# ---------------------------------------------------------------- torchvision.io


def test_vision_io_png_round_trip_and_modes(tmp_path):
    # transformers imports torchvision.io whenever Pillow and torchvision are present
    pytest.importorskip("PIL")
    from glasstorch.vision import io

    x = glasstorch.randint(0, 256, (3, 5, 7), dtype=glasstorch.uint8)
    data = io.encode_png(x)
    assert data.dtype == glasstorch.uint8 and data.dim() == 1
    assert bytes(data[:8].tolist()) == b"\x89PNG\r\n\x1a\n"
    assert glasstorch.equal(io.decode_png(data), x)
    assert io.decode_image(data, mode="GRAY").shape == (1, 5, 7)
    assert io.decode_image(data, io.ImageReadMode.RGB_ALPHA).shape == (4, 5, 7)
    path = tmp_path / "a.png"
    io.write_png(x[:1], str(path))
    assert glasstorch.equal(io.read_image(path), x[:1])
    jpg = tmp_path / "a.jpg"
    io.write_jpeg(x, str(jpg), quality=95)
    assert io.read_image(str(jpg)).shape == (3, 5, 7)
    with pytest.raises(ValueError, match="between 1 and 100"):
        io.encode_jpeg(x, quality=0)
    with pytest.raises(RuntimeError, match="1-dimensional"):
        io.decode_png(glasstorch.zeros(2, 2, dtype=glasstorch.uint8))


# ---------------------------------------------------------------- module internals, devices


def test_extra_state_key_suffix():
    # transformers' weight loader reads torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX
    from torch.nn.modules import module as tm

    from glasstorch.nn.modules import module as gm
    assert gm._EXTRA_STATE_KEY_SUFFIX == tm._EXTRA_STATE_KEY_SUFFIX

    def run(L):
        class M(L.nn.Module):
            def get_extra_state(self):
                return {"k": 1}

            def set_extra_state(self, state):
                self.got = state
        m = M()
        sd = m.state_dict()
        m.load_state_dict(sd)
        return list(sd), m.got
    assert run(glasstorch) == run(torch)


def test_device_context_sets_the_factories_default():
    # transformers builds models under ``with torch.device("meta")``: ignoring the block
    # built real CPU tensors whose buffers the loader then left uninitialised
    def run(L):
        out = []
        with L.device("cpu"):
            out.append(str(L.get_default_device()))
            try:
                with L.device("meta"):
                    out.append(str(L.get_default_device()))
                    out.append(str(L.zeros(2).device))
            except Exception as e:  # noqa: BLE001 - any failure is compared with torch's
                out.append(type(e).__name__)
            out.append(str(L.get_default_device()))
        out.append(str(L.zeros(1).device))
        try:
            with L.device("cuda"):
                L.zeros(1)
        except AssertionError:
            out.append("no cuda")
        out.append(str(L.get_default_device()))
        return out

    assert run(glasstorch) == run(torch)


def test_to_accepts_none_as_no_device():
    # transformers' GPT-NeoX rotary embedding calls ``.to(None)``
    def run(L):
        t = L.randn(2)
        m = L.nn.Linear(2, 2)
        return (t.to(None) is t, repr(t.to(None, L.float64).dtype), t.to(None, None) is t,
                t.to(None, non_blocking=True) is t, m.to(None) is m)

    assert run(glasstorch) == run(torch)


def test_cpu_device_module():
    # accelerate reaches the device module as getattr(torch, device_type) ("cpu" included)
    def run(L):
        c = L.cpu
        out = [sorted(set(c.__all__) - {"get_capabilities"}), c.is_available(),
               c.device_count(), c.current_device(), c.synchronize(), c.is_initialized(),
               c.set_device("cpu"), type(c.current_stream()).__name__]
        s, e = c.Stream(), c.Event()
        out += [s.wait_stream(s), s.record_event(), e.record(), e.query(), e.synchronize()]
        default = c.current_stream()
        with c.stream(s) as entered:
            out += [entered, c.current_stream() is s]
        with c.stream(None):
            out.append(c.current_stream() is default)
        out.append(c.current_stream() is default)
        with c.amp.autocast():
            out.append(L.is_autocast_enabled("cpu"))
        return out

    assert run(glasstorch) == run(torch)


def test_device_amp_modules_import_when_serving_torch():
    import subprocess
    import sys
    code = ("import glasstorch; glasstorch.install_as_torch()\n"
            "import torch.cuda.amp, torch.cpu.amp\n"
            "from torch.cpu.amp import autocast\n"
            "print(torch.cpu.amp.__name__, autocast.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["glasstorch.cpu.amp", "autocast"]


# ---------------------------------------------------------------- Python types as dtypes
# peft's SHiRA mask: torch.ones(*shape, dtype=bool)

@pytest.mark.parametrize("py_type", [bool, int, float])
@pytest.mark.parametrize("make", [
    lambda L, d: L.ones(2, 3, dtype=d), lambda L, d: L.zeros(4, dtype=d),
    lambda L, d: L.full((2,), 1, dtype=d), lambda L, d: L.tensor([1, 0], dtype=d),
    lambda L, d: L.empty(3, dtype=d).shape])
def test_python_scalar_type_as_dtype(py_type, make):
    g, t = make(glasstorch, py_type), make(torch, py_type)
    if isinstance(t, torch.Tensor):
        assert repr(g.dtype) == repr(t.dtype)
        np.testing.assert_array_equal(_np(g), _np(t))
    else:
        assert tuple(g) == tuple(t)


# ---------------------------------------------------------------- torch.cuda deprecated names
# transformers' testing_utils maps "cuda" to torch.cuda.reset_max_memory_allocated at import

@pytest.mark.parametrize("name", ["reset_max_memory_allocated", "reset_max_memory_cached"])
def test_cuda_deprecated_reset_names_warn_like_torch(name):
    for lib in (glasstorch, torch):
        with pytest.warns(FutureWarning, match=f"torch.cuda.{name} now calls "
                          "torch.cuda.reset_peak_memory_stats"):
            # no CUDA: torch's CPU build fails in _C, glasstorch's like its other CUDA calls
            with pytest.raises((AttributeError, AssertionError)):
                getattr(lib.cuda, name)()


# ---------------------------------------------------------------- fx GraphModule's class
# accelerate's add_hook_to_module patches forward on the class when str(type(m)) names
# GraphModuleImpl; otherwise it pins an instance forward that recompile() cannot replace

def test_graph_module_class_keeps_torch_qualname():
    g = glasstorch.fx.symbolic_trace(glasstorch.nn.Linear(2, 2))
    t = torch.fx.symbolic_trace(torch.nn.Linear(2, 2))
    assert type(g).__name__ == type(t).__name__ == "Linear"
    assert type(g).__qualname__ == type(t).__qualname__
    assert "GraphModuleImpl" in str(type(g))


# ---------------------------------------------------------------- dense += sparse
# peft's SHiRA merge: orig_weight += torch.sparse_coo_tensor(...)

@pytest.mark.parametrize("op", [lambda d, s: d.add(s), lambda d, s: d.add_(s, alpha=2),
                                lambda d, s: d.__iadd__(s), lambda d, s: d.half().add_(s)])
def test_dense_add_sparse_matches_torch(op):
    def run(lib):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 2]]), lib.tensor([1.0, 2.0]), (2, 3))
        return op(lib.ones(2, 3), s)
    g, t = run(glasstorch), run(torch)
    assert repr(g.dtype) == repr(t.dtype) and repr(g.layout) == repr(t.layout)
    np.testing.assert_array_equal(_np(g.float()), _np(t.float()))
