"""glasstorch.vision.models against torchvision: state_dict layouts, outputs, loading, heads.

Reference data was recorded once from torchvision 0.29.1 by fixtures/record_models.py;
synthetic weights (fixtures/synth_weights.py) stand in for checkpoints too big to ship.
"""

import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import glasstorch as torch
import glasstorch.nn as nn
from glasstorch.vision import models
from glasstorch.vision.models.vision_transformer import ConvStemConfig, VisionTransformer
from glasstorch.vision.transforms import InterpolationMode
from glasstorch.vision.transforms._presets import ImageClassification

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
sys.path.insert(0, FIX)
from synth_weights import synth_array, synth_input  # noqa: E402

with open(os.path.join(FIX, "model_keys.json")) as _f:
    KEYS = json.load(_f)
OUTS = np.load(os.path.join(FIX, "model_outputs.npz"))

TINY_VIT = dict(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=32,
                mlp_dim=64, num_classes=10)
TINY_VIT_REPR = dict(TINY_VIT, representation_size=16)
TINY_VIT_STEM = dict(TINY_VIT, patch_size=4,
                     conv_stem_configs=[ConvStemConfig(8, 3, 2), ConvStemConfig(16, 3, 2)])

BUILDS = {
    "resnet18": lambda: models.resnet18(),
    "resnet34": lambda: models.resnet34(),
    "resnet50": lambda: models.resnet50(),
    "vgg11": lambda: models.vgg11(init_weights=False),
    "vgg11_bn": lambda: models.vgg11_bn(init_weights=False),
    "vgg13": lambda: models.vgg13(init_weights=False),
    "vgg13_bn": lambda: models.vgg13_bn(init_weights=False),
    "vgg16": lambda: models.vgg16(init_weights=False),
    "vgg16_bn": lambda: models.vgg16_bn(init_weights=False),
    "vgg19": lambda: models.vgg19(init_weights=False),
    "vgg19_bn": lambda: models.vgg19_bn(init_weights=False),
    "mobilenet_v2": lambda: models.mobilenet_v2(),
    "vit_b_16": lambda: models.vit_b_16(),
    "resnet18_num_classes_7": lambda: models.resnet18(num_classes=7),
    "mobilenet_v2_width_0.5": lambda: models.mobilenet_v2(width_mult=0.5),
    "tiny_vit": lambda: VisionTransformer(**TINY_VIT),
    "tiny_vit_repr": lambda: VisionTransformer(**TINY_VIT_REPR),
    "tiny_vit_stem": lambda: VisionTransformer(**TINY_VIT_STEM),
}

NUM_PARAMS = {"resnet18": 11689512, "resnet34": 21797672, "resnet50": 25557032,
              "vgg11": 132863336, "vgg11_bn": 132868840, "vgg13": 133047848,
              "vgg13_bn": 133053736, "vgg16": 138357544, "vgg16_bn": 138365992,
              "vgg19": 143667240, "vgg19_bn": 143678248, "mobilenet_v2": 3504872,
              "vit_b_16": 86567656}


def describe(model):
    return [[k, list(v.shape), str(v.dtype).replace("torch.", "")]
            for k, v in model.state_dict().items()]


def fill(model):
    sd = {k: torch.from_numpy(synth_array(k, v.shape, str(v.dtype).replace("torch.", "")))
          for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    return model


@pytest.mark.parametrize("name", list(BUILDS))
def test_state_dict_layout_matches_torchvision(name, monkeypatch):
    if name in NUM_PARAMS and name not in ("resnet18", "mobilenet_v2"):
        # the layout does not depend on values: skip drawing random init for the big models
        for fn in ("kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "normal_",
                   "trunc_normal_", "uniform_"):
            monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = BUILDS[name]()
    assert describe(model) == KEYS[name]
    if name in NUM_PARAMS:
        assert sum(p.numel() for p in model.parameters()) == NUM_PARAMS[name]


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "vgg11_bn", "tiny_vit_stem"])
def test_module_tree_prints_like_torchvision(name, monkeypatch):
    with open(os.path.join(FIX, "model_reprs.json")) as f:
        expected = json.load(f)[name]
    if name != "tiny_vit_stem":
        for fn in ("kaiming_uniform_", "kaiming_normal_", "normal_", "uniform_"):
            monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = VisionTransformer(**TINY_VIT_STEM) if name == "tiny_vit_stem" else \
        getattr(models, name)()
    assert str(model) == expected


@pytest.mark.parametrize("name", ["resnet18", "resnet50", "mobilenet_v2"])
def test_eval_outputs_match_torchvision(name):
    model = fill(getattr(models, name)()).eval()
    with torch.no_grad():
        out = model(torch.from_numpy(synth_input((2, 3, 32, 32))))
    assert out.shape == (2, 1000) and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), OUTS[name + "_eval"], rtol=1e-3, atol=1e-3)


def test_resnet18_train_mode_matches_torchvision():
    model = fill(models.resnet18()).train()
    with torch.no_grad():
        out = model(torch.from_numpy(synth_input((2, 3, 64, 64))))
    np.testing.assert_allclose(out.numpy(), OUTS["resnet18_train"], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(model.bn1.running_mean.numpy(),
                               OUTS["resnet18_train_running_mean"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.layer4[1].bn2.running_var.numpy(),
                               OUTS["resnet18_train_running_var"], rtol=1e-4, atol=1e-5)
    assert int(model.bn1.num_batches_tracked) == 4


@pytest.mark.parametrize("label,cfg", [("tiny_vit", TINY_VIT), ("tiny_vit_repr", TINY_VIT_REPR),
                                       ("tiny_vit_stem", TINY_VIT_STEM)])
def test_vit_outputs_match_torchvision(label, cfg):
    model = fill(VisionTransformer(**cfg)).eval()
    with torch.no_grad():
        out = model(torch.from_numpy(synth_input((2, 3, 32, 32))))
    np.testing.assert_allclose(out.numpy(), OUTS[label + "_eval"], rtol=1e-4, atol=1e-5)


def test_torchvision_checkpoint_file_loads_with_legacy_mlp_names():
    # saved by real torch with the mlp.linear_1 / linear_2 names of released ViT checkpoints
    sd = torch.load(os.path.join(FIX, "tiny_vit_legacy.pth"))
    assert any("mlp.linear_1" in k for k in sd)
    model = VisionTransformer(**TINY_VIT)
    result = model.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    with torch.no_grad():
        out = model.eval()(torch.from_numpy(synth_input((2, 3, 32, 32))))
    ref = np.load(os.path.join(FIX, "tiny_vit_legacy_out.npz"))["tiny_vit_legacy_eval"]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_weights_local_path_and_dict(tmp_path):
    src = fill(models.mobilenet_v2(width_mult=0.5))
    path = tmp_path / "mnv2.pth"
    torch.save(src.state_dict(), str(path))
    for weights in (str(path), path, src.state_dict()):
        model = models.mobilenet_v2(weights=weights, width_mult=0.5)
        for (k, a), b in zip(src.state_dict().items(), model.state_dict().values()):
            assert torch.equal(a, b), k
    with pytest.raises(RuntimeError, match="size mismatch"):
        models.mobilenet_v2(weights=str(path))
    with pytest.raises(FileNotFoundError):
        models.resnet18(weights=str(tmp_path / "missing.pth"))


@pytest.mark.parametrize("builder,enum", [
    (models.resnet18, models.ResNet18_Weights), (models.resnet34, models.ResNet34_Weights),
    (models.resnet50, models.ResNet50_Weights), (models.vgg11, models.VGG11_Weights),
    (models.vgg11_bn, models.VGG11_BN_Weights), (models.vgg13, models.VGG13_Weights),
    (models.vgg13_bn, models.VGG13_BN_Weights), (models.vgg16, models.VGG16_Weights),
    (models.vgg16_bn, models.VGG16_BN_Weights), (models.vgg19, models.VGG19_Weights),
    (models.vgg19_bn, models.VGG19_BN_Weights), (models.mobilenet_v2, models.MobileNet_V2_Weights),
    (models.vit_b_16, models.ViT_B_16_Weights)])
def test_named_weights_say_download_is_unavailable(builder, enum):
    for weights in (enum.DEFAULT, "IMAGENET1K_V1", f"{enum.__name__}.IMAGENET1K_V1"):
        with pytest.raises(RuntimeError, match="not available.*download.pytorch.org"):
            builder(weights=weights)
    assert enum.DEFAULT.meta["num_params"] == NUM_PARAMS[builder.__name__] or \
        builder is models.vit_b_16


def test_weights_argument_errors():
    with pytest.raises(KeyError):
        models.resnet18(weights="IMAGENET1K_V9")
    with pytest.raises(TypeError, match="ResNet18_Weights"):
        models.resnet18(weights=models.ViT_B_16_Weights.DEFAULT)
    with pytest.raises(ValueError, match="num_classes"):
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT, num_classes=10)
    with pytest.warns(UserWarning, match="pretrained"):
        assert isinstance(models.resnet18(pretrained=False), models.ResNet)
    assert repr(models.ResNet50_Weights.DEFAULT) == "ResNet50_Weights.IMAGENET1K_V2"
    assert models.get_weight("ResNet50_Weights.IMAGENET1K_V1") is \
        models.ResNet50_Weights.IMAGENET1K_V1


def test_registry():
    assert models.list_models() == ["mobilenet_v2", "resnet18", "resnet34", "resnet50", "vgg11",
                                    "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn",
                                    "vgg19", "vgg19_bn", "vit_b_16"]
    assert models.list_models(include="resnet*", exclude="resnet34") == ["resnet18", "resnet50"]
    assert isinstance(models.get_model("resnet18", num_classes=3).fc, nn.Linear)
    with pytest.raises(ValueError):
        models.get_model("resnet1000")


def test_input_checks_and_config_errors():
    vit = VisionTransformer(**TINY_VIT)
    with pytest.raises(AssertionError, match="Wrong image height"):
        vit(torch.zeros(1, 3, 16, 32))
    with pytest.raises(AssertionError, match="indivisible"):
        VisionTransformer(30, 8, 1, 1, 8, 8)
    with pytest.raises(ValueError, match="BasicBlock only supports"):
        models.ResNet(models.BasicBlock, [1, 1, 1, 1], groups=2)
    with pytest.raises(NotImplementedError):
        models.ResNet(models.BasicBlock, [1, 1, 1, 2], replace_stride_with_dilation=[0, 0, 1])
    with pytest.raises(ValueError):
        models.MobileNetV2(inverted_residual_setting=[])


def test_zero_init_residual_makes_blocks_identity_like():
    model = models.ResNet(models.Bottleneck, [2, 1, 1, 1], zero_init_residual=True)
    assert all(float(b.bn3.weight.abs().sum()) == 0 for b in model.layer1)
    model = models.resnet18(zero_init_residual=True)
    assert float(model.layer2[1].bn2.weight.abs().sum()) == 0
    assert float(model.layer2[1].bn1.weight.abs().sum()) > 0


def test_replace_heads():
    r = models.resnet18()
    r.fc = nn.Linear(r.fc.in_features, 5)
    m = models.mobilenet_v2()
    m.classifier[-1] = nn.Linear(m.classifier[-1].in_features, 4)
    v = VisionTransformer(**TINY_VIT)
    v.heads.head = nn.Linear(v.heads.head.in_features, 3)
    with torch.no_grad():
        assert r.eval()(torch.randn(1, 3, 32, 32)).shape == (1, 5)
        assert m.eval()(torch.randn(1, 3, 32, 32)).shape == (1, 4)
        assert v.eval()(torch.randn(2, 3, 32, 32)).shape == (2, 3)
    assert "fc.weight" in r.state_dict() and r.state_dict()["fc.weight"].shape == (5, 512)


def test_finetune_resnet18_head():
    real_torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = models.resnet18()
    for p in model.parameters():
        p.requires_grad_(False)
    model.fc = nn.Linear(model.fc.in_features, 3)
    model.eval()  # frozen backbone: batch-norm statistics stay fixed
    x = torch.randn(6, 3, 64, 64)
    labels = [0, 1, 2, 0, 1, 2]
    y = torch.tensor(labels)
    # the same head trained by real torch on the backbone's features is the reference
    backbone = nn.Sequential(*list(model.children())[:-1])
    with torch.no_grad():
        feats = real_torch.tensor(torch.flatten(backbone(x), 1).numpy())
    w = real_torch.tensor(model.fc.weight.detach().numpy().copy(), requires_grad=True)
    b = real_torch.tensor(model.fc.bias.detach().numpy().copy(), requires_grad=True)
    ref_opt = real_torch.optim.SGD([w, b], lr=1e-3, momentum=0.9)
    opt = torch.optim.SGD(model.fc.parameters(), lr=1e-3, momentum=0.9)
    frozen = model.conv1.weight.clone()
    losses, ref_losses = [], []
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        ref_opt.zero_grad()
        ref = real_torch.nn.functional.cross_entropy(feats @ w.T + b, real_torch.tensor(labels))
        ref.backward()
        ref_opt.step()
        ref_losses.append(ref.item())
    assert model.conv1.weight.grad is None and torch.equal(model.conv1.weight, frozen)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4)
    np.testing.assert_allclose(model.fc.weight.detach().numpy(), w.detach().numpy(), rtol=1e-4,
                               atol=1e-6)
    assert losses[-1] < losses[0]


def test_no_warnings_on_plain_build():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        models.mobilenet_v2()


# ------------------------------------------------- weights entries: meta, categories, presets

with open(os.path.join(FIX, "weights_meta.json")) as _f:
    WEIGHTS_META = json.load(_f)
ENUM_NAMES = [k for k in WEIGHTS_META if not k.startswith("_")]
with open(os.path.join(FIX, "preset_cases.json")) as _f:
    PRESET_CASES = json.load(_f)
PRESET_OUTS = np.load(os.path.join(FIX, "preset_outputs.npz"))


def preset_kwargs(recorded):
    # JSON turned torchvision's tuples (mean, std) into lists
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in recorded.items()}
    if "interpolation" in kwargs:
        kwargs["interpolation"] = InterpolationMode(kwargs["interpolation"])
    return kwargs


@pytest.mark.parametrize("enum_name", ENUM_NAMES)
def test_weights_entries_match_torchvision(enum_name):
    enum = getattr(models, enum_name)
    recorded = WEIGHTS_META[enum_name]
    assert list(enum.__members__) == list(recorded["entries"])
    assert enum.DEFAULT is enum[recorded["DEFAULT"]]
    for name, expected in recorded["entries"].items():
        member = enum[name]
        assert member.url == expected["url"]
        assert member.meta["num_params"] == expected["num_params"]
        assert member.meta["min_size"] == tuple(expected["min_size"])
        categories = member.meta["categories"]
        assert (categories is None) == (expected["categories"] is None)
        preset = member.transforms
        assert preset.func is ImageClassification and not preset.args
        assert preset.keywords == preset_kwargs(expected["transforms"]["kwargs"])
        assert repr(preset()) == expected["transforms"]["repr"]


def test_imagenet_categories_are_torchvisions():
    categories = models.ResNet18_Weights.DEFAULT.meta["categories"]
    assert isinstance(categories, list) and len(categories) == 1000
    digest = hashlib.sha256("\n".join(categories).encode()).hexdigest()
    assert digest == WEIGHTS_META["_categories_sha256"]
    for index, name in WEIGHTS_META["_categories_sample"].items():
        assert categories[int(index)] == name
    # one list shared by every ImageNet-1K entry, as in torchvision
    assert models.VGG16_Weights.IMAGENET1K_V1.meta["categories"] is categories
    assert models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1.meta["categories"] is categories
    assert models.VGG16_Weights.IMAGENET1K_FEATURES.meta["categories"] is None
    from glasstorch.vision.models._meta import _IMAGENET_CATEGORIES
    assert _IMAGENET_CATEGORIES is categories


def test_categories_file_is_read_only_when_asked_for():
    script = (
        "from glasstorch.vision import models\n"
        "from glasstorch.vision.models import _meta\n"
        "models.resnet18(num_classes=3)\n"
        "w = models.ResNet50_Weights.DEFAULT\n"
        "w.url, w.transforms(), models.VGG16_Weights.IMAGENET1K_FEATURES.meta\n"
        "assert _meta.imagenet_categories.cache_info().misses == 0\n"
        "assert w.meta['categories'][0] == 'tench'\n"
        "assert _meta.imagenet_categories.cache_info().misses == 1\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", script], check=True, cwd=root)


def test_meta_is_a_dict_with_torchvisions_keys():
    meta = models.ResNet50_Weights.IMAGENET1K_V2.meta
    assert isinstance(meta, dict)
    assert set(meta) == {"min_size", "categories", "num_params"}
    # torchvision's documentation-only keys are not carried: a dict's KeyError, as for any key
    for key in ("_docs", "recipe", "_metrics", "num_classes"):
        with pytest.raises(KeyError):
            meta[key]
    assert meta.get("recipe") is None


def test_weights_fix_the_builder_arguments_like_torchvision():
    with pytest.raises(ValueError, match="num_classes"):
        models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1, num_classes=10)
    # the feature-extractor weights have no categories, so num_classes stays free
    with pytest.raises(RuntimeError, match="vgg16_features-amdegroot"):
        models.vgg16(weights="IMAGENET1K_FEATURES", num_classes=10)
    with pytest.raises(ValueError, match="image_size"):
        models.vit_b_16(weights=models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1, image_size=224)
    assert models.get_weight("VGG16_Weights.IMAGENET1K_FEATURES") is \
        models.VGG16_Weights.IMAGENET1K_FEATURES


def _preset_input(kind):
    img = PRESET_OUTS["img_u8"]
    if kind == "pil":
        from PIL import Image
        return Image.fromarray(img.transpose(1, 2, 0))
    if kind == "u8":
        return torch.from_numpy(img)
    if kind == "float":
        return torch.from_numpy(img).float() / 255
    return torch.from_numpy(PRESET_OUTS["batch_float"])


def _assert_close_in_pixel_levels(out, expected, preset, max_levels):
    # compare in 0..255 input units: normalization would scale a one-level rounding difference
    # of uint8 resizing by 1 / std (x255 for the Caffe-style VGG16 features preset)
    shape = (-1, 1, 1)
    mean, std = np.array(preset.mean).reshape(shape), np.array(preset.std).reshape(shape)
    levels = (out * std + mean) * 255
    expected_levels = (expected * std + mean) * 255
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(levels, expected_levels, rtol=0, atol=max_levels)


@pytest.mark.parametrize("label,kwargs,kind", PRESET_CASES["cases"],
                         ids=[c[0] for c in PRESET_CASES["cases"]])
def test_image_classification_preset_matches_torchvision(label, kwargs, kind):
    pytest.importorskip("PIL")
    preset = ImageClassification(**preset_kwargs(kwargs))
    out = preset(_preset_input(kind))
    # PIL resizes in both libraries; uint8 tensors may round one level apart; floats agree
    max_levels = {"pil": 1e-3, "u8": 1.0 + 1e-3}.get(kind, 1e-3)
    _assert_close_in_pixel_levels(out.numpy(), PRESET_OUTS[label], preset, max_levels)


@pytest.mark.parametrize("enum_name,entry", PRESET_CASES["real"])
def test_real_presets_match_torchvision_on_a_small_image(enum_name, entry):
    preset = getattr(models, enum_name)[entry].transforms()
    out = preset(torch.from_numpy(PRESET_OUTS["img_u8"]))
    assert out.shape == (3, preset.crop_size[0], preset.crop_size[0])
    expected = PRESET_OUTS[f"{enum_name}.{entry}"]
    _assert_close_in_pixel_levels(out.numpy()[:, ::8, ::8], expected, preset, 1.0 + 1e-3)


def test_image_classification_preset_api():
    preset = models.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert isinstance(preset, nn.Module)
    assert preset.describe() == WEIGHTS_META["_describe_ResNet50_Weights.IMAGENET1K_V2"]
    assert (preset.crop_size, preset.resize_size, preset.antialias) == ([224], [232], True)
    with pytest.raises(TypeError):
        ImageClassification(224)  # keyword-only, as in torchvision
    with pytest.raises(TypeError):
        preset(np.zeros((3, 8, 8), dtype=np.uint8))
    small = ImageClassification(crop_size=4, resize_size=6)
    batch = torch.rand(2, 3, 9, 12, dtype=torch.float64)
    out = small(batch)
    assert out.shape == (2, 3, 4, 4) and out.dtype == torch.float32
    # a batch is the stack of its images
    assert torch.allclose(out[1], small(batch[1]), atol=1e-6)
    with pytest.raises(RuntimeError):  # one channel against three means, as in torchvision
        small(torch.rand(1, 9, 12))


def test_categories_file_ships_with_the_package():
    tomllib = pytest.importorskip("tomllib")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        globs = tomllib.load(f)["tool"]["setuptools"]["package-data"]["glasstorch"]
    assert any(fnmatch.fnmatch("vision/models/imagenet_categories.txt", g) for g in globs), globs
