"""The assembler's per-instruction lookups, made once (probe s42 buildspeed finding 1): an assembly
split each instruction's mnemonic at every question about its opcode or modifiers (900,000 splits
for the 67 kernel sources of examples/ and specs/, both targets) and scanned whole tables keyed by
(opcode, variant) for every source operand.  These tests count the work and check the answers
against their own definitions (str.split; a scan of the table's rows), never the time."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.sass import encoder, syntax
from bobc.sass.syntax import Instruction, mnemonic_parts
from bobc.sass.tables import layouts as L

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mnemonic", ["IMAD.WIDE.U32", "NOP", "HADD2.F32", "LDG.E.128.CONSTANT", "A..B", ".X", ""])
def test_opcode_and_modifiers_are_the_mnemonic_split_at_dots(mnemonic):
    """The independent reading: str.split at '.', the first piece the opcode, the rest the
    modifiers; asked twice (the second from the memo) the same answer, and each `modifiers` a
    list of the caller's own (changing it changes nothing the next caller sees)."""
    pieces = mnemonic.split(".")
    for _ in range(2):
        inst = Instruction(mnemonic, [])
        assert inst.opcode == pieces[0]
        assert inst.modifiers == pieces[1:]
        assert mnemonic_parts(mnemonic) == (pieces[0], tuple(pieces[1:]))
    mine = Instruction(mnemonic, []).modifiers
    mine.append("CHANGED")
    assert Instruction(mnemonic, []).modifiers == pieces[1:]


def test_a_mnemonic_is_split_once_however_often_it_is_asked(monkeypatch):
    """The opcode and modifiers come from the memo once a mnemonic has been split: a value planted
    in the memo is what an instruction of that mnemonic answers (no split of its text)."""
    monkeypatch.setitem(syntax._MNEMONIC_PARTS, "PLANTED.X", ("FROM_MEMO", ("Y", "Z")))
    inst = Instruction("PLANTED.X", [])
    assert inst.opcode == "FROM_MEMO"
    assert inst.modifiers == ["Y", "Z"]


def test_the_memo_stays_bounded(monkeypatch):
    """A text of more distinct mnemonics than the memo keeps (a fuzzed source) starts it again
    rather than growing without end; the answers stay those of the split."""
    monkeypatch.setattr(syntax, "_MNEMONIC_PARTS", {})
    for k in range(syntax._MNEMONIC_PARTS_KEPT + 10):
        assert mnemonic_parts(f"OP{k}.M{k}") == (f"OP{k}", (f"M{k}",))
    assert len(syntax._MNEMONIC_PARTS) <= syntax._MNEMONIC_PARTS_KEPT


def test_assembling_a_kernel_splits_each_mnemonic_once(monkeypatch):
    """One kernel source of the plans (Bob's AdamW), assembled for sm_90: the mnemonics split are
    the source's distinct ones (and the launch prologue's), each once, where every operand
    placed, every table asked and the scheduler split them again before."""
    from bobc.sass.assembler import assemble_kernel
    from bobc.sass.source import read_source
    from bobc.targets import target_named

    splits = []

    def counting(mnemonic):
        if mnemonic not in syntax._MNEMONIC_PARTS:
            splits.append(mnemonic)
        return real_parts(mnemonic)

    real_parts = syntax.mnemonic_parts
    monkeypatch.setattr(syntax, "_MNEMONIC_PARTS", {})
    monkeypatch.setattr(syntax, "mnemonic_parts", counting)
    monkeypatch.setattr(encoder, "mnemonic_parts", counting)
    syntax._parsed_source.cache_clear()
    source = REPO / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-adamw.sass"
    assert source.is_file(), source
    assembled = assemble_kernel(source, target_named("sm_90"), launched=True)
    written = {line.instruction.mnemonic for line in syntax.parse_source(read_source(source), str(source))
               if line.instruction is not None}
    assert len(assembled.instructions) > len(written)      # instructions sharing mnemonics
    assert len(splits) == len(set(splits)), "a mnemonic split twice"
    assert written <= set(splits) | set(syntax._MNEMONIC_PARTS)


def _scanned(table: dict, opcode: str, modifiers: tuple) -> list:
    """The rows of an (opcode, variant)-keyed table an instruction selects, read as the encoder
    read them before: a scan of every row."""
    return [value for (op, variant), value in table.items() if op == opcode and variant in modifiers]


@pytest.mark.parametrize("table, index", [(L.OPERAND_MODIFIER_VARIANTS, encoder._MODIFIER_VARIANTS),
                                          (L.SWIZZLE_FIELD_ABSENT, encoder._SWIZZLE_ABSENT)])
def test_the_tables_by_opcode_select_the_rows_a_scan_selects(table, index):
    """For every opcode the assembler knows and every modifier it writes (and none), the rows the
    per-opcode index gives are those a scan of the whole table gives, in the table's order."""
    modifiers = sorted({variant for _, variant in table} | {"F32", "MMA", "X", "16816", "WIDE"})
    for opcode in sorted(set(L.LAYOUTS) | {op for op, _ in table}):
        for chosen in [(), *((m,) for m in modifiers)]:
            by_index = [value for variant, value in index.get(opcode, ()) if variant in chosen]
            assert by_index == _scanned(table, opcode, chosen), (opcode, chosen)
