"""tv_tensors and transforms.v2's calling convention, against torchvision 0.29.

fixtures/record_tv_tensors.py recorded, once, the outputs of torchvision's v2 functionals on
images, masks and boxes with fixed parameters, of v2 transforms run on a whole sample (with
the parameters their random draws gave, which the tests replay), which tensor operations keep
the tv_tensor type, and reprs.
"""
import copy
import json
import os
import pickle
from collections import namedtuple

import numpy as np
import pytest

import glasstorch
from glasstorch.vision import transforms as T
from glasstorch.vision import tv_tensors
from glasstorch.vision.transforms import v2
from glasstorch.vision.transforms.v2 import functional as F

FIX = os.path.join(os.path.dirname(__file__), "fixtures")
with open(os.path.join(FIX, "tv_tensors_cases.json")) as _f:
    META = json.load(_f)
OUT = dict(np.load(os.path.join(FIX, "tv_tensors_outputs.npz")))
H, W = META["canvas_size"]
# bilinear/bicubic image resampling differs from torch's in the last float32 bits (a few 1e-7,
# 1e-6 after normalising by std 0.2)
RESAMPLING_ATOL = 2e-6


def make(key):
    """The tv_tensor an input key of the fixtures stands for (as the recorder built it)."""
    t = glasstorch.from_numpy(OUT["in_" + key.split(":")[0]].copy())
    if key.startswith("boxes_int"):
        fmt = key.split(":")[1] if ":" in key else "XYXY"
        return tv_tensors.BoundingBoxes(t, format=fmt, canvas_size=(H, W))
    if key.startswith("boxes_"):
        return tv_tensors.BoundingBoxes(t, format=key[len("boxes_"):], canvas_size=(H, W))
    if key in ("label_map", "per_box"):
        return tv_tensors.Mask(t)
    return tv_tensors.Image(t)


def check(out, want, info):
    assert type(out).__name__ == info["type"]
    assert str(out.dtype) == "torch." + info["dtype"]
    if "canvas_size" in info:
        assert list(out.canvas_size) == info["canvas_size"]
        assert out.format.name == info["format"]
    got = out.numpy()
    assert got.shape == want.shape
    if got.dtype.kind == "f" and info["type"] == "Image":
        np.testing.assert_allclose(got, want, rtol=0, atol=RESAMPLING_ATOL)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", META["functional"], ids=lambda c: c["id"])
def test_functionals_match_torchvision(case):
    inpt = make(case["input"])
    before = inpt.numpy().copy()
    out = getattr(F, case["fn"])(inpt, *case["args"], **case["kwargs"])
    check(out, OUT[case["id"]], case)
    np.testing.assert_array_equal(inpt.numpy(), before)     # inputs are not modified


def test_box_kernels_on_plain_tensors():
    boxes = make("boxes_XYWH")
    plain = glasstorch.from_numpy(OUT["in_boxes_XYWH"])
    case = next(c for c in META["functional"] if c["id"] == "affine18_boxes_XYWH")
    out = F.affine_bounding_boxes(plain, "XYWH", (H, W), *case["args"])
    assert type(out) is glasstorch.Tensor
    np.testing.assert_array_equal(out.numpy(), OUT[case["id"]])
    out, canvas = F.rotate_bounding_boxes(plain, tv_tensors.BoundingBoxFormat.XYWH, (H, W), 90.0,
                                          expand=True)
    want = F.rotate(boxes, 90.0, expand=True)
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    assert canvas == want.canvas_size
    back = F.convert_bounding_box_format(plain, old_format="XYWH", new_format="XYXY")
    np.testing.assert_array_equal(back.numpy(), OUT["in_boxes_XYXY"])
    clamped = F.clamp_bounding_boxes(plain + 3, format="XYWH", canvas_size=(H, W),
                                     clamping_mode="soft")
    np.testing.assert_array_equal(clamped.numpy(), F.clamp_bounding_boxes(
        tv_tensors.wrap(plain + 3, like=boxes)).numpy())


def _logged(value):
    # the recorder logs tensors as {"tensor": values}
    return glasstorch.tensor(value["tensor"]) if isinstance(value, dict) else value


def replaying(transform, params):
    """``transform`` drawing the recorded parameters instead of random ones."""
    class Replay(type(transform)):
        def make_params(self, flat_inputs):
            return {key: _logged(value) for key, value in params.pop(0).items()}
    transform.__class__ = Replay
    return transform


def sample():
    return {"image": make("f32"), "masks": make("per_box"), "boxes": make("boxes_XYWH"),
            "labels": glasstorch.tensor([1, 2, 3, 4]), "name": "sample-0",
            "extra": glasstorch.arange(5)}


@pytest.mark.parametrize("case", META["pipelines"], ids=lambda c: c["id"])
def test_transforms_on_a_sample_match_torchvision(case):
    # the recorder's own source line, built with glasstorch's modules under torchvision's names
    names = {"T2": v2, "tv": tv_tensors, "torch": glasstorch}
    transform = eval(case["source"], names)
    if case["params"]:
        transform = replaying(transform, list(case["params"]))
    inputs = sample()
    out = transform(inputs)
    assert list(out) == list(inputs)
    for key, info in case["leaves"].items():
        if info["type"] == "str":
            assert out[key] == info["value"]
        else:
            check(out[key], OUT[f"{case['id']}:{key}"], info)
    assert out["name"] is inputs["name"] and out["extra"] is inputs["extra"]
    if case["id"] != "compose":             # SanitizeBoundingBoxes filters the labels
        assert out["labels"] is inputs["labels"]


def test_one_draw_for_every_image_of_a_sample():
    img = make("f32")
    twin = tv_tensors.Image(img.clone())
    boxes = make("boxes_XYXY")
    for transform in (v2.RandomResizedCrop(8, scale=(0.2, 0.6)), v2.RandomAffine(30, (0.2, 0.2)),
                      v2.RandomRotation(45), v2.ColorJitter(0.5, 0.5, 0.5, 0.2),
                      v2.RandomErasing(p=1.0), v2.RandomPerspective(p=1.0)):
        glasstorch.manual_seed(3)
        a, b, out_boxes = transform(img, twin, boxes)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert type(a) is tv_tensors.Image and type(out_boxes) is tv_tensors.BoundingBoxes
        # the same draw on the image alone gives the same image
        glasstorch.manual_seed(3)
        np.testing.assert_array_equal(transform(img).numpy(), a.numpy())


def test_image_only_transforms_leave_boxes_and_masks_alone():
    inputs = sample()
    glasstorch.manual_seed(0)
    for transform in (v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.Grayscale(3), v2.GaussianBlur(3, 1.0),
                      v2.RandomInvert(p=1.0), v2.RandomErasing(p=1.0),
                      v2.Normalize([0.5] * 3, [0.2] * 3)):
        out = transform(inputs)
        assert out["boxes"] is inputs["boxes"] and out["masks"] is inputs["masks"]
        assert type(out["image"]) is tv_tensors.Image
        assert not np.array_equal(out["image"].numpy(), inputs["image"].numpy())
    with pytest.raises(TypeError, match="not supported by AutoAugment"):
        v2.AutoAugment()(inputs)
    with pytest.raises(TypeError, match="single image"):
        v2.TrivialAugmentWide()(make("u8"), make("u8"))
    crops = v2.FiveCrop(4)(make("f32"))
    assert len(crops) == 5 and all(type(c) is tv_tensors.Image for c in crops)
    with pytest.raises(TypeError, match="Mask"):
        v2.TenCrop(4)(make("f32"), make("label_map"))


def test_pure_tensor_heuristic():
    plain, other = glasstorch.rand(3, 10, 12), glasstorch.rand(3, 10, 12)
    a, b = v2.RandomHorizontalFlip(p=1.0)(plain, other)
    np.testing.assert_array_equal(a.numpy(), plain.flip(-1).numpy())
    assert b is other                   # only the first plain tensor is the image
    img, c = v2.RandomHorizontalFlip(p=1.0)(make("f32"), plain)
    assert c is plain                   # with an Image present, plain tensors pass through
    out = v2.Lambda(lambda x: "seen", int)({"a": 1, "b": "s", "c": plain})
    assert out == {"a": "seen", "b": "s", "c": plain}


def test_structures_pass_through():
    Pair = namedtuple("Pair", "image target")
    img, boxes = make("f32"), make("boxes_XYXY")
    out = v2.RandomVerticalFlip(p=1.0)(Pair(img, {"boxes": boxes, "labels": [1, 2], "id": 7}))
    assert isinstance(out, Pair) and out.target["labels"] == [1, 2] and out.target["id"] == 7
    np.testing.assert_array_equal(out.target["boxes"].numpy(), F.vertical_flip(boxes).numpy())
    single = v2.Compose([v2.CenterCrop(6), v2.ToPureTensor()])(img)
    assert type(single) is glasstorch.Tensor and tuple(single.shape) == (3, 6, 6)
    pair = v2.Compose([v2.Resize(5), v2.RandomHorizontalFlip(p=1.0)])(img, boxes)
    assert isinstance(pair, tuple) and pair[1].canvas_size == (5, 6)
    glasstorch.manual_seed(0)
    chosen = v2.RandomChoice([v2.Pad(1), v2.Pad(2)], p=[0.0, 1.0])(img, boxes)
    assert chosen[1].canvas_size == (14, 16)
    skipped = v2.RandomApply([v2.Pad(1)], p=0.0)(img, boxes)
    assert skipped[0] is img and skipped[1] is boxes
    glasstorch.manual_seed(0)
    ordered = v2.RandomOrder([v2.Pad(1), v2.CenterCrop(6)])({"img": img})
    assert tuple(ordered["img"].shape[-2:]) in ((6, 6), (8, 8))


def test_v1_classes_keep_v1_behaviour():
    img = make("f32")
    assert v2.RandomCrop is not T.RandomCrop and v2.Compose is not T.Compose
    assert tuple(T.RandomCrop(4)(img).shape) == (3, 4, 4)
    with pytest.raises(TypeError):
        T.RandomCrop(4)(img, 3)
    out, label = v2.RandomCrop(4)(img, 3)
    assert tuple(out.shape) == (3, 4, 4) and label == 3


def test_sanitize_bounding_boxes():
    boxes = tv_tensors.BoundingBoxes([[0, 0, 5, 5], [2, 2, 2.5, 8], [3, 3, 20, 9], [1, 1, 4, 4]],
                                     format="XYXY", canvas_size=(H, W))
    masks = tv_tensors.Mask(glasstorch.zeros(4, H, W))
    semantic = tv_tensors.Mask(glasstorch.zeros(H, W))
    labels = glasstorch.tensor([1, 2, 3, 4])
    out = v2.SanitizeBoundingBoxes()({"boxes": boxes, "masks": masks, "sem": semantic,
                                      "labels": labels})
    assert out["boxes"].tolist() == [[0, 0, 5, 5], [1, 1, 4, 4]]
    assert out["labels"].tolist() == [1, 4] and tuple(out["masks"].shape) == (2, H, W)
    assert out["sem"] is semantic       # not one row per box: kept whole
    kept, valid = F.sanitize_bounding_boxes(boxes, min_size=3)
    assert valid.tolist() == [True, False, False, True] and kept.canvas_size == (H, W)
    img, target = v2.SanitizeBoundingBoxes()(make("f32"), {"boxes": boxes, "my_label": labels})
    assert target["my_label"].tolist() == [1, 4]
    with pytest.raises(ValueError, match="labels"):
        v2.SanitizeBoundingBoxes()({"boxes": boxes})
    with pytest.raises(ValueError, match="match"):
        v2.SanitizeBoundingBoxes()({"boxes": boxes, "labels": labels[:2]})
    assert v2.SanitizeBoundingBoxes(labels_getter=None)({"boxes": boxes})["boxes"].shape[0] == 2


def test_to_dtype_dict_and_clamping_mode():
    sample_in = sample()
    out = v2.ToDtype({tv_tensors.Image: glasstorch.float64, tv_tensors.Mask: glasstorch.int64,
                      "others": None}, scale=True)(sample_in)
    assert out["image"].dtype == glasstorch.float64 and out["masks"].dtype == glasstorch.int64
    assert out["boxes"] is sample_in["boxes"] and out["extra"] is sample_in["extra"]
    with pytest.raises(ValueError, match="No dtype"):
        v2.ToDtype({tv_tensors.Image: glasstorch.float64})(sample_in)
    with pytest.raises(ValueError, match="dtype"):
        v2.ToDtype("float32")
    boxes = tv_tensors.BoundingBoxes([[-2.0, 1.0, 30.0, 4.0]], format="XYXY", canvas_size=(H, W),
                                     clamping_mode=None)
    assert F.pad(boxes, [1]).tolist() == [[-1.0, 2.0, 31.0, 5.0]]       # not clamped
    assert v2.ClampBoundingBoxes("soft")(boxes).tolist() == [[0.0, 1.0, 12.0, 4.0]]
    soft = v2.SetClampingMode("soft")(boxes)
    assert soft.clamping_mode == "soft" and boxes.clamping_mode is None
    assert F.pad(soft, [1]).tolist() == [[0.0, 2.0, 14.0, 5.0]]


def test_functional_errors():
    with pytest.raises(TypeError, match="adjust_brightness"):
        F.adjust_brightness(make("label_map"), 1.5)
    with pytest.raises(TypeError):
        F.horizontal_flip("not an image")
    with pytest.raises(ValueError, match="old_format"):
        F.convert_bounding_box_format(glasstorch.zeros(1, 4), new_format="XYWH")
    with pytest.raises(ValueError, match="old_format"):
        F.convert_bounding_box_format(make("boxes_XYXY"), old_format="XYXY", new_format="XYWH")
    with pytest.raises(ValueError, match="clamping_mode"):
        F.clamp_bounding_boxes(glasstorch.zeros(1, 4), format="XYXY", canvas_size=(2, 2))
    with pytest.raises(ValueError, match="not supported with bounding boxes"):
        F.pad(make("boxes_XYXY"), [1], padding_mode="edge")
    with pytest.raises(ValueError, match="Non-scalar"):
        F.pad(make("label_map"), [1], fill=[1, 2])
    with pytest.raises(TypeError, match="PIL"):
        v2.Normalize([0.5], [0.5])(F.to_pil_image(make("u8")))
    with pytest.raises(ValueError, match="Found multiple HxW"):
        v2.RandomCrop(3)(make("f32"), tv_tensors.Mask(glasstorch.zeros(4, 4)))


def test_register_kernel_for_a_custom_tv_tensor():
    class Heatmap(tv_tensors.TVTensor):
        pass

    seen = []

    @F.register_kernel(F.horizontal_flip, Heatmap)
    def _flip_heatmap(inpt):
        seen.append(type(inpt))
        return tv_tensors.wrap(inpt.flip(-1), like=inpt)

    heat = tv_tensors.wrap(glasstorch.arange(6.0).reshape(2, 3), like=tv_tensors.Image(
        glasstorch.zeros(1, 1, 1)))
    heat = Heatmap.wrap(heat, like=heat)
    out = v2.RandomHorizontalFlip(p=1.0)(make("f32"), heat)[1]
    assert type(out) is Heatmap and seen == [Heatmap]
    assert out.tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    with pytest.raises(ValueError, match="builtin"):
        F.register_kernel(F.horizontal_flip, tv_tensors.Mask)
    with pytest.raises(ValueError):
        F.register_kernel("no_such_functional", Heatmap)


# ---------------------------------------------------------------------------- tv_tensors


@pytest.mark.parametrize("name", sorted(META["types"]))
def test_which_operations_keep_the_type(name):
    entry = META["types"][name]
    t = tv_tensors.Image(glasstorch.rand(3, 4, 5))
    out = eval(entry["source"], {"t": t, "torch": glasstorch, "copy": copy, "pickle": pickle})
    assert type(out).__name__ == entry["type"]
    assert (out is t) == entry["same"]


def test_reprs_match_torchvision():
    boxes = tv_tensors.BoundingBoxes([[1, 2, 3, 4]], format="XYXY", canvas_size=(10, 12))
    made = {
        "image": tv_tensors.Image(glasstorch.zeros(1, 2, 2)),
        "image_u8": tv_tensors.Image(glasstorch.zeros(1, 1, 2, dtype=glasstorch.uint8)),
        "video": tv_tensors.Video(glasstorch.zeros(1, 1, 1, 2, 2)),
        "mask": tv_tensors.Mask(glasstorch.zeros(2, 40, dtype=glasstorch.uint8)),
        "boxes": boxes,
        "boxes_float_cxcywh": tv_tensors.BoundingBoxes([[1.5, 2, 3, 4]], format="cxcywh",
                                                       canvas_size=[5, 6], clamping_mode=None),
        "random_crop": v2.RandomCrop(24, padding=2), "resize": v2.Resize(32),
        "pad": v2.Pad([1, 2]), "affine": v2.RandomAffine(10, scale=(0.9, 1.1)),
        "rotation": v2.RandomRotation(30, expand=True), "flip": v2.RandomHorizontalFlip(),
        "sanitize": v2.SanitizeBoundingBoxes(), "convert": v2.ConvertBoundingBoxFormat("XYWH"),
    }
    for name, obj in made.items():
        assert repr(obj) == META["reprs"][name], name


def test_constructors_and_wrap():
    assert tuple(tv_tensors.Image(glasstorch.zeros(4, 5)).shape) == (1, 4, 5)
    assert tv_tensors.Image([[1, 2], [3, 4]]).dtype == glasstorch.int64
    assert tv_tensors.Image(glasstorch.zeros(1, 2, 2), dtype=glasstorch.float64).dtype == \
        glasstorch.float64
    pil = F.to_pil_image(make("u8"))
    np.testing.assert_array_equal(tv_tensors.Image(pil).numpy(), OUT["in_u8"])
    assert tuple(tv_tensors.Mask(F.to_pil_image(make("u8")[:1])).shape) == (1, H, W)
    with pytest.raises(ValueError, match="2D"):
        tv_tensors.Image(glasstorch.zeros(3))
    with pytest.raises(ValueError):
        tv_tensors.Video(glasstorch.zeros(3, 3, 3))
    boxes = tv_tensors.BoundingBoxes([1, 2, 3, 4], format="xywh", canvas_size=(10, 12))
    assert tuple(boxes.shape) == (1, 4) and boxes.format is tv_tensors.BoundingBoxFormat.XYWH
    assert boxes.clamping_mode == "soft"
    with pytest.raises(ValueError, match="2D"):
        tv_tensors.BoundingBoxes(glasstorch.zeros(1, 1, 4), format="XYXY", canvas_size=(1, 1))
    with pytest.raises(KeyError):
        tv_tensors.BoundingBoxes([[1, 2, 3, 4]], format="XYWHR", canvas_size=(1, 1))
    with pytest.raises(ValueError, match="clamping_mode"):
        tv_tensors.BoundingBoxes([[1, 2, 3, 4]], format="XYXY", canvas_size=(1, 1),
                                 clamping_mode="firm")
    data = glasstorch.zeros(1, 2, 2)
    img = tv_tensors.Image(data)
    img.add_(1)                           # shares the storage, like as_subclass
    assert data.sum().item() == 4.0
    moved = tv_tensors.wrap(glasstorch.ones(2, 4), like=boxes, canvas_size=(3, 3))
    assert moved.canvas_size == (3, 3) and moved.format is boxes.format
    assert type(tv_tensors.wrap(glasstorch.ones(2), like=img)) is tv_tensors.Image


def test_metadata_survives_copies_and_pickling():
    boxes = tv_tensors.BoundingBoxes([[1.0, 2, 3, 4]], format="CXCYWH", canvas_size=(5, 6),
                                     clamping_mode="hard")
    for out in (boxes.clone(), boxes.to(glasstorch.float64), boxes.detach(),
                copy.deepcopy(boxes), pickle.loads(pickle.dumps(boxes))):
        assert type(out) is tv_tensors.BoundingBoxes
        assert (out.format, out.canvas_size, out.clamping_mode) == \
            (boxes.format, boxes.canvas_size, "hard")
        assert out.tolist() == boxes.tolist()
    mask = pickle.loads(pickle.dumps(tv_tensors.Mask(glasstorch.ones(2, 2))))
    assert type(mask) is tv_tensors.Mask


def test_gradients_flow_through_tv_tensors():
    x = glasstorch.rand(3, 4, 4, requires_grad=True)
    img = tv_tensors.Image(x)
    assert img.requires_grad and type(img.grad_fn).__name__ == "AliasBackward0"
    F.horizontal_flip(F.resize(img, [2, 2])).sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == (3, 4, 4)
    np.testing.assert_allclose(x.grad.sum().item(), 12.0, rtol=1e-6)


class _BoxesDataset(glasstorch.utils.data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        boxes = tv_tensors.BoundingBoxes([[1, 2, 7, 6]], format="XYWH", canvas_size=(10, 12))
        return v2.RandomHorizontalFlip(p=1.0)(make("f32"), {"boxes": boxes, "labels": i})


def test_samples_cross_dataloader_workers():
    loader = glasstorch.utils.data.DataLoader(_BoxesDataset(), batch_size=2, num_workers=1,
                                              collate_fn=lambda batch: batch)
    (batch,) = list(loader)
    img, target = batch[1]
    assert type(img) is tv_tensors.Image and target["labels"] == 1
    assert target["boxes"].canvas_size == (10, 12) and target["boxes"].tolist() == [[4, 2, 7, 6]]
