"""torch.onnx.export: run the model once under the tracer and write the ONNX model."""

from __future__ import annotations

import enum
import inspect
import io
import os
import warnings

from .._tensor import Tensor
from . import _tracer
from .errors import OnnxExporterError

DEFAULT_OPSET = 20      # torch 2.13's default, for both of its exporters
MIN_OPSET = 13          # the translations use opset-13 operator forms (axes as inputs)
MAX_OPSET = 23


class TrainingMode(enum.Enum):
    """The mode the model runs in while exported (``export(..., training=)``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.Enum):
    """How operators are exported; glasstorch emits standard ONNX operators only."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def _onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("glasstorch.onnx.export needs the onnx package: "
                          "pip install onnx") from e
    return onnx


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export ``model`` to ONNX by running it once on ``args`` and recording its operators.

    Same signature as ``torch.onnx.export``. ``dynamo=True`` (torch's default) and
    ``dynamo=False`` (torch's TorchScript exporter) both run glasstorch's one tracing
    exporter; they differ as torch's do in what they return (an :class:`ONNXProgram` /
    ``None``), how they save ``f`` (weights beside the file when ``external_data`` / inside
    it), the default input names (the forward's parameter names / ``onnx::Gemm_0``), the
    dynamic-shape argument (``dynamic_shapes`` / ``dynamic_axes``) and the model mode
    (as it is, with a warning when training / ``training=TrainingMode.EVAL``). Arguments
    about torch.export and ONNX Script internals (``report``, ``verify``, ``optimize``...)
    are accepted and have no effect.

    Example::

        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU()).eval()
        torch.onnx.export(model, (torch.randn(2, 4),), "mlp.onnx", dynamo=False,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    """
    onnx = _onnx()
    opset = _check_opset(opset_version)
    _check_unsupported_options(dynamo, dynamic_shapes, operator_export_type,
                               export_modules_as_functions, custom_translation_table)
    if not hasattr(model, "modules"):
        raise AttributeError(f"'{type(model).__name__}' object has no attribute 'modules': "
                             "export takes an nn.Module")
    args, kwargs = _split_args(args, kwargs)
    if dynamo and dynamic_shapes is not None:
        dynamic_axes = _axes_from_dynamic_shapes(model, dynamic_shapes)
    graph, outputs, inputs = _trace(model, args, kwargs, opset, dynamo, training,
                                    do_constant_folding)
    names = _Names(dynamo, input_names, output_names, dynamic_axes)
    proto = _build_model(onnx, model, graph, inputs, outputs, names, export_params,
                         keep_initializers_as_inputs)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    if not dynamo:
        _write(onnx, proto, f)
        return None
    program = ONNXProgram(proto)
    if isinstance(f, io.BytesIO):
        warnings.warn("Saving ONNX model to a BytesIO object is deprecated. Please use a file "
                      "path instead.", DeprecationWarning, stacklevel=2)
        f.write(proto.SerializeToString())
    elif f is not None:
        program.save(f, external_data=external_data)
    return program


def _check_opset(opset_version):
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset > MAX_OPSET:
        raise RuntimeError(f"Unsupported onnx_opset_version: {opset}")
    if opset < MIN_OPSET:
        raise OnnxExporterError(f"glasstorch exports ONNX opset {MIN_OPSET} to {MAX_OPSET}; "
                                f"opset_version={opset} is older than its operator forms")
    return opset


def _check_unsupported_options(dynamo, dynamic_shapes, operator_export_type,
                               export_modules_as_functions, custom_translation_table):
    if not dynamo and dynamic_shapes:
        raise ValueError("The exporter only supports dynamic shapes through parameter "
                         "dynamic_axes when dynamo=False.")
    if operator_export_type not in (OperatorExportTypes.ONNX, None):
        raise NotImplementedError("glasstorch's exporter emits standard ONNX operators only "
                                  "(operator_export_type=OperatorExportTypes.ONNX)")
    if export_modules_as_functions:
        raise NotImplementedError("export_modules_as_functions is not supported by "
                                  "glasstorch's exporter")
    if custom_translation_table:
        raise NotImplementedError("custom_translation_table maps torch.ops overloads, which "
                                  "glasstorch does not have")


def _split_args(args, kwargs):
    """torch's legacy convention: a lone tensor is one argument; a trailing dict in the
    args tuple holds keyword arguments."""
    args = args if isinstance(args, tuple) else (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


# ---------------------------------------------------------------------------- tracing
def _trace(model, args, kwargs, opset, dynamo, training, fold):
    """Run ``model`` with the tracer installed; return the graph, the output tensors and
    the input tensors with the forward parameter each came from."""
    from . import _symbolic_nn  # noqa: F401  (registers the nn translations)
    from ._graph import Graph
    from ._symbolic import lookup

    if _tracer.is_in_onnx_export():
        raise OnnxExporterError("export() was called from a model being exported")
    params = {}
    for key, t in model.state_dict(keep_vars=True).items():
        params.setdefault(id(t), key)
    graph = Graph(opset, params)
    tracer = _tracer.Tracer(graph, fold, {id(m): name for name, m in model.named_modules()
                                          if name})
    inputs = _input_tensors(model, args, kwargs)
    for i, (t, _param) in enumerate(inputs):
        graph.bind(t, f"%input{i}")
    patch = _tracer.new_patch(lookup)
    modes = _set_mode(model, dynamo, training)
    previous_hook = _watch_allocations(tracer)
    try:
        _tracer.install(patch, lookup, model)
        _tracer._state[0] = tracer
        result = model(*args, **kwargs)   # with grad mode as it is: torch traces so too
    finally:
        _tracer._state[0] = None
        patch.restore()
        _restore_allocations(previous_hook)
        for m, mode in modes:
            m.training = mode
    return graph, _flatten(result), inputs


def _set_mode(model, dynamo, training):
    modes = [(m, m.training) for m in model.modules()]
    if dynamo:
        if model.training:
            warnings.warn("Exporting a model while it is in training mode. Please ensure that "
                          "this is intended, as it may lead to different behavior during "
                          "inference. Calling model.eval() before export is recommended.",
                          UserWarning, stacklevel=4)
    elif training in (TrainingMode.EVAL, None):
        model.train(False)
    elif training == TrainingMode.TRAINING:
        model.train(True)
    return modes


def _watch_allocations(tracer):
    """Note every tensor made outside a recorded call (see _tracer's docstring)."""
    from .. import _tensor

    previous = _tensor.alloc_hook[0]

    def hook(arr):
        if tracer.depth == 0:
            tracer.graph.note_untraced(arr)
        if previous is not None:
            previous(arr)
    _tensor.alloc_hook[0] = hook
    return previous


def _restore_allocations(previous):
    from .. import _tensor
    _tensor.alloc_hook[0] = previous


def _input_tensors(model, args, kwargs):
    """(tensor, forward parameter name) for each tensor argument, in argument order."""
    try:
        bound = inspect.signature(model.forward).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {f"input_{i}": a for i, a in enumerate(list(args) + list(kwargs.values()))}
    found = []
    for name, value in bound.items():
        tensors = _flatten(value)
        found.extend((t, name if len(tensors) == 1 else f"{name}_{j}")
                     for j, t in enumerate(tensors))
    return found


def _flatten(obj):
    """The tensors of a (nested) output, in order; other values are dropped."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _flatten(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _flatten(item)]
    return []


# ---------------------------------------------------------------------------- the model proto
class _Names:
    """The naming arguments of export."""

    def __init__(self, dynamo, input_names, output_names, dynamic_axes):
        self.dynamo = dynamo
        self.inputs = list(input_names or ())
        self.outputs = list(output_names or ())
        self.dynamic_axes = dynamic_axes or {}


def _build_model(onnx, model, graph, inputs, outputs, names, export_params,
                 keep_initializers_as_inputs):
    from ._graph import elem_type

    out_values = [graph.value(t) for t in outputs]
    init_keys = [k for k in model.state_dict(keep_vars=True) if k in graph.used_params]
    in_names, init_names = _input_names(graph, inputs, init_keys, names)
    renames = dict(zip([f"%input{i}" for i in range(len(inputs))], in_names))
    renames.update(zip(init_keys, init_names))
    out_names = _output_names(graph, inputs, out_values, names.outputs)
    _rename(graph, renames, out_values, out_names, set(renames) | set(init_keys))
    axes = _dynamic_axes(names.dynamic_axes, in_names, out_names)
    helper = onnx.helper
    params = [graph.used_params[k] for k in init_keys]
    graph_inputs = [_value_info(helper, name, t, axes.get(name))
                    for name, (t, _p) in zip(in_names, inputs)]
    weight_inputs = [_value_info(helper, name, t, None) for name, t in zip(init_names, params)]
    graph_outputs = [helper.make_tensor_value_info(name, elem_type(t.dtype), None)
                     for name, t in zip(out_names, outputs)]
    # Shape inference and the checker run with the weights as plain inputs: the same graph,
    # without serializing megabytes of weights twice more.
    onnx_graph = helper.make_graph(graph.nodes, "main_graph", graph_inputs + weight_inputs,
                                   graph_outputs)
    opset = [helper.make_opsetid("", graph.opset)]
    from ..version import glasstorch_version
    proto = helper.make_model(onnx_graph, opset_imports=opset, producer_name="glasstorch",
                              producer_version=glasstorch_version,
                              ir_version=helper.find_min_ir_version_for(opset))
    _set_output_shapes(onnx, proto, outputs, axes)
    onnx.checker.check_model(proto)
    if export_params:
        proto.graph.initializer.extend(_initializer(onnx, name, t)
                                       for name, t in zip(init_names, params))
        if not keep_initializers_as_inputs:
            del proto.graph.input[len(graph_inputs):]
    return proto


def _input_names(graph, inputs, init_keys, names):
    """Names of the user inputs and of the initializers. As torch's exporter, names past
    the inputs rename the parameters, in state_dict order."""
    dynamo, names = names.dynamo, list(names.inputs)
    total = len(inputs) + len(init_keys)
    if len(names) > total:
        raise RuntimeError(f"number of input names provided ({len(names)}) exceeded number "
                           f"of inputs ({total})")
    defaults = [param if dynamo else _consumer_name(graph, f"%input{i}", i)
                for i, (_t, param) in enumerate(inputs)] + init_keys
    names += defaults[len(names):]
    return names[:len(inputs)], names[len(inputs):]


def _consumer_name(graph, value, index):
    # torch's TorchScript exporter names an input after the first ONNX op reading it
    for node in graph.nodes:
        if value in node.input:
            return f"onnx::{node.op_type}_{index}"
    return f"input_{index}"


def _output_names(graph, inputs, out_values, output_names):
    names = list(output_names)
    if len(names) > len(out_values):
        raise RuntimeError(f"number of output names provided ({len(names)}) exceeded number "
                           f"of outputs ({len(out_values)})")
    first = len(inputs) + len(graph.nodes)   # torch numbers unnamed outputs after its values
    return names + [str(first + i) for i in range(len(names), len(out_values))]


def _rename(graph, renames, out_values, out_names, not_node_outputs):
    """Apply the input/initializer renames; make each graph output a node output of its own
    name (an Identity where the value is an input, a parameter or already an output)."""
    produced = {}
    for node in graph.nodes:
        for j, name in enumerate(node.output):
            produced[name] = (node, j)
    taken = set()
    for value, name in zip(out_values, out_names):
        if value in produced and value not in taken and value not in not_node_outputs:
            renames[value] = name
            taken.add(value)
        else:
            renames[graph.op("Identity", value)] = name
    for node in graph.nodes:
        for seq in (node.input, node.output):
            for j, name in enumerate(seq):
                if name in renames:
                    seq[j] = renames[name]


def _dynamic_axes(dynamic_axes, in_names, out_names):
    """{value name: {axis: dim name}} from torch's dynamic_axes argument."""
    result = {}
    known = set(in_names) | set(out_names)
    for key, axes in dynamic_axes.items():
        if key not in known:
            warnings.warn(f"Provided key {key} for dynamic axes is not a valid input/output "
                          "name", UserWarning, stacklevel=4)
            continue
        if isinstance(axes, dict):
            result[key] = {int(a): str(n) for a, n in axes.items()}
        elif isinstance(axes, (list, tuple)):
            warnings.warn("No names were found for specified dynamic axes of provided input."
                          f"Automatically generated names will be applied to each dynamic "
                          f"axes of input {key}", UserWarning, stacklevel=4)
            result[key] = {int(a): f"{key}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
        else:
            raise TypeError(f"dynamic_axes values must be a dict or a list of axes, got "
                            f"{type(axes).__name__} for {key!r}")
    return result


def _axes_from_dynamic_shapes(model, dynamic_shapes):
    """dynamic_shapes ({forward parameter: {axis: name or Dim}}, or one entry per
    positional argument) as dynamic_axes keyed by the default input names."""
    if isinstance(dynamic_shapes, dict):
        entries = dynamic_shapes.items()
    else:
        params = list(inspect.signature(model.forward).parameters)
        entries = zip(params, dynamic_shapes)
    axes = {}
    for param, spec in entries:
        if spec:
            items = spec.items() if isinstance(spec, dict) else enumerate(spec)
            axes[param] = {int(a): getattr(d, "__name__", None) or str(d)
                           for a, d in items if d is not None}
    return axes


def _value_info(helper, name, t, dyn):
    from ._graph import elem_type
    shape = list(t.shape)
    for axis, dim_name in (dyn or {}).items():
        if not -len(shape) <= axis < len(shape):
            raise RuntimeError(f"Dynamic shape axis should be no more than the shape "
                               f"dimension for {dim_name}")
        shape[axis] = dim_name
    return helper.make_tensor_value_info(name, elem_type(t.dtype), shape)


def _initializer(onnx, name, t):
    from ._graph import array_of
    return onnx.numpy_helper.from_array(array_of(t), name)


def _set_output_shapes(onnx, proto, outputs, axes):
    """Output shapes from ONNX shape inference (so dims that follow a dynamic input are
    symbolic), with the dynamic_axes names applied; the traced shape where inference gives
    none."""
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
        types = {v.name: v.type for v in inferred.graph.output}
    except Exception:   # noqa: BLE001 - inference is a refinement; the traced shape remains
        types = {}
    producers = {o: n.op_type for n in proto.graph.node for o in n.output}
    for out, t in zip(proto.graph.output, outputs):
        dims = _inferred_dims(types.get(out.name), t)
        for i, d in enumerate(dims):
            if d is None:
                dims[i] = f"{producers.get(out.name, '')}{out.name}_dim_{i}"
        for axis, dim_name in axes.get(out.name, {}).items():
            dims[axis] = dim_name
        shape = out.type.tensor_type.shape
        shape.SetInParent()   # present even with no dims: a 0-d output
        for d in dims:
            dim = shape.dim.add()
            if isinstance(d, str):
                dim.dim_param = d
            else:
                dim.dim_value = d


def _inferred_dims(onnx_type, t):
    if onnx_type is None or not onnx_type.tensor_type.HasField("shape"):
        return list(t.shape)
    dims = onnx_type.tensor_type.shape.dim
    if len(dims) != t.dim():
        return list(t.shape)
    # inference names the dims it cannot relate to an input "unk__N"; torch names them after
    # the producing node, as the caller does for None
    return [d.dim_value if d.HasField("dim_value") else
            (d.dim_param if d.dim_param and not d.dim_param.startswith("unk__") else None)
            for d in dims]


def _write(onnx, proto, f):
    if f is None:
        raise AttributeError("'NoneType' object has no attribute 'write': with dynamo=False "
                             "the model is written to f, a path or a binary file object")
    data = proto.SerializeToString()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


class ONNXProgram:
    """The exported model as ``export(..., dynamo=True)`` returns it (torch.onnx.ONNXProgram).

    ``model_proto`` is the ``onnx.ModelProto``; calling the program runs it with ONNX
    Runtime on glasstorch tensors and returns a list of tensors.
    """

    def __init__(self, model_proto):
        self.model_proto = model_proto
        self.exported_program = None
        self._session = None

    def __repr__(self):
        g = self.model_proto.graph
        return (f"ONNXProgram(inputs={[i.name for i in g.input]}, "
                f"outputs={[o.name for o in g.output]}, nodes={len(g.node)}, "
                f"initializers={len(g.initializer)})")

    def save(self, destination, *, include_initializers=True,
             keep_initializers_as_inputs=False, external_data=None):
        """Write the model to ``destination``; with ``external_data`` the weights go to
        ``<destination>.data`` beside it (always when they pass 2 GB)."""
        onnx = _onnx()
        proto = type(self.model_proto)()
        proto.CopyFrom(self.model_proto)
        g = proto.graph
        if keep_initializers_as_inputs:
            known = {i.name for i in g.input}
            g.input.extend(onnx.helper.make_tensor_value_info(
                t.name, t.data_type, list(t.dims)) for t in g.initializer if t.name not in known)
        if not include_initializers:
            del g.initializer[:]
        size = sum(len(t.raw_data) for t in g.initializer)
        if external_data or size > 2 ** 31:
            location = os.path.basename(os.fspath(destination)) + ".data"
            onnx.save_model(proto, destination, save_as_external_data=True,
                            all_tensors_to_one_file=True, location=location, size_threshold=0)
        else:
            onnx.save_model(proto, destination)

    def __call__(self, *args, **kwargs):
        """Run the model with ONNX Runtime; tensors in, a list of tensors out."""
        import numpy as np

        from .._ops.creation import from_numpy
        try:
            import onnxruntime
        except ImportError as e:
            raise ImportError("running an ONNXProgram needs onnxruntime: "
                              "pip install onnxruntime") from e
        if self._session is None:
            self._session = onnxruntime.InferenceSession(
                self.model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
        values = _flatten(list(args) + list(kwargs.values()))
        feeds = {i.name: np.asarray(t._data) for i, t in zip(self._session.get_inputs(), values)}
        return [from_numpy(np.asarray(o)) for o in self._session.run(None, feeds)]
