"""The ONNX graph being built while the model runs.

A ``Graph`` gives every tensor the exporter meets an ONNX value name: model inputs and
node outputs are bound as they appear, parameters and buffers become initializers named
by their ``state_dict`` key, and any other tensor is a constant. Nodes are named after the
module scope they ran in, as torch names them (``/layer1/layer1.0/conv1/Conv``), and the
helpers here hide the ONNX opset differences that the translations would otherwise repeat.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
from onnx import helper, numpy_helper

from .._core import dtype as _dt
from .._tensor import Size
from ._symint import SymInt, has_sym_int
from .errors import OnnxExporterError, UnsupportedOperatorError

INT64_MAX = 2 ** 63 - 1


def elem_type(dtype):
    """The ONNX TensorProto element type of a glasstorch dtype."""
    return helper.np_dtype_to_tensor_dtype(dtype.np)


def array_of(t):
    """The tensor's values as a NumPy array (what ONNX serializes)."""
    return np.asarray(t._data)


class Graph:
    """Nodes, value names and initializers of the graph under construction."""

    def __init__(self, opset, params):
        self.opset = opset
        self.nodes = []
        self.params = params                # id(parameter or buffer) -> state_dict key
        self.used_params = {}               # state_dict key -> tensor, as first used
        self.scopes = []                    # qualified names of the modules running
        self._values = {}                   # id(tensor) -> value name
        self._alive = []                    # every bound tensor: keeps the ids unique
        self._constants = {}                # id(tensor) -> Constant output name
        self._untraced = set()              # ids of arrays made outside recorded calls
        self._untraced_alive = []           # ... kept alive: the ids stay theirs
        self._node_names = Counter()
        self._shapes = {}                   # value name -> its Shape node's output
        self._large_constants = {}          # (dtype, shape, digest) -> Constant output name

    # ------------------------------------------------------------------ values
    def bind(self, tensor, name):
        self._values[id(tensor)] = name
        self._alive.append(tensor)

    def has(self, t) -> bool:
        return id(t) in self._values

    def name_of(self, t):
        """The value name bound to ``t``, or None."""
        return self._values.get(id(t))

    def is_traced(self, t) -> bool:
        """Whether ``t`` depends on the model inputs (it has a value name in the graph)."""
        if id(t) in self._values:
            return True
        self._refuse_untraced(t)
        return False

    def value(self, t) -> str:
        """The value name of tensor ``t``: bound value, initializer or (new) constant."""
        name = self._values.get(id(t))
        if name is not None:
            return name
        key = self.params.get(id(t))
        if key is not None:
            self.used_params.setdefault(key, t)
            return key
        self._refuse_untraced(t)
        name = self._constants.get(id(t))
        if name is None:
            name = self._constants[id(t)] = self.constant(array_of(t))
            self._alive.append(t)
        return name

    def sym_sizes(self, t, shape):
        """``t``'s shape as SymInts read from its value in the graph."""
        name = self._values[id(t)]
        return Size(SymInt(n, lambda g, d=d: g.op("Gather", g.shape_of(name), g.ints([d])))
                    for d, n in enumerate(shape))

    def shape_of(self, name):
        if name not in self._shapes:
            self._shapes[name] = self.op("Shape", name)
        return self._shapes[name]

    def size_value(self, n):
        """A size (an int or a SymInt) as a 1-D int64 value [n]."""
        return n.value_in(self) if isinstance(n, SymInt) else self.ints([n])

    def shape_value(self, sizes):
        """A shape (ints and SymInts) as a 1-D int64 value; constant when all are ints."""
        sizes = list(sizes)
        if not has_sym_int(sizes):
            return self.ints(sizes)
        parts, run = [], []
        for n in sizes:
            if isinstance(n, SymInt):
                if run:
                    parts.append(self.ints(run))
                    run = []
                parts.append(n.value_in(self))
            else:
                run.append(n)
        if run:
            parts.append(self.ints(run))
        return self.op("Concat", *parts, axis=0)

    def note_untraced(self, array):
        self._untraced.add(id(array))
        self._untraced_alive.append(array)

    def _refuse_untraced(self, t):
        if id(t._data) in self._untraced:
            raise OnnxExporterError(
                f"a tensor of shape {list(t.shape)} was computed outside the operations the "
                "exporter traces, so its value would be frozen into the graph. It was made by "
                "a glasstorch function reached through a reference the exporter cannot "
                "replace (a closure, a default argument, a container, a NumPy round trip). "
                "Call the function through glasstorch, torch.nn.functional or a Tensor "
                "method inside forward.")

    # ------------------------------------------------------------------ nodes
    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Append an ``op_type`` node; return its output name (a list when ``outputs > 1``).
        ``None`` inputs are ONNX's omitted optional inputs; ``None`` attributes are left out."""
        name = self._node_name(op_type)
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, ["" if i is None else i for i in inputs],
                                           outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def _node_name(self, op_type):
        base = "".join("/" + s for s in self.scopes) + "/" + op_type
        n = self._node_names[base]
        self._node_names[base] += 1
        return base if n == 0 else f"{base}_{n}"

    def unsupported(self, name, since=None):
        """The error for an operator (or an operator used this way) we cannot export."""
        return UnsupportedOperatorError(name, self.opset, since)

    def require(self, name, since):
        if self.opset < since:
            raise self.unsupported(name, since)

    # ------------------------------------------------------------------ constants
    def constant(self, array):
        array = np.asarray(array)
        if array.nbytes < 1024:
            return self.op("Constant", value=numpy_helper.from_array(array))
        # a large folded value (e.g. a recurrent weight's transpose, recomputed every time
        # step) is stored once however often it is computed
        key = (array.dtype.str, array.shape, hashlib.sha1(np.ascontiguousarray(array)).digest())
        name = self._large_constants.get(key)
        if name is None:
            name = self._large_constants[key] = self.op(
                "Constant", value=numpy_helper.from_array(array))
        return name

    def ints(self, values):
        return self.constant(np.asarray(values, dtype=np.int64).reshape(-1))

    def scalar(self, value, dtype):
        return self.constant(np.asarray(value, dtype=dtype.np))

    def operand(self, x, dtype):
        """``x`` (a tensor or a Python number) as a value of ``dtype``."""
        if hasattr(x, "_data"):
            return self.cast(self.value(x), x.dtype, dtype)
        if isinstance(x, SymInt):
            return self.cast(self.size_scalar(x), _dt.int64, dtype)
        return self.scalar(x, dtype)

    def size_scalar(self, n):
        """A SymInt as a 0-d int64 value."""
        return self.op("Reshape", n.value_in(self), self.ints([]))

    def cast(self, name, from_dtype, to_dtype):
        if from_dtype is to_dtype:
            return name
        return self.op("Cast", name, to=elem_type(to_dtype))

    # ------------------------------------------------------------------ opset-aware helpers
    def reduce(self, op_type, x, axes, keepdims):
        """``op_type`` (ReduceMean, ReduceSum...) over ``axes`` (None: all dims)."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.op(op_type, x, keepdims=keep)
        axes = list(axes)
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, x, self.ints(axes), keepdims=keep)
        return self.op(op_type, x, axes=axes, keepdims=keep)

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", x, self.ints(axes))

    def squeeze(self, x, axes):
        return self.op("Squeeze", x, self.ints(axes))

    def transpose(self, x, perm):
        perm = list(perm)
        if perm == sorted(perm):
            return x
        return self.op("Transpose", x, perm=perm)

    def reshape(self, x, in_shape, out_shape, infer_at=None):
        """Reshape ``x`` from ``in_shape`` to ``out_shape`` (the shapes seen while tracing).

        Leading dims that keep their size are written as 0 (ONNX: copy the input's dim) and
        one other dim as -1 (the one the caller inferred, else the first changed one), so a
        batch or sequence dim that was dynamic stays dynamic.
        """
        target = list(out_shape)
        if 0 in target:
            return self.op("Reshape", x, self.ints(target), allowzero=1)
        k = 0
        while k < min(len(target), len(in_shape)) and target[k] == in_shape[k]:
            target[k] = 0
            k += 1
        if infer_at is not None and infer_at < 0:
            infer_at += len(target)
        if infer_at is None or infer_at < k:
            infer_at = k if k < len(target) else None
        if infer_at is not None:
            target[infer_at] = -1
        return self.op("Reshape", x, self.ints(target))
