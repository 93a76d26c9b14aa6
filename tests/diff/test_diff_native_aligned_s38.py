"""`bobc diff` of two native programs aligns their commands as a sequence (as host plan steps are),
so one inserted or removed command is one line and the commands after it are compared with their
counterparts (probe s38 diffalign, finding 1: they were paired by position, so seed 003's worker0
against worker1 listed every later command; and a Repeat's or BranchZero's line appeared with the
same text on both sides, its child indices shifted).

The programs are written here byte by byte from docs/platform.md's command table, with a known
insertion, change and removal, and the diff must name exactly those: two native hosts, and two
image folders holding the programs (`bobc build --entry DEF --emit-images`'s native-program.bin)."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests/golden/bob-sm_90"

END, FAIL, STORE, BRANCH_ZERO, REPEAT = 0, 2, 4, 13, 12
IMMEDIATE = 0


def nat(value: int) -> bytes:
    return value.to_bytes(8, "little")


def store(address: int, value: int) -> bytes:        # Store: n (state address), o (operand)
    return bytes([STORE]) + nat(address) + bytes([IMMEDIATE]) + nat(value)


def fail(code: int, message: bytes) -> bytes:        # Fail: n (exit code), b (message)
    return bytes([FAIL]) + nat(code) + nat(len(message)) + message


def branch_zero(value: int) -> bytes:                # BranchZero: o; its two branches follow, in order
    return bytes([BRANCH_ZERO, IMMEDIATE]) + nat(value)


def repeat(count: int) -> bytes:                     # Repeat: o; its body, then its tail
    return bytes([REPEAT, IMMEDIATE]) + nat(count)


def program(commands: list[bytes]) -> bytes:
    identity = b"aligned"
    return b"NPHY" + (1).to_bytes(4, "little") + nat(0) + nat(4096) + nat(len(identity)) + identity + b"".join(commands)


# a: BranchZero [Fail] [Repeat 3 [Store 0..3, End] tail: Store 4..9, End], numbered in byte order
A = [branch_zero(0), fail(5, b"never"), repeat(3)] + [store(8 * k, k) for k in range(4)] + [bytes([END])] + \
    [store(8 * k, k) for k in range(4, 10)] + [bytes([END])]
# b: one Store inserted in the Repeat's body after a's command 4 (Store 8*1), a's command 10 (Store 0x30 = 6)
# changed, a's command 13 (Store 0x48 = 9) removed: everything after the insertion stands one later
INSERTED = store(0x100, 77)
CHANGED = store(8 * 6, 66)
B = A[:5] + [INSERTED] + A[5:10] + [CHANGED] + A[11:13] + A[14:]
EXPECTED = {
    "command[+5]": (None, "Store 0x100 imm:0x4d"),
    "command[10->11]": ("Store 0x30 imm:0x6", "Store 0x30 imm:0x42"),
    "command[13]": ("Store 0x48 imm:0x9", None),
}


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True)


def _commands(stdout: str) -> dict:
    return {d["key"]: (d["a"], d["b"]) for d in json.loads(stdout) if d["key"].startswith("command[")}


def test_hand_written_programs_are_what_the_test_says():
    from bobc.native import program as decoding

    a, b = decoding.decode(program(A)), decoding.decode(program(B))
    assert len(a.commands) == len(A) and len(b.commands) == len(B) == len(A)
    assert a.commands[2].name == "Repeat" and a.commands[2].child == [3, 8]
    assert b.commands[2].child == [3, 9]           # the Repeat's tail moved: its own bytes did not


def test_two_native_hosts_name_exactly_the_inserted_changed_and_removed_commands(tmp_path):
    from bobc.native.writer import native_host

    hosts = []
    for name, commands in (("a", A), ("b", B)):
        host = tmp_path / name
        host.write_bytes(native_host(program(commands), "sm_90"))
        hosts.append(host)
    done = bobc("diff", *hosts, "--json")
    assert done.returncode == 1, done.stderr
    assert _commands(done.stdout) == EXPECTED
    text = bobc("diff", *hosts)
    assert text.returncode == 1
    assert [line.split(":")[0] for line in text.stdout.splitlines() if line.startswith("command[")] == \
        ["command[+5]", "command[10->11]", "command[13]"]         # in program order
    assert bobc("diff", hosts[0], hosts[0]).returncode == 0


def _folder(where: Path, code: bytes) -> Path:
    """A copy of a golden image folder holding `code` as its native program (the manifest names it)."""
    shutil.copytree(GOLDEN, where)
    (where / "native-program.bin").write_bytes(code)
    manifest = json.loads((where / "manifest.json").read_text())
    manifest["native_program"] = {"file": "native-program.bin", "bytes": len(code),
                                  "sha256": hashlib.sha256(code).hexdigest()}
    (where / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return where


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="no golden images")
def test_two_image_folders_name_exactly_the_inserted_changed_and_removed_commands(tmp_path):
    a, b = _folder(tmp_path / "a", program(A)), _folder(tmp_path / "b", program(B))
    done = bobc("diff", a, b, "--json")
    assert done.returncode == 1, done.stderr
    assert _commands(done.stdout) == EXPECTED
    other = {d["key"] for d in json.loads(done.stdout) if not d["key"].startswith("command[")}
    assert other == {"native_program.sha256"}, other       # as many commands, as many bytes
    # the other way round: the insertion is a's own, the removal b's
    back = bobc("diff", b, a, "--json")
    assert _commands(back.stdout) == {"command[5]": ("Store 0x100 imm:0x4d", None),
                                      "command[11->10]": ("Store 0x30 imm:0x42", "Store 0x30 imm:0x6"),
                                      "command[+13]": (None, "Store 0x48 imm:0x9")}


def load_image(address: int, data: bytes) -> bytes:  # LoadImage: n (host address), b (the image's bytes)
    return bytes([18]) + nat(address) + nat(len(data)) + data


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="no golden images")
def test_a_load_image_of_a_changed_image_is_not_called_a_move(tmp_path):
    """Both programs load program.bin at the same address; b's program.bin has one instruction word
    changed.  Nothing moved, so the folded line must not say that only an address differs (probe s38
    diffalign, finding 2: it said `the same image places, moved ... so only its address or entry
    value differs`)."""
    code = (GOLDEN / "program.bin").read_bytes()
    manifest = json.loads((GOLDEN / "manifest.json").read_text())
    region = manifest["regions"][0]
    changed = bytearray(code)
    changed[region["place"]] ^= 1            # the first instruction's lowest bit (its opcode)
    a = _folder(tmp_path / "a", program([load_image(0x7F0000000000, code), bytes([END])]))
    b = _folder(tmp_path / "b", program([load_image(0x7F0000000000, bytes(changed)), bytes([END])]))
    (b / "program.bin").write_bytes(bytes(changed))
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith(f"region[0].code[{0:#06x}]") for line in lines), lines
    mapped = [line for line in lines if line.startswith("native_program.mapped:")]
    assert len(mapped) == 1, lines
    assert "moved" not in mapped[0] and "only its address" not in mapped[0], mapped[0]
    assert "command[0]" in mapped[0] and "program.bin" in mapped[0] and "changed" in mapped[0], mapped[0]


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="no golden images")
def test_a_native_host_against_a_native_image_folder(tmp_path):
    """A native host and a native host's image folder are compared (probe s38 diffalign, finding 3:
    refused, exit 2): the host's embedded images against the folder's files -- this host embeds none,
    the folder holds four -- and the two programs' commands, aligned."""
    from bobc.native.writer import native_host

    host = tmp_path / "host"
    host.write_bytes(native_host(program(A), "sm_90"))
    folder = _folder(tmp_path / "b", program(B))
    done = bobc("diff", host, folder, "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert _commands(done.stdout) == EXPECTED
    images = {d["key"]: d["a"] for d in found if d["key"].endswith(".sha256") and not d["key"].startswith("native")}
    assert images == {f"{name}.sha256": None for name in ("program.bin", "qmd.bin", "push.bin", "gpfifo.bin")}
    assert "image folder" in done.stderr          # --json: the note on stderr, the output a list
    # the other way round
    back = bobc("diff", folder, host, "--json")
    assert back.returncode == 1 and set(_commands(back.stdout)) == {"command[5]", "command[11->10]", "command[+13]"}
    # a plan host's folder (no native program) is still refused, naming what would do
    plan = bobc("diff", host, GOLDEN)
    assert plan.returncode == 2 and "--emit-images" in plan.stderr, plan.stderr


def test_dump_says_where_a_branch_and_a_repeat_go_on(tmp_path):
    """A's BranchZero (command 0): when zero its first fragment, the Fail (command 1), otherwise the
    Repeat (command 2); the Repeat's body starts at command 3 and what follows it at command 8 (the
    Store after the body's End) -- by construction, read off A above (probe s38 diffalign, finding 4:
    the dump named neither)."""
    from bobc.native.writer import native_host

    host = tmp_path / "a"
    host.write_bytes(native_host(program(A), "sm_90"))
    done = bobc("dump", host)
    assert done.returncode == 0, done.stderr
    lines = {line.split(" = ")[0]: line for line in done.stdout.splitlines() if line.startswith("command[")}
    assert lines["command[0]"].endswith("# when zero: command[1], otherwise: command[2]"), lines["command[0]"]
    assert lines["command[2]"].endswith("# body: command[3], after it: command[8]"), lines["command[2]"]
    assert "#" not in lines["command[3]"]            # a Store: its one follower is the next command
