"""mkdocs hook: expand ``<!-- api-table: NAME -->`` markers into reference tables.

The flat ``glasstorch`` namespace, ``Tensor``'s methods and ``nn.functional`` are assembled at
import time (operators registered from ``glasstorch/_ops``, families gathered by loops), which
static analysis cannot follow, and importing them for mkdocstrings' dynamic inspection costs
far more than this: one import of glasstorch, then ``inspect`` on each public callable. Each
row gives the name, the signature and the first paragraph of the docstring.

A marker stands alone on its line. Markers: ``glasstorch`` (grouped by the kind of operator),
``Tensor`` and ``nn.functional``.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import sys
import types

_MARKER = re.compile(r"^<!-- api-table: ([\w.]+) -->$", re.MULTILINE)

# glasstorch._ops module -> section title, in the order the sections appear
_OP_GROUPS = {
    "creation": "Creating tensors", "random": "Random sampling", "pointwise": "Pointwise math",
    "activation": "Activations", "reduction": "Reductions", "views": "Views and shapes",
    "rearrange": "Joining, splitting, reordering", "indexing": "Indexing, gathering, scattering",
    "copying": "Copies", "linalg": "Linear algebra", "metadata": "Tensor properties",
    "conv": "Convolution", "pooling": "Pooling", "normalization": "Normalization",
    "nn_basic": "Other neural-network kernels", "loss": "Losses", "attention": "Attention and RNN",
    "vision": "Vision kernels", "grid_sample": "Vision kernels", "sparse": "Sparse tensors",
}
_OTHER = "Types, modes and process-wide settings"


def _summary(obj):
    doc = inspect.getdoc(obj) or ""
    first = doc.split("\n\n", 1)[0]
    return " ".join(first.split()).replace("|", "\\|")


def _code(text):
    # raw HTML, not a backtick span: a table cell cannot hold a literal "|", and inside a
    # code span the escaping backslash would show
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _signature(name, obj):
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return _code(name)
    return _code(name + re.sub(r"'([^']*)'", r"\1", sig))  # annotations without quotes


def _is_callable_api(obj):
    return (inspect.isroutine(obj) or inspect.isclass(obj)) and not isinstance(
        obj, types.ModuleType)


def _table(rows):
    lines = ["| name | what it does |", "|---|---|"]
    lines += [f"| {sig} | {summary} |" for sig, summary in rows]
    return "\n".join(lines)


def _flat_namespace():
    import glasstorch

    groups = {title: [] for title in _OP_GROUPS.values()}
    groups[_OTHER] = []
    for name in sorted(n for n in dir(glasstorch) if not n.startswith("_")):
        obj = getattr(glasstorch, name)
        if not _is_callable_api(obj):
            continue
        module = getattr(obj, "__module__", "") or ""
        kind = module.rsplit(".", 1)[-1] if module.startswith("glasstorch._ops.") else None
        groups[_OP_GROUPS.get(kind, _OTHER)].append((_signature(name, obj), _summary(obj)))
    parts = []
    for title, rows in groups.items():
        if rows:
            parts.append(f"### {title}\n\n{_table(rows)}\n")
    return "\n".join(parts)


def _tensor_methods():
    import glasstorch

    rows = []
    for name in sorted(n for n in dir(glasstorch.Tensor) if not n.startswith("_")):
        attr = inspect.getattr_static(glasstorch.Tensor, name)
        if isinstance(attr, property):
            rows.append((_code(name) + " (property)", _summary(attr)))
        elif inspect.isfunction(attr):
            rows.append((_signature(name, attr), _summary(attr)))
    return _table(rows)


def _functional():
    import glasstorch.nn.functional as F

    rows = [(_signature(n, getattr(F, n)), _summary(getattr(F, n)))
            for n in sorted(F.__all__) if _is_callable_api(getattr(F, n))]
    return _table(rows)


_BUILDERS = {"glasstorch": _flat_namespace, "Tensor": _tensor_methods,
             "nn.functional": _functional}


def on_config(config):
    """Make the checkout's glasstorch importable (the repository root holds mkdocs.yml)."""
    root = os.path.dirname(os.path.abspath(config.config_file_path))
    if root not in sys.path:
        sys.path.insert(0, root)
    return config


def on_page_markdown(markdown, page, config, files):
    """Replace each marker with its generated table."""
    def expand(match):
        builder = _BUILDERS.get(match.group(1))
        if builder is None:
            raise ValueError(f"{page.file.src_path}: unknown api-table {match.group(1)!r}")
        return builder()
    return _MARKER.sub(expand, markdown)
