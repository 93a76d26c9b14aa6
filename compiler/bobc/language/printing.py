"""Values as text for `bobc eval`: naturals in decimal, byte strings quoted or
in hex, constructors with their field names (indented), functions as
<function>.  Iterative, so a list of a hundred thousand cells prints without recursion,
and a list's tail is not indented further, so it prints in text linear in its length.
"""
from __future__ import annotations

from .syntax import show_bytes
from .values import (
    VBytes, VCon, VLam, VNat, VNeutral, VPrimFn, VRefl, force,
)


def _printable(data: bytes) -> bool:
    return all(0x20 <= b < 0x7F or b in (0x09, 0x0A) for b in data)


def format_bytes(data: bytes, always_hex: bool = False) -> str:
    if not always_hex and _printable(data):
        return show_bytes(data)
    return f'x"{data.hex()}" ({len(data)} byte{"" if len(data) == 1 else "s"})'


# levels of indentation a printed value takes; a line deeper than this is written at this
# level with its own level before it (`[level 40] inner = ...`), so a structure nested through a
# field that is not the last (a tree grown leftwards) prints in text linear in its size, not
# quadratic (a 20,000-node chain printed 800 MB: probe s46 plantexts2)
MAX_INDENT = 32


def _deep_pad(indent: int) -> str:
    return f"{'  ' * MAX_INDENT}[level {indent}] "


def format_value(value, always_hex: bool = False, show_type=None) -> str:
    """The value, forced as deep as printing needs, as indented text.

    Each field is a `name = value` line indented under its constructor, except that a
    constructor's last field, when it is a recursive field (the family itself: a list's
    tail), continues at its parent's indentation: nothing of the parent follows it, so
    the lines stay unambiguous, and a list of n cells prints in O(n) text, not O(n^2).
    Indentation stops at MAX_INDENT levels (deeper lines carry their level), so any
    structure prints in text linear in its size.

    `show_type(value)` renders a type value (the checker's read-back); without
    it types print as <type>.
    """
    lines: list[str] = []
    # work items: (prefix, value, indent of its line, indent of its fields' lines)
    stack = [("", value, 0, 1)]
    while stack:
        prefix, item, indent, inner = stack.pop()
        item = force(item)
        pad = "  " * indent if indent <= MAX_INDENT else _deep_pad(indent)
        if isinstance(item, VNat):
            lines.append(f"{pad}{prefix}{item.value}")
        elif isinstance(item, VBytes):
            lines.append(f"{pad}{prefix}{format_bytes(item.value, always_hex)}")
        elif isinstance(item, VCon):
            lines.append(f"{pad}{prefix}{item.family}.{item.constructor}")
            children = [(f"{name} = ", field, inner, inner + 1)
                        for name, field in zip(item.field_names, item.fields)]
            if children and len(children) - 1 in item.ctor.recursive:
                name, field, _, _ = children[-1]
                children[-1] = (name, field, inner, inner)      # the tail: no deeper
            stack.extend(reversed(children))
        elif isinstance(item, (VLam, VPrimFn)):
            lines.append(f"{pad}{prefix}<function>")
        elif isinstance(item, VRefl):
            lines.append(f"{pad}{prefix}<proof>")
        elif isinstance(item, VNeutral):
            lines.append(f"{pad}{prefix}<stuck computation>")
        else:
            text = show_type(item) if show_type is not None else "<type>"
            lines.append(f"{pad}{prefix}{text}")
    return "\n".join(lines)
