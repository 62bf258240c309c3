"""Which torch functions and Tensor methods glasstorch implements, and which the op table covers.

    python -m tests.parity.coverage [--list]

Counts names in torch's flat namespace, ``torch.linalg`` and ``torch.Tensor``
(public names and arithmetic dunders). A name is *implemented* when glasstorch
has it, *covered* when an op-table entry names it in ``name`` or ``covers``.
"""

from __future__ import annotations

import argparse
import inspect

import torch

import glasstorch

from .optable import all_ops

DUNDERS = {"__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
           "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__",
           "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__pow__",
           "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__",
           "__invert__", "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__",
           "__xor__", "__rxor__", "__ixor__", "__lshift__", "__rshift__", "__eq__", "__ne__",
           "__lt__", "__le__", "__gt__", "__ge__", "__getitem__", "__setitem__", "__len__",
           "__bool__", "__float__", "__int__", "__index__", "__iter__", "__array__",
           "__repr__", "__format__", "__pos__"}


def _functions(module, prefix):
    names = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name, None)
        if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
            continue
        names.add(prefix + name)
    return names


def torch_names():
    names = _functions(torch, "") | _functions(torch.linalg, "linalg.")
    for name in dir(torch.Tensor):
        if (not name.startswith("_") or name in DUNDERS) and callable(
                getattr(torch.Tensor, name, None)):
            names.add("Tensor." + name)
    return names


def implemented(name):
    if name.startswith("Tensor."):
        return hasattr(glasstorch.Tensor, name[7:])
    if name.startswith("linalg."):
        return hasattr(glasstorch.linalg, name[7:])
    return hasattr(glasstorch, name)


def report():
    universe = torch_names()
    done = {n for n in universe if implemented(n)}
    table = set()
    for op in all_ops():
        table.update(op.names())
    covered = done & table
    return universe, done, covered


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list implemented names not covered")
    args = parser.parse_args(argv)
    universe, done, covered = report()
    functions = {n for n in done if not n.startswith("Tensor.")}
    methods = done - functions
    print(f"torch names considered:          {len(universe)}")
    print(f"implemented in glasstorch:       {len(done)} "
          f"({len(functions)} functions, {len(methods)} Tensor methods)")
    print(f"implemented and in the op table: {len(covered)}")
    uncovered = sorted(done - covered)
    print(f"implemented, not in the op table: {len(uncovered)}")
    if args.list:
        for name in uncovered:
            print("  ", name)


if __name__ == "__main__":
    main()
