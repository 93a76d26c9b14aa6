"""(a) Every supported form, both architectures: our words decode (nvdisasm) back to the same text.

(c) Property tests: random registers, predicates, immediates and constant-bank
offsets substituted into every form; each word must decode to exactly the
operands given.  One nvdisasm call per batch, never one per instruction.
"""
from __future__ import annotations

import math
import struct
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from bobc.sass.tables.layouts import (DISPLAY_ALIASES, HIDDEN_ZERO_DESTINATION, REUSE_FORBIDDEN, REUSE_OPCODES,
                                      REUSE_TARGETS, guard_bank)
from bobc.sass.encoder import Encoder, forms_for, match_layout
from bobc.sass import assemble
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import Const, Imm, Label, Reg, parse_instruction
from bobc.targets import TARGETS

ARCHS = ["sm_86", "sm_90"]


def _stream(arch, instructions):
    encoder = Encoder(arch)
    code = bytearray()
    for pc, inst in enumerate(instructions):
        code += encoder.encode(inst, 16 * pc, 0x7F1).to_bytes(16, "little")   # S01, no barriers
    return bytes(code)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_form_round_trips(arch, needs_nvdisasm):
    forms = forms_for(arch)
    assert len(forms) > 150
    examples = [f.example for f in forms.values()]
    code = _stream(arch, [parse_instruction(t) for t in examples])
    decoded = disassemble(code, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    assert len(decoded.lines) == len(examples)
    different = [(want, got.text) for want, got in zip(examples, decoded.lines) if want != got.text]
    assert different == []


# -- (c) properties -----------------------------------------------------------

def _finite_float_bits():
    return st.floats(width=32, allow_nan=False, allow_infinity=False).map(
        lambda f: struct.unpack("<I", struct.pack("<f", f))[0])


@st.composite
def _variant(draw, arch):
    """A form of `arch` with its operands replaced by random values of the same kind."""
    forms = sorted(forms_for(arch).values(), key=lambda f: f.key)
    form = draw(st.sampled_from(forms))
    inst = parse_instruction(form.example)
    if inst.mnemonic.startswith(DISPLAY_ALIASES):
        return inst
    if inst.opcode in HIDDEN_ZERO_DESTINATION and isinstance(inst.operands[0], Reg) and inst.operands[0].bank in ("P", "UP"):
        # nvdisasm's text without the zero destination (VOTE.ALL P0, P0): no layout slot names its
        # operands, so it is given as the example reads, as a display alias is
        return inst
    slots = dict((id(op), name) for name, op in match_layout(inst))
    wide = any(m in inst.modifiers for m in ("64", "128", "WIDE", "F64"))
    operands = []
    for op in inst.operands:
        slot = slots[id(op)]
        if isinstance(op, Reg) and op.bank == "R":
            # register tuples are aligned: memory accesses, binary64 pairs, tensor-core fragments
            step = 4 if wide or inst.opcode in ("LDG", "STG", "LDS", "STS", "LDC", "CS2R", "LDL", "STL", "LD",
                                                "LDSM", "HMMA", "DADD", "DMUL", "DFMA", "DSETP", "ATOMG",
                                                "ATOMS", "RED", "REDG", "LDGSTS") else 1
            index = draw(st.integers(0, 248 // step)) * step
            if op.index == 255 and draw(st.booleans()):
                index = 255
            op = replace(op, index=index)
            if (slot in ("Ra", "Sb", "Sc") and index != 255 and inst.opcode in REUSE_OPCODES
                    and arch in REUSE_TARGETS.get(inst.opcode, {arch})
                    and not any(inst.opcode == name and variant in inst.modifiers and slot in forbidden
                                for (name, variant), forbidden in REUSE_FORBIDDEN.items())):
                op = replace(op, reuse=draw(st.booleans()))
            if slot == "Ra" and inst.opcode in ("FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL"):
                op = replace(op, neg=draw(st.booleans()), abs=draw(st.booleans()))
        elif isinstance(op, Reg) and op.bank == "P":
            # PT stays PT: nvdisasm leaves some PT operands out of the text
            index = 7 if op.index == 7 else draw(st.integers(0, 6))
            neg = op.neg or (slot in ("Pp", "Pq") and draw(st.booleans()))
            op = replace(op, index=index, neg=neg if slot in ("Pp", "Pq") else False)
        elif isinstance(op, Imm) and slot in ("Sb", "Sc") and op.is_float and inst.opcode in (
                "FADD", "FMUL", "FFMA"):
            op = Imm(draw(_finite_float_bits()), True, "")
        elif isinstance(op, Imm) and slot in ("Sb", "Sc") and inst.opcode in ("IADD3", "LOP3", "ISETP", "MOV"):
            op = Imm(draw(st.integers(0, 0xFFFFFFFF)), False, "")
        elif isinstance(op, Const) and op.index is None and inst.opcode not in ("ULDC",):
            # an LDC.64 reads an aligned pair: its offset is a multiple of 8 (the assembler refuses
            # another, as the hardware needs)
            align = 8 if inst.opcode == "LDC" and "64" in inst.modifiers else 4
            op = replace(op, offset=draw(st.integers(0, 0x7FFF // align)) * align, bank=draw(st.integers(0, 3)))
        operands.append(op)
    guard = inst.guard
    if inst.opcode not in ("BRA", "EXIT") and draw(st.booleans()):
        guard = Reg(guard_bank(inst.mnemonic), draw(st.integers(0, 6)), neg=draw(st.booleans()))
    return replace(inst, operands=operands, guard=guard)


def _plain(c: Const) -> Const:
    if c.index is not None and c.index.index == 255:
        return replace(c, index=None)
    return c


def _same_operands(a, b) -> bool:
    if a.mnemonic != b.mnemonic or len(a.operands) != len(b.operands):
        return False
    if (a.guard is None) != (b.guard is None) or (a.guard and (a.guard.bank, a.guard.index, a.guard.neg)
                                                  != (b.guard.bank, b.guard.index, b.guard.neg)):
        return False
    for x, y in zip(a.operands, b.operands):
        if isinstance(x, Imm) and isinstance(y, Imm):
            if x.is_float or y.is_float:
                fx = struct.unpack("<f", struct.pack("<I", x.value & 0xFFFFFFFF))[0] if x.is_float else float(x.value)
                fy = struct.unpack("<f", struct.pack("<I", y.value & 0xFFFFFFFF))[0] if y.is_float else float(y.value)
                if not (fx == fy or (math.isnan(fx) and math.isnan(fy))):
                    return False
            elif (x.value - y.value) % (1 << 32):
                return False
        elif isinstance(x, Const) and isinstance(y, Const):
            # c[b][RZ+n] and c[b][n] are one operand: nvdisasm prints c[0x0][RZ] for offset 0
            if _plain(x) != _plain(y):
                return False
        elif isinstance(x, Label) and isinstance(y, Label):
            if x.address != y.address:
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("arch", ARCHS)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])   # no shrinking: batches are long
@given(data=st.data())
def test_random_operands_decode_as_given(arch, data, needs_nvdisasm):
    cases = data.draw(st.lists(_variant(arch), min_size=300, max_size=300))
    code = _stream(arch, cases)
    decoded = disassemble(code, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    wrong = []
    for pc, (inst, got) in enumerate(zip(cases, decoded.lines)):
        back = parse_instruction(got.text)
        if not _same_operands(inst, back):
            wrong.append(f"{pc * 16:#06x}: gave {inst.mnemonic} {inst.operands} guard={inst.guard}\n      got {got.text}")
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize("arch", ARCHS)
def test_modifiers_on_uniform_operands_reach_nvdisasm(arch, needs_nvdisasm):
    """'-' on a uniform-register operand is encoded, never dropped (a FADD R, R, -UR once
    assembled as an addition and gave Bob's target gradients the wrong sign)."""
    texts = ["FADD R26, R26, -UR16", "FFMA R1, R2, -UR4, R3", "FADD R5, -R6, UR7", "FFMA R1, R2, UR4, -R3"]
    source = ".kernel k\n" + "".join(f"    {t}\n" for t in texts) + "    EXIT\n"
    code = assemble(source, arch).code
    decoded = disassemble(code, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    for text, got in zip(texts, decoded.lines):
        assert got.text.rstrip(" ;") == text


@pytest.mark.parametrize("arch", ARCHS)
def test_reuse_nvdisasm_rejects_is_refused(arch, needs_nvdisasm):
    """HADD2.F32 with the A operand's reuse bit (122) set is no instruction to nvdisasm
    (an undefined opex value), while B's (124) is: the assembler refuses A's by name."""
    from bobc.errors import BobcError
    plain = assemble(".kernel k\n    HADD2.F32 R8, R2, R3\n    EXIT\n", arch).code
    word = int.from_bytes(plain[:16], "little")
    with_a = (word | 1 << 122).to_bytes(16, "little") + plain[16:]
    assert disassemble(with_a, TARGETS[arch].nvdisasm_arch).errors
    with_b = assemble(".kernel k\n    HADD2.F32 R8, R2, R3.reuse\n    EXIT\n", arch).code
    decoded = disassemble(with_b, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == [] and decoded.lines[0].text.rstrip(" ;") == "HADD2.F32 R8, R2, R3.reuse"
    with pytest.raises(BobcError, match="reuse"):
        assemble(".kernel k\n    HADD2.F32 R8, R2.reuse, R3\n    EXIT\n", arch)
