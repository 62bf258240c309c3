"""``summary(model, ...)``: a torchinfo-like table of a model's layers.

One forward pass runs with forward hooks on every submodule (removed again
afterwards) to record each layer's input and output shapes and to count its
multiply-accumulates; parameters are counted from the module tree (shared
parameters once). The pass runs with grad enabled so the size of what the
autograd graph keeps for backward can be measured on the real graph; the
model's buffers (BatchNorm statistics) and the global RNG state are restored
afterwards, so calling ``summary`` does not change the model.
"""

from __future__ import annotations

import math

from .._tensor import Tensor

__all__ = ["summary", "ModelStatistics", "LayerInfo"]

_COLUMNS = ("input_size", "output_size", "num_params", "params_percent", "kernel_size",
            "mult_adds", "trainable")
_HEADERS = {"input_size": "Input Shape", "output_size": "Output Shape", "num_params": "Param #",
            "params_percent": "Param %", "kernel_size": "Kernel Shape",
            "mult_adds": "Mult-Adds", "trainable": "Trainable"}
_NAME_WIDTH = 40
_COL_WIDTH = 25


class LayerInfo:
    """One module of the model: where it sits, what it produced, what it holds."""

    __slots__ = ("name", "class_name", "module", "depth", "depth_index", "input_size",
                 "output_size", "output_bytes", "num_params", "trainable_params",
                 "total_params", "total_trainable_params", "mult_adds", "total_mult_adds",
                 "calls", "is_leaf", "kernel_size")

    def __init__(self, name, module, depth, depth_index):
        self.name = name
        self.class_name = type(module).__name__
        self.module = module
        self.depth = depth
        self.depth_index = depth_index
        self.input_size = None
        self.output_size = None
        self.output_bytes = 0
        self.calls = 0
        self.mult_adds = 0
        self.is_leaf = not any(True for _ in module.children())
        ks = getattr(module, "kernel_size", None)
        self.kernel_size = list(ks) if isinstance(ks, (tuple, list)) else ks

    def __repr__(self):
        return (f"LayerInfo({self.class_name}: {self.depth}-{self.depth_index}, "
                f"output={self.output_size}, params={self.total_params}, "
                f"mult_adds={self.total_mult_adds})")


class ModelStatistics:
    """What ``summary`` measured; ``str()`` gives the table.

    Byte counts: ``input_bytes`` (the example inputs), ``forward_backward_bytes``
    (every leaf layer's outputs, twice: the activation and its gradient, as
    torchinfo estimates one training step), ``saved_for_backward_bytes`` (the
    storages the autograd graph of the pass actually kept, parameters and inputs
    excluded), ``params_bytes`` and ``total_bytes`` (input + forward/backward +
    params).
    """

    def __init__(self, model_name, layers, col_names, max_depth, total_params,
                 trainable_params, total_mult_adds, input_bytes, forward_backward_bytes,
                 saved_for_backward_bytes, params_bytes):
        self.model_name = model_name
        self.summary_list = layers
        self.col_names = col_names
        self.max_depth = max_depth
        self.total_params = total_params
        self.trainable_params = trainable_params
        self.non_trainable_params = total_params - trainable_params
        self.total_mult_adds = total_mult_adds
        self.input_bytes = input_bytes
        self.forward_backward_bytes = forward_backward_bytes
        self.saved_for_backward_bytes = saved_for_backward_bytes
        self.params_bytes = params_bytes
        self.total_bytes = input_bytes + forward_backward_bytes + params_bytes

    # ------------------------------------------------------------------ table
    def _cell(self, layer, col, shown_children):
        if col == "input_size":
            return _fmt_shape(layer.input_size)
        if col == "output_size":
            return _fmt_shape(layer.output_size)
        own = layer.total_params if not shown_children else layer.num_params
        if col == "num_params":
            if own == 0:
                return "--"
            return f"{own:,}"
        if col == "params_percent":
            if own == 0 or self.total_params == 0:
                return "--"
            return f"{100.0 * own / self.total_params:.2f}%"
        if col == "kernel_size":
            return "--" if layer.kernel_size is None else str(layer.kernel_size)
        if col == "mult_adds":
            macs = layer.total_mult_adds if not shown_children else layer.mult_adds
            return "--" if macs == 0 else f"{macs:,}"
        # trainable
        if layer.total_params == 0:
            return "--"
        if layer.total_trainable_params == layer.total_params:
            return "True"
        return "False" if layer.total_trainable_params == 0 else "Partial"

    def __str__(self):
        width = _NAME_WIDTH + _COL_WIDTH * len(self.col_names)
        rule = "=" * width
        head = "Layer (type:depth-idx)".ljust(_NAME_WIDTH) + "".join(
            _HEADERS[c].ljust(_COL_WIDTH) for c in self.col_names)
        lines = [rule, head.rstrip(), rule]
        shown = [layer for layer in self.summary_list if layer.depth <= self.max_depth]
        for i, layer in enumerate(shown):
            nxt = shown[i + 1] if i + 1 < len(shown) else None
            shown_children = nxt is not None and nxt.depth > layer.depth
            if layer.depth == 0:
                name = layer.class_name
            else:
                name = ("    " * (layer.depth - 1) + "|-" +
                        f"{layer.class_name}: {layer.depth}-{layer.depth_index}")
            # at least one space between cells, even when one overflows its column
            row = name.ljust(_NAME_WIDTH - 1) + " " + "".join(
                self._cell(layer, c, shown_children).ljust(_COL_WIDTH - 1) + " "
                for c in self.col_names)
            lines.append(row.rstrip())
        mb = 1e6
        lines += [rule,
                  f"Total params: {self.total_params:,}",
                  f"Trainable params: {self.trainable_params:,}",
                  f"Non-trainable params: {self.non_trainable_params:,}",
                  f"Total mult-adds ({_unit(self.total_mult_adds)}): "
                  f"{_scaled(self.total_mult_adds):.2f}",
                  rule,
                  f"Input size (MB): {self.input_bytes / mb:.2f}",
                  f"Forward/backward pass size (MB): {self.forward_backward_bytes / mb:.2f}",
                  f"Saved for backward, measured (MB): {self.saved_for_backward_bytes / mb:.2f}",
                  f"Params size (MB): {self.params_bytes / mb:.2f}",
                  f"Estimated Total Size (MB): {self.total_bytes / mb:.2f}",
                  rule]
        return "\n".join(lines)

    __repr__ = __str__


def _unit(n):
    return "G" if n >= 1e9 else ("M" if n >= 1e6 else "k" if n >= 1e3 else "")


def _scaled(n):
    return n / (1e9 if n >= 1e9 else 1e6 if n >= 1e6 else 1e3 if n >= 1e3 else 1)


def _fmt_shape(shape):
    if shape is None:
        return "--"
    if shape and isinstance(shape[0], list):
        return ", ".join(str(s) for s in shape) if len(shape) <= 2 else \
            f"{shape[0]}, ... ({len(shape)} tensors)"
    return str(shape)


def _tensors_in(obj):
    """Every tensor in a (nested) output: tuples, lists, dicts, named tuples."""
    found = []
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            found.append(o)
        elif isinstance(o, (tuple, list)):
            stack.extend(reversed(o))
        elif isinstance(o, dict):
            stack.extend(reversed(list(o.values())))
        else:
            data = getattr(o, "data", None)  # PackedSequence
            if isinstance(data, Tensor):
                found.append(data)
    return found


def _shape_of(obj):
    ts = _tensors_in(obj)
    if not ts:
        return None
    if len(ts) == 1:
        return list(ts[0].shape)
    return [list(t.shape) for t in ts]


# ------------------------------------------------------------------ multiply-accumulates
def _macs(module, args, output):
    """Multiply-accumulates of one call (multiplications of the layer's main products)."""
    from ..nn.modules import _attention, conv, linear, rnn
    outs = _tensors_in(output)
    if isinstance(module, linear.Linear):
        return outs[0].numel() * module.in_features if outs else 0
    if isinstance(module, linear.Bilinear):
        return outs[0].numel() * module.in1_features * module.in2_features if outs else 0
    if isinstance(module, conv._ConvTransposeNd):
        ins = _tensors_in(args)
        return (ins[0].numel() * (module.out_channels // module.groups) *
                math.prod(module.kernel_size)) if ins else 0
    if isinstance(module, conv._ConvNd):
        return (outs[0].numel() * (module.in_channels // module.groups) *
                math.prod(module.kernel_size)) if outs else 0
    if isinstance(module, rnn.RNNBase):
        return _rnn_macs(module, args)
    if isinstance(module, rnn.RNNCellBase):
        ins = _tensors_in(args)
        if not ins:
            return 0
        batch = ins[0].shape[0] if ins[0].dim() == 2 else 1
        gates = {"RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}.get(type(module).__name__, 1)
        return batch * gates * module.hidden_size * (module.input_size + module.hidden_size)
    if isinstance(module, _attention.MultiheadAttention):
        return _attention_macs(module, args)
    return 0


def _rnn_macs(m, args):
    if not args:
        return 0
    x = args[0]
    if isinstance(x, Tensor):
        if x.dim() == 2:  # unbatched (L, H_in)
            steps = x.shape[0]
        else:
            steps = x.shape[0] * x.shape[1]  # seq_len * batch, either order
    else:  # PackedSequence: one step per packed row
        data = getattr(x, "data", None)
        if not isinstance(data, Tensor):
            return 0
        steps = data.shape[0]
    gates = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}.get(m.mode, 1)
    h = m.hidden_size
    real_h = m.proj_size if m.proj_size > 0 else h
    dirs = 2 if m.bidirectional else 1
    total = 0
    for layer in range(m.num_layers):
        layer_in = m.input_size if layer == 0 else real_h * dirs
        per_step = gates * h * (layer_in + real_h)
        if m.proj_size > 0:
            per_step += h * m.proj_size
        total += dirs * per_step
    return total * steps


def _attention_macs(m, args):
    if len(args) < 3 or not all(isinstance(a, Tensor) for a in args[:3]):
        return 0
    q, k, _ = args[:3]
    e = m.embed_dim
    if q.dim() == 3:
        if m.batch_first:
            n, lq, lk = q.shape[0], q.shape[1], k.shape[1]
        else:
            n, lq, lk = q.shape[1], q.shape[0], k.shape[0]
    else:
        n, lq, lk = 1, q.shape[0], k.shape[0]
    projections = lq * e * e + lk * m.kdim * e + lk * m.vdim * e + lq * e * e
    scores = 2 * lq * lk * e  # q @ k^T and weights @ v over all heads
    return n * (projections + scores)


# ------------------------------------------------------------------ the pass
def _make_inputs(input_size, dtypes, device):
    import glasstorch as gt
    if isinstance(input_size, (tuple, list)) and input_size and \
            all(isinstance(d, int) for d in input_size):
        sizes = [tuple(input_size)]
    elif isinstance(input_size, (tuple, list)) and all(isinstance(s, (tuple, list))
                                                        for s in input_size):
        sizes = [tuple(s) for s in input_size]
    else:
        raise ValueError("input_size must be a sequence of ints (one input) or a sequence of "
                         f"such sequences (several inputs), got {input_size!r}")
    if dtypes is None:
        dtypes = [None] * len(sizes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"got {len(dtypes)} dtypes for {len(sizes)} inputs")
    inputs = []
    for s, dt in zip(sizes, dtypes):
        if dt is not None and not dt.is_floating_point and not dt.is_complex:
            inputs.append(gt.zeros(s, dtype=dt, device=device))  # e.g. token indices
        else:
            inputs.append(gt.rand(s, dtype=dt, device=device))
    return inputs


def _storage_root(t):
    a = t._data
    while a.base is not None and hasattr(a.base, "nbytes"):
        a = a.base
    return a


def _saved_bytes(outputs, exclude):
    """Bytes of the storages the graph behind ``outputs`` keeps for backward."""
    from ..autograd.graph import SavedTensor
    seen_nodes, seen_storage = set(), set(exclude)
    total = 0
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if node._saved:
            for v in node._saved.values():
                if isinstance(v, SavedTensor) and v._tensor is not None:
                    root = _storage_root(v._tensor)
                    if id(root) not in seen_storage:
                        seen_storage.add(id(root))
                        total += root.nbytes
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return total


def summary(model, input_size=None, input_data=None, batch_dim=0, dtypes=None, depth=3,
            col_names=("output_size", "num_params"), verbose=1, device=None):
    """Print (``verbose`` >= 1) and return a torchinfo-like summary of ``model``.

    Give either ``input_size`` (one shape, or a list of shapes for several
    inputs, each including the batch dimension; ``dtypes`` per input, default
    float) or ``input_data`` (a tensor, a list/tuple of positional inputs, or a
    dict of keyword inputs). Without either, only the parameter counts are
    reported. ``depth`` is how many levels of nested modules are listed (deeper
    layers still count in the totals); ``col_names`` picks columns among
    input_size, output_size, num_params, params_percent, kernel_size, mult_adds,
    trainable. ``batch_dim`` names the batch dimension of the inputs (reported
    as ``batch_size``; it is part of ``input_size``, never inserted).
    """
    if isinstance(col_names, str):
        col_names = (col_names,)
    col_names = tuple(col_names)
    for c in col_names:
        if c not in _COLUMNS:
            raise ValueError(f"unknown column {c!r}; choose among {', '.join(_COLUMNS)}")
    if input_size is not None and input_data is not None:
        raise ValueError("give input_size or input_data, not both")
    if depth is None or depth < 0:
        raise ValueError(f"depth must be a non-negative integer, got {depth}")

    # The module tree, depth first, each module once.
    layers, by_id = [], {}
    stack = [("", model, 0)]
    counters = {}  # depth -> layers numbered so far at that depth (torchinfo's depth-idx)
    while stack:
        name, mod, d = stack.pop()
        if id(mod) in by_id:
            continue
        counters[d] = counters.get(d, 0) + 1
        info = LayerInfo(name, mod, d, counters[d])
        layers.append(info)
        by_id[id(mod)] = info
        kids = [(f"{name}.{n}" if name else n, m, d + 1)
                for n, m in mod._modules.items() if m is not None]
        stack.extend(reversed(kids))

    # Parameter counts: own (direct) and subtree totals, shared parameters once.
    seen_params = set()
    for info in layers:
        own = own_train = 0
        for p in info.module.parameters(recurse=False):
            if id(p) in seen_params:
                continue
            seen_params.add(id(p))
            own += p.numel()
            if p.requires_grad:
                own_train += p.numel()
        info.num_params, info.trainable_params = own, own_train
    unique = {}
    for p in model.parameters():
        unique[id(p)] = p
    total_params = sum(p.numel() for p in unique.values())
    trainable = sum(p.numel() for p in unique.values() if p.requires_grad)
    params_bytes = sum(p.numel() * p.element_size() for p in unique.values())

    input_bytes = fb_bytes = saved = 0
    batch_size = None
    if input_size is not None or input_data is not None:
        import glasstorch as gt
        rng = gt.get_rng_state()  # random example inputs and Dropout must not shift it
        if input_data is None:
            args, kwargs = _make_inputs(input_size, dtypes, device), {}
        elif isinstance(input_data, Tensor):
            args, kwargs = [input_data], {}
        elif isinstance(input_data, dict):
            args, kwargs = [], dict(input_data)
        elif isinstance(input_data, (list, tuple)):
            args, kwargs = list(input_data), {}
        else:
            raise TypeError("input_data must be a Tensor, a list/tuple of inputs or a dict of "
                            f"keyword inputs, got {type(input_data).__name__}")
        in_tensors = _tensors_in([args, kwargs])
        input_bytes = sum(t.numel() * t.element_size() for t in in_tensors)
        if in_tensors and in_tensors[0].dim() > batch_dim:
            batch_size = in_tensors[0].shape[batch_dim]
        try:
            outputs = _run(model, args, kwargs, by_id)
        finally:
            gt.set_rng_state(rng)
        fb_bytes = 2 * sum(info.output_bytes for info in layers if info.is_leaf and info.calls)
        exclude = {id(_storage_root(p)) for p in unique.values()}
        exclude |= {id(_storage_root(t)) for t in in_tensors}
        for b in model.buffers():
            exclude.add(id(_storage_root(b)))
        saved = _saved_bytes(outputs, exclude)
        del outputs

    # Subtree totals (children follow their parent in ``layers``).
    for info in reversed(layers):
        info.total_params = info.num_params
        info.total_trainable_params = info.trainable_params
        info.total_mult_adds = info.mult_adds
    for info in reversed(layers):
        for child in info.module.children():
            c = by_id.get(id(child))
            if c is not None and c.depth == info.depth + 1:
                info.total_params += c.total_params
                info.total_trainable_params += c.total_trainable_params
                info.total_mult_adds += c.total_mult_adds
    total_macs = layers[0].total_mult_adds

    stats = ModelStatistics(type(model).__name__, layers, col_names, depth, total_params,
                            trainable, total_macs, input_bytes, fb_bytes, saved, params_bytes)
    stats.batch_size = batch_size
    if verbose:
        print(stats)
    return stats


def _run(model, args, kwargs, by_id):
    """One forward pass with hooks on every module; the model's buffers are restored after."""
    import glasstorch as gt

    def hook(module, inputs, output):
        info = by_id.get(id(module))
        if info is None:
            return
        info.calls += 1
        if info.calls == 1:
            info.input_size = _shape_of(inputs)
            info.output_size = _shape_of(output)
            info.output_bytes = sum(t.numel() * t.element_size() for t in _tensors_in(output))
        info.mult_adds += _macs(module, inputs, output)

    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    handles = [info.module.register_forward_hook(hook) for info in by_id.values()]
    try:
        with gt.enable_grad():
            out = model(*args, **kwargs)
        return _tensors_in(out)
    finally:
        for h in handles:
            h.remove()
        with gt.no_grad():
            for b, copy in buffers:
                b.copy_(copy)
