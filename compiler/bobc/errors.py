"""The errors bobc reports to its users.

Every failure a user can cause (a bad plan, a bad file, a refused build) is a
BobcError: it carries where it happened and what to do, and the CLI prints it
as one clear message instead of a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Span:
    """A place in a source file: 1-based line and column."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def source_excerpt(self) -> str:
        """The source line with a caret under the column, or '' when unreadable."""
        try:
            lines = Path(self.path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        if not 1 <= self.line <= len(lines):
            return ""
        text = lines[self.line - 1]
        width = 1
        if self.end_line == self.line and self.end_column and self.end_column > self.column:
            width = self.end_column - self.column
        return f"  {text}\n  {' ' * (self.column - 1)}{'^' * width}"


class BobcError(Exception):
    """A failure with a message meant for the user (no traceback)."""

    exit_code = 1

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def render(self) -> str:
        head = f"{self.span}: error: {self.message}" if self.span else f"error: {self.message}"
        parts = [head]
        if self.span is not None:
            excerpt = self.span.source_excerpt()
            if excerpt:
                parts.append(excerpt)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class UsageError(BobcError):
    """The command line itself is wrong (unknown file, bad option value)."""

    exit_code = 2


class NotYetAvailable(BobcError):
    """What bobc does not support: a plan the reference runner cannot run (outside the plan host's documented steps and formats)."""

    exit_code = 9  # apart from the host's codes 0-8, which `bobc run` mirrors
