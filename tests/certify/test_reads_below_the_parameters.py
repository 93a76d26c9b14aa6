"""Bank 0 reads below the target's parameter base (probe s31 kernel finding 1).

A kernel built for sm_90 that reads its parameters at sm_86's absolute offsets
(c[0x0][0x170] where sm_90's parameters start at 0x210) read the driver's area, and the
certifier, which took only reads at or past the base for parameter reads, let it through:
the launch read 0 for its count.  Below the base a kernel may read only the words the driver
fills for every launch (kernels.driver_constants: block, grid, the memory windows, the stack
pointer, the memory descriptor, sm_90's cluster words); any other read is refused at its
file:line:column, naming the target's parameter base.
"""
from __future__ import annotations

import pytest

from bobc.certify.kernels import check_code_reads, code_reads, driver_constants, parse_contract
from bobc.nvidia.encode import bank_zero
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90, TARGETS

AXPY = """\
//@ param 0 pointer read 4*lo[2] X
//@ param 1 pointer read-write 4*lo[2] Y
//@ param 2 scalar N, a
.kernel axpy
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R6, c[0x0][SCALAR]
    ISETP.GE.U32.AND P0, PT, R0, R6, PT
    @P0 EXIT
    LDC.64 R2, c[0x0][XWORD]
    LDC.64 R4, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R4, R0, 0x4, R4
    LDG.E R8, [R2.64]
    LDG.E R9, [R4.64]
    FFMA R9, R8, R7, R9
    STG.E [R4.64], R9
    EXIT
"""


def findings(tmp_path, target, scalar="RZ+param+0x10", xword="RZ+param+0x0", extra=""):
    source = tmp_path / "axpy.sass"
    text = AXPY.replace("SCALAR", scalar).replace("XWORD", xword)
    source.write_text(text.replace("    EXIT\n", extra + "    EXIT\n", 1) if extra else text)
    reads, problems = code_reads(source, assemble_kernel(source, target).code, target.parameter_base, target)
    assert problems == []
    return check_code_reads(parse_contract(source, "axpy"), tuple(reads))


def test_sm86s_offset_of_a_scalar_on_sm90_is_refused_at_its_operand_with_sm90s_base(tmp_path):
    (found,) = findings(tmp_path, SM90, scalar="0x170")
    assert found.message.startswith("kernel axpy reads c[0x0][0x170] (LDC.64 R6, c[0x0][0x170] at axpy.sass:7), "
                                    "below sm_90's parameters")
    assert "sm_86's parameters (from c[0x0][0x160]) keep word 2" in found.message
    # (the advice, once at the message's end, is the finding's hint: certleft finding 3)
    assert found.hint.startswith("parameters on sm_90 start at c[0x0][0x210]; write c[0x0][param+N]")
    assert (found.at.path, found.at.line, found.at.column) == (str(tmp_path / "axpy.sass"), 7, 16)


def test_the_same_kernel_written_with_param_builds_on_both_targets(tmp_path):
    for target in (SM86, SM90):
        assert findings(tmp_path, target) == []
    assert findings(tmp_path, SM86, scalar="0x170") == []       # sm_86's own offset of word 2


def test_a_pointer_never_read_names_the_other_targets_base_when_that_is_the_cause(tmp_path):
    """c[0x0][0x160] on sm_90 is the driver's cluster counts (a read ptxas's code makes), so the
    read itself passes; the pointer word it was meant to be then goes unread, and that refusal
    says why."""
    (found,) = findings(tmp_path, SM90, xword="0x160")
    assert found.message.startswith("kernel axpy declares pointer word 0 (X) but its code never reads it; it "
                                    "reads c[0x0][0x160], sm_90's ")
    assert found.message.endswith("where sm_86's parameters (from c[0x0][0x160]) keep word 0")
    assert found.hint.startswith("parameters on sm_90 start at c[0x0][0x210]")


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_the_drivers_own_words_may_be_read(tmp_path, target):
    extra = ("    LDC R10, c[0x0][0x0]\n    LDC.64 R12, c[0x0][0x8]\n    LDC R11, c[0x0][0x10]\n"
             "    LDC R10, c[0x0][0x28]\n    LDC.64 R12, c[0x0][0x18]\n    LDC.64 R12, c[0x0][0x20]\n")
    assert findings(tmp_path, target, extra=extra) == []


def test_a_cluster_word_is_the_drivers_on_sm90_only(tmp_path):
    extra = "    LDC R10, c[0x0][0x144]\n"
    assert findings(tmp_path, SM90, extra=extra) == []
    (found,) = findings(tmp_path, SM86, extra=extra)
    assert "reads c[0x0][0x144]" in found.message and "c[0x0][0x160]; write c[0x0][param+N]" in found.hint


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_an_undocumented_slot_below_the_base_is_refused(tmp_path, target):
    (found,) = findings(tmp_path, target, extra="    LDC R10, c[0x0][0x100]\n")
    assert "reads c[0x0][0x100]" in found.message and "where the driver keeps no word a kernel reads" in found.message


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_table_covers_every_word_a_launch_fills_below_the_parameters(name):
    """driver_constants is the words bobc's launches fill (bank_zero, clustered or not, and the
    memory descriptor the driver owns): every byte bank_zero sets below the base lies in it."""
    target = TARGETS[name]
    covered = driver_constants(target)
    for cluster in ((1, 1, 1), (1, 1, 2)):
        image = bank_zero(target, (4, 6, 2), (128, 3, 5), cluster)
        for offset in range(target.parameter_base):
            if image[offset]:
                assert any(start <= offset < end for start, end, _ in covered), hex(offset)
    assert any(start == target.memory_descriptor for start, _, _ in covered)


@pytest.mark.parametrize("offset", ["0x158", "0x18c", "0x150", "0x154"])
def test_a_cluster_words_unwritten_half_is_refused_on_sm90(tmp_path, offset):
    """probe s31 certholes finding 7: c[0x0][0x158] (the low half of the word whose high half is
    clusters x) and 0x18c (past blocks a cluster) certified, widened to whole 8-byte words, though
    no launch writes them."""
    (found,) = findings(tmp_path, SM90, extra=f"    LDC R10, c[0x0][{offset}]\n")
    assert found.message.startswith(f"kernel axpy reads c[0x0][{offset}] (LDC R10, c[0x0][{offset}] at axpy.sass:")
    assert "where the driver keeps no word a kernel reads" in found.message


def test_a_read_reaching_past_a_cluster_u32_is_refused_and_the_u32s_pass(tmp_path):
    (found,) = findings(tmp_path, SM90, extra="    LDC.64 R10, c[0x0][0x188]\n")
    assert "reads c[0x0][0x188] (LDC.64 R10, c[0x0][0x188]" in found.message
    extra = ("    LDC R10, c[0x0][0x140]\n    LDC.64 R10, c[0x0][0x148]\n    LDC R10, c[0x0][0x15c]\n"
             "    LDC.64 R10, c[0x0][0x160]\n    LDC R10, c[0x0][0x188]\n")
    assert findings(tmp_path, SM90, extra=extra) == []


def _written_below_the_base(target, monkeypatch) -> set[int]:
    """Every byte bank_zero writes below `target`'s parameters, for a launch with and without
    clusters (each struct.pack_into it makes, zero or not)."""
    import struct

    from bobc.nvidia import encode

    written: set[int] = set()

    class Recording:
        calcsize = staticmethod(struct.calcsize)

        @staticmethod
        def pack_into(form, buffer, offset, *values):
            written.update(range(offset, offset + struct.calcsize(form)))
            struct.pack_into(form, buffer, offset, *values)

    monkeypatch.setattr(encode, "struct", Recording)
    for cluster in ((1, 1, 1), (2, 1, 1)):
        bank_zero(target, (4, 6, 2), (128, 3, 5), cluster)
    return {b for b in written if b < target.parameter_base}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_table_is_exactly_what_a_launch_writes_and_the_memory_descriptor(name, monkeypatch):
    """Not one byte more (probe s31 certholes finding 7): the bytes a kernel may read below the
    base are the bytes bank_zero writes there, and the 8 of the memory descriptor the driver writes."""
    target = TARGETS[name]
    table = {b for start, end, _ in driver_constants(target) for b in range(start, end)}
    descriptor = set(range(target.memory_descriptor, target.memory_descriptor + 8))
    assert table == _written_below_the_base(target, monkeypatch) | descriptor


def test_the_doc_lists_the_table():
    """docs/kernel-contracts.md's per-target list of the bytes below the base is driver_constants'."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs/kernel-contracts.md").read_text()
    listed = dict(re.findall(r"^\s*(sm_\d+): (0x[0-9a-f]+\.\.0x[0-9a-f]+(?:, 0x[0-9a-f]+\.\.0x[0-9a-f]+)*)[;.]$",
                             text, re.M))
    assert set(listed) == set(TARGETS)
    for name, ranges in listed.items():
        table = [(start, end - 1) for start, end, _ in driver_constants(TARGETS[name])]
        assert [tuple(int(x, 16) for x in r.split("..")) for r in ranges.split(", ")] == table, name


def test_sm86s_memory_descriptor_on_sm90_names_the_word_and_its_portable_name(tmp_path):
    """probe s31 certholes finding 8: c[0x0][0x118] (sm_86's memory descriptor) read on sm_90 was
    told to write c[0x0][param+N]; the fix is c[0x0][memory_descriptor] (0x208 on sm_90)."""
    source = tmp_path / "axpy.sass"
    (found,) = findings(tmp_path, SM90, extra="    ULDC.64 UR6, c[0x0][0x118]\n")
    assert found.message == (
        "kernel axpy reads c[0x0][0x118] (ULDC.64 UR6, c[0x0][0x118] at axpy.sass:18), below sm_90's parameters, "
        "where the driver keeps no word a kernel reads (there sm_86 keeps the global memory descriptor; sm_90's is "
        "at c[0x0][0x208])")
    assert found.hint == "write c[0x0][memory_descriptor], which the assembler puts where each target keeps it"
    assert (found.at.path, found.at.line) == (str(source), 18)
    (found,) = findings(tmp_path, SM90, extra="    LDC R10, c[0x0][0x11c]\n")    # its high half
    assert found.hint == "write c[0x0][memory_descriptor+0x4], which the assembler puts where each target keeps it"
    # followed, the advice builds on both targets
    assert findings(tmp_path, SM90, extra="    LDC R10, c[0x0][memory_descriptor+0x4]\n") == []
    assert findings(tmp_path, SM86, extra="    LDC R10, c[0x0][memory_descriptor+0x4]\n") == []


def test_sm90s_cluster_word_on_sm86_says_whose_it_is(tmp_path):
    (found,) = findings(tmp_path, SM86, extra="    LDC R10, c[0x0][0x144]\n")
    assert found.message.endswith("where the driver keeps no word a kernel reads (there sm_90 keeps the cluster x, "
                                  "y, z (u32 each), a word sm_86's launches do not fill)")
    assert found.hint.startswith("read it only in a per-target variant for sm_90 (axpy.sm_90.sass); else "
                                 "parameters on sm_86 start at c[0x0][0x160]")
