"""torch.nn.functional padding, resampling and vision helpers (torch's signatures)."""

from __future__ import annotations

from ..._core.warn import warn_user
from ..._ops import vision as _V
from ..._ops.grid_sample import grid_sampler as _grid_sampler

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
           "affine_grid", "grid_sample", "fold", "unfold"]

pixel_shuffle = _V.pixel_shuffle
pixel_unshuffle = _V.pixel_unshuffle
channel_shuffle = _V.channel_shuffle
native_channel_shuffle = _V.native_channel_shuffle


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims; modes constant, reflect, replicate, circular."""
    return _V.pad_nd(input, pad, mode, value)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample to ``size`` or by ``scale_factor`` (nearest, nearest-exact, linear, bilinear,
    bicubic, trilinear, area; antialias for bilinear/bicubic)."""
    return _V.upsample(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                       antialias)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    warn_user("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warn_user("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warn_user("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid for ``grid_sample`` from affine matrices ``theta``."""
    if align_corners is None:
        warn_user("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warn_user("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an issue for standard "
                      "interpolation, but may be for pixel-level sampling. Please make sure "
                      "that this is the desired behavior.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _V.affine_grid_generator(theta, size, align_corners)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks of a batched 4-D (or unbatched 3-D) input (im2col)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return _V.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding local blocks back into a tensor (col2im)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    return _V.col2im(input, output_size, kernel_size, dilation, padding, stride)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalised locations of ``grid`` ((x, y[, z]) in [-1, 1])."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_user("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", UserWarning)
        align_corners = False
    return _grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                         align_corners)
