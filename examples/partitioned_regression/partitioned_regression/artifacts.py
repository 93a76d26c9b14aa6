"""Seed 003's hosts evaluated from the plan (no GPU, no ELF writer needed).

`bobc build` turns an entry whose value is a native host into an executable through
`compiler-native-encode (family NvidiaResourceHost)`, the backend's ELF writer.  Here that
family's handler returns the program's canonical bytes (nativePhysicalProgramBytes, as
Runtime.NativePhysicalProgram defines them) instead, so the artifact the seed builds is those
bytes followed by the four device images (Runtime.NativePhysicalEmbeddedArtifact) -- the
program a built host interprets, with the images it loads.
"""
from __future__ import annotations

import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]            # examples/partitioned_regression
KINDS = {0: "host", 1: "program", 2: "qmd", 3: "push", 4: "ring"}


@dataclass
class Artifact:
    program: bytes              # the native program's canonical bytes (b"NPHY"...)
    images: dict                # "program", "qmd", "push", "ring" -> bytes
    identities: dict            # kind name -> its 64-byte identity


def parse_embedded(artifact: bytes) -> Artifact:
    """The components of a Runtime.NativePhysicalEmbeddedArtifact, from its footer."""
    if artifact[-16:-8] != b"NPEMBED1":
        raise ValueError("not an embedded native artifact (no NPEMBED1 footer)")
    start = struct.unpack_from("<Q", artifact, len(artifact) - 8)[0]
    footer = len(artifact) - 16 - (4 + 64 + 8)
    kind, = struct.unpack_from("<I", artifact, footer)
    host_identity = artifact[footer + 4:footer + 68]
    host_length, = struct.unpack_from("<Q", artifact, footer + 68)
    assert kind == 0 and host_length == start
    images, identities = {}, {"host": host_identity}
    at = start
    while at < footer:
        kind, = struct.unpack_from("<I", artifact, at)
        identity = artifact[at + 4:at + 68]
        length, = struct.unpack_from("<Q", artifact, at + 68)
        images[KINDS[kind]] = artifact[at + 76:at + 76 + length]
        identities[KINDS[kind]] = identity
        at += 76 + length
    return Artifact(artifact[:start], images, identities)


def program_bytes_handler(value, context):
    """compiler-native-encode (family NvidiaResourceHost): the program's canonical bytes."""
    from bobc.language.values import VBytes
    program = context.program
    host = program.force(value)
    encoder = program.value("nativePhysicalProgramBytes")
    return VBytes(program.force(program.apply(encoder, host.fields[2])).value)


def load(text: str, target_name: str = "sm_86", folder: Path | None = None, example: Path | None = None):
    """A Program for a plan module `PairProbe` whose body is `text` (it may import the example's
    modules, from `example` when given: a changed copy of the tree), with the compiler's encoders
    and the program-bytes handler."""
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    import bobc.targets as targets
    target = next(t for t in vars(targets).values() if getattr(t, "name", None) == target_name
                  and hasattr(t, "nvdisasm_arch"))
    intrinsics = default_intrinsics()
    intrinsics.register("NvidiaResourceHost", program_bytes_handler)
    if folder is None:
        # a folder of its own, gone once the module is loaded: a TMPDIR inside a plan folder
        # would otherwise hold a stray PairProbe.bob that plan's next build reads as a module
        with tempfile.TemporaryDirectory(prefix="pair-probe-") as own:
            return load(text, target_name, Path(own), example)
    plan = Path(folder) / "PairProbe.bob"
    plan.write_text("module PairProbe\n\nimport Runtime.NativePhysicalProgram\n" + text, encoding="utf-8")
    return load_program(plan, include=[Path(example or EXAMPLE)], intrinsics=intrinsics, target=target)


def uuid_literal(uuid: bytes) -> str:
    return 'b"' + "".join(f"\\x{b:02x}" for b in uuid) + '"'


def worker_artifact(uuid: bytes, worker: int, port: int, resume: int, epoch: int, steps: int,
                    minor: int = 0, target_name: str = "sm_86", profile: str = "coordinateH200",
                    example: Path | None = None) -> bytes:
    program = load("import PartitionedRegression.Build.Workers\n"
                   "import PartitionedRegression.Targets\n\n"
                   f"def artifact : Bytes = (coordinateWorkerHost {profile} {uuid_literal(uuid)} {minor} {worker} "
                   f"{port} {resume} {epoch} {steps})\n", target_name, example=example)
    return program.value("artifact").value


def prediction_artifact(uuid: bytes, epoch: int, minor: int = 0, target_name: str = "sm_86",
                        profile: str = "coordinateH200") -> bytes:
    program = load("import PartitionedRegression.Build.Workers\n"
                   "import PartitionedRegression.Targets\n\n"
                   f"def artifact : Bytes = (coordinatePredictionHost {profile} {uuid_literal(uuid)} {minor} {epoch})\n",
                   target_name)
    return program.value("artifact").value
