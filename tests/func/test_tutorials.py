"""The torch.func tutorials' patterns run on the same weights in glasstorch and torch:
per-sample gradients, model ensembling, Jacobians/Hessians/hvp, the neural tangent kernel."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _model(lib, seed=0):
    """A small MLP whose weights come from one NumPy generator (the same in both libs)."""
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=p.dtype))
    return net.double()


def _data(seed=1, n=4):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, 5)), rng.integers(0, 3, n)


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-10)


def _per_sample_grads(lib):
    model = _model(lib)
    x, y = _data()
    data, targets = lib.tensor(x), lib.tensor(y)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        predictions = lib.func.functional_call(model, (params, buffers), (batch,))
        return lib.nn.functional.cross_entropy(predictions, target.unsqueeze(0))

    ft_compute_sample_grad = lib.func.vmap(lib.func.grad(compute_loss),
                                           in_dims=(None, None, 0, 0))
    return ft_compute_sample_grad(params, buffers, data, targets), model, data, targets


def test_per_sample_gradients():
    ours, theirs = _per_sample_grads(glasstorch)[0], _per_sample_grads(torch)[0]
    assert list(ours) == list(theirs)
    for k in theirs:
        _close(ours[k], theirs[k])


def test_per_sample_gradients_equal_the_loop():
    grads, model, data, targets = _per_sample_grads(glasstorch)
    for i in range(data.shape[0]):
        model.zero_grad()
        loss = glasstorch.nn.functional.cross_entropy(model(data[i:i + 1]), targets[i:i + 1])
        loss.backward()
        for k, p in model.named_parameters():
            _close(grads[k][i], p.grad)


def _ensemble(lib):
    import copy
    models = [_model(lib, seed) for seed in range(3)]
    x, _ = _data(n=6)
    minibatch = lib.tensor(x)
    params, buffers = lib.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return lib.func.functional_call(base, (params, buffers), (x,))

    same_batch = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    per_model = lib.vmap(fmodel)(params, buffers, minibatch.view(3, 2, 5))
    return same_batch, per_model


def test_model_ensembling():
    for ours, theirs in zip(_ensemble(glasstorch), _ensemble(torch)):
        assert ours.requires_grad == theirs.requires_grad
        _close(ours, theirs)


def _jacobians(lib):
    rng = np.random.default_rng(3)
    weight = lib.tensor(rng.uniform(-1, 1, (4, 4)))
    bias = lib.tensor(rng.uniform(-1, 1, 4))
    x = lib.tensor(rng.uniform(-1, 1, 4))
    v = lib.tensor(rng.uniform(-1, 1, 4))

    def predict(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()

    def scalar(x):
        return predict(weight, bias, x).sin().sum()

    def hvp(f, primals, tangents):
        return lib.func.jvp(lib.func.grad(f), primals, tangents)[1]

    batch = lib.tensor(rng.uniform(-1, 1, (3, 4)))
    return [
        lib.func.jacrev(predict, argnums=2)(weight, bias, x),
        lib.func.jacfwd(predict, argnums=2)(weight, bias, x),
        *lib.func.jacrev(predict, argnums=(0, 1))(weight, bias, x),
        lib.vmap(lib.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias,
                                                                              batch),
        lib.func.hessian(scalar)(x),
        lib.func.jacfwd(lib.func.jacfwd(scalar))(x),
        lib.func.jacrev(lib.func.jacrev(scalar))(x),
        hvp(scalar, (x,), (v,)),
    ]


def test_jacobians_hessians_hvp():
    for ours, theirs in zip(_jacobians(glasstorch), _jacobians(torch), strict=True):
        assert tuple(ours.shape) == tuple(theirs.shape)
        _close(ours, theirs)


def _ntk(lib):
    model = _model(lib)
    x1 = lib.tensor(_data(seed=4, n=3)[0])
    x2 = lib.tensor(_data(seed=5, n=2)[0])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def fnet_single(params, x):
        return lib.func.functional_call(model, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_jacobian_contraction(x1, x2):
        jac1 = lib.vmap(lib.func.jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = lib.vmap(lib.func.jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = [j.flatten(2) for j in jac2.values()]
        result = lib.stack([lib.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)])
        return result.sum(0)

    def empirical_ntk_ntk_vps(x1, x2):
        def get_ntk(x1, x2):
            def func_x1(params):
                return fnet_single(params, x1)

            def func_x2(params):
                return fnet_single(params, x2)

            output, vjp_fn = lib.func.vjp(func_x1, params)

            def get_ntk_slice(vec):
                vjps = vjp_fn(vec)
                _, jvps = lib.func.jvp(func_x2, (params,), vjps)
                return jvps

            basis = lib.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return lib.vmap(get_ntk_slice)(basis)

        return lib.vmap(lib.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    return [empirical_ntk_jacobian_contraction(x1, x2), empirical_ntk_ntk_vps(x1, x2)]


def test_neural_tangent_kernel():
    ours, theirs = _ntk(glasstorch), _ntk(torch)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape) == (3, 2, 3, 3)
        _close(a, b)
    _close(ours[0], ours[1])
