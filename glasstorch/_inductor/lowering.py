"""The fusable op set: how each pointwise op of a captured graph is written inside a generated
kernel, and its derivative (for the kernel's generated backward).

Each rule gives the forward expression and, per argument, d(out)/d(arg) times the incoming
gradient ``g``, in two dialects: ``scalar`` (the body of a numba ``@vectorize`` kernel, one
element at a time) and ``array`` (NumPy on whole arrays, the fallback without numba). ``{0}``,
``{1}`` are the arguments, ``{out}`` the result, ``{g}`` the gradient."""

from __future__ import annotations

import operator

__all__ = ["Rule", "rule_for"]

_SQRT1_2 = "0.7071067811865476"
_INV_SQRT_2PI = "0.3989422804014327"


class Rule:
    """One op: forward and per-argument gradient templates, scalar and array dialects."""

    def __init__(self, scalar, array, grads_scalar, grads_array=None, pre=None):
        self.scalar = scalar
        self.array = array
        self.grads = {"scalar": grads_scalar, "array": grads_array or grads_scalar}
        self.arity = len(grads_scalar)
        # name -> (scalar, array): a subexpression computed once and shared by the forward
        # and gradient expressions (``{name}`` in them)
        self.pre = pre or {}

    def forward(self, dialect):
        return self.scalar if dialect == "scalar" else self.array


_BIN = {
    "add": Rule("({0} + {1})", "({0} + {1})", ["{g}", "{g}"]),
    "sub": Rule("({0} - {1})", "({0} - {1})", ["{g}", "(-{g})"]),
    "mul": Rule("({0} * {1})", "({0} * {1})", ["({g} * {1})", "({g} * {0})"]),
    "div": Rule("({0} / {1})", "({0} / {1})",
                ["({g} / {1})", "(-{g} * {0} / ({1} * {1}))"]),
}
_UNARY = {
    "neg": Rule("(-{0})", "(-{0})", ["(-{g})"]),
    "exp": Rule("math.exp({0})", "np.exp({0})", ["({g} * {out})"]),
    "log": Rule("math.log({0})", "np.log({0})", ["({g} / {0})"]),
    "sin": Rule("math.sin({0})", "np.sin({0})", ["({g} * math.cos({0}))"],
                ["({g} * np.cos({0}))"]),
    "cos": Rule("math.cos({0})", "np.cos({0})", ["(-{g} * math.sin({0}))"],
                ["(-{g} * np.sin({0}))"]),
    "tanh": Rule("math.tanh({0})", "np.tanh({0})", ["({g} * (1.0 - {out} * {out}))"]),
    "sigmoid": Rule("(1.0 / (1.0 + math.exp(-{0})))", "(1.0 / (1.0 + np.exp(-{0})))",
                    ["({g} * {out} * (1.0 - {out}))"]),
    "sqrt": Rule("math.sqrt({0})", "np.sqrt({0})", ["({g} * 0.5 / {out})"]),
    "rsqrt": Rule("(1.0 / math.sqrt({0}))", "(1.0 / np.sqrt({0}))",
                  ["({g} * -0.5 * {out} / {0})"]),
    "abs": Rule("abs({0})", "np.abs({0})", ["({g} * np.sign({0}))"]),
    "relu": Rule("({0} if not {0} <= 0.0 else 0.0)", "np.maximum({0}, 0.0)",
                 ["({g} if {0} > 0.0 else 0.0)"], ["np.where({0} > 0.0, {g}, 0.0)"]),
    "gelu": Rule("(0.5 * {0} * (1.0 + {cdf}))", "(0.5 * {0} * (1.0 + {cdf}))",
                 [f"({{g}} * (0.5 * (1.0 + {{cdf}}) + {{0}} * {_INV_SQRT_2PI} * "
                  f"math.exp(-0.5 * {{0}} * {{0}})))"],
                 [f"({{g}} * (0.5 * (1.0 + {{cdf}}) + {{0}} * {_INV_SQRT_2PI} * "
                  f"np.exp(-0.5 * {{0}} * {{0}})))"],
                 pre={"cdf": (f"erf({{0}} * {_SQRT1_2})", f"erf({{0}} * {_SQRT1_2})")}),
    "silu": Rule("({0} * {s})", "({0} * {s})", ["({g} * {s} * (1.0 + {0} * (1.0 - {s})))"],
                 pre={"s": ("(1.0 / (1.0 + math.exp(-{0})))", "(1.0 / (1.0 + np.exp(-{0})))")}),
}


def _targets():
    """Callable targets of captured graphs -> rule name (built once glasstorch is loaded)."""
    import glasstorch as t
    F = t.nn.functional
    table = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
             operator.truediv: "div", operator.neg: "neg", t.add: "add", t.sub: "sub",
             t.mul: "mul", t.div: "div", t.neg: "neg", t.relu: "relu", F.relu: "relu",
             F.gelu: "gelu", F.silu: "silu", t.sigmoid: "sigmoid", F.sigmoid: "sigmoid",
             t.tanh: "tanh", F.tanh: "tanh"}
    for name in ("exp", "log", "sin", "cos", "sqrt", "rsqrt", "abs"):
        table[getattr(t, name)] = name
    return table


_TABLE = []
_KWARGS_OK = {"inplace": False, "approximate": "none"}


def rule_for(node):
    """The ``(name, Rule)`` for an fx node that can go into a kernel, or None. Arguments must
    be nodes or Python numbers; keyword arguments only their defaults."""
    if not _TABLE:
        _TABLE.append(_targets())
    if node.op == "call_function":
        name = _TABLE[0].get(node.target) if callable(node.target) else None
    elif node.op == "call_method":
        name = node.target if node.target in _BIN or node.target in _UNARY else None
    else:
        return None
    if name is None:
        return None
    if any(_KWARGS_OK.get(k, object()) != v for k, v in node.kwargs.items()):
        return None
    rule = _BIN.get(name) or _UNARY[name]
    if len(node.args) != rule.arity:
        return None
    from ..fx.node import Node
    if not all(isinstance(a, Node) or (type(a) in (int, float)) for a in node.args):
        return None
    if not any(isinstance(a, Node) for a in node.args):
        return None
    return name, rule
