"""Seed 003 (PartitionedRegression.Build.CoordinateDevice) with its real imports: it type
checks, its identities and numerics are its own bytes, and its admission rules refuse by name.

The model's modules are examples/partitioned_regression/PartitionedRegression/** (no stub from
tests/specs/data/model_stubs is on the path here); the expected bytes below are the seed's own
text (its cdNumerics and cdIdentity branches), padded as Runtime.NativePhysicalEmbeddedArtifact
documents (64 bytes).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

EXAMPLE = REPOSITORY / "examples/partitioned_regression"
SEED = EXAMPLE / "PartitionedRegression/Build/CoordinateDevice.bob"
BOBC = [sys.executable, "-m", "bobc"]
MODEL_MODULES = ("PartitionedRegression.Coordinates", "PartitionedRegression.CoordinateHost",
                 "PartitionedRegression.Build.ScalarEvaluation", "PartitionedRegression.Build.CoordinateMemory")


def bobc(*args, cwd=REPOSITORY):
    return subprocess.run([*BOBC, *args], cwd=cwd, capture_output=True, text=True)


def test_bobc_check_passes_on_the_restored_seed_with_every_import_real():
    done = bobc("check", str(SEED))
    assert done.returncode == 0, done.stderr
    assert "PartitionedRegression.Build.CoordinateDevice: well typed" in done.stdout
    from bobc.language import load_program
    from bobc.targets import SM86
    program = load_program(SEED, target=SM86)
    for name in MODEL_MODULES:
        path = Path(program.modules[name].path).resolve()
        assert EXAMPLE in path.parents, f"{name} comes from {path}"
    imported = [line.split()[1] for line in SEED.read_text(encoding="utf-8").splitlines() if line.startswith("import ")]
    assert len(imported) == 39 and set(imported) <= set(program.modules)


def test_eval_of_cdNumerics_is_the_seeds_bytes():
    done = bobc("eval", str(SEED), "cdNumerics")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == 'b"f32-products-f64-accumulation-v1"'


KINDS = {"NativePhysicalEmbeddedHostELF": b"coordinate-scalar-sm86-host-v1",
         "NativePhysicalEmbeddedProgramTable": b"coordinate-scalar-sm86-program-v1",
         "NativePhysicalEmbeddedQMDTable": b"coordinate-scalar-sm86-qmd-v1",
         "NativePhysicalEmbeddedPushbuffer": b"coordinate-scalar-sm86-push-v1",
         "NativePhysicalEmbeddedGPFIFO": b"coordinate-scalar-sm86-ring-v1"}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_eval_of_cdIdentity_for_each_component_kind_is_the_seeds_bytes(tmp_path, kind):
    (tmp_path / "Identity.bob").write_text(
        "module Identity\n\nimport PartitionedRegression.Build.CoordinateDevice\n"
        "import Runtime.NativePhysicalEmbeddedArtifact\n\n"
        f"def identity : Bytes = (cdIdentity (constructor NativePhysicalEmbeddedComponentKind {kind}))\n", encoding="utf-8")
    done = bobc("eval", "--hex", "-I", str(EXAMPLE), str(tmp_path / "Identity.bob"), "identity")
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()           # x"<hex>" (64 bytes)
    assert printed.endswith('" (64 bytes)') and printed.startswith('x"')
    assert bytes.fromhex(printed[2:printed.index('"', 2)]) == KINDS[kind] + bytes(64 - len(KINDS[kind]))


# ---- admission: the seed builds no host (b"") and PartitionedRegression.Build.Admission names the rule ----
UUID = bytes(range(0x10, 0x20))


def refusal_probe(tmp_path, **changes):
    from partitioned_regression.artifacts import load, uuid_literal
    request = dict(uuid=UUID, minor=0, worker=0, port=47001, resume=0, epoch=1, steps=8)
    request.update(changes)
    arguments = (f"coordinateH200 {uuid_literal(request['uuid'])} {request['minor']} {request['worker']} "
                 f"{request['port']} {request['resume']} {request['epoch']} {request['steps']}")
    program = load("import PartitionedRegression.Build.Admission\nimport PartitionedRegression.Build.Workers\n"
                   "import PartitionedRegression.Targets\n\n"
                   f"def refusal : Bytes = (coordinateWorkerRefusal {arguments})\n"
                   f"def artifact : Bytes = (coordinateWorkerHost {arguments})\n", folder=tmp_path)
    return program


@pytest.mark.parametrize("change, name", [
    (dict(worker=2), b"worker: a pair has workers 0 and 1 only"),
    (dict(uuid=UUID[:15]), b"device: the GPU UUID is not 16 bytes"),
    (dict(uuid=UUID + b"\x01"), b"device: the GPU UUID is not 16 bytes"),
    (dict(steps=0), b"steps: a run takes at least one step"),
    (dict(epoch=0), b"epoch: epochs count from 1"),
    (dict(resume=2), b"resume: 0 (a fresh start) or 1 (from the checkpoint)"),
    (dict(port=0), b"port: not a TCP port (1 to 65535)"),
    (dict(uuid=bytes(16)), b"device: the binding is not admitted (minor above 254, an all-zero UUID, or a name past 63 bytes)"),
])
def test_the_seed_refuses_a_request_and_the_rule_is_named(tmp_path, change, name):
    program = refusal_probe(tmp_path, **change)
    assert program.value("artifact").value == b""          # the seed's own rules: no host
    assert program.value("refusal").value == name


@pytest.mark.parametrize("address, name", [
    ("300 0 0 1", b"address: octet 0 of a.b.c.d (counting from 0) is above 255"),
    ("10 0 256 1", b"address: octet 2 of a.b.c.d (counting from 0) is above 255"),
    ("0 0 0 0", b""),
    ("10 0 0 5", b""),
])
def test_the_refusal_of_a_host_at_an_address_names_an_octet_above_255(tmp_path, address, name):
    """coordinateWorkerHostAt with an octet above 255 builds b"" (the seed drops the socket
    address's SocketAddressOctetTooLarge); coordinateWorkerRefusalAt names it, where the
    refusal without an address said every rule admits (probe s32 partnet finding 4)."""
    from partitioned_regression.artifacts import load, uuid_literal
    arguments = f"coordinateH200 {uuid_literal(UUID)} 0 1 (coordinateAddress {address}) 47001 0 1 8"
    program = load("import PartitionedRegression.Build.Admission\nimport PartitionedRegression.Build.Workers\n"
                   "import PartitionedRegression.Targets\n\n"
                   f"def refusal : Bytes = (coordinateWorkerRefusalAt {arguments})\n"
                   f"def artifact : Bytes = (coordinateWorkerHostAt {arguments})\n", folder=tmp_path)
    assert program.value("refusal").value == name
    assert (program.value("artifact").value == b"") == bool(name)


def test_building_a_refused_request_says_the_plan_built_no_host(tmp_path):
    (tmp_path / "Pair.bob").write_text(
        "module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
        "def port0 : Bytes = (coordinateH200Worker "
        "b\"\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f\\x10\" 0 0 0 0 1 8)\n",
        encoding="utf-8")
    done = bobc("build", str(tmp_path / "Pair.bob"), "--entry", "port0", "--target", "sm_90", "-I", str(EXAMPLE),
                "-o", str(tmp_path / "host"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "port0 evaluates to empty bytes: the plan built no host for this request" in done.stderr
    assert "evaluate the plan's refusal" in done.stderr and not (tmp_path / "host").exists()


def test_an_admitted_request_builds_a_host_and_names_no_rule(tmp_path):
    program = refusal_probe(tmp_path)
    assert program.value("refusal").value == b""
    artifact = program.value("artifact").value
    assert artifact.endswith(b"NPEMBED1" + artifact[-8:]) and artifact.startswith(b"NPHY")


@pytest.mark.parametrize("start, admitted", [(248, 0), (255, 1), (256, 1), (0, 0)])
def test_a_state_overlapping_the_session_prefix_fails_the_seeds_arena_certificate(tmp_path, start, admitted):
    """The seed's certificate (cdTrainingResidents: "native-device-session" is [0, phStateExtent)) on
    a training layout placed at `start` (frame aligned: 255 starts at 256)."""
    from partitioned_regression.artifacts import load
    program = load("import PartitionedRegression.Build.Admission\n\n"
                   f"def admitted : Nat = (coordinateStateAdmitted {start})\n"
                   f"def refusal : Bytes = (coordinateStateRefusal {start})\n", folder=tmp_path)
    assert program.value("admitted").value == admitted
    assert program.value("refusal").value.startswith(b"state: ") == (not admitted)
