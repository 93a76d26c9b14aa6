"""A native host that embeds device images carries their manifest as a .bobc.manifest section of
its interpreter (bobc.native.build.carry_manifest), so `bobc diff` of two host EXECUTABLES decodes
their images field by field as it does two `--emit-images` folders (probe s39 nativediff2,
finding 1): a kernel's changed instruction is one `region[..].code` line, not an embedded image's
sha256 and a LoadImage command's raw bytes.  The host's program, trailer and embedded images are
byte for byte what the plan gave (checked against the folder the same build wrote), and the host
still finds them (`HOST --help` runs, which reads its own file: runtime_c/native_host.c)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples/partitioned_regression"
UUID = "".join(f"\\x{i:02x}" for i in range(16))
PAIR = f"""module Pair

import PartitionedRegression.Build.Workers

def worker0 : Bytes = (coordinateH200Worker b"{UUID}" 0 0 47611 0 1 64)
"""


def bobc(*args, env=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=900, env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("carry")
    (root / "plan").mkdir()
    plan = root / "plan" / "Pair.bob"
    plan.write_text(PAIR)
    # a copy of the seed's modules whose coordinate-update kernel subtracts no more: one instruction
    changed = root / "changed"
    shutil.copytree(SEED / "PartitionedRegression", changed / "PartitionedRegression")
    kernel = changed / "PartitionedRegression/Realization/coordinate-update.sass"
    text = kernel.read_text()
    assert text.count("DADD R12, R12, -R22") == 1
    kernel.write_text(text.replace("DADD R12, R12, -R22", "DADD R12, R12, R22"))
    env = dict(os.environ, BOBC_CACHE_DIR=str(root / "cache"))
    out = {"root": root}
    for name, include in (("a", SEED), ("b", changed)):
        host, images = root / f"host-{name}", root / f"images-{name}"
        done = bobc("build", plan, "--entry", "worker0", "--target", "sm_90", "-I", include, "-o", host,
                    "--emit-images", images, env=env)
        assert done.returncode == 0, done.stderr
        out[name] = host
        out[f"images-{name}"] = images
    # again, warm: the stored artifact and its manifest give the same bytes
    again = root / "host-a-again"
    done = bobc("build", plan, "--entry", "worker0", "--target", "sm_90", "-I", SEED, "-o", again, env=env)
    assert done.returncode == 0, done.stderr
    out["again"] = again
    return out


def _footer_components(data: bytes) -> tuple[int, dict]:
    """(host length, {kind: bytes}) read off the embedded artifact's footer (docs/native-host.md)."""
    assert data[-16:-8] == b"NPEMBED1"
    offset, end = int.from_bytes(data[-8:], "little"), len(data) - 92
    assert int.from_bytes(data[end + 68:end + 76], "little") == offset
    found, at = {}, offset
    while at < end:
        kind, length = int.from_bytes(data[at:at + 4], "little"), int.from_bytes(data[at + 68:at + 76], "little")
        found[kind] = data[at + 76:at + 76 + length]
        at += 76 + length
    return offset, found


def test_the_host_carries_its_images_manifest_and_the_same_images_and_program(built):
    lief = pytest.importorskip("lief")
    host, images = built["a"], built["images-a"]
    data = host.read_bytes()
    elf = lief.parse(str(host))
    section = elf.get_section(".bobc.manifest")
    assert section is not None
    carried = json.loads(bytes(section.content))
    folder = json.loads((images / "manifest.json").read_text())
    assert carried == {k: v for k, v in folder.items() if k != "native_program"}
    assert elf.get_section(".bobc.version") is not None
    host_size, components = _footer_components(data)
    for kind, name in ((1, "program.bin"), (2, "qmd.bin"), (3, "push.bin"), (4, "gpfifo.bin")):
        assert components[kind] == (images / name).read_bytes(), name
    program = (images / "native-program.bin").read_bytes()
    assert data[host_size - 8:host_size] == b"NPHYPRG1"
    assert data[host_size - 36 - len(program):host_size - 36] == program
    # the host finds its program and images in its own file
    done = subprocess.run([str(host), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert built["again"].read_bytes() == data


def test_two_host_executables_diff_as_their_folders(built):
    done = bobc("diff", built["a"], built["b"])
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    folders = bobc("diff", built["images-a"], built["images-b"])
    assert folders.returncode == 1
    # the same decoded lines as the folders' (whose manifest also names native-program.bin's sha256)
    code = [line for line in lines if line.startswith("region[")]
    assert len(code) == 1 and "(coordinate-update)" in code[0], done.stdout
    assert code == [line for line in folders.stdout.splitlines() if line.startswith("region[")]
    assert not any(line.startswith(("embedded[", "command[")) for line in lines), done.stdout
    assert any(line.startswith("native_program.mapped: 1 command -> the same images, changed") for line in lines)
    assert lines[-1] == f"3 difference(s) between {built['a']} and {built['b']}"


def test_identical_and_host_against_its_folder_are_the_same(built):
    for a, b in ((built["a"], built["again"]), (built["a"], built["images-a"]), (built["images-b"], built["b"])):
        done = bobc("diff", a, b)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1] == f"{a} and {b} hold the same images and commands"


def test_dump_decodes_the_carried_images(built):
    done = bobc("dump", built["a"])
    assert done.returncode == 0, done.stderr
    keys = {line.split(" = ", 1)[0] for line in done.stdout.splitlines()}
    assert {"host.manifest.sha256", "launch[0].grid", "region[1].identity"} <= keys
    folder = bobc("dump", built["images-a"])
    commands = [line for line in done.stdout.splitlines() if line.startswith("command[")]
    assert commands and commands == [line for line in folder.stdout.splitlines() if line.startswith("command[")]


def test_a_damaged_manifest_section_cannot_be_compared(built, tmp_path):
    data = bytearray(built["a"].read_bytes())
    at = data.find(b'"launches"')
    assert at > 0
    data[at + 1:at + 2] = b"L"          # the section says "Launches": no manifest bobc wrote
    damaged = tmp_path / "damaged"
    damaged.write_bytes(bytes(data))
    done = bobc("diff", built["a"], damaged)
    assert done.returncode == 2 and done.stdout == ""
    assert f"{damaged} (.bobc.manifest)" in done.stderr and "lacks launches" in done.stderr


def test_inspect_names_the_section_and_refuses_a_damaged_one(built, tmp_path):
    """README's inspect row: a host whose manifest section is no manifest is refused, exit 1, as dump
    refuses it; inspect of a native host said it decodes while dump refused it."""
    done = bobc("inspect", "--json", built["a"])
    assert done.returncode == 0, done.stderr
    assert ".bobc.manifest" in json.loads(done.stdout)["sections"]
    data = bytearray(built["a"].read_bytes())
    at = data.find(b'"launches"')
    data[at + 1:at + 2] = b"L"
    damaged = tmp_path / "damaged"
    damaged.write_bytes(bytes(data))
    for command in ("inspect", "dump"):
        done = bobc(command, damaged)
        assert done.returncode == 1 and "lacks launches" in done.stderr, (command, done.stderr)
