"""`bobc inspect` of a native physical program host says what a user needs to run it and to tell
two apart, read from its commands alone (probe s29 inspect finding 8): its file arguments and
whether each is read or written, its peers' address:port and role, the GPU it opens, its Repeat
counts and Submit commands -- and the host's usage refusal lists the same arguments, the C host
and the reference interpreter byte for byte."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from native_helpers import PLANS, load_module, program_bytes, write_host


@pytest.fixture(scope="module")
def inspected():
    return load_module(PLANS / "Native" / "Inspected.bob")


def inspect(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", "inspect", *map(str, args)], capture_output=True, text=True)


def named_host(stderr: bytes) -> bytes:
    """The C host's line with its path (argv[0], the copy in its run folder) as the reference's name."""
    return re.sub(rb"^native: usage: \S*/host", b"native: usage: host", stderr)


def test_inspect_names_arguments_peers_device_and_submits(inspected, tmp_path):
    host = write_host(tmp_path, "inspected", program_bytes(inspected, "inspected"))
    shown = inspect(host)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "  identity native-inspected-v1" in lines
    assert ("  run      ./inspected ARG0 (read) ARG1 (unused) ARG2 (read and written) ARG3 (written)  (unused: "
            "no command reads or writes it, but the host takes it)") in lines
    assert "  peer     listens at 10.0.0.5:5000 (command 2, Connect)" in lines
    assert "  peer     connects to 127.0.0.1:40001 (command 3, Connect)" in lines
    assert "  device   GPU-00112233-4455-6677-8899-aabbccddeeff (command 4, OpenDevice)" in lines
    assert "  repeats  3 (command 6)" in lines
    assert "  submits  3 Submit command(s) of 14 commands (a Submit inside a Repeat runs once a pass)" in lines
    info = json.loads(inspect(host, "--json").stdout)["program"]
    assert info["argument_uses"] == ["read", "unused", "read and written", "written"]
    assert info["peers"] == [{"command": 2, "address": "10.0.0.5", "port": 5000, "listens": True, "slot": 0},
                             {"command": 3, "address": "127.0.0.1", "port": 40001, "listens": False, "slot": 1}]
    assert info["devices"] == [{"command": 4, "uuid": "GPU-00112233-4455-6677-8899-aabbccddeeff", "any": False}]
    assert info["repeats"] == [{"command": 6, "count": 3}]
    assert info["submits"] == 3 and info["commands"] == 14 and info["request_options"] == {}


def test_inspect_without_file_arguments(inspected, tmp_path):
    host = write_host(tmp_path, "bare", program_bytes(inspected, "inspectedBare"))
    shown = inspect(host)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "  run      no file arguments" in lines
    assert "  device   any: the first GPU the driver lists (command 0, OpenDevice)" in lines
    assert "  submits  0 Submit command(s) of 2 commands" in lines
    assert not any(line.startswith(("  peer", "  repeats")) for line in lines)


def test_usage_lists_what_each_argument_is(inspected, both):
    code = program_bytes(inspected, "inspected")
    c, reference = both(code, {}, ["in.bin"], name="inspected-usage")
    assert c.status == reference.status == 2
    assert named_host(c.stderr) == reference.stderr == (b"native: usage: host ARG0 (read) ARG1 (unused) ARG2 (read and written) "
                                            b"ARG3 (written): the program names 4 file arguments, 1 given (it carries "
                                            b"no names for them: the plan that built program native-inspected-v1 "
                                            b"says what each is)\n")


def test_usage_of_a_program_without_file_arguments(inspected, both):
    """ARG0 ... ARG-1 (the reference) and ARG18446744073709551615 (the C host) before."""
    c, reference = both(program_bytes(inspected, "inspectedBare"), {}, ["extra"], name="bare-usage")
    assert c.status == reference.status == 2
    assert named_host(c.stderr) == reference.stderr == b"native: usage: host: the program names 0 file arguments, 1 given\n"


def dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", "dump", *map(str, args)], capture_output=True, text=True)


def test_dump_shows_peers_and_device_as_inspect_does(inspected, tmp_path):
    """`bobc dump` shows a Connect's address:port and an OpenDevice's GPU (or `any`), read with
    inspect's helpers, where it showed their bytes' sha256 (probe s29 nits finding 1)."""
    host = write_host(tmp_path, "inspected", program_bytes(inspected, "inspected"))
    shown = dump(host)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    commands = [line for line in lines if line.startswith("command[")]
    assert "command[2] = Connect 0x1 0x0 10.0.0.5:5000" in commands
    assert "command[3] = Connect 0x0 0x1 127.0.0.1:40001" in commands
    assert "command[4] = OpenDevice GPU-00112233-4455-6677-8899-aabbccddeeff" in commands
    assert not any("sha256" in line for line in commands)
    assert "command[5] = Map 0x10000000 0x200000 0x2000 0x0 'channel'" in commands     # the others as before
    listed = json.loads(dump(host, "--json").stdout)
    assert {"key": "command[4]", "value": "OpenDevice GPU-00112233-4455-6677-8899-aabbccddeeff"}.items() <= \
        next(line for line in listed if line["key"] == "command[4]").items()
    bare = dump(write_host(tmp_path, "bare", program_bytes(inspected, "inspectedBare"))).stdout.splitlines()
    assert "command[0] = OpenDevice any" in bare
