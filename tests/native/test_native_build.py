"""`bobc build --entry DEF` of a native artifact, the writer's determinism, `bobc run
... native`, and hosts that refuse a damaged file or program by name (exit 9)."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from native_helpers import PLANS, program_bytes, run_c

COMMANDS = PLANS / "Native" / "Commands.bob"
BOBC = [sys.executable, "-m", "bobc"]


def bobc(*arguments, cwd=None):
    return subprocess.run([*BOBC, *arguments], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_build_writes_the_native_host_and_it_runs(tmp_path):
    built = bobc("build", str(COMMANDS), "--entry", "arithmeticHost", "-o", str(tmp_path / "host"))
    assert built.returncode == 0, built.stderr
    host = tmp_path / "host"
    data = host.read_bytes()
    assert data[:4] == b"\x7fELF" and struct.unpack_from("<H", data, 18)[0] == 62
    assert host.stat().st_mode & 0o777 == 0o755
    again = bobc("build", str(COMMANDS), "--entry", "arithmeticHost", "-o", str(tmp_path / "again"))
    assert again.returncode == 0 and (tmp_path / "again").read_bytes() == data       # deterministic
    (tmp_path / "in.bin").write_bytes(struct.pack("<dd", 3.0, 4.0) + bytes(16))
    outcome = run_c(host, tmp_path, ["in.bin", "out.bin"])
    assert outcome.status == 0 and struct.unpack_from("<d", outcome.files["out.bin"], 0)[0] == 7.0
    run = bobc("run", str(COMMANDS), "native", "in.bin", "ref.bin", "--reference", "--entry", "arithmetic",
               cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "ref.bin").read_bytes() == outcome.files["out.bin"]


def test_embedded_artifact_runs_and_carries_its_images(tmp_path):
    built = bobc("build", str(COMMANDS), "--entry", "arithmeticArtifact", "-o", str(tmp_path / "artifact"))
    assert built.returncode == 0, built.stderr
    from bobc.native.artifact import split

    data = (tmp_path / "artifact").read_bytes()
    parts = split(data, "artifact")
    assert [(kind, image) for kind, _, image in parts.components] == [
        (1, b"program-image"), (2, b"qmd-image"), (3, b"push-image"), (4, b"ring-image")]
    assert parts.components[0][1] == b"native-test-\x01"
    version = subprocess.run([str(tmp_path / "artifact"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0
    assert "native-arithmetic-v1" in version.stdout and "embedded device images: 4" in version.stdout
    (tmp_path / "in.bin").write_bytes(struct.pack("<dd", 3.0, 4.0) + bytes(16))
    assert run_c(tmp_path / "artifact", tmp_path, ["in.bin", "out.bin"]).status == 0


def test_an_entry_of_another_type_is_refused_by_name(tmp_path):
    refused = bobc("build", str(COMMANDS), "--entry", "notAHost", "-o", str(tmp_path / "x"))
    assert refused.returncode != 0 and "notAHost is of type Nat" in refused.stderr
    assert not (tmp_path / "x").exists()


def damaged_copy(tmp_path, data: bytes, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    path.chmod(0o755)
    return path


def test_damaged_hosts_are_refused_by_name(commands, tmp_path):
    from bobc.native.artifact import DamagedHost, split
    from bobc.native.writer import native_host

    good = native_host(program_bytes(commands, "loops"), "sm_90")
    end = len(good)
    flipped = bytearray(good)
    flipped[end - 36 - 20] ^= 0x40                     # a byte inside the program
    cases = {
        "flipped": (bytes(flipped), "the program's CRC-32 is"),
        "truncated": (good[:-1], 'no native program trailer ("NPHYPRG1")'),
        "overlong": (good[:end - 28] + (10 ** 9).to_bytes(8, "little") + good[end - 8:],
                     "the program's length 1000000000 runs past"),
    }
    for name, (data, reason) in cases.items():
        host = damaged_copy(tmp_path, data, name)
        done = subprocess.run([str(host), "n.bin", "out.bin"], capture_output=True, cwd=tmp_path)
        assert done.returncode == 9, name
        assert reason in done.stderr.decode(), (name, done.stderr)
        with pytest.raises(DamagedHost) as refused:
            split(data, str(host))
        assert f"native: {refused.value}\n" == done.stderr.decode()


def test_damaged_artifact_footer(commands, tmp_path):
    from bobc.native.artifact import DamagedHost, split

    built = bobc("build", str(COMMANDS), "--entry", "arithmeticArtifact", "-o", str(tmp_path / "artifact"))
    assert built.returncode == 0, built.stderr
    data = bytearray((tmp_path / "artifact").read_bytes())
    data[-24] ^= 1          # the footer's host length (kind 4, identity 64, LENGTH 8, magic 8, offset 8)
    host = damaged_copy(tmp_path, bytes(data), "footer")
    done = subprocess.run([str(host)], capture_output=True)
    assert done.returncode == 9
    assert b"the embedded artifact's footer does not match its host" in done.stderr
    with pytest.raises(DamagedHost):
        split(bytes(data), "footer")


def test_a_program_the_host_would_refuse_is_refused_at_build_and_by_the_host(commands, tmp_path):
    from bobc.errors import BobcError
    from bobc.native.interpreter import interpreter_bytes
    from bobc.native.artifact import trailer
    from bobc.native.writer import native_host
    from bobc.reference.native_program import run_program

    code = bytearray(program_bytes(commands, "loops"))
    code[8:16] = (1).to_bytes(8, "little")             # one slot; the program sets slot 1
    expected = "command 4 (Set): slot 1, but the program has 1 slot"
    with pytest.raises(BobcError) as refused:
        native_host(bytes(code), "sm_90")
    assert expected in refused.value.message
    host = damaged_copy(tmp_path, interpreter_bytes() + trailer(bytes(code), "sm_90"), "bad")
    done = subprocess.run([str(host), "n.bin", "out.bin"], capture_output=True)
    assert done.returncode == 9
    assert done.stderr.decode() == f"native: {host}: damaged host file: its program: {expected}; rebuild it\n"
    stderr = io.BytesIO()
    assert run_program(bytes(code), ["n.bin", "out.bin"], name=str(host), stderr=stderr) == 9
    assert stderr.getvalue().decode() == done.stderr.decode()
    code[32 + len(b"native-loops-v1")] = 200          # the first command's code
    with pytest.raises(BobcError) as refused:
        native_host(bytes(code), "sm_90")
    assert "unknown command code 200 (command 0)" in refused.value.message


RESOURCE = PLANS / "Native" / "Resource.bob"


def test_resource_host_builds_and_maps_its_layout(tmp_path):
    """Seed 003's path: nvidiaResourceELF (compiler-native-encode of NvidiaResourceHost)."""
    built = bobc("build", str(RESOURCE), "--entry", "resourceHost", "-o", str(tmp_path / "host"))
    assert built.returncode == 0, built.stderr
    outcome = run_c(tmp_path / "host", tmp_path, ["word.bin"])
    assert outcome.status == 0, outcome.stderr
    assert outcome.files["word.bin"] == bytes(8) + b"ECRUOSER"
    run = bobc("run", str(RESOURCE), "native", "ref.bin", "--reference", "--entry", "resourceHost", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "ref.bin").read_bytes() == outcome.files["word.bin"]


def test_resource_host_with_a_foreign_layout_is_refused(tmp_path):
    refused = bobc("build", str(RESOURCE), "--entry", "foreignHost", "-o", str(tmp_path / "host"))
    assert refused.returncode != 0
    assert "do not admit the host's layout" in refused.stderr and "linux-x86_64-ampere-580" in refused.stderr
    assert not (tmp_path / "host").exists()


def test_inspect_dump_diff_say_a_native_host_cut_short_is_damaged_and_a_missing_one_missing(commands, tmp_path):
    """A native host that lost its end (a copy cut short) is a damaged native host for `bobc
    inspect`, `dump` and `diff`, with the host's own reason, not "carries no bobc images" or "is
    not a native host"; a missing file is missing, whichever side of `diff` it is on."""
    from bobc.native.writer import native_host

    good = damaged_copy(tmp_path, native_host(program_bytes(commands, "loops"), "sm_90"), "good")
    data = good.read_bytes()
    cut = {"one-byte-short": data[:-1], "half": data[:len(data) // 2]}
    for name, content in cut.items():
        host = damaged_copy(tmp_path, content, name)
        for command in ("inspect", "dump"):
            done = bobc(command, str(host))
            assert done.returncode == 1, (name, command, done.stderr)
            assert f'{host}: damaged host file: no native program trailer ("NPHYPRG1")' in done.stderr, done.stderr
        for a, b in ((good, host), (host, good)):
            done = bobc("diff", str(a), str(b))
            assert done.returncode == 2 and "damaged host file" in done.stderr and "cannot be compared" not in \
                done.stderr, done.stderr
    for a, b in ((good, tmp_path / "nosuch"), (tmp_path / "nosuch", good)):
        done = bobc("diff", str(a), str(b))
        assert done.returncode == 2 and f"no such image folder or host: {tmp_path / 'nosuch'}" in done.stderr
