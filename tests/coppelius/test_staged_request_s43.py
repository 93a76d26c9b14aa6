"""Probe s43 reqstaged: seed 004's staged checkpoint restore was held to no rule about places.

Coppelius's host (a plan host lowered to one native program, Coppelius.Build.NativeHost) restores
its checkpoint chunk by chunk through the staging buffer, each chunk scattered into the arena by a
coppelius-copy launch (`//@ copy 0 to 1 4*lo[2]`), and saves it by gathering each chunk back.  A
copy of the seed whose gather takes chunk 1 from chunk 0's offset (Graph.bob `cgGather`) built
(`wrote ...`, exit 0): every resume would load chunk 0's bytes as chunk 1 and train from them.
The build (and `bobc run PLAN native --reference` of the host's Bytes) now follows the request's
schedule through the whole-program plan whose images the host embeds and its kernels' declared
copies (docs/host-steps.md, "A request program's schedule") and refuses it at the gather's Write
with the plan host's message.

The expected values come from the plan's own arithmetic, not from the implementation: the chunk is
the small configuration's checkpoint chunk (coppelius_model.config.SMALL.chunk_bytes), the
parameters resident starts the video arena (ArenaPlan.bob coppeliusParametersAddress =
coppeliusSM86CompatVideoBaseNatural), cgScatter puts chunk k at parameters + k x chunk, and the
mutated gather takes chunk 1 from parameters + 0: payload bytes [chunk, 2 chunk) are saved from
video-arena offset 0 and restored into video-arena offset chunk.  The Write is the full chunks'
`coppeliusWriteCheckpoint coppeliusChunkBytes` (NativeHost.bob).

Seed 004 calls nvidiaPlanHostRequestCommands, whose program carries no residents, so its findings
name the layout's buffer: "buffer video-arena at offset 0" and "... at offset <chunk>".  Session 46
(probe s46 leftovers8 finding 1) added nvidiaPlanHostRequestCommandsNamed, the same program with the
arena's residents given to name places by; the seed stays as given, so a copy of the mutant whose call
is the Named form with coppeliusArenaResidents is refused naming "resident parameters" (ArenaPlan.bob's
first resident, at the video arena's base) and "resident parameters at offset <chunk>"
(test_the_refusal_names_the_resident_by_its_plan_name_s46)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from coppelius_model.config import SMALL

from .conftest import EXAMPLE, REPOSITORY

GATHER = ("(cgCopy place (naturalAdd coppeliusParametersAddress (cgChunkAt chunk)) coppeliusStagingBase "
          "(cgChunkBytesOf chunk))")
WRONG = ("(cgCopy place (naturalAdd coppeliusParametersAddress (cgChunkAt (naturalSaturatingSubtract chunk 1))) "
         "coppeliusStagingBase (cgChunkBytesOf chunk))")
WRITE = "(coppeliusWriteCheckpoint coppeliusChunkBytes coppeliusStepsEnd)"
CALL = "(nvidiaPlanHostRequestCommands (coppeliusHostLayoutFor"
NAMED = "(nvidiaPlanHostRequestCommandsNamed coppeliusArenaResidents (coppeliusHostLayoutFor"


@pytest.fixture(scope="module")
def mutant(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reqstaged") / "coppelius"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "large"))
    graph = folder / "Coppelius" / "Build" / "Graph.bob"
    text = graph.read_text(encoding="utf-8")
    assert text.count(GATHER) == 1
    graph.write_text(text.replace(GATHER, WRONG), encoding="utf-8")
    return folder


def bobc(folder, *words):
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY / "compiler"), BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", *words], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=900)


def write_place(folder) -> str:
    lines = (folder / "Coppelius" / "Build" / "NativeHost.bob").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines) if WRITE in text)
    return f"Coppelius/Build/NativeHost.bob:{line + 1}:{lines[line].index(WRITE) + 1}"


def expected(folder, named: bool = False) -> list[str]:
    chunk = SMALL.chunk_bytes
    first, second = (("resident parameters", f"resident parameters at offset {chunk:,}") if named else
                     ("buffer video-arena at offset 0", f"buffer video-arena at offset {chunk:,}"))
    return [f"{write_place(folder)}: the host's step",
            f"writes checkpoint payload bytes [{chunk:,}, {2 * chunk:,}) from [0x2000000000, {0x2000000000 + chunk:#x}) "
            f"({first})",
            f"but a resume puts those bytes into [{0x2000000000 + chunk:#x}, {0x2000000000 + 2 * chunk:#x}) "
            f"({second}) through its staged restore"]


@pytest.fixture(scope="module")
def refused(mutant, tmp_path_factory):
    """The mutant's build: (its completed process, the host path it was given)."""
    host = tmp_path_factory.mktemp("reqstaged-out") / "host"
    return bobc(mutant, "build", "Coppelius/Build/DirectArtifact.bob", "--entry", "coppeliusHost",
                "--target", "sm_86", "-o", str(host)), host


def test_a_gather_from_another_chunks_offset_is_refused_at_the_build(mutant, refused):
    done, host = refused
    assert done.returncode == 1, done.stderr
    assert "the plan is not certified" in done.stderr
    for part in expected(mutant):
        assert part in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not host.exists()          # nothing written


def test_the_refusal_names_the_resident_by_its_plan_name_s46(mutant, tmp_path):
    """With the Named form the places are named as the plan names them: ArenaPlan.bob's resident
    `b"parameters"` at coppeliusParametersAddress = coppeliusSM86CompatVideoBaseNatural = 0x2000000000,
    the chunk at its offset SMALL.chunk_bytes -- read from the plan's text here -- not the layout's
    buffer.  (A copy of the mutant: seed 004 itself is kept as given.)"""
    arena = (EXAMPLE / "Coppelius" / "ArenaPlan.bob").read_text(encoding="utf-8")
    assert 'coppeliusResident b"parameters" coppeliusParametersAddress' in arena
    assert "def coppeliusParametersAddress : Nat = coppeliusSM86CompatVideoBaseNatural" in arena
    assert "def coppeliusSM86CompatVideoBaseNatural : Nat = 0x2000000000" in arena
    named = tmp_path / "coppelius"
    shutil.copytree(mutant, named)
    host_module = named / "Coppelius" / "Build" / "NativeHost.bob"
    text = host_module.read_text(encoding="utf-8")
    assert text.count(CALL) == 1
    host_module.write_text(text.replace(CALL, NAMED), encoding="utf-8")
    done = bobc(named, "build", "Coppelius/Build/DirectArtifact.bob", "--entry", "coppeliusHost",
                "--target", "sm_86", "-o", str(tmp_path / "host"))
    assert done.returncode == 1, done.stderr
    for part in expected(named, named=True):
        assert part in done.stderr, done.stderr
    assert "buffer video-arena" not in done.stderr, done.stderr
    assert not (tmp_path / "host").exists()


def test_the_reference_run_of_the_hosts_bytes_refuses_it_too(mutant, tmp_path):
    done = bobc(mutant, "run", "Coppelius/Build/DirectArtifact.bob", "native", "--reference",
                "--entry", "coppeliusHost", "--target", "sm_86", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    for part in expected(mutant):
        assert part in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
