"""torch.fx.passes.shape_prop: run a GraphModule on example inputs and record each node's
result shape, dtype, strides... in ``node.meta['tensor_meta']``."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._tensor import Tensor
from .._compatibility import compatibility
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


@compatibility(is_backward_compatible=True)
class TensorMetadata(NamedTuple):
    """What ShapeProp records about a tensor value."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result: Tensor, include_contiguity: bool = True) -> TensorMetadata:
    import glasstorch
    memory_format = None
    if include_contiguity:
        for fmt in (glasstorch.contiguous_format, glasstorch.channels_last,
                    glasstorch.channels_last_3d):
            if result.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, bool(getattr(result, "is_quantized", False)), {})


@compatibility(is_backward_compatible=True)
class ShapeProp(Interpreter):
    """Interpreter that stores, for each node, ``meta['tensor_meta']`` (a TensorMetadata, or
    a structure of them for tuple/list results) and ``meta['type']``. Call ``propagate(*args)``
    with example inputs."""

    def __init__(self, gm):
        super().__init__(gm)

    def run_node(self, n):
        """Run the node and record its result's metadata."""
        result = super().run_node(n)
        found = [False]

        def extract(obj):
            if isinstance(obj, Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on ``args`` (example inputs), recording metadata; returns the
        result."""
        return super().run(*args)
