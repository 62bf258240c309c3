"""timm: four architectures forward+backward from seeded weights, and features_only."""

import timm
import torch

from .._support import case, fill, grads, randn


def version():
    """The version of the library under test."""
    return timm.__version__


def _train_step(name, size, seed, **kwargs):
    # drop rates 0: dropout would draw from the RNG, which the comparison does not share
    model = timm.create_model(name, pretrained=False, num_classes=5, drop_rate=0.0,
                              drop_path_rate=0.0, **kwargs)
    fill(model, seed)
    model.train()
    x = randn(seed, 2, 3, size, size)
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor([1, 3]))
    loss.backward()
    out = {"logits": logits, "loss": loss,
           "num_params": sum(p.numel() for p in model.parameters())}
    named = [n for n, p in model.named_parameters() if p.dim() > 1]
    out.update(grads(model, named[0], named[len(named) // 2], named[-1]))
    model.eval()
    with torch.no_grad():
        out["eval_logits"] = model(x)
    return out


@case
def resnet18(ctx):
    """resnet18 in train mode (batch norm statistics), then eval. 64x64 inputs: at 32x32 the
    last stage's batch norm sees 2 values per channel, which turns float32 round-off into
    differences of 1e-2 between any two correct implementations."""
    return _train_step("resnet18", 64, 1)


@case
def vit_tiny(ctx):
    """vit_tiny_patch16_224 at a 32x32 input (4 patches) with a short depth."""
    return _train_step("vit_tiny_patch16_224", 32, 2, img_size=32, depth=2)


@case
def efficientnet_b0(ctx):
    """efficientnet_b0: depthwise convs, squeeze-excite, SiLU (64x64, as resnet18)."""
    return _train_step("efficientnet_b0", 64, 3)


@case
def convnext_atto(ctx):
    """convnext_atto: 7x7 depthwise convs, LayerNorm2d, layer scale."""
    return _train_step("convnext_atto", 32, 4)


@case
def features_only(ctx):
    """features_only=True: the feature pyramid and its channel/reduction info."""
    model = timm.create_model("resnet18", pretrained=False, features_only=True,
                              out_indices=(1, 2, 3))
    fill(model, 5)
    model.eval()
    with torch.no_grad():
        feats = model(randn(5, 1, 3, 32, 32))
    out = {f"feature{i}": f for i, f in enumerate(feats)}
    out["channels"] = model.feature_info.channels()
    out["reduction"] = model.feature_info.reduction()
    return out
