"""A scalar word a kernel's contract declares (its code reads it) that a launch never sets
(probe s31 kernel finding 2): the kernel read 0 and the build passed, where an unpatched
pointer is refused.  Now it is refused at the launch, naming the word and the kernel; a word
patched with 0, or whose every byte the code reads a host fill writes each step, is set (a fill of
the other half of a lo/hi pair is not: probe s31 certholes finding 6)."""
from __future__ import annotations

import dataclasses

import pytest

from bobc.certify.kernels import parse_contract
from bobc.certify.pointers import check_pointers
from bobc.errors import Span
from bobc.plan.host import Fill
from bobc.plan.model import DeviceArena, Launch, ParameterPatch, Plan, Region, Resident, WholeProgramPlan
from bobc.targets import SM86

FIRST = SM86.parameter_base // 8          # word 0 of the parameters in bank 0
BASE = 0x10_0000_0000


def contract_of(tmp_path, name: str, lines: str):
    source = tmp_path / f"{name}.sass"
    source.write_text(lines)
    return parse_contract(source, name)


def hand_plan(launches, residents, kernels) -> Plan:
    """(as tests/certify/test_conditional_extents.py's) a plan of `launches` ((kernel, {argument: value}), ...)
    over `residents` ((name, address, size), ...), one window around all of them."""
    regions = tuple(Region(kernel, b"", 32, 32, 0, 0) for kernel in kernels)
    planned = tuple(Launch(kernel, kernels.index(kernel), 0, (1, 1, 1), (32, 1, 1), 0x100,
                           tuple(ParameterPatch(FIRST + i, v) for i, v in sorted(words.items())))
                    for kernel, words in launches)
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, regions, planned, len(planned),
                               0, (), 0, 0)
    held = tuple(Resident(name, address, size, 1) for name, address, size in residents)
    low, high = min(r.address for r in held), max(r.address + r.size for r in held)
    return Plan(program, DeviceArena((Resident("window", low, high - low, 1),), held, ()))


def pair(low: int, high: int) -> int:
    return low | high << 32

CONTRACT = ("//@ param 0 pointer read-write 4*lo[1] Y\n"
            "//@ param 1 scalar N, a\n"
            "//@ param 2 scalar b (binary32, lo)\n")
ARENA = [("y", BASE, 0x100)]


def test_a_declared_scalar_the_launch_never_sets_is_refused_at_the_launch(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    at = Span("Plan.bob", 12, 5)
    launch = dataclasses.replace(plan.program.launches[0], at=at)
    plan = dataclasses.replace(plan, program=dataclasses.replace(plan.program, launches=(launch,)))
    (found,) = check_pointers(plan, {"axpy": contract})
    assert found.at == at
    assert found.message.startswith("launch 0 (axpy) never sets argument 2 (word 46, b (binary32, lo); axpy.sass:3), "
                                    "which axpy's contract declares a scalar its code reads: the kernel would read 0")


def filled(plan, *offsets):
    """`plan` with a binary32 host fill of launch 0 at each byte offset of its parameters."""
    host = type("Host", (), {"fills": tuple(Fill(0, offset, 0, "binary32", 0) for offset in offsets)})()
    return dataclasses.replace(plan, host=host)


def test_a_scalar_patched_with_zero_or_filled_by_the_host_is_set(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    assert check_pointers(hand_plan([("axpy", {0: BASE, 1: pair(16, 0), 2: 0})], ARENA, ["axpy"]),
                          {"axpy": contract}) == []
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    assert check_pointers(filled(plan, 16, 20), {"axpy": contract}) == []       # both halves of word 2


# word 2 read as one 8-byte word (a lo/hi pair), or only its high half
READS_PAIR = CONTRACT + "    LDC.64 R2, c[0x0][param+0x10]\n"
READS_HIGH = CONTRACT + "    LDC R2, c[0x0][param+0x14]\n"


def test_a_fill_of_half_a_word_the_code_reads_whole_is_refused(tmp_path):
    """probe s31 certholes finding 6: a host fill of word 2's high half (byte 20) counted as setting
    the word, while the kernel reads its low half too, as 0."""
    contract = contract_of(tmp_path, "axpy", READS_PAIR)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    (found,) = check_pointers(filled(plan, 20), {"axpy": contract})
    assert found.message == (
        "launch 0 (axpy) sets only part of argument 2 (word 46, b (binary32, lo); axpy.sass:3), a scalar of axpy's "
        "contract: host fill 0 writes its bytes 4..7, but its code reads bytes 0..7 (LDC.64 R2, "
        "c[0x0][param+0x10] at axpy.sass:4): the kernel would read 0 in its bytes 0..3")
    # (the advice, once at the message's end, is the finding's hint: certleft finding 3)
    assert found.hint == "patch the word, or fill every byte the code reads of it"
    (found,) = check_pointers(filled(plan, 16), {"axpy": contract})
    assert "host fill 0 writes its bytes 0..3" in found.message and "read 0 in its bytes 4..7" in found.message
    assert check_pointers(filled(plan, 20, 16), {"axpy": contract}) == []


def test_a_fill_of_the_half_the_code_reads_sets_the_word(tmp_path):
    contract = contract_of(tmp_path, "axpy", READS_HIGH)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    assert check_pointers(filled(plan, 20), {"axpy": contract}) == []
    (found,) = check_pointers(filled(plan, 16), {"axpy": contract})     # the half the code does not read
    assert ("host fill 0 writes its bytes 0..3, but its code reads bytes 4..7 (LDC R2, c[0x0][param+0x14] at "
            "axpy.sass:4): the kernel would read 0 in its bytes 4..7") in found.message


def test_a_word_whose_reads_are_not_known_is_set_only_whole(tmp_path):
    """A contract with no `param+N` read of the word (its code reads it at an absolute offset, or the
    contract carries no code): only a fill of all eight bytes (or a patch) sets it."""
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    (found,) = check_pointers(filled(plan, 20), {"axpy": contract})
    assert ("host fill 0 writes its bytes 4..7, but its code's reads of it are not known from its source's "
            "c[0x0][param+N] operands, so all 8 bytes count: the kernel would read 0 in its bytes 0..3"
            ) in found.message


@pytest.mark.parametrize("type_error", [False, True], ids=["typed", "with-a-type-error"])
def test_the_linear_regression_plan_with_half_its_scalar_filled_is_refused(tmp_path, type_error):
    """The probe's plan: LinReg with launch 0's patch of word 6 (2/N lo, 1/N hi) removed and a binary32
    fill of its high half (byte 52): `bobc check` certified it, and the kernel read 2/N = 0."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    shutil.copytree(repo / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    no6 = ("def lrLossGradLaunchNo6 =\n"
           "  (lambda unrestricted lossAddress : Nat .\n"
           "    (lrLaunch b\"linreg-loss-grad\" lrLossGradPlace\n"
           "      (lrPatch 0 lrParametersAddress (lrPatch 1 lrFeaturesAddress (lrPatch 2 lrTargetsAddress\n"
           "        (lrPatch 3 lrGradientAddress (lrPatch 4 lossAddress (lrPatch 5 lrCounts lrNoPatches))))))))\n")
    forward = "(lrThen (lrLossGradLaunch lrInitialLossAddress) lrPredictLaunch)"
    fills = "(constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
    assert text.count(forward) == 1 and text.count(fills) == 1
    fill = ("(constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            "      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 52 0 (constructor NvidiaPlanHostEncoding "
            "NvidiaPlanHostEncodeBinary32)\n"
            "        (constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant (constructor NvidiaPlanHostConstant "
            "NvidiaPlanHostFloat32 0x3f800000)))\n"
            "      " + fills + ")")
    text = text.replace(forward, "(lrThen (lrLossGradLaunchNo6 lrInitialLossAddress) lrPredictLaunch)")
    text = text.replace("def lrForwardSchedule", no6 + "def lrForwardSchedule").replace(fills, fill)
    if type_error:      # a definition that does not type check beside the certifier's fault
        text += 'def brokenThing : Nat = b"x"\n'
    plan.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(repo / "compiler"), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if type_error:
        # a plan that does not type check is refused by its type error, whole, at its place; the
        # certifier does not run on it (probe s33 fuzzplan finding 1)
        assert done.stderr.startswith("bobc check: LinReg/Build/NativeHost.bob:"), done.stderr
        assert "in brokenThing: type mismatch: this expression should have type\n    Nat\n  but has type\n    Bytes" \
            in done.stderr
        assert "sets only part of argument" not in done.stderr
        return
    assert ("launch 0 (linreg-loss-grad) sets only part of argument 6 (word 50, 2/N, 1/N (binary32 each); "
            "linreg-loss-grad.sass:17)") in done.stderr
    assert "host fill 0 writes its bytes 4..7, but its code reads bytes 0..7 (LDC.64 R22, " in done.stderr
    assert "Traceback" not in done.stderr
    hint = [line for line in done.stderr.splitlines() if line.startswith("hint: ")]
    # the certifier's advice stays, and a type error found too is added to it, not put in its place
    assert len(hint) == 1 and hint[0].startswith("hint: patch the word, or fill every byte the code reads of it")
    assert ("; the type check fails too: " in hint[0] and "in brokenThing: type mismatch" in hint[0]) == type_error


def test_a_word_an_extent_names_is_refused_once(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    (found,) = check_pointers(hand_plan([("axpy", {0: BASE, 2: 0})], ARENA, ["axpy"]), {"axpy": contract})
    assert "names parameter word 1, which the launch does not set" in found.message
