"""The registry behind `(compiler-native-encode T value)`.

The language does not know how the backend turns a plan into bytes: the
backend registers a handler for a family name (e.g. NvidiaWholeProgramPlan),
and evaluating `(compiler-native-encode (family F ...) v)` calls F's handler
with v (unforced) and a context.  The handler returns a Value (normally
VBytes).  For the type checker the form has type Bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import Span


@dataclass(frozen=True)
class IntrinsicContext:
    """What a handler may use: the build's target, the program (force/apply/field)."""

    target: Any                 # a bobc.targets.Target
    program: Any                # a bobc.language.program.Program
    span: Span | None = None    # where the compiler-native-encode form is


Handler = Callable[[Any, IntrinsicContext], Any]


class Intrinsics:
    def __init__(self):
        self._handlers: dict[str, Handler] = {}

    def register(self, family_name: str, handler: Handler) -> None:
        self._handlers[family_name] = handler

    def lookup(self, family_name: str) -> Handler | None:
        return self._handlers.get(family_name)

    def names(self) -> list[str]:
        return sorted(self._handlers)
