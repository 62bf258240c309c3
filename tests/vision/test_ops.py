"""glasstorch.vision.ops against brute-force references and real torch formulas."""
import math

import numpy as np
import pytest
import torch

import glasstorch
from glasstorch.vision import ops


def _boxes(rng, k):
    xy = rng.rand(k, 2) * 20
    wh = rng.rand(k, 2) * 10 + 0.5
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float32)


def _iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    area = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])
    return inter / (area - inter)


def test_box_area_iou():
    rng = np.random.RandomState(0)
    a, b = _boxes(rng, 6), _boxes(rng, 4)
    ga, gb = glasstorch.from_numpy(a), glasstorch.from_numpy(b)
    np.testing.assert_allclose(ops.box_area(ga).numpy(), (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]),
                               rtol=1e-6)
    want = np.array([[_iou(x, y) for y in b] for x in a])
    got = ops.box_iou(ga, gb)
    assert got.dtype == glasstorch.float32 and tuple(got.shape) == (6, 4)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        ops.box_iou(ga[:, :3], gb)
    c = ops.box_convert(ga, "xyxy", "cxcywh")
    np.testing.assert_allclose(ops.box_convert(c, "cxcywh", "xyxy").numpy(), a, rtol=1e-5)
    np.testing.assert_allclose(ops.box_convert(ga, "xyxy", "xywh").numpy()[:, 2],
                               a[:, 2] - a[:, 0], rtol=1e-5)


def _nms_ref(b, s, thr):
    order = sorted(range(len(s)), key=lambda i: -s[i])
    keep = []
    for i in order:
        if all(_iou(b[i], b[k]) <= thr for k in keep):
            keep.append(i)
    return keep


@pytest.mark.parametrize("thr", [0.0, 0.3, 0.7])
def test_nms(thr):
    rng = np.random.RandomState(1)
    b = _boxes(rng, 40)
    s = rng.rand(40).astype(np.float32)
    keep = ops.nms(glasstorch.from_numpy(b), glasstorch.from_numpy(s), thr)
    assert keep.dtype == glasstorch.int64
    assert keep.tolist() == _nms_ref(b, s, thr)
    idxs = glasstorch.from_numpy(rng.randint(0, 3, 40))
    bk = ops.batched_nms(glasstorch.from_numpy(b), glasstorch.from_numpy(s), idxs, thr).tolist()
    want = []
    for cls in range(3):
        members = [i for i in range(40) if int(idxs[i]) == cls]
        want += [members[i] for i in _nms_ref(b[members], s[members], thr)]
    assert sorted(bk) == sorted(want)
    assert [s[i] for i in bk] == sorted((s[i] for i in bk), reverse=True)
    empty = ops.nms(glasstorch.zeros(0, 4), glasstorch.zeros(0), 0.5)
    assert tuple(empty.shape) == (0,)


def _bilinear(f, y, x):
    h, w = f.shape
    if y < -1 or y > h or x < -1 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * f[y0, x0] + (1 - ly) * lx * f[y0, x1] + ly * (1 - lx) * f[y1, x0]
            + ly * lx * f[y1, x1])


def _roi_ref(x, rois, ph, pw, scale, ratio, aligned):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * scale - off, y1 * scale - off
        rw, rh = x2 * scale - off - sx, y2 * scale - off - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        for c in range(x.shape[1]):
            for i in range(ph):
                for j in range(pw):
                    acc = 0.0
                    for iy in range(gh):
                        for ix in range(gw):
                            yy = sy + i * rh / ph + (iy + 0.5) * rh / ph / gh
                            xx = sx + j * rw / pw + (ix + 0.5) * rw / pw / gw
                            acc += _bilinear(x[int(b), c], yy, xx)
                    out[r, c, i, j] = acc / max(gh * gw, 1)
    return out


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [-1, 2])
def test_roi_align(aligned, ratio):
    rng = np.random.RandomState(2)
    x = rng.randn(2, 2, 9, 11).astype(np.float32)
    rois = np.array([[0, 1.2, 0.5, 7.9, 6.1], [1, -2.0, -1.0, 4.0, 3.0], [1, 3, 2, 3.5, 2.2],
                     [0, 0, 0, 22, 18]], np.float32)
    got = ops.roi_align(glasstorch.from_numpy(x), glasstorch.from_numpy(rois), (3, 4),
                        spatial_scale=0.5, sampling_ratio=ratio,
                        aligned=aligned)
    want = _roi_ref(x, rois, 3, 4, 0.5, ratio, aligned)
    assert tuple(got.shape) == (4, 2, 3, 4) and got.dtype == glasstorch.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
    as_list = ops.roi_align(glasstorch.from_numpy(x),
                            [glasstorch.from_numpy(rois[[0, 3], 1:]),
                             glasstorch.from_numpy(rois[[1, 2], 1:])], (3, 4), 0.5, ratio,
                            aligned)
    np.testing.assert_allclose(as_list.numpy(), want[[0, 3, 1, 2]], rtol=1e-4, atol=1e-5)


def test_roi_align_identity_and_grad():
    x = glasstorch.arange(36, dtype=glasstorch.float32).reshape(1, 1, 6, 6).requires_grad_()
    out = ops.roi_align(x, glasstorch.tensor([[0.0, 0, 0, 6, 6]]), 6, sampling_ratio=1,
                        aligned=True)
    np.testing.assert_array_equal(out.detach().numpy()[0], x.detach().numpy()[0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((1, 1, 6, 6), np.float32))
    m = ops.RoIAlign(2, 1.0, 2)
    assert tuple(m(x, glasstorch.tensor([[0.0, 1, 1, 4, 4]])).shape) == (1, 1, 2, 2)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("alpha", [0.25, -1.0])
def test_sigmoid_focal_loss(reduction, alpha):
    rng = np.random.RandomState(3)
    logits = rng.randn(5, 3).astype(np.float32)
    targets = (rng.rand(5, 3) > 0.5).astype(np.float32)
    x = glasstorch.from_numpy(logits).requires_grad_()
    got = ops.sigmoid_focal_loss(x, glasstorch.from_numpy(targets), alpha, 2.0, reduction)
    tx = torch.from_numpy(logits).requires_grad_()
    tt = torch.from_numpy(targets)
    p = torch.sigmoid(tx)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(tx, tt, reduction="none")
    p_t = p * tt + (1 - p) * (1 - tt)
    want = ce * (1 - p_t) ** 2
    if alpha >= 0:
        want = (alpha * tt + (1 - alpha) * (1 - tt)) * want
    want = {"none": want, "mean": want.mean(), "sum": want.sum()}[reduction]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-7)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError):
        ops.sigmoid_focal_loss(x, glasstorch.from_numpy(targets), reduction="avg")
