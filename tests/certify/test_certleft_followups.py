"""Session 31's certifier rules, their open ends (fix-certleft):

1. the unset-scalar rule read the contract's SOURCE-text reads (c[0x0][param+N]), so a word
   read partly at an absolute offset (sm_86's c[0x0][0x174]) counted as set by a fill of its
   other half; kernel_contracts now hands check_pointers the assembled code's reads;
2. a kernel built for sm_86 reading at sm_90's offsets (its parameter base c[0x0][0x210], its
   memory descriptor c[0x0][0x208]) was refused only as an undeclared word: the refusal now
   says whose word it is and what to write;
3. a "not certified" error had no hint line: a Finding carries its advice as a hint, and the
   error prints one;
4. a fault of pointers.py / kernels.py printed a huge number whole: past 40 digits it is cut,
   by certify/limits.py's shown()/shown_hex().
"""
from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))

from bobc.certify import CertificationError, kernel_contracts  # noqa: E402
from bobc.certify.findings import Finding  # noqa: E402
from bobc.certify.kernels import parse_contract  # noqa: E402
from bobc.certify.pointers import check_pointers  # noqa: E402
from bobc.errors import Span  # noqa: E402
from bobc.targets import SM86, SM90  # noqa: E402
from test_reads_below_the_parameters import findings as read_findings  # noqa: E402
from test_unset_scalars import ARENA, BASE, filled, hand_plan, pair  # noqa: E402

# word 2 read as two halves: the low one as param+0x10, the high one at sm_86's absolute 0x174
HALVES = """\
//@ param 0 pointer read-write 4*lo[1] Y
//@ param 1 scalar N, a
//@ param 2 scalar b (binary32 pair)
.kernel axpy
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC R6, c[0x0][RZ+param+0x8]
    LDC R7, c[0x0][RZ+param+0x10]
    LDC R8, c[0x0][0x174]
    FADD R7, R7, R8
    STG.E [R2.64], R7
    EXIT
"""


def assembled_contract(tmp_path, monkeypatch, text=HALVES):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "axpy.sass").write_text(text)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    contracts, faults = kernel_contracts(plan, SM86, folders=[tmp_path])
    assert faults == []
    return plan, contracts


def test_a_half_read_at_an_absolute_sm86_offset_counts_for_the_unset_scalar_rule(tmp_path, monkeypatch):
    """A fill of word 2's low half only: its code reads the high half at c[0x0][0x174] (sm_86's
    absolute offset of bytes 4..7), which the source text's param+N reads did not show."""
    plan, contracts = assembled_contract(tmp_path, monkeypatch)
    assert contracts["axpy"].assembled
    (found,) = check_pointers(filled(plan, 16), contracts)
    assert found.message.startswith("launch 0 (axpy) sets only part of argument 2 (word 46, b (binary32 pair); "
                                    "axpy.sass:3)")
    assert ("host fill 0 writes its bytes 0..3, but its code reads bytes 0..7 (LDC R7, c[0x0][RZ+param+0x10] at "
            "axpy.sass:9; LDC R8, c[0x0][0x174] at axpy.sass:10): the kernel would read 0 in its bytes 4..7"
            ) == found.message.split("a scalar of axpy's contract: ")[1]
    assert check_pointers(filled(plan, 16, 20), contracts) == []         # both halves set


def test_a_scalar_read_only_at_an_absolute_offset_and_never_set_is_refused(tmp_path, monkeypatch):
    plan, contracts = assembled_contract(tmp_path, monkeypatch,
                                         HALVES.replace("c[0x0][RZ+param+0x10]", "c[0x0][0x170]"))
    (found,) = check_pointers(plan, contracts)
    assert "never sets argument 2 (word 46" in found.message and "the kernel would read 0" in found.message
    # its low half filled, the code's absolute reads of both halves want the high one too
    (found,) = check_pointers(filled(plan, 16), contracts)
    assert "its code reads bytes 0..7 (LDC R7, c[0x0][0x170] at axpy.sass:9; LDC R8, c[0x0][0x174]" in found.message


def test_sm90s_parameter_base_read_on_sm86_names_sm90(tmp_path):
    (found,) = read_findings(tmp_path, SM86, extra="    LDC R10, c[0x0][0x210]\n")
    assert found.message == (
        "kernel axpy reads parameter word 22 (LDC R10, c[0x0][0x210] at axpy.sass:18), but its contract does not "
        "declare it, and c[0x0][0x210] is another target's word (there sm_90 keeps its parameter word 0: its "
        "parameters start at c[0x0][0x210])")
    assert found.hint == ("parameters on sm_86 start at c[0x0][0x160]; write c[0x0][param+N] (N: 8 x the word, the "
                          "assembler adds the target's base)")
    # sm_90's offset of a word the contract declares (word 1, c[0x0][0x218])
    (found,) = read_findings(tmp_path, SM86, extra="    LDC R10, c[0x0][0x218]\n")
    assert "(there sm_90 keeps its parameter word 1: its parameters start at c[0x0][0x210])" in found.message


def test_sm90s_memory_descriptor_read_on_sm86_names_it_and_its_portable_name(tmp_path):
    (found,) = read_findings(tmp_path, SM86, extra="    ULDC.64 UR6, c[0x0][0x208]\n")
    assert found.message == (
        "kernel axpy reads parameter word 21 (ULDC.64 UR6, c[0x0][0x208] at axpy.sass:18), but its contract does "
        "not declare it, and c[0x0][0x208] is another target's word (there sm_90 keeps the global memory "
        "descriptor; sm_86's is at c[0x0][0x118])")
    assert found.hint == "write c[0x0][memory_descriptor], which the assembler puts where each target keeps it"


def test_an_undeclared_word_at_a_targets_own_offset_gets_no_other_target_cause(tmp_path):
    """On sm_90 every offset past its base lies in sm_86's parameters too: no cause is made up
    there, nor for an undeclared sm_86 word that is none of sm_90's declared words."""
    for target, offset in ((SM90, "0x260"), (SM86, "0x260"), (SM86, "0x1a0")):
        (found,) = read_findings(tmp_path, target, extra=f"    LDC R10, c[0x0][{offset}]\n")
        assert found.message.endswith("but its contract does not declare it") and found.hint is None, found


AT = Span("Plan.bob", 12, 5)


def test_a_certification_error_prints_a_shared_hint_once():
    faults = [Finding("contract", "one", AT, "do this"), Finding("contract", "two", None, "do this")]
    rendered = CertificationError(faults).render()
    assert rendered.splitlines()[-1] == "hint: do this"
    assert rendered.count("do this") == 1 and "  - Plan.bob:12:5: one\n" in rendered + "\n"


def test_a_certification_error_prints_the_first_hint_and_keeps_the_others_on_their_lines():
    faults = [Finding("plan", "no advice"), Finding("contract", "one", AT, "do this"),
              Finding("contract", "two", None, "do that")]
    error = CertificationError(faults)
    assert error.hint == "for the fault at Plan.bob:12:5: do this"
    assert "  - Plan.bob:12:5: one\n" in error.message and error.message.endswith("  - two; do that")
    assert CertificationError([Finding("plan", "no advice")]).hint is None


def test_the_unset_scalar_advice_is_the_errors_hint(tmp_path):
    """Two launches of one kernel that leave its scalar unset: one fault line each (merged into one
    when alike), the advice once, as the error's hint."""
    contract = parse_contract(_written(tmp_path, "//@ param 0 pointer read-write 4*lo[1] Y\n"
                                                 "//@ param 1 scalar N, a\n//@ param 2 scalar b\n"), "axpy")
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)}), ("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    error = CertificationError(check_pointers(plan, {"axpy": contract}))
    assert error.hint == "patch it (with 0 where 0 is meant), or declare a word the code does not read unused in " \
                         "axpy.sass"
    assert "hint: patch it" in error.render() and "patch it" not in error.message


def _written(tmp_path, text: str) -> Path:
    source = tmp_path / "axpy.sass"
    source.write_text(text)
    return source


HUGE = (1 << 64) - 1


def test_a_huge_extent_is_shown_cut(tmp_path):
    contract = parse_contract(_written(tmp_path, "//@ param 0 pointer read word[1]*word[1]*word[1] X\n"
                                                 "//@ param 1 scalar n\n"), "axpy")
    plan = hand_plan([("axpy", {0: BASE, 1: HUGE})], ARENA, ["axpy"])
    (found,) = check_pointers(plan, {"axpy": contract})
    assert len(found.message) < 400, found.message
    assert "...(58 digits)" in found.message and "hex digits)" in found.message


def test_a_huge_batch_count_is_shown_cut(tmp_path):
    contract = parse_contract(_written(tmp_path, "//@ param 0 pointer read 4 each word[1]*word[1]*word[1] by 4 X\n"
                                                 "//@ param 1 scalar n\n"), "axpy")
    plan = hand_plan([("axpy", {0: BASE, 1: HUGE})], ARENA, ["axpy"])
    (found,) = check_pointers(plan, {"axpy": contract})
    assert f"= {str(HUGE ** 3)[:20]}...(58 digits) passes the certifier's limit of 65536" in found.message
