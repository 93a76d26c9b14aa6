"""Deriving forms the corpus lacks from the structure of encoding classes.

An encoding class is the opcodes that share one operand layout (tables/layouts.py):
FADD and FMUL (`Rd Ra Sb`), FFMA, the ISETP family, ...  Within a class, changing an
operand's kind (register, immediate, constant bank, uniform register) changes the
fixed bits the same way for every opcode: FADD R,R,R -> FADD R,R,C flips the same
opcode bits as FMUL R,R,R -> FMUL R,R,C.  So a missing form (M, K2) is

    fixed(M, K1) ^ fixed(N, K1) ^ fixed(N, K2)

for any sibling N of M's class that has both kinds; every sibling that can vouch for
it must give the same bits, or nothing is derived.  Each derived form records that
derivation ("derived_from": M's form, "via": N's two forms), and `learn` keeps only
those that nvdisasm decodes back to the intended text ("proved": "nvdisasm").  Where
ptxas did emit a form, the derivation is checked against ptxas's bits instead
(tests/sass/test_derived_forms.py derives every learned form it can from the others).
"""
from __future__ import annotations

from collections import defaultdict

from .tables.layouts import (DISPLAY_ALIASES, DOUBLE_IMMEDIATE, FLOAT_IMMEDIATE, HALF_OPCODES, LAYOUTS,
                             OPERAND_MODIFIERS)


def _split(key: str) -> tuple[str, str]:
    mnemonic, _, kinds = key.partition(" ")
    return mnemonic, kinds


def encoding_class(opcode: str) -> tuple | None:
    """The class an opcode belongs to (None: not in the tables): its operand layouts, what its
    immediates mean and which operand modifiers it takes; opcodes alike in all three place
    every operand kind the same way."""
    layouts = LAYOUTS.get(opcode)
    if layouts is None:
        return None
    immediates = ("binary64" if opcode in DOUBLE_IMMEDIATE else "binary32" if opcode in FLOAT_IMMEDIATE
                  else "binary16x2" if opcode in HALF_OPCODES else "integer")
    modifiers = tuple(sorted((k, tuple(v)) for k, v in OPERAND_MODIFIERS.get(opcode, {}).items()))
    return (tuple(layouts), immediates, modifiers)


def class_name(opcode: str) -> str:
    """The class in words, for messages: its members and its layout."""
    cls = encoding_class(opcode)
    if cls is None:
        return "no encoding class"
    return f"class {{{', '.join(class_members(opcode))}}} ({' | '.join(cls[0])}, {cls[1]} immediates)"


def class_members(opcode: str) -> list[str]:
    cls = encoding_class(opcode)
    return sorted(op for op in LAYOUTS if encoding_class(op) == cls)


def _derivable(mnemonic: str) -> bool:
    return not mnemonic.startswith(DISPLAY_ALIASES)


def _grouped(forms: dict[str, dict]) -> dict[tuple, dict[str, dict[str, str]]]:
    """class -> mnemonic -> operand kinds -> form key (display aliases left out)."""
    groups: dict[tuple, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for key in forms:
        mnemonic, kinds = _split(key)
        cls = encoding_class(mnemonic.split(".")[0])
        if cls is not None and _derivable(mnemonic):
            groups[cls][mnemonic][kinds] = key
    return groups


def derive(forms: dict[str, dict], mask_of) -> dict[str, list[dict]]:
    """Candidate forms (key -> entries, most likely first) missing from `forms` (one table).

    `mask_of(key, example)` gives the operand-field mask of a form (the bits its operands
    occupy), so that a derived form's fixed bits never overlap its own operand fields.
    """
    out: dict[str, list[dict]] = {}
    groups = _grouped(forms)
    # every opcode's kind changes, for the last resort: a class whose own members part ways
    # (FADD R->U flips 0xc00, FMUL R->U 0xe00 like FFMA and IMAD) may follow another class
    anywhere: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for mnemonics in groups.values():
        for mnemonic, kinds in sorted(mnemonics.items()):
            for k1, key1 in kinds.items():
                for k2, key2 in kinds.items():
                    if k1 != k2 and _change(k1, k2) is not None:
                        anywhere[_change(k1, k2)].append((key1, key2))
    for mnemonics in groups.values():
        for target, have in sorted(mnemonics.items()):
            wanted = {k for other in mnemonics.values() for k in other} - set(have)
            for k2 in sorted(wanted):
                options = derive_one(forms, mnemonics, target, k2, mask_of)
                options += _from_any_class(forms, have, target, k2, anywhere, mask_of, options)
                if options:
                    out[f"{target} {k2}"] = options[:MAX_OPTIONS]
    return out


MAX_OPTIONS = 6


def _from_any_class(forms, have, target, k2, anywhere, mask_of, known) -> list[dict]:
    """Further candidates: the same change of operand kinds as any other opcode makes it."""
    fixed = lambda k: int(forms[k]["lo"], 16) | int(forms[k]["hi"], 16) << 64
    key = f"{target} {k2}"
    seen = {int(o["lo"], 16) | int(o["hi"], 16) << 64 for o in known}
    out = []
    for k1 in sorted(have, key=_register_first):
        change = _change(k1, k2)
        if change is None:
            continue
        deltas: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for key1, key2 in anywhere.get(change, []):
            deltas[fixed(key1) ^ fixed(key2)].append((key1, key2))
        # the most common way first (FMUL R->U follows FFMA, IMAD, ... not FADD)
        for delta, pairs in sorted(deltas.items(), key=lambda d: (-len(d[1]), d[0])):
            via1, via2 = pairs[0]
            if via2.split(" ")[1] != k2:
                same_kinds = [p for p in anywhere.get(change, []) if p[1].split(" ")[1] == k2]
                if not same_kinds:
                    continue
                via2 = same_kinds[0][1]     # the example needs the target's own operand kinds
            example = _example(target, forms[via2]["example"])
            try:
                bits = (fixed(have[k1]) ^ delta) & ~mask_of(key, example)
            except ValueError:
                continue
            if bits in seen:
                continue
            seen.add(bits)
            out.append({"lo": f"{bits & (1 << 64) - 1:#018x}", "hi": f"{bits >> 64:#018x}",
                        "derived_from": have[k1], "via": f"{pairs[0][0]} -> {pairs[0][1]}", "agreeing": len(pairs),
                        "example": example})
    return out


def derive_one(forms: dict[str, dict], mnemonics: dict[str, dict[str, str]], target: str, k2: str,
               mask_of) -> list[dict]:
    """The candidates for form `target k2` from its class's other forms (`mnemonics`)."""
    fixed = lambda k: int(forms[k]["lo"], 16) | int(forms[k]["hi"], 16) << 64
    have = mnemonics.get(target, {})
    key = f"{target} {k2}"
    # one candidate per starting form k1 whose siblings all agree; classes part ways on
    # some kinds (FADD R/I/C = 0x221/0x421/0x621, FMUL 0x220/0x820/0xa20), so a candidate
    # is only a candidate until nvdisasm reads it as intended
    options: list[dict] = []
    for k1 in sorted(have, key=_register_first):
        if k1 == k2:
            continue
        votes: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for sibling, theirs in sorted(mnemonics.items()):
            if sibling != target and k1 in theirs and k2 in theirs:
                candidate = fixed(have[k1]) ^ fixed(theirs[k1]) ^ fixed(theirs[k2])
                votes[candidate].append((have[k1], theirs[k1], theirs[k2]))
        if len(votes) != 1:
            continue
        (bits, evidence), = votes.items()
        source, via1, via2 = evidence[0]
        example = _example(target, forms[via2]["example"])
        try:
            bits &= ~mask_of(key, example)
        except ValueError:
            continue    # the sibling's operands do not fit the target (an immediate's range)
        if any(int(o["lo"], 16) | int(o["hi"], 16) << 64 == bits for o in options):
            continue
        options.append({"lo": f"{bits & (1 << 64) - 1:#018x}", "hi": f"{bits >> 64:#018x}",
                        "derived_from": source, "via": f"{via1} -> {via2}",
                        "agreeing": len(evidence), "example": example})
    return options


def _change(k1: str, k2: str) -> tuple | None:
    """Which operand positions change kind between two forms: ((position, from, to), ...);
    None when the forms have different operand counts."""
    a, b = k1.split(","), k2.split(",")
    if len(a) != len(b):
        return None
    return tuple((i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y)


def _register_first(kinds: str) -> tuple[int, str]:
    return (-kinds.count("R"), kinds)


def _example(mnemonic: str, sibling_example: str) -> str:
    """The sibling's example with the target's mnemonic: same layout, same operand kinds."""
    text = sibling_example
    guard = ""
    if text.startswith("@"):
        guard, _, text = text.partition(" ")
        guard += " "
    _, _, operands = text.partition(" ")
    return f"{guard}{mnemonic} {operands}".strip()
