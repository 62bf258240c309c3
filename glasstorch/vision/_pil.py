"""Lazy access to Pillow, an optional dependency of glasstorch.vision."""

_Image = None


def pil_image():
    """Return ``PIL.Image``, importing it on first use with a clear error when missing."""
    global _Image
    if _Image is None:
        try:
            from PIL import Image
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("glasstorch.vision needs Pillow for PIL images; install it with "
                              "`pip install pillow`") from e
        _Image = Image
    return _Image


def is_pil(img):
    """True when ``img`` is a PIL image (without importing Pillow when it is not loaded)."""
    if _Image is not None:
        return isinstance(img, _Image.Image)
    import sys
    mod = sys.modules.get("PIL.Image")
    return mod is not None and isinstance(img, mod.Image)
