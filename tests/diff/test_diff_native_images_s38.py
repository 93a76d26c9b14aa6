"""`bobc build PLAN --entry DEF --emit-images DIR` for a native host (seed 004's, Coppelius.Build.
DirectArtifact): the images it embeds with the manifest their encoding made and its native program,
so `bobc diff` of an sm_90 and an sm_86 build reads each WriteMapped address as the launch parameter
word it writes instead of 1,422 raw command lines (probe s38 diffnative, finding 1)."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/coppelius/Coppelius/Build/DirectArtifact.bob"
NATIVE = REPO / "tests/native/plans/Native/Commands.bob"


def bobc(*args, **kw):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("native-images")
    out = {}
    for target in ("sm_90", "sm_86"):
        images, host = folder / f"images-{target}", folder / f"host-{target}"
        done = bobc("build", PLAN, "--entry", "coppeliusHost", "--target", target, "--emit-images", images, "-o", host)
        assert done.returncode == 0, done.stderr
        out[target] = (images, host)
    return out


def _embedded(host: Path) -> dict:
    """The host's embedded components by kind, read off its footer (docs/native-host.md's layout)."""
    data = host.read_bytes()
    assert data[-16:-8] == b"NPEMBED1"
    at, end, found = int.from_bytes(data[-8:], "little"), len(data) - 92, {}
    while at < end:
        kind, length = int.from_bytes(data[at:at + 4], "little"), int.from_bytes(data[at + 68:at + 76], "little")
        found[kind] = data[at + 76:at + 76 + length]
        at += 76 + length
    return found


def test_the_folder_holds_the_hosts_own_images_and_program(built):
    images, host = built["sm_90"]
    embedded = _embedded(host)
    for kind, name in ((1, "program.bin"), (2, "qmd.bin"), (3, "push.bin"), (4, "gpfifo.bin")):
        assert (images / name).read_bytes() == embedded[kind], name
    manifest = json.loads((images / "manifest.json").read_text())
    program = (images / "native-program.bin").read_bytes()
    assert manifest["native_program"] == {"file": "native-program.bin", "bytes": len(program),
                                          "sha256": hashlib.sha256(program).hexdigest()}
    # the program is the host's: what follows the interpreter, up to its trailer
    data = host.read_bytes()[:int.from_bytes(host.read_bytes()[-8:], "little")]
    length = int.from_bytes(data[-16:-8], "little")
    assert data[-36 - length:-36] == program


def _step_word_offsets(images: Path) -> set:
    """Each WriteMapped address of the program, counted from the target's parameter base of the
    launch whose parameter block holds it: read from the raw files (the LoadEmbedded of the program
    image gives its host address)."""
    manifest = json.loads((images / "manifest.json").read_text())
    data = (images / "native-program.bin").read_bytes()
    # WriteMapped: code 10 then address (8), width (8), an operand (kind 1 + 8); LoadEmbedded: 35, kind, host
    base = None
    offsets = set()
    for at in range(len(data) - 26):
        if data[at] == 35 and int.from_bytes(data[at + 1:at + 9], "little") == 1 and base is None:
            base = int.from_bytes(data[at + 9:at + 17], "little")
    assert base is not None
    for at in range(len(data) - 26):
        if data[at] == 10 and int.from_bytes(data[at + 9:at + 17], "little") == 4:
            address = int.from_bytes(data[at + 1:at + 9], "little")
            for launch in manifest["launches"]:
                start = base + launch["parameter_offset"]
                if start <= address < start + manifest["sizes"]["parameter_block"]:
                    offsets.add(address - start - manifest["parameter_base"])
    return offsets


def test_diff_across_targets_reads_write_mapped_as_parameter_words(built):
    a, b = built["sm_90"][0], built["sm_86"][0]
    # docs/coppelius-host.md: the step word is at the parameter address + 48, on both targets
    assert 0x30 in _step_word_offsets(a) and 0x30 in _step_word_offsets(b)
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    commands = [line for line in done.stdout.splitlines() if line.startswith("command[")]
    assert not [line for line in commands if "WriteMapped" in line or "Submit" in line], commands[:3]
    assert len(commands) < 10, commands
    mapped = [line for line in done.stdout.splitlines() if line.startswith("native_program.mapped:")]
    assert len(mapped) == 1 and "the same image places, moved" in mapped[0]
    dump = bobc("dump", a, "--no-code")
    assert dump.returncode == 0, dump.stderr
    assert any(line.startswith("command[") and "WriteMapped" in line and "param+0x30" in line
               for line in dump.stdout.splitlines())


def test_diff_of_a_folder_with_itself_is_0_and_a_stale_program_is_refused(built, tmp_path):
    a = built["sm_90"][0]
    assert bobc("diff", a, a).returncode == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in a.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    program = bytearray((copy / "native-program.bin").read_bytes())
    program[-1] ^= 1
    (copy / "native-program.bin").write_bytes(bytes(program))
    done = bobc("diff", a, copy)
    assert done.returncode == 2 and "native-program.bin" in done.stderr and "the manifest says" in done.stderr


def test_a_native_host_and_the_folder_its_build_wrote_hold_the_same_images_and_commands(built):
    """(probe s38 diffalign, finding 3: a native host against a native image folder was refused, exit 2)"""
    images, host = built["sm_90"]
    for a, b in ((host, images), (images, host)):
        done = bobc("diff", a, b)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1] == f"{a} and {b} hold the same images and commands"
    assert bobc("diff", built["sm_86"][1], images).returncode == 1


def test_native_host_without_encoded_images_is_refused(tmp_path):
    """Commands.bob's artifact embeds four byte strings no whole-program plan encoded: no manifest
    describes them, so --emit-images is refused (exit 2) and nothing written."""
    folder = tmp_path / "images"
    done = bobc("build", NATIVE, "--entry", "arithmeticArtifact", "--emit-images", folder)
    assert done.returncode == 2, done.stderr
    assert "no image set bobc encoded" in done.stderr and not folder.exists()
