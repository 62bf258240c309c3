"""Image utilities: make_grid, save_image, draw_bounding_boxes."""
import math

import numpy as np

import glasstorch

from ._pil import pil_image

__all__ = ["make_grid", "save_image", "draw_bounding_boxes"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """Tile a batch ``B x C x H x W`` (or a list of CHW tensors) into one ``C x H' x W'`` image,
    ``nrow`` images per row with ``padding`` pixels of ``pad_value`` between them."""
    if isinstance(tensor, (list, tuple)):
        tensor = glasstorch.stack(list(tensor), dim=0)
    if not isinstance(tensor, glasstorch.Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.shape[0] == 1:
            tensor = glasstorch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.shape[1] == 1:
        tensor = glasstorch.cat((tensor, tensor, tensor), 1)
    if tensor.dim() != 4:
        raise ValueError(f"make_grid expects a 2-, 3- or 4-D tensor, got {tensor.dim()} dims")
    if normalize:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")

        def norm_range(t, rng):
            lo, hi = (float(rng[0]), float(rng[1])) if rng is not None else \
                (float(t.min()), float(t.max()))
            t.clamp_(min=lo, max=hi)
            t.sub_(lo).div_(max(hi - lo, 1e-5))

        if scale_each:
            for t in tensor:
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)
    if tensor.shape[0] == 1:
        return tensor.squeeze(0)
    nmaps = tensor.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.shape[2] + padding), int(tensor.shape[3] + padding)
    grid = glasstorch.full((tensor.shape[1], height * ymaps + padding, width * xmaps + padding),
                           pad_value, dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            top, left = y * height + padding, x * width + padding
            grid[:, top:top + height - padding, left:left + width - padding] = tensor[k]
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor (or batch, tiled with :func:`make_grid`) as an image file with Pillow."""
    grid = make_grid(tensor, **kwargs)
    arr = grid.detach().to(glasstorch.float32).mul(255).add_(0.5).clamp_(0, 255)
    arr = arr.to(glasstorch.uint8).permute(1, 2, 0).numpy()
    pil_image().fromarray(np.ascontiguousarray(arr)).save(fp, format=format)


def _color(c, n_channels):
    from PIL import ImageColor
    if isinstance(c, str):
        c = ImageColor.getrgb(c)
    c = tuple(int(v) for v in c)
    return c[:n_channels] if n_channels == 3 else c


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1,
                        font=None, font_size=None, label_colors=None):
    """Draw ``boxes`` (N x 4, xyxy) on a uint8 ``C x H x W`` image (C = 1 or 3); returns a new
    uint8 tensor. ``fill`` shades the boxes at 30% opacity."""
    from PIL import ImageDraw, ImageFont
    Image = pil_image()
    if not isinstance(image, glasstorch.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if image.dtype != glasstorch.uint8:
        raise ValueError(f"The image dtype must be uint8, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    boxes = glasstorch.as_tensor(boxes)
    if boxes.dim() != 2 or (boxes.shape[0] and boxes.shape[1] != 4):
        raise ValueError(f"boxes must be of shape (N, 4), got {tuple(boxes.shape)}")
    if bool(((boxes[:, 0] > boxes[:, 2]) | (boxes[:, 1] > boxes[:, 3])).any()):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")
    n = boxes.shape[0]
    if n == 0:
        import warnings
        warnings.warn("boxes doesn't contain any box. No box was drawn", stacklevel=2)
        return image
    if labels is not None and len(labels) != n:
        raise ValueError(f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. Please "
                         "specify labels for each box.")
    palette = ["red", "green", "blue", "yellow", "purple", "orange", "cyan", "magenta"]
    if colors is None:
        colors = [palette[i % len(palette)] for i in range(n)]
    elif isinstance(colors, (str, tuple)):
        colors = [colors] * n
    elif len(colors) < n:
        raise ValueError(f"Number of colors ({len(colors)}) is less than number of boxes ({n}).")
    arr = image.permute(1, 2, 0).numpy()
    gray = arr.shape[2] == 1
    img = Image.fromarray(np.ascontiguousarray(np.repeat(arr, 3, axis=2) if gray else arr))
    draw = ImageDraw.Draw(img, "RGBA" if fill else None)
    txt_font = ImageFont.load_default() if font is None else \
        ImageFont.truetype(font=font, size=font_size or 10)
    for i, box in enumerate(boxes.tolist()):
        color = _color(colors[i], 3)
        if fill:
            draw.rectangle(box, width=width, outline=color, fill=color + (100,))
        else:
            draw.rectangle(box, width=width, outline=color)
        if labels is not None:
            tc = color if label_colors is None else _color(
                label_colors if isinstance(label_colors, (str, tuple)) else label_colors[i], 3)
            margin = width + 1
            draw.text((box[0] + margin, box[1] + margin), labels[i], fill=tc, font=txt_font)
    out = np.asarray(img)
    if gray:
        out = out.mean(axis=2, keepdims=True).round().astype(np.uint8) if fill else out[..., :1]
    return glasstorch.from_numpy(np.ascontiguousarray(out.transpose(2, 0, 1)))
