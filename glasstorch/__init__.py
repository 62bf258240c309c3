"""glasstorch: the PyTorch programming model in readable Python on NumPy.

``import glasstorch as torch`` and PyTorch code runs on the CPU, with real
storage, strides and views, and every layer open to read and step through.
"""

import sys as _sys
import warnings as _warnings

# NumPy reports floating-point events (inf * 0, log(0)...) as RuntimeWarnings from the
# calling frame; torch is silent about them, so silence them where glasstorch calls NumPy
# (user code calling NumPy directly keeps its warnings). Costs nothing per op.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"glasstorch(\.|$)")

from . import _runtime  # noqa: E402  (first: its BLAS thread policy must precede NumPy's load)
from ._core.dtype import (  # noqa: F401
    bfloat16, bool_ as bool, can_cast, complex64, complex128, dtype, finfo, float16, float32,
    float64, get_default_dtype, iinfo, int8, int16, int32, int64, promote_types,
    result_type, set_default_dtype, uint8, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2,
    float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu,
)
from ._core.device import device  # noqa: F401
from ._tensor import (  # noqa: F401
    Size, Tensor, channels_last, channels_last_3d, contiguous_format, memory_format,
    preserve_format, sparse_coo, strided, layout,
)
from ._tensor import legacy_tensor_types as _legacy
from ._core.storage import UntypedStorage  # noqa: F401
from . import _ops

for _mod in _ops.MODULES:
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
del _mod, _name

from ._tensor_str import get_printoptions, set_printoptions  # noqa: E402
from ._runtime import *  # noqa: E402,F401,F403
from .autograd import set_detect_anomaly  # noqa: E402
from .autograd.grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)

globals().update(_legacy)  # FloatTensor, LongTensor, ...

# torch's short dtype aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

# torch's math constants (the same floats as math's) and NumPy-style newaxis
from math import e, inf, nan, pi  # noqa: E402,F401
newaxis = None

# function forms of the Tensor methods
detach, detach_ = Tensor.detach, Tensor.detach_

# Subpackages last: they may import names from the flat namespace above.
from . import (  # noqa: E402
    accelerator, autograd, backends, compiler, cuda, debug, distributed, distributions, func,
    jit, linalg, memory, nn, onnx, optim, profiler, random, return_types, sparse, utils, version,
    vision,
)
from ._sparse_tensor import sparse_csr  # noqa: E402
from .compiler import compile  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap)
from .jit import ScriptFunction, ScriptModule  # noqa: E402  (torch.ScriptModule, as in torch)
from . import _C, futures, library  # noqa: E402  (present right after import, as in torch)
from . import nested  # noqa: E402
from .nested import jagged  # noqa: E402  (torch.jagged)
from ._C import Event, Stream  # noqa: E402
from ._C import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
from ._sym import *  # noqa: E402,F401,F403  (torch.sym_max, sym_int, ...)
from .amp import GradScaler  # noqa: E402,F401  (torch.GradScaler)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa
from .cuda import OutOfMemoryError  # noqa: E402,F401  (torch.OutOfMemoryError)
from .futures import Future  # noqa: E402,F401  (torch.Future)
from .library import ops  # noqa: E402  (torch.ops)
from ._dlpack import from_dlpack  # noqa: E402  (also attaches Tensor.__dlpack__)
from .serialization import PyTorchFileReader, load, save  # noqa: E402
from ._compat import install_as_torch  # noqa: E402
from . import amp  # noqa: E402  (wraps the autocast-policy ops once)
from .amp import autocast  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
    get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
    is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled,
    set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled,
    set_autocast_gpu_dtype,
)

from .amp import _device_amp  # noqa: E402

cuda.amp = _device_amp.cuda_amp
_sys.modules[__name__ + ".cuda.amp"] = cuda.amp

# Every public op becomes a dispatch point for __torch_function__ and TorchFunctionModes;
# done last so that dispatch sits above amp's autocast wrappers, as in torch.
from . import overrides  # noqa: E402
overrides._install_dispatch()

from .torch_version import __version__  # noqa: E402  (a TorchVersion, as torch's)

# torch's package namespace holds itself (its own `import torch` inside): kornia annotates
# with ``torch.torch.Tensor``
torch = _sys.modules[__name__]


def _assert(condition, message):
    """``assert condition, message`` that symbolic tracing can record (torch._assert): a Proxy
    condition goes to its ``__torch_function__``."""
    if type(condition) is not Tensor and overrides.has_torch_function((condition,)):
        return overrides.handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


def _assert_async(tensor, assert_msg=None):
    """Raise RuntimeError unless the one-element ``tensor`` is nonzero (torch's CUDA variant
    defers the check; on the CPU it is immediate)."""
    if not tensor.is_nonzero():
        raise RuntimeError(assert_msg or "Expected Tensor with single nonzero value, but got "
                                         "zero")


# Submodules torch imports with the package but that few programs use: imported on first
# attribute access (``glasstorch.hub``), so ``import glasstorch`` stays fast.
_LAZY_SUBMODULES = frozenset({"testing", "multiprocessing", "hub", "fft", "special", "signal",
                              "fx", "ao", "quantization", "cpu", "export", "_inductor", "masked"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name == "SymInt":  # the sizes the ONNX tracer hands model code (isinstance checks)
        from .onnx._symint import SymInt
        return SymInt
    from ._compat import missing_torch_attribute
    raise missing_torch_attribute(__name__, name)
