"""Learning each form's fixed bits from ptxas's (text, word) pairs.

For every instruction of the reference corpus (tests/sass/data/corpus-*.tsv,
built by tools/ptx_corpus/build_corpus.py) whose opcode has a layout, the
operands are placed as the encoder would place them; the operand fields of
ptxas's word must hold exactly those values (else the layout is wrong) and
the remaining bits, control apart, are the form's fixed bits.  Every word of
a form must agree on them.  The result is tables/<arch>.json, each form with
the first ptxas instruction that established it.

    python -m bobc.sass.learn      (rewrites compiler/bobc/sass/tables/sm_*.json)
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .encoder import CONTROL_MASK, EncodeProblem, Encoder
from .syntax import SyntaxProblem, parse_instruction
from .tables.layouts import LAYOUTS
from ..targets import TARGETS

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "sass" / "data"
TABLES = Path(__file__).parent / "tables"
PTX_CORPUS = REPO / "tools" / "ptx_corpus"
# The first line of a corpus PTX file that ptxas compiles for sm_90 alone (as sm_90a):
# tools/ptx_corpus/build_corpus.py reads it; its forms are evidence for sm_90 only.
ONLY_SM90 = "// targets: sm_90"


def only_sm90(ptx_name: str) -> bool:
    """Whether corpus file `ptx_name` (tools/ptx_corpus) is marked sm_90-only."""
    path = PTX_CORPUS / ptx_name
    return path.is_file() and path.read_text().split("\n", 1)[0].strip() == ONLY_SM90


@dataclass(frozen=True)
class CorpusRow:
    text: str
    word: int
    reference: str    # file:kernel:-On:offset

    @property
    def stream(self) -> str:
        return self.reference.rsplit(":", 1)[0]

    @property
    def offset(self) -> int:
        return int(self.reference.rsplit(":", 1)[1], 16)


def read_corpus(arch: str) -> list[CorpusRow]:
    rows = []
    path = CORPUS / f"corpus-{arch}.tsv"
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        text, lo, hi, ref = line.split("\t")
        rows.append(CorpusRow(text, int(lo, 16) | int(hi, 16) << 64, ref))
    return rows


def streams(rows: list[CorpusRow]) -> dict[str, list[CorpusRow]]:
    grouped: dict[str, list[CorpusRow]] = defaultdict(list)
    for row in rows:
        grouped[row.stream].append(row)
    return grouped


def hidden_zero_destination(inst):
    """`inst` with the zero destination nvdisasm does not print (VOTE.ALL P0, P0 is VOTE.ALL RZ, P0, P0:
    layouts.HIDDEN_ZERO_DESTINATION), as the assembler reads it (encoder._nvdisasm_spellings): ptxas's
    vote.sync.all is only ever printed so, and its form was never learned (probe s38 sassforms5).  Only
    where the text as printed fits no layout of the opcode: VOTEU's "Pu Pp" layout learns VOTEU.ANY UP0, P5 as
    written."""
    from dataclasses import replace
    from .encoder import ZERO_REGISTER, match_layout
    from .syntax import Reg
    from .tables.layouts import HIDDEN_ZERO_DESTINATION
    zero = HIDDEN_ZERO_DESTINATION.get(inst.opcode)
    if zero:
        try:
            match_layout(inst)
            return inst
        except EncodeProblem:
            pass
    if zero and inst.operands and isinstance(inst.operands[0], Reg) and inst.operands[0].bank in ("P", "UP"):
        spans = inst.operand_spans
        return replace(inst, operands=[Reg(zero, ZERO_REGISTER[zero]), *inst.operands],
                       operand_spans=(spans[:1] + spans) if spans else spans)
    return inst


def learn(arch: str) -> tuple[dict, list[str]]:
    """(table, problems): the fixed bits per form key, and every disagreement found."""
    forms: dict[str, dict] = {}
    problems: list[str] = []
    for rows in streams(read_corpus(arch)).values():
        encoder = Encoder(arch)
        for row in rows:
            try:
                inst = parse_instruction(row.text)
            except SyntaxProblem as e:
                problems.append(f"{row.reference}: cannot parse '{row.text}': {e}")
                continue
            if inst.opcode not in LAYOUTS:
                continue
            inst = hidden_zero_destination(inst)
            try:
                encoder.observe(inst)
                placed = encoder.place_operands(inst, row.offset)
            except EncodeProblem:
                continue   # a form this assembler does not support: outside the subset
            if row.word & placed.mask & ~CONTROL_MASK != placed.value:
                diff = (row.word & placed.mask) ^ placed.value
                bits = [i for i in range(128) if diff >> i & 1]
                problems.append(f"{row.reference}: '{row.text}': operand fields disagree at bits {bits}")
                continue
            fixed = row.word & ~placed.mask & ~CONTROL_MASK
            key = inst.key()
            if key not in forms:
                forms[key] = {"lo": f"{fixed & (1 << 64) - 1:#018x}", "hi": f"{fixed >> 64:#018x}",
                              "reference": row.reference, "example": row.text}
            else:
                known = int(forms[key]["lo"], 16) | int(forms[key]["hi"], 16) << 64
                if known != fixed:
                    bits = [i for i in range(128) if (known ^ fixed) >> i & 1]
                    problems.append(f"{row.reference}: '{row.text}': fixed bits of {key} differ from "
                                    f"{forms[key]['reference']} at {bits}")
    return forms, problems


def borrow(tables: dict[str, dict]) -> None:
    """Share forms between sm_86 and sm_90 where the evidence says the encoding is shared.

    sm_86 and sm_90 use the same opcodes and fields (sass-facts.md); of the forms ptxas
    produced on both, all but R2UR's have identical fixed bits.  A form seen on one
    architecture only is copied to the other when its opcode has at least one form seen on
    both and every such form agrees, and the opcode is not a memory access (descriptor
    handling differs).  Forms seen only in an sm_90-only file (ONLY_SM90: sm_90a features,
    such as UIADD3.64 beside warpgroup MMA) stay on sm_90.  Copies say where they came from ("borrowed_from"); the round-trip
    tests decode them with the other architecture's nvdisasm like every other form.
    """
    archs = list(tables)
    agree: dict[str, bool] = {}
    for key in set(tables[archs[0]]) & set(tables[archs[1]]):
        opcode = key.split(".")[0].split(" ")[0]
        same = all(tables[a][key]["lo"] == tables[archs[0]][key]["lo"] and
                   tables[a][key]["hi"] == tables[archs[0]][key]["hi"] for a in archs)
        agree[opcode] = agree.get(opcode, True) and same
    for source, dest in ((archs[0], archs[1]), (archs[1], archs[0])):
        for key, entry in list(tables[source].items()):
            opcode = key.split(".")[0].split(" ")[0]
            if key in tables[dest] or "borrowed_from" in entry or not agree.get(opcode, False):
                continue
            if opcode in NOT_BORROWED:
                continue
            if "reference" in entry and only_sm90(entry["reference"].split(":")[0]):
                continue
            tables[dest][key] = dict(entry, borrowed_from=source)


NOT_BORROWED = {"LDG", "STG", "LDS", "STS", "LDC", "ULDC", "BRA", "WARPSYNC"}


def prove_borrowed(arch: str, forms: dict[str, dict]) -> list[str]:
    """Drop each form borrowed onto `arch` that `arch`'s nvdisasm does not decode back to its example
    (the agreement of an opcode's shared forms is evidence, not proof: sm_90's HFMA2.MMA.BF16_V2, copied
    to sm_86, reads there as HFMA2.MMA, probe s37 sassforms3); returns what was dropped and why."""
    from .oracle import disassemble
    keys = sorted(k for k, e in forms.items() if "borrowed_from" in e)
    dropped = []
    for key in keys:
        entry = forms[key]
        encoder = Encoder(arch)
        encoder.forms = {key: encoder_module_form(key, entry)}
        word = encoder.encode(parse_instruction(entry["example"]), 0, 0x7F1)
        done = disassemble(word.to_bytes(16, "little"), TARGETS[arch].nvdisasm_arch)
        got = done.lines[0].text if done.lines and not done.errors else "(refused: " + "; ".join(done.errors)[:80] + ")"
        if got != entry["example"]:
            del forms[key]
            dropped.append(f"{key}: borrowed from {entry['borrowed_from']}, intended '{entry['example']}', "
                           f"nvdisasm reads '{got}'")
    return dropped


def encoder_module_form(key: str, entry: dict):
    from . import encoder as encoder_module
    return encoder_module.Form(key, int(entry["lo"], 16) | int(entry["hi"], 16) << 64, "", entry["example"])


def derive_and_prove(arch: str, forms: dict[str, dict]) -> tuple[dict[str, dict], list[str]]:
    """Forms derived from encoding classes (bobc.sass.derive) that nvdisasm decodes back to
    the intended text; (kept, refused) where refused names each candidate nvdisasm disagreed on."""
    from . import encoder as encoder_module
    from .derive import derive
    from .oracle import disassemble

    def mask_of(key, example):
        return Encoder(arch).place_operands(parse_instruction(example)).mask

    options = derive(forms, mask_of)
    # every option of every form, each its own entry: (key, option number)
    candidates = {(k, i): e for k, es in options.items() for i, e in enumerate(es)}
    words = {}
    for (key, i), entry in candidates.items():
        encoder = Encoder(arch)
        encoder.forms = {key: encoder_module.Form(key, int(entry["lo"], 16) | int(entry["hi"], 16) << 64,
                                                  "", entry["example"])}
        words[(key, i)] = encoder.encode(parse_instruction(entry["example"]), 0, 0x7F1)
    texts: dict = {}

    def decode(keys):
        # one nvdisasm call per batch; a word nvdisasm refuses stops its whole stream, so a
        # batch with errors is decoded again one word per call (in parallel)
        done = disassemble(b"".join(words[k].to_bytes(16, "little") for k in keys), TARGETS[arch].nvdisasm_arch)
        if not done.errors and len(done.lines) == len(keys):
            texts.update({k: d.text for k, d in zip(keys, done.lines)})
        elif len(keys) == 1:
            texts[keys[0]] = "(refused: " + "; ".join(done.errors)[:80] + ")"
        else:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda k: decode([k]), keys))

    decode(sorted(candidates))
    kept, refused = {}, []
    for key in sorted(options):
        tried = []
        for i, entry in enumerate(options[key]):
            want, got = entry["example"], texts[(key, i)]
            if got == want:
                kept[key] = dict(entry, proved="nvdisasm")
                break
            tried.append(f"intended '{want}', nvdisasm reads '{got}'")
        else:
            refused.append(f"{key}: " + "; ".join(tried))
    return kept, refused


def main() -> int:
    status = 0
    tables = {}
    for arch in TARGETS:
        forms, problems = learn(arch)
        for p in problems:
            print(f"{arch}: {p}", file=sys.stderr)
        if problems:
            status = 1
        tables[arch] = forms
    borrow(tables)
    for arch, forms in tables.items():
        for line in prove_borrowed(arch, forms):
            print(f"{arch}: not borrowed: {line}", file=sys.stderr)
    for arch, forms in tables.items():
        derived, refused = derive_and_prove(arch, forms)
        for line in refused:
            print(f"{arch}: not derived: {line}", file=sys.stderr)
        forms.update(derived)
    for arch, forms in tables.items():
        table = {"arch": arch,
                 "how": "learned by bobc.sass.learn from tests/sass/data/corpus-" + arch + ".tsv "
                        "(ptxas output of tools/ptx_corpus); reference = file:kernel:opt:offset; "
                        "borrowed_from = learned on the other architecture (see learn.borrow); "
                        "derived_from/via = derived from its encoding class (bobc.sass.derive), "
                        "proved = decoded by nvdisasm to its example",
                 "forms": dict(sorted(forms.items()))}
        (TABLES / f"{arch}.json").write_text(json.dumps(table, indent=1) + "\n")
        borrowed = sum(1 for f in forms.values() if "borrowed_from" in f)
        derived = sum(1 for f in forms.values() if "derived_from" in f)
        print(f"{arch}: {len(forms)} forms ({len(forms) - borrowed - derived} learned, {borrowed} borrowed, "
              f"{derived} derived)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
