"""No silently dropped gradients.

For every op-table entry (and, beyond the table, every public callable that a small
float64 sample can drive), when an input requires grad and torch's output is a
differentiable (floating or complex) tensor that requires grad, glasstorch's output must
require grad too, and a backward with the same upstream gradient must give torch's input
gradients. Where torch refuses the call with grad-requiring inputs, glasstorch must refuse it
the same way. An op that cannot differentiate raises; it never returns a detached result.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import glasstorch
from tests.parity.harness import _diff_outputs, _flat_leaves, _leaf_and_arg, to_lib, to_numpy
from tests.parity.optable import all_ops
from tests.parity.samples import rng_for

torch = pytest.importorskip("torch")

KNOWN = {}
# owned by the quantization work: torch refuses a scale that requires grad
KNOWN["fake_quantize_per_channel_affine"] = (
    "a scale that requires grad is accepted and gets no gradient; torch raises \"not "
    "differentiable with respect to argument 'scale'\"")


# torch 2.13's own gradient is wrong here, so values are not compared (the graph still is):
# as_strided_scatter's input gradient keeps the overwritten region and drops the rest
TORCH_GRAD_BUGS = {"as_strided_scatter"}


def _pick_dtype(op):
    for d in ("float64", "complex128", "float32", "complex64"):
        if d in op.dtypes and d not in op.skip:
            return d
    return None


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _flat(v)]
    return [r]


def _differentiable(t):
    return isinstance(t, torch.Tensor) and t.requires_grad and (
        t.is_floating_point() or t.is_complex())


def _loss(lib, outs, weights):
    total = 0
    for o, w in zip(outs, weights):
        p = o * lib.from_numpy(w).to(o.dtype)
        total = total + (p.real.sum() if o.is_complex() else p.sum())
    return total


def _audit(fn, args, kwargs, compare_grads, rng):
    """Problems found for one call of ``fn(lib, *args, **kwargs)``."""
    t_pairs = [_leaf_and_arg(torch, a) for a in args]
    g_pairs = [_leaf_and_arg(glasstorch, a) for a in args]
    t_leaves = _flat_leaves([p[1] for p in t_pairs])
    g_leaves = _flat_leaves([p[1] for p in g_pairs])
    if not t_leaves:
        return []
    t_kw = {k: to_lib(torch, v) for k, v in kwargs.items()}
    g_kw = {k: to_lib(glasstorch, v) for k, v in kwargs.items()}
    try:
        expected = fn(torch, *[p[0] for p in t_pairs], **t_kw)
    except Exception as e:  # torch refuses with these grad-requiring inputs: so must we
        try:
            fn(glasstorch, *[p[0] for p in g_pairs], **g_kw)
        except Exception:
            return []
        return [f"torch raises {type(e).__name__} ({str(e)[:80]}), glasstorch does not"]
    got = fn(glasstorch, *[p[0] for p in g_pairs], **g_kw)
    t_flat, g_flat = _flat(expected), _flat(got)
    if len(t_flat) != len(g_flat):
        return [f"{len(g_flat)} results, torch has {len(t_flat)}"]
    t_out, g_out, problems = [], [], []
    for i, (t, g) in enumerate(zip(t_flat, g_flat)):
        if not _differentiable(t):
            continue
        if not getattr(g, "requires_grad", False):
            problems.append(f"result {i} has no grad_fn (torch: {type(t.grad_fn).__name__})")
        t_out.append(t)
        g_out.append(g)
    if problems or not t_out or not compare_grads:
        return problems
    weights = [rng.standard_normal(tuple(t.shape)) for t in t_out]
    try:
        t_grads = torch.autograd.grad(_loss(torch, t_out, weights), t_leaves,
                                      allow_unused=True)
    except Exception:
        return []  # torch cannot differentiate it either
    try:
        g_grads = glasstorch.autograd.grad(_loss(glasstorch, g_out, weights), g_leaves,
                                           allow_unused=True)
    except RuntimeError:
        return []  # an error is not a silent drop
    for i, (gg, tg) in enumerate(zip(g_grads, t_grads)):
        a = _poles_as_inf(np.zeros(1) if gg is None else to_numpy(gg))
        b = _poles_as_inf(np.zeros(1) if tg is None else to_numpy(tg))
        low = tg is not None and tg.dtype in (torch.float16, torch.bfloat16)
        tol = 2e-2 if low else 1e-4
        if not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
            problems.append(f"gradient of input {i} differs from torch's")
    return problems


def _poles_as_inf(a):
    """Gradients at a pole: torch's huge finite value and an exact inf are the same answer."""
    if a.dtype.kind == "c":
        return a
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(a) > 1e20, np.sign(a) * np.inf, a)


CASES = []
for _op in all_ops():
    _dt = _pick_dtype(_op)
    if _dt is not None:
        marks = ([pytest.mark.xfail(reason=KNOWN[_op.name], strict=True)]
                 if _op.name in KNOWN else [])
        CASES.append(pytest.param(_op, _dt, id=_op.name, marks=marks))


@pytest.mark.parametrize("op,dtype", CASES)
def test_op_table_keeps_graph(op, dtype):
    """Every op-table entry: outputs keep their graph; grad=False entries (whose gradients
    the parity harness does not check) also give torch's input gradients."""
    rng = rng_for(f"audit-{op.name}-{dtype}")
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in op.samples(dtype, rng):
            for p in _audit(op.fn, sample.args, sample.kwargs,
                            not op.grad and not op.nondeterministic
                            and op.name not in TORCH_GRAD_BUGS, rng):
                problems.append(f"{sample}: {p}")
    assert not problems, f"{op.name} [{dtype}]:\n" + "\n".join(problems[:5])


# ----------------------------------------------------------------------------- double backward

KNOWN_DOUBLE = {"normalize_zero": "F.normalize's second derivative at a zero vector differs "
                                  "(glasstorch/nn/_functional)"}
DOUBLE_CASES = [pytest.param(op, id=op.name, marks=(
    [pytest.mark.xfail(reason=KNOWN_DOUBLE[op.name], strict=True)]
    if op.name in KNOWN_DOUBLE else [])) for op in all_ops()
    if op.grad and "float64" in op.dtypes and "float64" not in op.skip]


def _weighted(lib, tensors, weights):
    return sum((t * lib.from_numpy(w)).sum() for t, w in zip(tensors, weights))


def _double_backward_problem(op, sample, rng):
    t_pairs = [_leaf_and_arg(torch, a) for a in sample.args]
    g_pairs = [_leaf_and_arg(glasstorch, a) for a in sample.args]
    t_leaves = _flat_leaves([p[1] for p in t_pairs])
    g_leaves = _flat_leaves([p[1] for p in g_pairs])
    t_kw = {k: to_lib(torch, v) for k, v in sample.kwargs.items()}
    g_kw = {k: to_lib(glasstorch, v) for k, v in sample.kwargs.items()}
    if not t_leaves:
        return None
    try:
        t_out = _diff_outputs(op.fn(torch, *[p[0] for p in t_pairs], **t_kw))
        w1 = [rng.standard_normal(tuple(t.shape)) for t in t_out]
        t_g = torch.autograd.grad(_weighted(torch, t_out, w1), t_leaves, create_graph=True,
                                  allow_unused=True)
        keep = [i for i, g in enumerate(t_g) if g is not None and g.requires_grad and g.numel()]
        w2 = [rng.standard_normal(tuple(t_g[i].shape)) for i in keep]
        t_gg = torch.autograd.grad(_weighted(torch, [t_g[i] for i in keep], w2), t_leaves,
                                   allow_unused=True) if keep else None
    except Exception:
        return None  # torch has no (double) backward here
    if not t_out or not keep:
        return None
    g_out = _diff_outputs(op.fn(glasstorch, *[p[0] for p in g_pairs], **g_kw))
    g_g = glasstorch.autograd.grad(_weighted(glasstorch, g_out, w1), g_leaves,
                                   create_graph=True, allow_unused=True)
    # a first-order gradient without a graph counts as constant: its second-order terms are
    # zero, which is right only when torch's are zero too
    live = [(g_g[i], w) for i, w in zip(keep, w2) if g_g[i] is not None and g_g[i].requires_grad]
    try:
        g_gg = glasstorch.autograd.grad(_weighted(glasstorch, *zip(*live)), g_leaves,
                                        allow_unused=True) if live else [None] * len(g_leaves)
    except RuntimeError:
        return None  # refused, not dropped
    for i, (a, b) in enumerate(zip(g_gg, t_gg)):
        a = np.zeros(1) if a is None else to_numpy(a)
        b = np.zeros(1) if b is None else to_numpy(b)
        if not np.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True):
            return f"{sample}: second-order gradient of input {i} differs from torch's"
    return None


@pytest.mark.parametrize("op", DOUBLE_CASES)
def test_double_backward_keeps_graph(op):
    """create_graph=True first-order gradients carry the graph that double backward needs:
    second-order gradients match torch's (a missing graph shows up as zeros)."""
    rng = rng_for(f"audit2-{op.name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in op.samples("float64", rng):
            problem = _double_backward_problem(op, sample, rng)
            assert problem is None, f"{op.name}: {problem}"


# ----------------------------------------------------------------------------- beyond the table

# callables the scan must not drive with arbitrary tensors (state, I/O, tracing, hooks)
_SKIP_PREFIX = ("set_", "use_", "manual_seed", "seed", "save", "load", "compile", "backward",
                "register", "_", "is_", "get_", "autocast", "enable", "disable", "fork", "wait",
                "vmap", "cond", "while_loop", "export", "jit", "sym_", "cuda", "mps", "xpu",
                "annotate", "frombuffer", "from_file", "from_numpy", "initial_seed", "typename")
_SKIP = {"Tensor.retain_grad", "Tensor.share_memory_", "Tensor.pin_memory",
         "Tensor.record_stream", "Tensor.apply_", "Tensor.map_", "Tensor.map2_",
         "Tensor.tolist", "Tensor.numpy", "Tensor.storage", "Tensor.untyped_storage",
         "Tensor.data_ptr", "Tensor.item"}


def _namespaces():
    yield torch, "", glasstorch
    yield torch.linalg, "linalg.", glasstorch.linalg
    yield torch.nn.functional, "nn.functional.", glasstorch.nn.functional
    for name in ("special", "fft"):
        try:
            yield getattr(torch, name), name + ".", getattr(glasstorch, name)
        except (AttributeError, ImportError):
            continue


def _public_callables():
    for tmod, prefix, gmod in _namespaces():
        for n in dir(tmod):
            t = getattr(tmod, n, None)
            if n.startswith(_SKIP_PREFIX) or inspect.ismodule(t) or inspect.isclass(t):
                continue
            try:
                g = getattr(gmod, n, None)
            except ImportError:  # a lazily imported glasstorch submodule not written yet
                continue
            if callable(t) and callable(g) and not inspect.isclass(g):
                yield prefix + n, (lambda name, pre: lambda lib, *a: _resolve(lib, pre, name)(
                    *a))(n, prefix)
    for n in dir(torch.Tensor):
        if n.startswith(_SKIP_PREFIX) or "Tensor." + n in _SKIP:
            continue
        if callable(getattr(torch.Tensor, n, None)) and callable(
                getattr(glasstorch.Tensor, n, None)):
            yield "Tensor." + n, (lambda name: lambda lib, x, *a: getattr(x, name)(*a))(n)


def _resolve(lib, prefix, name):
    obj = lib
    for part in prefix.split(".")[:-1]:
        obj = getattr(obj, part)
    return getattr(obj, name)


def test_public_callables_keep_graph():
    """Public callables the op table does not list, driven by a few small float64 argument
    patterns: the first pattern torch accepts with a differentiable result must give
    glasstorch results that require grad too."""
    table = set()
    for op in all_ops():
        table.update(op.names())
    rng = np.random.default_rng(0)
    a, b, c = (rng.uniform(0.5, 1.5, (3, 3)) for _ in range(3))
    patterns = [(a,), (a, b), (a, 0), (a, b, c), (a, 1.5), (a, b, 0.5), ([a, b],), ([a, b], 0)]
    checked, problems = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in _public_callables():
            if name in table or name.replace("nn.functional.", "") in table:
                continue
            for args in patterns:
                t_pairs = [_leaf_and_arg(torch, x) for x in args]
                try:
                    r = fn(torch, *[p[0] for p in t_pairs])
                except Exception:
                    continue
                if not any(_differentiable(t) for t in _flat(r)):
                    continue
                checked += 1
                try:
                    found = _audit(fn, args, {}, False, rng)
                except Exception:
                    found = []  # glasstorch raising is not a silent drop
                problems += [f"{name}{tuple(type(x).__name__ for x in args)}: {p}"
                             for p in found]
                break
    assert checked > 20, "the scan should reach the public callables outside the table"
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- regressions

def _pair(arr):
    return (torch.tensor(arr, requires_grad=True), glasstorch.tensor(arr, requires_grad=True))


def _grads_match(f, *arrays):
    """f(lib, *leaves) -> a real scalar; gradients agree with torch's and gradcheck passes."""
    pairs = [_pair(x) for x in arrays]
    t_leaves, g_leaves = [p[0] for p in pairs], [p[1] for p in pairs]
    tg = torch.autograd.grad(f(torch, *t_leaves), t_leaves)
    gg = glasstorch.autograd.grad(f(glasstorch, *g_leaves), g_leaves)
    for x, y in zip(gg, tg):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-7, atol=1e-9)
    assert glasstorch.autograd.gradcheck(lambda *xs: f(glasstorch, *xs), tuple(g_leaves))


def test_solve_triangular_gradient_matches_torch():
    """The reported bug: a Cholesky-whitened quadratic form trained uphill."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 2))
    y = rng.standard_normal((5, 1))

    def nll(lib, ls):
        d = (lib.from_numpy(x)[:, None, :] - lib.from_numpy(x)[None, :, :]) / ls
        k = (-0.5 * (d ** 2).sum(-1)).exp() + 0.1 * lib.eye(5, dtype=lib.float64)
        chol = lib.linalg.cholesky(k)
        alpha = lib.linalg.solve_triangular(chol, lib.from_numpy(y), upper=False)
        return 0.5 * (alpha ** 2).sum() + chol.diagonal().log().sum()

    _grads_match(nll, np.array([0.7, 1.3]))
    t_ls, g_ls = _pair(np.array([0.7, 1.3]))
    assert glasstorch.linalg.solve_triangular(
        glasstorch.eye(2, dtype=glasstorch.float64) * g_ls, glasstorch.ones(2, 1).double(),
        upper=True).grad_fn.name() == "LinalgSolveTriangularBackward0"


@pytest.mark.parametrize("left,upper,unit", [(True, True, False), (False, False, True),
                                             (False, True, False)])
def test_solve_triangular_variants(left, upper, unit):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 3)) + 4 * np.eye(3)
    b = rng.standard_normal((3, 2) if left else (2, 3))

    def f(lib, a, b):
        tri = a.triu() if upper else a.tril()
        return (lib.linalg.solve_triangular(tri, b, upper=upper, left=left,
                                            unitriangular=unit) ** 2).sum()
    _grads_match(f, a, b)


@pytest.mark.parametrize("complex_input", [False, True])
def test_eig_and_eigvals_gradients(complex_input):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    if complex_input:
        a = a + 1j * rng.standard_normal((3, 3))

    def f(lib, a):
        w, v = lib.linalg.eig(a)
        vals = lib.linalg.eigvals(a)
        return (w ** 2).sum().real + ((v.abs() ** 2) * w.abs().unsqueeze(-2)).sum() + \
            (vals ** 3).sum().real
    _grads_match(f, a)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd"])
def test_lstsq_solution_and_residual_gradients(driver):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))

    def f(lib, a, b):
        r = lib.linalg.lstsq(a, b, driver=driver)
        out = (r.solution * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum()
        return out + (r.residuals * 3).sum()
    _grads_match(f, a, b)


def test_cond_vecdot_vander_gradients():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 3))
    _grads_match(lambda lib, a: lib.linalg.cond(a) + lib.linalg.cond(a, -2), a)
    _grads_match(lambda lib, a: lib.linalg.cond(a, "nuc"), a)
    _grads_match(lambda lib, a: lib.linalg.vecdot(a, a.flip(0)).sum().real, a + 1j * a.T)
    _grads_match(lambda lib, a: (lib.linalg.vander(a[0]) * a).sum(), a)


def test_cond_inverse_orders_differentiate():
    """torch 2.13 fails these backwards (it writes into inv_ex's saved output); glasstorch
    differentiates norm(A) * norm(inv(A)): compared with finite differences."""
    a = glasstorch.tensor(np.random.default_rng(6).standard_normal((3, 3)) + 3 * np.eye(3),
                          requires_grad=True)
    for p in ("fro", 1, -1, float("inf")):
        assert glasstorch.linalg.cond(a, p).grad_fn.name() == "NanToNumBackward0"
        assert glasstorch.autograd.gradcheck(lambda x: glasstorch.linalg.cond(x, p), (a,))


def test_complex_views_carry_gradients():
    rng = np.random.default_rng(7)
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    w = rng.standard_normal((4, 2))
    _grads_match(lambda lib, z: (z.real * 2 + z.imag * 3).sum(), z)
    _grads_match(lambda lib, z: (lib.view_as_real(z) * lib.from_numpy(w)).sum(), z)
    _grads_match(lambda lib, x: (lib.view_as_complex(x) ** 2).real.sum(), w)
    t, g = _pair(z)
    assert g.real.grad_fn.name() == t.real.grad_fn.name() == "SelectBackward0"
    assert glasstorch.view_as_real(g).grad_fn.name() == "ViewAsRealBackward0"


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
def test_inplace_comparison_cuts_the_gradient(name):
    """self's values are replaced by 0/1: torch sends zeros back, not the old gradient."""
    for lib in (torch, glasstorch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        z = x * 1
        getattr(z, name)(y)
        assert type(z.grad_fn).__name__ == name[:2].capitalize() + "Backward1"
        z.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0] and y.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("fn", ["sum", "nansum", "prod", "cumsum", "cumprod"])
def test_integer_dtype_reduction_refuses_grad(fn):
    """torch: "Autograd not support dtype: Int" rather than an integer result with no graph."""
    args = (0,) if fn.startswith("cum") else ()
    for lib in (torch, glasstorch):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        with pytest.raises(RuntimeError, match="Autograd not support dtype: Int"):
            getattr(lib, fn)(x, *args, dtype=lib.int32)
        with lib.no_grad():
            assert getattr(lib, fn)(x, *args, dtype=lib.int32).dtype == lib.int32


def test_qr_mode_r_refuses_backward():
    a = glasstorch.randn(4, 3, dtype=glasstorch.float64, requires_grad=True)
    q, r = glasstorch.linalg.qr(a, mode="r")
    assert r.requires_grad and q.shape == (0,)
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
