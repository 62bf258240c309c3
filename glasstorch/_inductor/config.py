"""torch._inductor.config: settings of the inductor backend that glasstorch reads."""

import os
import tempfile

# generate numba kernels when numba is importable (GLASSTORCH_INDUCTOR_NUMBA=0 forces NumPy)
use_numba = os.environ.get("GLASSTORCH_INDUCTOR_NUMBA", "1") != "0"
# shortest run of pointwise ops worth a fused kernel (a single op is already one NumPy call)
min_fusion_size = 2
# ops whose numba scalar code (libm calls, one element at a time) is slower than NumPy's
# vectorised loops on whole arrays: a region holding one is generated as NumPy instead
numpy_ops = {"tanh", "gelu"}
# where generated kernels are written (numba keeps their machine code beside them), so a
# second process starts warm; torch keeps its own under the temp dir too
cache_dir = os.environ.get("GLASSTORCH_INDUCTOR_CACHE_DIR") or os.path.join(
    tempfile.gettempdir(), f"glasstorch_inductor_{os.getuid()}")
