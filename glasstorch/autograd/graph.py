"""The backward graph: nodes (``grad_fn``), saved tensors, leaves' AccumulateGrad.

An operator that runs with grad mode on and an input that requires grad calls
``record``: it builds one node whose class is named like torch's
(``MulBackward0``), links it to its inputs' nodes through ``next_functions``,
and keeps only the tensors its backward formula needs, as ``SavedTensor``s
that remember the version they were saved at. The engine (``engine.py``)
walks these nodes; this module only builds them.
"""

from __future__ import annotations

import itertools

from .._tensor import Tensor, _version_counter_of, _wrap
from .grad_mode import _state

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "record", "needs_grad",
           "saved_tensors_hooks", "save_on_cpu"]

_sequence = itertools.count()


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    Unpacking after an in-place change raises torch's error. An op's own output
    is stored without its grad_fn (which would be a reference cycle) and gets it
    back from the node on unpack.
    """

    __slots__ = ("_tensor", "_version", "_is_output", "_output_nr", "_packed", "_unpack_hook")

    def __init__(self, tensor, is_output=False, hooks=None):
        vc = tensor._version_counter
        self._version = 0 if vc is None else vc.value
        if tensor._inference and not _state.inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not "
                               "use Tensors created in inference mode in computation tracked "
                               "by autograd. To work around this, you can make a clone to get "
                               "a normal tensor and use it in autograd, or use "
                               "`torch.no_grad()` instead of `torch.inference_mode()`.")
        self._is_output = is_output
        self._output_nr = tensor._output_nr
        if hooks is None:
            hooks = _state.saved_tensor_hooks
        if hooks:
            pack, unpack = hooks[-1]
            self._tensor = None
            self._packed = pack(tensor)
            self._unpack_hook = unpack
            return
        self._packed = self._unpack_hook = None
        if is_output:
            alias = _wrap(tensor._data)
            alias._version_counter = _version_counter_of(tensor)
            alias._base = tensor._base
            tensor = alias
        self._tensor = tensor

    def unpack(self, node):
        """The saved tensor for ``node``'s backward, after torch's check that it was not modified in
        place since it was saved (RuntimeError naming both versions otherwise)."""
        if self._unpack_hook is not None:
            return self._unpack_hook(self._packed)
        t = self._tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if t._version != self._version:
            out_of = f"output 0 of {node.name()}" if self._is_output else _describe_origin(t)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{_type_name(t)} {list(t._data.shape)}], which is {out_of}, "
                f"is at version {t._version}; expected version {self._version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True).")
        if self._is_output:
            out = _wrap(t._data)
            out._version_counter = t._version_counter
            out._base = t._base
            out.grad_fn = node
            out._requires_grad = True
            if self._output_nr:
                out._output_nr = self._output_nr
            return out
        return t

    def release(self):
        """Drop the saved tensor (and any packed form) so its memory can be freed."""
        self._tensor = None
        self._packed = None


def _type_name(t):
    from .._tensor import _legacy_type_name
    return _legacy_type_name(t.dtype)


def _describe_origin(t):
    if t.grad_fn is None:
        return "a leaf Variable" if t._requires_grad else "not a leaf"
    return f"output {t._output_nr} of {t.grad_fn.name()}"


class Node:
    """A backward function: ``grad_fn`` of a tensor produced by a differentiable op.

    Subclasses implement ``backward(self, *grads)`` returning one gradient (or None)
    per input, and read what forward saved as ``self._saved_<name>``.
    """

    __slots__ = ("next_functions", "_input_meta", "_saved", "_sequence_nr", "__weakref__",
                 "__dict__")

    # True for nodes whose backward is computed outside the graph (NumPy-level): the
    # engine then refuses to differentiate their results a second time.
    once_differentiable = False

    # Rarely set, so they live in the instance __dict__ only when used (reading a class
    # default keeps the engine from materialising an empty __dict__ on every node).
    _pre_hooks = None
    _hooks = None
    _released = False
    _anomaly_trace = None
    _output_meta = None       # multi-output nodes: ((shape, dtype) per output)
    _tensor_hooks = None      # {output_nr: {id: hook}} from Tensor.register_hook
    _retained = None          # {output_nr: weakref} from Tensor.retain_grad
    _materialize_grads = True

    def __init__(self, next_functions=(), input_meta=()):
        self.next_functions = next_functions
        self._input_meta = input_meta
        self._saved = None
        self._sequence_nr = next(_sequence)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes about this node."""
        return self.__dict__.setdefault("_metadata", {})

    def name(self) -> str:
        """The node's name as torch prints it (``MulBackward0``)."""
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __getattr__(self, name):
        # _saved_self, _saved_other, _saved_dim, ... like torch's generated nodes
        if name.startswith("_saved_"):
            saved = object.__getattribute__(self, "_saved")
            key = name[7:]
            if saved is not None and key in saved:
                cls = type(self)
                if name not in cls.__dict__:  # later reads skip the failed lookup
                    setattr(cls, name, _SavedField(key))
                value = saved[key]
                return value.unpack(self) if isinstance(value, SavedTensor) else value
            if saved is not None and _freed(saved):
                raise RuntimeError("Trying to backward through the graph a second time (or "
                                   "directly access saved tensors after they have already "
                                   "been freed).")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def backward(self, *grads):  # pragma: no cover - every concrete node overrides it
        """Given the gradients of this node's outputs, the gradients of its inputs (one per edge in
        ``next_functions``). Each concrete node defines it; the engine calls it."""
        raise NotImplementedError(f"{self.name()} has no backward formula")

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node runs; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _RemovableHandle(self._pre_hooks, fn)

    def _register_hook_dict(self, tensor):  # torch API compatibility, unused here
        pass

    def release_saved(self):
        """Free the tensors saved for backward (the engine does this after a backward without
        ``retain_graph``); a second backward through the node then raises."""
        saved = self._saved
        if saved:
            for v in saved.values():
                if isinstance(v, SavedTensor):
                    v.release()


def _freed(saved):
    """Whether backward already released the tensors in a node's ``_saved``."""
    return any(isinstance(v, SavedTensor) and v._tensor is None and v._packed is None
               for v in saved.values())


class _SavedField:
    """``node._saved_<key>`` as a class attribute, installed on a node class the first time
    one of its nodes is asked for it: reads then find it directly instead of failing the
    normal lookup first (which raises and formats an AttributeError before __getattr__ runs)."""

    __slots__ = ("key", "name")

    def __init__(self, key):
        self.key = key
        self.name = "_saved_" + key

    def __get__(self, node, cls=None):
        if node is None:
            return self
        saved = node._saved
        if saved is not None:
            value = saved.get(self.key, _MISSING)
            if value is not _MISSING:
                return value.unpack(node) if isinstance(value, SavedTensor) else value
        return node.__getattr__(self.name)  # not saved by this node: __getattr__'s answer


_MISSING = object()


class _RemovableHandle:
    _ids = itertools.count()

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks, fn):
        self._hooks = hooks
        self.id = next(self._ids)
        hooks[self.id] = fn

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__((), ((variable._data.shape, variable._data.dtype),))
        self.variable = variable


def grad_accumulator(leaf) -> AccumulateGrad:
    """The (cached) AccumulateGrad node of a leaf that requires grad."""
    acc = getattr(leaf, "_grad_accumulator", None)  # a slot: __dict__ stays the user's
    if acc is None:
        acc = leaf._grad_accumulator = AccumulateGrad(leaf)
    return acc


def edge_of(t):
    """``(node, input_nr)`` that gradients for ``t`` flow into, or ``(None, 0)``."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def needs_grad(a, b=None, c=None, *rest) -> bool:
    """Whether an op on these arguments must record a node (grad mode on, an input needs it).

    Called after every op, so the common case (nothing requires grad) is a few attribute
    reads; non-tensor arguments are allowed and ignored.
    """
    if not ((isinstance(a, Tensor) and a._requires_grad) or
            (isinstance(b, Tensor) and b._requires_grad) or
            (isinstance(c, Tensor) and c._requires_grad) or
            (rest and any(isinstance(t, Tensor) and t._requires_grad for t in rest))):
        return False
    return _state.grad_enabled


def record(outputs, node_cls, inputs, **saved):
    """Attach a new ``node_cls`` as grad_fn of ``outputs`` (a Tensor or a tuple of them).

    ``inputs`` are the differentiable arguments in the order ``backward``
    returns their gradients (non-tensors give ``(None, 0)`` edges). ``saved``
    names what backward needs: tensors are kept as SavedTensor (outputs among
    them without a reference cycle), anything else as a plain value.
    """
    # one pass over the inputs builds both the edges and the input metadata
    edges = []
    meta = []
    for t in inputs:
        if isinstance(t, Tensor):
            d = t._data
            meta.append((d.shape, d.dtype))
            fn = t.grad_fn
            if fn is not None:
                edges.append((fn, t._output_nr))
            elif t._requires_grad:
                edges.append((grad_accumulator(t), 0))
            else:
                edges.append(_NO_EDGE)
        else:
            meta.append(None)
            edges.append(_NO_EDGE)
    node = node_cls(tuple(edges), tuple(meta))
    if type(outputs) is tuple:
        outs = outputs
        node._output_meta = tuple((o._data.shape, o._data.dtype) if o is not None else
                                  ((), None) for o in outs)
        for i, o in enumerate(outs):
            if o is not None and o._data.dtype.kind in "fcV":  # float, complex, bfloat16
                o.grad_fn = node
                o._requires_grad = True
                if i:
                    o._output_nr = i
    else:
        outs = None
        if outputs is not None and outputs._data.dtype.kind in "fcV":
            outputs.grad_fn = node
            outputs._requires_grad = True
    if saved:
        hooks = None  # read once, and only when a tensor is saved
        for k, v in saved.items():
            if isinstance(v, Tensor):
                if hooks is None:
                    hooks = _state.saved_tensor_hooks
                is_output = v is outputs or (outs is not None and any(v is o for o in outs))
                saved[k] = SavedTensor(v, is_output, hooks)
        node._saved = saved
    if _state.anomaly_enabled:
        import traceback
        node._anomaly_trace = traceback.format_stack()[:-2]
    return outputs


_NO_EDGE = (None, 0)


def _edge(t):
    if isinstance(t, Tensor):
        fn = t.grad_fn
        if fn is not None:
            return (fn, t._output_nr)
        if t._requires_grad:
            return (grad_accumulator(t), 0)
    return _NO_EDGE


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs when a tensor is saved for backward and
    ``unpack_hook(packed)`` when backward needs it back."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _state.saved_tensor_hooks = _state.saved_tensor_hooks + (
            (self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _state.saved_tensor_hooks = _state.saved_tensor_hooks[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors as CPU copies (on this CPU-only build: plain copies)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: (t.detach().clone(), t._requires_grad),
                         lambda packed: packed[0])


# Pictures of the graph (imported last: graph_viz builds on the classes above).
from .graph_viz import print_graph, render, to_dot  # noqa: E402,F401
