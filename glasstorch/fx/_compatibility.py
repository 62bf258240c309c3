"""torch.fx._compatibility: the decorator that marks fx APIs as backward compatible or not."""

from __future__ import annotations

__all__ = ["compatibility"]

# What torch records for its own API review: {callable: note}
_BACK_COMPAT_OBJECTS = {}
_MARKED_WITH_COMPATIBILITY = {}


def compatibility(is_backward_compatible: bool):
    """Decorator: mark a function or class as backward compatible (``True``) or not. Not
    backward-compatible objects get a warning note appended to their docstring, as in torch."""
    def mark(fn):
        if is_backward_compatible:
            _BACK_COMPAT_OBJECTS.setdefault(fn)
        else:
            note = ("\n\n.. warning::\n    This API is experimental and is *NOT* backward-"
                    "compatible.\n")
            try:
                fn.__doc__ = (fn.__doc__ or "") + note
            except (AttributeError, TypeError):
                pass  # some builtins' docstrings are read-only
        _MARKED_WITH_COMPATIBILITY.setdefault(fn)
        return fn
    return mark
