"""torch.jit.frontend: the exceptions the TorchScript frontend raises for Python it does not
accept, and the source-location formatting shared by all compile errors.

A construct outside TorchScript's subset (``lambda``, ``try``, ``with`` of arbitrary objects,
``*args``) raises ``NotSupportedError`` (``UnsupportedNodeError`` for a whole syntax node); a
type error raises ``RuntimeError``. Both name the source line with a ``~~~ <--- HERE`` marker,
as torch prints it.
"""

from __future__ import annotations

__all__ = ["FrontendError", "NotSupportedError", "UnsupportedNodeError", "SourceRange"]


class SourceRange:
    """Where a piece of scripted code came from: file, the source lines, and a 1-based line and
    0-based column span, used to point at the code in error messages."""

    __slots__ = ("filename", "lines", "lineno", "col", "end_col", "first_line", "func_name")

    def __init__(self, filename, lines, lineno, col, end_col, first_line, func_name=""):
        self.filename = filename
        self.lines = lines          # the function's source lines (dedented), 0-based
        self.lineno = lineno        # absolute line in the file
        self.col = col
        self.end_col = end_col
        self.first_line = first_line  # absolute line number of lines[0]
        self.func_name = func_name

    def short(self):
        """``file:line:col`` as torch appends it to graph nodes."""
        return f"{self.filename}:{self.lineno}:{self.col}"

    def highlight(self):
        """The ``File "...", line N`` block with the offending span underlined."""
        rel = self.lineno - self.first_line
        out = [f'  File "{self.filename}", line {self.lineno}']
        if rel > 0:
            out.append(self.lines[rel - 1])
        if 0 <= rel < len(self.lines):
            line = self.lines[rel]
            out.append(line)
            end = self.end_col if self.end_col and self.end_col > self.col else len(line)
            out.append(" " * self.col + "~" * max(1, end - self.col) + " <--- HERE")
            out.extend(self.lines[rel + 1:rel + 3])
        return "\n".join(out) + "\n"


class FrontendError(Exception):
    """A TorchScript compile error located in the source (``torch.jit.frontend.FrontendError``)."""

    def __init__(self, source_range, msg):
        self.source_range = source_range
        self.msg = msg
        super().__init__(self.__str__())

    def __str__(self):
        where = self.source_range.highlight() if self.source_range is not None else ""
        return f"{self.msg}:\n{where}"


class NotSupportedError(FrontendError):
    """Python that TorchScript does not accept."""


class UnsupportedNodeError(NotSupportedError):
    """A syntax node TorchScript has no translation for (``lambda``, ``try``, ...)."""

    def __init__(self, source_range, node_name):
        super().__init__(source_range, f"{node_name} aren't supported")


def _type_error(source_range, msg):
    """torch's RuntimeError for a compile-time type error, with the location block."""
    where = source_range.highlight() if source_range is not None else ""
    return RuntimeError(f"\n{msg}:\n{where}")
