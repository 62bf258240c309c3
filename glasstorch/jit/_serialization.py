"""``torch.jit.save``/``torch.jit.load`` in TorchScript's archive format, so that files move
between glasstorch and PyTorch in both directions.

An archive is a zip folder holding ``code/__torch__/...py`` (each module type as a TorchScript
class: its parameters, buffers, attributes, submodules and compiled methods), ``data.pkl``
(the module objects, pickled as ``__torch__`` class instances whose state is their
attributes; tensors refer to ``data/<key>`` records), ``constants.pkl`` (the tensors that the
code names ``CONSTANTS.c<i>``, records under ``constants/``), ``version``, ``byteorder`` and
``extra/<name>`` files.

Loading treats the archive as data: ``data.pkl`` goes through an unpickler that knows only
tensors, storages and ``__torch__`` objects, and the TorchScript source is parsed (never
executed) and compiled by glasstorch's own frontend, against a namespace that reaches only
tensor operators.
"""

from __future__ import annotations

import ast
import collections
import io
import os
import pickle
import zipfile

from .. import serialization as _ser
from .._core.backend import xp
from .._tensor import Tensor
from . import _ir
from ._compiler import unchecked_cast, uninitialized

__all__ = ["save", "load"]

# The operator-set version written in ``version``: the ops in the code have today's
# semantics, so no upgrader (such as the one for integer ``div`` before version 4) applies.
_PRODUCED_VERSION = b"10\n"


# =========================================================================== saving
class _Obj:
    """A module instance in ``data.pkl``: an object of TorchScript class ``qualname``."""

    __slots__ = ("qualname", "state")

    def __init__(self, qualname, state):
        self.qualname, self.state = qualname, state


class _ArchivePickler(_ser._Pickler):
    dispatch = _ser._Pickler.dispatch.copy()

    def _save_obj(self, obj):
        module, _, name = obj.qualname.rpartition(".")
        self._save_torch_global(_ser._TorchGlobal(module, name))
        self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)   # an empty object, then its state
        self.memoize(obj)
        self.save(obj.state)
        self.write(pickle.BUILD)

    dispatch[_Obj] = _save_obj

    def reducer_override(self, obj):
        if isinstance(obj, Tensor) and type(obj) is not Tensor and \
                type(obj).__name__ == "Parameter":
            # TorchScript holds a parameter as a tensor that requires grad
            storage, offset, size, stride = self._tensor_args(obj)
            return (_ser._G_REBUILD, (storage, offset, size, stride, obj.requires_grad,
                                      collections.OrderedDict()))
        return super().reducer_override(obj)


def _pickle(obj):
    buf = io.BytesIO()
    p = _ArchivePickler(buf)
    p.dump(obj)
    return buf.getvalue(), list(p.records.values())


def _py_type(t):
    """A type as written in archive code: a traced tensor's shape type is plain Tensor."""
    return "Tensor" if t.kind == "Tensor" else t.py()


def _bound_args(graph, node, args):
    """The arguments of a recorded call to a glasstorch function, by parameter name (code
    strings; defaults filled in), or None when the call is not of one."""
    import inspect
    import re
    m = re.match(r"_K\[(\d+)\]\((.*)\)$", node.tpl or "", re.S)
    if m is None:
        return None
    fn = graph.consts[int(m.group(1))]
    pos, kw = [], {}
    for part in re.finditer(r"(?:(\w+)=)?\{(\d+)\}", m.group(2)):
        if part.group(1):
            kw[part.group(1)] = args[int(part.group(2))]
        else:
            pos.append(args[int(part.group(2))])
    try:
        bound = inspect.signature(fn).bind(*pos, **kw)
    except (TypeError, ValueError):
        return None
    given = set(bound.arguments)
    bound.apply_defaults()
    return {k: v if k in given else _ir._code_literal(v, True)
            for k, v in bound.arguments.items()}


def _aten_form(graph, node, args):
    """torch's aten spelling of a traced call to a functional whose Python signature differs
    from its aten schema (``F.relu(x, inplace=False)`` is ``torch.relu(x)``)."""
    name = node.kind.partition("::")[2]
    build = _ATEN_FORMS.get(name)
    if build is None:
        return None
    a = _bound_args(graph, node, args)
    try:
        return None if a is None else build(a)
    except KeyError:           # a function of another signature (already aten's)
        return None


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}     # aten's Reduction codes


def _unary_form(name):
    return lambda a: f"torch.{name}({a['input']})"


def _softmax_form(name):
    return lambda a: f"torch.{name}({a['input']}, {a['dim']}, {a.get('dtype', 'None')})"


_ATEN_FORMS = {
    **{n: _unary_form(n) for n in ("relu", "selu", "silu", "mish", "hardswish",
                                    "hardsigmoid", "sigmoid", "tanh")},
    "dropout": lambda a: f"torch.dropout({a['input']}, {a['p']}, {a['training']})",
    "embedding": lambda a: (f"torch.embedding({a['weight']}, {a['input']}, "
                            f"{-1 if a['padding_idx'] == 'None' else a['padding_idx']}, "
                            f"{a['scale_grad_by_freq']}, {a['sparse']})"),
    "batch_norm": lambda a: (f"torch.batch_norm({a['input']}, {a['weight']}, {a['bias']}, "
                             f"{a['running_mean']}, {a['running_var']}, {a['training']}, "
                             f"{a['momentum']}, {a['eps']}, True)"),
    "softmax": _softmax_form("softmax"), "log_softmax": _softmax_form("log_softmax"),
    "cross_entropy": lambda a: (
        f"torch.cross_entropy_loss({a['input']}, {a['target']}, {a['weight']}, "
        f"{_REDUCTIONS[a['reduction'].strip(chr(39))]}, {a['ignore_index']}, "
        f"{a['label_smoothing']})"),
    "normalize": lambda a: (
        f"torch.div({a['input']}, torch.expand_as(torch.clamp_min(torch.linalg_vector_norm("
        f"{a['input']}, {a['p']}, [{a['dim']}], True), {a['eps']}), {a['input']}))"),
}


def _refuse_python_calls(graph):
    """An archive holds no Python: calls of ``@torch.jit.ignore``d functions cannot go in."""
    from ._internal import FunctionModifiers
    for n in graph.findAllNodes("prim::PythonOp") + graph.findAllNodes("prim::CallMethod"):
        if not (n.tpl or "").startswith("_K["):
            continue                      # a compiled method
        fn = graph.consts[int(n.tpl[3:n.tpl.index("]")])]
        if getattr(fn, "_torchscript_modifier", None) == FunctionModifiers.IGNORE:
            where = f":\n{n.loc.highlight()}" if n.loc is not None else ""
            raise RuntimeError(f"Could not export Python function call '{fn.__name__}'. "
                               f"Remove calls to Python functions before export. Did you "
                               f"forget to add @script or @script_method annotation? If this "
                               f"is a nn.ModuleList, add it to __constants__{where}")


def _method_source(name, graph, names, types_, defaults, ret, constants, method=True):
    import inspect
    _refuse_python_calls(graph)
    args = ["self"] if method else []
    for nm, t, d in zip(names, types_, defaults):
        default = "" if d is inspect.Parameter.empty else "=" + _ir._code_literal(d, True)
        args.append(f"{nm}: {_py_type(t)}{default}")
    header = f"def {name}(" + ",\n    ".join(args) + f") -> {_py_type(ret)}:"
    return _ir.code_source(graph, header, constants, _aten_form)


class _Writer:
    """Collects the classes (by qualified name, mangled where two module types share one),
    their source and the constants table while walking the module tree."""

    def __init__(self):
        self.classes = {}         # final qualified name -> class source
        self.functions = {}       # qualified name -> source of a script function called
        self.constants = []

    def called_functions(self, graph):
        """Write the script functions ``graph`` calls (and those they call)."""
        for n in graph.findAllNodes("prim::CallFunction"):
            sf = n.attrs.get("fn")
            if sf is None or sf.qualified_name in self.functions:
                continue
            self.functions[sf.qualified_name] = None       # placeholder: recursion guard
            self.functions[sf.qualified_name] = _method_source(
                sf.qualified_name.rpartition(".")[2], sf.graph, sf._names, sf._types,
                sf._defaults, sf._return_type, self.constants, method=False)
            self.called_functions(sf.graph)

    def class_name(self, qualname, body):
        name, i = qualname, 0
        while name in self.classes and self.classes[name] != body.replace("@NAME@", name):
            prefix, _, short = qualname.rpartition(".")
            name = f"{prefix}.___torch_mangle_{i}.{short}"
            i += 1
        self.classes[name] = body.replace("@NAME@", name)
        return name

    def module(self, m):
        """The ``_Obj`` for ScriptModule ``m`` (its class written to ``self.classes``)."""
        from ._script import RecursiveScriptModule
        subs = {}
        for k, sub in m._modules.items():
            if sub is not None:
                subs[k] = self.module(sub)
        if isinstance(m, RecursiveScriptModule):
            methods, attrs = _scripted_parts(m)
            qualname = m._info.class_name
        else:
            methods, attrs = _traced_parts(m)
            from ._trace import _class_name
            cls = m.__dict__.get("_orig_class")
            qualname = _class_name(cls) if cls is not None else \
                "__torch__.torch.nn.modules.module.Module"
        lines = []
        params = [k for k, v in m._parameters.items() if v is not None]
        bufs = [k for k, v in m._buffers.items() if v is not None]
        lines.append("  __parameters__ = [" + "".join(f'"{k}", ' for k in params) + "]")
        lines.append("  __buffers__ = [" + "".join(f'"{k}", ' for k in bufs) + "]")
        state = {}
        decl = [(k, "Tensor" if v is not None else "NoneType", v)
                for k, v in list(m._parameters.items()) + list(m._buffers.items())]
        decl.append(("training", "bool", bool(m.training)))
        decl += attrs
        for k, obj in subs.items():
            decl.append((k, obj.qualname, obj))
        for k, t, v in decl:
            lines.append(f"  {k} : {t}" if k.isidentifier() else
                         f'  __annotations__["{k}"] = {t}')
            state[k] = v
        for name, parts in methods.items():
            if isinstance(parts, str):         # a library module's forward, as source
                src = parts
            else:
                src = _method_source(name, *parts, self.constants)
                self.called_functions(parts[0])
            lines.extend("  " + ln for ln in src.rstrip("\n").split("\n"))
        body = "class " + qualname.rpartition(".")[2] + "(Module):\n" + "\n".join(lines) + "\n"
        return _Obj(self.class_name(qualname, body), state)

    def files(self):
        """``code/`` file name -> source: one file per Python module of class names."""
        by_file = {}
        for qualname, src in list(self.classes.items()) + list(self.functions.items()):
            module = qualname.rpartition(".")[0]
            by_file.setdefault("code/" + module.replace(".", "/") + ".py", []).append(src)
        return {k: "\n".join(v).encode() for k, v in by_file.items()}


def _ints(v, n):
    v = [v] * n if isinstance(v, int) else list(v)
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def _conv_forward(m):
    if m.padding_mode != "zeros" or isinstance(m.padding, str):
        return None
    nd = len(m.kernel_size)
    return (f"torch.conv{nd}d(input, self.weight, self.bias, {_ints(m.stride, nd)}, "
            f"{_ints(m.padding, nd)}, {_ints(m.dilation, nd)}, {m.groups})")


def _pool_forward(m):
    nd = {"MaxPool1d": 1, "MaxPool2d": 2, "MaxPool3d": 3}[type(m).__name__]
    if m.return_indices:
        return None
    stride = m.stride if m.stride is not None else m.kernel_size
    return (f"torch.max_pool{nd}d(input, {_ints(m.kernel_size, nd)}, {_ints(stride, nd)}, "
            f"{_ints(m.padding, nd)}, {_ints(m.dilation, nd)}, {m.ceil_mode})")


def _norm_forward(m):
    if not m.track_running_stats or m.training:
        return None
    return (f"torch.batch_norm(input, self.weight, self.bias, self.running_mean, "
            f"self.running_var, False, 0.0, {m.eps!r}, True)")


# TorchScript forwards of library modules whose Python forward glasstorch's frontend does
# not compile (they dispatch through Python tables): the expression of ``input``
_LIBRARY_FORWARDS = {
    **dict.fromkeys(("Conv1d", "Conv2d", "Conv3d"), _conv_forward),
    **dict.fromkeys(("MaxPool1d", "MaxPool2d", "MaxPool3d"), _pool_forward),
    **dict.fromkeys(("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"), _norm_forward),
    "ReLU": lambda m: "torch.relu(input)", "Tanh": lambda m: "torch.tanh(input)",
    "Sigmoid": lambda m: "torch.sigmoid(input)", "Identity": lambda m: "input",
    "Dropout": lambda m: f"torch.dropout(input, {float(m.p)!r}, self.training)",
    "Flatten": lambda m: f"torch.flatten(input, {m.start_dim}, {m.end_dim})",
}


def _library_forward(sm):
    """Source of a library module's forward for an archive, or None."""
    make = _LIBRARY_FORWARDS.get(type(sm._info.module).__name__)
    expr = make(sm._info.module) if make is not None else None
    if expr is None:
        return None
    return f"def forward(self,\n    input: Tensor) -> Tensor:\n  return {expr}\n"


def _scripted_parts(sm):
    """(methods, attributes) of a scripted module: the compiled methods (a library module's
    forward is compiled here from its Python source) and the attributes they read."""
    import copy
    info = sm._info
    fns = dict(sm._script_methods)
    if info.builtin and info.kind == "module" and "forward" in sm.__dict__:
        shadow = copy.copy(info)       # compile the library forward without changing sm
        shadow.builtin, shadow.methods = False, {}
        shadow.sm = type("_Shadow", (), {})()
        shadow.sm._script_methods, shadow.sm._modules = {}, sm._modules
        try:
            shadow.method("forward")
        except Exception as exc:
            src = _library_forward(sm)
            if src is not None:
                return {"forward": src}, []
            raise RuntimeError(f"torch.jit.save: glasstorch cannot write module "
                               f"{type(info.module).__name__} in TorchScript: its forward "
                               f"does not compile ({exc})") from exc
        fns = dict(shadow.sm._script_methods)
    methods = {nm: (f.graph, f._names, f._types, f._defaults, f._return_type)
               for nm, f in fns.items()}
    skip = set(sm._parameters) | set(sm._buffers) | set(sm._modules) | {"training"}
    attrs, seen = [], set()
    for f in fns.values():
        for n in f.graph.findAllNodes("prim::GetAttr"):
            nm = n.attrs["name"]
            if n.inputs[0] is f.graph.inputs[0] and nm not in skip and nm not in seen:
                seen.add(nm)
                t = info.attr_type(nm)
                attrs.append((nm, _py_type(t), sm.__dict__.get(nm, getattr(sm, nm, None))))
    return methods, attrs


def _traced_parts(tm):
    import inspect
    methods = {}
    for nm, tf in tm.__dict__.get("_traced", {}).items():
        ts = [v.type for v in tf.graph.inputs[1:]]
        methods[nm] = (tf.graph, tf._names, ts, [inspect.Parameter.empty] * len(ts),
                       tf.graph.block.returns[0].type)
    return methods, []


def _function_module(w, sf):
    """A script function is saved as torch does: the forward of a ``PlaceholderModule``."""
    body = ("class PlaceholderModule(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n")
    src = _method_source("forward", sf.graph, sf._names, sf._types, sf._defaults,
                         sf._return_type, w.constants)
    w.called_functions(sf.graph)
    body += "".join("  " + ln + "\n" for ln in src.rstrip("\n").split("\n"))
    return _Obj(w.class_name("__torch__.PlaceholderModule", body), {"training": True})


def save(m, f, _extra_files=None):
    """Write ScriptModule ``m`` (scripted or traced) or a ScriptFunction as a TorchScript
    archive to path or binary file ``f``; ``_extra_files`` maps names to contents stored
    under ``extra/``."""
    from ._script import ScriptFunction, ScriptModule
    w = _Writer()
    if isinstance(m, ScriptFunction):
        root = _function_module(w, m)
    elif isinstance(m, ScriptModule):
        root = w.module(m)
    else:
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save'")
    data_pkl, records = _pickle(root)
    const_pkl, const_records = _pickle(tuple(w.constants))
    entries = [(name, src) for name, src in sorted(w.files().items())]
    entries.append(("constants.pkl", const_pkl))
    entries += [(f"constants/{r.key}", memoryview(r.bytes)) for r in const_records]
    for name, content in (_extra_files or {}).items():
        entries.append((f"extra/{name}", content.encode() if isinstance(content, str)
                        else bytes(content)))
    prefix = _ser._archive_name(f)

    def write(fh):
        _ser._write_zip(fh, prefix, data_pkl, records, extra_records=entries,
                        version=_PRODUCED_VERSION)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            write(fh)
    else:
        write(f)


# =========================================================================== loading
class _ArchiveObject:
    """An object of a ``__torch__`` class read from ``data.pkl``: its attributes in
    ``state``. Subclasses per class name are made by the unpickler."""

    qualname = ""

    def __setstate__(self, state):
        self.state = state


def _list_of(values, *_):
    return list(values)


class _ArchiveUnpickler(pickle.Unpickler):
    """Admits tensors, storages, containers and ``__torch__`` objects, nothing else."""

    _jit_pickle = {"build_intlist": _list_of, "build_tensorlist": _list_of,
                   "build_doublelist": _list_of, "build_boollist": _list_of,
                   "restore_type_tag": lambda value, type_str: value}

    def __init__(self, data, storages, classes):
        super().__init__(io.BytesIO(data))
        self._storages = storages
        self._classes = classes

    def find_class(self, module, name):
        if module == "__torch__" or module.startswith("__torch__."):
            qual = f"{module}.{name}"
            cls = self._classes.get(qual)
            if cls is None:
                cls = self._classes[qual] = type(name, (_ArchiveObject,), {"qualname": qual})
            return cls
        if module == "torch.jit._pickle" and name in self._jit_pickle:
            return self._jit_pickle[name]
        obj = _ser._SAFE.get((module, name))
        if obj is None:
            raise pickle.UnpicklingError(f"torch.jit.load: the archive names global "
                                         f"{module}.{name}, which a TorchScript archive "
                                         f"does not hold")
        return obj

    def persistent_load(self, pid):
        return self._storages(pid)


class _Archive:
    """The records of an opened TorchScript zip archive."""

    def __init__(self, fh, map_location):
        try:
            self.zf = zipfile.ZipFile(fh)
        except zipfile.BadZipFile as exc:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {exc}") \
                from None
        names = self.zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not "
                               "found")
        self.prefix = pkl[0][:-len("data.pkl")]
        self.names = {n[len(self.prefix):] for n in names if n.startswith(self.prefix)}
        if "constants.pkl" not in self.names:     # a torch.save checkpoint, say
            raise RuntimeError("PytorchStreamReader failed locating file constants.pkl: "
                               "file not found (not a TorchScript archive)")
        self.locations = _ser._Locations(map_location)
        self.classes = {}

    def read(self, name):
        return self.zf.read(self.prefix + name)

    def unpickle(self, name, folder):
        cache = {}

        def storages(pid):
            stype, key, location, numel = _ser._check_pid(pid, 5)
            buf = cache.get(key)
            if buf is None:
                raw = self.read(f"{folder}/{key}")
                if len(raw) != numel * stype.dtype.itemsize:
                    raise RuntimeError(f"torch.jit.load: record {folder}/{key} holds "
                                       f"{len(raw)} bytes, expected "
                                       f"{numel * stype.dtype.itemsize}")
                arr = xp.frombuffer(bytearray(raw), xp.uint8)
                buf = cache[key] = self.locations.place(arr, stype.dtype, location)
            return _ser._storage_from(buf, stype.dtype, stype)
        return _ArchiveUnpickler(self.read(name), storages, self.classes).load()


# -- the namespace archive code is compiled against
def _gt():
    import glasstorch
    return glasstorch


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark=False, deterministic=False, cudnn_enabled=True,
                 allow_tf32=True):
    """``aten::_convolution``, which torch's traces record for every convolution."""
    F = _gt().nn.functional
    nd = weight.dim() - 2
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def cross_entropy_loss(input, target, weight=None, reduction=1, ignore_index=-100,
                       label_smoothing=0.0):
    """``aten::cross_entropy_loss``: ``F.cross_entropy`` with the reduction as its code."""
    name = {v: k for k, v in _REDUCTIONS.items()}[reduction]
    return _gt().nn.functional.cross_entropy(input, target, weight, ignore_index=ignore_index,
                                             reduction=name, label_smoothing=label_smoothing)


def _dtype(code):
    from ..library import _SCALAR_TYPE_CODES
    names = {v: k for k, v in _SCALAR_TYPE_CODES.items()}
    return getattr(_gt(), names[code]) if isinstance(code, int) and not isinstance(
        code, bool) else code


def to(self, *args, **kwargs):
    """``aten::to`` as archive code calls it: a dtype is its ScalarType code."""
    args = list(args)
    for i, a in enumerate(args):
        if isinstance(a, int) and not isinstance(a, bool):
            args[i] = _dtype(a)
            break
    if "dtype" in kwargs:
        kwargs["dtype"] = _dtype(kwargs["dtype"])
    return self.to(*args, **kwargs)


def _factory(name):
    """A factory as archive code calls it: ``dtype`` is a ScalarType code, and torch's
    ``layout=None``/``pin_memory=None`` keywords are spelled out."""
    def make(*args, **kwargs):
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = _dtype(kwargs["dtype"])
        for k in ("layout", "pin_memory", "memory_format"):
            if kwargs.get(k) in (None, False):
                kwargs.pop(k, None)
        return getattr(_gt(), name)(*args, **kwargs)
    make.__name__ = make.__qualname__ = name
    return make


_FACTORIES = ("zeros", "ones", "full", "empty", "rand", "randn", "randint", "arange",
              "linspace", "logspace", "eye", "tensor", "scalar_tensor", "zeros_like",
              "ones_like", "full_like", "empty_like", "rand_like", "randn_like")
def _alias(name, target, space=None):
    """aten operator ``name``, which glasstorch has as ``target`` (same results), in the
    namespace called ``space`` (``linalg``) or at the top."""
    def op(*args, **kwargs):
        where = getattr(_gt(), space) if space else _gt()
        return getattr(where, target)(*args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


_HELPERS = {"_convolution": _convolution, "to": to, "cross_entropy_loss": cross_entropy_loss,
            **{name: _factory(name) for name in _FACTORIES},
            **{name: _alias(name, target) for name, target in (
                ("unsafe_chunk", "chunk"), ("unsafe_split", "split"),
                ("unsafe_split_with_sizes", "split_with_sizes"))}}
# glasstorch functions that are no tensor operator: archive code may not reach them
_DENIED = frozenset({"save", "load", "from_file", "set_default_dtype", "set_default_device",
                     "set_default_tensor_type", "set_printoptions", "set_num_threads",
                     "set_num_interop_threads", "use_deterministic_algorithms", "compile",
                     "set_flush_denormal", "set_warn_always", "set_anomaly_enabled",
                     "manual_seed", "seed", "set_rng_state", "import_ir_module"})


def _resolve_op(name):
    """The glasstorch operator ``torch.<name>`` in archive code names, or None."""
    if name in _HELPERS:
        return _HELPERS[name]
    if name.startswith("_") or name in _DENIED:
        return None
    gt = _gt()
    space, _, rest = name.partition("_")
    if space in ("linalg", "special", "fft") and callable(getattr(getattr(gt, space), rest,
                                                                  None)):
        # aten's linalg_vector_norm is torch.linalg.vector_norm; keep aten's name for .code
        op = _HELPERS[name] = _alias(name, rest, space)
        return op
    for space in (gt, gt.nn.functional):
        obj = getattr(space, name, None)
        if obj is None:
            continue
        if obj is gt.device or type(obj).__name__ == "dtype":
            return obj
        mod = getattr(obj, "__module__", "") or ""
        if callable(obj) and not isinstance(obj, type) and mod.startswith("glasstorch"):
            return obj
    return None


class _TorchOps:
    """``torch`` in archive code: operators only."""

    _archive_namespace = True

    def __getattr__(self, name):
        obj = _resolve_op(name)
        if obj is None:
            raise AttributeError(f"torch.jit.load: unknown operator torch.{name}")
        return obj


class _Namespace:
    """``__torch__.<...>`` in archive code: the archive's classes (as types) and functions."""

    _archive_namespace = True

    def __init__(self, loader, path):
        self._loader, self._path = loader, path

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._loader.lookup(f"{self._path}.{name}")


class _Constants:
    _archive_namespace = True

    def __init__(self, values):
        self._values = values

    def __getattr__(self, name):
        if name.startswith("c") and name[1:].isdigit() and int(name[1:]) < len(self._values):
            return self._values[int(name[1:])]
        raise AttributeError(f"torch.jit.load: the archive has no constant {name}")


_BIN = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "div": ast.Div,
        "floordiv": ast.FloorDiv, "remainder": ast.Mod, "pow": ast.Pow,
        "__and__": ast.BitAnd, "__or__": ast.BitOr, "__xor__": ast.BitXor}
_CMP = {"eq": ast.Eq, "ne": ast.NotEq, "lt": ast.Lt, "gt": ast.Gt, "le": ast.LtE,
        "ge": ast.GtE, "__is__": ast.Is, "__isnot__": ast.IsNot}


_DECLARATIONS = frozenset({"__torch__", "__parameters__", "__buffers__", "__annotations__"})


class _Rewrite(ast.NodeTransformer):
    """Torch's printed TorchScript (``torch.add(a, b)``, ``torch.size(x, 0)``,
    ``ops.prim.NumToTensor(n)``) into the Python spelling glasstorch's frontend compiles
    (``a + b``, ``x.size(0)``); names with double underscores are refused."""

    def __init__(self, filename):
        self.filename = filename

    def refuse(self, node, what):
        raise RuntimeError(f"torch.jit.load: {self.filename}:{node.lineno}: {what} is not "
                           f"TorchScript")

    def visit_Name(self, node):
        if node.id.startswith("__") and node.id not in _DECLARATIONS:
            self.refuse(node, f"name {node.id}")
        return node

    def visit_Attribute(self, node):
        if node.attr.startswith("__") and not node.attr.startswith("___torch_mangle_"):
            self.refuse(node, f"attribute {node.attr}")
        return self.generic_visit(node)

    def visit_Expr(self, node):
        c = node.value
        if isinstance(c, ast.Call) and ast.unparse(c.func) == "ops.prim.RaiseException":
            exc = ast.Call(ast.Name("Exception", ast.Load()), [self.visit(c.args[0])], [])
            return ast.copy_location(ast.Raise(ast.copy_location(exc, node), None), node)
        if isinstance(c, ast.Call) and ast.unparse(c.func) == "torch._set_item" and \
                len(c.args) == 3:                  # container[key] = value
            a = [self.visit(x) for x in c.args]
            target = ast.Subscript(a[0], a[1], ast.Store())
            return ast.fix_missing_locations(ast.copy_location(ast.Assign([target], a[2]),
                                                               node))
        return self.generic_visit(node)

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        f, a = node.func, node.args
        spelled = ast.unparse(f)
        new = None
        if spelled == "ops.prim.unchecked_unwrap_optional" and len(a) == 1:
            return a[0]
        if spelled in ("ops.prim.device", "ops.prim.dtype") and len(a) == 1:
            new = ast.Attribute(a[0], spelled.rpartition(".")[2], ast.Load())
        elif spelled == "ops.prim.NumToTensor":     # a number as a 0-dimensional tensor
            new = ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "tensor", ast.Load()),
                           a, [])
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == "torch":
            op = f.attr
            if op == "__contains__" and len(a) == 2:
                new = ast.Compare(a[1], [ast.In()], [a[0]])
            elif op in _BIN and len(a) == 2 and not node.keywords:
                new = ast.BinOp(a[0], _BIN[op](), a[1])
            elif op in _CMP and len(a) == 2 and not node.keywords:
                new = ast.Compare(a[0], [_CMP[op]()], [a[1]])
            elif op == "neg" and len(a) == 1:
                new = ast.UnaryOp(ast.USub(), a[0])
            elif op == "__not__" and len(a) == 1:
                new = ast.UnaryOp(ast.Not(), a[0])
            elif op == "__getitem__" and len(a) == 2:
                new = ast.Subscript(a[0], a[1], ast.Load())
            elif op in ("len", "list") and len(a) == 1:
                new = ast.Call(ast.Name(op, ast.Load()), a, [])
            elif _resolve_op(op) is None and a and not op.startswith("__"):
                new = ast.Call(ast.Attribute(a[0], op, ast.Load()), a[1:], node.keywords)
            elif op.startswith("__"):
                self.refuse(node, f"operator torch.{op}")
        else:
            node.func = self.visit(f)
        if new is None:
            return node
        return ast.fix_missing_locations(ast.copy_location(new, node))


class _ClassDecl:
    """What an archive's ``class X(Module):`` declares."""

    def __init__(self, node, lines, filename):
        self.lines, self.filename = lines, filename
        self.params, self.buffers = [], []
        self.attrs = {}            # name -> annotation AST
        self.constants = {}        # name -> value (``n : Final[int] = 3``)
        self.methods = {}          # name -> FunctionDef
        for s in node.body:
            if isinstance(s, ast.FunctionDef):
                self.methods[s.name] = s
            elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                self.attrs[s.target.id] = s.annotation
                if s.value is not None:
                    self.constants[s.target.id] = ast.literal_eval(s.value)
            elif isinstance(s, ast.Assign) and len(s.targets) == 1:
                t = s.targets[0]
                if isinstance(t, ast.Name) and t.id in ("__parameters__", "__buffers__"):
                    (self.params if t.id == "__parameters__" else self.buffers).extend(
                        ast.literal_eval(s.value))
                elif isinstance(t, ast.Subscript) and ast.unparse(t.value) == \
                        "__annotations__":
                    self.attrs[ast.literal_eval(t.slice)] = s.value


class _ArchiveInfo:
    """What the compiler knows about one loaded module (the counterpart of
    ``_script._ModuleInfo`` for a module whose class comes from an archive)."""

    kind = "module"
    builtin = False
    frozen = False

    def __init__(self, loader, sm, qualname, decl):
        self.loader, self.module, self.sm = loader, sm, sm
        self.class_name, self.decl = qualname, decl
        self.jit_type = _ir.JitType("Class", name=qualname)
        self.constants = set(decl.constants)
        self.methods = {}
        self.compiling = set()

    def submodule_names(self):
        return [k for k, v in self.sm._modules.items() if v is not None]

    module_names = submodule_names

    def submodule_info(self, name):
        return self.sm._modules[name]._info

    def attr_kind(self, attr):
        if attr in self.constants:
            return "constant"
        return "method" if attr in self.decl.methods else "attr"

    def attr_type(self, attr):
        from ._compiler import type_from_python
        sm = self.sm
        if attr in sm._parameters or attr in sm._buffers:
            v = sm._parameters.get(attr, sm._buffers.get(attr))
            return _ir.TensorT if v is not None else _ir.NoneT
        if attr == "training":
            return _ir.BoolT
        ann = self.decl.attrs.get(attr)
        if ann is None:
            return None
        return type_from_python(self.loader.eval_type(ann))

    def missing_attr_message(self, attr):
        return f"Module '{self.class_name.rpartition('.')[2]}' has no attribute '{attr}' "

    def method(self, name, e=None):
        got = self.methods.get(name)
        if got is not None:
            return got
        fdef = self.decl.methods.get(name)
        if fdef is None:
            raise RuntimeError(f"Module '{self.class_name}' has no method '{name}'")
        if name in self.compiling:
            raise RuntimeError(f"Recursive calls are not supported in TorchScript: method "
                               f"'{name}' calls itself")
        self.compiling.add(name)
        try:
            got = self.loader.compile(fdef, self.decl, self, name)
        finally:
            self.compiling.discard(name)
        self.sm._script_methods[name] = got
        self.methods[name] = got
        return got


class _Loader:
    """Parses an archive's ``code/`` files and builds its modules and functions."""

    def __init__(self, archive, constants):
        import math
        import typing
        gt = _gt()
        self.class_defs, self.func_defs, self.functions = {}, {}, {}
        for name in sorted(archive.names):
            if not (name.startswith("code/") and name.endswith(".py")):
                continue
            module = name[len("code/"):-len(".py")].replace("/", ".")
            text = archive.read(name).decode("utf-8")
            tree = _Rewrite(name).visit(ast.parse(text, name))
            lines = text.splitlines()
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.class_defs[f"{module}.{node.name}"] = _ClassDecl(node, lines, name)
                elif isinstance(node, ast.FunctionDef):
                    self.func_defs[f"{module}.{node.name}"] = (node, lines, name)
        safe_builtins = {f.__name__: f for f in (
            len, range, min, max, abs, print, int, float, bool, str, isinstance, getattr,
            hasattr, list, round, sum, any, all, divmod, Exception, RuntimeError, ValueError,
            AssertionError, IndexError, KeyError, TypeError, StopIteration)}
        self.ns = {"torch": _TorchOps(), "__torch__": _Namespace(self, "__torch__"),
                   "CONSTANTS": _Constants(constants), "annotate": gt.jit.annotate,
                   "uninitialized": uninitialized, "unchecked_cast": unchecked_cast,
                   "Tensor": gt.Tensor, "List": list, "Dict": dict,
                   "Tuple": tuple, "Optional": typing.Optional, "Final": typing.Final,
                   "Union": typing.Union, "Any": typing.Any, "NoneType": type(None),
                   "Device": gt.device, "int": int, "float": float, "bool": bool,
                   "str": str, "math": math, "inf": math.inf, "nan": math.nan,
                   "__builtins__": safe_builtins}

    def eval_type(self, ann):
        from ._compiler import _archive_eval

        class _Where:
            @staticmethod
            def type_err(node, msg):
                return RuntimeError(f"torch.jit.load: {msg}")
        return _archive_eval(ann, self.ns, _Where)

    def lookup(self, qualname):
        if qualname in self.func_defs:
            got = self.functions.get(qualname)
            if got is None:
                node, lines, filename = self.func_defs[qualname]
                got = self.compile(node, _ClassDecl(ast.ClassDef(body=[]), lines, filename),
                                   None, node.name)
                got.qualified_name = qualname
                self.functions[qualname] = got
            return got
        if qualname in self.class_defs:
            return _ir.JitType("Class", name=qualname)
        return _Namespace(self, qualname)

    def compile(self, fdef, decl, info, name):
        from ._compiler import FunctionCompiler
        from ._script import ScriptFunction
        comp = FunctionCompiler(None, info, name,
                                archive=(fdef, decl.lines, decl.filename, self.ns))
        return ScriptFunction._make(None, info, name, compiler=comp)

    def module(self, obj, memo):
        """The scripted module for ``data.pkl`` object ``obj``."""
        from ..nn.parameter import Parameter
        from ._script import RecursiveScriptModule, _BoundMethod
        if id(obj) in memo:
            return memo[id(obj)]
        if not isinstance(obj, _ArchiveObject):
            raise RuntimeError(f"torch.jit.load: expected a module object in data.pkl, got "
                               f"{type(obj).__name__}")
        decl = self.class_defs.get(obj.qualname)
        if decl is None:
            raise RuntimeError(f"torch.jit.load: the archive has no code for class "
                               f"{obj.qualname}")
        sm = memo[id(obj)] = RecursiveScriptModule()
        d = sm.__dict__
        for k, v in getattr(obj, "state", {}).items():
            if k in decl.params:
                sm._parameters[k] = None if v is None else Parameter(
                    v, requires_grad=v.requires_grad)
            elif k in decl.buffers:
                sm._buffers[k] = v
            elif isinstance(v, _ArchiveObject):
                sm._modules[k] = self.module(v, memo)
            else:
                d[k] = v
        d.update(decl.constants)
        d["_original_name"] = obj.qualname.rpartition(".")[2]
        info = d["_info"] = _ArchiveInfo(self, sm, obj.qualname, decl)
        for nm in decl.methods:
            d[nm] = _BoundMethod(info.method(nm), sm)
        return sm


def load(f, map_location=None, _extra_files=None):
    """Read a TorchScript archive (written by ``torch.jit.save`` of glasstorch or of
    PyTorch) from a path or binary file: a scripted module whose methods are compiled by
    glasstorch's frontend from the archive's code. ``_extra_files`` (a dict) gets the
    contents of the ``extra/`` files it names."""
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
        with open(f, "rb") as fh:
            return _load(io.BytesIO(fh.read()), map_location, _extra_files)
    return _load(f, map_location, _extra_files)


def _load(fh, map_location, extra_files):
    archive = _Archive(fh, map_location)
    constants = archive.unpickle("constants.pkl", "constants")
    root = archive.unpickle("data.pkl", "data")
    loader = _Loader(archive, list(constants))
    m = loader.module(root, {})
    for name in extra_files or {}:
        got = f"extra/{name}" in archive.names
        extra_files[name] = archive.read(f"extra/{name}") if got else b""
    return m
