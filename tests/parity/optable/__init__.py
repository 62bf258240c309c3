"""The parity op table: every operator once, with its samples. One file per kind of op;
each defines ``OPS``, a list of ``OpInfo``."""

from __future__ import annotations

import importlib
import pkgutil


def all_ops():
    ops = []
    for mod in pkgutil.iter_modules(__path__):
        ops.extend(importlib.import_module(f"{__name__}.{mod.name}").OPS)
    return ops
