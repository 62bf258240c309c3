"""transforms.v2's own classes and kernels, and the random colour transforms (v1's, and v2's
in the v2 calling convention; tv_tensors and the geometric v2 transforms are in
test_tv_tensors.py).

torchvision references were recorded once by fixtures/record_augment.py (torchvision 0.29.1):
the float-image kernels, dtype conversions, and MixUp/CutMix outputs with their logged
random parameters, which the tests replay.
"""
import json
import os

import numpy as np
import pytest

import glasstorch
import glasstorch.vision.transforms as T
from glasstorch.vision import tv_tensors
from glasstorch.vision.transforms import v2
from glasstorch.vision.transforms.v2 import functional as F2

Image = pytest.importorskip("PIL.Image")

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
with open(os.path.join(FIX, "augment_tables.json")) as _f:
    META = json.load(_f)
OUT = dict(np.load(os.path.join(FIX, "augment_outputs.npz")))
U8 = glasstorch.from_numpy(OUT["input"])
F32 = T.functional.convert_image_dtype(U8, glasstorch.float32)


def n(x):
    return np.asarray(x) if isinstance(x, Image.Image) else np.asarray(x.numpy())


def test_float_kernels_match_torchvision_v2():
    for bits in range(9):
        np.testing.assert_array_equal(n(F2.posterize(F32, bits)), OUT[f"v2_posterize_f32_{bits}"])
    np.testing.assert_allclose(n(F2.equalize(F32)), OUT["v2_equalize_f32"], rtol=0, atol=1e-7)
    np.testing.assert_array_equal(n(F2.solarize(F32, 0.4)), OUT["v2_solarize_f32"])
    # on uint8 the v2 kernels are v1's
    np.testing.assert_array_equal(n(F2.posterize(U8, 3)), n(T.functional.posterize(U8, 3)))
    np.testing.assert_array_equal(n(F2.equalize(U8)), n(T.functional.equalize(U8)))
    with pytest.raises(TypeError, match="bits"):
        F2.posterize(F32, 9)
    with pytest.raises(TypeError, match="Threshold"):
        F2.solarize(F32, 2.0)
    with pytest.raises(TypeError):
        T.functional.posterize(F32, 3)      # v1 keeps uint8 only


def test_to_dtype_and_to_image_match_torchvision_v2():
    np.testing.assert_array_equal(n(F2.to_dtype(U8, glasstorch.float32, scale=True)),
                                  OUT["v2_to_dtype_u8_f32"])
    np.testing.assert_array_equal(n(F2.to_dtype(F32 * 0.999, glasstorch.uint8, scale=True)),
                                  OUT["v2_to_dtype_f32_u8"])
    np.testing.assert_array_equal(n(F2.to_dtype(U8, glasstorch.int16, scale=True)),
                                  OUT["v2_to_dtype_u8_i16"])
    np.testing.assert_array_equal(n(F2.to_dtype(U8, glasstorch.float32)),
                                  OUT["v2_to_dtype_u8_f32_noscale"])
    hwc = OUT["input"].transpose(1, 2, 0)
    np.testing.assert_array_equal(n(F2.to_image(hwc)), OUT["input"])
    np.testing.assert_array_equal(n(F2.to_image(Image.fromarray(hwc))), OUT["input"])
    assert tuple(F2.to_image(hwc[..., 0]).shape) == (1, 10, 12)
    assert tuple(F2.to_image(glasstorch.zeros(4, 5)).shape) == (1, 4, 5)
    with pytest.raises(TypeError):
        F2.to_image([1, 2])
    assert F2.get_size(U8) == [10, 12] and F2.get_num_channels(U8) == 3


def test_v2_calling_convention():
    pil = Image.fromarray(OUT["input"].transpose(1, 2, 0))
    label = glasstorch.tensor([1, 2])
    img, lab, k = v2.ToImage()(pil, label, 3)
    assert img.dtype == glasstorch.uint8 and lab is label and k == 3
    out = v2.ToDtype(glasstorch.float32, scale=True)({"image": U8, "label": label})
    np.testing.assert_array_equal(n(out["image"]), OUT["v2_to_dtype_u8_f32"])
    assert out["label"] is label
    assert v2.ToDtype(glasstorch.float32)(pil) is pil
    pipeline = v2.Compose([v2.ToImage(), v2.ToDtype(glasstorch.float32, scale=True),
                           v2.Normalize([0.5] * 3, [0.5] * 3), v2.ToPureTensor()])
    np.testing.assert_allclose(n(pipeline(pil)), OUT["v2_to_dtype_u8_f32"] * 2 - 1, atol=1e-6)
    assert v2.Identity()(pil, 4) == (pil, 4)
    assert type(img) is tv_tensors.Image and type(pipeline(pil)) is glasstorch.Tensor
    # a dict dtype names the dtype per input type ("others": the rest)
    out = v2.ToDtype({"others": glasstorch.float32}, scale=True)(U8, label)
    np.testing.assert_array_equal(n(out[0]), OUT["v2_to_dtype_u8_f32"])
    assert out[1] is label
    with pytest.raises(ValueError):
        v2.ToDtype("float32")


def test_rgb_and_channel_permutation():
    gray = U8[:1]
    rgb = v2.RGB()(gray)
    assert tuple(rgb.shape) == (3, 10, 12)
    np.testing.assert_array_equal(n(rgb), np.repeat(OUT["input"][:1], 3, 0))
    assert v2.RGB()(U8) is U8
    assert v2.RGB()(Image.fromarray(OUT["input"][0])).mode == "RGB"
    np.testing.assert_array_equal(n(F2.permute_channels(U8, [2, 0, 1])), OUT["input"][[2, 0, 1]])
    batch = glasstorch.stack([U8, U8.flip(-1)])
    glasstorch.manual_seed(0)
    perm = glasstorch.randperm(3).tolist()
    glasstorch.manual_seed(0)
    np.testing.assert_array_equal(n(v2.RandomChannelPermutation()(batch)), n(batch)[:, perm])
    pil = v2.RandomChannelPermutation()(Image.fromarray(OUT["input"].transpose(1, 2, 0)))
    assert pil.size == (12, 10)
    with pytest.raises(ValueError, match="permutation"):
        F2.permute_channels(U8, [0, 1])


def test_gaussian_noise_draws_from_glasstorch_generator():
    glasstorch.manual_seed(5)
    noise = glasstorch.randn(3, 10, 12)
    glasstorch.manual_seed(5)
    out = v2.GaussianNoise(mean=0.1, sigma=0.2)(F32)
    want = np.clip(n(F32) + (0.1 + n(noise) * 0.2), 0, 1)
    np.testing.assert_allclose(n(out), want, atol=1e-6)
    glasstorch.manual_seed(5)
    u = v2.GaussianNoise(sigma=0.2, clip=True)(U8)
    shift = (n(noise) * (0.2 * 255)).astype(np.float32).astype(np.int16)   # truncated
    np.testing.assert_array_equal(n(u), np.clip(OUT["input"] + shift, 0, 255).astype(np.uint8))
    with pytest.raises(ValueError, match="sigma"):
        F2.gaussian_noise(F32, sigma=-1.0)
    with pytest.raises(ValueError, match="dtype"):
        F2.gaussian_noise(U8.int())
    with pytest.raises(TypeError):
        v2.GaussianNoise()(Image.new("RGB", (4, 4)))


def replay(cls, params):
    class Replay(cls):
        def make_params(self, flat_inputs):
            return dict(params.pop(0))
    return Replay(num_classes=3)


@pytest.mark.parametrize("name", ["MixUp", "CutMix"])
def test_mixup_cutmix_match_torchvision(name):
    batch = glasstorch.from_numpy(OUT["mix_batch"])
    labels = glasstorch.tensor([0, 2, 1, 2])
    params = [dict(p, box=tuple(p["box"])) if "box" in p else p
              for p in META["mixing_params"][name]]
    mix = replay(getattr(v2, name), params)
    for k in range(3):
        images, mixed = mix(batch, labels)
        np.testing.assert_allclose(n(images), OUT[name + "_images"][k], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(n(mixed), OUT[name + "_labels"][k], rtol=1e-6, atol=1e-7)
    assert labels.tolist() == [0, 2, 1, 2]      # the inputs are not modified


@pytest.mark.parametrize("cls", [v2.MixUp, v2.CutMix])
def test_mixup_cutmix_sampling_and_errors(cls):
    batch = glasstorch.rand(4, 3, 8, 8)
    labels = glasstorch.tensor([0, 1, 2, 1])
    glasstorch.manual_seed(1)
    a = cls(num_classes=3)(batch, labels)
    glasstorch.manual_seed(1)
    b = cls(num_classes=3)((batch, labels))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(n(x), n(y))
    mixed = n(a[1])
    assert mixed.shape == (4, 3) and np.allclose(mixed.sum(1), 1.0)
    soft = glasstorch.nn.functional.one_hot(labels, 3).float()
    np.testing.assert_allclose(n(cls()(batch, soft)[1]).sum(1), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="num_classes"):
        cls()(batch, labels)
    with pytest.raises(ValueError, match="4 dims"):
        cls(num_classes=3)(batch[0], labels)
    with pytest.raises(ValueError, match="batch size"):
        cls(num_classes=3)(batch[:3], labels)
    with pytest.raises(ValueError, match="PIL"):
        cls(num_classes=3)(Image.new("RGB", (4, 4)), labels)
    with pytest.raises(ValueError, match="tensor"):
        cls(num_classes=3)(batch, [0, 1, 2, 1])
    with pytest.raises(RuntimeError):       # mixing in place cannot go back to uint8
        v2.MixUp(num_classes=3)((batch * 255).to(glasstorch.uint8), labels)


COLOR_OPS = [
    (T.RandomInvert, (), lambda img: F2.invert(img)),
    (T.RandomPosterize, (3,), lambda img: F2.posterize(img, 3)),
    (T.RandomSolarize, (0.5,), lambda img: F2.solarize(img, 0.5)),
    (T.RandomAdjustSharpness, (2.0,), lambda img: F2.adjust_sharpness(img, 2.0)),
    (T.RandomAutocontrast, (), lambda img: F2.autocontrast(img)),
    (T.RandomEqualize, (), lambda img: F2.equalize(img)),
]


@pytest.mark.parametrize("cls,args,op", COLOR_OPS)
def test_random_color_ops(cls, args, op):
    for img in (F32, U8):
        np.testing.assert_array_equal(n(cls(*args, p=1.0)(img)), n(op(img)))
        assert cls(*args, p=0.0)(img) is img
    glasstorch.manual_seed(0)
    coins = (glasstorch.rand(40) < 0.5).tolist()
    glasstorch.manual_seed(0)
    t = cls(*args)
    applied = [not np.array_equal(n(t(F32)), n(F32)) for _ in range(40)]
    assert applied == coins
    pil = Image.fromarray(OUT["input"].transpose(1, 2, 0))
    assert cls(*args, p=1.0)(pil).size == pil.size
    # v2's version: the same op, in the v2 calling convention (masks pass through)
    v2_cls = getattr(v2, cls.__name__)
    assert v2_cls is not cls
    mask = tv_tensors.Mask(glasstorch.zeros(10, 12))
    img, same_mask = v2_cls(*args, p=1.0)(tv_tensors.Image(F32), mask)
    np.testing.assert_array_equal(n(img), n(op(F32)))
    assert type(img) is tv_tensors.Image and same_mask is mask


def test_random_color_op_reprs_match_torchvision():
    # torchvision's reprs (no space after the comma)
    assert repr(T.RandomPosterize(3)) == "RandomPosterize(bits=3,p=0.5)"
    assert repr(T.RandomEqualize(0.3)) == "RandomEqualize(p=0.3)"
    assert repr(T.RandomAdjustSharpness(2)) == "RandomAdjustSharpness(sharpness_factor=2,p=0.5)"
