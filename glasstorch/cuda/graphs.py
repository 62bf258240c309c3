"""torch.cuda.graphs: CUDA graph capture. It needs CUDA, which glasstorch does not have:
constructing a graph, a capture context or a memory pool handle raises RuntimeError, as on
torch's CPU build."""

from __future__ import annotations

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_NO_CUDA = ("needs CUDA: glasstorch runs on the CPU only for now (torch.cuda.is_available() is "
            "False)")


def is_current_stream_capturing() -> bool:
    """Whether the current CUDA stream is capturing a graph: there is no CUDA stream, so
    RuntimeError, as on torch's CPU build."""
    raise RuntimeError(f"torch.cuda.is_current_stream_capturing() {_NO_CUDA}")


def graph_pool_handle():
    """A memory pool handle for sharing between graphs: RuntimeError without CUDA."""
    raise RuntimeError(f"torch.cuda.graph_pool_handle() {_NO_CUDA}")


class CUDAGraph:
    """A captured CUDA graph. Constructing one needs CUDA: RuntimeError."""

    def __new__(cls, keep_graph=False):
        raise RuntimeError(f"torch.cuda.CUDAGraph {_NO_CUDA}")


class graph:  # noqa: N801 (torch's name)
    """Context manager capturing CUDA work into ``cuda_graph``; it first creates a side CUDA
    stream, which fails without CUDA (RuntimeError), as in torch."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global"):
        from . import Stream
        self.capture_stream = stream if stream is not None else Stream()


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool=None):
    """Capture ``callables`` into CUDA graphs: it starts by creating a ``CUDAGraph``, which
    fails without CUDA (RuntimeError)."""
    CUDAGraph()
