"""autograd.Function under torch.func transforms: torch's refusals, and results that match
torch's once the Function declares the support a transform needs."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _functions(lib):
    class CtxForward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

    class Separate(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

    class Full(Separate):
        generate_vmap_rule = True

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.x = inputs[0]  # saved tensors are for backward only; jvp reads this

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.x.cos()

    return CtxForward, Separate, Full


def _x(lib):
    return lib.tensor(np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]]))


CALLS = {
    "grad": lambda lib, F: lib.func.grad(lambda x: F.apply(x).sum())(_x(lib)),
    "vmap": lambda lib, F: lib.vmap(F.apply)(_x(lib)),
    "jvp": lambda lib, F: lib.func.jvp(F.apply, (_x(lib),), (lib.ones_like(_x(lib)),)),
    "vmap_grad": lambda lib, F: lib.vmap(lib.func.grad(lambda r: F.apply(r).sum()))(_x(lib)),
}


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["ctx_forward", "setup_context", "full"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_function_under_transforms(call, kind):
    outcomes = []
    for lib in (glasstorch, torch):
        F = _functions(lib)[kind]
        try:
            outcomes.append(CALLS[call](lib, F))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            outcomes.append(e)
    ours, theirs = outcomes
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs) and str(ours) == str(theirs)
        return
    flat_o = glasstorch.utils._pytree.tree_leaves(ours)
    flat_t = torch.utils._pytree.tree_leaves(theirs)
    assert len(flat_o) == len(flat_t)
    for a, b in zip(flat_o, flat_t):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-12)
