"""A guard predicate is of the bank its opcode implies (tables.layouts.guard_bank): the guard
field holds an index only, so `@UP0 MOV` encoded as `@P0 MOV` and `@P0 UMOV` as `@UP0 UMOV`
(probe-sass finding 2).  The other bank is refused; the table is checked against nvdisasm on
every learned form of both targets."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.encoder import Encoder, forms_for
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import Label, Reg, parse_instruction
from bobc.sass.tables.layouts import guard_bank
from bobc.targets import TARGETS


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_every_forms_guard_bank_is_nvdisasms(arch, needs_nvdisasm):
    encoder = Encoder(arch)
    words, expected = [], []
    for key, form in sorted(forms_for(arch).items()):
        inst = parse_instruction(form.example)
        inst.operands = [Label(op.name, 0) if isinstance(op, Label) and op.address is None else op
                         for op in inst.operands]
        inst.guard = Reg(guard_bank(inst.mnemonic), 3)
        placed = encoder.place_operands(encoder.normalize(inst), 0)
        words.append(form.fixed | placed.value | (0x7F1 << 105))   # stall 1, no scoreboards
        expected.append((key, guard_bank(inst.mnemonic)))
    decoded = disassemble(b"".join(w.to_bytes(16, "little") for w in words), TARGETS[arch].nvdisasm_arch)
    assert len(decoded.lines) == len(words)
    wrong = [f"{key}: table says @{bank}3, nvdisasm prints {line.text}"
             for (key, bank), line in zip(expected, decoded.lines)
             if not line.text.startswith(f"@{bank}3 ")]
    assert not wrong, "\n".join(wrong)
    assert {bank for _, bank in expected} == {"P", "UP"}


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("text,wanted", [
    ("@UP0 MOV R0, R1", "MOV is guarded by a predicate (@P0..@P6, @PT), not @UP0"),
    ("@!UP2 IADD3 R0, R1, R2, RZ", "IADD3 is guarded by a predicate (@P0..@P6, @PT), not @!UP2"),
    ("@P0 UMOV UR4, UR5", "UMOV is guarded by a uniform predicate (@UP0..@UP6, @UPT), not @P0"),
    ("@!P1 UIADD3 UR4, UR5, 0x10, URZ", "UIADD3 is guarded by a uniform predicate (@UP0..@UP6, @UPT), not @!P1"),
])
def test_a_guard_of_the_other_bank_is_refused(arch, text, wanted):
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n{text}\nEXIT\n", arch, source_name="k.sass")
    assert wanted in info.value.message
    assert (info.value.span.line, info.value.span.column) == (2, 1)
    # what to do instead (probe s45 hazards4): a vector guard from a vector compare, a uniform one from UISETP
    assert info.value.hint.startswith("compute the condition into a predicate (P0..P6)" if "UP" in text.split()[0]
                                      else "compute the condition into a uniform predicate (UP0..UP6)")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_branch_on_a_uniform_predicate_says_to_compute_a_predicate(arch):
    """No branch takes a uniform guard (ptxas 13 copies a uniform condition to P0 with PLOP3 before `@P0 BRA`:
    docs/simulator.md, the control-code checker); the advice, followed with ISETP on the uniform register, assembles."""
    with pytest.raises(BobcError) as info:
        assemble("UISETP.GT.AND UP1, UPT, UR4, URZ, UPT\n@UP1 BRA `(L)\nL:\nEXIT\n", arch)
    assert "BRA is guarded by a predicate (@P0..@P6, @PT), not @UP1" in info.value.message
    assert "a vector compare (ISETP, FSETP) takes uniform registers as operands" in info.value.hint
    assemble("ISETP.GT.AND P1, PT, RZ, UR4, PT\n@P1 BRA `(L)\nL:\nEXIT\n", arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_guards_of_the_right_bank_assemble(arch, needs_nvdisasm):
    a = assemble("@P0 MOV R0, R1\n@!UP1 UMOV UR4, UR5\nEXIT\n", arch)
    text = [line.text for line in disassemble(a.code, TARGETS[arch].nvdisasm_arch).lines]
    assert text[:2] == ["@P0 MOV R0, R1", "@!UP1 UMOV UR4, UR5"]
