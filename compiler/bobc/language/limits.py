"""The plan language's limits: every parse and evaluation is bounded.

A plan is a program a user hands the compiler; without bounds a literal, a
nesting or a loop count could take the compiler minutes or all memory (or a
Python traceback).  Each limit here is far above what today's plans use (the
measured use is in the comments) and is stated in docs/limits.md, the one
table of every limit bobc and the host keep.  Going past one is a
LimitExceeded naming the limit, its value and where it was met.
"""
from __future__ import annotations

import sys

from ..resources import doc
from .values import EvalError

# bytes of one module file, refused by its size before it is read (4 MiB; today's largest:
# specs/Platform/Linux/Nvidia/PlanHost.bob, 87 KB, 48 times less; seed 004, 45 KB; a chain of
# 100,000 definitions, 2.6-3.3 MB, still loads).  Dense definitions cost ~250 bytes of memory
# a source byte to parse and check (a module at the limit: ~1 GiB) and 10-30 us (40-120 s);
# a byte-string literal ~20 bytes and ~0.3 us a byte
MODULE_FILE_BYTES = 4 << 20
# parentheses open at once in one module (today's deepest: 47; docs/limits.md names the module)
NESTING_DEPTH = 200
# digits of a natural number literal; 78,000 decimal digits stay below NATURAL_BITS
NATURAL_LITERAL_DIGITS = 78_000
# bits of any natural number the evaluator computes (2^18; today's plans: 64-bit words)
NATURAL_BITS = 1 << 18
# bytes of any byte string the evaluator computes (256 MiB; today's largest: 256 KiB)
BYTES_LENGTH = 1 << 28
# iterations of one nat-eliminate (bundled plans need far fewer; tests: 200,000)
ELIMINATION_COUNT = 1 << 20
# iterations of one nat-eliminate whose motive is a data family (a loop that builds a
# structure, e.g. a launch schedule, a node or more per iteration); the same bound as
# certify/limits.py LAUNCH_COUNT and SUBMISSION_COUNT, so a loop past it builds what the
# certifier would refuse anyway, and is refused before it is unrolled or analysed
# (an update count of 100,000 once ran the evaluation-step limit out after ~30 s)
STRUCTURE_LOOP_COUNT = 1 << 16
# bounds a backend puts on the structures a plan builds, by family: family name -> (the
# constructor counted, its limit, what it counts, in words); a nat-eliminate whose result is a
# value of such a family counts that constructor in it (through the family's own fields) as soon
# as the loop ends, and refuses a count past the limit then, before anything walks the structure
# (the language names no backend family: bobc.pipeline.load registers the certifier's launch and
# submission bounds, certify/limits.py).  A loop of fewer than STRUCTURE_LOOP_COUNT iterations that builds
# several launches an iteration was once refused only minutes later, after the plan's own arena
# certificate had walked every launch (probe s33 fuzzplan finding 4)
STRUCTURE_BOUNDS: dict[str, tuple[str, int, str]] = {}


def bound_structure(family: str, constructor: str, limit: int, counted: str) -> None:
    """Bound the `constructor` nodes of any `family` value a nat-eliminate builds (STRUCTURE_BOUNDS)."""
    STRUCTURE_BOUNDS[family] = (constructor, limit, counted)


# evaluation steps (function applications, eliminations, loop iterations) per
# program (about 10^5 a second); what bundled plans take is measured in docs/limits.md,
# and a plan meant to take more says so with --max-evaluation-steps (bobc/cli.py)
EVALUATION_STEPS = 32_000_000
DEFAULT_EVALUATION_STEPS = EVALUATION_STEPS     # what --max-evaluation-steps replaces (cli.py)

# Python refuses int <-> str conversions past 4,300 digits by default; every
# natural the language allows must print and parse.
if hasattr(sys, "set_int_max_str_digits") and 0 < sys.get_int_max_str_digits() < 80_000:
    sys.set_int_max_str_digits(80_000)


class LimitExceeded(EvalError):
    """A plan asked for more than a documented limit (docs/limits.md)."""

    def __init__(self, what: str, limit: int, span=None, hint: str | None = None):
        self.what = what
        self.limit = limit
        self.definitions: list = []         # innermost first, filled in as it propagates
        self.cited = doc("limits.md")
        # where in the library the limit was met, when `span` was moved to the call in the
        # plan's own modules that led there (met_in_library); None otherwise
        self.library_span = None
        super().__init__(f"{what}: more than the limit of {limit:,} ({self.cited})", span,
                         hint=hint or "the plan asks for more than bobc evaluates, and no "
                         "option raises this limit: compute the value in smaller pieces (or "
                         "look for a count that runs away)")

    def note(self, definition) -> None:
        """Record a definition whose evaluation this error passed through."""
        if self.span is None:               # met where no term's place was at hand
            self.span = getattr(definition, "span", None)
        if len(self.definitions) < 64:
            self.definitions.append(definition)
            self._compose()

    def met_in_library(self, call_span, called: str | None) -> None:
        """The limit was met in the library (specs/), under a call at `call_span` in the plan's
        own modules: the error points at that call, and names the library's place as context."""
        self.library_span = self.span
        self.span = call_span
        if called and self.hint and self.hint.startswith("the plan asks for more than bobc"):
            self.hint = (f"{called} (in the library) runs past this limit on the "
                         f"arguments this call passes: pass it smaller ones, or "
                         f"compute the value in smaller pieces")
        self._compose()

    def met_checking_library(self, definition) -> None:
        """The limit was met while the whole program's check checked `definition`, one of the
        library's (specs/), before any of the plan's own definitions: no definition of the plan
        led there, so the message says whose check it was (probe s32 errors finding 10)."""
        self.checking_library = definition.module
        if self.hint and self.hint.startswith("if the plan is meant to take that many"):
            self.hint = (f"the limit is below what checking the library itself takes (the default is "
                         f"{DEFAULT_EVALUATION_STEPS:,}): raise it with --max-evaluation-steps N (check, eval, "
                         f"build, run, sim)")
        self._compose()

    def _compose(self) -> None:
        message = f"{self.what}: more than the limit of {self.limit:,} ({self.cited})"
        if self.definitions:
            names = [d.name for d in self.definitions]
            shown = names if len(names) <= 4 else names[:2] + ["..."] + names[-2:]
            message += (f", in definition {names[-1]}"
                        + (f" (through {' <- '.join(shown[:-1])})" if len(names) > 1 else ""))
        if getattr(self, "checking_library", None):
            message += (f", while checking the library module {self.checking_library}, before any "
                        f"of the plan's own definitions")
        if self.library_span is not None:
            message += f"; met in the library at {self.library_span}"
        self.message = message
        self.args = (message,)
