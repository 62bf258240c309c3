"""Capture, guards and the cache of compiled graphs: the core of ``torch.compile`` here.

A compiled callable is a ``CompiledFrame``. On a call it builds the guard key of what the
captured code depends on (tensor sizes, strides, dtypes and requires_grad, Python scalars,
grad mode, autocast state, module ``training`` flags, parameter identity, the globals and
closure cells the code reads) and replays the graph compiled for that key. A miss captures
again (up to ``config.recompile_limit`` entries, then eager with torch's warning).

Capture is fx symbolic tracing under the soundness watch (``bytecode_analysis``), which stops
the trace at the first instruction on the path taken whose replay could differ from the
Python; a data-dependent point found by the tracer (a Proxy turned into a bool, iterated...)
is a graph break too. A frame that breaks runs eagerly, as the plain Python it is, and the
reason is recorded (``fullgraph=True`` raises ``Unsupported`` instead); the break is cached
under its guards like a graph, so other guards (another path) are captured afresh. Unlike
Dynamo, glasstorch does not split a frame at the break: the whole frame runs eagerly.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
import types

from .. import _tensor
from ..nn import Module
from . import config, exc
from .bytecode_analysis import Unsound, Watch, _file_origin, check_hooks

__all__ = ["CompiledFrame", "reset", "compiling", "log_enabled", "all_frames"]

log = logging.getLogger(__name__)

_compiling = [0]             # > 0 while a capture traces user code
all_frames = []              # every CompiledFrame, for reset()
_counter = [0]               # numbering of compiled graphs (__compiled_fn_N)


def compiling() -> bool:
    return _compiling[0] > 0


def log_enabled(name: str) -> bool:
    """Whether TORCH_LOGS (read at each use, as tests and users set it late) names ``name``
    (``+name`` and ``+dynamo`` count too)."""
    spec = os.environ.get("TORCH_LOGS", "")
    names = {s.strip().lstrip("+") for s in spec.split(",")}
    return name in names


def _emit(channel, text):
    print(f"[__{channel}] {text}", file=sys.stderr)


def reset() -> None:
    for f in all_frames:
        f.cache.clear()
        f.dynamic_dims.clear()
        f.broken = None
    _counter[0] = 0


def _flatten(obj, name, leaves, names):
    """``obj`` with each tensor replaced by a ``_Slot`` (the tensors collected in leaves,
    their placeholder names in names)."""
    if isinstance(obj, _tensor.Tensor):
        leaves.append(obj)
        names.append(name)
        return _Slot(len(leaves) - 1)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_flatten(o, f"{name}_{i}", leaves, names) for i, o in enumerate(obj))
    if isinstance(obj, dict):
        return {k: _flatten(v, f"{name}_{k}", leaves, names) for k, v in obj.items()}
    return obj


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _rebuild(spec, leaves):
    if isinstance(spec, _Slot):
        return leaves[spec.i]
    if isinstance(spec, (list, tuple)) and not hasattr(spec, "_fields"):
        return type(spec)(_rebuild(s, leaves) for s in spec)
    if isinstance(spec, dict):
        return {k: _rebuild(v, leaves) for k, v in spec.items()}
    return spec


def _const_key(obj):
    """The guard part of a non-tensor argument: its value when it is plain data."""
    if obj is None or isinstance(obj, (bool, int, float, str, complex)):
        return (type(obj), obj)
    if isinstance(obj, _Slot):
        return _Slot
    if isinstance(obj, (list, tuple)):
        return (type(obj), tuple(_const_key(o) for o in obj))
    if isinstance(obj, dict):
        return (dict, tuple((k, _const_key(v)) for k, v in obj.items()))
    return (type(obj), id(obj))


def _read_key(owner, name):
    try:
        value = owner[name] if isinstance(owner, dict) else owner.cell_contents
    except (KeyError, ValueError):
        return None
    if isinstance(value, (types.ModuleType, types.FunctionType, type, _tensor.Tensor,
                          Module)):
        return id(value)
    if isinstance(value, (list, dict, set)):
        return (id(value), repr(value))
    return _const_key(value)


def _global_state():
    from ..amp.autocast_mode import is_autocast_enabled
    from ..autograd.grad_mode import is_grad_enabled
    return (is_grad_enabled(), is_autocast_enabled("cpu"))


def _reads_key(reads):
    return tuple(_read_key(o, n) for o, n in reads)


class _Entry:
    __slots__ = ("dyn", "key", "run", "gm", "names", "reads", "reads_key")

    def __init__(self, dyn, key, run, gm, names, reads):
        self.dyn, self.key, self.run, self.gm, self.names = dyn, key, run, gm, names
        self.reads = reads            # the outside values this capture read, guarded on
        self.reads_key = _reads_key(reads)

    def hit(self, key):
        return self.key == key and _reads_key(self.reads) == self.reads_key


class CompiledFrame:
    """The compiled form of ``fn`` (a function, or a module's call when ``module`` is given)."""

    def __init__(self, fn, module, backend, fullgraph=False, dynamic=None, mode=None):
        self.fn = fn
        self.module = module
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode
        self.cache = []
        self.dynamic_dims = set()     # (leaf index, dim) found to vary (automatic dynamic)
        self.broken = None            # graph-break reason of the last capture attempt
        self.graph_breaks = []        # every break (reason, user stack), for explain()
        self.compile_times = []
        self._modules = None
        all_frames.append(self)

    @property
    def name(self):
        f = self.module.forward if self.module is not None else self.fn
        return getattr(f, "__name__", "forward")

    def _where(self):
        f = getattr(self.module, "forward", self.fn) if self.module is not None else self.fn
        f = getattr(f, "__func__", f)
        code = getattr(f, "__code__", None)
        return f"{code.co_filename}:{code.co_firstlineno}" if code else "?"

    # ------------------------------------------------------------------ guards
    def _key(self, leaves, spec, dyn):
        parts = []
        for i, t in enumerate(leaves):
            marked = getattr(t, "_dynamo_dynamic_indices", ())
            if self.dynamic is True:
                shape = (t.dim(),)
                stride = None
            else:
                shape = tuple(None if (i, d) in dyn or d in marked else s
                              for d, s in enumerate(t.shape))
                stride = None if (dyn or marked) else t.stride()
            parts.append((t.dtype, shape, stride, t.requires_grad, type(t)))
        parts.append(_const_key(spec))
        parts.append(_global_state())
        if self.module is not None:
            mods = self._modules
            parts.append(tuple((m.training, tuple(map(id, m._modules.values())))
                               for m in mods))
            parts.append(tuple((id(p), p.shape, p.requires_grad) for m in mods
                               for p in m._parameters.values() if p is not None))
            parts.append(tuple(id(b) for m in mods for b in m._buffers.values()))
        return tuple(parts)

    def _describe(self, old, new, names):
        """Torch-style text for the first guard that differs between two keys."""
        labels = ["Python arguments", "grad mode or autocast state"]
        if self.module is not None:
            labels += ["module training flags or submodules", "parameter identity",
                       "buffer identity"]
        for i, (a, b) in enumerate(zip(old, new)):
            if a == b:
                continue
            if i < len(names):
                for what, x, y in (("dtype", a[0], b[0]), ("requires_grad", a[3], b[3])):
                    if x != y:
                        return (f"tensor '{names[i]}' {what} mismatch. expected {x}, "
                                f"actual {y}")
                if len(a[1]) != len(b[1]):
                    return (f"tensor '{names[i]}' rank mismatch. expected {len(a[1])}, "
                            f"actual {len(b[1])}")
                for d, (x, y) in enumerate(zip(a[1], b[1])):
                    if x != y:
                        return (f"tensor '{names[i]}' size mismatch at index {d}. expected "
                                f"{x}, actual {y}")
                return f"tensor '{names[i]}' stride mismatch. expected {a[2]}, actual {b[2]}"
            return f"{labels[min(i - len(names), len(labels) - 1)]} changed"
        return "globals or closure variables read changed"

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        from .decorators import _STANCE
        if config.disable or _STANCE[0] == "force_eager" or compiling():
            return self._eager(args, kwargs)
        if self._modules is None and self.module is not None:
            self._modules = list(self.module.modules())
        leaves, names = [], []
        spec = _flatten((args, kwargs), "", leaves, names)
        keys = {}
        for e in self.cache:
            k = keys.get(e.dyn)
            if k is None:
                k = keys[e.dyn] = self._key(leaves, spec, e.dyn)
            if e.hit(k):
                return e.run(*leaves) if e.run is not None else self._eager(args, kwargs)
        return self._compile(args, kwargs, leaves, spec, keys)

    def _eager(self, args, kwargs):
        return self.module(*args, **kwargs) if self.module is not None else self.fn(
            *args, **kwargs)

    def _compile(self, args, kwargs, leaves, spec, keys):
        limit = config.recompile_limit
        names = [n.strip("_") or "arg" for n in self._names(args, kwargs, leaves)]
        dyn = frozenset(self.dynamic_dims)
        if self.cache:
            last = self.cache[-1]
            new = keys.get(last.dyn) or self._key(leaves, spec, last.dyn)
            reason = self._describe(last.key, new, names)
            if self.dynamic is None and config.automatic_dynamic_shapes and \
                    "size mismatch" in reason:
                for i, t in enumerate(leaves):
                    if i < len(last.key) and len(last.key[i][1]) == t.dim():
                        self.dynamic_dims.update((i, d) for d, s in enumerate(t.shape)
                                                 if last.key[i][1][d] not in (s, None))
                dyn = frozenset(self.dynamic_dims)
            if len(self.cache) >= limit:
                log.warning(
                    "torch._dynamo hit config.recompile_limit (%s)\n   function: %r (%s)\n"
                    "   last reason: 0/%d: %s\nTo log all recompilation reasons, use "
                    "TORCH_LOGS=\"recompiles\".", limit, self.name, self._where(),
                    len(self.cache) - 1, reason)
                self.cache.append(_Entry(dyn, self._key(leaves, spec, dyn), None, None, names,
                                         ()))
                return self._eager(args, kwargs)
            if config.error_on_recompile:
                raise exc.RecompileError(f"Recompiling function {self.name}: {reason}")
            if log_enabled("recompiles"):
                _emit("recompiles", f"Recompiling function {self.name} in {self._where()}\n"
                      f"    triggered by the following guard failure(s):\n"
                      f"    - 0/{len(self.cache) - 1}: {reason}")
        if self.module is not None:
            self._modules = list(self.module.modules())   # a submodule may have been replaced
        start = time.perf_counter()
        watch = Watch(() if self.module is not None else (self.fn,))
        try:
            gm = self._capture(watch, leaves, spec, names, dyn)
        except Unsound as e:
            self._graph_break(str(e), e.user_stack)
            self.cache.append(_Entry(dyn, self._key(leaves, spec, dyn), None, None, names,
                                     list(watch.reads.values())))
            return self._eager(args, kwargs)
        reads = list(watch.reads.values())
        key = self._key(leaves, spec, dyn)
        from .backends.registry import lookup_backend
        backend = lookup_backend(self.backend)
        try:
            run = backend(gm, list(leaves))
        except Exception as e:          # noqa: BLE001 (torch wraps any backend failure)
            if config.suppress_errors:
                self.cache.append(_Entry(dyn, key, None, gm, names, reads))
                return self._eager(args, kwargs)
            raise exc.BackendCompilerFailed(backend, e) from e
        self.compile_times.append(time.perf_counter() - start)
        entry = _Entry(dyn, key, run, gm, names, reads)
        self.cache.append(entry)
        return run(*leaves)

    def _names(self, args, kwargs, leaves):
        import inspect
        f = self.module.forward if self.module is not None else self.fn
        try:
            bound = inspect.signature(f).bind_partial(*args, **kwargs).arguments
        except (TypeError, ValueError):
            bound = {f"arg{i}": a for i, a in enumerate(args)} | kwargs
        out, leaves2 = [], []
        for n, v in bound.items():
            _flatten(v, n, leaves2, out)
        return out if len(out) == len(leaves) else [f"arg{i}" for i in range(len(leaves))]

    def _graph_break(self, reason, user_stack=()):
        self.broken = reason
        self.graph_breaks.append((reason, list(user_stack)))
        if self.fullgraph:
            raise exc.Unsupported(reason)
        if log_enabled("graph_breaks"):
            _emit("graph_breaks", f"Graph break (the frame {self.name} runs eagerly) from "
                  f"{self._where()}\n    Graph Break Reason: {reason}")

    def _capture(self, watch, leaves, spec, names, dyn):
        from .. import fx
        if self.module is not None:
            reason = check_hooks(self.module)
            if reason is not None:
                raise Unsound(reason)
            watch.know_module(self.module)
        root = _root_class(names)(self, spec)
        static = self.dynamic is not True and not dyn and not any(
            getattr(t, "_dynamo_dynamic_indices", ()) for t in leaves)
        tracer = _CaptureTracer(dict(zip(names, leaves)), static)
        _compiling[0] += 1
        try:
            with watch:
                graph = tracer.trace(root)
        except Unsound:
            raise
        except Exception as e:          # noqa: BLE001 (a trace failure is a graph break)
            import traceback
            stack = [s for s in traceback.extract_tb(e.__traceback__)
                     if _file_origin(s.filename) == "user"]
            raise Unsound(f"{type(e).__name__}: {e}", stack) from e
        finally:
            _compiling[0] -= 1
        gm = fx.GraphModule(root, graph, class_name="GraphModule")
        _counter[0] += 1
        gm._compiled_name = f"__compiled_fn_{_counter[0]}"
        if log_enabled("graph_code"):
            _emit("graph_code", f"TRACED GRAPH\n ===== {gm._compiled_name} =====\n"
                  + gm.print_readable(print_output=False))
        return gm


class _Root(Module):
    """The module fx traces: its forward takes the tensor leaves of one call as named
    placeholders and makes the user's call with everything else held constant."""

    def __init__(self, frame, spec):
        super().__init__()
        self._frame_spec = spec
        if frame.module is not None:
            self.self = frame.module
            object.__setattr__(self, "_frame_call", frame.module.forward)
        else:
            fn = frame.fn
            object.__setattr__(self, "_frame_call", fn)
            # modules the function reaches through globals and closures become submodules,
            # so the tracer can name their parameters
            fn = getattr(fn, "__func__", fn)
            code = getattr(fn, "__code__", None)
            seen = {}
            if code is not None:
                for n in code.co_names:
                    v = fn.__globals__.get(n)
                    if isinstance(v, Module):
                        seen[n] = v
                for n, cell in zip(code.co_freevars, fn.__closure__ or ()):
                    try:
                        v = cell.cell_contents
                    except ValueError:
                        continue
                    if isinstance(v, Module):
                        seen[n] = v
            if isinstance(getattr(fn, "__self__", None), Module):
                seen["self"] = fn.__self__
            for n, m in seen.items():
                setattr(self, n, m)
    def _call_user(self, leaves):
        args, kwargs = _rebuild(self._frame_spec, list(leaves))
        return self._frame_call(*args, **kwargs)


def _root_class(names):
    """A ``_Root`` subclass whose forward has one named parameter per tensor leaf."""
    params = ", ".join(names)
    src = (f"def forward(self, {params}):\n"
           f"    return self._call_user(({params}{',' if len(names) == 1 else ''}))\n")
    scope = {}
    exec(compile(src, "<glasstorch compile>", "exec"), scope)  # noqa: S102
    return type("GraphRoot", (_Root,), {"forward": scope["forward"]})


def _inline_types():
    from ..nn import modules as m
    names = ["Linear", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LayerNorm",
             "Identity", "Flatten", "Conv1d", "Conv2d", "Embedding", "LeakyReLU", "Dropout",
             "Sequential", "ModuleList", "ModuleDict", "MaxPool2d", "AvgPool2d"]
    return tuple(getattr(m, n) for n in names if hasattr(m, n))


# targets whose evaluation for an example value would change state (in place, random)
_STATEFUL = re.compile(r"(?<!_)_$|rand|dropout|bernoulli|normal|multinomial|poisson|uniform|"
                       r"exponential|cauchy|geometric|setitem|delitem|manual_seed")
_SHAPE_READS = ("shape", "size", "numel", "__len__")


def _make_tracer():
    from .. import fx
    from ..autograd.grad_mode import no_grad
    from ..fx.node import map_arg

    class KnownProxy(fx.Proxy):
        """A captured value whose metadata the guards fix: ``dtype``, ``device``, ``ndim``,
        ``dim()``, ``is_floating_point()`` and (with static shapes) ``shape``, ``size()``,
        ``numel()``, ``len()`` answer from its example value, so Python may branch on them
        as Dynamo lets it. A value that has none (after a leaf module, an in-place or random
        op) is an ordinary Proxy."""

        def _known(self, what):
            if what in _SHAPE_READS and not self.tracer.static_shapes:
                return None
            return self.tracer.example(self.node)

        def __getattr__(self, k):
            if k in ("dtype", "device", "ndim", "shape", "is_sparse", "is_quantized",
                     "is_meta", "layout"):
                value = self._known(k)
                if value is not None:
                    return getattr(value, k)
            elif k in ("size", "dim", "numel", "is_floating_point", "is_complex",
                       "get_device"):
                value = self._known(k)
                if value is not None:
                    return getattr(value, k)
            return fx.proxy.Attribute(self, k)

        def __len__(self):
            value = self._known("__len__")
            if value is None:
                return super().__len__()
            return len(value)

    class CaptureTracer(fx.Tracer):
        """fx tracing that looks inside the simple glasstorch modules (so their ops reach
        the compiler) and keeps the others as ``call_module`` leaves. ``examples`` maps
        placeholder names to the call's values, from which the metadata of the values
        computed from them is worked out when Python reads it."""
        inline = _inline_types()

        def __init__(self, examples=None, static_shapes=True):
            super().__init__()
            self.examples = examples or {}
            self.static_shapes = static_shapes
            self._values = {}          # node -> example value, or None when it has none
            self._order = {}           # node -> creation index

        def is_leaf_module(self, m, qualname):
            if type(m) in self.inline or not type(m).__module__.startswith("glasstorch."):
                return False
            return True

        def proxy(self, node):
            self._order[node] = len(self._order)
            return KnownProxy(node, self)

        def example(self, node):
            """The real value ``node`` stands for in this call (computed from the example
            inputs, under no_grad, for the nodes it depends on), or None."""
            if node in self._values:
                return self._values[node]
            needed, stack = [], [node]
            while stack:
                n = stack.pop()
                if n in self._values or n in needed:
                    continue
                needed.append(n)
                if n.op not in ("placeholder", "get_attr", "call_function", "call_method") \
                        or _STATEFUL.search(getattr(n.target, "__name__", str(n.target))) \
                        or "out" in n.kwargs or n.kwargs.get("inplace"):
                    for m in needed:
                        self._values[m] = None
                    return None
                map_arg((n.args, n.kwargs), stack.append)
            with no_grad():
                for n in sorted(needed, key=lambda m: self._order.get(m, -1)):
                    self._values[n] = self._evaluate(n)
            return self._values[node]

        def _evaluate(self, n):
            if n.op == "placeholder":
                return self.examples.get(n.target)
            if n.op == "get_attr":      # read past the tracer's patched Module.__getattr__
                value = self.root
                for part in n.target.split("."):
                    found = [d[part] for d in (getattr(value, "_parameters", {}),
                                               getattr(value, "_buffers", {}),
                                               getattr(value, "_modules", {}),
                                               getattr(value, "__dict__", {})) if part in d]
                    value = found[0] if found else None
                return None if isinstance(value, fx.Proxy) else value
            args, kwargs = map_arg((n.args, n.kwargs), self._values.get)
            if any(a is None and b is not None for a, b in zip(args, n.args)):
                return None
            try:
                if n.op == "call_method":
                    return getattr(args[0], n.target)(*args[1:], **kwargs)
                return n.target(*args, **kwargs)
            except Exception:          # noqa: BLE001 (no example value: an ordinary Proxy)
                return None
    return CaptureTracer


def _CaptureTracer(examples=None, static_shapes=True):
    global _TRACER
    if _TRACER is None:
        _TRACER = _make_tracer()
    return _TRACER(examples, static_shapes)


_TRACER = None
