"""glasstorch._C: the names of torch's C extension module that Python code reaches for.

torch._C is where torch's compiled core lives; libraries touch a handful of its names directly
(``torch._C._log_api_usage_once`` in every torchmetrics ``Metric``, ``_nn._parse_to`` in
lightning and accelerate, ``from torch._C import _TensorMeta``). glasstorch has no C core: each
name here is the Python piece of glasstorch that does what torch's binding does on a CPU build.
"""

from __future__ import annotations

from .._core.device import device as _device
from .._core.random import Generator
from .._ops.linalg import LinAlgError as _LinAlgError  # noqa: F401 (torch._C._LinAlgError)
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.grad_mode import set_grad_enabled as _set_grad_mode
from . import _nn

# torch.Tensor's metaclass; glasstorch's Tensor is an ordinary class, so it is ``type``.
_TensorMeta = type(Tensor)


def _log_api_usage_once(event: str) -> None:
    """Record that an API was used (torch sends it to a logging hook that a CPU build leaves
    unset, so nothing is visible); the argument must be a str, as torch requires."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")


def _log_api_usage_metadata(event: str, metadata_map: dict) -> None:
    """Like ``_log_api_usage_once`` with a metadata dict: no hook is installed, nothing is
    visible."""
    if not (isinstance(event, str) and isinstance(metadata_map, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata_map.items())):
        raise TypeError("_log_api_usage_metadata(): incompatible function arguments: expected "
                        "(str, Mapping[str, str])")


def _get_tracing_state():
    """None: no TorchScript tracer is running (glasstorch has none)."""
    return None


def _is_tracing() -> bool:
    """False: no TorchScript tracer is running."""
    return False


def _are_functorch_transforms_active() -> bool:
    """Whether code runs inside a torch.func transform (grad, jvp, vmap) now."""
    from .._functorch.pyfunctorch import transform_stack
    return bool(transform_stack)


def _set_grad_enabled(enabled: bool) -> None:
    """Switch grad mode on or off for this thread (``torch.set_grad_enabled`` without the
    context-manager part)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    _set_grad_mode(enabled)


def _get_accelerator(check: bool | None = None) -> _device:
    """The accelerator device type in use: ``device('cpu')``, as on a CPU-only torch, since
    glasstorch has no accelerator; with ``check=True`` that absence is an error."""
    if check:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return _device("cpu")


def _get_privateuse1_backend_name() -> str:
    """The name of torch's out-of-tree backend slot: 'privateuseone' until one is renamed
    (glasstorch registers none)."""
    return "privateuseone"


# -- torch.Stream / torch.Event: the device-generic stream and event objects. On the CPU work
# runs in order as it is issued, so the one stream of a device is always idle and there are no
# events to record (torch's CPU backend refuses them the same way).

_STREAM_DEVICE_TYPES = {"cpu": 0, "meta": 14}


def _stream_device(device) -> _device:
    if device is None:
        return _device("cpu")
    if isinstance(device, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    d = device if isinstance(device, _device) else _device(device)
    if d.type not in _STREAM_DEVICE_TYPES:
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return _device(d.type)


class Stream:
    """An in-order queue of work on a device (``torch.Stream``). glasstorch runs on the CPU,
    where every op finishes before the next starts, so a stream is always idle (``query()`` is
    True) and ``with stream:`` changes nothing."""

    __slots__ = ("device",)

    def __init__(self, device=None, *, priority: int = 0):
        self.device = _stream_device(device)

    @property
    def device_type(self) -> int:
        """torch's integer code of the device type (0 for CPU)."""
        return _STREAM_DEVICE_TYPES[self.device.type]

    @property
    def device_index(self) -> int:
        """-1: CPU streams belong to no numbered device."""
        return -1

    @property
    def stream_id(self) -> int:
        """0: a CPU device has one stream."""
        return 0

    @property
    def native_handle(self):
        """RuntimeError: there is no backend stream object to hand out."""
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def query(self) -> bool:
        """True: all work issued to a CPU stream has finished."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: already done on the CPU."""

    def is_capturing(self) -> bool:
        """False: no graph capture runs on a CPU stream."""
        return False

    def wait_event(self, event) -> None:
        """Make the stream wait for ``event``: nothing to wait for on the CPU."""

    def wait_stream(self, stream) -> None:
        """RuntimeError: waiting on another stream needs events, which the CPU backend lacks."""
        self._no_events()

    def record_event(self, event=None):
        """RuntimeError: the CPU backend has no events."""
        self._no_events()

    def _no_events(self):
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        return (isinstance(other, Stream) and other.device == self.device
                and other.stream_id == self.stream_id)

    def __hash__(self):
        return hash((self.device, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """A marker in a stream (``torch.Event``). The CPU backend cannot record events, as in
    torch: ``record`` raises, ``query``/``wait``/``synchronize`` have nothing to wait for."""

    __slots__ = ("device", "_flag")

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        self.device = _stream_device(device)
        self._flag = 1 if enable_timing else 0   # torch's BACKEND_DEFAULT / PYTORCH_DEFAULT

    @property
    def event_id(self) -> int:
        """0: the event was never recorded."""
        return 0

    def record(self, stream=None) -> None:
        """RuntimeError: the CPU backend has no events."""
        raise RuntimeError(f"{self.device.type} backend doesn't support events.")

    def query(self) -> bool:
        """True: nothing recorded is pending."""
        return True

    def synchronize(self) -> None:
        """Wait for the event: nothing is pending."""

    def wait(self, stream=None) -> None:
        """Make ``stream`` wait for the event: nothing is pending."""

    def elapsed_time(self, end_event) -> float:
        """ValueError: timing needs two recorded events created with ``enable_timing=True``,
        and the CPU backend records none."""
        if not (self._flag and getattr(end_event, "_flag", 0)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        """NotImplementedError, as in torch: events are not shared between processes."""
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index=-1, "
                f"event_flag={self._flag}, event_id={self.event_id}")


# Names that live in other glasstorch modules: read on first access so that importing _C
# stays cheap and does not pull in the modules that import it.
_FORWARDED = {
    "Future": ("glasstorch.futures", "Future"),
    "ScriptModule": ("glasstorch.jit", "ScriptModule"),
    "ScriptFunction": ("glasstorch.jit", "ScriptFunction"),
    "FunctionSchema": ("glasstorch.library", "FunctionSchema"),
    "parse_schema": ("glasstorch.library", "parse_schema"),
    "PyTorchFileReader": ("glasstorch.serialization", "PyTorchFileReader"),
    # the torch-function protocol (glasstorch.overrides, when it defines them)
    "_disabled_torch_function_impl": ("glasstorch.overrides", "_disabled_torch_function_impl"),
    "DisableTorchFunctionSubclass": ("glasstorch.overrides", "DisableTorchFunctionSubclass"),
    "DisableTorchFunction": ("glasstorch.overrides", "DisableTorchFunction"),
    "_is_torch_function_mode_enabled": ("glasstorch.overrides",
                                        "_is_torch_function_mode_enabled"),
    "_LinAlgError": ("glasstorch._ops.linalg", "LinAlgError"),  # torch.linalg.LinAlgError
}


def __getattr__(name):
    target = _FORWARDED.get(name)
    if target is not None:
        import importlib
        try:
            value = getattr(importlib.import_module(target[0]), target[1])
        except (ImportError, AttributeError):
            value = None
        if value is not None:
            globals()[name] = value
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Generator", "Stream", "Event", "is_grad_enabled", "_nn"]

