"""Sizes that stay dynamic: what ``x.shape`` gives model code while it is being exported."""

from __future__ import annotations

import operator


class SymInt(int):
    """A size read from a traced tensor while exporting (``n = x.shape[0]``).

    It is the int seen while tracing, and also knows how to compute itself in the graph,
    through the arithmetic done on it (``n * heads``), so that shapes built from it
    (``x.view(n, -1)``, ``w.expand(n, -1, -1)``) stay dynamic, as torch's tracer keeps them.
    """

    def __new__(cls, value, build):
        self = super().__new__(cls, value)
        self._build = build     # graph -> name of a 1-D int64 value holding [self]
        self._name = None
        return self

    def value_in(self, g):
        if self._name is None:
            self._name = self._build(g)
        return self._name


def _size_arithmetic(op_type, fn, reflected=False):
    def method(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        return SymInt(fn(int(a), int(b)),
                      lambda g: g.op(op_type, g.size_value(a), g.size_value(b)))
    return method


for _op_type, _fn, _names in (("Add", operator.add, ("__add__", "__radd__")),
                              ("Sub", operator.sub, ("__sub__", "__rsub__")),
                              ("Mul", operator.mul, ("__mul__", "__rmul__")),
                              ("Div", operator.floordiv, ("__floordiv__", "__rfloordiv__"))):
    setattr(SymInt, _names[0], _size_arithmetic(_op_type, _fn))
    setattr(SymInt, _names[1], _size_arithmetic(_op_type, _fn, reflected=True))


def has_sym_int(obj) -> bool:
    """Whether ``obj`` (an argument: looked into tuples, lists, slices, dicts) holds a SymInt."""
    if isinstance(obj, SymInt):
        return True
    if isinstance(obj, (tuple, list)):
        return any(has_sym_int(o) for o in obj)
    if isinstance(obj, slice):
        return has_sym_int((obj.start, obj.stop, obj.step))
    if isinstance(obj, dict):
        return any(has_sym_int(o) for o in obj.values())
    return False
