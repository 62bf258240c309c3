"""glasstorch.nested: torch.nested, batches of tensors whose sizes differ.

    nt = torch.nested.nested_tensor([torch.ones(3, 4), torch.ones(5, 4)], layout=torch.jagged)
    nt.shape                        # torch.Size([2, j1, 4])
    torch.nn.functional.linear(nt, w).to_padded_tensor(0.0)

Both of torch's layouts: ``torch.strided`` (the default: components of any sizes with the same
number of dimensions) and ``torch.jagged`` (components differing in their first dimension
only, stored as ``values()`` and ``offsets()``). See ``_internal/nested_tensor.py`` for which
operators run on them.
"""

import warnings

from .._core.backend import xp
from .._tensor import Tensor, _wrap, strided
from ..autograd.grad_mode import is_grad_enabled
from ._internal.nested_tensor import NestedTensor, _from_values, _make, _no_kernel, jagged

__all__ = ["as_nested_tensor", "nested_tensor", "nested_tensor_from_jagged",
           "to_padded_tensor", "NestedTensor"]


def _check_layout(layout):
    layout = strided if layout is None else layout
    if layout is not strided and layout is not jagged:
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    return layout


def _build(tensors, dtype, layout):
    layout = _check_layout(layout)
    if layout is strided:  # as torch says on every strided construction
        warnings.warn(
            "The PyTorch API of nested tensors is in prototype stage and will change in the "
            "near future. We recommend specifying layout=torch.jagged when constructing a "
            "nested tensor, as this layout receives active development, has better operator "
            "coverage, and works with torch.compile.", UserWarning, stacklevel=3)
    for i, t in enumerate(tensors):
        if t.dim() != tensors[0].dim():
            raise RuntimeError(
                "All Tensors given to nested_tensor must have the same dimension. Found "
                f"dimension {t.dim()} for Tensor at index {i} and dimension {tensors[0].dim()} "
                "for Tensor at index 0.")
    if dtype is not None:
        tensors = [t.to(dtype) for t in tensors]
    elif tensors:
        tensors = [t.to(tensors[0].dtype) for t in tensors]  # the first component's dtype
    if layout is jagged:
        if not tensors:
            raise RuntimeError("Cannot construct a nested tensor from an empty tensor list")
        if tensors[0].dim() == 0:
            raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim "
                               "tensors")
        if len({tuple(t.shape[1:]) for t in tensors}) != 1:
            raise NotImplementedError(
                "glasstorch: jagged nested tensors whose components differ in a dimension "
                "other than their first are not supported")
    return _make([t.detach() for t in tensors], layout)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor holding copies of the tensors (or nested lists of numbers) in
    ``tensor_list``, a list; a leaf (``requires_grad`` sets it)."""
    if not isinstance(tensor_list, list):
        raise TypeError("Only lists (List[Tensor] and List[List...[Scalar]]) are accepted in "
                        "nested_tensor")
    from .._ops.creation import tensor as _tensor
    tensors = [t if isinstance(t, Tensor) else _tensor(t) for t in tensor_list]
    nt = _build(tensors, dtype, layout)
    nt.requires_grad_(requires_grad)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor of the tensors in the list ``ts`` (or of a tensor's slices along its
    first dimension); ``ts`` itself when already nested in that layout and dtype."""
    if isinstance(ts, NestedTensor):
        if _check_layout(layout) is ts.layout and dtype in (None, ts.dtype):
            return ts
        ts = list(ts.unbind())
    elif isinstance(ts, Tensor):
        ts = list(ts.unbind(0))
    elif not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError("as_nested_tensor(): expected a tensor or a list or tuple of tensors")
    if is_grad_enabled() and any(t.requires_grad for t in ts):
        raise RuntimeError("glasstorch: as_nested_tensor of tensors that require grad: "
                           "autograd through nested tensors is not supported")
    return _build(list(ts), dtype, layout)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """A jagged nested tensor viewing ``values``: component i runs from ``offsets[i]`` for
    ``lengths[i]`` rows (to ``offsets[i + 1]`` without lengths; offsets from lengths when only
    those are given)."""
    if jagged_dim not in (None, 1):
        raise NotImplementedError("glasstorch: nested_tensor_from_jagged supports only "
                                  "jagged_dim=1")
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths "
                               "is required.")
        offsets = _wrap(xp.concatenate([[0], xp.cumsum(lengths._data)]).astype(xp.int64))
        lengths = None
    if is_grad_enabled() and values.requires_grad:
        raise RuntimeError("glasstorch: nested_tensor_from_jagged of values that require grad: "
                           "autograd through nested tensors is not supported")
    return _from_values(values, offsets, lengths)


def to_padded_tensor(input, padding, output_size=None):
    """``input.to_padded_tensor(padding, output_size)``: a dense tensor of the components
    padded to a common size."""
    if not isinstance(input, NestedTensor):
        raise _no_kernel("to_padded_tensor", "CPU")
    return input.to_padded_tensor(padding, output_size)
