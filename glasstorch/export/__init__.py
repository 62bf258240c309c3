"""torch.export: capture a module's forward as one whole graph (no graph breaks allowed) into an
``ExportedProgram`` whose graph takes parameters and buffers as inputs (lifted, named
``p_<name>``/``b_<name>`` as torch names them), with the signature saying which is which.

Capture is compile's: the bytecode check, then fx tracing (``glasstorch._dynamo``); anything
that would be a graph break raises ``torch._dynamo.exc.Unsupported``. The graph's ops are
glasstorch's public functions (torch's would be ATen ops after decomposition; glasstorch has no
decomposition tables, so ``run_decompositions`` returns an equal program). ``save``/``load``
round-trip a program through glasstorch's own file format (a pickle of the graph and the state
dict); real torch's ``.pt2`` archives are not read or written.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import io
import os

from .. import _tensor
from ..nn import Module

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "save", "load",
           "InputKind", "OutputKind", "InputSpec", "OutputSpec", "TensorArgument"]

_exporting = [0]


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument
    target: str | None
    persistent: bool | None = None


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument
    target: str | None = None


@dataclasses.dataclass
class ExportGraphSignature:
    """Which graph inputs are parameters, buffers, constants and user inputs."""
    input_specs: list
    output_specs: list

    @property
    def user_inputs(self):
        return tuple(s.arg.name for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def parameters(self):
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.PARAMETER)

    @property
    def buffers(self):
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.BUFFER)

    @property
    def user_outputs(self):
        return tuple(s.arg.name for s in self.output_specs)

    def __str__(self):
        lines = ["", "# inputs"]
        for s in self.input_specs:
            extra = "" if s.kind == InputKind.USER_INPUT else f" target={s.target!r}"
            if s.kind == InputKind.BUFFER:
                extra += f" persistent={s.persistent}"
            lines.append(f"{s.arg.name}: {s.kind.name}{extra}")
        lines += ["", "# outputs"] + [f"{s.arg.name}: {s.kind.name}" for s in self.output_specs]
        return "\n".join(lines) + "\n"


class Dim:
    """A named dynamic dimension with an optional ``[min, max]`` range
    (``dynamic_shapes={"x": {0: Dim("batch", max=64)}}``)."""

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):  # noqa: A002
        if min is not None and max is not None and min > max:
            raise ValueError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__ = name
        self.min = 0 if min is None else min
        self.max = max

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min > 2:
            parts.append(f"min={self.min}")
        if self.max is not None:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"

    # torch also spells these as attributes of Dim: Dim.AUTO, Dim.DYNAMIC, Dim.STATIC
    AUTO = DYNAMIC = STATIC = None


Dim.DYNAMIC = Dim("DYNAMIC")
Dim.AUTO = Dim("AUTO")


class ExportedProgram:
    """An exported forward: ``graph_module`` (inputs: lifted parameters and buffers, then user
    inputs; output: a tuple), ``graph_signature``, ``state_dict``, ``range_constraints``;
    ``module()`` gives a callable module again."""

    def __init__(self, graph_module, graph_signature, state_dict, range_constraints,
                 example_inputs, input_shapes):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.range_constraints = range_constraints
        self.example_inputs = example_inputs
        self._input_shapes = input_shapes       # per user input: [int or (min, max)]
        self.constants = {}

    @property
    def graph(self):
        return self.graph_module.graph

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        code = self.graph_module.print_readable(print_output=False).replace("\n", "\n    ")
        return (f"ExportedProgram:\n    {code}\nGraph signature: {self.graph_signature}\n"
                f"Range constraints: {self.range_constraints}\n")

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """An equal program: glasstorch's graphs hold its public ops and it has no
        decomposition tables to lower them further."""
        return ExportedProgram(copy.deepcopy(self.graph_module), self.graph_signature,
                               dict(self.state_dict), dict(self.range_constraints),
                               self.example_inputs, self._input_shapes)

    def module(self):
        """A module computing the program: it holds the state dict (same tensors) and checks
        its inputs' shapes against the exported ones."""
        return _UnliftedModule(self)


class _UnliftedModule(Module):
    """What ``ExportedProgram.module()`` returns."""

    def __init__(self, ep):
        super().__init__()
        sig = ep.graph_signature
        self._specs = sig.input_specs
        self._shapes = ep._input_shapes
        self._gm = ep.graph_module
        for s in sig.input_specs:
            if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                *path, leaf = s.target.split(".")
                owner = self
                for p in path:
                    if p not in owner._modules:
                        owner.add_module(p, Module())
                    owner = owner._modules[p]
                value = ep.state_dict[s.target]
                if s.kind == InputKind.PARAMETER:
                    owner.register_parameter(leaf, value)
                else:
                    owner.register_buffer(leaf, value, persistent=s.persistent)

    def forward(self, *args):
        user = [s for s in self._specs if s.kind == InputKind.USER_INPUT]
        if len(args) != len(user):
            raise TypeError(f"forward() expected {len(user)} inputs, got {len(args)}")
        for spec, arg, shape in zip(user, args, self._shapes):
            if not isinstance(arg, _tensor.Tensor):
                continue
            if arg.dim() != len(shape):
                raise AssertionError(f"Guard failed: {spec.arg.name}.dim() == {len(shape)}")
            for d, (size, want) in enumerate(zip(arg.shape, shape)):
                if isinstance(want, tuple):
                    lo, hi = want
                    if size < lo:
                        raise AssertionError(f"Guard failed: {spec.arg.name}.size()[{d}] >= "
                                             f"{lo}")
                    if hi is not None and size > hi:
                        raise AssertionError(f"Guard failed: {spec.arg.name}.size()[{d}] <= "
                                             f"{hi}")
                elif size != want:
                    raise AssertionError(f"Guard failed: {spec.arg.name}.size()[{d}] == {want}")
        state = dict(self.named_parameters()) | dict(self.named_buffers())
        it = iter(args)
        inputs = [state[s.target] if s.kind != InputKind.USER_INPUT else next(it)
                  for s in self._specs]
        out = self._gm(*inputs)
        return out[0] if len(out) == 1 else out


def _shapes(args, dynamic_shapes, names):
    """Per user input, each dimension's exported size or (min, max) when dynamic; and
    range_constraints keyed by the Dim names."""
    specs = dynamic_shapes
    if isinstance(specs, dict):
        specs = [specs.get(n) for n in names]
    elif specs is None:
        specs = [None] * len(args)
    out, ranges = [], {}
    for a, spec in zip(args, specs):
        shape = list(a.shape) if isinstance(a, _tensor.Tensor) else []
        if isinstance(spec, (list, tuple)):
            spec = dict(enumerate(spec))
        for d, dim in (spec or {}).items():
            if dim is None:
                continue
            if not isinstance(dim, Dim):
                raise ValueError(f"dynamic_shapes entries must be Dim, got {dim!r}")
            lo = max(dim.min, 0)
            shape[d] = (lo, dim.max)
            ranges[dim.__name__] = (max(lo, 2), dim.max)
        out.append(shape)
    return out, ranges


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=()):
    """Capture ``mod.forward(*args, **kwargs)`` as an ``ExportedProgram`` (one graph: a point
    that would be a graph break raises ``Unsupported``)."""
    from .. import fx
    from .._dynamo import convert_frame, exc
    from .._dynamo.bytecode_analysis import Unsound, Watch, check_hooks
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got "
                         f"{type(args)}")
    kwargs = kwargs or {}
    import inspect
    bound = inspect.signature(mod.forward).bind(*args, **kwargs).arguments
    names = [n for n, v in bound.items() if isinstance(v, _tensor.Tensor)]
    concrete = {n: v for n, v in bound.items() if not isinstance(v, _tensor.Tensor)}
    _exporting[0] += 1
    convert_frame._compiling[0] += 1
    try:
        reason = check_hooks(mod)
        if reason is not None:
            raise Unsound(reason)
        watch = Watch()
        watch.know_module(mod)
        with watch:
            tracer = convert_frame._CaptureTracer({n: bound[n] for n in names},
                                                  dynamic_shapes is None)
            graph = tracer.trace(mod, concrete_args=concrete or None)
    except Unsound as e:
        raise exc.Unsupported(str(e)) from e
    except Exception as e:          # noqa: BLE001 (a trace failure is an unsupported point)
        raise exc.Unsupported(f"{type(e).__name__}: {e}") from e
    finally:
        convert_frame._compiling[0] -= 1
        _exporting[0] -= 1
    gm = fx.GraphModule(mod, graph)
    return _lift(gm, mod, [bound[n] for n in names], names, dynamic_shapes)


def _lift(gm, mod, user_args, names, dynamic_shapes):
    """Turn get_attr reads of parameters and buffers into leading placeholders."""
    from .. import fx
    graph = copy.deepcopy(gm.graph)
    params = dict(mod.named_parameters(remove_duplicate=False))
    buffers = dict(mod.named_buffers(remove_duplicate=False))
    persistent = set(mod.state_dict(keep_vars=True))
    user_ph = [n for n in graph.nodes if n.op == "placeholder"]
    specs, lifted, state = [], {}, {}
    first = user_ph[0] if user_ph else next(iter(graph.nodes))
    for n in list(graph.nodes):
        if n.op != "get_attr" or n.target not in params and n.target not in buffers:
            continue
        if n.target not in lifted:
            is_param = n.target in params
            name = ("p_" if is_param else "b_") + n.target.replace(".", "_")
            with graph.inserting_before(first):
                ph = graph.placeholder(name)
            lifted[n.target] = ph
            state[n.target] = params[n.target] if is_param else buffers[n.target]
            specs.append(InputSpec(InputKind.PARAMETER if is_param else InputKind.BUFFER,
                                   TensorArgument(ph.name), n.target,
                                   None if is_param else n.target in persistent))
        n.replace_all_uses_with(lifted[n.target])
        graph.erase_node(n)
    for n in user_ph:
        if n.users or n.name in names:
            specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(n.name), None))
    out = next(n for n in graph.nodes if n.op == "output")
    result = out.args[0]
    results = result if isinstance(result, (tuple, list)) else (result,)
    out.args = (tuple(results),)
    out_specs = [OutputSpec(OutputKind.USER_OUTPUT,
                            TensorArgument(getattr(r, "name", repr(r)))) for r in results]
    graph.lint()
    lifted_gm = fx.GraphModule(mod, graph)
    shapes, ranges = _shapes(user_args, dynamic_shapes, names)
    return ExportedProgram(lifted_gm, ExportGraphSignature(specs, out_specs), state, ranges,
                           (tuple(user_args), {}), shapes)


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Write ``ep`` to ``f`` (a path or binary file) in glasstorch's program format."""
    from .. import save as torch_save
    payload = {"format": "glasstorch.export/1", "graph_module": ep.graph_module,
               "signature": ep.graph_signature, "state_dict": ep.state_dict,
               "range_constraints": ep.range_constraints, "input_shapes": ep._input_shapes,
               "example_inputs": ep.example_inputs, "extra_files": dict(extra_files or {})}
    torch_save(payload, f)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Read a program written by ``save``."""
    from .. import load as torch_load
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            f = io.BytesIO(fh.read())
    payload = torch_load(f, weights_only=False)
    if not isinstance(payload, dict) or payload.get("format") != "glasstorch.export/1":
        raise RuntimeError("not a glasstorch exported program (torch's .pt2 archives are not "
                           "read by glasstorch)")
    if extra_files is not None:
        for k in extra_files:
            extra_files[k] = payload["extra_files"].get(k, "")
    return ExportedProgram(payload["graph_module"], payload["signature"],
                           payload["state_dict"], payload["range_constraints"],
                           payload["example_inputs"], payload["input_shapes"])
