"""glasstorch.vision.transforms against independent computations (numpy, Pillow, torch)."""
import numpy as np
import pytest
import torch

import glasstorch
import glasstorch.vision.transforms as T
import glasstorch.vision.transforms.functional as F
from glasstorch.utils.data import DataLoader, Dataset

Image = pytest.importorskip("PIL.Image")

RNG = np.random.RandomState(0)
ARR = RNG.randint(0, 256, (20, 30, 3)).astype(np.uint8)
GRAY = RNG.randint(0, 256, (17, 13)).astype(np.uint8)


def pil(a=ARR):
    return Image.fromarray(a)


def chw(a=ARR):
    return glasstorch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def n(t):
    return np.asarray(t.numpy())


def test_to_tensor_and_back():
    x = T.ToTensor()(pil())
    assert x.dtype == glasstorch.float32 and tuple(x.shape) == (3, 20, 30)
    np.testing.assert_allclose(n(x), ARR.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    g = T.ToTensor()(pil(GRAY))
    assert tuple(g.shape) == (1, 17, 13)
    np.testing.assert_allclose(n(T.ToTensor()(ARR)), n(x))
    f32 = np.ones((2, 3, 1), np.float32) * 7
    assert n(T.ToTensor()(f32)).max() == 7  # non-uint8 arrays are not rescaled
    u = T.PILToTensor()(pil())
    assert u.dtype == glasstorch.uint8
    np.testing.assert_array_equal(n(u), ARR.transpose(2, 0, 1))
    back = T.ToPILImage()(u)
    assert back.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(back), ARR)
    np.testing.assert_array_equal(np.asarray(T.ToPILImage()(x)), ARR)
    assert T.ToPILImage()(T.PILToTensor()(pil(GRAY))).mode == "L"
    with pytest.raises(TypeError):
        T.ToTensor()([1, 2])
    with pytest.raises(TypeError):
        T.PILToTensor()(x)


def test_normalize():
    x = T.ToTensor()(pil())
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    want = (n(x) - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None,
                                                                                          None]
    out = T.Normalize(mean, std)(x)
    np.testing.assert_allclose(n(out), want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(n(x), n(out))  # not in place by default
    batch = x.unsqueeze(0).repeat(2, 1, 1, 1)
    np.testing.assert_allclose(n(T.Normalize(mean, std)(batch))[1], want, rtol=1e-5, atol=1e-6)
    y = x.clone()
    r = T.Normalize(mean, std, inplace=True)(y)
    assert r is y
    np.testing.assert_allclose(n(y), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        T.Normalize(mean, std)(chw())
    with pytest.raises(ValueError):
        T.Normalize(mean, [1.0, 0.0, 1.0])(x)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_tensor_matches_interpolate(mode, antialias):
    x = T.ToTensor()(pil())
    out = T.Resize((9, 14), interpolation=F.InterpolationMode(mode), antialias=antialias)(x)
    tx = torch.from_numpy(n(x))[None]
    kw = {} if mode == "nearest" else {"align_corners": False, "antialias": antialias}
    want = torch.nn.functional.interpolate(tx, size=(9, 14), mode=mode, **kw)[0].numpy()
    np.testing.assert_allclose(n(out), want, rtol=1e-4, atol=1e-5)
    u = T.Resize((9, 14), interpolation=F.InterpolationMode(mode), antialias=antialias)(chw())
    assert u.dtype == glasstorch.uint8
    tu = torch.from_numpy(ARR.transpose(2, 0, 1).astype(np.float32))[None]
    want_u = torch.nn.functional.interpolate(tu, size=(9, 14), mode=mode, **kw)[0]
    want_u = want_u.round().clamp(0, 255).numpy()
    assert np.abs(n(u).astype(int) - want_u).max() <= 1


def test_resize_sizes_and_pil():
    assert T.Resize(10)(pil()).size == (15, 10)
    assert tuple(T.Resize(10)(chw()).shape) == (3, 10, 15)
    assert tuple(T.Resize(10, max_size=12)(chw()).shape) == (3, 8, 12)
    assert tuple(T.Resize([10])(chw()[None]).shape) == (1, 3, 10, 15)
    out = T.Resize((7, 11), interpolation=F.InterpolationMode.BICUBIC)(pil())
    np.testing.assert_array_equal(np.asarray(out), np.asarray(pil().resize((11, 7),
                                                                           Image.BICUBIC)))
    with pytest.raises(ValueError):
        T.Resize(10, max_size=5)(chw())
    with pytest.raises(TypeError):
        T.Resize(1.5)


def test_crops_and_flips():
    t, p = chw(), pil()
    np.testing.assert_array_equal(n(T.CenterCrop(10)(t)), ARR[5:15, 10:20].transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(T.CenterCrop((10, 12))(p)), ARR[5:15, 9:21])
    big = T.CenterCrop((24, 32))(t)
    assert tuple(big.shape) == (3, 24, 32)
    np.testing.assert_array_equal(n(big)[:, 2:22, 1:31], ARR.transpose(2, 0, 1))
    assert n(big)[:, :2].sum() == 0
    np.testing.assert_array_equal(np.asarray(T.CenterCrop((24, 32))(p)),
                                  n(big).transpose(1, 2, 0))
    np.testing.assert_array_equal(n(F.hflip(t)), ARR[:, ::-1].transpose(2, 0, 1))
    np.testing.assert_array_equal(n(F.vflip(t)), ARR[::-1].transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(F.hflip(p)), ARR[:, ::-1])
    np.testing.assert_array_equal(np.asarray(T.RandomVerticalFlip(1.0)(p)), ARR[::-1])
    np.testing.assert_array_equal(n(T.RandomHorizontalFlip(0.0)(t)), n(t))
    np.testing.assert_array_equal(n(F.crop(t, 2, 3, 4, 5)), ARR[2:6, 3:8].transpose(2, 0, 1))
    crops = T.FiveCrop(6)(t)
    assert len(crops) == 5
    np.testing.assert_array_equal(n(crops[3]), ARR[14:, 24:].transpose(2, 0, 1))
    ten = T.TenCrop(6)(p)
    np.testing.assert_array_equal(np.asarray(ten[5]), ARR[:, ::-1][:6, :6])
    with pytest.raises(ValueError):
        T.FiveCrop(40)(t)


def _is_window(big, small):
    h, w = small.shape[-2:]
    for i in range(big.shape[-2] - h + 1):
        for j in range(big.shape[-1] - w + 1):
            if np.array_equal(big[..., i:i + h, j:j + w], small):
                return True
    return False


def test_random_crop_and_reproducibility():
    t = chw()
    glasstorch.manual_seed(3)
    a = [n(T.RandomCrop(8)(t)) for _ in range(5)]
    glasstorch.manual_seed(3)
    b = [n(T.RandomCrop(8)(t)) for _ in range(5)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
        assert _is_window(ARR.transpose(2, 0, 1), x)
    assert any(not np.array_equal(a[0], x) for x in a[1:])
    padded = T.RandomCrop((24, 34), padding=2)(t)
    assert tuple(padded.shape) == (3, 24, 34)
    assert n(padded)[:, :2].sum() == 0
    assert T.RandomCrop((30, 40), pad_if_needed=True, padding_mode="edge")(pil()).size == (40, 30)
    with pytest.raises(ValueError):
        T.RandomCrop(40)(t)


def test_random_resized_crop():
    t = chw()
    glasstorch.manual_seed(0)
    i, j, h, w = T.RandomResizedCrop.get_params(t, (0.08, 1.0), (3 / 4, 4 / 3))
    glasstorch.manual_seed(0)
    out = T.RandomResizedCrop((12, 10))(t)
    assert tuple(out.shape) == (3, 12, 10) and out.dtype == glasstorch.uint8
    np.testing.assert_array_equal(n(out), n(F.resized_crop(t, i, j, h, w, [12, 10])))
    assert 0 <= i <= 20 - h and 0 <= j <= 30 - w
    assert T.RandomResizedCrop(16)(pil()).size == (16, 16)


def test_convert_image_dtype():
    u = chw()
    f = T.ConvertImageDtype(glasstorch.float32)(u)
    np.testing.assert_allclose(n(f), ARR.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    back = F.convert_image_dtype(f, glasstorch.uint8)
    np.testing.assert_array_equal(n(back), ARR.transpose(2, 0, 1))
    i16 = F.convert_image_dtype(u, glasstorch.int16)
    np.testing.assert_array_equal(n(i16), ARR.transpose(2, 0, 1).astype(np.int16) * 128)
    np.testing.assert_array_equal(n(F.convert_image_dtype(i16, glasstorch.uint8)),
                                  ARR.transpose(2, 0, 1))
    with pytest.raises(RuntimeError):
        F.convert_image_dtype(f, glasstorch.int32)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_pad(mode):
    want = np.pad(ARR, [(2, 4), (1, 3), (0, 0)], mode=mode)
    np.testing.assert_array_equal(n(T.Pad((1, 2, 3, 4), padding_mode=mode)(chw())),
                                  want.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(T.Pad((1, 2, 3, 4), padding_mode=mode)(pil())),
                                  want)
    assert n(T.Pad(1, fill=9)(chw()))[0, 0, 0] == 9
    np.testing.assert_array_equal(np.asarray(T.Pad(1, fill=(1, 2, 3))(pil()))[0, 0], [1, 2, 3])


def test_grayscale_and_color():
    p, t = pil(), chw()
    np.testing.assert_array_equal(np.asarray(T.Grayscale()(p)), np.asarray(p.convert("L")))
    g = T.Grayscale(3)(t)
    a = ARR.astype(np.float32)
    want = (0.2989 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]).astype(np.uint8)
    assert tuple(g.shape) == (3, 20, 30)
    assert np.abs(n(g)[1].astype(int) - want).max() <= 1
    f = T.ToTensor()(p)
    np.testing.assert_allclose(n(F.adjust_brightness(f, 0.5)), n(f) * 0.5, rtol=1e-6)
    np.testing.assert_allclose(n(F.adjust_brightness(f, 3.0)), np.clip(n(f) * 3, 0, 1),
                               rtol=1e-6)
    gray = 0.2989 * n(f)[0] + 0.587 * n(f)[1] + 0.114 * n(f)[2]
    np.testing.assert_allclose(n(F.adjust_contrast(f, 0.3)),
                               np.clip(0.3 * n(f) + 0.7 * gray.mean(), 0, 1), atol=1e-5)
    np.testing.assert_allclose(n(F.adjust_saturation(f, 0.0)), np.stack([gray] * 3), atol=1e-5)
    np.testing.assert_allclose(n(F.adjust_hue(f, 0.0)), n(f), atol=1e-5)
    # a hue shift of a full third maps R -> G -> B
    red = glasstorch.zeros(3, 2, 2)
    red[0] = 1.0
    np.testing.assert_allclose(n(F.adjust_hue(red, 1 / 3))[:, 0, 0], [0, 1, 0], atol=1e-5)
    from PIL import ImageEnhance
    np.testing.assert_array_equal(np.asarray(F.adjust_contrast(p, 0.4)),
                                  np.asarray(ImageEnhance.Contrast(p).enhance(0.4)))
    hue_pil = np.asarray(F.adjust_hue(p, 0.2)).astype(int)
    hue_t = n(F.adjust_hue(t, 0.2)).transpose(1, 2, 0).astype(int)
    assert np.mean(np.abs(hue_pil - hue_t)) < 4  # PIL quantises HSV to 8 bits
    glasstorch.manual_seed(1)
    cj = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    a1 = n(cj(t))
    glasstorch.manual_seed(1)
    np.testing.assert_array_equal(a1, n(cj(t)))
    assert cj(p).size == p.size
    with pytest.raises(ValueError):
        T.ColorJitter(hue=0.7)


def test_rotate_affine_perspective():
    sq = RNG.randint(0, 256, (12, 12, 3)).astype(np.uint8)
    t, p = chw(sq), pil(sq)
    r = n(F.rotate(t, 90))
    np.testing.assert_array_equal(r.transpose(1, 2, 0), np.rot90(sq))  # counter-clockwise
    np.testing.assert_array_equal(r.transpose(1, 2, 0), np.asarray(F.rotate(p, 90)))
    # arbitrary angles: tensor and PIL paths agree on almost every pixel
    rt, rp = n(F.rotate(t, 33)).transpose(1, 2, 0), np.asarray(F.rotate(p, 33))
    assert np.mean(np.all(rt == rp, axis=-1)) > 0.9
    ex = F.rotate(chw(), 90, expand=True)
    assert tuple(ex.shape) == (3, 30, 20)
    np.testing.assert_array_equal(n(ex).transpose(1, 2, 0), np.rot90(ARR))
    shifted = n(F.affine(chw(), 0.0, [3, 2], 1.0, 0.0))
    want = np.zeros_like(ARR)
    want[2:, 3:] = ARR[:-2, :-3]
    np.testing.assert_array_equal(shifted.transpose(1, 2, 0), want)
    np.testing.assert_array_equal(np.asarray(F.affine(pil(), 0.0, [3, 2], 1.0, 0.0)), want)
    filled = n(F.affine(chw(), 0.0, [3, 2], 1.0, 0.0, fill=[7, 8, 9]))
    np.testing.assert_array_equal(filled[:, 0, 0], [7, 8, 9])
    corners = [[0, 0], [29, 0], [29, 19], [0, 19]]
    same = F.perspective(T.ToTensor()(pil()), corners, corners)
    np.testing.assert_allclose(n(same), n(T.ToTensor()(pil())), atol=1e-5)
    glasstorch.manual_seed(5)
    outs = [T.RandomRotation(30)(t), T.RandomAffine(20, (0.1, 0.1), (0.8, 1.2), 10)(t),
            T.RandomPerspective(p=1.0)(t)]
    glasstorch.manual_seed(5)
    again = [T.RandomRotation(30)(t), T.RandomAffine(20, (0.1, 0.1), (0.8, 1.2), 10)(t),
             T.RandomPerspective(p=1.0)(t)]
    for a, b in zip(outs, again):
        assert a.shape == t.shape
        np.testing.assert_array_equal(n(a), n(b))
    assert T.RandomAffine(20, shear=(-5, 5, -5, 5))(p).size == p.size


def test_gaussian_blur_matches_torch_conv():
    f = T.ToTensor()(pil())
    out = F.gaussian_blur(f, [5, 3], [1.5, 0.8])
    x = torch.from_numpy(n(f))[None]
    kx = torch.exp(-0.5 * (torch.linspace(-2, 2, 5) / 1.5) ** 2)
    ky = torch.exp(-0.5 * (torch.linspace(-1, 1, 3) / 0.8) ** 2)
    k2 = (ky[:, None] * kx[None, :])
    k2 = (k2 / k2.sum()).expand(3, 1, 3, 5)
    xp = torch.nn.functional.pad(x, (2, 2, 1, 1), mode="reflect")
    want = torch.nn.functional.conv2d(xp, k2, groups=3)[0].numpy()
    np.testing.assert_allclose(n(out), want, atol=1e-5)
    assert T.GaussianBlur(3)(pil()).size == (30, 20)
    with pytest.raises(ValueError):
        T.GaussianBlur(4)


def test_random_erasing_and_composition():
    f = T.ToTensor()(pil())
    glasstorch.manual_seed(2)
    e = T.RandomErasing(p=1.0, value=0.5)(f)
    changed = n(e) != n(f)
    assert changed.any() and np.all(n(e)[changed] == 0.5)
    glasstorch.manual_seed(2)
    np.testing.assert_array_equal(n(T.RandomErasing(p=1.0, value=0.5)(f)), n(e))
    assert np.array_equal(n(T.RandomErasing(p=0.0)(f)), n(f))
    lam = T.Lambda(lambda x: x * 2)
    np.testing.assert_allclose(n(T.Compose([lam, lam])(f)), n(f) * 4)
    np.testing.assert_allclose(n(T.RandomApply([lam], p=1.0)(f)), n(f) * 2)
    np.testing.assert_allclose(n(T.RandomApply([lam], p=0.0)(f)), n(f))
    c = T.RandomChoice([lam, T.Lambda(lambda x: x * 3)], p=[0.0, 1.0])
    np.testing.assert_allclose(n(c(f)), n(f) * 3)
    np.testing.assert_allclose(n(T.RandomOrder([lam, lam])(f)), n(f) * 4)
    with pytest.raises(TypeError):
        T.Lambda(3)
    with pytest.raises(ValueError):
        T.RandomErasing(p=2.0)


def test_batched_tensor_equals_per_image():
    b = glasstorch.stack([chw(), chw().flip(-1)])
    for tr in (T.Resize((8, 9)), T.CenterCrop(7), T.Grayscale(), T.Pad(2, padding_mode="reflect"),
               T.RandomHorizontalFlip(1.0)):
        out = n(tr(b))
        for k in range(2):
            np.testing.assert_array_equal(out[k], n(tr(b[k])))


def test_random_grayscale():
    glasstorch.manual_seed(0)
    g = T.RandomGrayscale(p=1.0)(pil())
    assert g.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(g)[..., 0], np.asarray(pil().convert("L")))


class _Same(Dataset):
    def __init__(self, tr):
        self.tr = tr

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.tr(chw())


def _crops(seed, workers):
    glasstorch.manual_seed(seed)
    loader = DataLoader(_Same(T.RandomCrop(6)), batch_size=1, num_workers=workers)
    return [n(x[0]) for x in loader]


def test_worker_augmentations_differ_and_reproduce():
    a = _crops(0, 2)
    b = _crops(0, 2)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # workers are seeded differently: item 0 (worker 0) and item 1 (worker 1) differ
    assert any(not np.array_equal(a[0], x) for x in a[1:])
    assert not np.array_equal(a[0], a[1])


@pytest.mark.parametrize("op,mag", [("ShearX", 0.23), ("ShearY", -0.23), ("TranslateX", 3.0),
                                    ("TranslateY", -2.0), ("Rotate", 90.0), ("Brightness", 0.5),
                                    ("Posterize", 3), ("Solarize", 128.0),
                                    ("Equalize", 0.0), ("Invert", 0.0), ("Identity", 0.0)])
def test_autoaugment_ops_tensor_equals_pil(op, mag):
    from glasstorch.vision.transforms.autoaugment import _apply_op
    sq = np.random.RandomState(4).randint(30, 200, (16, 16, 3)).astype(np.uint8)
    rt = _apply_op(chw(sq), op, mag, F.InterpolationMode.NEAREST, [0.0, 0.0, 0.0])
    rp = _apply_op(pil(sq), op, mag, F.InterpolationMode.NEAREST, None)
    np.testing.assert_array_equal(n(rt).transpose(1, 2, 0), np.asarray(rp))


def test_color_ops_close_to_pil():
    sq = np.random.RandomState(5).randint(40, 120, (16, 16, 3)).astype(np.uint8)
    for fn in (F.autocontrast, lambda i: F.adjust_saturation(i, 1.7),
               lambda i: F.adjust_sharpness(i, 1.9), lambda i: F.adjust_contrast(i, 0.6)):
        rt = n(fn(chw(sq))).transpose(1, 2, 0).astype(int)
        assert np.abs(rt - np.asarray(fn(pil(sq))).astype(int)).max() <= 1
    np.testing.assert_array_equal(n(F.posterize(chw(sq), 2)), chw(sq).numpy() & 0xC0)
    f = T.ToTensor()(pil(sq))
    np.testing.assert_allclose(n(F.adjust_gamma(f, 2.0)), n(f) ** 2, rtol=1e-5)
    np.testing.assert_allclose(n(F.invert(f)), 1 - n(f))
    with pytest.raises(TypeError):
        F.posterize(f, 3)


@pytest.mark.parametrize("cls", [T.AutoAugment, T.RandAugment, T.TrivialAugmentWide])
def test_auto_augment_policies(cls):
    x, p = chw(), pil()
    glasstorch.manual_seed(7)
    outs = [n(cls()(x)) for _ in range(12)]
    glasstorch.manual_seed(7)
    again = [n(cls()(x)) for _ in range(12)]
    for a, b in zip(outs, again):
        assert a.shape == (3, 20, 30) and a.dtype == np.uint8
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, n(x)) for a in outs)
    for _ in range(5):
        assert cls()(p).size == p.size
    assert tuple(cls()(glasstorch.stack([x, x])).shape) == (2, 3, 20, 30)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_tensor_affine_matches_torch_grid_sample(mode):
    # torchvision's tensor path is grid_sample over an affine grid; rebuild it in real torch
    from glasstorch.vision.transforms.functional import _inverse_affine_matrix
    f = T.ToTensor()(pil())
    h, w = 20, 30
    angle, translate, scale, shear = 17.0, [2, -3], 1.1, [8.0, -4.0]
    got = F.affine(f, angle, translate, scale, shear, interpolation=F.InterpolationMode(mode))
    m = _inverse_affine_matrix([0.0, 0.0], angle, translate, scale, shear)
    theta = torch.tensor([[m[0], m[1] * h / w, m[2] * 2 / w],
                          [m[3] * w / h, m[4], m[5] * 2 / h]], dtype=torch.float64)[None]
    grid = torch.nn.functional.affine_grid(theta, [1, 3, h, w], align_corners=False)
    want = torch.nn.functional.grid_sample(torch.from_numpy(n(f)).double()[None], grid, mode=mode,
                                           padding_mode="zeros", align_corners=False)[0]
    close = np.isclose(n(got), want.numpy(), atol=1e-5)
    assert close.all()
    rot = F.rotate(f, 25.0, interpolation=F.InterpolationMode(mode))
    m = _inverse_affine_matrix([0.0, 0.0], -25.0, [0.0, 0.0], 1.0, [0.0, 0.0])
    theta = torch.tensor([[m[0], m[1] * h / w, m[2] * 2 / w],
                          [m[3] * w / h, m[4], m[5] * 2 / h]], dtype=torch.float64)[None]
    grid = torch.nn.functional.affine_grid(theta, [1, 3, h, w], align_corners=False)
    want = torch.nn.functional.grid_sample(torch.from_numpy(n(f)).double()[None], grid, mode=mode,
                                           padding_mode="zeros", align_corners=False)[0]
    np.testing.assert_allclose(n(rot), want.numpy(), atol=1e-5)


def test_perspective_coefficients_map_corners():
    from glasstorch.vision.transforms.functional import _perspective_coeffs
    glasstorch.manual_seed(11)
    start, end = T.RandomPerspective.get_params(30, 20, 0.6)
    a, b, c, d, e, f, g, h = _perspective_coeffs(start, end)
    for (sx, sy), (ex, ey) in zip(start, end):
        den = g * ex + h * ey + 1
        assert abs((a * ex + b * ey + c) / den - sx) < 1e-6
        assert abs((d * ex + e * ey + f) / den - sy) < 1e-6
    t = chw()
    rt = n(F.perspective(t, start, end, F.InterpolationMode.NEAREST)).transpose(1, 2, 0)
    rp = np.asarray(F.perspective(pil(), start, end, F.InterpolationMode.NEAREST))
    assert np.mean(np.all(rt == rp, axis=-1)) > 0.9
