"""F.grid_sample against torch: every mode, padding mode and align_corners, forward and
gradients w.r.t. input and grid."""

import itertools

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

CASES = list(itertools.product(["bilinear", "nearest", "bicubic"],
                               ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_grid_sample_2d(mode, padding, align):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float64)
    grid = rng.uniform(-1.3, 1.3, (2, 4, 7, 2))  # some points fall outside
    gw = rng.standard_normal((2, 3, 4, 7))
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        gi = L.from_numpy(grid.copy()).requires_grad_()
        y = L.nn.functional.grid_sample(xi, gi, mode=mode, padding_mode=padding,
                                        align_corners=align)
        (y * L.from_numpy(gw)).sum().backward()
        outs.append((y.detach().numpy(), xi.grad.numpy(), gi.grad.numpy(),
                     type(y.grad_fn).__name__))
    (y_g, dx_g, dg_g, name_g), (y_t, dx_t, dg_t, name_t) = outs
    np.testing.assert_allclose(y_g, y_t, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dx_g, dx_t, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dg_g, dg_t, rtol=1e-6, atol=1e-8)
    assert name_g == name_t


@pytest.mark.parametrize("mode,padding,align", [c for c in CASES if c[0] != "bicubic"])
def test_grid_sample_3d_and_float32(mode, padding, align):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (1, 2, 3, 4, 3)).astype(np.float32)
    y_g = glasstorch.nn.functional.grid_sample(glasstorch.from_numpy(x),
                                               glasstorch.from_numpy(grid), mode=mode,
                                               padding_mode=padding, align_corners=align)
    y_t = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid),
                                          mode=mode, padding_mode=padding, align_corners=align)
    assert y_g.dtype is glasstorch.float32
    np.testing.assert_allclose(y_g.numpy(), y_t.numpy(), rtol=1e-5, atol=1e-5)


def test_grid_sample_with_affine_grid_identity_reproduces_input():
    x = glasstorch.randn(1, 2, 4, 4)
    theta = glasstorch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = glasstorch.nn.functional.affine_grid(theta, (1, 2, 4, 4), align_corners=False)
    y = glasstorch.nn.functional.grid_sample(x, grid, align_corners=False)
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-6)


@pytest.mark.parametrize("dilation,padding", [(2, 3), (1, 2), (3, 4)])
def test_stride1_conv_with_padding_beyond_the_dilated_kernel(dilation, padding):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 7, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    outs = []
    for L in (glasstorch, torch):
        xi = L.from_numpy(x.copy()).requires_grad_()
        wi = L.from_numpy(w.copy()).requires_grad_()
        y = L.nn.functional.conv2d(xi, wi, padding=padding, dilation=dilation)
        y.sum().backward()
        outs.append((y.detach().numpy(), xi.grad.numpy(), wi.grad.numpy()))
    for g, t in zip(*outs):
        np.testing.assert_allclose(g, t, rtol=1e-7, atol=1e-9)


def test_max_pool_nan_windows_index_like_torch():
    x = np.array([[[[np.nan, 1.0, np.nan, 2.0], [0.5, np.nan, 3.0, 1.0]]]])
    g = glasstorch.nn.functional.max_pool2d(glasstorch.from_numpy(x), 2, return_indices=True)
    t = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    np.testing.assert_array_equal(g[1].numpy(), t[1].numpy())
    np.testing.assert_array_equal(np.isnan(g[0].numpy()), np.isnan(t[0].numpy()))
