"""The stack of function transforms running now, innermost last ('grad', 'jvp', 'vmap').

autograd.Function.apply reads it to refuse, as torch does, a Function that cannot take
part in a transform (no setup_context, or no jvp / vmap rule for those transforms).
"""

from __future__ import annotations

import contextlib

transform_stack: list = []


@contextlib.contextmanager
def transform(kind):
    """Mark the body as running inside one transform of ``kind``."""
    transform_stack.append(kind)
    try:
        yield
    finally:
        transform_stack.pop()
