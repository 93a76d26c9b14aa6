"""Broken variants of the real Bob plan (copies of examples/bob with one
edit each; the seed files themselves are never touched) are refused by
`bobc check` with a message naming the fault, and `bobc build` emits
nothing for them."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PC = "Bob/Build/PhysicalComponents.bob"
NH = "Bob/Build/NativeHost.bob"

VARIANTS = {
    "overlapping moments": (
        [(PC, "def bobSecondMomentAddress : Nat = (bobArenaNext bobFirstMomentAddress bobTableBytes)",
          "def bobSecondMomentAddress : Nat = (naturalAdd bobFirstMomentAddress 4096)")],
        ["second-moments", "first-moments", "overlap", "0x1100041000"]),
    "pointer one byte past a table": (
        [(PC, "(bobPatch (bobArgument 0) (bobWord64 (naturalAdd bobLogitRowsAddress (naturalMultiply index bobRowBytes)))",
          "(bobPatch (bobArgument 0) (bobWord64 (naturalAdd (naturalAdd bobLogitRowsAddress 1) "
          "(naturalMultiply index bobRowBytes)))")],
        ["launch 5 (bob-row-gather) argument 0", "runs 1 byte past logit-rows"]),
    "misaligned resident": (
        [(PC, "def bobInputAddress : Nat = (bobArenaNext bobGradientsAddress bobTableBytes)",
          "def bobInputAddress : Nat = (naturalAdd (bobArenaNext bobGradientsAddress bobTableBytes) 4)")],
        ["resident input-record at 0x1100100004 is not aligned to 256 bytes"]),
    "kernel over its register budget": (
        [(PC, '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 256)', '(bobRegion b"bob-adamw" bobAdamMachineBytes 8 256)')],
        ["region bob-adamw needs", "but declares 8"]),
    "a plan for a device bobc does not know": (
        [("Bob/Build/NativeHost.bob",
          "def bobComputeClass : (family ModelWord32) = (modelWord32FromNaturalTruncated qmdComputeClass)",
          "def bobComputeClass : (family ModelWord32) = (modelWord32FromNaturalTruncated 0xC6C0)")],
        ["architecture 0x86 with compute class 0xc6c0, which names no target bobc knows"]),
    "submission of a missing launch": (
        [(PC, "(bobSubmitEach bobPredictionLaunches (nvidiaLaunchScheduleCount bobInitialLoss)",
          "(bobSubmitEach bobPredictionLaunches (naturalAdd bobLaunchCount 5)")],
        ["submission 27", "launch 32", "27 launches"]),
    "a region whose code is another kernel's": (
        [(PC, '(bobRegion b"bob-greedy-argmax" bobArgmaxMachineBytes 32 1)',
          '(bobRegion b"bob-greedy-argmax" bobLossMachineBytes 32 1)')],
        ["region bob-greedy-argmax's machine code was encoded from", "bob-loss-gradient.sass",
         "bob-greedy-argmax.sass for the identity bob-greedy-argmax"]),
    "a launch running another region's code": (
        [(PC, '(bobLaunch b"bob-greedy-argmax" (bobKernel bobArgmaxPlace 1)',
          '(bobLaunch b"bob-greedy-argmax" (bobKernel bobAdamPlace 1)')],
        ["launch 2 (bob-greedy-argmax) runs region bob-adamw's code", "point it at region bob-greedy-argmax's place"]),
    "a region with another block than its kernel's": (
        [(PC, '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 256)', '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 128)')],
        ["region bob-adamw declares blocks of 128 threads, but bob-adamw.sass is written for 256 (its //@ block)"]),
    "a launch patching a word its kernel never reads": (
        [(PC, "          bobNoPatches))))", "          (bobPatch (bobArgument 10) (bobWord64 7) bobNoPatches)))))")],
        ["launches 2, 4, 6 (3 alike) (bob-greedy-argmax) patches argument 10 (word 54), which bob-greedy-argmax's "
         "contract does not declare: the kernel never reads it"]),
    "a region over the hardware's registers, said once": (
        [(PC, '(bobRegion b"bob-adamw" bobAdamMachineBytes 32 256)', '(bobRegion b"bob-adamw" bobAdamMachineBytes 300 256)')],
        ["region bob-adamw declares 300 registers; the hardware allows 1..255"]),
    # the host's constants, buffers, initializers and fills: once certified, then gcc or the host failed
    "a NaN host constant": (
        [("Bob/Learner.bob", "(constructor NvidiaPlanHostConstant NvidiaPlanHostFloat32 bobBeta1)",
          "(constructor NvidiaPlanHostConstant NvidiaPlanHostFloat32 0x7fc00000)")],
        ["fill 0's value is the binary32 pattern 0x7fc00000, a NaN"]),
    "a host ratio past binary64": (
        [("Bob/Learner.bob", "(constructor NvidiaPlanHostConstant NvidiaPlanHostFloat32 bobBeta1)",
          "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio (nat-power 2 2000) 1)")],
        ["fill 0's value is the ratio 11481306952742545242...(603 digits)/1, past binary64's largest finite value"]),
    # a natural in a plan error is shown as docs/limits.md says (language/quote.py show_natural: its
    # first 20 digits and how many it has), here too: the numerator over 0 was printed whole
    "a host ratio over 0": (
        [("Bob/Learner.bob", "(constructor NvidiaPlanHostConstant NvidiaPlanHostFloat32 bobBeta1)",
          "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio (nat-power 2 200000) 0)")],
        ["fill 0's value is the ratio 99800518184712095608...(60,206 digits)/0"]),
    "a host buffer at 2^64": (
        [(NH, "              (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd)))))))",
          '              (bobBuffer b"extra" bobSystem (nat-power 2 64) 4096 '
          "(constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd))))))))")],
        ["host buffer extra's host address is 18,446,744,073,709,551,616: outside 0..18,446,744,073,709,551,615"]),
    "an initializer's center past 2^64": (
        [(NH, "NvidiaPlanHostInitSplitMix64 bobSeedIdentity 40 8388608 838860800)",
          "NvidiaPlanHostInitSplitMix64 bobSeedIdentity 40 (nat-power 2 64) 838860800)")],
        ["checkpoint chunk 0's initializer (splitmix64) center is 18,446,744,073,709,551,616"]),
    "a fill's step past the host's u32": (
        [(NH, "              (succ update) after)))))", "              (nat-power 2 64) after)))))")],
        ["fill 0's step is 18,446,744,073,709,551,616: outside 0..4,294,967,295, the host's u32 step"]),
    "a fill past its launch's parameters": (
        [(NH, "(nvidiaPlanHostAdamWFills bobHostAdamW (bobAdamWLaunch update) nvidiaPlanHostAdamWScalarsOffset",
          "(nvidiaPlanHostAdamWFills bobHostAdamW (bobAdamWLaunch update) 200")],
        ["fill 0 writes bytes 200..203 of launch 7 (bob-adamw)'s parameters, past its 160-byte parameter block"]),
    "an empty grid": (
        [(PC, "(bobLaunch b\"bob-adamw\" (bobKernel bobAdamPlace 256)", "(bobLaunch b\"bob-adamw\" (bobKernel bobAdamPlace 0)")],
        ["(bob-adamw)'s grid x is 0: outside 1..2,147,483,647"]),
    # the host's schedule
    "the record read into no buffer": (
        [(NH, "    bobInputAddress bobInputRecordBytes 0 0 0", "    (naturalAdd bobArenaBase 0x10000000) bobInputRecordBytes 0 0 0")],
        ["the host's step 0 (read) touches [0x1110000000, 0x111000061c) (1,564 bytes), which lies in no buffer the "
         "plan maps; the nearest buffer is arena"]),
    "the checkpoint written from past the arena": (
        [(NH, "NvidiaPlanHostCheckpointOut) bobParametersAddress bobCheckpointPayloadBytes",
          "NvidiaPlanHostCheckpointOut) bobPredictionsAddress bobCheckpointPayloadBytes")],
        ["(write) touches [0x1100104000, 0x11001c4000) (786,432 bytes), which lies in no buffer the plan maps"]),
    "a resume reading one chunk of three": (
        [(NH, "      bobParametersAddress bobCheckpointPayloadBytes 0 0 1", "      bobParametersAddress bobTableBytes 0 0 1")],
        ["the host's reads of its input checkpoint leave bytes [262,144, 786,432) of its 786,432-byte payload unread"]),
    "a checkpoint of one chunk of three": (
        [(NH, "NvidiaPlanHostCheckpointOut) bobParametersAddress bobCheckpointPayloadBytes",
          "NvidiaPlanHostCheckpointOut) bobParametersAddress bobTableBytes")],
        ["(checkpoint_publish) publishes a checkpoint of 262,144 bytes, but the contract's payload is 786,432 bytes"]),
}

# where each refusal is located: the definition or expression whose value is at fault, a constructor
# form at its opening parenthesis (probe s28 newmodel2 finding 5: every one was the host
# definition, NativeHost.bob's `def bobNativeHost`)
PLACES = {
    "a NaN host constant": "Bob/Learner.bob:43:5",
    "a checkpoint of one chunk of three": "Bob/Build/NativeHost.bob:195:15",
    "a fill past its launch's parameters": "Bob/Build/NativeHost.bob:160:5",
    "a fill's step past the host's u32": "Bob/Build/NativeHost.bob:169:15",
    "a host buffer at 2^64": "Bob/Build/NativeHost.bob:81:45",
    "a host ratio past binary64": "Bob/Learner.bob:43:5",
    "a host ratio over 0": "Bob/Learner.bob:43:5",
    "a launch patching a word its kernel never reads": "Bob/Build/PhysicalComponents.bob:258:11",
    "a launch running another region's code": "Bob/Build/PhysicalComponents.bob:291:7",
    "a plan for a device bobc does not know": "Bob/Build/NativeHost.bob:28:5",
    "a region over the hardware's registers, said once": "Bob/Build/PhysicalComponents.bob:86:7",
    "a region whose code is another kernel's": "Bob/Build/PhysicalComponents.bob:88:9",
    "a region with another block than its kernel's": "Bob/Build/PhysicalComponents.bob:86:7",
    "a resume reading one chunk of three": "Bob/Build/NativeHost.bob:205:5",
    "an empty grid": "Bob/Build/PhysicalComponents.bob:298:7",
    "an initializer's center past 2^64": "Bob/Build/NativeHost.bob:125:92",
    "kernel over its register budget": "Bob/Build/PhysicalComponents.bob:86:7",
    "misaligned resident": "Bob/Build/PhysicalComponents.bob:206:5",
    "overlapping moments": "Bob/Build/PhysicalComponents.bob:204:5",
    "pointer one byte past a table": "Bob/Build/PhysicalComponents.bob:249:7",
    "submission of a missing launch": "Bob/Build/PhysicalComponents.bob:370:5",
    "the checkpoint written from past the arena": "Bob/Build/NativeHost.bob:194:13",
    "the record read into no buffer": "Bob/Build/NativeHost.bob:202:5",
}


def make_variant(tmp_path: Path, edits) -> Path:
    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    for relative, old, new in edits:
        path = tmp_path / relative
        text = path.read_text()
        assert old in text, f"the variant's anchor is gone from {relative}: {old}"
        path.write_text(text.replace(old, new, 1))
    return tmp_path / "Bob" / "Build" / "NativeHost.bob"


def bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_broken_variant_is_refused_by_name(name, tmp_path):
    edits, expected = VARIANTS[name]
    plan = make_variant(tmp_path, edits)
    result = bobc("check", str(plan), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for fragment in expected:
        assert fragment in result.stderr, (fragment, result.stderr[-2000:])
    # the refusal has the place of the value at fault, and every fault line has one of its own
    # (the files under the working folder, tmp_path, shown relative to it: errors.shown_path)
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"bobc check: {PLACES[name]}: error: "), first
    assert "do not say where they were written" not in result.stderr, result.stderr
    for line in result.stderr.splitlines()[1:]:
        if line.startswith("  - "):
            assert line.startswith("  - Bob/"), line
    if name.endswith("said once"):
        assert "cannot be laid out" not in result.stderr, result.stderr


def test_a_stray_copy_of_a_kernel_on_the_search_path_is_refused(tmp_path):
    """A copy of bob-adamw.sass under the plan's folder (a backup, say) with a smaller extent in
    its contract: the kernel search, which the certifier reads contracts from, finds it before
    specs/'s, which the plan encodes, so the build is refused naming both files; two copies under
    one folder are refused as ambiguous."""
    plan = make_variant(tmp_path, [])
    original = REPO / "specs/Realization/Nvidia/SM86/bob-adamw.sass"
    text = original.read_text()
    assert "//@ param 0 pointer read-write 4*hi[7]" in text
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "bob-adamw.sass").write_text(
        text.replace("//@ param 0 pointer read-write 4*hi[7]", "//@ param 0 pointer read-write 4"))
    for command in (("check", str(plan)), ("build", str(plan), "-o", "host")):
        result = bobc(*command, cwd=tmp_path)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert f"the plan encodes Realization/Nvidia/SM86/bob-adamw.sass ({original})" in result.stderr
        assert f"the kernel search finds {tmp_path / 'old' / 'bob-adamw.sass'} first" in result.stderr
    assert not (tmp_path / "host").exists()
    (tmp_path / "older").mkdir()
    (tmp_path / "older" / "bob-adamw.sass").write_text(text)
    result = bobc("check", str(plan), cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "kernel bob-adamw has 2 sources named bob-adamw.sass under" in result.stderr
    assert str(tmp_path / "old" / "bob-adamw.sass") in result.stderr
    assert str(tmp_path / "older" / "bob-adamw.sass") in result.stderr


def test_build_emits_nothing_for_a_refused_plan(tmp_path):
    edits, _ = VARIANTS["pointer one byte past a table"]
    plan = make_variant(tmp_path, edits)
    result = bobc("build", str(plan), "-o", "host", "--emit-images", "images", cwd=tmp_path)
    assert result.returncode == 1
    assert not (tmp_path / "host").exists() and not (tmp_path / "images").exists()


def test_the_sound_plan_certifies_for_both_targets(tmp_path):
    for target in ("sm_86", "sm_90"):
        result = bobc("check", str(REPO / "examples/bob/Bob/Build/NativeHost.bob"), "--target", target, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert f"certified for {target}" in result.stdout


def test_buffer_in_the_reserved_gpu_range_is_refused(tmp_path):
    """The shim keeps [0xfc_0000_0000, 0xfe_0000_0000) for its channel and notifier, and the
    memory windows sit at 0xfe_0000_0000 / 0xff_0000_0000 (runtime_c/tests/device-logs)."""
    plan = make_variant(tmp_path, [("Bob/ArenaPlan.bob", "0x1040000000", "0xfc80000000")])
    result = bobc("check", str(plan), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "gpfifo" in result.stderr and "the driver shim's own" in result.stderr


def test_a_plan_must_be_laid_out_for_the_device_it_declares(tmp_path):
    """Bob's plan declaring sm_90 (HOPPER_COMPUTE_A) without moving its parameter words:
    an sm_86 build cannot run an sm_90 plan at all, and an sm_90 build finds the words at
    sm_86's 0x160, below sm_90's parameters at 0x210, and says so (Bob as written, declaring
    sm_86, builds for both: tests/golden)."""
    plan = make_variant(tmp_path, [
        ("Bob/Build/NativeHost.bob",
         "def bobArchitecture : (family ModelWord32) = (modelWord32FromNaturalTruncated qmdSASSVersion)",
         "def bobArchitecture : (family ModelWord32) = (modelWord32FromNaturalTruncated 0x90)"),
        ("Bob/Build/NativeHost.bob",
         "def bobComputeClass : (family ModelWord32) = (modelWord32FromNaturalTruncated qmdComputeClass)",
         "def bobComputeClass : (family ModelWord32) = (modelWord32FromNaturalTruncated 0xCBC0)"),
        ("Bob/Build/NativeHost.bob",
         "def bobSPAVersion : (family ModelWord32) = (modelWord32FromNaturalTruncated qmdSPAVersion)",
         "def bobSPAVersion : (family ModelWord32) = (modelWord32FromNaturalTruncated 0x90)")])
    for_sm86 = bobc("check", str(plan), "--target", "sm_86", cwd=tmp_path)
    assert for_sm86.returncode == 1
    assert "the plan is written for sm_90 and cannot be built for sm_86" in for_sm86.stderr
    for_sm90 = bobc("check", str(plan), "--target", "sm_90", cwd=tmp_path)
    assert for_sm90.returncode == 1
    assert "parameter word 44 (bank 0 offset 0x160) lies below the parameters of the device the plan " \
           "declares (0x210)" in for_sm90.stderr


def test_the_reference_runner_refuses_a_plan_the_build_refuses(tmp_path):
    """`bobc run --reference` runs what a build would: a plan the certifier refuses is not run
    (it ran and published its outputs)."""
    edits, _ = VARIANTS["overlapping moments"]
    plan = make_variant(tmp_path, edits)
    from bob_model.fixture import DEFAULT_PROMPTS, build_record
    from bob_model.formats import encode_input_record
    (tmp_path / "record.bin").write_bytes(encode_input_record(
        build_record((REPO / "examples/bob/corpus.txt").read_bytes(), DEFAULT_PROMPTS)))
    result = bobc("run", str(plan), "train", "--reference", "--kernels", str(REPO / "examples/bob/reference_kernels.py"),
                  "--input", "record.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin",
                  cwd=tmp_path)
    assert result.returncode == 1 and "the plan is not certified" in result.stderr, result.stderr
    assert not any((tmp_path / name).exists() for name in ("c.bin", "p.bin", "r.bin"))


@pytest.mark.parametrize("name, says", [
    ("bogus", r"is kernel bob_adamw \(file bob-adamw\), but the plan's SM86Program names it bogus"),
    ("bob-loss-gradient", r"is kernel bob_adamw \(file bob-adamw\), but the plan's SM86Program names it bob-loss-gradient")])
def test_an_sm86_program_naming_its_kernel_otherwise_than_its_source_is_refused(tmp_path, name, says):
    """A kernel has one name (its file's, or its .kernel directive's): the SM86Program's name field
    was never checked, so a plan could call bob-adamw's code anything."""
    from bobc.errors import BobcError
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM90
    probe = tmp_path / "Probe.bob"
    probe.write_text("module Probe\n\nimport Accelerator.SM86.InstructionEncoding\n\n"
                     "def code : Bytes = (compiler-native-encode (family SM86Program) (constructor SM86Program "
                     f"SM86ProgramAssembly b\"Realization/Nvidia/SM86/bob-adamw.sass\" b\"{name}\"))\n",
                     encoding="utf-8")
    program = load_program(probe, target=SM90, intrinsics=default_intrinsics())
    with pytest.raises(BobcError, match=says):
        program.value("code")
