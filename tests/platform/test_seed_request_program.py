"""Seed 004's request program (issue 17): Coppelius.Build.NativeHost's schedule lowered by
nvidiaPlanHostRequestCommands, exactly as the seed calls it, decoded by bobc.native.program.

Built here with a synthetic ring table (the realization's entries only change Reissue words),
it must carry every file and request step as a native command -- no "no native command form"
Fail -- and its RequestOpen must ask what the seed's schedule reads (docs/host-steps.md, "The
request's native program"): the token stream at the cursor 64 + step x 4T, a train request
reaching one context and a target past its last update's, a predict request only the forward's,
and coppeliusRunPublications publications.  The expected numbers come from the seed's own
definitions (Coppelius.TrainingRun), evaluated beside it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
MODULE = """module SeedRequest

import Coppelius.Build.NativeHost
import Coppelius.Build.Graph
import Coppelius.TrainingRun
import Platform.Linux.Nvidia.PlanHost
import Platform.Linux.Nvidia.PlanHostRequest
import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalEmbeddedArtifact

def entries : Bytes = (bytes-from-nat-le 0 65536)
def code : Bytes = (nativePhysicalProgramBytes (nvidiaPlanHostProgram b"seed-004"
  (nvidiaPlanHostRequestCommands (coppeliusHostLayoutFor coppeliusHostAmpere 65536 b"card") b"card" b"p" b"q" b"u" b"g"
    16 16 16 16 coppeliusRunSubmissionCount (constructor NvidiaPlanHostInputContract NvidiaPlanHostInputStream)
    coppeliusCheckpointContract (coppeliusRecipeFills 65536 65536) phEnd (coppeliusHostStepsFor entries phEnd))))
def context : Nat = coppeliusContextStreamBytes
def steps : Nat = coppeliusRunSteps
def publications : Nat = coppeliusRunPublications
def submissions : Nat = coppeliusRunSubmissionCount
def chunks : Nat = cgChunks
def payload : Nat = coppeliusCheckpointPayloadBytesNatural
def chunk : Nat = coppeliusChunkBytes
"""


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.intrinsics import default_intrinsics
    folder = tmp_path_factory.mktemp("seed-request")
    (folder / "SeedRequest.bob").write_text(MODULE, encoding="utf-8")
    program = load_program(folder / "SeedRequest.bob", include=[REPOSITORY / "examples/coppelius"],
                           intrinsics=default_intrinsics(), target=SM86)
    program.check()
    from bobc.native.program import decode
    values = {name: program.value(name).value for name in ("context", "steps", "publications", "submissions",
                                                           "chunks", "payload", "chunk")}
    return decode(bytes(program.value("code").value)), values


def test_no_step_of_the_seed_is_left_without_a_native_form(seed):
    program, _ = seed
    fails = [c.data for c in program.commands if c.name == "Fail"]
    assert not [f for f in fails if b"no native command form" in f], fails
    names = [c.name for c in program.commands]
    # every check before the device session; the four images loaded before the first Submit
    assert names[:2] == ["RequestOpen", "OpenDevice"]
    loads = [i for i, name in enumerate(names) if name == "LoadEmbedded"]
    assert [program.commands[i].n[0] for i in loads] == [1, 2, 3, 4]
    assert max(loads) < names.index("Submit")


def test_the_seeds_request_asks_what_its_schedule_reads(seed):
    from bobc.native.request import parse_request
    program, v = seed
    request = parse_request(program.commands[0].data)
    assert request.stream is not None and request.stream.magic == b"COPSTRM1"
    assert (request.stream.token_bytes, request.stream.vocabulary, request.stream.header_bytes) == (4, 256, 64)
    assert (request.cursor_base, request.cursor_scale) == (64, v["context"])
    # train: the last update's context starts (steps - 1) contexts on and its targets end 4 bytes past it
    assert request.train.cursor == v["steps"] * v["context"] + 4
    assert request.predict.cursor == v["context"] + 4
    assert (request.train.publications, request.predict.publications) == (v["publications"], 0)
    assert (request.train.records, request.predict.records) == (0, 0)
    assert (request.contract.payload_bytes, request.contract.chunk_bytes, request.contract.updates_per_invocation) == \
        (v["payload"], v["chunk"], v["steps"])


def test_the_seeds_program_moves_the_checkpoint_and_issues_the_run(seed):
    program, v = seed
    commands = program.commands
    reads = [c for c in commands if c.name == "RequestRead" and c.n[0] == 2]
    # the checkpoint read chunk by chunk, in order, each once: the payload tiled
    offsets = [(c.v[0][1], c.n[2]) for c in reads]
    assert len(offsets) == v["chunks"]
    at = 0
    for offset, extent in offsets:
        assert offset == at
        at += extent
    assert at == v["payload"]
    written = sum(c.n[2] for c in commands if c.name == "RequestWrite" and c.n[0] == 3)
    assert written == v["publications"] * v["payload"]
    assert sum(1 for c in commands if c.name == "RequestCheckpointPublish") == v["publications"]
    assert sum(1 for c in commands if c.name == "Submit") == v["submissions"]
