"""``torch.utils.flop_counter``: count the floating-point operations of matrix products and
convolutions, forward and backward, per module.

``FlopCounterMode`` is a ``TorchFunctionMode`` on the dispatch point. It counts what torch's
counter counts on the CPU, under the same aten names: ``mm``/``addmm``/``bmm``/``baddbmm`` for
matrix products (``matmul`` and ``linear`` count as the product torch lowers them to),
``convolution`` and ``convolution_backward``; each backward product is counted when the
backward actually runs, once per operand that needs a gradient. Flops are attributed to
``"Global"`` and to every module (named ``Root.child.grandchild``) active at the forward call.
"""

from __future__ import annotations

import math
from collections import defaultdict

import glasstorch as torch
from glasstorch import overrides
from glasstorch.nn import functional as F
from glasstorch.nn.modules import module as _module

__all__ = ["FlopCounterMode", "register_flop_formula"]

_aten = torch.ops.aten


class _AtenName(str):
    """The key of an aten op glasstorch has no operator for (``convolution_backward``):
    prints as torch's packet does."""


def _aten_op(name):
    try:
        return getattr(_aten, name)
    except AttributeError:
        return _AtenName(f"aten.{name}")


_CONV_BACKWARD = _aten_op("convolution_backward")


def _numel(shape):
    return math.prod(shape)


def _matmul(a, b):
    """(aten op, flops) of ``a @ b`` as torch lowers it on the CPU (None: not counted)."""
    if b.ndim < 2:
        return None                         # mv / dot: torch counts neither
    k, n = b.shape[-2], b.shape[-1]
    if b.ndim == 2:                         # folded into one mm
        rows = 1 if a.ndim == 1 else _numel(a.shape[:-1])
        return _aten.mm, 2 * rows * k * n
    m = 1 if a.ndim == 1 else a.shape[-2]
    batch = _numel(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return _aten.bmm, 2 * batch * m * k * n


def _conv_flops(out, weight, transposed_input=None):
    spatial = transposed_input.shape[2:] if transposed_input is not None else out.shape[2:]
    return 2 * out.shape[0] * _numel(weight.shape) * _numel(spatial)


# function -> f(args, kwargs, out) -> (forward op, flops, backward op, operands for grads)
def _linear_rule(args, kwargs, out):
    input, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    flops = 2 * _numel(input.shape[:-1]) * weight.shape[0] * weight.shape[1]
    return (_aten.addmm if bias is not None else _aten.mm), flops, _aten.mm, (input, weight)


def _matmul_rule(args, kwargs, out):
    a, b = args[0], args[1]
    found = _matmul(a, b)
    if found is None:
        return None
    op, flops = found
    return op, flops, op, (a, b)


def _addmm_rule(op, first):
    def rule(args, kwargs, out):
        a, b = args[first], args[first + 1]
        found = _matmul(a, b)
        if found is None:
            return None
        return op, found[1], (_aten.mm if op is _aten.addmm else _aten.bmm), (a, b)
    return rule


def _conv_rule(transposed):
    def rule(args, kwargs, out):
        input, weight = args[0], args[1]
        flops = _conv_flops(out, weight, input if transposed else None)
        return _aten.convolution, flops, _CONV_BACKWARD, (input, weight)
    return rule


_RULES = {
    F.linear: _linear_rule, torch.matmul: _matmul_rule, torch.Tensor.matmul: _matmul_rule,
    torch.Tensor.__matmul__: _matmul_rule, torch.mm: _matmul_rule, torch.Tensor.mm: _matmul_rule,
    torch.bmm: _matmul_rule, torch.Tensor.bmm: _matmul_rule,
    torch.addmm: _addmm_rule(_aten.addmm, 1), torch.Tensor.addmm: _addmm_rule(_aten.addmm, 1),
    torch.baddbmm: _addmm_rule(_aten.baddbmm, 1),
    torch.Tensor.baddbmm: _addmm_rule(_aten.baddbmm, 1),
    **{f: _conv_rule(False) for f in (F.conv1d, F.conv2d, F.conv3d)},
    **{f: _conv_rule(True) for f in (F.conv_transpose1d, F.conv_transpose2d,
                                     F.conv_transpose3d)},
}
_CUSTOM = {}


def register_flop_formula(targets, get_raw=False):
    """Register ``formula(args, kwargs, out) -> flops`` for the callables ``targets`` (a
    decorator); the flops are counted under the callable itself, forward only."""
    if not isinstance(targets, (list, tuple)):
        targets = [targets]

    def register(formula):
        for t in targets:
            _CUSTOM[t] = formula
        return formula
    return register


class FlopCounterMode(overrides.TorchFunctionMode):
    """Counts flops while active (a context manager); ``get_total_flops()``,
    ``get_flop_counts()`` (module name -> op -> flops) and ``get_table(depth)``; prints the
    table on exit when ``display``."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        super().__init__()
        self.depth = depth
        self.display = display
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self._custom = dict(custom_mapping or {})
        self._names = {}
        self._stack = []
        self._hooks = []

    # module tracking: the names of the modules whose forward is running
    def _pre(self, module, args):
        if id(module) not in self._names:
            root = type(module).__name__
            for name, sub in module.named_modules():
                self._names.setdefault(id(sub), f"{root}.{name}" if name else root)
        self._stack.append(self._names[id(module)])

    def _post(self, module, args, output):
        if self._stack:
            self._stack.pop()

    def __enter__(self):
        self.flop_counts.clear()
        self._hooks = [_module.register_module_forward_pre_hook(self._pre),
                       _module.register_module_forward_hook(self._post)]
        return super().__enter__()

    def __exit__(self, *exc):
        for h in self._hooks:
            h.remove()
        result = super().__exit__(*exc)
        if self.display:
            print(self.get_table(self.depth))
        return result

    def _add(self, scopes, op, flops):
        for scope in ("Global", *scopes):
            self.flop_counts[scope][op] += flops

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        custom = self._custom.get(func) or _CUSTOM.get(func)
        if custom is not None:
            self._add(tuple(self._stack), func, custom(args, kwargs, out))
            return out
        rule = _RULES.get(func)
        if rule is None or not isinstance(out, torch.Tensor):
            return out
        found = rule(args, kwargs, out)
        if found is None:
            return out
        op, flops, back_op, operands = found
        scopes = tuple(self._stack)
        self._add(scopes, op, flops)
        grads = sum(isinstance(t, torch.Tensor) and t.requires_grad for t in operands)
        if grads and out.grad_fn is not None:
            def count_backward(*_):
                self._add(scopes, back_op, grads * flops)
            out.grad_fn.register_prehook(count_backward)
        return out

    def get_total_flops(self):
        """Every counted flop."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{module name: {op: flops}}, with ``"Global"`` first."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """A text table of the flops per module (to ``depth`` levels) and op."""
        depth = self.depth if depth is None else depth
        total = self.get_total_flops() or 1
        rows = [("Module", "FLOP", "% Total")]
        for scope, ops in self.flop_counts.items():
            if scope != "Global" and scope.count(".") + 1 > depth:
                continue
            indent = "" if scope == "Global" else " " * scope.count(".")
            flops = sum(ops.values())
            rows.append((indent + scope, _human(flops), f"{100 * flops / total:.2f}%"))
            for op, v in ops.items():
                rows.append((indent + f" - {op}", _human(v), f"{100 * v / total:.2f}%"))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)


def _human(n):
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3f}{unit}"
    return str(n)
