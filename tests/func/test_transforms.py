"""torch.func's transforms (grad, vjp, jvp, linearize, jacrev, jacfwd, hessian, vmap)
compared with real torch: values, requires_grad of results, nesting, and errors."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

LIBS = (glasstorch, torch)


def _arr(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed + sum(shape)).uniform(low, high, shape)


def _both(fn, *arrays, requires_grad=False):
    """fn(lib, *tensors) run in both libraries on float64 tensors with the same values."""
    out = []
    for lib in LIBS:
        ts = [lib.tensor(a, requires_grad=requires_grad) for a in arrays]
        out.append(fn(lib, *ts))
    return out


def _close(ours, theirs, atol=1e-10):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glasstorch.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype)
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol,
                                   rtol=1e-7)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _close(ours[k], theirs[k], atol)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b, atol)
    else:
        assert ours == theirs


def _same_error(fn):
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append(info.value)
    ours, theirs = errors
    assert type(ours) is type(theirs)
    assert str(ours).split("\n")[0][:60] == str(theirs).split("\n")[0][:60]


# name: (fn(lib, *tensors), input arrays)
CASES = {
    "grad": (lambda lib, x: lib.func.grad(lambda x: (x.sin() * x).sum())(x), [_arr(4)]),
    "grad_argnums": (lambda lib, x, y: lib.func.grad(lambda x, y: (x * y.exp()).sum(),
                                                     argnums=(0, 1))(x, y), [_arr(3), _arr(3)]),
    "grad_negative_argnum": (lambda lib, x, y: lib.func.grad(lambda x, y: (x * y ** 2).sum(),
                                                             argnums=-1)(x, y),
                             [_arr(3), _arr(3)]),
    "grad_pytree": (lambda lib, x, y: lib.func.grad(
        lambda d: (d["a"] * d["b"][0].cos()).sum())({"a": x, "b": [y]}), [_arr(2), _arr(2)]),
    "grad_has_aux": (lambda lib, x: lib.func.grad(lambda x: ((x ** 2).sum(), x.cos()),
                                                  has_aux=True)(x), [_arr(3)]),
    "grad_and_value": (lambda lib, x: lib.func.grad_and_value(lambda x: x.tanh().sum())(x),
                       [_arr(3)]),
    "grad_of_grad": (lambda lib, x: lib.func.grad(lambda x: lib.func.grad(
        lambda x: (x ** 3).sin().sum())(x).sum())(x), [_arr(3)]),
    "grad_unused_input": (lambda lib, x, y: lib.func.grad(lambda x: y.sum())(x),
                          [_arr(3), _arr(3)]),
    # the inner grad treats the outer x as a constant (no perturbation confusion)
    "grad_closure_levels": (lambda lib, x: lib.func.grad(lambda x: lib.func.grad(
        lambda y: (x * y).sum())(x).sum())(x), [_arr(3)]),
    "vjp": (lambda lib, x: (lambda o, f: (o, f(lib.ones_like(o))))(
        *lib.func.vjp(lambda x: x.sin() * 2, x)), [_arr(2, 3)]),
    "vjp_pytree_out": (lambda lib, x, y: (lambda o, f: f((x, {"a": y})))(
        *lib.func.vjp(lambda x, y: (x * y, {"a": y.exp()}), x, y)), [_arr(3), _arr(3)]),
    "vjp_has_aux": (lambda lib, x: (lambda o, f, aux: (o, f(o), aux))(
        *lib.func.vjp(lambda x: (x * x, x.sum()), x, has_aux=True)), [_arr(3)]),
    "jacrev": (lambda lib, x: lib.func.jacrev(lambda x: x.sin().outer(x))(x), [_arr(3)]),
    "jacrev_argnums": (lambda lib, x, y: lib.func.jacrev(lambda x, y: {"p": x @ y},
                                                         argnums=(0, 1))(x, y),
                       [_arr(2, 3), _arr(3)]),
    "jacrev_chunked": (lambda lib, x: lib.func.jacrev(lambda x: x.exp(), chunk_size=2)(x),
                       [_arr(5)]),
    "jvp": (lambda lib, x, t: lib.func.jvp(lambda x: (x.sin() * x).cumsum(0), (x,), (t,)),
            [_arr(4), _arr(4)]),
    "jvp_two_inputs": (lambda lib, x, y, t, u: lib.func.jvp(lambda x, y: x @ y, (x, y), (t, u)),
                       [_arr(2, 3), _arr(3, 2), _arr(2, 3), _arr(3, 2)]),
    "jvp_has_aux": (lambda lib, x, t: lib.func.jvp(lambda x: (x.exp(), x.sum()), (x,), (t,),
                                                   has_aux=True), [_arr(3), _arr(3)]),
    "linearize": (lambda lib, x, t: (lambda o, f: (o, f(t), f(2 * t)))(
        *lib.func.linearize(lambda x: x.sin().prod(), x)), [_arr(3), _arr(3)]),
    "jacfwd": (lambda lib, x: lib.func.jacfwd(lambda x: x.softmax(0))(x), [_arr(4)]),
    "jacfwd_argnums": (lambda lib, x, y: lib.func.jacfwd(lambda x, y: x * y.sum(),
                                                         argnums=(0, 1))(x, y),
                       [_arr(2), _arr(3)]),
    "jacrev_of_jacfwd": (lambda lib, x: lib.func.jacrev(lib.func.jacfwd(
        lambda x: (x.sin() * x).sum()))(x), [_arr(3)]),
    "hessian": (lambda lib, x: lib.func.hessian(lambda x: (x.tanh() ** 2).sum())(x),
                [_arr(2, 2)]),
    "hvp": (lambda lib, x, v: lib.func.jvp(lib.func.grad(lambda x: (x.sin() * x).sum()),
                                           (x,), (v,))[1], [_arr(4), _arr(4)]),
    "vmap": (lambda lib, x: lib.vmap(lambda r: r.sin() @ r)(x), [_arr(3, 4)]),
    "vmap_in_dims": (lambda lib, x, y: lib.func.vmap(lambda a, b, s: a * b + s,
                                                     in_dims=(1, None, None))(x, y, 2.0),
                     [_arr(3, 4), _arr(3)]),
    "vmap_nested_in_dims": (lambda lib, x, y: lib.vmap(lambda p: p[0] * p[1]["b"],
                                                       in_dims=((0, {"b": 1}),))((x, {"b": y})),
                            [_arr(2, 3), _arr(3, 2)]),
    "vmap_out_dims": (lambda lib, x: lib.vmap(lambda r: (r.outer(r), r.sum()),
                                              out_dims=(2, 0))(x), [_arr(3, 2)]),
    "vmap_out_none": (lambda lib, x, y: lib.vmap(lambda r: (r + 1, y), out_dims=(0, None))(x),
                      [_arr(3, 2), _arr(2)]),
    "vmap_of_vmap": (lambda lib, x: lib.vmap(lib.vmap(lambda a: a.exp() * a))(x),
                     [_arr(2, 3)]),
    "vmap_of_grad": (lambda lib, x: lib.vmap(lib.func.grad(lambda r: (r ** 3).sum()))(x),
                     [_arr(4, 3)]),
    "vmap_chunk_size": (lambda lib, x: lib.vmap(lambda r: r.cumsum(0), chunk_size=2)(x),
                        [_arr(5, 3)]),
    "vmap_empty_batch": (lambda lib, x: lib.vmap(lambda r: r * 2)(x), [np.zeros((0, 3))]),
    "jacrev_vmap": (lambda lib, x: lib.func.jacrev(lib.vmap(lambda r: r.sin().sum()))(x),
                    [_arr(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, arrays = CASES[name]
    ours, theirs = _both(fn, *arrays)
    _close(ours, theirs)


@pytest.mark.parametrize("name", ["grad", "grad_argnums", "jvp", "jacrev", "hessian", "vjp",
                                  "vmap_of_grad", "jacfwd"])
def test_results_stay_differentiable_for_plain_autograd(name):
    """Inputs that require grad: results carry a graph (requires_grad as torch's) and the
    gradients of the inputs by plain autograd through them match torch's."""
    fn, arrays = CASES[name]
    results = []
    for lib in LIBS:
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        leaves = [o for o in lib.utils._pytree.tree_leaves(out) if o.requires_grad]
        assert leaves
        sum((o * o).sum() for o in leaves).backward()
        results.append((out, [t.grad for t in ts]))
    _close(*results)


def test_closure_over_tensor_requiring_grad():
    outs = []
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        g = lib.func.grad(lambda x: (w * x ** 2).sum())(lib.tensor([0.5, -1.0, 2.0]))
        g.sum().backward()
        outs.append((g, w.grad))
    _close(*outs)


def test_grad_ignores_enclosing_no_grad():
    outs = []
    for lib in LIBS:
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        with lib.no_grad():
            outs.append(lib.func.grad(lambda x: (x ** 3).sum())(x))
    _close(*outs)


def test_vmap_randomness():
    x = glasstorch.zeros(3)
    same = glasstorch.vmap(lambda r: r + glasstorch.rand(()), randomness="same")(x)
    assert bool((same == same[0]).all())
    different = glasstorch.vmap(lambda r: r + glasstorch.rand(()), randomness="different")(x)
    assert len(set(different.tolist())) == 3


ERRORS = {
    "grad_non_scalar": lambda lib: lib.func.grad(lambda x: x * 2)(lib.ones(2)),
    "grad_non_tensor_output": lambda lib: lib.func.grad(lambda x: 3.0)(lib.ones(2)),
    "grad_bad_aux": lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.ones(2)),
    "grad_aux_not_tensor": lambda lib: lib.func.grad(lambda x: (x.sum(), 1),
                                                     has_aux=True)(lib.ones(2)),
    "grad_argnum_range": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(lib.ones(2)),
    "grad_argnums_empty": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(lib.ones(2)),
    "grad_non_tensor_input": lambda lib: lib.func.grad(lambda x: x)(3.0),
    "grad_integer_input": lambda lib: lib.func.grad(lambda x: x.sum())(lib.arange(3)),
    "vjp_non_tensor_output": lambda lib: lib.func.vjp(lambda x: 2, lib.ones(2)),
    "vjp_cotangent_structure": lambda lib: lib.func.vjp(lambda x: (x, x), lib.ones(2))[1](
        lib.ones(2)),
    "vjp_cotangent_shape": lambda lib: lib.func.vjp(lambda x: x, lib.ones(2))[1](lib.ones(3)),
    "jacrev_chunk_size": lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0)(lib.ones(2)),
    "jvp_primals_not_tuple": lambda lib: lib.func.jvp(lambda x: x, [lib.ones(2)],
                                                      (lib.ones(2),)),
    "jvp_structure": lambda lib: lib.func.jvp(lambda x: x, (lib.ones(2),),
                                              (lib.ones(2), lib.ones(2))),
    "jvp_tangent_shape": lambda lib: lib.func.jvp(lambda x: x, (lib.ones(2),), (lib.ones(3),)),
    "jvp_non_tensor_output": lambda lib: lib.func.jvp(lambda x: 1, (lib.ones(2),),
                                                      (lib.ones(2),)),
    "jacfwd_random": lambda lib: lib.func.jacfwd(lambda x: x + lib.rand(2))(lib.ones(2)),
    "jacfwd_randomness_flag": lambda lib: lib.func.jacfwd(lambda x: x,
                                                          randomness="bad")(lib.ones(2)),
    "vmap_random": lambda lib: lib.vmap(lambda x: x + lib.rand(()))(lib.ones(2)),
    "vmap_in_dim_range": lambda lib: lib.vmap(lambda x: x, in_dims=1)(lib.ones(2)),
    "vmap_sizes": lambda lib: lib.vmap(lambda x, y: x + y)(lib.ones(2), lib.ones(3)),
    "vmap_non_tensor_input": lambda lib: lib.vmap(lambda x: x)(3.0),
    "vmap_in_dims_structure": lambda lib: lib.vmap(lambda x: x, in_dims=(0, 0))(lib.ones(2)),
    "vmap_in_dims_type": lambda lib: lib.vmap(lambda x: x, in_dims=None)(lib.ones(2)),
    "vmap_nothing_mapped": lambda lib: lib.vmap(lambda x: x, in_dims=(None,))(lib.ones(2)),
    "vmap_non_tensor_output": lambda lib: lib.vmap(lambda x: 3)(lib.ones(2)),
    "vmap_out_dim_range": lambda lib: lib.vmap(lambda x: x, out_dims=2)(lib.ones(2)),
    "vmap_out_none_batched": lambda lib: lib.vmap(lambda x: x, out_dims=None)(lib.ones(2) *
                                                                               lib.arange(2)),
    "vmap_out_dims_structure": lambda lib: lib.vmap(lambda x: (x, x), out_dims=(0,))(
        lib.ones(2)),
    "vmap_no_inputs": lambda lib: lib.vmap(lambda: 1)(),
    "vmap_chunk_size": lambda lib: lib.vmap(lambda x: x, chunk_size=0)(lib.ones(2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    _same_error(ERRORS[name])
