"""Comparing two image sets fact by fact, for golden tests and `bobc diff` that say what changed.

A byte diff of qmd.bin says "byte 0x8a2 differs"; this says
`launch[3].qmd.CTA_THREAD_DIMENSION0 (KERNEL): 0x40 -> 0x80`.  Both
sides are decoded into decode.Line facts (the same lines `bobc dump` prints)
and matched by their self-describing keys, so each difference names the
launch and its kernel, the QMD field, the pushbuffer method and its data word,
the ring entry, the bank 0 word and its argument, or the instruction with its
text and control code.  A region's instructions are aligned as a sequence (difflib), so an
instruction inserted or removed is one line and the unchanged ones after it one line saying
where they moved, not a line for each.

The decoded view is backed by a byte comparison of every image (program, QMD,
pushbuffer, GPFIFO): each line knows which image bits it shows (decode.Line.spans),
and every differing bit that no reported line shows -- QMD bits no field names, a
QMD slot's padding, program.bin's padding between regions, anything -- is reported
as a `raw` difference naming the image, the offset, the enclosing record and the
old and new bytes.  The manifests are compared as JSON the same way (a value no
decoded line shows is a `manifest` difference), and two manifest.json files (or
two hosts' manifest sections) byte for byte.  So an empty list means the two hold
the same bytes: a golden test is a byte comparison.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import decode
from .encode import Images
from ..native import words


CONTROL_MASK = (1 << 41) - 1   # the high word's bits below the control code (bits 105.. of the instruction)


@dataclass(frozen=True)
class Difference:
    key: str               # the fact's self-describing path (as `bobc dump` prints it)
    kind: str              # header, region, launch, qmd, bank0, push, gpfifo, code
    owner: str             # the kernel or submission the fact belongs to ("" for the manifest's own)
    a: object              # the value in a (None: absent)
    b: object
    meaning: str           # what changed, in words: the argument, method, control code, instruction
    spans: tuple = field(default=(), compare=False, repr=False)   # image bits the line shows (decode.Line)

    def text(self) -> str:
        head = f"{self.key} ({self.owner})" if self.owner else self.key
        a, b = decode.format_value(self.a, self.kind), decode.format_value(self.b, self.kind)
        change = f"only in b: {b}" if self.a is None else f"only in a: {a}" if self.b is None else f"{a} -> {b}"
        return f"{head}: {change}" + (f"  [{self.meaning}]" if self.meaning else "")

    def as_json(self) -> dict:
        return {"key": self.key, "kind": self.kind, "owner": self.owner, "a": self.a, "b": self.b,
                "meaning": self.meaning}


def _control_change(hi_a: int, hi_b: int) -> str:
    from ..sass.syntax import Control

    ca, cb = Control.from_word(hi_a), Control.from_word(hi_b)
    if ca == cb:
        return ""
    names = {"stall": "stall", "yield_bit": "yield", "write_barrier": "write barrier",
             "read_barrier": "read barrier", "wait_mask": "wait mask", "reuse": "reuse"}
    changed = [f"{label} {getattr(ca, f)} -> {getattr(cb, f)}" for f, label in names.items()
               if getattr(ca, f) != getattr(cb, f)]
    return f"control code {ca.text()} -> {cb.text()} ({', '.join(changed)})"


def _code_meaning(la: decode.Line | None, lb: decode.Line | None) -> str:
    if la is None or lb is None:
        return (la or lb).note
    (lo_a, hi_a), (lo_b, hi_b) = la.value, lb.value
    text_a, text_b = (line.note.partition(" ")[2] for line in (la, lb))
    parts = []
    control = _control_change(hi_a, hi_b)
    if control:
        parts.append(control)
    if text_a != text_b:
        parts.append(f"instruction {text_a} -> {text_b}")
    elif (lo_a, hi_a & CONTROL_MASK) != (lo_b, hi_b & CONTROL_MASK) or not control:
        parts.append(f"instruction {text_a} (its text unchanged)")
    else:
        parts.append(f"instruction {text_a}")
    return "; ".join(parts)


def _meaning(la: decode.Line | None, lb: decode.Line | None) -> str:
    line = la or lb
    if line.kind == "code":
        return _code_meaning(la, lb)
    if line.kind == "push":
        names = [x.key.rsplit(".", 1)[1] for x in (la, lb) if x is not None]
        method = names[0] if len(set(names)) == 1 else " -> ".join(names)
        meanings = list(dict.fromkeys(x.note for x in (la, lb) if x is not None and x.note))
        wheres = list(dict.fromkeys(x.where for x in (la, lb) if x is not None))
        text = f"method {method} ({' -> '.join(wheres)})" + (f": {' -> '.join(meanings)}" if meanings else "")
        if la is not None and lb is not None and isinstance(la.raw, int) and isinstance(lb.raw, int) \
                and la.raw != lb.raw:
            text += f"; {decode.header_change(la.raw, lb.raw)}"
        return text
    if la is not None and lb is not None and la.note != lb.note and la.note and lb.note:
        return f"{la.note} -> {lb.note}"
    note = (lb.note if lb is not None else "") or (la.note if la is not None else "")
    if line.kind == "bank0" and la is not None and lb is not None:
        return _half_of_argument(note, la.value, lb.value)
    return note


_HALVES_32 = ("u32", "i32", "s32", "f32", "binary32")


def _half_of_argument(note: str, a, b) -> str:
    """A named argument's bank 0 word whose change lies in one u32 half, where the kernel's
    `//@ param` says 32-bit values: which half changed, so a change in the high u32 of a word whose
    argument is one u32 (`update (u32)`) is not labelled with that argument's name alone."""
    if not (note.startswith("argument ") and ": " in note and isinstance(a, int) and isinstance(b, int)) or a == b:
        return note
    what = note.split(": ", 1)[1]
    if not any(word in what for word in _HALVES_32) or "u64" in what or "pointer" in what:
        return note                              # a 64-bit value: either half is the argument's
    low = (a ^ b) & 0xFFFFFFFF != 0
    high = (a ^ b) >> 32 != 0
    if low and high:
        return f"{note}: both u32 halves"
    two = "," in what.split("(", 1)[0] or "), " in what       # `M, N (u32)`, `alpha (f32), batches (u32)`
    if low:
        return f"{note}: its low u32"
    if two:
        return f"{note}: its high u32"
    return f"the high u32 of {note.split(':', 1)[0]}'s word, which the argument does not use ({note} is its low u32)"


STEPS = "host.plan.steps["        # a host plan's steps (bobc.host.sections.plan_lines), aligned as a sequence


def _launch_tail(key: str) -> str:
    """A key without its leading `launch[i]`, `region[i]`, `submission[i]`, `gpfifo[i]` or
    `host.plan.steps[i]` (two aligned launches', paired regions', aligned submissions' or aligned
    steps' facts at different places)."""
    heads = ("launch[", "region[", "submission[", "gpfifo[", STEPS)
    return key[key.index("]") + 1:] if key.startswith(heads) and "]" in key else key


def _differences(lines_a: list[decode.Line], lines_b: list[decode.Line], notes: dict | None = None,
                 renamed: dict | None = None) -> list[Difference]:
    """The facts that differ, matched on Line.match; `renamed`: matches whose equal values name
    things the alignments do not pair (shown, with what each names); `notes`: what a differing
    value names on each side (relocated_facts)."""
    notes, renamed = notes or {}, renamed or {}
    by_a = {line.match: line for line in lines_a}
    by_b = {line.match: line for line in lines_b}
    order = list(by_a) + [key for key in by_b if key not in by_a]
    out = []
    for match in order:
        la, lb = by_a.get(match), by_b.get(match)
        if la is not None and lb is not None and la.value == lb.value and la.raw == lb.raw and \
                match not in renamed and \
                (la.key == lb.key or la.kind == "bank0"      # an argument at another target's offset
                 or _launch_tail(la.key) == _launch_tail(lb.key)):     # a launch aligned at another place
            continue
        line = la or lb
        meaning = "; ".join(x for x in (_meaning(la, lb), renamed.get(match) or notes.get(match)) if x)
        out.append(Difference(line.key if la is None or lb is None or la.key == lb.key else match,
                              line.kind, line.owner, la.value if la else None, lb.value if lb else None,
                              meaning, (la.spans if la else ()) + (lb.spans if lb else ())))
    return out


def _by_argument(lines: list[decode.Line], manifest: dict) -> list[decode.Line]:
    """Two targets whose parameters start at different bank 0 offsets (the manifests'
    parameter_base; bobc.targets): each parameter word is matched by its place among the parameters
    (`launch[i].bank0[param+0x8]`), not by its offset, and an unused word below the parameters
    (zero) is left out; a driver word there is still compared by its offset."""
    from dataclasses import replace

    base = manifest["parameter_base"]
    out = []
    for line in lines:
        if line.kind == "bank0" and line.key.startswith("launch["):
            offset = int(line.key.rsplit("[", 1)[1].rstrip("]"), 16)
            if offset >= base:
                line = replace(line, slot=f"{line.key.rsplit('[', 1)[0]}[param+{offset - base:#x}]")
            elif not line.value:
                continue
        out.append(line)
    return out


def sequence_keys(index_a: list, index_b: list, signatures_a: list, signatures_b: list, head: str,
                  pairable=None) -> tuple[dict, dict, list]:
    """Two sequences (launches, host plan steps) aligned as sequences (difflib, on each element's
    signature): (keys_a, keys_b, moved).  Each index's prefix its facts are matched on: `head[i]`
    where a's i is b's i, `head[i->j]` where a's i is b's j, and for an element on one side only its
    own `head[i]` (a) or `head[+j]` (b); in a replaced run the k-th of a is paired with the k-th of b
    (when `pairable(k_a, k_b)`, positions in the sequences, says they may be).  `moved`: each run of
    equal elements at other places, (i1, i2, j1, j2) as positions."""
    import difflib

    keys_a = {i: f"{head}[{i}]" for i in index_a}
    keys_b = {j: f"{head}[{j}]" for j in index_b}
    moved = []
    matcher = difflib.SequenceMatcher(None, signatures_a, signatures_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = i2 - i1 if tag == "equal" else min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(j2 - j1):
            if k < paired and (tag == "equal" or pairable is None or pairable(i1 + k, j1 + k)):
                i, j = index_a[i1 + k], index_b[j1 + k]
                keys_a[i] = keys_b[j] = f"{head}[{i}]" if i == j else f"{head}[{i}->{j}]"
            else:
                keys_b[index_b[j1 + k]] = f"{head}[+{index_b[j1 + k]}]"
        if tag == "equal" and index_a[i1] != index_b[j1]:
            moved.append((i1, i2, j1, j2))
    return keys_a, keys_b, moved


@dataclass
class LaunchAlignment:
    """Which launch of a is which launch of b: the two launch lists aligned as sequences (difflib,
    on each launch's kernel, grid and block), so a launch inserted or removed is one launch only in
    b or a, and the launches after it are compared with their counterparts, not by position.

    `keys_a` and `keys_b` give each launch index the prefix its facts are matched on:
    `launch[i]` where a's launch i is b's launch i, `launch[i->j]` where a's launch i is b's
    launch j, and for a launch on one side only its own `launch[i]` (a) or `launch[+j]` (b).
    `moved` is each run of matched launches at other places: (i1, i2, j1, j2)."""

    keys_a: dict
    keys_b: dict
    moved: list

    @classmethod
    def of(cls, a: dict, b: dict) -> "LaunchAlignment":
        launches_a, launches_b = a.get("launches", []), b.get("launches", [])

        def signature(launch):
            return (launch.get("identity"), repr(launch.get("grid")), repr(launch.get("block")))

        return cls(*sequence_keys([launch["index"] for launch in launches_a], [launch["index"] for launch in launches_b],
                                  [signature(x) for x in launches_a], [signature(x) for x in launches_b], "launch"))

    def rename(self, lines: list[decode.Line], keys: dict) -> list[decode.Line]:
        """`lines` with each launch fact matched on its launch's aligned prefix."""
        return _rekey(lines, keys, "launch[", ("launch", "qmd", "bank0"))

    def moved_lines(self, a: Images, b: Images, lines_a, lines_b) -> list[Difference]:
        """One line for each run of matched launches that moved (an insertion before them): the
        byte check knows their image bits are shown (their facts that differ have lines of their own)."""
        out = []
        launches_a, launches_b = a.manifest["launches"], b.manifest["launches"]
        for i1, i2, j1, j2 in self.moved:
            first_a, last_a = launches_a[i1]["index"], launches_a[i2 - 1]["index"]
            first_b, last_b = launches_b[j1]["index"], launches_b[j2 - 1]["index"]
            heads_a = {f"launch[{x['index']}]" for x in launches_a[i1:i2]}
            heads_b = {f"launch[{x['index']}]" for x in launches_b[j1:j2]}
            spans = tuple(span for lines, heads in ((lines_a, heads_a), (lines_b, heads_b)) for line in lines
                          if line.key.split(".", 1)[0] in heads for span in line.spans)
            shift = first_b - first_a
            run_a = f"launch[{first_a}]" if i2 - i1 == 1 else f"launch[{first_a}..{last_a}]"
            run_b = f"launch[{first_b}]" if j2 - j1 == 1 else f"launch[{first_b}..{last_b}]"
            what = ("1 launch" if i2 - i1 == 1 else f"{i2 - i1} launches of the same kernels, grids and blocks "
                    "in the same order")
            out.append(Difference(run_a, "launch", "", run_a, run_b,
                                  f"{what}, at {'+' if shift > 0 else '-'}{words.count(abs(shift), 'place')} in b; what "
                                  f"differs in {'it' if i2 - i1 == 1 else 'them'} is listed as launch[a->b]", spans))
        return out


def _head(match: str) -> str:
    """A fact's leading `launch[...]` or `submission[...]` (everything up to its first `]`)."""
    return match[:match.index("]") + 1] if "]" in match else match


@dataclass
class SubmissionAlignment:
    """Which submission of a is which submission of b: the two submission lists aligned as
    sequences (difflib, on each submission's identity, the launches it runs by their aligned keys --
    LaunchAlignment, so a launch that moved is the same launch -- and its segment's method count).
    A submission inserted or removed is one submission only in b or a, and each one after it is
    compared with its counterpart: its manifest facts, its segment's methods by their place in the
    segment, and its ring entry (decode.ring_lines matches an entry on the submission naming it).

    Keys as LaunchAlignment's: `submission[i]`, `submission[i->j]`, `submission[i]` (only in a),
    `submission[+j]` (only in b); `moved`: each run of matched submissions at other places."""

    keys_a: dict
    keys_b: dict
    moved: list

    @classmethod
    def of(cls, a: dict, b: dict, launches: LaunchAlignment, lines_a: list[decode.Line],
           lines_b: list[decode.Line]) -> "SubmissionAlignment":
        subs_a = [s for s in a.get("submissions", []) if isinstance(s, dict) and isinstance(s.get("index"), int)]
        subs_b = [s for s in b.get("submissions", []) if isinstance(s, dict) and isinstance(s.get("index"), int)]

        def counts(lines):
            out: dict[str, int] = {}
            for line in lines:
                if line.kind == "push" and line.key.startswith("submission["):
                    out[_head(line.key)] = out.get(_head(line.key), 0) + 1
            return out

        def signature(s, keys, methods):
            runs = s.get("launches")
            runs = tuple(keys.get(x, f"launch[?{x}]") for x in runs) if isinstance(runs, list) else repr(runs)
            return s.get("identity"), runs, methods.get(f"submission[{s['index']}]", 0)

        counts_a, counts_b = counts(lines_a), counts(lines_b)
        return cls(*sequence_keys([s["index"] for s in subs_a], [s["index"] for s in subs_b],
                                  [signature(s, launches.keys_a, counts_a) for s in subs_a],
                                  [signature(s, launches.keys_b, counts_b) for s in subs_b], "submission",
                                  lambda p, q: subs_a[p].get("identity") == subs_b[q].get("identity")))

    def rename(self, lines: list[decode.Line], keys: dict) -> list[decode.Line]:
        """`lines` with each submission fact (its manifest facts, methods, ring entry) matched on its
        submission's aligned prefix."""
        return _rekey(lines, keys, "submission[", ("submission", "push", "gpfifo"))

    def one_sided(self) -> tuple[list, list]:
        """The submissions of a only and of b only (their indices)."""
        paired = set(self.keys_b.values())
        return ([i for i, key in self.keys_a.items() if key not in paired],
                [j for j, key in self.keys_b.items() if key.startswith("submission[+")])


def _facts_of(lines: list[decode.Line], heads: set) -> list[decode.Line]:
    return [line for line in lines if _head(line.match) in heads]


def _submission_lines(a: Images, b: Images, alignment: SubmissionAlignment, launches: LaunchAlignment,
                      lines_a: list[decode.Line], lines_b: list[decode.Line]) -> list[Difference]:
    """The submissions' own lines, in b's order: one line for each run of matched submissions that
    moved (their facts that differ have lines of their own, `submission[a->b]...`), and one line
    for each submission on one side only: what it runs, its segment and its ring entry (its spans
    cover them all, so the byte check knows they are shown)."""
    subs_a = {s["index"]: s for s in a.manifest["submissions"]}
    subs_b = {s["index"]: s for s in b.manifest["submissions"]}
    order_a, order_b = sorted(subs_a), sorted(subs_b)
    placed = []                  # (b position, a position, Difference)
    for i1, i2, j1, j2 in alignment.moved:
        first_a, last_a, first_b, last_b = order_a[i1], order_a[i2 - 1], order_b[j1], order_b[j2 - 1]
        heads = {alignment.keys_a[order_a[k]] for k in range(i1, i2)}
        spans = tuple(span for line in _facts_of(lines_a, heads) + _facts_of(lines_b, heads) for span in line.spans)
        run_a = f"submission[{first_a}]" if i2 - i1 == 1 else f"submission[{first_a}..{last_a}]"
        run_b = f"submission[{first_b}]" if j2 - j1 == 1 else f"submission[{first_b}..{last_b}]"
        shift = first_b - first_a
        what = ("1 submission" if i2 - i1 == 1 else f"{i2 - i1} submissions of the same identities, launches "
                "(as aligned) and method counts in the same order")
        placed.append((j1, i1, Difference(
            run_a, "submission", "", run_a, run_b,
            f"{what}, at {'+' if shift > 0 else '-'}{words.count(abs(shift), 'place')} in b, with their segments and "
            f"ring entries; what differs in {'it' if i2 - i1 == 1 else 'them'} is listed as submission[a->b]", spans)))
    only_a, only_b = alignment.one_sided()
    for side, indices in (("a", only_a), ("b", only_b)):
        images, subs, keys, lines = (a, subs_a, launches.keys_a, lines_a) if side == "a" else \
            (b, subs_b, launches.keys_b, lines_b)
        order = order_a if side == "a" else order_b
        for index in indices:
            s = subs[index]
            key = (alignment.keys_a if side == "a" else alignment.keys_b)[index]
            facts = _facts_of(lines, {key})
            identities = {x["index"]: x["identity"] for x in images.manifest["launches"]}
            runs = s.get("launches") if isinstance(s.get("launches"), list) else []
            named = ", ".join(f"{keys.get(x, f'launch[{x}]')} ({identities.get(x, '?')})" for x in runs) or "no launch"
            methods = sum(1 for line in facts if line.kind == "push")
            ring = next((line.key for line in facts if line.kind == "gpfifo"), "no ring entry")
            summary = (f"runs {named}; {words.count(methods, 'method')} in {s['push_length']} bytes at push "
                       f"+{s['push_offset']:#x}; {ring}")
            spans = tuple(span for line in facts for span in line.spans)
            placed.append((order.index(index) if side == "b" else len(order_b), order_a.index(index) if side == "a"
                           else -1, Difference(key, "submission", s["identity"], summary if side == "a" else None,
                                               summary if side == "b" else None, f"a submission only in {side}", spans)))
    return [d for _, _, d in sorted(placed, key=lambda x: (x[0], x[1]))]


class Relocation:
    """Where an address of a lies in b, as the alignments pair what holds it: each paired launch's
    QMD slot and parameter block, each paired region's code, each paired submission's segment and
    semaphore, the prologue's segment, each paired tensor map, and for a resident plan each of
    these in the program table's residence copy.  An address in none of them has no counterpart (None)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int, int]] = []      # (first byte in a, bytes, first byte in b)
        self._starts: list[int] | None = None

    def add(self, start_a, size, start_b) -> None:
        if all(_is_int(x) for x in (start_a, size, start_b)) and size > 0:
            self.ranges.append((start_a, size, start_b))
            self._starts = None

    def __call__(self, address) -> int | None:
        if not _is_int(address):
            return None
        import bisect

        if self._starts is None:
            self.ranges.sort()
            self._starts = [r[0] for r in self.ranges]
        at = bisect.bisect_right(self._starts, address) - 1      # the ranges do not overlap
        if at >= 0 and address < self.ranges[at][0] + self.ranges[at][1]:
            return self.ranges[at][2] + address - self.ranges[at][0]
        return None

    @classmethod
    def of(cls, a: dict, b: dict, launches: LaunchAlignment, submissions: SubmissionAlignment,
           regions: tuple[dict, dict]) -> "Relocation":
        out = cls()
        bases_a, bases_b = a.get("bases") or {}, b.get("bases") or {}
        sizes_a = a.get("sizes") or {}

        def where(entry, bases, key, base):
            if _is_int(entry.get(f"{key}_address")):
                return entry[f"{key}_address"]
            offset = entry.get(f"{key}_offset")
            return bases[base] + offset if _is_int(offset) and _is_int(bases.get(base)) else None

        for keys_a, keys_b, list_name, parts in (
                (launches.keys_a, launches.keys_b, "launches",
                 (("qmd", "qmd", sizes_a.get("qmd_record")), ("parameter", "program", sizes_a.get("parameter_block")))),
                (submissions.keys_a, submissions.keys_b, "submissions",
                 (("push", "pushbuffer", None), ("semaphore", "semaphore", (a.get("semaphore") or {}).get("bytes", 8)))),
                (regions[0], regions[1], "regions", ())):
            of_b = {key: j for j, key in keys_b.items()}
            entries_a = {x["index"]: x for x in a.get(list_name, []) if isinstance(x, dict) and "index" in x}
            entries_b = {x["index"]: x for x in b.get(list_name, []) if isinstance(x, dict) and "index" in x}
            for i, key in keys_a.items():
                j = of_b.get(key)
                if j is None or i not in entries_a or j not in entries_b:
                    continue
                x, y = entries_a[i], entries_b[j]
                if list_name == "regions":
                    out.add(x.get("address"), x.get("size"), y.get("address"))
                for part, base, size in parts:
                    start_a, start_b = where(x, bases_a, part, base), where(y, bases_b, part, base)
                    if part == "semaphore" and not (i != j and _is_int(start_a) and _is_int(start_b) and _is_int(size)
                                                    and start_b - start_a == (j - i) * size):
                        continue    # the plan's own slot: it follows its submission only one slot a place
                    out.add(start_a, x.get("push_length") if part == "push" else size, start_b)
        prologue_a, prologue_b = a.get("prologue") or {}, b.get("prologue") or {}
        out.add(where(prologue_a, bases_a, "push", "pushbuffer"), prologue_a.get("push_length"),
                where(prologue_b, bases_b, "push", "pushbuffer"))
        for x, y in tensor_map_pairs(a, b, launches):
            out.add(x.get("address"), x.get("bytes"), y.get("address"))
        # a program residence (docs/launch-order.md): the device reads the program table from its
        # copy at residence.base + offset, so what moved in the table moved in the copy alike
        table_a, table_b = _residence(a), _residence(b)
        if table_a and table_b:
            (start_a, copy_a, size_a), (start_b, copy_b, size_b) = table_a, table_b
            for first_a, size, first_b in list(out.ranges):
                if (start_a <= first_a and first_a + size <= start_a + size_a
                        and start_b <= first_b and first_b + size <= start_b + size_b):
                    out.add(copy_a + first_a - start_a, size, copy_b + first_b - start_b)
        return out


def _residence(manifest: dict) -> tuple[int, int, int] | None:
    """(the program table's address, its residence copy's, the table's bytes) of a resident plan."""
    residence = manifest.get("residence") or {}
    start, copy = (manifest.get("bases") or {}).get("program"), residence.get("base")
    size = residence.get("program_bytes", (manifest.get("sizes") or {}).get("program"))
    return (start, copy, size) if all(_is_int(x) for x in (start, copy, size)) else None


def _map_descriptor(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k not in ("address", "offset", "slot", "users")}


def tensor_map_pairs(a: dict, b: dict, launches: LaunchAlignment) -> list[tuple[dict, dict]]:
    """a's tensor maps with b's: in order, where each pair describes the same tensor and is used by
    the same arguments of the launches the alignment pairs; empty unless every map pairs."""
    maps_a = [x for x in a.get("tensor_maps") or [] if isinstance(x, dict)]
    maps_b = [x for x in b.get("tensor_maps") or [] if isinstance(x, dict)]
    if len(maps_a) != len(maps_b):
        return []

    def users(entry, keys):
        return [(u.get("argument"), keys.get(u.get("launch"), f"launch[{u.get('launch')}]"))
                for u in entry.get("users") or [] if isinstance(u, dict)]

    pairs = list(zip(maps_a, maps_b))
    if all(_map_descriptor(x) == _map_descriptor(y) and x.get("slot") == y.get("slot") and
           users(x, launches.keys_a) == users(y, launches.keys_b) for x, y in pairs):
        return pairs
    return []


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _launch_named(text) -> int | None:
    """The launch index a `schedules[k]` line names (`launch 5 (kernel)`), else None."""
    if isinstance(text, str) and text.startswith("launch ") and " " in text[7:]:
        number = text[7:].split(" ", 1)[0]
        return int(number) if number.isdigit() else None
    return None


def _qmd_address_groups(layout: str) -> list[tuple[str, str | None, int]]:
    """The QMD fields of `layout` that hold an address: (lower, upper or None, shift), the address
    being (lower | upper << 32) << shift (encode.QMDRecipe)."""
    from .encode import RECIPES

    recipe = RECIPES.get(layout)
    if recipe is None:
        return []
    groups = [(recipe.program_address[0], recipe.program_address[1], 0), (recipe.prefetch[0], recipe.prefetch[1], 8),
              (recipe.cb0_address[0], recipe.cb0_address[1], recipe.cb0_address_shift)]
    if recipe.dependent_prefetch is not None:
        slot = recipe.dependent_prefetch.bank_slot
        groups.append((slot[2], slot[3], recipe.cb0_address_shift))
    groups += [(pointer, None, 8) for _enable, _action, _prefetch, pointer in recipe.dependents]
    return groups


@dataclass
class Relocated:
    """What relocated_facts found: `moved` the matches whose values differ only as what they point
    at moved, `renamed` the matches whose values are the same but point at things the alignments do
    not pair (match -> what each side's value names), `notes` what a differing address names on each
    side, `manifest` the manifest keys whose values differ only by a move."""

    moved: set = field(default_factory=set)
    renamed: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    manifest: set = field(default_factory=set)


class _Places:
    """Address -> what holds it on one side (`launch[1->2]'s QMD (KERNEL)`), for the words of a line."""

    def __init__(self, manifest: dict, launch_keys: dict, submission_keys: dict, region_keys_: dict) -> None:
        self.spans = Relocation()                  # reused for its lookup: (start, size, position in names)
        self.names: list[str] = []
        bases, sizes = manifest.get("bases") or {}, manifest.get("sizes") or {}
        for x in manifest.get("launches", []):
            key = launch_keys.get(x.get("index"), f"launch[{x.get('index')}]")
            self._add(x.get("qmd_address"), sizes.get("qmd_record"), f"{key}'s QMD ({x.get('identity')})")
            self._add(x.get("parameter_address"), sizes.get("parameter_block"),
                      f"{key}'s parameter block ({x.get('identity')})")
        for s in manifest.get("submissions", []):
            key = submission_keys.get(s.get("index"), f"submission[{s.get('index')}]")
            self._add(s.get("push_address"), s.get("push_length"), f"{key}'s segment")
            self._add(s.get("semaphore_address"), (manifest.get("semaphore") or {}).get("bytes", 8),
                      f"{key}'s semaphore")
        for r in manifest.get("regions", []):
            key = region_keys_.get(r.get("index"), f"region[{r.get('index')}]")
            self._add(r.get("address"), r.get("size"), f"{key}'s code ({r.get('identity')})")
        for x in manifest.get("tensor_maps") or []:
            if isinstance(x, dict):
                self._add(x.get("address"), x.get("bytes"), f"tensor map {x.get('slot')}")
        table = _residence(manifest)
        if table:
            start, copy, size = table
            for first, bytes_, tag in list(self.spans.ranges):
                if start <= first and first + bytes_ <= start + size:
                    self._add(copy + first - start, bytes_, f"{self.names[tag >> 48]} in the residence")
        _ = bases

    def _add(self, start, size, name) -> None:
        if _is_int(start) and _is_int(size) and size > 0:
            self.spans.add(start, size, len(self.names) << 48)
            self.names.append(name)

    def __call__(self, address) -> str | None:
        found = self.spans(address)
        return None if found is None else self.names[found >> 48]


def relocated_facts(a: Images, b: Images, lines_a: list[decode.Line], lines_b: list[decode.Line],
                    relocation: Relocation, launches: LaunchAlignment, submissions: SubmissionAlignment,
                    regions: tuple[dict, dict]) -> Relocated:
    """The paired facts that hold an address, a launch index or a ring place -- a QMD's program,
    prefetch and constant bank addresses and its dependents' QMD pointers, a segment's SEND_PCAS_A
    and semaphore address, a ring entry's address, a submission's launches, segment, semaphore and
    ring entry, a launch's addresses and the launches it schedules -- read through the alignments:
    a value that differs only as what it points at moved (a's value, through `relocation`, is b's,
    every other bit the same) is no difference; the same value naming what the alignments do not
    pair (a's launch 1 and b's inserted launch 1) is one."""
    out = Relocated()
    by_a = {line.match: line for line in lines_a}
    by_b = {line.match: line for line in lines_b}
    ma, mb = a.manifest, b.manifest
    bases_a, bases_b = ma.get("bases") or {}, mb.get("bases") or {}
    of_b_launch = {key: j for j, key in launches.keys_b.items()}
    of_b_sub = {key: j for j, key in submissions.keys_b.items()}
    places_a = _Places(ma, launches.keys_a, submissions.keys_a, regions[0])
    places_b = _Places(mb, launches.keys_b, submissions.keys_b, regions[1])

    def judge(matches, address_a, address_b, rest_same=True, manifest=False) -> None:
        """Addresses a and b of the facts `matches` (whose other bits are the same when `rest_same`)."""
        if not (_is_int(address_a) and _is_int(address_b)):
            return
        there = relocation(address_a)
        place_a, place_b = places_a(address_a), places_b(address_b)
        named = f"names {place_a or 'nothing bobc placed'} in a, {place_b or 'nothing bobc placed'} in b"
        if address_a != address_b:
            if there == address_b and rest_same:
                out.moved.update(matches)
                if manifest:
                    out.manifest.update(matches)
            elif there == address_b:             # the address moved with what it names; other bits changed
                out.notes.update({m: f"its address names {places_a(address_a) or 'the same place'} in both, "
                                     "which moved" for m in matches})
            elif place_a != place_b:              # what each names, where that says more than the values
                out.notes.update({m: named for m in matches})
        elif there is not None and there != address_b or place_a and place_b and place_a != place_b:
            out.renamed.update({m: f"the same value, which {named}" for m in matches})

    def judge_launches(match, runs_a, runs_b) -> None:
        """Two lists of launch indices, read through the launch alignment."""
        if not (isinstance(runs_a, list) and isinstance(runs_b, list)):
            return
        keyed_a = [launches.keys_a.get(x, f"launch[{x}]") for x in runs_a]
        keyed_b = [launches.keys_b.get(y, f"launch[{y}]") for y in runs_b]
        if keyed_a == keyed_b:
            if runs_a != runs_b:
                out.moved.add(match)
                out.manifest.add(match)
        else:
            named = f"{', '.join(keyed_a) or 'none'} in a, {', '.join(keyed_b) or 'none'} in b"
            (out.renamed if runs_a == runs_b else out.notes)[match] = \
                (f"the same indices, which name {named}" if runs_a == runs_b else f"launches {named}")

    # the launches: their addresses, the QMD fields that hold addresses, the launches they schedule
    launches_a = {x["index"]: (k, x) for k, x in enumerate(ma["launches"])}
    launches_b = {x["index"]: (k, x) for k, x in enumerate(mb["launches"])}
    groups = _qmd_address_groups(ma["qmd_layout"]) if ma["qmd_layout"] == mb["qmd_layout"] else []
    for i, key in launches.keys_a.items():
        j = of_b_launch.get(key)
        if j is None or i not in launches_a or j not in launches_b:
            continue
        (pa, xa), (pb, xb) = launches_a[i], launches_b[j]
        for name in ("qmd_address", "parameter_address", "program_address"):
            judge({f"{key}.{name}"}, xa.get(name), xb.get(name), manifest=True)
        for name, base in (("qmd_offset", "qmd"), ("parameter_offset", "program")):
            if all(_is_int(x) for x in (xa.get(name), xb.get(name), bases_a.get(base), bases_b.get(base))) and \
                    relocation(bases_a[base] + xa[name]) == bases_b[base] + xb[name]:
                out.manifest.add(f"{key}.{name}")
        judge_launches(f"{key}.schedules", xa.get("schedules"), xb.get("schedules"))
        out.manifest |= {f"{key}.schedules"} & out.moved
        out.moved.discard(f"{key}.schedules")             # a manifest fact, not a decoded line
        out.renamed.pop(f"{key}.schedules", None)
        out.notes.pop(f"{key}.schedules", None)
        if groups:
            fields_a, fields_b = dict(decode.qmd_fields(a, pa)), dict(decode.qmd_fields(b, pb))
            for lower, upper, shift in groups:
                names = [n for n in (lower, upper) if n]
                if not all(n in fields_a and n in fields_b for n in names):
                    continue
                address_a, address_b = ((f[lower] | (f[upper] << 32 if upper else 0)) << shift
                                        for f in (fields_a, fields_b))
                there = relocation(address_a)
                if address_a != address_b and there is not None and \
                        all(fields_b[n] == (there >> shift) >> (32 * k) & 0xFFFFFFFF for k, n in enumerate(names)):
                    out.moved.update(f"{key}.qmd.{n}" for n in names if fields_a[n] != fields_b[n])
                elif address_a != address_b or there not in (None, address_b):
                    judge({f"{key}.qmd.{n}" for n in names if fields_a[n] != fields_b[n]} or {f"{key}.qmd.{lower}"},
                          address_a, address_b)
        for slot in range(2):
            match = f"{key}.schedules[{slot}]"
            la, lb = by_a.get(match), by_b.get(match)
            x, y = (_launch_named(line.value) if line else None for line in (la, lb))
            if x is not None and y is not None:
                judge_launches(match, [x], [y])
    for match, la in by_a.items():
        lb = by_b.get(match)
        if lb is None or la.raw != lb.raw:
            continue
        if la.kind == "submission" and match.startswith("submission["):
            head, name = _head(match), match[len(_head(match)) + 1:]
            if name in ("push_address", "semaphore_address"):
                judge({match}, la.value, lb.value, manifest=True)
            elif name in ("push_offset", "semaphore_offset"):
                base = "pushbuffer" if name == "push_offset" else "semaphore"
                if all(_is_int(x) for x in (la.value, lb.value, bases_a.get(base), bases_b.get(base))):
                    judge({match}, bases_a[base] + la.value, bases_b[base] + lb.value, manifest=True)
            elif name == "launches":
                judge_launches(match, la.value, lb.value)
            elif name == "ring_entry" and _is_int(la.value) and _is_int(lb.value) and head in of_b_sub:
                i = next((i for i, k in submissions.keys_a.items() if k == head), None)
                if i is not None and la.value != lb.value and la.value - i == lb.value - of_b_sub[head]:
                    out.moved.add(match)                   # it moved with its submission
                    out.manifest.add(match)
        elif la.kind == "push" and _is_int(la.value) and _is_int(lb.value):
            method = la.key.rsplit(".", 1)[1]
            if method != lb.key.rsplit(".", 1)[1]:
                continue
            if method == "SEND_PCAS_A":
                judge({match}, la.value << 8, lb.value << 8)
            elif method == "SEM_ADDR_LO":               # with its SEM_ADDR_HI, the next method
                prefix, k = match.rsplit("[", 1)[0], int(match.rsplit("[", 1)[1].rstrip("]"))
                oa, ob = by_a.get(f"{prefix}[{k + 1}]"), by_b.get(f"{prefix}[{k + 1}]")
                if oa is not None and ob is not None and oa.key.endswith(".SEM_ADDR_HI") and \
                        ob.key.endswith(".SEM_ADDR_HI") and oa.raw == ob.raw:
                    judge({match, oa.match} - ({oa.match} if oa.value == ob.value else set()) -
                          ({match} if la.value == lb.value else set()) or {match},
                          oa.value << 32 | la.value, ob.value << 32 | lb.value)
        elif la.kind == "gpfifo" and isinstance(la.value, list) and isinstance(lb.value, list) and \
                len(la.value) == len(lb.value) == 2:
            (d0, d1), (e0, e1) = la.value, lb.value
            judge({match}, (d0 & 0xFFFFFFFC) | (d1 & 0xFF) << 32, (e0 & 0xFFFFFFFC) | (e1 & 0xFF) << 32,
                  rest_same=(d0 & 3, d1 & ~0xFF) == (e0 & 3, e1 & ~0xFF))
    # a bank 0 word that points at what moved with its launch (a tensor map, in the residence too)
    for match, la in by_a.items():
        lb = by_b.get(match)
        if la.kind == "bank0" and lb is not None and lb.kind == "bank0" and _is_int(la.value) and \
                _is_int(lb.value) and la.value != lb.value and relocation(la.value) == lb.value:
            out.moved.add(match)
    # latch ids: each names the edge into the launch that waits on it; one that names the same
    # (paired) launch on both sides only moved with it
    programmatic = None
    if ma["qmd_layout"] == mb["qmd_layout"]:
        from .encode import RECIPES

        recipe = RECIPES.get(ma["qmd_layout"])
        programmatic = recipe.programmatic if recipe is not None else None
    if programmatic is not None:
        def waiters(lines):
            return {line.value: line.match.split(".", 1)[0] for line in lines
                    if line.match.endswith(".waits_on_latch") and _is_int(line.value)}

        waits_a, waits_b = waiters(lines_a), waiters(lines_b)
        fields = {"arrives_at_latch": programmatic.arrive[1], "waits_on_latch": programmatic.wait[1]}
        for match, la in by_a.items():
            lb = by_b.get(match)
            name = match.rsplit(".", 1)[-1]
            if lb is None or name not in fields or la.value == lb.value or not _is_int(la.value) or \
                    not _is_int(lb.value):
                continue
            if waits_a.get(la.value) is not None and waits_a.get(la.value) == waits_b.get(lb.value):
                head = match[:-len(name) - 1]
                out.moved.update({match, f"{head}.qmd.{fields[name]}"})
    out.manifest |= {m for m in out.moved if m.startswith("submission[")}
    if tensor_map_pairs(ma, mb, launches) and ma.get("tensor_maps") != mb.get("tensor_maps") and \
            all(relocation(x.get("address")) == y.get("address") and
                (_is_int(x.get("offset")) and _is_int(y.get("offset"))) for x, y in tensor_map_pairs(ma, mb, launches)):
        out.manifest.add("tensor_maps")
        out.moved |= {match for match in by_a if match == "tensor_maps"}      # its header line
    return out


def region_keys(a: dict, b: dict) -> tuple[dict, dict]:
    """Which region of a is which region of b: paired by identity (the kernel) when each side's
    identities are unique, else by index; regions left unpaired by identity are paired by index
    when both sides have that index (a kernel renamed in place).  Each index's prefix, as
    LaunchAlignment's: `region[i]` where a's region i is b's region i, `region[i->j]` where a's
    region i is b's region j, and for a region on one side only its own `region[i]` (a) or
    `region[+j]` (b)."""
    regions_a = [r for r in a.get("regions", []) if isinstance(r, dict) and isinstance(r.get("index"), int)]
    regions_b = [r for r in b.get("regions", []) if isinstance(r, dict) and isinstance(r.get("index"), int)]
    keys_a = {r["index"]: f"region[{r['index']}]" for r in regions_a}
    keys_b = {r["index"]: f"region[{r['index']}]" for r in regions_b}
    ids_a, ids_b = [r.get("identity") for r in regions_a], [r.get("identity") for r in regions_b]
    if len(set(ids_a)) != len(ids_a) or len(set(ids_b)) != len(ids_b):
        return keys_a, keys_b                  # identities that do not name one region: by index
    where_b = {r.get("identity"): r["index"] for r in regions_b}
    pairs = {r["index"]: where_b[r.get("identity")] for r in regions_a if r.get("identity") in where_b}
    left_b = set(keys_b) - set(pairs.values())
    pairs.update({i: i for i in keys_a if i not in pairs and i in left_b})
    for i, j in pairs.items():
        keys_a[i] = keys_b[j] = f"region[{i}]" if i == j else f"region[{i}->{j}]"
    for j in set(keys_b) - set(pairs.values()):
        keys_b[j] = f"region[+{j}]"
    return keys_a, keys_b


def _rename_regions(lines: list[decode.Line], keys: dict) -> list[decode.Line]:
    """`lines` with each region fact matched on its region's paired prefix (region_keys)."""
    return _rekey(lines, keys, "region[", None)


def _rekey(lines: list[decode.Line], keys: dict, prefix: str, kinds) -> list[decode.Line]:
    """`lines` with each fact whose match starts `prefix`N] (of one of `kinds`, None: any) matched
    on keys[N] instead, where the pairing gave N another key: what the diff pairs, not the index."""
    from dataclasses import replace

    out = []
    for line in lines:
        match = line.match
        if (kinds is None or line.kind in kinds) and match.startswith(prefix) and "]" in match:
            head = match[:match.index("]") + 1]
            try:
                index = int(head[len(prefix):-1])
            except ValueError:
                index = None
            if index in keys and keys[index] != head:
                line = replace(line, slot=keys[index] + match[len(head):])
        out.append(line)
    return out


def _fold_zeros(found: list[Difference]) -> list[Difference]:
    """A launch on one side only: its QMD fields and bank 0 words that are zero as one line per
    kind (how many, their image bits as its spans), after its other lines; its non-zero facts
    keep a line each."""
    out, folded = [], {}
    for difference in found:
        one_sided = difference.a is None or difference.b is None
        if one_sided and difference.kind in ("qmd", "bank0") and difference.key.startswith("launch[") and \
                (difference.a if difference.b is None else difference.b) == 0:
            head = difference.key.split(".", 1)[0]
            key = (head, difference.kind, difference.b is None)
            if key not in folded:
                folded[key] = [difference.owner, 0, (), len(out)]
                out.append(None)
            entry = folded[key]
            entry[1] += 1
            entry[2] += difference.spans
            continue
        out.append(difference)
    for (head, kind, only_a), (owner, count, spans, at) in folded.items():
        what = "QMD field(s)" if kind == "qmd" else "bank 0 word(s)"
        value = f"{count} {what} zero"
        out[at] = Difference(f"{head}.{'qmd' if kind == 'qmd' else 'bank0'}[zero]", kind, owner,
                             value if only_a else None, None if only_a else value,
                             f"the launch's {what} that are zero, not listed one by one", spans)
    return out


def _code_differences(a: Images, b: Images) -> list[Difference]:
    """The regions' instructions, aligned as sequences (difflib, on each instruction's two words):
    an inserted or removed instruction is one line, not one for every instruction after it, and
    a run of unchanged instructions that moved is one line naming both ranges (its spans cover
    them, so the byte check knows they are shown).  A region on one side only is all its lines.
    Across targets whose bank 0 layouts differ (targets.py: the parameter base, the memory
    descriptor), an instruction reading a parameter or the descriptor is aligned by its place
    (`param+0x8`), so sm_90's inserted prologue is one line and a load whose offset only moved
    pairs with itself (one line saying its offset), not with its neighbour."""
    from dataclasses import replace

    regions_a = {r["index"]: r for r in a.manifest["regions"]}
    regions_b = {r["index"]: r for r in b.manifest["regions"]}
    keys_a, keys_b = region_keys(a.manifest, b.manifest)
    of_b = {key: j for j, key in keys_b.items()}
    pairs = [(i, of_b.get(keys_a[i])) for i in sorted(regions_a)]
    pairs += [(None, j) for j in sorted(regions_b) if keys_b[j] not in keys_a.values()]
    out = []
    for i, j in pairs:
        ra, rb = regions_a.get(i), regions_b.get(j)
        if ra is not None and rb is not None and decode.region_code(a, ra) == decode.region_code(b, rb):
            continue                       # the same instructions (a moved region is its place's line)
        head = keys_a[i] if ra is not None else keys_b[j]

        def keyed(lines, index):
            old = f"region[{index}]"
            return [replace(line, key=head + line.key[len(old):]) if head != old else line for line in lines]

        out += _aligned_code(keyed(decode.code_lines(a, ra), i) if ra is not None else [],
                             keyed(decode.code_lines(b, rb), j) if rb is not None else [],
                             _bank0_places(a.manifest, b.manifest))
    return out


_BANK0 = re.compile(r"c\[0x0\]\[(0x[0-9a-fA-F]+)\]")


def _bank0_places(manifest_a: dict, manifest_b: dict) -> tuple | None:
    """Where two image sets' targets put the bank 0 words their code reads by meaning (the
    parameters' base and block size, the memory descriptor: targets.py), one (base, size,
    descriptor) per side; None where the two agree (the code is then aligned as it is)."""
    from ..targets import TARGETS

    places = []
    for manifest in (manifest_a, manifest_b):
        target = TARGETS.get(manifest.get("target"))
        if target is None:
            return None
        places.append((manifest.get("parameter_base", target.parameter_base), target.parameter_block_bytes,
                       target.memory_descriptor))
    return tuple(places) if places[0] != places[1] else None


def _normalised(line: decode.Line, place: tuple) -> tuple:
    """An instruction's alignment key across targets: for one that reads a parameter or the memory
    descriptor from bank 0, its control code and text with each such offset named by its place in
    the parameters (or as the descriptor), so an instruction whose parameter only moved with the
    target's base pairs with itself; for any other (or where the text was not decoded), its words."""
    text = line.note.split("] ", 1)[1] if "] " in line.note else ""
    if not text or text == "(not decoded)" or text == decode.NOT_INSTALLED:
        return tuple(line.value)
    base, size, descriptor = place

    def named(found) -> str:
        offset = int(found[1], 16)
        if offset == descriptor:
            return "c[0x0][memory descriptor]"
        if base <= offset < base + size:
            return f"c[0x0][param+{offset - base:#x}]"
        return found[0]

    normal = _BANK0.sub(named, text)
    # an instruction that reads no such word is keyed by its words (nvdisasm prints the very same
    # words in each target's own way: `[R2.64]` for sm_86, `desc[UR4][R2.64]` for sm_90)
    return ("text", line.note.split("] ", 1)[0], normal) if normal != text else tuple(line.value)


def _code_unchanged(found: list[Difference], a: Images, b: Images) -> list[Difference]:
    """A paired region whose place changed and whose instructions did not: its place line says so,
    and its spans cover the region's code on both sides (the byte check knows it is shown)."""
    from dataclasses import replace

    regions_a = {r["index"]: r for r in a.manifest["regions"]}
    regions_b = {r["index"]: r for r in b.manifest["regions"]}
    keys_a, keys_b = region_keys(a.manifest, b.manifest)
    of_b = {key: j for j, key in keys_b.items()}
    out = []
    for d in found:
        head = d.key[:-len(".place")] if d.kind == "region" and d.key.endswith(".place") else None
        i = next((i for i, key in keys_a.items() if key == head), None) if head else None
        j = of_b.get(head) if head else None
        if i is not None and j is not None and \
                decode.region_code(a, regions_a[i]) == decode.region_code(b, regions_b[j]):
            count = regions_a[i]["size"] // decode.INSTRUCTION_BYTES
            code = tuple(("program", 8 * r["place"], 8 * r["size"]) for r in (regions_a[i], regions_b[j]))
            d = replace(d, meaning="; ".join(x for x in (d.meaning, f"code unchanged ({words.count(count, 'instruction')})")
                                             if x), spans=d.spans + code)     # the byte check: its code is shown
        out.append(d)
    return out


def _offset(line: decode.Line) -> int:
    return int(line.key.rsplit("[", 1)[1].rstrip("]"), 16)


def _aligned_code(lines_a: list[decode.Line], lines_b: list[decode.Line],
                  bank0: tuple | None = None) -> list[Difference]:
    """`bank0` (_bank0_places), for two targets whose bank 0 words differ: the instructions are
    aligned with their parameter and memory-descriptor offsets normalised (an instruction that only
    reads its parameter at the other target's place pairs with itself, its change one line), not
    by their words."""
    import difflib

    def one(la, lb) -> Difference:
        line = la or lb
        meaning = _meaning(la, lb)
        if la is not None and lb is not None and la.key != lb.key:
            meaning += f"; at {_offset(lb):#06x} in b"
        key = line.key
        if la is None:                     # b's address, which a key of a's addresses must not pass for
            key = f"{key.rsplit('[', 1)[0]}[b:{_offset(lb):#06x}]"
        return Difference(key, "code", line.owner, la.value if la else None, lb.value if lb else None, meaning,
                          (la.spans if la else ()) + (lb.spans if lb else ()))

    if bank0 is None:
        keys_a, keys_b = [tuple(x.value) for x in lines_a], [tuple(x.value) for x in lines_b]
    else:
        keys_a = [_normalised(x, bank0[0]) for x in lines_a]
        keys_b = [_normalised(x, bank0[1]) for x in lines_b]
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    opcodes = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal" or bank0 is None:
            opcodes.append((tag, i1, i2, j1, j2))
            continue
        # paired by their normalised keys: runs of the same words (unchanged, perhaps moved), and
        # single pairs whose words differ (a parameter offset that moved), each its own line
        k = 0
        while k < i2 - i1:
            same = lines_a[i1 + k].value == lines_b[j1 + k].value
            end = k + 1
            while same and end < i2 - i1 and lines_a[i1 + end].value == lines_b[j1 + end].value:
                end += 1
            opcodes.append(("equal" if same else "replace", i1 + k, i1 + end, j1 + k, j1 + end))
            k = end
    out = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            first_a, first_b = _offset(lines_a[i1]), _offset(lines_b[j1])
            if first_a == first_b:
                continue
            last_a, last_b = _offset(lines_a[i2 - 1]), _offset(lines_b[j2 - 1])
            count, shift = i2 - i1, first_b - first_a
            prefix = lines_a[i1].key.rsplit("[", 1)[0]
            spans = tuple(span for line in (*lines_a[i1:i2], *lines_b[j1:j2]) for span in line.spans)
            range_a = f"{first_a:#06x}" if count == 1 else f"{first_a:#06x}..{last_a:#06x}"
            range_b = f"{first_b:#06x}" if count == 1 else f"{first_b:#06x}..{last_b:#06x}"
            out.append(Difference(f"{prefix}[{range_a}]", "code", lines_a[i1].owner, range_a, range_b,
                                  f"{words.count(count, 'instruction')} unchanged, moved by {'+' if shift > 0 else '-'}"
                                  f"{abs(shift):#x} ({words.count(abs(shift) // decode.INSTRUCTION_BYTES, 'instruction')})",
                                  spans))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        out += [one(lines_a[i1 + k], lines_b[j1 + k]) for k in range(paired)]
        out += [one(line, None) for line in lines_a[i1 + paired:i2]]
        out += [one(None, line) for line in lines_b[j1 + paired:j2]]
    return out


def differences(a: Images, b: Images) -> list[Difference]:
    """Every fact that differs between two image sets (a -> b), in dump order."""
    lines_a = decode.header_lines(a) + decode.region_lines(a)
    lines_b = decode.header_lines(b) + decode.region_lines(b)
    if a.manifest["qmd_layout"] == b.manifest["qmd_layout"]:
        lines_a += decode.launch_lines(a, zero_words=True)
        lines_b += decode.launch_lines(b, zero_words=True)
    else:  # a different QMD layout: the fields both layouts have compared by name, the others listed once
        common = set(decode.qmd.LAYOUTS[a.manifest["qmd_layout"]].fields) & \
            set(decode.qmd.LAYOUTS[b.manifest["qmd_layout"]].fields)
        lines_a += [line for line in decode.launch_lines(a, zero_words=True)
                    if line.kind != "qmd" or line.key.rsplit(".qmd.", 1)[1] in common]
        lines_b += [line for line in decode.launch_lines(b, zero_words=True)
                    if line.kind != "qmd" or line.key.rsplit(".qmd.", 1)[1] in common]
    lines_a += decode.submission_lines(a) + decode.push_lines(a) + decode.ring_lines(a)
    lines_b += decode.submission_lines(b) + decode.push_lines(b) + decode.ring_lines(b)
    if a.manifest["parameter_base"] != b.manifest["parameter_base"]:
        lines_a, lines_b = _by_argument(lines_a, a.manifest), _by_argument(lines_b, b.manifest)
        # a zero word the other target's block has no place for (its block is shorter) is no fact
        matches_a, matches_b = {x.match for x in lines_a}, {x.match for x in lines_b}
        lines_a = [x for x in lines_a if x.kind != "bank0" or x.value or x.match in matches_b]
        lines_b = [x for x in lines_b if x.kind != "bank0" or x.value or x.match in matches_a]
    alignment = LaunchAlignment.of(a.manifest, b.manifest)
    lines_a, lines_b = alignment.rename(lines_a, alignment.keys_a), alignment.rename(lines_b, alignment.keys_b)
    submissions = SubmissionAlignment.of(a.manifest, b.manifest, alignment, lines_a, lines_b)
    lines_a, lines_b = submissions.rename(lines_a, submissions.keys_a), submissions.rename(lines_b, submissions.keys_b)
    regions_a, regions_b = region_keys(a.manifest, b.manifest)
    for lines, keys in ((lines_a, regions_a), (lines_b, regions_b)):     # a region paired at another index
        lines += [decode.Line(f"region[{i}].index", i, "", next((r["identity"] for r in images.manifest["regions"]
                                                                if r["index"] == i), ""), "region")
                  for images in ([a] if lines is lines_a else [b]) for i, key in keys.items() if "->" in key]
    lines_a, lines_b = _rename_regions(lines_a, regions_a), _rename_regions(lines_b, regions_b)
    lines_a, lines_b = _segment_places(a, b, lines_a, lines_b)
    relocation = Relocation.of(a.manifest, b.manifest, alignment, submissions, (regions_a, regions_b))
    relocated = relocated_facts(a, b, lines_a, lines_b, relocation, alignment, submissions, (regions_a, regions_b))
    only_a, only_b = submissions.one_sided()
    apart = {submissions.keys_a[i] for i in only_a} | {submissions.keys_b[j] for j in only_b}   # one line each
    compared_a = [x for x in lines_a if x.match not in relocated.moved and _head(x.match) not in apart]
    compared_b = [x for x in lines_b if x.match not in relocated.moved and _head(x.match) not in apart]
    found = _code_unchanged(_fold_zeros(_differences(compared_a, compared_b, relocated.notes, relocated.renamed)),
                            a, b)
    rank = {"header": 0, "region": 1, "launch": 2, "qmd": 2, "bank0": 2}
    found.sort(key=lambda d: rank.get(d.kind, 3))       # in dump order: the launches, then the submissions
    for moved in alignment.moved_lines(a, b, lines_a, lines_b):      # before the first launch of its run
        first = moved.key[len("launch["):].split(".", 1)[0].rstrip("]")
        at = next((k for k, d in enumerate(found) if d.key.startswith(f"launch[{first}->") or rank.get(d.kind, 3) > 2),
                  len(found))
        found.insert(at, moved)
    own = _submission_lines(a, b, submissions, alignment, lines_a, lines_b)
    own += _relocated_lines(a, b, relocated.moved, alignment, submissions, lines_a, lines_b)
    at = next((k for k, d in enumerate(found) if rank.get(d.kind, 3) > 2 and not d.key.startswith("prologue")),
              len(found))
    found[at:at] = own                 # the submissions' structure, then what differs in them
    found[_after_header(found):_after_header(found)] = _qmd_layout_fields(a.manifest, b.manifest)
    found += _code_differences(a, b)
    found += manifest_differences(a.manifest, b.manifest, found, alignment, submissions, relocated.manifest)
    found += raw_differences(a, b, found)
    found += _manifest_byte_difference(a, b, found)
    return found


def _field_names(names) -> str:
    """QMD field names, an indexed family one entry (`RELEASE_ENABLE(0..2)`), in the layout's order."""
    import re

    families: dict[str, list[str]] = {}
    for name in names:
        found = re.fullmatch(r"(.*)\((\d+)\)", name)
        families.setdefault(found.group(1) if found else name, []).append(found.group(2) if found else "")
    out = []
    for stem, indices in families.items():
        numbers = sorted(int(k) for k in indices if k)
        if not numbers:
            out.append(stem)
        elif numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
            out.append(f"{stem}({numbers[0]}..{numbers[-1]})")
        else:
            out += [f"{stem}({k})" for k in numbers]
    return ", ".join(out)


def _qmd_layout_fields(a: dict, b: dict) -> list[Difference]:
    """Two QMD layouts (sm_86's V03_00, sm_90's V04_00): their launches' fields are compared by name
    where both layouts have the field; one line says which fields one layout has and the other
    lacks, whose values are not compared (README, `bobc diff`)."""
    layout_a, layout_b = a["qmd_layout"], b["qmd_layout"]
    if layout_a == layout_b or layout_a not in decode.qmd.LAYOUTS or layout_b not in decode.qmd.LAYOUTS:
        return []
    fields_a, fields_b = decode.qmd.LAYOUTS[layout_a].fields, decode.qmd.LAYOUTS[layout_b].fields
    only_a = [name for name in fields_a if name not in fields_b]
    only_b = [name for name in fields_b if name not in fields_a]
    if not only_a and not only_b:
        return []
    return [Difference("qmd_layout.fields", "header", "", f"{len(only_a)} fields only {layout_a} has",
                       f"{len(only_b)} fields only {layout_b} has",
                       f"the launches' QMD fields are compared by name where both layouts have them; these are "
                       f"not compared: {layout_a} only: {_field_names(only_a) or 'none'}; {layout_b} only: "
                       f"{_field_names(only_b) or 'none'}")]


def _after_header(found: list[Difference]) -> int:
    """Where a line about the images' header goes: after the header's own lines."""
    return next((k for k, d in enumerate(found) if d.kind != "header"), len(found))


def _segment_places(a: Images, b: Images, lines_a: list[decode.Line], lines_b: list[decode.Line]):
    """Two paired methods whose headers lie at other offsets of push.bin but at the same place in their
    segments (a submission that moved): their place said once, from the segment's start, with both
    offsets (`header at segment +0x10 (push +0x258 in a, +0x280 in b)`), so it is no change."""
    import re
    from dataclasses import replace

    def starts(images):
        m = images.manifest
        out = {"prologue": m["prologue"]["push_offset"]}
        out.update({f"submission[{s['index']}]": s["push_offset"] for s in m["submissions"]})
        return out

    starts_a, starts_b = starts(a), starts(b)
    header = re.compile(r"header at push \+0x([0-9a-f]+)")
    by_b = {line.match: line for line in lines_b if line.kind == "push"}
    places: dict[str, str] = {}
    for la in lines_a:
        lb = by_b.get(la.match) if la.kind == "push" else None
        if lb is None or la.where == lb.where:
            continue
        found_a, found_b = header.search(la.where), header.search(lb.where)
        start_a, start_b = starts_a.get(_head(la.key)), starts_b.get(_head(lb.key))
        if not (found_a and found_b) or start_a is None or start_b is None:
            continue
        at_a, at_b = int(found_a.group(1), 16), int(found_b.group(1), 16)
        relative = f"header at segment +{at_a - start_a:#x} (push +{at_a:#x} in a, +{at_b:#x} in b)"
        if header.sub("", la.where) == header.sub("", lb.where) and at_a - start_a == at_b - start_b:
            places[la.match] = header.sub(relative, la.where)
    return ([replace(x, where=places[x.match]) if x.kind == "push" and x.match in places else x for x in lines]
            for lines in (lines_a, lines_b))


def _relocated_lines(a: Images, b: Images, relocated: set, launches: LaunchAlignment,
                     submissions: SubmissionAlignment, lines_a, lines_b) -> list[Difference]:
    """The relocated facts (relocated_facts) of a launch or submission that did not move as part of
    a run (those runs' lines say it): one line for each such launch or submission, naming the facts,
    its spans theirs (the byte check knows they are shown)."""
    moved = set()
    order_a = [x["index"] for x in a.manifest["launches"]]
    for i1, i2, _j1, _j2 in launches.moved:
        moved |= {launches.keys_a[order_a[k]] for k in range(i1, i2)}
    order_a = sorted(s["index"] for s in a.manifest["submissions"])
    for i1, i2, _j1, _j2 in submissions.moved:
        moved |= {submissions.keys_a[order_a[k]] for k in range(i1, i2)}
    heads: dict[str, list[str]] = {}
    for match in sorted(relocated):
        if _head(match) not in moved:
            heads.setdefault(_head(match), []).append(match[len(_head(match)):])
    by_a = {line.match: line for line in lines_a}
    by_b = {line.match: line for line in lines_b}
    out = []
    first = {}
    for position, line in enumerate(lines_a):
        first.setdefault(_head(line.match), position)
    for head in sorted(heads, key=lambda h: (first.get(h, len(lines_a)), h)):      # in dump order
        tails = heads[head]
        facts = [line for tail in tails for line in (by_a.get(head + tail), by_b.get(head + tail)) if line]
        owner = facts[0].owner if facts else ""
        listed = ", ".join(t.lstrip(".") for t in tails[:6]) + (f" and {len(tails) - 6} more" if len(tails) > 6 else "") \
            or head
        out.append(Difference(f"{head}.addresses", facts[0].kind if facts else "launch", owner,
                              words.count(len(tails), "address fact"), "the same places, moved",
                              f"{listed}: each points at what it pointed at in a (a launch, submission or "
                              "region that moved), so only its value differs", tuple(s for x in facts for s in x.spans)))
    return out


# ---------------------------------------------------------------- what no decoded line shows

def _manifest_facts(manifest: dict, launch_keys: dict | None = None,
                    region_keys: dict | None = None, submission_keys: dict | None = None) -> dict[str, object]:
    """The manifest as key -> value, keyed the way the decoded lines are (region[i].size,
    launch[i].schedules, sizes.qmd); list entries' own fields are leaves.  `launch_keys` gives a
    launch index the prefix it is matched on (LaunchAlignment), `submission_keys` a submission's
    (SubmissionAlignment)."""
    launch_keys = launch_keys or {}
    out = {}
    names = {"regions": "region", "launches": "launch", "submissions": "submission"}
    for key, value in manifest.items():
        if key in names and isinstance(value, list):
            for position, item in enumerate(value):
                if not isinstance(item, dict):
                    out[f"{names[key]}[#{position}]"] = item
                    continue
                index = item.get("index", f"#{position}")
                head = f"{names[key]}[{index}]"
                if key == "launches" and isinstance(index, int) and index in launch_keys:
                    head = launch_keys[index]
                if key == "regions" and isinstance(index, int) and index in (region_keys or {}):
                    head = region_keys[index]
                if key == "submissions" and isinstance(index, int) and index in (submission_keys or {}):
                    head = submission_keys[index]
                for field_name, field_value in item.items():
                    if field_name != "index":
                        out[f"{head}.{field_name}"] = field_value
        else:
            out.update(decode._flat({key: value}))
    return out


def manifest_differences(a: dict, b: dict, found: list[Difference],
                         alignment: LaunchAlignment | None = None, submissions: SubmissionAlignment | None = None,
                         relocated: set = frozenset()) -> list[Difference]:
    """Every manifest value that differs and that no decoded difference already names (a launch's
    declared schedules, its QMD and parameter block offsets, a format string...); launches and
    submissions are matched as `alignment` and `submissions` pair them, and a value that differs
    only as what it points at moved (`relocated`: relocated_facts' manifest keys) is no difference."""
    if a == b:
        return []
    alignment = alignment or LaunchAlignment({}, {}, [])
    submissions = submissions or SubmissionAlignment({}, {}, [])
    paired_a, paired_b = region_keys(a, b)
    facts_a = _manifest_facts(a, alignment.keys_a, paired_a, submissions.keys_a)
    facts_b = _manifest_facts(b, alignment.keys_b, paired_b, submissions.keys_b)
    shown = {d.key for d in found} | set(relocated)
    shown |= {key.replace(".kernel", ".identity") for key in shown if key.endswith(".kernel")}
    # the native program a native host's image folder holds: its own lines compare it (bobc.host.native)
    shown |= {key for key in list(facts_a) + list(facts_b) if key.startswith("native_program.")}
    one_sided = {d.key.split(".", 1)[0] for d in found if d.a is None or d.b is None}   # a launch only in b
    one_sided |= {key for key in alignment.keys_b.values() if key.startswith("launch[+")}
    one_sided |= {key for key in paired_b.values() if key.startswith("region[+")}
    one_sided |= {key for key in submissions.keys_b.values() if key.startswith("submission[+")}
    out = []
    shifted = {}                # a launch's address line shows its offset's change when both moved alike
    for d in found:
        if d.kind == "launch" and d.key.endswith(("].qmd_address", "].parameter_address")) and \
                isinstance(d.a, int) and isinstance(d.b, int):
            shifted[d.key.replace("_address", "_offset")] = d.b - d.a
    for key in list(facts_a) + [k for k in facts_b if k not in facts_a]:
        va, vb = facts_a.get(key), facts_b.get(key)
        if key in facts_a and key in facts_b and va == vb or key in shown:
            continue
        if key in shifted and isinstance(va, int) and isinstance(vb, int) and vb - va == shifted[key]:
            continue
        if (key not in facts_a or key not in facts_b) and key.split(".", 1)[0] in one_sided:
            continue              # an entry one side lacks: its decoded lines already say "only in"
        owner = ""
        for facts in (facts_a, facts_b):
            head = key.split(".", 1)[0]
            if f"{head}.identity" in facts and head != key:
                owner = str(facts[f"{head}.identity"])
                break
        out.append(Difference(f"manifest.{key}", "manifest", owner,
                              va if key in facts_a else None, vb if key in facts_b else None,
                              "the manifest's own value (no decoded image fact shows it)"))
    return out


def _manifest_byte_difference(a: Images, b: Images, found: list[Difference]) -> list[Difference]:
    """Two manifest.json files (or two hosts' manifest sections) with the same content but other
    bytes (indentation, key order): a byte comparison would fail, so say so."""
    ma, mb = getattr(a, "manifest_bytes", None), getattr(b, "manifest_bytes", None)
    if ma is None or mb is None or ma[0] != mb[0] or ma[1] == mb[1] or a.manifest != b.manifest:
        return []
    import hashlib

    digest = lambda data: f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}..."  # noqa: E731
    return [Difference(ma[0], "raw", "", digest(ma[1]), digest(mb[1]),
                       "the same JSON content, written with other bytes (spacing, key order)")]


# Each image's file name and the manifest size key that gives its length.
_IMAGES = (("program", "program.bin", "program"), ("qmd", "qmd.bin", "qmd"),
           ("push", "push.bin", "pushbuffer"), ("gpfifo", "gpfifo.bin", "gpfifo"))
_CHUNK = 4096


def _differing_offsets(x: bytes, y: bytes) -> list[int]:
    out = []
    for start in range(0, len(x), _CHUNK):
        if x[start:start + _CHUNK] != y[start:start + _CHUNK]:
            out += [i for i in range(start, min(start + _CHUNK, len(x))) if x[i] != y[i]]
    return out


def _covered(found: list[Difference], image: str, offsets: set[int]) -> dict[int, int]:
    """Byte offset -> the mask of its bits some reported difference shows (only `offsets`)."""
    masks: dict[int, int] = {}
    for difference in found:
        for name, first, count in difference.spans:
            if name != image:
                continue
            for bit in range(first, first + count):
                if bit >> 3 in offsets:
                    masks[bit >> 3] = masks.get(bit >> 3, 0) | 1 << (bit & 7)
    return masks


def _record(images: Images, image: str, offset: int) -> tuple[str, str, int | None]:
    """(what holds byte `offset` of `image`, its owner, the record's first byte or None)."""
    m = images.manifest
    if image == "qmd":
        record = m["sizes"]["qmd_record"]
        for launch in m["launches"]:
            if launch["qmd_offset"] <= offset < launch["qmd_offset"] + record:
                size = decode.qmd.LAYOUTS[m["qmd_layout"]].size
                if offset - launch["qmd_offset"] >= size:
                    return (f"launch[{launch['index']}]'s QMD slot padding (past the {m['qmd_layout']} QMD's "
                            f"{size} bytes)", launch["identity"], launch["qmd_offset"])
                return f"launch[{launch['index']}]'s QMD", launch["identity"], launch["qmd_offset"]
        return "outside every launch's QMD", "", None
    if image == "program":
        items = [(r["place"], r["place"] + r["size"], f"region[{r['index']}] code", r["identity"])
                 for r in m["regions"]]
        size = m["sizes"]["parameter_block"]
        items += [(x["parameter_offset"], x["parameter_offset"] + size, f"launch[{x['index']}]'s parameter block",
                   x["identity"]) for x in m["launches"]]
        for start, end, what, owner in items:
            if start <= offset < end:
                return what, owner, start
        before = [item for item in items if item[1] <= offset]
        if not before:
            return "padding before the first region", "", None
        start, end, what, owner = max(before)
        return f"padding after {what} (which ends at {end:#x})", owner, None
    if image == "push":
        spans = [(m["prologue"]["push_offset"], m["prologue"]["push_length"], "the prologue segment", "prologue")]
        spans += [(s["push_offset"], s["push_length"], f"submission[{s['index']}]'s segment", s["identity"])
                  for s in m["submissions"]]
        stage = (m.get("residence") or {}).get("stage")
        if isinstance(stage, dict) and isinstance(stage.get("push_offset"), int):
            spans.append((stage["push_offset"], stage.get("bytes", 0), "the program residence stage",
                          stage.get("identity", "")))
        for start, length, what, owner in spans:
            if start <= offset < start + length:
                return what, owner, start
        return "outside every pushbuffer segment", "", None
    entry = offset // 8
    return f"gpfifo[{entry}]", "", entry * 8


def _raw_meaning(images: Images, image: str, what: str, base: int | None, bits: list[int]) -> str:
    if image == "qmd" and base is not None and "padding" not in what:
        table = decode.qmd.LAYOUTS[images.manifest["qmd_layout"]]
        listed = ", ".join(str(b) for b in bits[:8]) + (f" and {len(bits) - 8} more" if len(bits) > 8 else "")
        return f"{what}, bit(s) {listed} of the QMD, in no {table.name} field"
    where = f"{what} +{bits[0] // 8:#x}" if base is not None else what
    return f"{where}: bytes no decoded line shows"


def raw_differences(a: Images, b: Images, found: list[Difference]) -> list[Difference]:
    """Every image byte that differs in bits no difference in `found` shows, as ranges: the image,
    the offset, the enclosing record (QMD slot, region, parameter block, segment) and the bytes."""
    out = []
    for image, file_name, size_key in _IMAGES:
        x, y = getattr(a, image), getattr(b, image)
        if x == y:
            continue
        if len(x) != len(y):       # offsets do not line up: say so unless the manifest's sizes did
            if not any(d.key == f"sizes.{size_key}" for d in found):
                out.append(Difference(f"{file_name}.bytes", "raw", "", len(x), len(y),
                                      "the image's length differs, so its bytes are not compared offset by offset"))
            continue
        if image == "qmd" and a.manifest["qmd_layout"] != b.manifest["qmd_layout"]:
            continue               # another layout: compared launch by launch, not byte by byte (qmd_layout)
        offsets = _differing_offsets(x, y)
        masks = _covered(found, image, set(offsets))
        residual = [(o, (x[o] ^ y[o]) & ~masks.get(o, 0) & 0xFF) for o in offsets]
        residual = [(o, bits) for o, bits in residual if bits]
        groups: list[list] = []      # [start, end, what, owner, base, [bit numbers in the record]]
        for offset, bits in residual:
            what, owner, base = _record(a, image, offset)
            numbers = [8 * (offset - (base or 0)) + k for k in range(8) if bits >> k & 1]
            if groups and groups[-1][1] == offset and groups[-1][2] == what:
                groups[-1][1] = offset + 1
                groups[-1][5] += numbers
            else:
                groups.append([offset, offset + 1, what, owner, base, numbers])
        for start, end, what, owner, base, numbers in groups:
            key = f"{file_name}[{start:#x}]" if end == start + 1 else f"{file_name}[{start:#x}..{end - 1:#x}]"
            if base is not None and not (image == "qmd" and "padding" not in what):
                numbers = [8 * (start - base)]     # the range's offset in its record
            out.append(Difference(key, "raw", owner, x[start:end].hex(" "), y[start:end].hex(" "),
                                  _raw_meaning(a, image, what, base, numbers)))
    return out


def compare(folder_a: str | Path, folder_b: str | Path) -> list[str]:
    """Fact-level differences between two image folders or hosts (a -> b), one line each."""
    return [d.text() for d in differences(decode.load_images(folder_a), decode.load_images(folder_b))]


# ---------------------------------------------------------------- a host plan's facts

def _step_index(key: str) -> int | None:
    if not key.startswith(STEPS) or "]" not in key:
        return None
    try:
        return int(key[len(STEPS):key.index("]")])
    except ValueError:
        return None


def _step_place(d: Difference, first_a: int, first_b: int) -> bool:
    """Whether the difference `d` comes at or after a moved run starting at a's first_a, b's first_b
    (a step of b only is keyed by its index in b)."""
    if not d.key.startswith(STEPS) or "]" not in d.key:
        return False
    inside = d.key[len(STEPS):d.key.index("]")]
    try:
        if "->" in inside:
            return int(inside.partition("->")[2]) >= first_b
        return int(inside) >= (first_b if d.a is None else first_a)
    except ValueError:
        return False


def host_plan_differences(lines_a: list[decode.Line], lines_b: list[decode.Line]) -> list[Difference]:
    """Two host plans' facts (bobc.host.sections.plan_lines) compared by key, their steps aligned as a
    sequence (sequence_keys, on each step's kind and members): a step inserted or removed is one line
    (`host.plan.steps[+4]: only in b: write file result, host 0x..., extent 0x4`), a changed step's
    members are compared with its counterpart's (`host.plan.steps[8->9].offset (write_at): 0x4 -> 0x0`),
    and a run of unchanged steps that moved is one line naming both ranges.  Steps of different kinds
    in a replaced run are not paired: each is a step on one side."""
    def steps(lines):
        out: dict[int, list] = {}
        for line in lines:
            index = _step_index(line.key)
            if index is not None:
                out.setdefault(index, []).append(line)
        return out

    steps_a, steps_b = steps(lines_a), steps(lines_b)
    order_a, order_b = sorted(steps_a), sorted(steps_b)

    def signature(lines):
        return tuple((_launch_tail(line.key), repr(line.value)) for line in lines)

    sig_a = [signature(steps_a[i]) for i in order_a]
    sig_b = [signature(steps_b[j]) for j in order_b]
    keys_a, keys_b, moved = sequence_keys(order_a, order_b, sig_a, sig_b, STEPS[:-1],
                                          lambda p, q: steps_a[order_a[p]][0].value == steps_b[order_b[q]][0].value)
    paired_a = {i for i, key in keys_a.items() if key in keys_b.values()}
    one_sided = {("a", i) for i in order_a if i not in paired_a} | \
        {("b", j) for j, key in keys_b.items() if key.startswith(f"{STEPS}+")}
    found = []
    for difference in _differences(_rekey(lines_a, keys_a, STEPS, None), _rekey(lines_b, keys_b, STEPS, None)):
        index = _step_index(difference.key.replace("[+", "["))
        side = "a" if difference.b is None else "b"
        if index is not None and (side, index) in one_sided and (difference.a is None or difference.b is None):
            if difference.key.endswith("]"):         # the step's own line: the whole step, one line
                lines = (steps_a if side == "a" else steps_b)[index]
                summary = lines[0].value + "".join(f"{',' if k else ''} {_launch_tail(x.key).lstrip('.')} "
                                                   f"{decode.format_value(x.value)}" for k, x in enumerate(lines[1:]))
                found.append(Difference(difference.key, "host", "", summary if side == "a" else None,
                                        summary if side == "b" else None, f"a step only in {side}"))
            continue
        found.append(difference)
    for i1, i2, j1, j2 in moved:             # before the first step of its run's changed counterparts
        first_a, last_a, first_b, last_b = order_a[i1], order_a[i2 - 1], order_b[j1], order_b[j2 - 1]
        run_a = f"{STEPS}{first_a}]" if i2 - i1 == 1 else f"{STEPS}{first_a}..{last_a}]"
        run_b = f"{STEPS}{first_b}]" if i2 - i1 == 1 else f"{STEPS}{first_b}..{last_b}]"
        shift = first_b - first_a
        at = next((k for k, d in enumerate(found) if _step_place(d, first_a, first_b)), len(found))
        found.insert(at, Difference(run_a, "host", "", run_a, run_b,
                                    f"{words.count(i2 - i1, 'step')} of the same kinds and members, at "
                                    f"{'+' if shift > 0 else '-'}{words.count(abs(shift), 'place')} in b"))
    return found
