"""The shape rules a new user's shape meets past the kernels' (probe s29 coppelius findings 1-7):
the checkpoint a host must read back, the GPFIFO ring, the program residence; the Python twin of
the rules (coppelius_model.config.shape_refusal) word for word the plan's; the tools refusing a
shape or a run before building or allocating, naming what the user gave; one identity a shape."""
from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from bobc.language import Intrinsics, load_program
from bobc.targets import SM86
from bobc.language.values import VNat

from coppelius_host import build, checkpoint
from coppelius_model import config as C
from coppelius_model.config import LARGE, SMALL, named, shape_refusal

from .conftest import EXAMPLE


@pytest.fixture(scope="module")
def plan_rules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    (folder / "Probe.bob").write_text("module Probe\n\nimport Coppelius.Model\n\ndef refusal = coppeliusShapeRefusal\n",
                                      encoding="utf-8")
    program = load_program(folder / "Probe.bob", include=[EXAMPLE], intrinsics=Intrinsics(), target=SM86)
    return program, program.value("refusal")


def test_the_python_rules_say_what_the_plans_say(plan_rules):
    program, refusal = plan_rules
    shapes = itertools.product((0, 1, 3, 12, 13, 44, 45, 48, 49, 100, 1000), (64, 192, 256, 384, 640, 768, 1024),
                               (64, 128, 256, 512), (0, 16384, 20480, 32768, 1000003, 1 << 20, 8 << 20, 64 << 20))
    for shape in shapes:
        assert program.apply(refusal, *map(VNat, shape)).value.decode() == shape_refusal(*shape), shape


def test_a_payload_a_host_cannot_read_back_is_refused_naming_its_size_and_the_limit():
    said = shape_refusal(13, 768, 256, 8 << 20)          # one layer more than large: 1.11 GB
    payload = C.payload_bytes_for(13, 768, 256)
    assert said.startswith(f"layers (coppeliusShapeLayers) 13 give a checkpoint payload of 12 N + 16 = {payload} "
                           f"bytes, more than {(1 << 30) - 4096}")
    assert "at most 1073741824 bytes, docs/limits.md" in said
    assert shape_refusal(12, 768, 256, 64 << 20) == ""                 # large
    # the envelope's room holds small's and large's identities (what the rule leaves for them)
    from bobc.certify.limits import checkpoint_file_bytes
    for name in ("small", "large"):
        contract = checkpoint.contract(name)
        assert checkpoint_file_bytes(contract) - contract.payload_bytes <= C.ENVELOPE_ROOM_BYTES


def test_more_chunks_than_the_ring_holds_are_refused_naming_the_ring():
    said = shape_refusal(1, 256, 128, 20480)              # built nothing, "evaluates to empty bytes"
    assert said.startswith("chunk (coppeliusShapeChunkBytes) 20480 cuts this shape's checkpoint payload into 560 "
                           "chunks, more than 339")
    assert "GPFIFO ring, which holds 8192 bytes" in said
    assert C.CHUNKS_MOST == (8192 // 8 - 5) // 3
    assert "chunks" not in shape_refusal(1, 256, 128, 49152)          # 114 chunks


def test_the_rules_count_the_plans_launches_submissions_and_ring(tmp_path):
    """The rules' formulas are the plan's counts (the seed's shape; Coppelius.Build.PhysicalComponents
    proves the chunks, the submissions and the ring table by type checking)."""
    (tmp_path / "Counts.bob").write_text(
        "module Counts\n\nimport Coppelius.Build.Graph\nimport Coppelius.Build.PhysicalComponents\n\n"
        "def launches : Nat = coppeliusLaunchCount\ndef submissions : Nat = coppeliusSubmissionCount\n"
        "def chunks : Nat = cgChunks\ndef table : Nat = coppeliusGPFIFOTableBytes\n", encoding="utf-8")
    program = load_program(tmp_path / "Counts.bob", include=[EXAMPLE], target=SM86)
    value = lambda name: program.value(name).value                         # noqa: E731
    chunks = C.chunks_for(C.payload_bytes_for(SMALL.layers, SMALL.width, SMALL.context), SMALL.chunk_bytes)
    assert value("chunks") == chunks == 5
    assert value("launches") == C.launches_for(SMALL.layers, chunks)
    assert value("submissions") == 3 * chunks + 5 and value("table") == 8 * value("submissions")


def test_a_deep_shape_is_refused_by_the_rules_at_the_residence():
    said = shape_refusal(49, 256, 128, 8 << 20)           # built nothing: the residence refused it in the backend
    assert said.startswith("layers (coppeliusShapeLayers) 49 give 1819 launches (33 L + 3 chunks + 34), more than 1664")
    assert "coppeliusProgramResidenceBytes = 2097152" in said
    assert shape_refusal(44, 256, 128, 8 << 20) == "" and shape_refusal(45, 256, 128, 8 << 20) != ""


def test_a_residence_too_small_is_refused_at_the_definition_that_sets_it(tmp_path):
    """A copy whose residence (and the rules' figure for it) holds the rules' launches but not the
    kernels' code with them: the backend's refusal is located at Coppelius.ArenaPlan's
    coppeliusProgramResidenceBytes and names it."""
    root = build.plan_copy(tmp_path / "plan", 1, 1, "10x256x128")
    arena, model = root / "Coppelius" / "ArenaPlan.bob", root / "Coppelius" / "Model.bob"
    for path, old, new in ((arena, "def coppeliusProgramResidenceBytes : Nat = 2097152",
                            "def coppeliusProgramResidenceBytes : Nat = 490496"),
                           (model, "def coppeliusShapeResidenceBytes : Nat = 2097152",
                            "def coppeliusShapeResidenceBytes : Nat = 490496"),
                           (model, "def coppeliusResidenceCodeAllowance : Nat = 393216",
                            "def coppeliusResidenceCodeAllowance : Nat = 0")):
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, (path, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
    line = arena.read_text(encoding="utf-8").splitlines().index(
        "def coppeliusProgramResidenceBytes : Nat = 490496") + 1
    with pytest.raises(RuntimeError) as refused:
        build.build_from(root, "sm_90", tmp_path / "host")
    message = str(refused.value)
    assert f"{arena}:{line}:5: error: the program residence at " in message, message
    assert "(490496 bytes, coppeliusProgramResidenceBytes) cannot hold the " in message
    assert "hint: make its size, coppeliusProgramResidenceBytes, at least " in message
    assert "Traceback" not in message and not (tmp_path / "host").exists()


def run_tool(*arguments):
    return subprocess.run([sys.executable, "-m", *arguments], cwd=EXAMPLE, capture_output=True, text=True,
                          env=build.bobc_environment())


@pytest.mark.parametrize("option, value, said", [
    ("--interval", "0", "0 is not at least 1"), ("--interval", "-1", "-1 is not at least 1"),
    ("--publications", "0", "0 is not at least 1"),
    # longer than one host's program holds (tests/coppelius/test_build_tool.py: the rule)
    ("--interval", "65537", "--interval 65537 --publications 4 (the plan's): 262,148 updates an invocation"),
    ("--publications", "100000", "--interval 50 (the plan's) --publications 100000: 5,000,000 updates")])
def test_build_refuses_a_run_it_cannot_make_as_a_usage_error(option, value, said, tmp_path):
    done = run_tool("coppelius_host.build", "sm_90", "-o", str(tmp_path / "host"), option, value)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and (f"argument {option}: " in done.stderr) == ("at least 1" in said)
    assert "Traceback" not in done.stderr and not (tmp_path / "host").exists()


@pytest.mark.parametrize("shape, said", [("2x384x192", "context (coppeliusShapeContext) 192 is not 128 or 256"),
                                         ("13x768x256", "layers (coppeliusShapeLayers) 13 give a checkpoint payload"),
                                         ("1x256x128:20480", "chunk (coppeliusShapeChunkBytes) 20480 cuts"),
                                         ("49x256x128", "layers (coppeliusShapeLayers) 49 give 1819 launches")])
def test_build_refuses_a_shape_before_building_naming_the_option(shape, said, tmp_path):
    done = run_tool("coppelius_host.build", "sm_90", "-o", str(tmp_path / "host"), "--config", shape)
    assert done.returncode == 2, done.stderr       # a usage error (probe s33 shapes finding 1)
    assert f"coppelius_host.build: error: --config: no host serves configuration {shape}: {said}" in done.stderr, \
        done.stderr
    assert "coppelius-host-" not in done.stderr and "hint:" not in done.stderr
    assert not (tmp_path / "host").exists()


def test_a_refusal_in_the_copy_names_the_examples_files_and_what_the_copy_was_for(tmp_path, monkeypatch):
    def refuse(root, target, output, steps=None):
        raise RuntimeError(f"bobc build failed (exit 1):\nbobc build: {root}/Coppelius/TrainingRun.bob:15:5: error: x\n")
    monkeypatch.setattr(build, "build_from", refuse)
    with pytest.raises(RuntimeError) as refused:
        build.build("sm_90", tmp_path / "host", interval=3)
    message = str(refused.value)
    assert f"{EXAMPLE}/Coppelius/TrainingRun.bob:15:5: error: x" in message
    assert "coppelius-host-" not in message and "a copy of" in message and "--interval 3" in message


def test_build_passes_the_evaluation_limit_to_bobc(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(build.subprocess, "run", lambda command, **_: ran.append(command) or
                        subprocess.CompletedProcess(command, 0, "", ""))
    assert build.main(["sm_90", "-o", str(tmp_path / "host"), "--max-evaluation-steps", "64000000"]) == 0
    assert ran and ran[0][-2:] == ["--max-evaluation-steps", "64000000"]


def test_checkpoint_fresh_refuses_a_shape_past_the_limit_before_allocating(tmp_path, capsys):
    # 100 x 768 x 256 once allocated 5.29 GiB, then a MemoryError traceback
    output = tmp_path / "f.ckpt"
    assert checkpoint.main(["fresh", "-o", str(output), "--config", "100x768x256"]) == 2
    said = capsys.readouterr().err
    assert "error: --config: no host serves configuration 100x768x256: " in said and "8512542736 bytes, more than" in said
    assert not output.exists() and "Traceback" not in said


@pytest.mark.parametrize("spelling", ["1x256x128", "01x256x128", "1x256x128:8388608", "001x0256x128:08388608"])
def test_a_shape_has_one_identity_however_it_is_spelt(spelling):
    assert named(spelling).identity == b"coppelius-1x256x128-v1"
    assert named(spelling).name == "1x256x128"
    assert named("1x256x128:1048576").identity == b"coppelius-1x256x128:1048576-v1"
    assert named("4x256x128") is SMALL and named("04x256x128:8388608") is SMALL
    assert named("12x768x256:67108864") is LARGE and named("12x768x256") is not LARGE


def test_a_checkpoint_of_one_spelling_is_shown_under_another(tmp_path, capsys):
    written = tmp_path / "fresh.ckpt"
    assert checkpoint.main(["fresh", "-o", str(written), "--config", "1x256x128", "--updates-per-invocation", "2"]) == 0
    for spelling in ("1x256x128:8388608", "01x256x128"):
        assert checkpoint.main(["show", str(written), "--config", spelling, "--updates-per-invocation", "2"]) == 0, \
            capsys.readouterr().err
