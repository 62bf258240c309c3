"""torch's ``sym_*`` helpers, eagerly: with no symbolic shapes in glasstorch they act on plain
Python (and NumPy) numbers, with torch's result types and refusals."""

from __future__ import annotations

import builtins
import math

import numpy as np

__all__ = ["sym_float", "sym_int", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum",
           "sym_ite"]

_NUMBERS = (np.integer, np.floating, int, float)


def sym_float(a):
    """``a`` as a float."""
    return a if isinstance(a, float) else builtins.float(a)


def sym_int(a):
    """``a`` as an int, rounding toward zero."""
    return a if isinstance(a, int) else builtins.int(a)


def _checked(a, b):
    for v in (a, b):
        if not isinstance(v, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(v)}")
    return isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating))


def sym_max(a, b):
    """max(a, b), a float when either is one."""
    r = builtins.max(a, b)
    return builtins.float(r) if _checked(a, b) else r


def sym_min(a, b):
    """min(a, b), a float when either is one."""
    r = builtins.min(a, b)
    return builtins.float(r) if _checked(a, b) else r


def sym_not(a):
    """Logical not."""
    return not a


def sym_sqrt(a):
    """The square root as a float."""
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of the numbers given, or of the one iterable given."""
    if len(args) == 1 and hasattr(args[0], "__iter__"):
        args = args[0]
    return builtins.sum(args)


def sym_ite(b, t, f):
    """``t if b else f``; ``t`` and ``f`` must be of the same type."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f
