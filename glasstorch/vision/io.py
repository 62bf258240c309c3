"""glasstorch.vision.io: torchvision.io's image functions (read, decode, encode, write).

Images decode into uint8 ``(C, H, W)`` tensors (uint16 for 16-bit PNGs) and encode into 1-D
uint8 tensors of the file's bytes, as torchvision's do; the codecs are Pillow's (libpng,
libjpeg-turbo, libwebp, giflib-free GIF reader), so decoded pixels match torchvision's for
lossless formats. torchvision's open-source build has no video functions, and neither does
this module.
"""

from __future__ import annotations

import enum
import io as _io
import os

from ._pil import pil_image

__all__ = ["ImageReadMode", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
           "decode_webp", "encode_jpeg", "encode_png", "read_file", "read_image",
           "write_file", "write_jpeg", "write_png"]


class ImageReadMode(enum.Enum):
    """The channels a decoded image is converted to (``UNCHANGED`` keeps the file's)."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA  # alias, as in torchvision


def _torch():
    import glasstorch
    return glasstorch


def _bytes_tensor(data):
    t = _torch()
    return t.frombuffer(bytearray(data), dtype=t.uint8) if data else t.empty(0, dtype=t.uint8)


def _check_bytes(input, fn):
    t = _torch()
    if not isinstance(input, t.Tensor):
        raise TypeError(f"{fn}: expected a 1-D uint8 tensor of encoded bytes, got "
                        f"{type(input).__name__}")
    if input.dtype != t.uint8:
        raise RuntimeError(f"Expected a torch.uint8 tensor, got {input.dtype}")
    if input.dim() != 1 or input.numel() == 0:
        raise RuntimeError(f"Expected a non empty 1-dimensional tensor, got shape "
                           f"{tuple(input.shape)}")
    return bytes(input.contiguous().numpy().tobytes())


def read_file(path) -> object:
    """The bytes of the file at ``path`` as a 1-D uint8 tensor."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise RuntimeError(f"File does not exist: {path}")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise RuntimeError(f"File is empty: {path}")
    return _bytes_tensor(data)


def write_file(filename, data) -> None:
    """Write the bytes held by the 1-D uint8 tensor ``data`` to ``filename``."""
    t = _torch()
    if data.dtype != t.uint8 or data.dim() != 1:
        raise RuntimeError("Input tensor must be a 1-dimensional uint8 tensor, got "
                           f"{data.dtype} of shape {tuple(data.shape)}")
    with open(os.fspath(filename), "wb") as f:
        f.write(data.contiguous().numpy().tobytes())


def _mode(mode):
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode must be an ImageReadMode or its name, got {mode!r}")
    return mode


def _to_tensor(img, mode, apply_exif_orientation):
    """A decoded Pillow image as a ``(C, H, W)`` tensor in the channels ``mode`` asks for."""
    import numpy as np

    t = _torch()
    if apply_exif_orientation:
        from PIL import ImageOps
        img = ImageOps.exif_transpose(img)
    if img.mode in ("I;16", "I;16B", "I;16L") and mode in (ImageReadMode.UNCHANGED,
                                                            ImageReadMode.GRAY):
        arr = np.asarray(img, dtype=np.uint16)[None]
        return t.from_numpy(np.ascontiguousarray(arr))
    has_alpha = img.mode in ("LA", "RGBA", "PA") or "transparency" in img.info
    gray = img.mode in ("1", "L", "LA", "I", "I;16", "I;16B", "I;16L", "F")
    if mode is ImageReadMode.UNCHANGED:
        target = ("LA" if has_alpha else "L") if gray else ("RGBA" if has_alpha else "RGB")
    else:
        target = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA",
                  ImageReadMode.RGB: "RGB", ImageReadMode.RGB_ALPHA: "RGBA"}[mode]
    if img.mode == "P" and has_alpha:
        img = img.convert("RGBA")   # a palette with transparency expands to its colours first
    if img.mode != target:
        img = img.convert(target)
    arr = np.asarray(img, dtype=np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return t.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def _decode(input, mode, apply_exif_orientation, fn, formats=None):
    data = _check_bytes(input, fn)
    Image = pil_image()
    try:
        img = Image.open(_io.BytesIO(data), formats=formats)
        img.load()
    except Exception as e:  # Pillow raises several types for a bad or unknown stream
        raise RuntimeError(f"{fn}: could not decode the image ({e})") from None
    return _to_tensor(img, _mode(mode), apply_exif_orientation)


def decode_png(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode PNG bytes into a ``(C, H, W)`` uint8 (uint16 for 16-bit files) tensor."""
    return _decode(input, mode, apply_exif_orientation, "decode_png", ["PNG"])


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu",
                apply_exif_orientation=False):
    """Decode JPEG bytes (or a list of them) into ``(C, H, W)`` uint8 tensor(s) on CPU."""
    t = _torch()
    device = t.device(device)
    if device.type != "cpu":
        raise RuntimeError(f"decode_jpeg on device {device} needs a CUDA build of torchvision; "
                           "glasstorch decodes on the CPU")
    if isinstance(input, list):
        if not input:
            raise ValueError("Input list must contain at least one element")
        if not all(isinstance(x, t.Tensor) for x in input):
            raise ValueError("All elements of the input list must be tensors.")
        return [_decode(x, mode, apply_exif_orientation, "decode_jpeg", ["JPEG"])
                for x in input]
    return _decode(input, mode, apply_exif_orientation, "decode_jpeg", ["JPEG"])


def decode_webp(input, mode=ImageReadMode.UNCHANGED):
    """Decode WEBP bytes into a ``(C, H, W)`` uint8 tensor."""
    return _decode(input, mode, False, "decode_webp", ["WEBP"])


def decode_gif(input):
    """Decode GIF bytes: ``(C, H, W)`` for one frame, ``(N, C, H, W)`` for an animation,
    always RGB."""
    data = _check_bytes(input, "decode_gif")
    Image = pil_image()
    t = _torch()
    try:
        img = Image.open(_io.BytesIO(data), formats=["GIF"])
    except Exception as e:
        raise RuntimeError(f"decode_gif: could not decode the image ({e})") from None
    frames = []
    for i in range(getattr(img, "n_frames", 1)):
        img.seek(i)
        frames.append(_to_tensor(img.convert("RGB"), ImageReadMode.RGB, False))
    return frames[0] if len(frames) == 1 else t.stack(frames)


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode a JPEG, PNG, GIF or WEBP image given as bytes (1-D uint8 tensor) or a path."""
    t = _torch()
    if not isinstance(input, t.Tensor):
        input = read_file(input)
    data = _check_bytes(input, "decode_image")
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return decode_gif(input)
    return _decode(input, mode, apply_exif_orientation, "decode_image",
                   ["JPEG", "PNG", "WEBP"])


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Read and decode the image file at ``path`` (see ``decode_image``)."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _to_pil(input, fn):
    import numpy as np

    t = _torch()
    if input.dtype != t.uint8:
        raise RuntimeError(f"{fn}: input tensor dtype should be uint8, got {input.dtype}")
    if input.dim() == 2:
        input = input.unsqueeze(0)
    if input.dim() != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError(f"{fn}: the number of channels should be 1 or 3, got shape "
                           f"{tuple(input.shape)}")
    arr = np.ascontiguousarray(input.numpy().transpose(1, 2, 0))
    return pil_image().fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)


def encode_png(input, compression_level=6):
    """Encode a ``(C, H, W)`` uint8 image (C of 1 or 3) as PNG bytes in a 1-D uint8 tensor."""
    if not 0 <= compression_level <= 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    buf = _io.BytesIO()
    _to_pil(input, "encode_png").save(buf, format="PNG", compress_level=compression_level)
    return _bytes_tensor(buf.getvalue())


def write_png(input, filename, compression_level=6):
    """Encode ``input`` as PNG and write it to ``filename``."""
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input, quality=75):
    """Encode a ``(C, H, W)`` uint8 image (or a list of them) as JPEG bytes."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is "
                             "passed")
        return [encode_jpeg(x, quality) for x in input]
    buf = _io.BytesIO()
    _to_pil(input, "encode_jpeg").save(buf, format="JPEG", quality=quality)
    return _bytes_tensor(buf.getvalue())


def write_jpeg(input, filename, quality=75):
    """Encode ``input`` as JPEG and write it to ``filename``."""
    write_file(filename, encode_jpeg(input, quality))
