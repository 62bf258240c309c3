"""``TransformGetItemToIndex``: a torch-function mode that turns ``t[idx]`` into ``aten.index``.

Inside the mode, indexing a tensor with tensors and Python ints only (any nesting of tuples
and lists) does not take the ``select`` view path a 0-d integer tensor normally takes (which
reads the index's value with ``.item()``, something ``vmap`` and graph capture cannot do);
every int becomes a 0-d int64 tensor and the tensor is gathered as advanced indexing does,
returning a fresh tensor whose gradient is scattered back (``ModIndexBackward``). Other
indices (slices, ``None``, ``...``, floats) and every other function run as they would
outside the mode. transformers enters it around its mask construction.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..overrides import TorchFunctionMode

__all__ = ["ModIndex", "TransformGetItemToIndex", "mod_index"]


def _tree_leaves(index):
    """The leaves of ``index``, tuples and lists flattened as torch's pytree flattens them."""
    if isinstance(index, (tuple, list)):
        out = []
        for item in index:
            out.extend(_tree_leaves(item))
        return out
    return [index]


def _gather(x, indices):
    """``aten.index(x, indices)``: advanced indexing by every index tensor, a new tensor."""
    from .. import contiguous_format

    # advanced indexing copies; with 0-d integer indices only, glasstorch's ``[]`` takes the
    # integer (view) path, so the copy is made explicit to keep aten.index's fresh result
    return x[tuple(indices)].clone(memory_format=contiguous_format)


class ModIndex(Function):
    """``x[indices]`` as ``aten.index`` with the scatter of the gradient as its backward."""

    @staticmethod
    def forward(x, indices):
        """Gather ``x`` at ``indices`` (a list of index tensors, one per leading dim)."""
        return _gather(x, indices)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Keep the indices and the input's shape for the backward scatter."""
        x, indices = inputs
        ctx.save_for_backward(*indices)
        ctx.input_shape = x.shape
        ctx.input_dtype = x.dtype

    @staticmethod
    def backward(ctx, grad_out):
        """Scatter-add ``grad_out`` into zeros of the input's shape (repeated indices sum)."""
        from .. import zeros

        indices = ctx.saved_tensors
        grad_in = zeros(ctx.input_shape, dtype=grad_out.dtype, device=grad_out.device)
        return grad_in.index_put(tuple(indices), grad_out, accumulate=True), None


def mod_index(x, indices):
    """``ModIndex.apply``: ``aten.index(x, indices)`` recorded for autograd."""
    return ModIndex.apply(x, indices)


class TransformGetItemToIndex(TorchFunctionMode):
    """While active, ``tensor[i]`` with tensors and ints only gathers (``aten.index``) instead
    of viewing; ints become 0-d int64 tensors on the indexed tensor's device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        """Reroute ``Tensor.__getitem__`` when its index is all tensors and ints."""
        from .. import Tensor, int64, tensor

        if func is Tensor.__getitem__:
            target = args[0]
            if not isinstance(target, Tensor):
                raise AssertionError(f"expected torch.Tensor, got {type(target)}")
            leaves = _tree_leaves(args[1])
            if all(isinstance(leaf, (Tensor, int)) for leaf in leaves):
                indices = [leaf if isinstance(leaf, Tensor)
                           else tensor(leaf, dtype=int64, device=target.device)
                           for leaf in leaves]
                return mod_index(target, indices)
        return func(*args, **(kwargs or {}))
