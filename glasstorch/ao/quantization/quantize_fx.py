"""FX graph-mode post-training static quantization: ``fuse_fx``, ``prepare_fx``,
``convert_fx``.

The model is traced with ``torch.fx.symbolic_trace`` (no QuantStub/DeQuantStub needed). Then:
- fuse: conv/linear + batchnorm + relu chains become the fused modules eager mode's
  ``fuse_modules`` makes (batchnorm folded into the conv/linear in eval mode);
- prepare: nodes with a quantized kernel (modules with a quantized counterpart, tensor
  ``add``/``mul``/``cat``/``matmul``) get an observer on their output and one on each float
  input; ops that work on quantized tensors as they are (views, relu, max pooling) inherit
  their input's quantization and get no observer of their own;
- convert: input observers become ``quantize_per_tensor`` with the observed qparams, observed
  modules are swapped for their quantized counterparts (``from_float``), tensor ops become
  ``torch.ops.quantized.*`` calls, and a ``dequantize`` is put wherever a quantized value
  flows into float code or out of the graph.
"""

from __future__ import annotations

import copy
import itertools
import operator
import warnings

import glasstorch as torch
from glasstorch import nn
from glasstorch.nn import functional as F

from .fuse_modules import get_fuser_method
from .qconfig_mapping import QConfigMapping
from .quantization_mappings import get_default_static_quant_module_mappings

# graph mode also quantizes the fixed-range activations, whose qconfigs carry fixed qparams
# (torch's backend config does the same; eager mode leaves them in float)
_FX_EXTRA_MAPPINGS = {nn.Sigmoid: "Sigmoid", nn.Softmax: "Softmax"}

__all__ = ["fuse_fx", "prepare_fx", "convert_fx"]

_RELU_FUNCTIONS = (F.relu, torch.relu)
# ops glasstorch's quantized tensors run as they are, keeping their input's qparams
_SHARED_MODULES = (nn.ReLU, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.Identity,
                   nn.Flatten, nn.AdaptiveMaxPool2d)
_SHARED_FUNCTIONS = {torch.flatten, torch.reshape, torch.transpose, torch.squeeze,
                     torch.unsqueeze, torch.permute, F.max_pool1d, F.max_pool2d,
                     F.max_pool3d, *_RELU_FUNCTIONS}
_SHARED_METHODS = {"view", "reshape", "flatten", "transpose", "permute", "squeeze",
                   "unsqueeze", "contiguous", "relu", "relu_", "detach", "view_as",
                   "reshape_as", "expand", "t"}
# tensor ops with a quantized kernel: their ``torch.ops.quantized`` name
_KERNEL_FUNCTIONS = {operator.add: "add", torch.add: "add", operator.mul: "mul",
                     torch.mul: "mul", torch.matmul: "matmul", operator.matmul: "matmul",
                     torch.cat: "cat"}
_FUSABLE_HEADS = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear, nn.BatchNorm2d,
                  nn.BatchNorm3d)
_BATCHNORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def _sole_user(node):
    return next(iter(node.users)) if len(node.users) == 1 else None


def _is_relu(node, modules):
    if node.op == "call_module":
        return type(modules[node.target]) is nn.ReLU
    return node.op == "call_function" and node.target in _RELU_FUNCTIONS \
        and not node.kwargs.get("inplace", False)


def _fuse(gm):
    """Fuse conv/linear(/bn)(/relu) chains in ``gm`` in place."""
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or type(modules.get(node.target)) not in _FUSABLE_HEADS:
            continue
        chain, mods = [node], [modules[node.target]]
        nxt = _sole_user(node)
        if nxt is not None and nxt.op == "call_module" and \
                isinstance(modules[nxt.target], _BATCHNORMS) and \
                not isinstance(mods[0], _BATCHNORMS):
            chain.append(nxt)
            mods.append(modules[nxt.target])
            nxt = _sole_user(nxt)
        if nxt is not None and _is_relu(nxt, modules):
            chain.append(nxt)
            mods.append(modules[nxt.target] if nxt.op == "call_module"
                        else nn.ReLU().train(mods[0].training))
        if len(chain) == 1:
            continue
        try:
            fuser = get_fuser_method(tuple(type(m) for m in mods))
        except AssertionError:
            continue
        fused = fuser(mods[0].training, *mods)
        _set_submodule(gm, node.target, fused)
        modules[node.target] = fused
        chain[-1].replace_all_uses_with(node)
        for dead in reversed(chain[1:]):
            gm.graph.erase_node(dead)
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


def _set_submodule(gm, target, module):
    parent, _, name = target.rpartition(".")
    setattr(gm.get_submodule(parent) if parent else gm, name, module)


def fuse_fx(model, fuse_custom_config=None, backend_config=None):
    """``model`` traced and its conv/linear + batchnorm + relu chains fused."""
    from glasstorch import fx
    return _fuse(fx.symbolic_trace(model))


def _fx_mappings():
    from glasstorch.ao.nn import quantized as nnq
    mapping = get_default_static_quant_module_mappings()
    mapping.update({k: getattr(nnq, v) for k, v in _FX_EXTRA_MAPPINGS.items()})
    return mapping


def _tensor_inputs(node):
    args = node.args
    if node.op == "call_function" and node.target is torch.cat:
        args = tuple(args[0])
    return [a for a in args if isinstance(a, torch.fx.Node)]


def _classify(node, modules, mapping, qconfig_mapping):
    """("kernel" | "shared" | None, qconfig) for ``node``."""
    if node.op == "call_module":
        mod = modules[node.target]
        qconfig = qconfig_mapping._qconfig_for(node.target, type(mod))
        if qconfig is None:
            return None, None
        if type(mod) in mapping and not hasattr(mod, "activation_post_process"):
            return "kernel", qconfig
        return ("shared", qconfig) if isinstance(mod, _SHARED_MODULES) else (None, None)
    if node.op == "call_function":
        qconfig = qconfig_mapping._qconfig_for("", node.target)
        if qconfig is None:
            return None, None
        if node.target in _KERNEL_FUNCTIONS:
            inputs = node.args[0] if node.target is torch.cat else node.args[:2]
            if all(isinstance(a, torch.fx.Node) for a in inputs) and not node.kwargs:
                return "kernel", qconfig
            return None, None
        return ("shared", qconfig) if node.target in _SHARED_FUNCTIONS else (None, None)
    if node.op == "call_method" and node.target in _SHARED_METHODS:
        qconfig = qconfig_mapping._qconfig_for("", node.target)
        return ("shared", qconfig) if qconfig is not None else (None, None)
    return None, None


def prepare_fx(model, qconfig_mapping, example_inputs, prepare_custom_config=None,
               _equalization_config=None, backend_config=None):
    """``model`` traced, fused and given observers where ``qconfig_mapping`` asks for
    quantization; run calibration data through the result, then ``convert_fx`` it."""
    from glasstorch import fx
    if isinstance(qconfig_mapping, dict):
        warnings.warn("Passing a QConfig dictionary to prepare is deprecated and will not be "
                      "supported in a future version. Please pass in a QConfigMapping "
                      "instead.", FutureWarning, stacklevel=2)
        qconfig_mapping = QConfigMapping.from_dict(qconfig_mapping)
    if not isinstance(qconfig_mapping, QConfigMapping):
        raise TypeError(f"qconfig_mapping must be a QConfigMapping, got "
                        f"{type(qconfig_mapping).__name__}")
    if model.training:
        raise RuntimeError("glasstorch: prepare_fx is post-training quantization and needs "
                           "the model in eval mode (call model.eval()); quantization-aware "
                           "training in FX mode (prepare_qat_fx) is not implemented")
    gm = _fuse(fx.symbolic_trace(copy.deepcopy(model)))
    modules = dict(gm.named_modules())
    mapping = _fx_mappings()
    graph = gm.graph
    quantized, kernels, observers = set(), {}, {}
    counter = itertools.count()

    def observe(producer, qconfig):
        name = f"activation_post_process_{next(counter)}"
        gm.add_submodule(name, qconfig.activation())
        with graph.inserting_after(producer):
            obs = graph.call_module(name, (producer,))
        producer.replace_all_uses_with(obs, delete_user_cb=lambda user: user is not obs)
        observers[producer] = obs
        return obs

    for node in list(graph.nodes):
        kind, qconfig = _classify(node, modules, mapping, qconfig_mapping)
        inputs = _tensor_inputs(node)
        if kind == "shared" and inputs and inputs[0] in quantized:
            quantized.add(node)
        elif kind == "kernel":
            for a in inputs:
                if a not in quantized and a not in observers:
                    observe(a, qconfig)
            if node.op == "call_module":
                modules[node.target].qconfig = qconfig
            observe(node, qconfig)
            kernels[node.name] = node
            quantized.add(node)
            quantized.add(observers[node])
    gm._glasstorch_quant = {"kernels": set(kernels), "quantized": {n.name for n in quantized}}
    gm.recompile()
    return gm


def convert_fx(graph_module, convert_custom_config=None, _remove_qconfig=True,
               qconfig_mapping=None, backend_config=None):
    """The quantized GraphModule of a calibrated ``prepare_fx`` result."""
    info = getattr(graph_module, "_glasstorch_quant", None)
    if info is None:
        raise RuntimeError("convert_fx expects the GraphModule prepare_fx returned (and "
                           "calibrated)")
    gm = graph_module
    graph = gm.graph
    modules = dict(gm.named_modules())
    mapping = _fx_mappings()
    quantized = set(info["quantized"])
    def qparam_nodes(before, obs, stem):
        # named as torch names them: <consumer>_input_scale_0, _scale_0, _zero_point_0, ...
        scale, zp = obs.calculate_qparams()
        i = 0
        while hasattr(gm, f"{stem}scale_{i}"):
            i += 1
        names = []
        for suffix, value in (("scale", float(scale)), ("zero_point", int(zp))):
            names.append(f"{stem}{suffix}_{i}")
            gm.register_buffer(names[-1], torch.tensor(value))
        with graph.inserting_before(before):
            return [graph.get_attr(n) for n in names]

    for node in list(graph.nodes):
        if node.op != "call_module" or not node.target.startswith("activation_post_process_"):
            continue
        obs = modules[node.target]
        src = node.args[0]
        if src.name in info["kernels"]:
            if src.op == "call_module":
                float_mod = modules[src.target]
                float_mod.activation_post_process = obs
                _set_submodule(gm, src.target,
                               mapping[type(float_mod)].from_float(float_mod))
            else:
                scale, zp = qparam_nodes(src, obs, "_")
                op = getattr(torch.ops.quantized, _KERNEL_FUNCTIONS[src.target])
                if src.target is torch.cat:
                    dim = src.args[1] if len(src.args) > 1 else src.kwargs.get("dim", 0)
                    src.args, src.kwargs = (src.args[0], dim, scale, zp), {}
                else:
                    src.args = (src.args[0], src.args[1], scale, zp)
                src.target = op
            node.replace_all_uses_with(src)
            quantized.add(src.name)
        else:  # an input observer: quantize the float value here
            consumer = next(iter(node.users))
            scale, zp = qparam_nodes(node, obs, f"{consumer.name}_input_")
            with graph.inserting_before(node):
                q = graph.call_function(torch.quantize_per_tensor,
                                        (src, scale, zp, obs.dtype))
            node.replace_all_uses_with(q)
            quantized.add(q.name)
        graph.erase_node(node)

    # a dequantize wherever a quantized value reaches float code or the graph's output
    for node in list(graph.nodes):
        if node.name not in quantized:
            continue
        float_users = [u for u in node.users if u.name not in quantized]
        if not float_users:
            continue
        with graph.inserting_after(node):
            deq = graph.call_method("dequantize", (node,))
        for user in float_users:
            user.replace_input_with(node, deq)
    del gm._glasstorch_quant
    if _remove_qconfig:
        for mod in gm.modules():
            if hasattr(mod, "qconfig"):
                del mod.qconfig
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm
