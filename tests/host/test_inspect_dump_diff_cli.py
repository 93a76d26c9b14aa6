"""`bobc diff`'s exit codes (0 same, 1 differ, 2 cannot compare, the verdict kept when the
reader stops early), dump's per-instruction nvdisasm refusals, and inspect/dump/diff of
native physical program hosts (probe s26: probe-bob 3-5, probe-coppelius 3)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.diff.test_diff_host import restamp   # a changed host made consistent (its plan identity restamped)

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
NATIVE = REPO / "tests/native/plans/Native/Commands.bob"


def bobc(*args, **kw):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hosts")
    out = {"plan": folder / "bob-host", "native": folder / "artifact", "native2": folder / "arith"}
    for args in (("build", PLAN, "-o", out["plan"]),
                 ("build", NATIVE, "--entry", "arithmeticArtifact", "-o", out["native"]),
                 ("build", NATIVE, "--entry", "arithmeticHost", "-o", out["native2"])):
        done = bobc(*args)
        assert done.returncode == 0, done.stderr
    return out


def _section_offset(path: Path, name: str) -> int:
    from bobc.host import sections

    return sections.spans(path.read_bytes(), path)[name][0]


def test_diff_that_cannot_compare_exits_2_never_1(hosts, tmp_path):
    damaged = tmp_path / "damaged"
    data = bytearray(hosts["plan"].read_bytes())
    data[_section_offset(hosts["plan"], "manifest")] ^= 0xFF            # '{' is no longer JSON
    damaged.write_bytes(bytes(data))
    for a, b, said in ((hosts["plan"], "/bin/true", "carries no bobc images"),
                       (hosts["plan"], damaged, "its .bobc.manifest section's sha256 is"),
                       (hosts["plan"], hosts["native"], "cannot be compared")):
        done = bobc("diff", a, b)
        assert done.returncode == 2, (b, done.returncode, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr
    assert "copy the host again, or rebuild it (bobc build)" in bobc("diff", hosts["plan"], damaged).stderr  # a host


def test_diff_keeps_its_verdict_when_the_reader_stops(hosts, tmp_path):
    images = tmp_path / "sm86"
    assert bobc("build", PLAN, "--target", "sm_86", "--emit-images", images).returncode == 0
    pipeline = subprocess.run(f"{sys.executable} -m bobc diff {hosts['plan']} {images} | head -1; "
                              "echo \"status=${PIPESTATUS[0]}\"", shell=True, executable="/bin/bash",
                              capture_output=True, text=True)
    assert pipeline.stdout.strip().endswith("status=1"), pipeline.stdout + pipeline.stderr
    assert "Traceback" not in pipeline.stderr and "Exception ignored" not in pipeline.stderr


def test_dump_names_the_instruction_nvdisasm_refuses(hosts, tmp_path):
    from bobc import nvtools

    if nvtools.nvdisasm() is None:
        pytest.skip("nvdisasm is not installed (pip install nvidia-cuda-nvdisasm)")
    from bobc.nvidia.decode import load_images

    images = load_images(hosts["plan"])
    region = images.manifest["regions"][1]
    flipped = tmp_path / "flipped"
    data = bytearray(hosts["plan"].read_bytes())
    data[_section_offset(hosts["plan"], "program") + region["place"]] = 0xFF      # an opcode nvdisasm refuses
    flipped.write_bytes(bytes(restamp(data)))      # a consistent host (a damaged one is refused, exit 2)
    done = bobc("dump", flipped)
    assert done.returncode == 0, done.stderr
    assert "not installed" not in done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("region[1].code[")]
    assert "(nvdisasm refuses it: " in lines[0]
    assert all("refuses" not in line for line in lines[1:]) and "S2R" in lines[1]     # the rest keep their text
    diff = bobc("diff", hosts["plan"], flipped)
    assert diff.returncode == 1 and "-> (nvdisasm refuses it: " in diff.stdout


def test_inspect_dump_diff_read_a_native_host(hosts, tmp_path):
    native = hosts["native"]
    shown = bobc("inspect", native)
    assert shown.returncode == 0, shown.stderr
    assert "native physical program host" in shown.stdout and "embedded program" in shown.stdout
    info = json.loads(bobc("inspect", native, "--json").stdout)
    assert info["kind"] == "native" and set(info["embedded"]) == {"program", "qmd", "push", "gpfifo"}
    assert info["embedded"]["qmd"]["bytes"] == len(b"qmd-image")
    extracted = tmp_path / "x"
    assert bobc("inspect", native, "--extract", extracted).returncode == 0
    assert (extracted / "embedded-qmd.bin").read_bytes() == b"qmd-image"
    dump = bobc("dump", native)
    assert dump.returncode == 0 and "command[0] = " in dump.stdout and "embedded[2].identity = " in dump.stdout
    assert bobc("diff", native, native).returncode == 0
    other = bobc("diff", native, hosts["native2"])
    assert other.returncode == 1 and "embedded.images: 0x4 -> 0x0" in other.stdout


def test_a_damaged_native_host_is_refused_by_name(hosts, tmp_path):
    damaged = tmp_path / "damaged"
    data = bytearray(hosts["native2"].read_bytes())
    data[-40] ^= 0xFF                                   # the program's last byte: its CRC no longer matches
    damaged.write_bytes(bytes(data))
    for command in ("inspect", "dump"):
        done = bobc(command, damaged)
        assert done.returncode == 1 and "damaged host file" in done.stderr and "Traceback" not in done.stderr
    assert bobc("diff", damaged, hosts["native2"]).returncode == 2


def test_inspect_dump_diff_agree_on_a_host_without_its_version_section(hosts, tmp_path):
    """A host whose .bobc.version section was stripped cannot check its images and refuses to run
    (exit 9): inspect, dump and diff each say it is damaged (exit 1; diff 2), by the one check
    (bobc.host.version.check_images); inspect still shows its sections first."""
    stripped = tmp_path / "bob-host"
    done = subprocess.run(["objcopy", "--remove-section", ".bobc.version", str(hosts["plan"]), str(stripped)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for command in (("inspect", stripped), ("dump", stripped), ("diff", hosts["plan"], stripped)):
        said = bobc(*command)
        # a file refused: 1; diff's 2 is "cannot compare" (probe s30 cli finding 7)
        assert said.returncode == (2 if command[0] == "diff" else 1), (command, said.stdout, said.stderr)
        assert "is damaged: it has no version section" in said.stderr, (command, said.stderr)
    assert "refuses to run, exit 9" in bobc("inspect", stripped).stdout


def test_emit_images_of_a_native_host_entry_says_where_its_images_are(tmp_path):
    """--emit-images writes a native host's images with the manifest their encoding made
    (tests/diff/test_diff_native_images_s38.py); images no encoding made (this plan's byte strings)
    have none: the build says so and what shows them (exit 2, nothing written), where it said the entry
    'should be a value of family NvidiaPlanHost, got the byte string b'\\x7fELF...'."""
    folder = tmp_path / "images"
    done = bobc("build", NATIVE, "--entry", "arithmeticArtifact", "--emit-images", folder)
    assert done.returncode == 2, done.stderr
    assert "the four images arithmeticArtifact embeds are no image set bobc encoded" in done.stderr
    assert "bobc dump HOST" in done.stderr and "x7fELF" not in done.stderr
    assert not folder.exists()


def test_dump_names_operand_kinds_as_the_program_format_does(hosts):
    """A StateWord operand (kind 2, specs/Runtime/NativePhysicalProgram.bob) is `state:`, a MappedWord
    (kind 3) `mapped:`; dump had shown them `arg:` and `state:` (probe s38 diffnative 2).  Commands.bob's
    first AddNatural adds two state words (phWord)."""
    from bobc.native import program
    from bobc.native.artifact import split

    decoded = program.decode(split(hosts["native2"].read_bytes(), "arith").program)
    kinds = {kind for command in decoded.commands for kind, _ in command.v}
    assert 2 in kinds
    dump = bobc("dump", hosts["native2"]).stdout
    lines = [line for line in dump.splitlines() if line.startswith("command[")]
    for index, command in enumerate(decoded.commands):
        for kind, value in command.v:
            label = {0: "imm", 1: "slot", 2: "state", 3: "mapped"}[kind]
            assert f"{label}:{value:#x}" in lines[index], (lines[index], kind)
    assert not any(" arg:" in line for line in lines)


def test_diff_help_says_what_it_takes_and_the_native_verdict():
    """README's diff row: two native hosts are compared ("the same images and commands"), a native
    host against a plan host is exit 2; --help said neither (probe s38 diffnative 3)."""
    text = " ".join(bobc("diff", "--help").stdout.split())
    assert "native physical program hosts" in text and "the same commands" in text
    assert "a native host against a plan host" in text
