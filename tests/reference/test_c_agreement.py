"""The Python formats and the C runtime (runtime_c/) agree, byte for byte.

docs/formats.md is implemented twice: bobc's reference host (bobc.reference.
host, envelope) and runtime_c; these tests hold the two against each other
through runtime_c's rt_tool, on rt_tool's synthetic sample plan
(runtime_c/tests/rt_sample.h, restated below): the generator's bits,
identical envelopes, the same refusal (exit code) for the same bad file and
record.  Bob's own AdamW fills are held to Bob's formats (bob_model) through
the same tool.  Skipped where gcc or the runtime sources are not there.
"""
from __future__ import annotations

import dataclasses
import shutil
import struct
import subprocess
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

from bobc.plan.host import Initializer, RecordCheck
from bobc.plan.model import CheckpointContract
from bobc.reference.envelope import decode as decode_checkpoint, encode as encode_checkpoint
from bobc.reference.errors import FileRefused
from bobc.reference.host import check_record, fresh_payload
from bob_model.formats import Hyperparameters, adamw_scalars

SOURCES = ["nv_status.c", "nv_targets.c", "nv_shim.c", "host_runtime.c", "host_io.c", "plan_fill.c", "host_settings.c"]
# rt_tool's sample plan (runtime_c/tests/rt_sample.h): 3 chunks of 12,345 binary32 elements,
# 7 updates per invocation, the chunks' initializers; a 258-byte record's checks
ELEMENTS = 12345
TOOL_CONTRACT = CheckpointContract(b"test-schema", b"test-learner", b"test-data", b"rt-sample-seed-7",
                                   3 * ELEMENTS * 4, ELEMENTS * 4, 7)
SAMPLE_PLAN = SimpleNamespace(checkpoint=TOOL_CONTRACT, host=SimpleNamespace(initializers=(
    Initializer("splitmix64", b"rt-sample-seed-7", 43, 2 ** 20, 52428800), Initializer("zero"),
    Initializer("splitmix64", b"rt-sample-seed-9", 41, 2 ** 22, 419430400))))
SAMPLE_CHECKS = (
    RecordCheck("bytes", "magic", 0, data=b"RTSAMPLE"),
    RecordCheck("word", "version", 8, 8, value=3),
    RecordCheck("index", "key", 16, 1, 2, 37),
    RecordCheck("below", "value word", 90, 4, 4, 37, 41),
    RecordCheck("same", "pair's value", 17, 1, 2, 37, other=90, other_width=4, other_stride=4),
    RecordCheck("below", "query", 238, 4, 4, 5, 41),
)
SAMPLE_RECORD_BYTES = 258


@pytest.fixture(scope="module")
def tool(repo, tmp_path_factory):
    runtime = repo / "runtime_c"
    if shutil.which("gcc") is None or not (runtime / "tests/rt_tool.c").is_file():
        pytest.skip("needs gcc and runtime_c/tests/rt_tool.c")
    out = tmp_path_factory.mktemp("c") / "rt_tool"
    built = subprocess.run(["gcc", "-std=c11", "-O0", "-D_DEFAULT_SOURCE", f"-I{runtime}",
                            str(runtime / "tests/rt_tool.c"),
                            *(str(runtime / s) for s in SOURCES), "-lm", "-o", str(out)],
                           capture_output=True, text=True)
    assert built.returncode == 0, f"runtime_c does not build: {built.stderr[-500:]}"
    usage = subprocess.run([str(out)], capture_output=True, text=True).stderr
    assert all(c in usage for c in ("init", "fill", "envelope-write", "envelope-read",
                                    "input-check")), f"rt_tool's commands changed: {usage.strip()}"

    def run(*args):
        return subprocess.run([str(out), *map(str, args)], capture_output=True, text=True)
    return run


def test_generator_bits_agree(tool):
    done = tool("init", ELEMENTS)
    assert done.returncode == 0, done.stderr
    c_bits = [int(line.split()[1], 16) for line in done.stdout.splitlines()]
    assert c_bits == np.frombuffer(fresh_payload(SAMPLE_PLAN)[:4 * ELEMENTS], "<u4").tolist()


@pytest.fixture(scope="module")
def bob_fills(repo):
    """Bob's plan fills as bobc extracts them (Bob.Build.NativeHost: update k's step size,
    epsilon and step count, from Platform.Linux.Nvidia.PlanHostAdamW)."""
    import sys
    sys.path.insert(0, str(repo / "tests" / "plan"))
    import plan_support
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.extract import extract_plan

    program = load_program(plan_support.NATIVE_HOST, intrinsics=plan_support.fake_kernels(), target=SM86)
    return extract_plan(program, "bobNativeHost").host.fills


@pytest.mark.parametrize("t", [1, 2, 10, 11, 20, 1000, 2 ** 31])
def test_adamw_fill_bits_agree(tool, bob_fills, t):
    """The C interpreter of Bob's first update's fills, the Python one and formats.adamw_scalars
    (written from docs/formats.md) give the same bits for global step t."""
    from bobc.plan.host import SCALAR_OP_CODES
    s = adamw_scalars(Hyperparameters(), t)
    expected = [struct.pack("<f", s.alpha), struct.pack("<f", s.epsilon), struct.pack("<I", t)]
    first = [f for f in bob_fills if f.launch == bob_fills[0].launch]
    assert [f.offset for f in first] == [32, 36, 64]        # alpha_t, epsilon_t, t in the block
    for fill, want in zip(first, expected):
        terms = [f"{SCALAR_OP_CODES[op]}:{value.hex()}" for op, value in fill.value.postfix()]
        done = tool("fill", t, fill.encoding.upper(), *terms)
        assert done.returncode == 0, done.stderr
        assert int(done.stdout, 16) == struct.unpack("<I", want)[0]
        assert fill.encode(t) == want


def test_envelopes_are_byte_identical(tool, tmp_path):
    path = tmp_path / "c.ckpt"
    done = tool("envelope-write", path, 1234)
    assert done.returncode == 0, done.stderr
    ours = encode_checkpoint(TOOL_CONTRACT, 1234, fresh_payload(SAMPLE_PLAN))
    assert path.read_bytes() == ours
    payload, step = decode_checkpoint(path.read_bytes(), TOOL_CONTRACT, path)
    assert step == 1234


def test_c_reads_what_python_writes(tool, tmp_path):
    rng = np.random.default_rng(3)
    payload = rng.standard_normal(3 * ELEMENTS).astype("<f4")
    path = tmp_path / "py.ckpt"
    path.write_bytes(encode_checkpoint(TOOL_CONTRACT, 2 ** 40 + 5, payload.tobytes()))
    done = tool("envelope-read", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["ok", "step", str(2 ** 40 + 5)]
    assert int(done.stdout.split()[4], 16) == int(payload[:1].view(np.uint32)[0])


def _flip(data: bytes, offset: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= 0x40
    return bytes(out)


def _foreign(**changes) -> bytes:
    return encode_checkpoint(dataclasses.replace(TOOL_CONTRACT, **changes), 3, bytes(3 * ELEMENTS * 4))


GOOD = encode_checkpoint(TOOL_CONTRACT, 3, np.ones(3 * ELEMENTS, "<f4").tobytes())
BAD_CHECKPOINTS = {
    "truncated": GOOD[:-100], "short": GOOD[:40], "trailing": GOOD + b"x",
    "magic": b"XOBCENV1" + GOOD[8:], "trailer": GOOD[:-1] + b"X", "crc": _flip(GOOD, 5000),
    "schema": _foreign(schema=b"test-schemb"), "learner": _foreign(learner=b"other"),
    "data": _foreign(data=b"test-data-2"), "seed": _foreign(seed=b"rt-sample-seed-8"),
    "updates": _foreign(updates_per_invocation=8),
}


@pytest.mark.parametrize("name", sorted(BAD_CHECKPOINTS))
def test_same_checkpoint_refusal(tool, tmp_path, name):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(BAD_CHECKPOINTS[name])
    with pytest.raises(FileRefused) as caught:
        decode_checkpoint(path.read_bytes(), TOOL_CONTRACT, path)
    done = tool("envelope-read", path)
    assert done.returncode == caught.value.exit_code, done.stderr


def _record() -> bytes:
    values = [(3 * k + 1) % 41 for k in range(37)]
    return (b"RTSAMPLE" + struct.pack("<Q", 3) + b"".join(bytes([k, v]) for k, v in enumerate(values))
            + struct.pack("<37I", *values) + struct.pack("<5I", 40, 0, 7, 7, 12))


def _patched(offset: int, fmt: str, value) -> bytes:
    out = bytearray(_record())
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


BAD_RECORDS = {
    "size": _record()[:-1], "magic": b"RTSAMPLX" + _record()[8:],
    "version": _patched(8, "<Q", 2), "key": _patched(16 + 2 * 7, "<B", 8),
    "pair-value": _patched(17 + 2 * 7, "<B", 0), "value-word": _patched(90 + 4 * 7, "<I", 300),
    "query": _patched(238, "<I", 41),
}


def test_c_accepts_the_records_python_accepts(tool, tmp_path):
    path = tmp_path / "record.bin"
    path.write_bytes(_record())
    check_record(SAMPLE_CHECKS, SAMPLE_RECORD_BYTES, _record(), path)
    done = tool("input-check", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "queries", "40", "0", "7", "7", "12"]


@pytest.mark.parametrize("name", sorted(BAD_RECORDS))
def test_same_record_refusal(tool, tmp_path, name):
    path = tmp_path / "bad.bin"
    path.write_bytes(BAD_RECORDS[name])
    with pytest.raises(FileRefused) as caught:
        check_record(SAMPLE_CHECKS, SAMPLE_RECORD_BYTES, path.read_bytes(), path)
    done = tool("input-check", path)
    assert done.returncode == caught.value.exit_code == 3, done.stderr


# ---- a count of 1 in a refusal: "1 byte", "1 more update", the C host's words and the reference's
# alike at every count (runtime_c/host_runtime.h rt_plural, bobc.native.words.count) ----

def _said(done) -> str:
    """rt_tool's refusal after the runtime's name for it: "host: error: MESSAGE"."""
    assert done.stderr.startswith("host: error: ") and done.stderr.endswith("\n"), done.stderr
    return done.stderr[len("host: error: "):-1]


def _header_only(identities: bytes, lengths) -> bytes:
    """An envelope whose 64-byte header (H 64) has no room for the identities it declares (its
    CRC right: the identities are judged after the CRC, so that a damaged length is damage)."""
    payload = bytes(8)
    header = struct.pack("<8sIIQQQQ4I", b"BOBCENV1", 64, 1, 3, len(payload), len(payload), 7, *lengths)
    body = header + payload
    return body + struct.pack("<I", zlib.crc32(body)) + b"BOBCEND1"


H = struct.unpack_from("<I", GOOD, 8)[0]
COUNTED_CHECKPOINTS = {
    # name: (count 1's file, count 2's file, count 1's words)
    "truncated": (GOOD[:1], GOOD[:2], "truncated: 1 byte, shorter than the 64-byte header"),
    "after the header": (GOOD[:H + 1], GOOD[:H + 2], "more than the 1 byte after its"),
    "identities": (_header_only(b"", (1, 0, 0, 0)), _header_only(b"", (1, 1, 0, 0)),
                   "header bytes 64 cannot hold its identities (1 byte)"),
}


@pytest.mark.parametrize("name", sorted(COUNTED_CHECKPOINTS))
def test_a_checkpoint_refusal_counts_in_the_same_words(tool, tmp_path, name):
    one, two, words = COUNTED_CHECKPOINTS[name]
    said = {}
    for n, data in ((1, one), (2, two)):
        path = tmp_path / f"count-{n}.ckpt"
        path.write_bytes(data)
        with pytest.raises(FileRefused) as caught:
            decode_checkpoint(data, TOOL_CONTRACT, path)
        done = tool("envelope-read", path)
        assert done.returncode == caught.value.exit_code == 4, done.stderr
        assert _said(done) == caught.value.host_form()
        said[n] = caught.value.host_form()
    assert words in said[1], said[1]
    assert words.replace("(1 byte)", "(2 bytes)").replace(" 1 byte,", " 2 bytes,").replace(
        " 1 byte after", " 2 bytes after") in said[2], said[2]


@pytest.mark.parametrize("size", [1, 2])
def test_a_record_of_the_wrong_size_is_counted_in_the_same_words(tool, tmp_path, size):
    path = tmp_path / "short.bin"
    path.write_bytes(_record()[:size])
    with pytest.raises(FileRefused) as caught:
        check_record(SAMPLE_CHECKS, SAMPLE_RECORD_BYTES, path.read_bytes(), path)
    done = tool("input-check", path)
    assert done.returncode == caught.value.exit_code == 3, done.stderr
    assert _said(done) == caught.value.host_form() == \
        f"input record {path}: {size} byte{'' if size == 1 else 's'}, expected exactly 258 (truncated)"


@pytest.mark.parametrize("updates", [1, 2])
def test_no_room_for_the_updates_is_counted_in_the_same_words(tool, tmp_path, updates):
    from bobc.reference.errors import BadCheckpoint
    from bobc.reference.safe_io import check_step_room
    step = 2 ** 32 - 1
    with pytest.raises(BadCheckpoint) as caught:
        check_step_room(step, updates, "in.ckpt")
    done = tool("step-room", step, updates, "in.ckpt")
    assert done.returncode == caught.value.exit_code == 4, done.stderr
    assert _said(done) == caught.value.host_form() == \
        f"checkpoint in.ckpt: step {step} leaves no room for {updates} more update{'' if updates == 1 else 's'} " \
        f"(limit {2 ** 32 - 1}); it can still be used for predict, or train from an earlier checkpoint"
    assert tool("step-room", step - updates, updates, "in.ckpt").returncode == 0
