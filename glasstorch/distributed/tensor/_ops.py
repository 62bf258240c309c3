"""How operations on DTensors run. A rule computes on the local parts when the placements
allow it: pointwise ops on operands placed alike (partial sums only through linear ops),
``sum``, ``matmul``/``mm`` and ``t`` by the sharding algebra. Everything else gathers each
DTensor operand whole on every rank, runs the op there and hands back a replicated DTensor
(an in-place op then writes its result back into the operand's own placement), which is
always right and costs one gather per operand."""

from __future__ import annotations

from ... import _C
from ..._tensor import Tensor
from ...autograd.function import Function
from .. import all_reduce
from ._api import DTensor, _place
from .placement_types import Partial, Replicate, Shard

_POINTWISE = {
    "add", "sub", "mul", "div", "true_divide", "neg", "relu", "tanh", "sigmoid", "exp", "log",
    "sin", "cos", "abs", "pow", "sqrt", "rsqrt", "gelu", "silu", "maximum", "minimum",
    "clamp", "eq", "ne", "lt", "le", "gt", "ge", "sign", "square", "reciprocal", "log1p",
    "expm1", "erf", "floor", "ceil", "round", "trunc", "leaky_relu", "softplus", "rsub",
    "radd", "rmul", "rtruediv", "rpow", "logical_not", "logical_and", "logical_or",
    "bitwise_and", "bitwise_or", "bitwise_xor", "fmod", "remainder", "floor_divide",
    "lerp", "addcmul", "addcdiv", "clamp_min", "clamp_max", "copy", "zero", "fill",
    "clone", "detach", "contiguous",
}
_LINEAR_BETWEEN = {"add", "sub", "neg", "radd", "copy", "zero"}   # partial + partial
_LINEAR_BY_SCALAR = {"mul", "div", "true_divide", "rmul", "neg", "zero", "clone", "detach",
                     "contiguous"}
_METADATA = {"shape", "dtype", "ndim", "device", "is_cuda", "is_cpu", "is_meta", "layout",
             "itemsize", "is_sparse", "is_quantized", "is_mkldnn", "is_nested", "size",
             "dim", "ndimension", "numel", "nelement", "element_size", "is_floating_point",
             "is_complex", "__len__", "get_device", "names", "is_mps", "is_xpu"}
_PROPERTY_NAMES = {}


def _name(func):
    getter_of = getattr(func, "__self__", None)
    if isinstance(getter_of, property):
        if not _PROPERTY_NAMES:
            _PROPERTY_NAMES.update({v: k for k, v in vars(Tensor).items()
                                    if isinstance(v, property)})
        return _PROPERTY_NAMES.get(getter_of, "")
    return getattr(func, "__name__", "")


def metadata_only(func) -> bool:
    """Whether ``func`` reads only shape/dtype facts, which the DTensor itself holds."""
    return _name(func) in _METADATA


def _map(obj, fn):
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return fn(obj)


def _leaves(obj, out):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _leaves(o, out)
    else:
        out.append(obj)
    return out


def _local(obj):
    return _map(obj, lambda a: a._local_tensor if isinstance(a, DTensor) else a)


def _full(obj):
    return _map(obj, lambda a: a.full_tensor() if isinstance(a, DTensor) else a)


_AUGMENTED = {"iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_",
              "ipow": "pow_"}


def dispatch(func, args, kwargs):
    name = _name(func).strip("_") if _name(func).startswith("__") else _name(func)
    name = _AUGMENTED.get(name, name)          # x += y is in place, as add_
    base = name[:-1] if name.endswith("_") else name
    leaves = _leaves((args, kwargs), [])
    dts = [a for a in leaves if isinstance(a, DTensor)]
    mesh = dts[0]._device_mesh
    for a in leaves:
        if isinstance(a, DTensor) and a._device_mesh != mesh:
            raise RuntimeError(f"{name}: DTensor operands on different meshes "
                               f"({mesh!r} and {a._device_mesh!r})")
        if not isinstance(a, DTensor) and isinstance(a, Tensor) and a.ndim > 0:
            raise RuntimeError(f"{name} got mixed torch.Tensor and DTensor, need to convert "
                               f"all torch.Tensor to DTensor before calling distributed "
                               f"operators!")
    with _C.DisableTorchFunctionSubclass():
        if name == "backward":
            return _backward(args, kwargs)
        rule = _RULES.get(base)
        if rule is None and base in _POINTWISE:
            rule = _pointwise
        out = rule(func, base, dts, args, kwargs) if rule is not None else None
        if out is None:
            out = _replicated(func, name, mesh, args, kwargs)
    return out


def _wrap(out, mesh, placements, shape):
    return DTensor._make(out, mesh, placements, shape)


def _pointwise(func, name, dts, args, kwargs):
    first = dts[0]
    if any(d.shape != first.shape or d._placements != first._placements for d in dts):
        return None
    others = [a for a in _leaves((args, kwargs), []) if isinstance(a, Tensor)
              and not isinstance(a, DTensor)]
    if any(isinstance(p, Partial) for p in first._placements):
        linear = ((name in _LINEAR_BETWEEN and not others
                   and all(isinstance(a, DTensor) for a in args[:2]))
                  or (name in _LINEAR_BY_SCALAR and len(dts) == 1 and args[0] is first
                      and not others))
        if not linear or any(p != Partial("sum") for p in first._placements
                             if isinstance(p, Partial)):
            return None
    if others:
        return None
    out = func(*_local(args), **_local(kwargs))
    if isinstance(args[0], DTensor) and out is args[0]._local_tensor:
        return args[0]                       # in place
    if not isinstance(out, Tensor):
        return None
    return _wrap(out, first._device_mesh, first._placements, first.shape)


def _sum(func, name, dts, args, kwargs):
    x = args[0]
    if not isinstance(x, DTensor) or len(dts) != 1:
        return None
    dim = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis"))
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    if any(isinstance(p, Partial) and p.reduce_op != "sum" for p in x._placements):
        return None
    dims = set(range(x.ndim)) if dim is None or dim == () else {
        d % x.ndim for d in ((dim,) if isinstance(dim, int) else dim)}
    placements = []
    for p in x._placements:
        if isinstance(p, Shard):
            if p.dim in dims:
                p = Partial("sum")
            elif not keepdim:
                p = Shard(p.dim - sum(d < p.dim for d in dims))
        placements.append(p)
    shape = [1 if d in dims else s for d, s in enumerate(x.shape)
             if keepdim or d not in dims]
    if dim is None and not keepdim:
        shape = []
    return _wrap(func(*_local(args), **_local(kwargs)), x._device_mesh, placements, shape)


_MATMUL = {(Shard(0), Replicate()): Shard(0), (Replicate(), Shard(1)): Shard(1),
           (Shard(1), Shard(0)): Partial("sum"), (Replicate(), Replicate()): Replicate(),
           (Partial("sum"), Replicate()): Partial("sum"),
           (Replicate(), Partial("sum")): Partial("sum"),
           # one operand cut where the other is sharded (no communication)
           (Replicate(), Shard(0)): Partial("sum"), (Shard(1), Replicate()): Partial("sum")}


class _SyncGrad(Function):
    """Identity forward; backward all-reduces the gradient over ``groups``: a replicated
    operand met a sharded one there, so each rank holds only its term of the gradient."""

    @staticmethod
    def forward(ctx, local, groups):
        ctx.groups = groups
        return local.view_as(local)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        for g in ctx.groups:
            all_reduce(grad, group=g)
        return grad, None


def _matmul(func, name, dts, args, kwargs):
    if len(args) != 2 or kwargs or not all(isinstance(a, DTensor) and a.ndim == 2
                                           for a in args):
        return None
    a, b = args
    mesh = a._device_mesh
    placements = [_MATMUL.get(pair) for pair in zip(a._placements, b._placements)]
    if None in placements:
        return None
    la, lb = a._local_tensor, b._local_tensor
    sync_a, sync_b = [], []
    for i, (pa, pb) in enumerate(zip(a._placements, b._placements)):
        if (pa, pb) == (Replicate(), Shard(0)):
            la = _place(la, Shard(1), mesh, i)
        elif (pa, pb) == (Shard(1), Replicate()):
            lb = _place(lb, Shard(0), mesh, i)
        elif pa == Replicate() and pb != Replicate():
            sync_a.append(mesh.get_group(i))
        elif pb == Replicate() and pa != Replicate():
            sync_b.append(mesh.get_group(i))
    if sync_a and la.requires_grad:
        la = _SyncGrad.apply(la, sync_a)
    if sync_b and lb.requires_grad:
        lb = _SyncGrad.apply(lb, sync_b)
    return _wrap(func(la, lb), mesh, placements, (a.shape[0], b.shape[1]))


def _t(func, name, dts, args, kwargs):
    x = args[0]
    if x.ndim != 2 or len(args) != 1:
        return None
    placements = [Shard(1 - p.dim) if isinstance(p, Shard) else p for p in x._placements]
    return _wrap(func(x._local_tensor), x._device_mesh, placements, tuple(x.shape)[::-1])


def _backward(args, kwargs):
    """Backpropagate from every rank's part: a partial loss's terms each get gradient 1."""
    loss = args[0]
    gradient = args[1] if len(args) > 1 else kwargs.pop("gradient", None)
    return loss._local_tensor.backward(_local(gradient), *args[2:], **_local(kwargs))


def _replicated(func, name, mesh, args, kwargs):
    """Run ``func`` on the whole tensors; an in-place op writes the result back."""
    target = args[0] if args and isinstance(args[0], DTensor) else None
    in_place = target is not None and name.endswith("_") and not name.startswith("_")
    whole = _full(args)
    out = func(*whole, **_full(kwargs))
    if in_place:
        local = whole[0]
        for i, p in enumerate(target._placements):
            local = _place(local, p, mesh, i)
        target._local_tensor.copy_(local)
        return target
    replicate = (Replicate(),) * mesh.ndim
    return _map(out, lambda o: _wrap(o, mesh, replicate, o.shape)
                if isinstance(o, Tensor) and not isinstance(o, DTensor) else o)


_RULES = {"sum": _sum, "matmul": _matmul, "mm": _matmul, "t": _t}
