"""``compile_fx``: the inductor backend's lowering of a captured fx graph.

Runs of consecutive pointwise nodes (``lowering.rule_for``) become one ``FusedRegion``: a
generated kernel per region output (a numba ``@vectorize`` ufunc when numba is installed, or
generated NumPy otherwise) computes the whole chain in one pass, without the per-op Tensor,
dispatch and autograd-node work. When a region input requires grad the region is one
autograd Function whose backward is generated too: one kernel per input that applies the
chain rule element by element, then sums over broadcast dimensions. A numba kernel recomputes
the chain per element (no memory traffic); a NumPy forward also returns the intermediates
that cost a call to recompute (erf, exp, tanh...), and the backward takes them instead.
GEMM, convolution, reductions and everything else stay the graph's own calls (BLAS).

A region checks its inputs when called (Tensors of one floating dtype, float32 or float64);
anything else (an int from a shape computation, a Tensor subclass, mixed dtypes) runs the
region's nodes as the original ops, so the lowered graph computes what the captured one does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import operator
import os
import re
import sys

import numpy as np

from .. import _tensor
from ..fx.node import Node
from .lowering import rule_for

__all__ = ["compile_fx", "FusedRegion", "numba_available"]

_NUMBA = []
_NAME = re.compile(r"\b[vcd]\d+(?:_\w+)?\b")
_CALL = re.compile(r"[\w.]+\(")


def numba_available() -> bool:
    """Whether numba can be imported (read once; ``config.use_numba`` can turn it off)."""
    from . import config
    if not config.use_numba:
        return False
    if not _NUMBA:
        try:
            import numba
            _NUMBA.append(numba)
        except ImportError:
            _NUMBA.append(None)
    return _NUMBA[0] is not None


def _array_erf(x):
    from .._ops.pointwise import _erf
    return _erf(x)


_HEADERS = {"scalar": "import math\nfrom math import erf\n\nimport numpy as np\n\n\n",
            "array": "import math\n\nimport numpy as np\n\n"
                     "from glasstorch._inductor.compile_fx import _array_erf as erf\n\n\n"}


def _load_kernel(name, src, dialect):
    """The kernel function of ``src``, written to a file in the kernel cache directory and
    imported from there: numba's own cache (``cache=True``) then keeps the machine code next
    to it, so a second process compiles nothing."""
    from . import config
    text = _HEADERS[dialect] + src
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    mod_name = f"gtk_{digest}"
    os.makedirs(config.cache_dir, exist_ok=True)
    path = os.path.join(config.cache_dir, mod_name + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    module = sys.modules.get(mod_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[mod_name] = module      # numba's cache finds the module by name
    return getattr(module, name)


def _sum_to(arr, shape):
    """``arr`` summed over the dimensions broadcasting added to ``shape``."""
    if arr.shape == shape:
        return arr
    lead = arr.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and arr.shape[lead + i] != 1)
    return arr.sum(axis=axes).reshape(shape) if axes else arr.reshape(shape)


class FusedRegion:
    """A run of pointwise nodes lowered to generated kernels; called with its input tensors,
    returns a tuple of its output tensors."""

    def __init__(self, index, nodes, inputs, outputs, use_numba, fuse=True):
        from . import config
        self.fuse = fuse
        self.__name__ = self.__qualname__ = f"fused_{index}"
        self.__module__ = "inductor_kernels"
        ops = {rule_for(n)[0] for n in nodes}
        self.use_numba = use_numba and not ops & config.numpy_ops
        self.n_in = len(inputs)
        self.n_out = len(outputs)
        # per node: (op, target, kwargs), rule, args in kernel code ('a0', 'v3', '1.5'),
        # args for the original op (a ref name or the constant itself)
        self.steps = []
        ref = {n: f"a{i}" for i, n in enumerate(inputs)}
        for j, n in enumerate(nodes):
            _name, rule = rule_for(n)
            code = [ref[a] if isinstance(a, Node) else repr(float(a)) for a in n.args]
            raw = [(True, ref[a]) if isinstance(a, Node) else (False, a) for a in n.args]
            ref[n] = f"v{j}"
            self.steps.append(((n.op, n.target, dict(n.kwargs)), rule, code, raw))
        self.out_refs = [ref[o] for o in outputs]
        self.kernels = {}            # dtype -> (forward kernels, {input i: backward kernel})
        self.saving = {}             # dtype -> the forward kernel that also returns _saved
        self.sources = {}
        self._saved_names = None

    # ------------------------------------------------------------------ code generation
    def _pre(self, j, dialect):
        """The shared subexpressions of step ``j``: {name: variable}, and their lines."""
        _call, rule, args, _raw = self.steps[j]
        names = {k: f"c{j}_{k}" for k in rule.pre}
        lines = [(names[k], rule.pre[k][dialect == "array"].format(*args))
                 for k in rule.pre]
        return names, lines

    def _forward_lines(self, dialect):
        lines = []
        for j, (_call, rule, args, _raw) in enumerate(self.steps):
            names, pre = self._pre(j, dialect)
            lines += pre
            lines.append((f"v{j}", rule.forward(dialect).format(*args, **names)))
        return lines

    def _backward_lines(self, dialect, wrt):
        """Lines computing d(sum_k g_k * out_k)/d(a_wrt), and the returned expression."""
        adj = {r: [f"g{k}"] for k, r in enumerate(self.out_refs)}
        lines = []
        for j in range(len(self.steps) - 1, -1, -1):
            _call, rule, args, _raw = self.steps[j]
            terms = adj.get(f"v{j}")
            if not terms:
                continue
            lines.append((f"d{j}", " + ".join(terms)))
            names, _pre = self._pre(j, dialect)
            for i, a in enumerate(args):
                if a[0] in "av":
                    grad = rule.grads[dialect][i].format(*args, g=f"d{j}", out=f"v{j}",
                                                         **names)
                    adj.setdefault(a, []).append(grad)
        terms = adj.get(f"a{wrt}")
        return None if not terms else (lines, " + ".join(terms))

    @staticmethod
    def _live(lines, result, given=()):
        """``lines`` without those the result does not depend on (nor those computing a
        name in ``given``, a parameter)."""
        need = set(_NAME.findall(result))
        kept = []
        for lhs, rhs in reversed(lines):
            if lhs in need and lhs not in given:
                kept.append((lhs, rhs))
                need.update(_NAME.findall(rhs))
        return kept[::-1]

    def _saved(self, dialect):
        """The forward values a NumPy backward takes as parameters: those it needs whose
        recomputation costs a call. Outputs among them come back as the saved outputs."""
        if dialect != "array":
            return []
        if self._saved_names is None:
            fwd = self._forward_lines(dialect)
            defined = {lhs: rhs for lhs, rhs in fwd}
            need = set()
            for i in range(self.n_in):
                bwd = self._backward_lines(dialect, i)
                if bwd is not None:
                    need.update(lhs for lhs, _ in self._live(fwd + bwd[0], bwd[1]))
            self._saved_names = [lhs for lhs, _ in fwd if lhs in need and lhs in defined
                                 and _CALL.search(defined[lhs])]
        return self._saved_names

    def _source(self, kind, dialect, wrt=None):
        params = [f"a{i}" for i in range(self.n_in)]
        lines = self._forward_lines(dialect)
        given = ()
        if kind == "forward":
            result = ", ".join(self.out_refs)
            name = f"{self.__name__}_fwd"
        elif kind == "forward_saving":
            result = ", ".join(self.out_refs + self._saved(dialect)) + ","
            name = f"{self.__name__}_fwd_saving"
        elif kind == "forward_one":
            result = self.out_refs[wrt]
            name = f"{self.__name__}_fwd{wrt}"
        else:
            given = self._saved(dialect)
            params += [f"g{k}" for k in range(self.n_out)] + given
            bwd = self._backward_lines(dialect, wrt)
            if bwd is None:
                return None, None
            lines, result = lines + bwd[0], bwd[1]
            name = f"{self.__name__}_bwd{wrt}"
        body = [f"    {lhs} = {rhs}" for lhs, rhs in self._live(lines, result, given)]
        return name, (f"def {name}({', '.join(params)}):\n" + "\n".join(body)
                      + f"\n    return {result}\n")

    def _build(self, kind, dtype, wrt=None):
        dialect = "scalar" if self.use_numba else "array"
        name, src = self._source(kind, dialect, wrt)
        if src is None:
            return None
        self.sources[name] = ("# numba @vectorize, " + dtype.name + "\n" if self.use_numba
                              else "# NumPy\n") + src
        fn = _load_kernel(name, src, dialect)
        if not self.use_numba:
            return fn
        nargs = self.n_in + (self.n_out if kind == "backward" else 0)
        sig = f"{dtype.name}({', '.join([dtype.name] * nargs)})"
        return _NUMBA[0].vectorize([sig], nopython=True, cache=True)(fn)

    def _kernels(self, dtype):
        ks = self.kernels.get(dtype)
        if ks is None:
            if self.use_numba:
                fwd = [self._build("forward_one", dtype, k) for k in range(self.n_out)]
            else:
                fwd = self._build("forward", dtype)
            ks = self.kernels[dtype] = (fwd, {})
        return ks

    def backward_kernel(self, dtype, i):
        fwd, bwd = self._kernels(dtype)
        if i not in bwd:
            bwd[i] = self._build("backward", dtype, i)
        return bwd[i]

    # ------------------------------------------------------------------ running
    def run_arrays(self, arrays, dtype, save=False):
        """The output arrays; with ``save``, also the intermediates the backward takes."""
        fwd, _ = self._kernels(dtype)
        if self.use_numba:
            outs = [np.asarray(k(*arrays)) for k in fwd]
            return (outs, []) if save else outs
        if save:
            k = self.saving.get(dtype)
            if k is None:
                k = self.saving[dtype] = self._build("forward_saving", dtype)
            res = [np.asarray(o, dtype=dtype) for o in k(*arrays)]
            return res[:self.n_out], res[self.n_out:]
        outs = fwd(*arrays)
        if self.n_out == 1:
            outs = (outs,)
        return [np.asarray(o, dtype=dtype) for o in outs]

    def eager(self, *inputs):
        """The region's nodes run as the original ops."""
        env = {f"a{i}": t for i, t in enumerate(inputs)}
        for j, ((op, target, kwargs), _rule, _code, raw) in enumerate(self.steps):
            args = [env[a] if is_ref else a for is_ref, a in raw]
            if op == "call_method":
                env[f"v{j}"] = getattr(args[0], target)(*args[1:], **kwargs)
            else:
                env[f"v{j}"] = target(*args, **kwargs)
        return tuple(env[r] for r in self.out_refs)

    def __call__(self, *inputs):
        dtype = getattr(inputs[0], "_data", None)
        dtype = dtype.dtype if dtype is not None else None
        if not self.fuse or dtype not in (np.float32, np.float64) or any(
                type(t) is not _tensor.Tensor or t._data.dtype != dtype for t in inputs):
            return self.eager(*inputs)
        from ..autograd.grad_mode import is_grad_enabled
        if is_grad_enabled() and any(t._requires_grad for t in inputs):
            return _FusedFunction.apply(self, *inputs)
        wrap = _tensor._wrap
        return tuple(wrap(o) for o in self.run_arrays([t._data for t in inputs], dtype))


def _fused_function():
    from ..autograd.function import Function

    class FusedRegionFunction(Function):
        """One autograd node for a whole fused region, with a generated backward."""

        @staticmethod
        def forward(ctx, region, *tensors):
            ctx.region = region
            arrays = [t._data for t in tensors]
            ctx.dtype = arrays[0].dtype
            outs, saved = region.run_arrays(arrays, ctx.dtype, save=True)
            outs = tuple(_tensor._wrap(o) for o in outs)
            # a saved output goes through save_for_backward (in-place changes to it are
            # caught); the other intermediates are the region's own
            ids = {id(o._data): k for k, o in enumerate(outs)}
            ctx.saved = [ids.get(id(a), a) for a in saved]
            ctx.save_for_backward(*tensors, *outs)
            ctx.n_in = len(tensors)
            return outs

        @staticmethod
        def backward(ctx, *grads):
            region, dtype = ctx.region, ctx.dtype
            tensors = ctx.saved_tensors
            arrays = [t._data for t in tensors[:ctx.n_in]]
            outs = tensors[ctx.n_in:]
            saved = [outs[a]._data if isinstance(a, int) else a for a in ctx.saved]
            gs = [g._data if g is not None else np.zeros((), dtype) for g in grads]
            out = [None]
            for i, a in enumerate(arrays):
                if not ctx.needs_input_grad[i + 1]:
                    out.append(None)
                    continue
                k = region.backward_kernel(dtype, i)
                if k is None:
                    out.append(None)
                    continue
                d = np.asarray(k(*arrays, *gs, *saved), dtype=dtype)
                out.append(_tensor._wrap(np.ascontiguousarray(_sum_to(d, a.shape))))
            return tuple(out)
    return FusedRegionFunction


class _LazyFunction:
    cls = None

    def apply(self, *args):
        if _LazyFunction.cls is None:
            _LazyFunction.cls = _fused_function()
        return _LazyFunction.cls.apply(*args)


_FusedFunction = _LazyFunction()


def _partition(graph):
    """Maximal runs of consecutive fusable nodes (graph order is topological, so a run's
    inputs are all defined before it)."""
    runs, cur = [], []
    for n in graph.nodes:
        if rule_for(n) is not None:
            cur.append(n)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs


def compile_fx(gm, example_inputs, fuse=True):
    """Lower ``gm``'s pointwise runs to fused kernels (``fuse=False``: regions that run the
    original ops, the ``aot_eager`` check); returns the callable the compiled frame runs."""
    from ..fx import GraphModule
    from . import config
    use_numba = fuse and numba_available()
    graph = gm.graph
    regions = []
    for run in _partition(graph):
        if len(run) < config.min_fusion_size:
            continue
        members = set(run)
        inputs = []
        for n in run:
            for a in n.args:
                if isinstance(a, Node) and a not in members and a not in inputs:
                    inputs.append(a)
        outputs = [n for n in run if any(u not in members for u in n.users)]
        region = FusedRegion(len(regions), run, inputs, outputs, use_numba, fuse)
        regions.append(region)
        with graph.inserting_after(run[-1]):
            call = graph.call_function(region, tuple(inputs))
        with graph.inserting_after(call):
            for k, o in enumerate(reversed(outputs)):
                item = graph.call_function(operator.getitem, (call, len(outputs) - 1 - k))
                o.replace_all_uses_with(item,
                                        delete_user_cb=lambda u, inside=members: u not in inside)
        for n in reversed(run):
            graph.erase_node(n)
    graph.lint()
    lowered = GraphModule(gm, graph, class_name=type(gm).__name__)
    from .._dynamo.convert_frame import log_enabled
    if log_enabled("output_code"):
        _log_output_code(gm, lowered, regions, example_inputs)
    return lowered.forward


def _log_output_code(gm, lowered, regions, example_inputs):
    """TORCH_LOGS=output_code: the lowered graph and each region's kernels (generated for
    the example inputs' dtype now, so they can be shown)."""
    name = getattr(gm, "_compiled_name", "graph")
    parts = [f"Output code for {name}:", lowered.code]
    dtypes = {t._data.dtype for t in example_inputs if hasattr(t, "_data")} & {
        np.dtype(np.float32), np.dtype(np.float64)}
    for r in regions:
        for dt in dtypes:
            r._kernels(dt)
            for i in range(r.n_in):
                r.backward_kernel(dt, i)
        parts += list(r.sources.values())
    print("[__output_code] " + "\n".join(parts), file=sys.stderr)
