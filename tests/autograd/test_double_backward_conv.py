"""Double backward through convolutions (gradient penalties on CNNs) against torch."""

import itertools

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

CASES = list(itertools.product([False, True], [1, 2], [0, 1], [1, 2], [1, 2]))


def _penalty_grads(L, x, w, transposed, stride, pad, dil, groups, op=0):
    xi = L.from_numpy(x.copy()).requires_grad_()
    wi = L.from_numpy(w.copy()).requires_grad_()
    F = L.nn.functional
    if transposed:
        y = F.conv_transpose2d(xi, wi, stride=stride, padding=pad, dilation=dil, groups=groups,
                               output_padding=op)
    else:
        y = F.conv2d(xi, wi, stride=stride, padding=pad, dilation=dil, groups=groups)
    gx, gw = L.autograd.grad((y * y).sum(), (xi, wi), create_graph=True)
    penalty = (gx ** 2).sum() + (gw ** 3).sum()
    hx, hw = L.autograd.grad(penalty, (xi, wi))
    return [t.detach().numpy() for t in (gx, gw, hx, hw)]


@pytest.mark.parametrize("transposed,stride,pad,dil,groups", CASES)
def test_conv2d_gradient_penalty_matches_torch(transposed, stride, pad, dil, groups):
    rng = np.random.default_rng(0)
    c = 2 * groups
    x = rng.standard_normal((2, c, 6, 5))
    shape = (c, c // groups, 3, 2)
    w = rng.standard_normal(shape)
    op = min(1 if stride > 1 else 0, max(stride, dil) - 1) if transposed else 0
    ours = _penalty_grads(glasstorch, x, w, transposed, stride, pad, dil, groups, op)
    theirs = _penalty_grads(torch, x, w, transposed, stride, pad, dil, groups, op)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-8)


def test_gradgradcheck_conv1d_same_padding_and_conv3d():
    x = glasstorch.randn(1, 2, 7, dtype=glasstorch.float64, requires_grad=True)
    w = glasstorch.randn(3, 2, 4, dtype=glasstorch.float64, requires_grad=True)
    F = glasstorch.nn.functional
    assert glasstorch.autograd.gradgradcheck(lambda a, b: F.conv1d(a, b, padding="same"), (x, w))
    x3 = glasstorch.randn(1, 2, 3, 4, 3, dtype=glasstorch.float64, requires_grad=True)
    w3 = glasstorch.randn(2, 1, 2, 2, 2, dtype=glasstorch.float64, requires_grad=True)
    assert glasstorch.autograd.gradgradcheck(
        lambda a, b: F.conv3d(a, b, stride=(1, 2, 1), groups=2), (x3, w3))


@pytest.mark.parametrize("k,s,p,ceil,cip,div", [(2, 2, 0, False, True, None),
                                                (3, 2, 1, True, False, None),
                                                (3, 1, 1, False, True, 3),
                                                (2, 1, 1, True, True, None)])
def test_avg_pool_double_backward_matches_torch(k, s, p, ceil, cip, div):
    x = np.random.default_rng(0).standard_normal((2, 2, 7, 6))
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        y = L.nn.functional.avg_pool2d(xi, k, s, p, ceil_mode=ceil, count_include_pad=cip,
                                       divisor_override=div)
        gx, = L.autograd.grad((y ** 3).sum(), xi, create_graph=True)
        h, = L.autograd.grad((gx ** 2).sum(), xi)
        outs.append((gx.detach().numpy(), h.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def test_avg_pool_gradgradcheck_1d_3d():
    F = glasstorch.nn.functional
    x1 = glasstorch.randn(2, 3, 8, dtype=glasstorch.float64, requires_grad=True)
    assert glasstorch.autograd.gradgradcheck(lambda a: F.avg_pool1d(a, 3, 2, 1), (x1,))
    x3 = glasstorch.randn(1, 2, 4, 4, 4, dtype=glasstorch.float64, requires_grad=True)
    assert glasstorch.autograd.gradgradcheck(lambda a: F.avg_pool3d(a, 2), (x3,))


def test_unfold_double_backward_matches_torch():
    x = np.random.default_rng(0).standard_normal((3, 7, 4))
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        y = xi.transpose(0, 1).unfold(0, 3, 2)
        g, = L.autograd.grad((y ** 3).sum(), xi, create_graph=True)
        h, = L.autograd.grad((g ** 2).sum(), xi)
        outs.append((g.detach().numpy(), h.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def test_as_strided_and_rebased_view_double_backward_match_torch():
    x = np.random.default_rng(0).standard_normal((4, 5))
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        y = xi.t().as_strided((3, 3), (2, 1), 1)  # overlapping reads
        g, = L.autograd.grad((y ** 3).sum(), xi, create_graph=True)
        h, = L.autograd.grad((g ** 2).sum(), xi)
        a = xi * 1
        v = a[1:, :3]
        v.mul_(2)  # v's history becomes AsStridedBackward0 over a CopySlices base
        g2, = L.autograd.grad((v ** 3).sum(), xi, create_graph=True)
        h2, = L.autograd.grad((g2 ** 2).sum(), xi)
        outs.append([t.detach().numpy() for t in (g, h, g2, h2)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def test_numpy_level_backwards_refuse_a_second_derivative_instead_of_zeros():
    x = glasstorch.randn(1, 1, 4, 4, requires_grad=True)
    grid = glasstorch.rand(1, 3, 3, 2) * 2 - 1
    y = glasstorch.nn.functional.grid_sample(x, grid, align_corners=False).sum()
    gx, = glasstorch.autograd.grad(y, x, create_graph=True)
    with pytest.raises(RuntimeError, match="GridSampler2DBackward0"):
        glasstorch.autograd.grad((gx ** 2).sum(), x)
