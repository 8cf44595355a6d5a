"""Source spans and the errors that carry them.

Every user-facing error of the front end (and of the command language) is a `DDlogError` with a
`Span`; `format()` renders `file:line:col: message`, the offending line and a caret, which is what
the CLI prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from ddlog.limits import EXCERPT_WIDTH


@dataclass(frozen=True)
class Span:
    """A region of a source text; lines and columns are 1-based, `end_*` point past the end."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<builtin>", 0, 0, 0, 0)


class DDlogError(Exception):
    """An error in a program or a command, located in its source text."""

    def __init__(self, message: str, span: Span | None = None, source: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.source = source

    def format(self) -> str:
        if self.span is None or self.span.line <= 0:
            return f"error: {self.message}"
        head = f"{self.span}: error: {self.message}"
        if not self.source:
            return head
        text = _line(self.source, self.span.line)
        if text is None:
            return head
        text = text.expandtabs(1)
        col = self.span.col - 1
        width = 1
        if self.span.end_line == self.span.line and self.span.end_col > self.span.col:
            width = self.span.end_col - self.span.col
        if len(text) > EXCERPT_WIDTH:
            # a window of the line around the column, so a huge line is not printed whole
            start = max(0, min(col - EXCERPT_WIDTH // 3, len(text) - EXCERPT_WIDTH))
            end = start + EXCERPT_WIDTH
            shown = ("..." if start else "") + text[start:end] + ("..." if end < len(text)
                                                                    else "")
            col = col - start + (3 if start else 0)
            width = max(1, min(width, EXCERPT_WIDTH - (col - (3 if start else 0))))
            text = shown
        caret = " " * col + "^" * width
        return f"{head}\n  {text}\n  {caret}"

    def __str__(self) -> str:
        return self.format()


def _line(source: str, line: int) -> str | None:
    """Line `line` (1-based) of `source`, found without splitting the whole text."""
    if line < 1:
        return None
    start = 0
    for _ in range(line - 1):
        start = source.find("\n", start) + 1
        if start == 0:
            return None
    end = source.find("\n", start)
    text = source[start:] if end < 0 else source[start:end]
    return text.rstrip("\r")


class ParseError(DDlogError):
    """The text does not follow the grammar."""


class TypeCheckError(DDlogError):
    """A well-formed program that is ill-typed or refers to unknown names. A type mismatch
    keeps the (expected, found) types, for the checker to try a literal's type again."""

    types: tuple | None = None


class StratificationError(DDlogError):
    """A relation depends on itself through negation."""


class UpdateError(DDlogError):
    """An update a transaction cannot take: an unknown relation, one that is not an input,
    a record or row that does not fit the relation."""


class EvaluationError(DDlogError):
    """A run-time failure: non-convergence, division by zero, a malformed update."""
