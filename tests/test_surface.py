"""The long tail of torch's surface against torch: names glasstorch lacks raise
NotImplementedError naming the torch symbol, nn.init's deprecated eye/dirac, the helpers
nn.functional re-exports, linear_cross_entropy and LinearCrossEntropyLoss."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def test_missing_torch_names_raise_not_implemented():
    # device-only kernels torch has and glasstorch does not
    for name in ("cudnn_convolution", "miopen_batch_norm", "cudnn_grid_sampler"):
        assert hasattr(torch, name)
        with pytest.raises(NotImplementedError, match=f"torch.{name} is not implemented"):
            getattr(glasstorch, name)
        assert not hasattr(glasstorch, name)  # still an AttributeError for hasattr/getattr
        assert getattr(glasstorch, name, 7) == 7
    # a name torch does not have either stays a plain AttributeError
    with pytest.raises(AttributeError) as info:
        _ = glasstorch.no_such_torch_function
    assert not isinstance(info.value, NotImplementedError)


def test_names_file_is_torchs():
    from tests.parity.coverage import NAMES_FILE
    lines = [ln for ln in NAMES_FILE.read_text().splitlines() if not ln.startswith("#")]
    assert lines[0] != "" and len(lines) == len(set(lines))
    # submodules appear in dir(torch) once imported, so only other names must agree
    want = {n for n in dir(torch) if not n.startswith("__")
            and not inspect.ismodule(getattr(torch, n))}
    got = {n for n in lines if not n.startswith("Tensor.")}
    assert want <= got, "rerun `python -m tests.parity.coverage --write-names`"


@pytest.mark.parametrize("name,shape", [("eye", (3, 4)), ("dirac", (4, 2, 3))])
def test_deprecated_init_names(name, shape):
    outs = []
    for lib in (torch, glasstorch):
        w = lib.empty(shape)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outs.append(getattr(lib.nn.init, name)(w).numpy())
        assert any(issubclass(c.category, FutureWarning) for c in caught)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_functional_helpers():
    F = glasstorch.nn.functional
    assert F.Tensor is glasstorch.Tensor
    t = glasstorch.ones(2)
    assert not F.has_torch_function((t,)) and not F.has_torch_function_unary(t)
    assert not F.has_torch_function_variadic(t, t)
    pick = F.boolean_dispatch("flag", 1, False, lambda x, flag=False: ("t", x),
                              lambda x, flag=False: ("f", x), None, "pick")
    assert pick(1) == ("f", 1) and pick(1, True) == ("t", 1) and pick(1, flag=True)[0] == "t"
    assert pick.__name__ == "pick"
    F.assert_int_or_pair(3, "k", "{} must be int or pair")
    F.assert_int_or_pair((1, 2), "k", "{} must be int or pair")
    with pytest.raises(AssertionError, match="k must be int or pair"):
        F.assert_int_or_pair((1, 2, 3), "k", "{} must be int or pair")


def _lce_case(lib, kdim, **kw):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.normal(size=(6, 4)), requires_grad=True)
    wshape = (5, 2, 4) if kdim else (5, 4)
    w = lib.tensor(rng.normal(size=wshape), requires_grad=True)
    b = lib.tensor(rng.normal(size=wshape[:-1]), requires_grad=True)
    tgt = rng.integers(0, 5, size=(6, 2) if kdim else (6,))
    tgt[1] = kw.get("ignore_index", -100)
    loss = lib.nn.functional.linear_cross_entropy(x, w, lib.tensor(tgt), linear_bias=b, **kw)
    grads = lib.autograd.grad(loss.sum(), (x, w, b))
    return [loss.detach().numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("kdim", [False, True])
@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"label_smoothing": 0.1},
                                {"ignore_index": 2, "reduction": "sum"}])
def test_linear_cross_entropy_matches_torch(kdim, kw):
    for g, t in zip(_lce_case(glasstorch, kdim, **kw), _lce_case(torch, kdim, **kw)):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_module_matches_torch():
    out = []
    for lib in (torch, glasstorch):
        lib.manual_seed(0)
        m = lib.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True,
                                          options=lib.nn.LinearCrossEntropyOptions())
        sd = {k: tuple(v.shape) for k, v in m.state_dict().items()}
        x = lib.ones(3, 4)
        loss = m(x, lib.zeros(3, 2, dtype=lib.int64))
        out.append((sd, repr(m).replace("torch.", ""), loss.grad_fn is not None))
    assert out[0][0] == out[1][0] and out[0][2] == out[1][2]
    assert out[0][1].split("\n")[1] == out[1][1].split("\n")[1]


def test_tensor_layout_queries_match_torch():
    for make in (lambda lib: lib.ones(2, 3, 4), lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
                 lambda lib: lib.ones(2, 3, 4).transpose(0, 1), lambda lib: lib.ones(2, 1, 3),
                 lambda lib: lib.ones(3, 1).t(), lambda lib: lib.ones(4)[::2]):
        got, want = make(glasstorch), make(torch)
        assert got.dim_order() == want.dim_order()
        for attr in ("is_xla", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_mkldnn",
                     "is_nested", "name"):
            assert getattr(got, attr) == getattr(want, attr), attr
        assert got.is_conj() == want.is_conj() and got.is_neg() == want.is_neg()


@pytest.mark.parametrize("size", [(3, 4), (1, 4), (2, 1, 1), (3, 1), (2, 3, 4), (1, 3, 4), (),
                                  (5,)])
def test_sum_to_size_matches_torch(size):
    out = []
    for lib in (torch, glasstorch):
        x = lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4).requires_grad_()
        try:
            r = x.sum_to_size(size)
        except RuntimeError as e:
            out.append(type(e))
            continue
        g, = lib.autograd.grad((r * r).sum(), x)
        out.append((r.detach().numpy(), type(r.grad_fn).__name__, g.numpy()))
    if isinstance(out[0], type):
        assert out[0] is out[1]
        return
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]
    np.testing.assert_array_equal(out[0][2], out[1][2])


GROUPED = [((16, 8), (3, 8, 16), [2, 8, 16]), ((3, 16, 8), (3, 8, 16), None),
           ((16, 32), (32, 16), [8, 16, 32]), ((3, 16, 8), (8, 32), [8, 16, 32]),
           ((16, 8), (3, 8, 16), [4, 8, 16]), ((6, 4), (3, 4, 5), [2, 4, 6]),
           ((16, 8), (3, 4, 16), [2, 8, 16]), ((16, 8), (3, 8, 16), None)]


@pytest.mark.parametrize("a_shape,b_shape,offs", GROUPED)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_grouped_mm_matches_torch(a_shape, b_shape, offs, dtype):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)

    def run(lib):
        dt = getattr(lib, dtype)
        o = None if offs is None else lib.tensor(offs, dtype=lib.int32)
        return lib.nn.functional.grouped_mm(lib.tensor(a, dtype=dt), lib.tensor(b, dtype=dt),
                                            offs=o)
    got, want = [], []
    for lib, out in ((glasstorch, got), (torch, want)):
        try:
            out.append(run(lib).float().numpy())
        except RuntimeError as e:
            out.append(str(e))
    if isinstance(want[0], str):
        assert got[0] == want[0]
    else:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-2 if dtype == "bfloat16" else 1e-5,
                                   atol=1e-2 if dtype == "bfloat16" else 1e-5)


def test_grouped_mm_gradients():
    # torch's CPU kernel has no working backward here; check against finite differences
    rng = np.random.default_rng(4)
    F = glasstorch.nn.functional
    offs = glasstorch.tensor([2, 8, 16], dtype=glasstorch.int32)
    for a_shape, b_shape in (((16, 8), (3, 8, 16)), ((16, 32), (32, 16))):
        a = glasstorch.tensor(rng.normal(size=a_shape), dtype=glasstorch.float32,
                              requires_grad=True)
        b = glasstorch.tensor(rng.normal(size=b_shape), dtype=glasstorch.float32,
                              requires_grad=True)
        out = F.grouped_mm(a, b, offs=offs if b.dim() == 3 else
                           glasstorch.tensor([8, 16, 32], dtype=glasstorch.int32))
        assert type(out.grad_fn).__name__ == "GroupedMmBackward0"
        w = glasstorch.tensor(rng.normal(size=tuple(out.shape)), dtype=glasstorch.float32)
        ga, gb = glasstorch.autograd.grad((out * w).sum(), (a, b))
        # the same product written out by hand gives the same gradients
        a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
        if b.dim() == 3:
            ref = glasstorch.cat([a2[0:2] @ b2[0], a2[2:8] @ b2[1], a2[8:16] @ b2[2]])
        else:
            ref = glasstorch.stack([a2[:, s:e] @ b2[s:e] for s, e in ((0, 8), (8, 16), (16, 32))])
        ra, rb = glasstorch.autograd.grad((ref * w).sum(), (a2, b2))
        np.testing.assert_allclose(ga.numpy(), ra.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gb.numpy(), rb.numpy(), rtol=1e-6)


def test_scaled_mm_enums_match_torch():
    F = glasstorch.nn.functional
    for name in ("ScalingType", "SwizzleType"):
        want = {k: int(v.value) for k, v in getattr(torch.nn.functional, name).__members__.items()}
        assert {k: v.value for k, v in getattr(F, name).__members__.items()} == want


def test_elementwise_python_maps_match_torch():
    out = []
    for lib in (torch, glasstorch):
        x = lib.arange(6.0).reshape(2, 3)
        v = x._version
        x.apply_(lambda a: a * 2)
        x.map_(lib.ones(3), lambda a, b: a + b)
        x.map2_(lib.ones(2, 1), lib.full((3,), 3.0), lambda a, b, c: a * b - c)
        i = lib.ones(3, dtype=lib.int64).apply_(lambda a: a * 1.5)
        out.append((x.numpy(), i.numpy(), x._version > v))
        with pytest.raises(RuntimeError, match="requires grad"):
            lib.ones(2, requires_grad=True).apply_(lambda a: a)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2]  # (torch does not bump the version here)


def test_small_tensor_methods_match_torch():
    for lib in (torch, glasstorch):
        t = lib.ones(2, 3)
        assert t.is_distributed() is False and t.const_data_ptr() == t.data_ptr()
        assert t.is_set_to(t) and not t.is_set_to(t[:1]) and not t.is_set_to(t.clone())
        e = t.new_empty_strided((2, 3), (1, 2))
        assert e.stride() == (1, 2) and e.dtype == t.dtype
        assert t.new_empty_strided((2,), (1,), dtype=lib.int32).dtype == lib.int32
        r = lib.zeros(1)
        assert r.resize_as_(t).shape == t.shape
        with pytest.warns(UserWarning):
            assert t.volatile is False
        for name, args in (("eig", ()), ("symeig", ()), ("lstsq", (t,)), ("solve", (t,)),
                           ("reinforce", (t,)), ("ipu", ())):
            with pytest.raises(RuntimeError):
                getattr(t, name)(*args)
        for name in ("xpu", "mtia"):
            with pytest.raises(AssertionError):
                getattr(t, name)()


@pytest.mark.parametrize("shape,wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 3, 3), False), ((3,), False), ((2, 3, 4), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    out = []
    for lib in (torch, glasstorch):
        a = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape)
        a.requires_grad_()
        try:
            y = (a * 2).fill_diagonal_(-1.0, wrap=wrap)
        except RuntimeError as e:
            out.append(type(e))
            continue
        g, = lib.autograd.grad((y * y).sum(), a)
        out.append((y.detach().numpy(), type(y.grad_fn).__name__, g.numpy()))
    if isinstance(out[0], type):
        assert out[0] is out[1]
        return
    for x, t in zip(out[1], out[0]):
        np.testing.assert_array_equal(x, t)


def test_nonzero_static_and_module_load_match_torch():
    for data, size, fill in (([0, 1, 0, 2], 4, -1), ([[0, 1], [1, 1]], 2, 9), ([1, 1], 0, -1),
                             ([[0.0, 0.5]], 3, 0)):
        got = glasstorch.tensor(data).nonzero_static(size=size, fill_value=fill)
        want = torch.tensor(data).nonzero_static(size=size, fill_value=fill)
        assert got.dtype == glasstorch.int64 and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (torch, glasstorch):
        p = lib.zeros(2)
        src = lib.ones(2, requires_grad=True)
        loaded = p.module_load(src)
        assert loaded.data_ptr() == p.data_ptr() and not loaded.requires_grad
        assert p.module_load(src, assign=True).data_ptr() == src.data_ptr()
