"""torch.device: parsing and comparison. Tensors live on the CPU, or on 'meta' (no data)."""

from __future__ import annotations

import re
import warnings

# every device type torch parses, in the order its error message lists them
_KNOWN_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_INDEX = re.compile(r"0|[1-9][0-9]*")  # torch refuses leading zeros, signs and spaces


class device:
    """A device such as ``device('cpu')`` or ``device('cuda', 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("torch.device(): a device object cannot be given with an index")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            # torch.device(0) means "the current accelerator", and there is none
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({_type_name(type)}), but expected one of: (torch.device device) "
                            f"or (str type, int index = -1)")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{_type_name(index)}")
        if not type:
            raise RuntimeError("Device string must not be empty")
        name, sep, idx = type.partition(":")
        if sep:
            if not _INDEX.fullmatch(idx) or (name and not name.isalnum()):
                raise RuntimeError(f"Invalid device string: '{type}'")
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(idx)
        if name not in _KNOWN_TYPES:
            if not name.isalnum():
                raise RuntimeError(f"Invalid device string: '{type}'")
            raise RuntimeError(f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start "
                               f"of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        if name == "mkldnn":
            warnings.warn("'mkldnn' is no longer used as device type. So torch.device('mkldnn') "
                          "will be deprecated and removed in the future. Please use other valid "
                          "device types instead.", UserWarning, stacklevel=2)
        self.type, self.index = name, index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # only devices compare equal: torch answers False for strings ('cpu' included), ints,
        # None and any other object, never raising
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __lt__(self, other):
        raise TypeError("comparison not implemented")

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        # ``with torch.device(d):`` makes d the factories' default device inside the block,
        # as torch's device context does (so a 'meta' block fails loudly here instead of
        # silently building real CPU tensors)
        _context_stack.append(default_device[0])
        default_device[0] = None if self.type == "cpu" and self.index is None else self
        return self

    def __exit__(self, *exc):
        default_device[0] = _context_stack.pop()
        return False


CPU = device("cpu")
META = device("meta")


def _type_name(value):
    return type(value).__name__


# torch.set_default_device: where factories put tensors when no device is given (None: CPU)
default_device = [None]
_context_stack = []  # the defaults that enclosing ``with device(...)`` blocks replaced


def as_device(d, meta=False) -> device:
    """Normalise a device argument and refuse devices this build cannot run on; 'meta' is
    accepted where the caller can build meta tensors (``meta=True``)."""
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
    if d.type == "meta":
        if meta:
            return META
        raise NotImplementedError(f"glasstorch: this operation has no meta-device version yet "
                                  f"(requested device '{d}')")
    if d.type == "cuda":
        raise AssertionError(  # torch's CPU build raises this type
            "Torch not compiled with CUDA enabled: glasstorch runs on the CPU for now "
            f"(requested device '{d}'). Check glasstorch.cuda.is_available() first.")
    raise RuntimeError(f"glasstorch cannot place tensors on device '{d}': only 'cpu' is supported")
