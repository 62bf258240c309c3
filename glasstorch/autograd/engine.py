"""The backward engine: an iterative, dependency-counted walk over the graph.

Every node runs once, after all the nodes that feed it gradients have run;
gradients for the same input are summed in a buffer first. There is no
recursion, so a chain of any length backpropagates. Among ready nodes the
most recently created runs first, as in torch.
"""

from __future__ import annotations

import heapq
import sys
import warnings
from sys import getrefcount as _getrefcount

from .._core import dtype as _dt
from .._tensor import Tensor, _wrap, strided
from .grad_mode import _state, no_grad
from .graph import AccumulateGrad, Node, edge_of

__all__ = ["run_backward"]


def _ops():
    import glasstorch
    return glasstorch


def sum_to(grad, shape):
    """Reduce a broadcast gradient back to ``shape`` (differentiably)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    lead = grad.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and grad.shape[lead + i] != 1]
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.view(shape) if lead else grad


def _expandable(shape, to):
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != t and s != 1:
            return False
    return True


def _sum_grads(a, b, create_graph):
    """Two gradients for one input: NumPy's sum of the arrays when they are plain dense
    tensors of one dtype, else (create_graph, sparse, subclasses) the recorded ``+``."""
    if create_graph or type(a) is not Tensor or type(b) is not Tensor or \
            a._data.dtype != b._data.dtype:
        return a + b
    return _wrap(a._data + b._data)


def _num_outputs(node):
    meta = node._output_meta
    return 1 if meta is None else len(meta)


def _validate(node, grads):
    """Shape- and dtype-check a node's outputs against its inputs, like torch's engine."""
    meta = node._input_meta
    if len(grads) != len(meta):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(meta)}, got {len(grads)})")
    for g, m in zip(grads, meta):  # fast path: every gradient already matches
        if g is not None and (m is None or g._data.shape != m[0] or g._data.dtype != m[1]):
            break
    else:
        return grads
    out = []
    for i, (g, m) in enumerate(zip(grads, meta)):
        if g is None or m is None:
            out.append(None if m is None else g)
            continue
        shape, dtype = m
        data = g._data
        if data.shape == shape and data.dtype == dtype:  # the common case
            out.append(g)
            continue
        if data.shape != shape:
            if not _expandable(shape, g._data.shape):
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                                   f"{i} - got {list(g._data.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            g = sum_to(g, shape)
        if g._data.dtype != dtype:
            g = g.to(_dt._by_np[dtype])
        out.append(g)
    return out


def _call_node(node, grads):
    pre = node._pre_hooks
    if pre:
        for hook in list(pre.values()):
            res = hook(tuple(grads))
            if res is not None:
                grads = list(res)
    out = node.backward(*grads)
    if not isinstance(out, tuple):
        out = (out,)
    out = _validate(node, out)
    if node.once_differentiable and _state.grad_enabled:
        out = _refuse_second_derivative(node, grads, out)
    hooks = node._hooks
    if hooks:
        for hook in list(hooks.values()):
            res = hook(tuple(out), tuple(grads))
            if res is not None:
                out = list(res)
    if _state.anomaly_enabled and _state.anomaly_check_nan:
        _check_nan(node, out)
    return out


class _NotTwiceDifferentiable(Node):
    """Stands for the derivative of a backward that is computed outside the graph."""

    def backward(self, *grads):
        raise RuntimeError(f"the derivative of {self._saved_of} is not implemented (it is "
                           "computed in NumPy): double backward through it is not supported")


def _refuse_second_derivative(node, grads, out):
    """Under create_graph, a NumPy-level backward gives gradients with no history; attach
    a node that raises if they are differentiated, instead of silently giving zeros."""
    from .graph import SavedTensor, record
    saved = [v.unpack(node) for v in (node._saved or {}).values() if isinstance(v, SavedTensor)]
    live = tuple(t for t in list(grads) + saved if t is not None and t.requires_grad)
    if not live:
        return out
    return [o if o is None or o.grad_fn is not None else
            record(o.detach(), _NotTwiceDifferentiable, live, of=node.name()) for o in out]


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and bool(_ops().isnan(g.detach()).any()):
            trace = "".join(node._anomaly_trace or ())
            if trace:
                warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                              f"caused the error:\n{trace}", UserWarning, stacklevel=2)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def _apply_tensor_hooks(node, nr, grad):
    hooks = node._tensor_hooks
    if hooks and nr in hooks:
        for hook in list(hooks[nr].values()):
            res = hook(grad)
            if res is not None:
                grad = res
    retained = node._retained
    if retained and nr in retained:
        t = retained[nr]()
        if t is not None:
            g = grad.detach() if not _state.grad_enabled else grad
            t._grad = g.clone() if t._grad is None else t._grad + g
    return grad


# References to the incoming gradient when nothing else holds it: the engine's buffer
# list, _accumulate's and _stolen's parameters, getrefcount's argument.
_STEAL_TENSOR_REFS = 4
_STEAL_ARRAY_REFS = 3   # the tensor's slot, the local, getrefcount's argument
# When the gradient is a view of a dead intermediate (a transposed GEMM result passed back
# through TBackward0, a summed bias gradient viewed to the bias's shape), the owner tensor's
# references: the view's _base slot, _stolen's local, the helper's parameter, getrefcount's
# argument; its array's: the owner's slot, the view's .base, the local, the argument.
_STEAL_OWNER_REFS = 4
_STEAL_OWNER_ARRAY_REFS = 4
# Reference counts mean this only on the CPython versions it was checked on; elsewhere
# (free-threaded or newer interpreters that borrow references) always copy.
_CAN_STEAL = (sys.implementation.name == "cpython" and (3, 10) <= sys.version_info[:2] <= (3, 13)
              and getattr(sys, "_is_gil_enabled", lambda: True)() is not False)


def _plain(t):
    """A bare Tensor with no history or extra attributes."""
    return (type(t) is Tensor and t.grad_fn is None and not t._requires_grad and
            not t.__dict__)


def _stolen(grad, leaf):
    """The incoming gradient when it can become a leaf's first ``.grad`` without a copy
    (as torch's AccumulateGrad steals it), else None: nothing else references it or its
    memory, and its layout matches the leaf's. A view of a dead intermediate that covers
    all its memory is detached from it and kept. Any unknown holder only raises the
    counts, so the test errs on the side of copying."""
    if not _CAN_STEAL or not _plain(grad):
        return None
    arr = grad._data
    ld = leaf._data
    if not (arr.dtype == ld.dtype and arr.shape == ld.shape and arr.strides == ld.strides and
            arr.flags.writeable and _getrefcount(arr) <= _STEAL_ARRAY_REFS and
            _getrefcount(grad) <= _STEAL_TENSOR_REFS):
        return None
    owner = grad._base
    if owner is None:
        return grad if arr.base is None and grad._version_counter is None else None
    if not _whole_view_of_dead(arr, owner):
        return None
    grad._base = grad._version_counter = None  # the owner dies with this reference
    return grad


def _whole_view_of_dead(arr, owner):
    """Whether dense ``arr`` spans all of ``owner``'s memory and ``owner`` is referenced
    only by the gradient's ``_base`` slot."""
    own = owner._data
    return (_plain(owner) and owner._base is None and arr.base is own and own.base is None and
            own.ctypes.data == arr.ctypes.data and own.nbytes == arr.nbytes and _dense(arr) and
            _getrefcount(owner) <= _STEAL_OWNER_REFS and
            _getrefcount(own) <= _STEAL_OWNER_ARRAY_REFS)


def _copy_in_leaf_layout(grad, leaf):
    """``grad`` copied with the leaf's strides when the leaf is dense, else contiguous
    (torch's layout contract for ``.grad``); under create_graph the copy is recorded
    (CopyBackwards, as torch)."""
    ops = _ops()
    if grad.layout is not strided or leaf.layout is not strided:
        return grad.clone()
    stride = leaf.stride() if _dense(leaf._data) else None
    if stride is None:
        fresh = ops.empty(leaf.shape, dtype=leaf.dtype)
    else:
        fresh = ops.empty_strided(leaf.shape, stride, dtype=leaf.dtype)
    return fresh.copy_(grad)


def _dense(a):
    """Non-overlapping and dense: some order of the dims makes the strides compact."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for size, stride in sorted(zip(a.shape, a.strides), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def _add_into_grad(leaf, grad):
    g = leaf._grad
    if g.layout is strided:
        g._data += grad._data
        g._bump_version()
    else:  # sparse + sparse (or dense): a new tensor, as torch's AccumulateGrad does
        with no_grad():
            leaf._grad = g + grad


def _accumulate(node, grad, create_graph):
    leaf = node.variable
    if leaf._grad is None:
        stolen = None if create_graph else _stolen(grad, leaf)
        if stolen is not None:
            leaf._grad = stolen  # no copy: nothing else can see this memory
        else:
            leaf._grad = _copy_in_leaf_layout(grad, leaf)
    elif create_graph:
        leaf._grad = leaf._grad + grad
    elif grad.layout is strided or leaf._grad.layout is not strided:
        _add_into_grad(leaf, grad)
    else:  # a sparse gradient into a dense .grad: added in place, densified
        leaf._grad._data += grad.to_dense()._data
        leaf._grad._bump_version()
    post = leaf.__dict__.get("_post_accumulate_grad_hooks")
    if post:
        for hook in list(post.values()):
            hook(leaf)


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 capture=False, allow_unused=False):
    """Backpropagate from ``tensors`` seeded with ``grad_tensors``.

    ``capture=False``: accumulate into leaves' ``.grad`` (only ``inputs``' if given).
    ``capture=True``: return the gradients of ``inputs`` instead (autograd.grad).
    """
    roots = []
    for i, t in enumerate(tensors):
        node, nr = edge_of(t)
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        roots.append((node, nr))

    # targets: the edges whose gradient the caller wants
    targets = None
    if inputs is not None:
        targets = {}
        for k, t in enumerate(inputs):
            node, nr = edge_of(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault((node, nr), []).append(k)

    # count dependencies over the reachable graph (iteratively)
    deps = {}
    stack = list({n: None for n, _ in roots})  # two outputs of one node are one root
    seen = set(stack)
    while stack:
        for nx, _ in stack.pop().next_functions:
            if nx is not None:
                deps[nx] = deps.get(nx, 0) + 1  # a root may also feed another root
                if nx not in seen:
                    seen.add(nx)
                    stack.append(nx)

    needed = None
    if targets is not None:
        needed = _needed_nodes(seen, {k[0] for k in targets})

    buffers = {}
    for (node, nr), g in zip(roots, grad_tensors):
        buf = buffers.setdefault(node, [None] * _num_outputs(node))
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    results = [None] * (len(inputs) if inputs is not None else 0)
    ready = [(-n._sequence_nr, n) for n in {n: None for n, _ in roots} if n not in deps]
    heapq.heapify(ready)
    heappop, heappush = heapq.heappop, heapq.heappush
    prev = _state.grad_enabled
    _state.grad_enabled = create_graph
    try:
        while ready:
            node = heappop(ready)[1]
            grads = buffers.pop(node, None)
            outs = ()
            if grads is not None:
                if node._tensor_hooks is not None or node._retained is not None:
                    grads = [g if g is None else _apply_tensor_hooks(node, nr, g)
                             for nr, g in enumerate(grads)]
                if targets is not None:
                    for nr, g in enumerate(grads):
                        for k in targets.get((node, nr), ()):
                            results[k] = g
                if needed is None or node in needed:
                    if isinstance(node, AccumulateGrad):
                        if not capture and grads[0] is not None and (
                                targets is None or (node, 0) in targets):
                            _accumulate(node, grads[0], create_graph)
                    elif grads.count(None) != len(grads):
                        if node._output_meta is not None and node._materialize_grads:
                            grads = _zeros_for_missing(node, grads)
                        outs = _call_node(node, grads)
                        if not retain_graph:
                            node.release_saved()
            edges = node.next_functions
            if len(outs) != len(edges):  # the node did not run (or a hook dropped some)
                outs = tuple(outs[:len(edges)]) + (None,) * (len(edges) - len(outs))
            for (nx, nr), g in zip(edges, outs):
                if nx is None:
                    continue
                if g is not None:
                    buf = buffers.get(nx)
                    if buf is None:
                        meta = nx._output_meta
                        buf = buffers[nx] = [None] if meta is None else [None] * len(meta)
                    buf[nr] = g if buf[nr] is None else _sum_grads(buf[nr], g, create_graph)
                left = deps[nx] - 1
                deps[nx] = left
                if left == 0:
                    heappush(ready, (-nx._sequence_nr, nx))
            g = outs = None  # hold no gradient past its node (AccumulateGrad may steal it)
    finally:
        _state.grad_enabled = prev

    if capture:
        for r in results:
            if r is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        return tuple(results)
    return None


def _zeros_for_missing(node, grads):
    """A multi-output node sees zeros for the outputs that got no gradient."""
    return [g if g is not None or m[1] is None else
            _ops().zeros(m[0], dtype=_dt._by_np[m[1]]) for g, m in zip(grads, node._output_meta)]


def _needed_nodes(nodes, targets):
    """Nodes from which some target node is reachable (they must run)."""
    needed = set(targets)
    order = []
    seen = set()
    for start in nodes:
        if start in seen:
            continue
        stack = [(start, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if n in seen:
                continue
            seen.add(n)
            stack.append((n, True))
            for nx, _ in n.next_functions:
                if nx is not None and nx not in seen:
                    stack.append((nx, False))
    for n in order:  # post-order: children before parents
        if any(nx is not None and nx in needed for nx, _ in n.next_functions):
            needed.add(n)
    return needed


def tensor_backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """``Tensor.backward``: accumulate d(tensor)/d(leaf) into every leaf's ``.grad``."""
    backward((tensor,), (gradient,) if gradient is not None else None, retain_graph,
             create_graph, inputs=inputs)


def _make_grads(outputs, grads):
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            g = _ops().ones_like(t)
        elif not isinstance(g, Tensor):
            g = _ops().tensor(g, dtype=t.dtype)
        elif g.shape != t.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {t.shape}.")
        out.append(g)
    return out


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """``torch.autograd.backward``: sum of gradients of ``tensors`` into leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    grads = _make_grads(tensors, grad_tensors or (None,) * len(tensors))
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs``, returned, not stored."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    allow_unused = allow_unused or materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _make_grads(outputs, _as_tuple(grad_outputs) or (None,) * len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                          capture=True, allow_unused=allow_unused)
    if materialize_grads:
        result = tuple(r if r is not None else _ops().zeros_like(t)
                       for r, t in zip(result, inputs))
    return result
