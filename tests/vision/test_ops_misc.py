"""glasstorch.vision.ops.misc (torchvision.ops.misc): layouts recorded from torchvision 0.28,
numbers against the same computation written with real torch layers."""
import warnings

import numpy as np
import pytest

import glasstorch
from glasstorch import nn
from glasstorch.vision import ops
from glasstorch.vision.ops import misc

torch = pytest.importorskip("torch")

# repr(...) of torchvision 0.28's torchvision.ops.misc for the same constructor calls, by line
_BN = "eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
_LN = "eps=1e-05, elementwise_affine=True, bias=True)"
TV_REPRS = {key: "\n".join(lines) for key, lines in {
    "conv2d": ["Conv2dNormActivation(",
               "  (0): Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 2), padding=(2, 4), "
               "dilation=(2, 2), bias=False)",
               "  (1): BatchNorm2d(8, " + _BN, "  (2): ReLU(inplace=True)", ")"],
    "conv2d_plain": ["Conv2dNormActivation(",
                     "  (0): Conv2d(4, 8, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2), "
                     "groups=2)",
                     "  (1): Hardswish()", ")"],
    "conv3d": ["Conv3dNormActivation(",
               "  (0): Conv3d(2, 4, kernel_size=(1, 3, 3), stride=(1, 1, 1), padding=(0, 1, 1), "
               "bias=False)",
               "  (1): BatchNorm3d(4, " + _BN, "  (2): ReLU(inplace=True)", ")"],
    "se": ["SqueezeExcitation(", "  (avgpool): AdaptiveAvgPool2d(output_size=1)",
           "  (fc1): Conv2d(8, 2, kernel_size=(1, 1), stride=(1, 1))",
           "  (fc2): Conv2d(2, 8, kernel_size=(1, 1), stride=(1, 1))",
           "  (activation): ReLU()", "  (scale_activation): Sigmoid()", ")"],
    "mlp": ["MLP(", "  (0): Linear(in_features=6, out_features=10, bias=False)",
            "  (1): LayerNorm((10,), " + _LN, "  (2): ReLU()",
            "  (3): Dropout(p=0.1, inplace=False)",
            "  (4): Linear(in_features=10, out_features=12, bias=False)",
            "  (5): LayerNorm((12,), " + _LN, "  (6): ReLU()",
            "  (7): Dropout(p=0.1, inplace=False)",
            "  (8): Linear(in_features=12, out_features=4, bias=False)",
            "  (9): Dropout(p=0.1, inplace=False)", ")"],
    "frozen": ["FrozenBatchNorm2d(5, eps=0.001)"],
    "permute": ["Permute()"],
}.items()}


def _build():
    return {
        "conv2d": misc.Conv2dNormActivation(3, 8, kernel_size=(3, 5), dilation=2, stride=2),
        "conv2d_plain": misc.Conv2dNormActivation(4, 8, kernel_size=5, groups=2, norm_layer=None,
                                                  activation_layer=nn.Hardswish),
        "conv3d": misc.Conv3dNormActivation(2, 4, kernel_size=(1, 3, 3)),
        "se": misc.SqueezeExcitation(8, 2),
        "mlp": misc.MLP(6, [10, 12, 4], norm_layer=nn.LayerNorm, inplace=False, bias=False,
                        dropout=0.1),
        "frozen": misc.FrozenBatchNorm2d(5, eps=1e-3),
        "permute": misc.Permute([0, 2, 3, 1]),
    }


@pytest.mark.parametrize("key", sorted(TV_REPRS))
def test_layout_matches_torchvision(key):
    assert repr(_build()[key]) == TV_REPRS[key]


def test_state_dict_keys_and_defaults():
    built = _build()
    assert list(built["conv2d"].state_dict()) == [
        "0.weight", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked"]
    assert list(built["conv2d_plain"].state_dict()) == ["0.weight", "0.bias"]
    assert list(built["mlp"].state_dict()) == [
        "0.weight", "1.weight", "1.bias", "4.weight", "5.weight", "5.bias", "8.weight"]
    assert list(built["frozen"].state_dict()) == ["weight", "bias", "running_mean", "running_var"]
    assert list(built["frozen"].parameters()) == []
    assert built["conv2d"].out_channels == 8
    # padding keeps odd kernels "same"; a norm layer turns the conv bias off unless asked
    c = misc.Conv2dNormActivation(3, 4, kernel_size=7, dilation=3, bias=True, inplace=None)
    assert c[0].padding == (9, 9) and c[0].bias is not None and not c[2].inplace
    assert misc.Conv2dNormActivation(3, 4, padding="same")[0].padding == "same"


def test_conv_norm_activation_base_warns():
    with pytest.warns(UserWarning, match="Conv2dNormActivation"):
        misc.ConvNormActivation(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        misc.Conv2dNormActivation(3, 4)
        misc.Conv3dNormActivation(3, 4)


def _copy_into_torch(g_module, t_module):
    t_module.load_state_dict({k: torch.tensor(v.numpy()) for k, v in
                              g_module.state_dict().items()})


def _compare(g_module, t_module, shape, seed=0, rtol=1e-5, atol=1e-6):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    gx, tx = glasstorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    go, to = g_module(gx), t_module(tx)
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    w = np.random.RandomState(seed + 1).randn(*to.shape).astype(np.float32)
    (go * glasstorch.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    return go, to


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_conv2d_norm_activation_numbers(mode):
    g = misc.Conv2dNormActivation(3, 8, kernel_size=(3, 5), dilation=2, stride=2)
    t = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, (3, 5), 2, (2, 4), dilation=2, bias=False),
        torch.nn.BatchNorm2d(8), torch.nn.ReLU(inplace=True))
    _copy_into_torch(g, t)
    getattr(g, mode)(), getattr(t, mode)()
    go, to = _compare(g, t, (2, 3, 9, 11))
    assert go.grad_fn.name() == to.grad_fn.name() == "ReluBackward0"
    np.testing.assert_allclose(g[1].running_mean.numpy(), t[1].running_mean.numpy(), rtol=1e-5,
                               atol=1e-7)


def test_conv3d_norm_activation_numbers():
    g = misc.Conv3dNormActivation(2, 4, kernel_size=(1, 3, 3), stride=(1, 2, 2))
    t = torch.nn.Sequential(torch.nn.Conv3d(2, 4, (1, 3, 3), (1, 2, 2), (0, 1, 1), bias=False),
                            torch.nn.BatchNorm3d(4), torch.nn.ReLU())
    _copy_into_torch(g, t)
    _compare(g, t, (2, 2, 3, 7, 7))


def test_squeeze_excitation_numbers():
    g = misc.SqueezeExcitation(8, 3, activation=nn.SiLU, scale_activation=nn.Hardsigmoid)

    class TorchSE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Conv2d(8, 3, 1)
            self.fc2 = torch.nn.Conv2d(3, 8, 1)

        def forward(self, x):
            s = x.mean((2, 3), keepdim=True)
            return torch.nn.functional.hardsigmoid(self.fc2(torch.nn.functional.silu(
                self.fc1(s)))) * x

    t = TorchSE()
    _copy_into_torch(g, t)
    go, to = _compare(g, t, (2, 8, 5, 6))
    assert go.grad_fn.name() == to.grad_fn.name() == "MulBackward0"


def test_mlp_numbers():
    g = misc.MLP(6, [10, 12, 4], norm_layer=nn.LayerNorm, activation_layer=nn.GELU, bias=True)
    t = torch.nn.Sequential(
        torch.nn.Linear(6, 10), torch.nn.LayerNorm(10), torch.nn.GELU(), torch.nn.Dropout(0.0),
        torch.nn.Linear(10, 12), torch.nn.LayerNorm(12), torch.nn.GELU(), torch.nn.Dropout(0.0),
        torch.nn.Linear(12, 4), torch.nn.Dropout(0.0))
    _copy_into_torch(g, t)
    g.eval(), t.eval()
    _compare(g, t, (5, 6))


def test_frozen_batchnorm_matches_eval_batch_norm():
    rng = np.random.RandomState(3)
    stats = {k: (rng.rand(5) + 0.5).astype(np.float32)
             for k in ("weight", "bias", "running_mean", "running_var")}
    g = misc.FrozenBatchNorm2d(5, eps=1e-3)
    g.load_state_dict({k: glasstorch.tensor(v) for k, v in stats.items()})

    class TorchFrozen(torch.nn.Module):
        def forward(self, x):
            ts = {k: torch.tensor(v) for k, v in stats.items()}
            return torch.nn.functional.batch_norm(x, ts["running_mean"], ts["running_var"],
                                                  ts["weight"], ts["bias"], False, 0.0, 1e-3)

    g.train()  # frozen: train mode changes nothing
    before = g.running_mean.numpy().copy()
    _compare(g, TorchFrozen(), (2, 5, 4, 3), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(g.running_mean.numpy(), before)


def test_frozen_batchnorm_loads_a_batchnorm_checkpoint():
    bn = nn.BatchNorm2d(4)
    bn.running_mean.fill_(0.5)
    frozen = misc.FrozenBatchNorm2d(4)
    result = frozen.load_state_dict(bn.state_dict())  # num_batches_tracked is dropped
    assert not result.missing_keys and not result.unexpected_keys
    np.testing.assert_array_equal(frozen.running_mean.numpy(), np.full(4, 0.5, np.float32))
    # the caller's dict is not changed by the drop
    sd = bn.state_dict()
    frozen.load_state_dict(sd)
    assert "num_batches_tracked" in sd


def test_permute_is_a_view():
    x = glasstorch.arange(24.0).reshape(2, 3, 4)
    y = misc.Permute([2, 0, 1])(x)
    tx = torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
    assert tuple(y.shape) == tuple(tx.shape) and y.stride() == tx.stride()
    assert y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(y.numpy(), tx.numpy())


def test_exported_from_ops_and_shared_with_models():
    for name in misc.__all__:
        if name != "ConvNormActivation":
            assert getattr(ops, name) is getattr(misc, name)
    from glasstorch.vision import models
    m = models.mobilenet_v2(num_classes=3)
    assert type(m.features[0]) is misc.Conv2dNormActivation
    vit = models.VisionTransformer(image_size=16, patch_size=8, num_layers=1, num_heads=2,
                                   hidden_dim=8, mlp_dim=16, num_classes=2)
    assert isinstance(vit.encoder.layers[0].mlp, misc.MLP)
