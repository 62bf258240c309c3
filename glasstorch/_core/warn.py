"""Warnings attributed to the user's line, however many glasstorch frames lie in between
(autocast wrappers, Tensor methods, nn.functional): a fixed ``stacklevel`` points into
glasstorch as soon as a call path gains a frame."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EXAMPLES = _PACKAGE + "examples" + os.sep  # user code that happens to ship inside


def _inside(filename):
    return filename.startswith(_PACKAGE) and not filename.startswith(_EXAMPLES)


def warn_user(message, category=UserWarning):
    """``warnings.warn`` at the first calling frame outside glasstorch."""
    frame, level = sys._getframe(1), 2
    while frame is not None and _inside(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
