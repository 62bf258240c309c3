"""DTensor: a global tensor whose values are spread over a DeviceMesh by one Placement per
mesh dimension. Each rank holds its part as an ordinary tensor (``to_local()``, whose storage
the DTensor shares); the DTensor answers shape questions globally and every operation
through ``__torch_function__`` (``_ops.py``)."""

from __future__ import annotations

import math

import numpy as np

from ... import _C, cat, zeros, zeros_like
from ... import nn as _nn
from ..._tensor import Size, Tensor, _contiguous_strides, _version_counter_of, _wrap, _wrap_dim
from ...autograd.function import Function
from .. import ReduceOp, all_gather, all_reduce, get_world_size
from .. import broadcast as _broadcast
from .. import get_global_rank as _global_rank
from ..device_mesh import DeviceMesh, _current_mesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module"]

_REDUCE = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "max": ReduceOp.MAX,
           "min": ReduceOp.MIN}


def _chunk_bounds(n, k, c):
    """Start and length of chunk ``c`` of ``k`` along a dimension of size ``n`` (as
    ``Tensor.chunk`` splits, the missing chunks empty)."""
    size = -(-n // k) if n else 0
    start = min(c * size, n)
    return start, min(size, n - start)


def _shard(local, dim, k, c):
    start, length = _chunk_bounds(local.shape[dim], k, c)
    return local.narrow(dim, start, length)


def _level_shapes(shape, placements, mesh):
    """The shape the local part has before each mesh dimension's placement applies."""
    shapes, cur = [], list(shape)
    for i, p in enumerate(placements):
        shapes.append(tuple(cur))
        if isinstance(p, Shard):
            cur[p.dim] = _chunk_bounds(cur[p.dim], mesh.size(i), mesh.get_local_rank(i))[1]
    return shapes


def _gather(local, dim, n, group):
    """The chunks of a dimension of size ``n`` from every rank of ``group``, joined."""
    k = get_world_size(group)
    size = -(-n // k) if n else 0
    if local.shape[dim] < size:
        shape = list(local.shape)
        shape[dim] = size - local.shape[dim]
        local = cat([local, zeros(shape, dtype=local.dtype)], dim)
    parts = [zeros(local.shape, dtype=local.dtype) for _ in range(k)]
    all_gather(parts, local.contiguous(), group=group)
    return cat(parts, dim).narrow(dim, 0, n)


# The redistribution steps, differentiable as torch's are: a replicated gradient is the
# same on every rank, so gathering shards goes back by taking this rank's chunk, and
# cutting a chunk goes back by gathering the chunks' gradients.
class _Unshard(Function):
    @staticmethod
    def forward(ctx, local, dim, n, mesh, i):
        ctx.dim, ctx.k, ctx.c = dim, mesh.size(i), mesh.get_local_rank(i)
        return _gather(local, dim, n, mesh.get_group(i))

    @staticmethod
    def backward(ctx, grad):
        return _shard(grad, ctx.dim, ctx.k, ctx.c).contiguous(), None, None, None, None


class _Cut(Function):
    @staticmethod
    def forward(ctx, local, dim, mesh, i):
        ctx.dim, ctx.n, ctx.group = dim, local.shape[dim], mesh.get_group(i)
        return _shard(local, dim, mesh.size(i), mesh.get_local_rank(i)).clone()

    @staticmethod
    def backward(ctx, grad):
        return _gather(grad, ctx.dim, ctx.n, ctx.group), None, None, None


class _Reduce(Function):
    """Partial -> Replicate; every term's gradient is the (replicated) output gradient."""

    @staticmethod
    def forward(ctx, local, op, group):
        out = local.clone()
        all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class _Split(Function):
    """Replicate -> Partial(sum): coordinate 0 keeps the value, the others hold zeros; the
    gradient of every term is the output gradient."""

    @staticmethod
    def forward(ctx, local, keep):
        return local.clone() if keep else zeros_like(local)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _unshard(local, dim, n, mesh, i):
    return _Unshard.apply(local, dim, n, mesh, i)


def _place(local, placement, mesh, i, kept=False):
    """Apply ``placement`` on mesh dimension ``i`` to a ``local`` replicated along it."""
    if isinstance(placement, Shard):
        return _Cut.apply(local, placement.dim, mesh, i)
    if isinstance(placement, Partial) and not kept and placement.reduce_op == "sum":
        return _Split.apply(local, mesh.get_local_rank(i) == 0)
    return local


def _normalize(placements, mesh, ndim):
    if placements is None:
        return (Replicate(),) * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Placement objects (Shard, Replicate, "
                            f"Partial), got {p!r}")
        if isinstance(p, Shard) and p.dim < 0:
            p = Shard(p.dim + ndim)
        if isinstance(p, Shard) and not 0 <= p.dim < ndim:
            # torch's type for this check (an assertion in its placement code)
            raise AssertionError(f"Sharding dim {p.dim} greater than tensor ndim {ndim}")
        out.append(p)
    return tuple(out)


def _redistribute(local, shape, mesh, src, dst):
    """``local`` (placed by ``src``) placed by ``dst`` instead: from the first mesh dimension
    that changes, undo the later shards innermost first and reduce the partials that do not
    stay, then apply ``dst`` outermost first."""
    first = next((i for i, (s, t) in enumerate(zip(src, dst)) if s != t), None)
    if first is None:
        return local
    shapes = _level_shapes(shape, src, mesh)
    for i in reversed(range(first, mesh.ndim)):
        s = src[i]
        if isinstance(s, Shard):
            local = _unshard(local, s.dim, shapes[i][s.dim], mesh, i)
        elif isinstance(s, Partial) and dst[i] != s:
            local = _Reduce.apply(local, _REDUCE[s.reduce_op], mesh.get_group(i))
    for i in range(first, mesh.ndim):
        local = _place(local, dst[i], mesh, i, kept=src[i] == dst[i])
    return local


class DTensor(Tensor):
    """A tensor distributed over ``device_mesh`` by ``placements`` (see the module
    docstring). Build one with ``distribute_tensor`` (split a whole tensor) or
    ``DTensor.from_local`` (assemble the ranks' parts); ``to_local()`` is this rank's part,
    ``full_tensor()`` the whole, ``redistribute`` changes the placements. Operations on
    DTensors return DTensors: pointwise ops, ``sum`` and ``matmul`` run on the local parts
    when the placements allow it (``_ops.py``); any other op runs on the whole tensor,
    gathered on every rank, and gives a replicated result."""

    @staticmethod
    def _make(local, mesh, placements, shape, stride=None, cls=None):
        # the DTensor's own storage is its local part's: code that works on storage
        # elementwise (the optimizers) updates this rank's part, as torch's do on DTensors
        t = _wrap(local._data, cls or DTensor)
        t._version_counter = _version_counter_of(local)
        t._local_tensor, t._device_mesh, t._placements = local, mesh, tuple(placements)
        t._global_shape = Size(shape)
        t._stride = tuple(stride) if stride is not None else _contiguous_strides(tuple(shape))
        return t

    def _as_parameter(self, requires_grad):
        """``nn.Parameter(dtensor)``: a DTensor that modules register as a parameter."""
        local = self._local_tensor.detach()
        local.requires_grad_(requires_grad)
        return DTensor._make(local, self._device_mesh, self._placements, self._global_shape,
                             self._stride, _DTensorParameter)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            local = self._local_tensor.detach().clone().requires_grad_(self.requires_grad)
            memo[id(self)] = DTensor._make(local, self._device_mesh, self._placements,
                                           self._global_shape, self._stride, type(self))
        return memo[id(self)]

    def _stand_in(self):
        """A storage-less tensor of the global shape and dtype, for shape-only functions."""
        return _wrap(np.broadcast_to(np.zeros((), dtype=self._data.dtype), self._global_shape))

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """The DTensor whose part on this rank is ``local_tensor`` (kept as is, autograd
        history included). Without ``shape`` the parts are taken as equal: a ``Shard(d)``
        dimension is ``local size * mesh size``. ``run_check`` broadcasts the replicated
        parts from coordinate 0."""
        mesh = device_mesh or _current_mesh()
        placements = _normalize(placements, mesh, local_tensor.ndim)
        if run_check:
            for i, p in enumerate(placements):
                if isinstance(p, Replicate):
                    g = mesh.get_group(i)
                    local_tensor = local_tensor.detach().clone()
                    _broadcast(local_tensor, _global_rank(g, 0), group=g)
        if shape is None:
            shape = list(local_tensor.shape)
            for i, p in enumerate(placements):
                if isinstance(p, Shard):
                    shape[p.dim] *= mesh.size(i)
        return DTensor._make(local_tensor, mesh, placements, shape, stride)

    # ---- what a DTensor is
    @property
    def device_mesh(self) -> DeviceMesh:
        return self._device_mesh

    @property
    def placements(self) -> tuple:
        return self._placements

    def to_local(self, *, grad_placements=None):
        """This rank's part: a view of it, carrying the DTensor's autograd history."""
        return self._local_tensor.view_as(self._local_tensor)

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        """The same global tensor placed by ``placements`` (communicating as needed)."""
        mesh = device_mesh or self._device_mesh
        if mesh != self._device_mesh:
            raise NotImplementedError("redistribute onto a different DeviceMesh is not "
                                      "supported; glasstorch moves placements within one mesh")
        dst = _normalize(placements, mesh, self.ndim)
        for s, p in zip(self._placements, dst):
            if isinstance(p, Partial) and p != s:
                raise RuntimeError(f"Can not redistribute from {s} to {p}, redistributing to "
                                   f"Partial is for internal use only!")
        local = _redistribute(self._local_tensor, self.shape, mesh, self._placements, dst)
        if forward_dtype is not None:
            local = local.to(forward_dtype)
        return DTensor._make(local, mesh, dst, self.shape)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor, on every rank."""
        return self.redistribute(placements=(Replicate(),) * self._device_mesh.ndim) \
            .to_local()

    # the global shape (the storage holds the local part)
    @property
    def shape(self):
        return self._global_shape

    @property
    def ndim(self) -> int:
        return len(self._global_shape)

    def size(self, dim=None):
        return self._global_shape if dim is None else \
            self._global_shape[_wrap_dim(dim, len(self._global_shape))]

    def dim(self) -> int:
        return len(self._global_shape)

    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._global_shape)

    nelement = numel

    @property
    def nbytes(self) -> int:
        return self.numel() * self._data.itemsize

    def __len__(self):
        if not self._global_shape:
            raise TypeError("len() of a 0-d tensor")
        return self._global_shape[0]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self, *, memory_format=None) -> bool:
        return self._stride == _contiguous_strides(tuple(self._global_shape))

    # autograd state lives on the local part (the leaf autograd accumulates into); these
    # shadow Tensor's slots so that code reading them directly (the optimizers) sees it
    def _local_attr(self, name, default):
        local = self.__dict__.get("_local_tensor")
        return default if local is None else getattr(local, name)

    def _get_grad(self):
        g = self._local_attr("_grad", None)
        return None if g is None else DTensor._make(g, self._device_mesh, self._placements,
                                                    self._global_shape)

    def _set_grad(self, value):
        local = self.__dict__.get("_local_tensor")
        if local is not None:
            local._grad = value._local_tensor if isinstance(value, DTensor) else value

    _grad = property(_get_grad, _set_grad)
    grad = property(_get_grad, _set_grad, doc="The gradient of the local part, placed as "
                    "this DTensor (see the docs for replicated parameters).")

    def _get_requires_grad(self):
        return self._local_attr("_requires_grad", False)

    def _set_requires_grad(self, value):
        local = self.__dict__.get("_local_tensor")
        if local is not None:
            local._requires_grad = bool(value)

    _requires_grad = property(_get_requires_grad, _set_requires_grad)

    @property
    def requires_grad(self):
        return self._local_tensor.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._local_tensor.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        self._local_tensor.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._local_tensor.grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        pass                          # the history lives on the local part

    @property
    def is_leaf(self):
        return self._local_tensor.is_leaf

    def __repr__(self, *, tensor_contents=None):
        return (f"DTensor(local_tensor={self._local_tensor!r}, device_mesh="
                f"{self._device_mesh!r}, placements={self._placements!r})")

    def __reduce_ex__(self, protocol):
        return (DTensor._make, (self._local_tensor, self._device_mesh, self._placements,
                                tuple(self._global_shape), self._stride))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ._ops import dispatch, metadata_only
        if metadata_only(func):      # on stand-ins with the global shapes
            args, kwargs = _stand_ins(args), _stand_ins(kwargs or {})
            with _C.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        return dispatch(func, args, kwargs or {})


class _DTensorParameter(DTensor, _nn.Parameter):
    """What ``nn.Parameter(dtensor)`` builds: a DTensor that is also a Parameter."""

    __torch_function__ = DTensor.__torch_function__
    __repr__ = DTensor.__repr__
    __reduce_ex__ = DTensor.__reduce_ex__


def _stand_ins(obj):
    if isinstance(obj, DTensor):
        return obj._stand_in()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_stand_ins(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _stand_ins(v) for k, v in obj.items()}
    return obj


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Split ``tensor`` over ``device_mesh`` by ``placements`` (all Replicate by default).
    The values of mesh coordinate 0 (``src_data_rank=0``) are broadcast first, so every
    rank's part comes from the same tensor; with ``src_data_rank=None`` each rank cuts its
    own ``tensor``."""
    mesh = device_mesh or _current_mesh()
    if isinstance(tensor, DTensor):
        raise ValueError("distribute_tensor: the input is already a DTensor; use "
                         "redistribute to change its placements")
    placements = _normalize(placements, mesh, tensor.ndim)
    local = tensor.detach().clone()
    if src_data_rank is not None:
        for i in range(mesh.ndim):
            g = mesh.get_group(i)
            _broadcast(local, _global_rank(g, 0), group=g)
    for i, p in enumerate(placements):
        local = _place(local, p, mesh, i)
    local.requires_grad_(tensor.requires_grad)
    return DTensor._make(local, mesh, placements, tensor.shape)


def _replicate_params(name, module, mesh):
    for key, p in list(module._parameters.items()):
        if p is not None and not isinstance(p, DTensor):
            module._parameters[key] = _nn.Parameter(distribute_tensor(p, mesh),
                                                    p.requires_grad)
    for key, b in list(module._buffers.items()):
        if b is not None and not isinstance(b, DTensor):
            module._buffers[key] = distribute_tensor(b, mesh)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Make ``module``'s parameters DTensors: ``partition_fn(name, submodule, mesh)`` for
    every submodule (default: replicate every parameter and buffer); ``input_fn(module,
    inputs, mesh)`` and ``output_fn(module, outputs, mesh)``, when given, run before and
    after ``forward``."""
    mesh = device_mesh or _current_mesh()
    partition_fn = partition_fn or _replicate_params
    for name, sub in module.named_modules():
        partition_fn(name, sub, mesh)
        if partition_fn is not _replicate_params:
            _replicate_params(name, sub, mesh)     # what the partition left whole
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, inputs: input_fn(m, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, inputs, outputs: output_fn(m, outputs, mesh))
    return module


DTensor.__module__ = "glasstorch.distributed.tensor"
