"""glasstorch._inductor: the default ``torch.compile`` backend. ``compile_fx`` lowers a captured
fx graph: chains of pointwise ops become generated kernels (numba ``@vectorize`` when numba is
installed, generated NumPy otherwise) with generated backward kernels for training; matrix
products, convolutions and other ops stay calls to the library's own (BLAS) kernels."""

from . import config  # noqa: F401
from .compile_fx import compile_fx

__all__ = ["compile_fx", "config"]
