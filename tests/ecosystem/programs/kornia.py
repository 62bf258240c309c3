"""kornia: filters, color conversions, geometric warps, losses and morphology on images."""

import kornia
import kornia.augmentation as K
import torch

from .._support import case, randn


def version():
    """The version of the library under test."""
    return kornia.__version__


def _images(seed=0):
    return randn(seed, 2, 3, 10, 12).sigmoid()


@case
def filters(ctx):
    """Gaussian/box/median blurs, Sobel and Laplacian, Canny edges, with gradients."""
    img = _images().requires_grad_()
    f = kornia.filters
    out = {"gaussian": f.gaussian_blur2d(img, (5, 5), (1.5, 1.5)),
           "box": f.box_blur(img, (3, 3)), "median": f.median_blur(img, (3, 3)),
           "sobel": f.sobel(img), "laplacian": f.laplacian(img, 3),
           "unsharp": f.unsharp_mask(img, (3, 3), (1.0, 1.0))}
    magnitude, edges = f.canny(img.detach())
    out["canny_magnitude"], out["canny_edges"] = magnitude, edges
    sum(v.sum() for v in list(out.values())[:6]).backward()
    out["grad.img"] = img.grad
    return out


@case
def color(ctx):
    """RGB to grayscale/HSV/LAB/YCbCr and back."""
    img = _images(1)
    c = kornia.color
    hsv, lab, ycc = c.rgb_to_hsv(img), c.rgb_to_lab(img), c.rgb_to_ycbcr(img)
    return {"gray": c.rgb_to_grayscale(img), "hsv": hsv, "hsv_back": c.hsv_to_rgb(hsv),
            "lab": lab, "lab_back": c.lab_to_rgb(lab), "ycbcr": ycc,
            "ycbcr_back": c.ycbcr_to_rgb(ycc), "hls": c.rgb_to_hls(img)}


def _warp_inputs():
    angle = torch.tensor([30.0, -45.0])
    center = torch.tensor([[6.0, 5.0], [5.0, 4.0]])
    src = torch.tensor([[[0.0, 0.0], [11.0, 0.0], [11.0, 9.0], [0.0, 9.0]]]).repeat(2, 1, 1)
    dst = src + torch.tensor([[[1.0, 2.0], [-2.0, 1.0], [-1.0, -2.0], [2.0, -1.0]]])
    g = kornia.geometry
    return angle, g.get_rotation_matrix2d(center, angle, torch.ones(2, 2)), \
        g.get_perspective_transform(src, dst)


@case
def geometry(ctx):
    """Rotation matrices, a homography from four points, resize, pyramid, flips."""
    img = _images(2)
    g = kornia.geometry
    _, mat, homography = _warp_inputs()
    return {"rotation_matrix": mat, "homography": homography,
            "resize": g.resize(img, (6, 7), antialias=True),
            "pyrdown": g.pyrdown(img), "flip": g.hflip(img), "vflip": g.vflip(img)}


@case
def warps(ctx):
    """Affine and perspective warps and rotation (grid_sample under normalized coordinates)."""
    img = _images(2)
    g = kornia.geometry
    angle, mat, homography = _warp_inputs()
    return {"affine": g.warp_affine(img, mat, (10, 12)), "rotate": g.rotate(img, angle),
            "perspective": g.warp_perspective(img, homography, (10, 12))}


@case
def losses(ctx):
    """SSIM, PSNR, total variation and focal loss; morphology."""
    a, b = _images(3), _images(4).requires_grad_()
    out = {"ssim": kornia.losses.ssim_loss(a, b, 5), "psnr": kornia.metrics.psnr(a, b, 1.0),
           "tv": kornia.losses.total_variation(b).sum(),
           "dilation": kornia.morphology.dilation(a, torch.ones(3, 3)),
           "opening": kornia.morphology.opening(a, torch.ones(3, 3))}
    (out["ssim"] + out["tv"]).backward()
    out["grad.b"] = b.grad
    logits = randn(5, 4, 3, 5, 5)
    labels = torch.arange(4 * 25).reshape(4, 5, 5) % 3
    out["focal"] = kornia.losses.focal_loss(logits, labels, alpha=0.5, gamma=2.0,
                                            reduction="mean")
    return out


@case
def augmentation(ctx):
    """Deterministic augmentation modules: normalize, center crop, resize, in a Sequential."""
    img = _images(5)
    pipe = K.AugmentationSequential(K.CenterCrop((8, 8)), K.Resize((6, 6)),
                                    K.Normalize(mean=torch.tensor([0.5, 0.4, 0.3]),
                                                std=torch.tensor([0.2, 0.2, 0.2])))
    return {"out": pipe(img)}
