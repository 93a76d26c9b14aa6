"""What the certifier reports: one Finding per fault, all of them in one CertificationError.

A finding is located where the plan value at fault was written (`at`: the definition or the
expression, as bobc.plan.extract found it: bobc.plan.model.place); one whose values do not say
is located at the native host definition the plan was extracted from, and its line says so."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BobcError, Span, shown_plan_text
from ..plan.model import Resident


@dataclass(frozen=True)
class Finding:
    kind: str          # overlap, misaligned, outside-window, empty, stray-pointer, extent, phase,
    #                    host-overlap, host-buffer, registers, missing-launch, unsubmitted, order, semaphore, plan
    message: str
    at: Span | None = None     # where the value at fault was written (None: nothing says)
    hint: str | None = None    # what to do, when the message alone does not say (CertificationError prints it)

    def __str__(self) -> str:
        return self.message


# the kind of the one finding that stands for the faults that only follow from another (the
# launches' arguments of a plan whose declared device the target cannot run): not a fault itself
FOLLOWING = "follows"

_LAUNCH = re.compile(r"\blaunch (\d+)\b")


def merged(faults: list[Finding]) -> list[Finding]:
    """One finding per distinct fault: findings at one place that differ only in the launch they
    name (the same stray word in each of ten launches of one kernel) become one naming every launch."""
    groups: dict[tuple, list[Finding]] = {}
    for fault in faults:
        groups.setdefault((fault.kind, fault.at, _LAUNCH.sub("launch #", fault.message, count=1), fault.hint),
                          []).append(fault)
    out = []
    for (kind, at, pattern, _), members in groups.items():
        if len(members) == 1 or "launch #" not in pattern:
            out += members
            continue
        numbers = [_LAUNCH.search(m.message).group(1) for m in members]
        out.append(Finding(kind, pattern.replace("launch #", f"launches {shown_items(numbers)} "
                                                             f"({len(members):,} alike)", 1), at,
                           members[0].hint))
    return out


def merged_messages(faults: list[Finding]) -> list[str]:
    return [fault.message for fault in merged(faults)]


class CertificationError(BobcError):
    """Every fault, one line each, each line beginning with where its value was written; the
    error's own place is the first fault's, its hint the faults' (combined_hint: the one they
    share, else the first one's, the other faults' advice then kept on their own lines).  `entry`
    (the host definition's name and place) is where a fault whose values do not say is located,
    and its line says what that place is."""

    def __init__(self, faults: list[Finding], entry: tuple[str, Span | None] | None = None):
        name, fallback = entry if entry is not None else (None, None)
        listed = merged(faults)
        hint = combined_hint(listed)
        shown = next((f.hint for f in listed if f.hint), None)         # the hint line's advice
        lines, places = [], []
        for fault in listed:
            places.append(fault.at if fault.at is not None else fallback)
            # a finding's advice is the error's hint line; another finding's stays on its own line
            message = fault.message if not fault.hint or fault.hint == shown else f"{fault.message}; {fault.hint}"
            if fault.at is not None:
                lines.append(f"  - {fault.at}: {message}")
            elif fallback is not None:
                lines.append(f"  - {fallback} (the host {name}, which assembles the plan: the values named "
                             f"here do not say where they were written): {message}")
            else:
                lines.append(f"  - {message}")
        count = sum(1 for f in faults if f.kind != FOLLOWING)
        super().__init__(f"the plan is not certified ({count} fault{'s' if count != 1 else ''}):\n"
                         + "\n".join(lines),
                         next((f.at for f in faults if f.at is not None), fallback), hint)
        self.findings = faults
        self._places, self._bullets = places, lines

    def render(self) -> str:
        """As BobcError's, but the source excerpt stands under the fault it shows (the first one
        at the error's place), not under the list's last fault."""
        rendered = BobcError(self.message, None, self.hint).render()
        excerpt = self.span.source_excerpt() if self.span is not None else ""
        lines = rendered.split("\n")
        lines[0] = f"{self.span}: {lines[0]}" if self.span is not None else lines[0]
        if excerpt:
            # the message's bullets are lines 1.. (one each, its own advice kept on it)
            where = next((i for i, at in enumerate(self._places) if at == self.span), None)
            lines.insert(1 + sum(bullet.count("\n") + 1 for bullet in self._bullets[:where + 1])
                         if where is not None else 1, excerpt)
        return "\n".join(lines)


def combined_hint(faults: list[Finding]) -> str | None:
    """The one `hint:` line of a CertificationError over `faults` (as it lists them, merged):
    their hint when every one gives the same, else the first hint given, saying which fault it is
    for (by its place, else its number in the list); None when none has a hint."""
    hints = [(number, fault) for number, fault in enumerate(faults, start=1) if fault.hint]
    if not hints:
        return None
    number, first = hints[0]
    if len(hints) == len(faults) and all(fault.hint == first.hint for _, fault in hints):
        return first.hint
    which = f"the fault at {first.at}" if first.at is not None else f"fault {number} of the list"
    return f"for {which}: {first.hint}"


SHOWN_ITEMS = 16       # launches one fault lists by number; past them how many more (docs/limits.md)


def shown_items(items: list[str]) -> str:
    """`items` joined by ", ": the first SHOWN_ITEMS, then how many more and the last, so that a
    fault over every launch of a plan of 65,536 is one short line."""
    if len(items) <= SHOWN_ITEMS:
        return ", ".join(items)
    more = len(items) - SHOWN_ITEMS - 1
    return f"{', '.join(items[:SHOWN_ITEMS])}, ... {more:,} more ..., {items[-1]}"


def span(start: int, size: int) -> str:
    from .limits import shown_hex
    return f"[{shown_hex(start)}, {shown_hex(start + size)})"


def describe(resident: Resident) -> str:
    return f"{shown_plan_text(resident.name)} {span(resident.address, resident.size)}"


def end(r: Resident) -> int:
    return r.address + r.size
