"""The pitfall detector: plain-words warnings about training mistakes that cost days.

Opt-in: ``glasstorch.debug.enable()`` or ``GLASSTORCH_DEBUG=1`` in the environment (read once,
when this module is imported). Off by default, and then the library pays one flag check at
each hook (``Module.__call__``, ``Optimizer.step``, the loss functions, the DataLoader and its
workers, ``Tensor.item``/``tolist``, and the copying branch of ``reshape``/``contiguous``).

Each finding is a :class:`GlasstorchPitfallWarning` with a stable ``code`` (``GT001``...), a
one-line explanation, the user's source line (the first stack frame outside glasstorch) and
the fix; each code warns once per source line. ``docs/pitfalls.md`` lists every code.

This module imports nothing from glasstorch so that importing it is free; the checks live in
``_checks`` and load on first use.
"""

from __future__ import annotations

import os

__all__ = ["enable", "disable", "is_enabled", "reset", "GlasstorchPitfallWarning"]

# The one flag every hook reads. A plain module global: ``_debug._on`` is the whole cost
# of the detector when it is off.
_on = False
_impl_mod = None


class GlasstorchPitfallWarning(UserWarning):
    """A likely training mistake. ``code`` is stable (see docs/pitfalls.md); ``fix`` says
    what to do; ``filename``/``lineno`` point at the user's line."""

    def __init__(self, code, message, fix="", filename=None, lineno=None, source=""):
        self.code = code
        self.explanation = message
        self.fix = fix
        self.filename = filename
        self.lineno = lineno
        text = f"[{code}] {message}"
        if filename is not None:
            text += f"\n  at {filename}:{lineno}" + (f": {source}" if source else "")
        if fix:
            text += f"\n  fix: {fix}"
        super().__init__(text)


def _impl():
    """The checks module, imported on first use (it imports glasstorch)."""
    global _impl_mod
    if _impl_mod is None:
        from . import _checks as mod
        _impl_mod = mod
    return _impl_mod


def enable():
    """Turn the pitfall detector on (for the whole process)."""
    global _on
    _on = True


def disable():
    """Turn the pitfall detector off; hooks return to a single flag check."""
    global _on
    _on = False


def is_enabled():
    """Whether the pitfall detector is on."""
    return _on


def reset():
    """Forget which (code, source line) pairs already warned, so they warn again, and what
    the checks counted so far."""
    if _impl_mod is not None:
        _impl_mod.reset_state()


if os.environ.get("GLASSTORCH_DEBUG", "").strip().lower() not in ("", "0", "false", "off", "no"):
    _on = True
