"""Which torch functions and Tensor methods glasstorch implements, and which the op table covers.

    python -m tests.parity.coverage [--list] [--missing NAMESPACE] [--write-names]

Counts names in torch's flat namespace, ``torch.linalg`` and ``torch.Tensor``
(public names and arithmetic dunders). A name is *implemented* when glasstorch
has it, *covered* when an op-table entry names it in ``name`` or ``covers``.

Then, per namespace (flat torch, Tensor, nn, nn.functional, nn.init, linalg,
distributions, special, fft, signal.windows): the names torch itself defines there
(public functions and classes whose ``__module__`` is torch's, plus the dtypes of the
flat namespace; re-exported helpers such as ``typing.Optional`` or ``math`` do not count)
and how many of them glasstorch provides.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

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


NAMESPACES = ("torch", "Tensor", "nn", "nn.functional", "nn.init", "linalg", "distributions",
              "special", "fft", "signal.windows", "masked")


def _resolve(root, path):
    """``root.a.b`` for path "a.b" (None when some part is missing or fails to import)."""
    obj = root
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # a missing lazy submodule raises ImportError, not AttributeError
            return None
    return obj


def _torch_defined(obj):
    if inspect.ismodule(obj):
        return False
    if isinstance(obj, torch.dtype):
        return True
    if not (callable(obj) or inspect.isclass(obj)):
        return False
    return (getattr(obj, "__module__", None) or "").startswith("torch")


def namespace_names(ns):
    """The public names torch defines in namespace ``ns`` (one of NAMESPACES)."""
    if ns == "Tensor":
        return {n for n in dir(torch.Tensor) if not n.startswith("_") or n in DUNDERS}
    module = torch if ns == "torch" else _resolve(torch, ns)
    return {n for n in dir(module) if not n.startswith("_")
            and _torch_defined(getattr(module, n, None))}


def _provides(obj, name):
    try:
        getattr(obj, name)
    except Exception:  # AttributeError, or a NotImplementedError naming a torch-only symbol
        return False
    return True


def namespace_coverage():
    """{namespace: (names torch defines, the subset glasstorch provides)}."""
    out = {}
    for ns in NAMESPACES:
        names = namespace_names(ns)
        ours = glasstorch if ns == "torch" else _resolve(glasstorch, ns)
        provided = {n for n in names if ours is not None and _provides(ours, n)}
        out[ns] = (names, provided)
    return out


def print_namespace_table(coverage):
    print(f"{'namespace':<16}{'provided':>9}{'torch':>7}{'share':>8}")
    for ns, (names, provided) in coverage.items():
        share = 100.0 * len(provided) / len(names) if names else 100.0
        print(f"{ns:<16}{len(provided):>9}{len(names):>7}{share:>7.1f}%")


NAMES_FILE = Path(glasstorch.__file__).with_name("_torch_names.txt")


def write_torch_names(path=NAMES_FILE):
    """Record the attribute names of torch and torch.Tensor (dunders aside) that glasstorch
    consults to tell a torch name it lacks (NotImplementedError) from a typo (AttributeError)."""
    names = sorted(n for n in dir(torch) if not n.startswith("__"))
    names += sorted("Tensor." + n for n in dir(torch.Tensor) if not n.startswith("__"))
    path.write_text(f"# torch {torch.__version__.split('+')[0]} attribute names, written by "
                    f"`python -m tests.parity.coverage --write-names`\n" + "\n".join(names) + "\n")
    return len(names)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list implemented names not covered")
    parser.add_argument("--missing", metavar="NAMESPACE", choices=NAMESPACES,
                        help="list the torch names one namespace lacks")
    parser.add_argument("--write-names", action="store_true",
                        help=f"rewrite {NAMES_FILE.name} from the installed torch")
    args = parser.parse_args(argv)
    if args.write_names:
        print(f"wrote {write_torch_names()} names to {NAMES_FILE}")
        return
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
    print()
    coverage = namespace_coverage()
    print_namespace_table(coverage)
    if args.missing:
        names, provided = coverage[args.missing]
        for name in sorted(names - provided):
            print("  ", name)


if __name__ == "__main__":
    main()
