"""Comments that swallow code: a warning, not an error.

`--` runs to the end of the line, so a file whose newlines were lost (a copy
through a tool that joins lines, say) parses as its first lines followed by one long
comment: every definition after it silently disappears, and the module may
still load.  A comment that holds what parses as a top-level declaration
(`def name :`/`def name =`, `import A.B`, `module A.B`, `family Name ... :
Type`, `constructor Name` followed by `field`/`constructor`/`end-family`,
`field name :`, `end-family`) is most likely such an accident, so `bobc
check` reports it with the place of the first swallowed declaration.
Declarations written inside parentheses in prose ("(constructor F C ...)")
are expressions, not declarations, and are not reported; nor is a line commented out on
purpose: a comment that begins its line with one declaration (`-- def old : Nat = 2`).  One
that holds several (a file whose newlines were lost, beginning with a comment) is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import Span

_NAME = r"[A-Za-z_][\w']*"
_MODULE = r"[A-Z]\w*(?:\.[A-Z]\w*)+"
_MULTIPLICITY = r"(?:unrestricted\s+|0\s+|1\s+)?"

# each pattern matches a declaration at the start of the text given to it
_DECLARATIONS = [
    re.compile(rf"def\s+{_NAME}\s*[:=](?!=)"),
    re.compile(rf"import\s+{_MODULE}\b"),
    re.compile(rf"module\s+{_MODULE}\b"),
    re.compile(r"family\s+[A-Z]\w*\b[^-]*?:\s*Type\b"),
    re.compile(r"constructor\s+[A-Z]\w*\s+(?:field|constructor|end-family)\b"),
    re.compile(rf"field\s+{_MULTIPLICITY}{_NAME}\s*:(?!=)"),
    re.compile(r"end-family\b"),
]
_KEYWORD = re.compile(r"(?<![\w(-])(def|import|module|family|constructor|field|end-family)\b")


@dataclass(frozen=True)
class Warning:
    """A message about a place that is legal but probably not what was meant."""

    span: Span
    message: str
    hint: str | None = None

    def render(self, shown: bool = True) -> str:
        """The warning as printed; `shown` False: its file as stored (errors.Span.location), as
        a passed check keeps it (bobc/recall.py), shown again by shown_warning."""
        parts = [f"{self.span.location(shown)}: warning: {self.message}"]
        excerpt = self.span.source_excerpt()     # errors.excerpt: the one rendering of a source line
        if excerpt:
            parts.append(excerpt)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def shown_warning(text: str) -> str:
    """A warning rendered with its file as stored (Warning.render(shown=False): what a passed
    check keeps) as it is printed: its file as errors.shown_path shows it in this working folder."""
    from ..errors import shown_path

    head, said, rest = text.partition(": warning: ")
    path, _, place = head.rpartition(":")
    path, _, line = path.rpartition(":")
    if not said or not path or not line.isdigit() or not place.isdigit():
        return text
    return f"{shown_path(path)}:{line}:{place}{said}{rest}"


def _comment_start(line: str) -> int:
    """The column (0-based) where the line's comment starts, or -1 (string-aware)."""
    first = line.find("--")
    if first < 0 or 'b"' not in line[:first]:
        return first            # no comment, or none of it can lie inside a byte string
    index = 0
    while index < len(line):
        if line.startswith('b"', index):
            index += 2
            while index < len(line) and line[index] != '"':
                index += 2 if line[index] == "\\" else 1
            index += 1
        elif line.startswith("--", index):
            return index
        else:
            index += 1
    return -1


def swallowed_declarations(text: str):
    """(line, column, declaration text) of each comment's first swallowed declaration (1-based)."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        start = _comment_start(line)
        if start < 0:
            continue
        comment = line[start + 2:]
        for keyword in _KEYWORD.finditer(comment):
            rest = comment[keyword.start():]
            match = next((m for p in _DECLARATIONS if (m := p.match(rest))), None)
            if match:
                count = _count(comment[keyword.start():])
                if count == 1 and not line[:start].strip() and not comment[:keyword.start()].strip():
                    break           # `-- def old ...` alone on its line: code commented out on purpose
                column = start + 2 + keyword.start() + 1
                found.append((number, column, match.group(0), count))
                break
    return found


def _count(comment_tail: str) -> int:
    return sum(1 for k in _KEYWORD.finditer(comment_tail)
               if any(p.match(comment_tail[k.start():]) for p in _DECLARATIONS))


def swallowed_code_warnings(module) -> list[Warning]:
    """The warnings for one parsed module (syntax.Module: its .source and .path)."""
    warnings = []
    for line, column, declaration, count in swallowed_declarations(module.source):
        more = (f" (and {count - 1} more declaration{'s' if count > 2 else ''} after it)"
                if count > 1 else "")
        warnings.append(Warning(
            Span(str(module.path), line, column, line, column + len(declaration)),
            f"this comment swallows code: `{' '.join(declaration.split())}`{more} is inside the "
            f"`--` comment, which runs to the end of the line, so it is not part of module {module.name}",
            hint="end the comment with a line break before the declaration (a file whose "
                 "newlines were lost reads as one long comment)"))
    return warnings
