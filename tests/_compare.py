"""Running one scenario in both libraries (shared by the tests that compare with torch)."""

import glasstorch


def outcome(fn):
    """The value ``fn()`` returns, or the type of the exception it raises."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type is what the tests compare
        return type(e)


def both(fn):
    """``fn(glasstorch)`` and ``fn(torch)``."""
    import torch
    return fn(glasstorch), fn(torch)
