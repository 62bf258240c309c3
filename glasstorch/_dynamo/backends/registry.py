"""The registry of compiler backends: a backend is a callable ``(graph_module, example_inputs)
-> callable`` registered under a name (``torch._dynamo.register_backend``).

Built in: ``eager`` and ``aot_eager`` (tagged ``debug``, as in torch) and ``inductor``.
"""

from __future__ import annotations

import functools
import logging

from ..exc import InvalidBackend

__all__ = ["register_backend", "lookup_backend", "list_backends"]

_COMPILER_FNS: dict = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register ``compiler_fn`` under ``name`` (default: its ``__name__``) with ``tags``; usable
    as ``@register_backend`` or ``@register_backend(name=..., tags=...)``. Returns
    ``compiler_fn``."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    assert callable(compiler_fn)
    name = name or compiler_fn.__name__
    assert name not in _COMPILER_FNS, f"duplicate name: {name}"
    _COMPILER_FNS[name] = compiler_fn
    compiler_fn._tags = tuple(tags)
    return compiler_fn


def lookup_backend(compiler_fn):
    """The backend callable for a registered name (a callable is returned as it is);
    ``InvalidBackend`` for an unknown name."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _COMPILER_FNS:
            raise InvalidBackend(name=compiler_fn)
        return _COMPILER_FNS[compiler_fn]
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The sorted names of registered backends, leaving out those with a tag in
    ``exclude_tags``."""
    excluded = set(exclude_tags or ())
    return sorted(name for name, fn in _COMPILER_FNS.items()
                  if excluded.isdisjoint(getattr(fn, "_tags", ())))


@register_backend(tags=("debug",))
def eager(gm, fake_tensor_inputs, **kwargs):
    """Run the captured graph module as Python: its ``forward``."""
    if kwargs:
        logging.getLogger(__name__).warning("eager backend ignoring extra kwargs %s", kwargs)
    return gm.forward


@register_backend(tags=("debug",))
def aot_eager(gm, fake_tensor_inputs, **kwargs):
    """Run the captured graph through the same graph-lowering steps as inductor (shape
    propagation, the joint forward/backward regions), but with every kernel the eager op:
    a check that lowering itself keeps results, as torch's aot_eager is."""
    from ..._inductor.compile_fx import compile_fx
    return compile_fx(gm, fake_tensor_inputs, fuse=False)


@register_backend
def inductor(gm, example_inputs, **kwargs):
    """The default backend: elementwise/reduction chains fused into generated kernels."""
    from ..._inductor.compile_fx import compile_fx
    return compile_fx(gm, example_inputs)
