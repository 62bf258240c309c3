"""Whether TorchScript is switched on: torch reads ``PYTORCH_JIT`` once, at import.

With ``PYTORCH_JIT=0`` torch's ``jit.script``/``jit.trace`` hand back the object they are given
(and ``jit.Attribute`` returns its value), so TorchScript-decorated code runs as plain Python;
glasstorch honours the same switch, read the same way.
"""

from __future__ import annotations

import os


def _parse_env(name, default, true_message, false_message):
    value = os.environ.get(name)
    if value is None:
        return default
    if value.lower() in {"1", "true", "yes"}:
        return True
    if value.lower() in {"0", "false", "no"}:
        return False
    if value == "1v":        # the verbose spellings announce the setting, as torch's do
        print(true_message)
        return True
    if value == "0v":
        print(false_message)
        return False
    raise ValueError(f"Unknown setting of {name}. Try using 0 or 1.")


class EnabledProxy:
    """A bool by reference: whether the TorchScript entry points are active."""

    def __init__(self):
        self.enabled = _parse_env("PYTORCH_JIT", True, "> Using PyTorch JIT",
                                  "> PyTorch JIT DISABLED")

    def __bool__(self):
        return self.enabled


_enabled = EnabledProxy()


def disable() -> None:
    """Turn the TorchScript entry points off (``script``/``trace`` return their argument)."""
    _enabled.enabled = False


def enable() -> None:
    """Turn the TorchScript entry points back on."""
    _enabled.enabled = True
