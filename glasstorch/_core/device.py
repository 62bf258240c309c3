"""torch.device: parsing and comparison. Only the CPU runs tensors for now."""

from __future__ import annotations

_KNOWN_TYPES = ("cpu", "cuda", "mps", "meta", "xpu")


class device:
    """A device such as ``device('cpu')`` or ``device('cuda', 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("torch.device(): a device object cannot be given with an index")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):  # torch.device(0) means the current accelerator
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - "
                            f"got ({type!r})")
        name, sep, idx = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in _KNOWN_TYPES:
            raise RuntimeError(
                f"Expected one of cpu, cuda, mps, meta, xpu device type at start of device "
                f"string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type, self.index = name, index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


CPU = device("cpu")


# torch.set_default_device: where factories put tensors when no device is given (None: CPU)
default_device = [None]


def as_device(d) -> device:
    """Normalise a device argument and refuse devices this build cannot run on."""
    if d is None:
        d = default_device[0]
        if d is None:
            return CPU
    if d is CPU:
        return CPU
    if not isinstance(d, device):
        d = device(d)
    if d.type == "cpu":
        return CPU
    if d.type == "cuda":
        raise RuntimeError(
            "Torch not compiled with CUDA enabled: glasstorch runs on the CPU for now "
            f"(requested device '{d}'). Check glasstorch.cuda.is_available() first.")
    raise RuntimeError(f"glasstorch cannot place tensors on device '{d}': only 'cpu' is supported")
