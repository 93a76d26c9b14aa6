"""A request as one native physical program (docs/native-host.md, "Requests"): the synthetic
request host of plans/Native/Request.bob -- built through nvidiaPlanHostRequestCommands, the
lowering seed 004's host uses -- run by the C host (NATIVE_DEVICE=memory) and by the reference
interpreter in two folders, their files, statuses and messages compared byte for byte.

The expected files are computed here from the module's own description (its comments) and
docs/formats.md alone: the token stream's layout, the checkpoint envelope (decoded by
bobc.reference.envelope, whose CRC is zlib's), the fresh state's SplitMix64 generator (written
out below from docs/formats.md), and each step's meaning in docs/host-steps.md.  Every
refusal is checked for its status, its message (naming the part) and that nothing was written.
"""
from __future__ import annotations

import hashlib
import os
import signal
import struct
import sys
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from native_helpers import PLANS, load_module, program_bytes, wait_for, write_host

ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
CONTEXT = 4                       # tokens per update
UPDATES = 6                       # per train request (two periods of three)
PAYLOAD = 40


@pytest.fixture(scope="module")
def request_module():
    return load_module(PLANS / "Native" / "Request.bob")


@pytest.fixture(scope="module")
def code(request_module):
    return program_bytes(request_module, "requestProgram")


def stream(tokens, magic=b"COPSTRM1", version=1, token_bytes=4, vocabulary=256, header=64, count=None, digest=None):
    body = b"".join(struct.pack("<I", t) for t in tokens)
    count = len(tokens) if count is None else count
    digest = hashlib.sha256(body).digest() if digest is None else digest
    return struct.pack("<8sIIIIQ32s", magic, version, token_bytes, vocabulary, header, count, digest) + body


TOKENS = [(i * 37 + 11) % 256 for i in range(60)]


def contract(**changes):
    """Request.bob's rqContract (another configuration with `changes`)."""
    from bobc.plan.model import CheckpointContract
    fields = dict(schema=b"request-test-schema-v1", learner=b"request-test-learner",
                  data=b"token-stream-u32|context=4", seed=b"request-test-seed", payload_bytes=PAYLOAD,
                  chunk_bytes=16, updates_per_invocation=UPDATES)
    return CheckpointContract(**{**fields, **changes})


def envelope(payload: bytes, step: int, **changes) -> bytes:
    from bobc.reference import envelope as env
    return env.encode(contract(**changes), step, payload)


def decode(data: bytes):
    from bobc.reference import envelope as env
    return env.decode(data, contract())


def splitmix_chunk(seed: bytes, count: int) -> bytes:
    """docs/formats.md's fresh initialization: u = z >> 40, (u - 2^23) / 838860800 as binary32."""
    state = 0xcbf29ce484222325
    for byte in seed:
        state = ((state ^ byte) * 0x100000001b3) % 2 ** 64
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) % 2 ** 64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2 ** 64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2 ** 64
        z ^= z >> 31
        out.append(np.float32((((z >> 40) - 8388608)) / 838860800.0))
    return np.array(out, dtype="<f4").tobytes()


FRESH = splitmix_chunk(b"request-test-seed", 4) + bytes(24)


def trained(payload: bytes, step: int, updates: int = UPDATES) -> bytes:
    """The arena's first word after `updates` updates: += each context's first 8 bytes."""
    word = int.from_bytes(payload[:8], "little")
    for j in range(updates):
        first = CONTEXT * (step + j)
        word = (word + TOKENS[first] + (TOKENS[first + 1] << 32)) % 2 ** 64
    return word.to_bytes(8, "little") + payload[8:]


def expected_result(payload: bytes, step: int, published_step: int, stamps=3, issued=0) -> bytes:
    s = stream(TOKENS)
    forward = b"REQUEST-RESULT-1" + step.to_bytes(8, "little")
    losses = b"".join(struct.pack("<I", TOKENS[CONTEXT * (step + j)]) for j in range(UPDATES))
    last_target = TOKENS[CONTEXT * (step + UPDATES - 1) + 1]
    stat = bytes(8) + struct.pack("<I", last_target)
    status = struct.pack("<QQQ", published_step, issued, 2)
    identity = s[32:64]
    cyclic = struct.pack("<I", TOKENS[1])             # record 7 mod 3 = 1 of 4-byte records from byte 64
    return forward + losses + stat + status + bytes(8 * stamps) + identity + cyclic


def run_both(tmp_path, code, host, inputs: dict, arguments, env=None, name="x"):
    from native_helpers import run_sides
    c, reference = run_sides(tmp_path, code, host, inputs, arguments, env, name)
    assert c.status == reference.status, (c.stderr, reference.stderr)
    assert c.stderr == reference.stderr
    assert c.files == reference.files
    return c


@pytest.fixture(scope="module")
def host(code, tmp_path_factory):
    return write_host(tmp_path_factory.mktemp("request-host"), "request-host", code)


def test_the_seeds_lowering_leaves_no_fail_for_a_file_step(code):
    from bobc.native.program import decode as decode_program
    program = decode_program(code)
    names = [c.name for c in program.commands]
    assert names[:2] == ["RequestOpen", "OpenDevice"]      # every check before the first device command
    messages = [c.data for c in program.commands if c.name == "Fail"]
    assert not any(b"no native command form" in m for m in messages)
    for kind in ("RequestRead", "RequestWrite", "RequestWriteAt", "RequestAppendState", "RequestAppendInput",
                 "RequestAppendStatus", "RequestCheckpointBegin", "RequestCheckpointPublish"):
        assert kind in names


def test_fresh_train_publishes_what_the_steps_say(tmp_path, code, host):
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS])
    assert out.status == 0 and out.stderr == b""
    payload, step = decode(out.files["ck.bin"])
    assert step == UPDATES
    assert payload == trained(FRESH, 0)
    # the predictions: the forward's 8 bytes (the input state's first word), a word placed at 12
    last_context = TOKENS[CONTEXT * (UPDATES - 1)]
    assert out.files["p.bin"] == FRESH[:8] + bytes(4) + struct.pack("<I", last_context)
    assert out.files["r.bin"] == expected_result(FRESH, 0, UPDATES)


def test_the_trace_holds_the_counts_the_schedule_states(tmp_path, code, host):
    """NATIVE_TRACE (docs/native-host.md, "Requests"): one line per read, write, publication,
    submission; the same from both hosts, and the counts a plan states hold in it."""
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS],
                   env={"NATIVE_TRACE": "trace.txt"}, name="traced")
    lines = out.files["trace.txt"].decode().splitlines()
    assert lines[0] == "open train step 0"
    # the checkpoint read chunk by chunk, in order, each once
    assert [line for line in lines if line.startswith("read 2 ")] == ["read 2 0 16", "read 2 16 16", "read 2 32 8"]
    # contexts consumed: the forward's, then one per update, each 16 bytes on (inputs and targets)
    contexts = [int(line.split()[2]) for line in lines if line.startswith("read 1 ") and line.endswith(" 16")]
    assert contexts == [64, 68] + [v for j in range(UPDATES) for v in (64 + 16 * j, 68 + 16 * j)]
    # checkpoint bytes written = publications x payload; the publications at steps 3 and 6
    assert sum(int(line.split()[2]) for line in lines if line.startswith("write 3 ")) == 2 * PAYLOAD
    assert [line for line in lines if line.startswith("publish")] == ["publish 3", "publish 6"]
    assert not [line for line in lines if line.startswith("submit")]


def test_resumed_train_continues_at_the_cursor_and_step(tmp_path, code, host):
    first = trained(FRESH, 0)
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS), "in.bin": envelope(first, UPDATES)},
                   ["train", "--checkpoint", "in.bin", *ARGS])
    assert out.status == 0, out.stderr
    payload, step = decode(out.files["ck.bin"])
    assert (step, payload) == (2 * UPDATES, trained(first, UPDATES))
    assert out.files["r.bin"] == expected_result(first, UPDATES, 2 * UPDATES)
    # a checkpoint resumed in place
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS), "ck.bin": envelope(first, UPDATES)},
                   ["train", "--checkpoint", "ck.bin", *ARGS], name="in-place")
    assert decode(out.files["ck.bin"]) == (trained(first, UPDATES), 2 * UPDATES)


def test_predict_hands_the_checkpoint_on_unchanged(tmp_path, code, host):
    state = trained(FRESH, 0)
    given = envelope(state, UPDATES)
    # a predict request reads one context at the cursor: a stream holding just that is enough
    short = TOKENS[:CONTEXT * UPDATES + CONTEXT + 1]
    out = run_both(tmp_path, code, host, {"s.bin": stream(short), "in.bin": given},
                   ["predict", "--checkpoint", "in.bin", *ARGS])
    assert out.status == 0, out.stderr
    assert out.files["ck.bin"] == given
    assert out.files["p.bin"] == state[:8]
    assert out.files["r.bin"] == b"REQUEST-RESULT-1" + UPDATES.to_bytes(8, "little")


def test_the_seeds_entry_point_starts_from_zeros(tmp_path, request_module):
    code = program_bytes(request_module, "requestZeros")
    host = write_host(tmp_path, "zeros-host", code)
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS)}, ["predict", *ARGS])
    assert out.status == 0, out.stderr
    assert decode(out.files["ck.bin"]) == (bytes(PAYLOAD), 0)


# ---- refusals: before any device command, nothing written ----

def refused(tmp_path, code, host, inputs, arguments, status, *parts, name):
    out = run_both(tmp_path, code, host, inputs, arguments, name=name)
    assert out.status == status, out.stderr
    text = out.stderr.decode()
    assert text.startswith("native: ") and text.endswith("; nothing was published\n"), text
    for part in parts:
        assert part in text, text
    assert set(out.files) == set(inputs), "an output was written"
    for name_, data in inputs.items():
        assert out.files[name_] == data
    return text


GOOD = stream(TOKENS)
BAD_STREAMS = [
    ("header", GOOD[:40], "token stream header: 40 bytes, shorter than the 64-byte header"),
    ("magic", b"BOBINPUT" + GOOD[8:], "token stream magic: 'BOBINPUT' is not 'COPSTRM1'"),
    ("version", stream(TOKENS, version=2), "token stream version: 2, this host reads 1"),
    ("token-bytes", stream(TOKENS, token_bytes=2), "token stream token bytes: 2, this host reads 4"),
    ("vocabulary", stream(TOKENS, vocabulary=512), "token stream vocabulary: 512, this host reads 256"),
    ("count", stream(TOKENS, count=61), "token stream token count: the header says 61 tokens"),
    ("cut", GOOD[:-3], "token stream token count: the header says 60 tokens"),
    ("sha256", GOOD[:-1] + bytes([GOOD[-1] ^ 1]), "token stream sha256: the tokens do not match"),
    ("token", stream(TOKENS[:9] + [300] + TOKENS[10:]), "token stream token: token 300 at index 9 is outside"),
]


@pytest.mark.parametrize("name, data, message", BAD_STREAMS, ids=[b[0] for b in BAD_STREAMS])
def test_a_stream_of_another_format_is_refused_naming_the_part(tmp_path, code, host, name, data, message):
    refused(tmp_path, code, host, {"s.bin": data}, ["train", *ARGS], 3, "input s.bin: ", message, name=name)


def test_a_stream_shorter_than_the_run_needs_is_refused(tmp_path, code, host):
    # train reads, from the cursor at byte 64: the forward's context (16 bytes) and its targets (4 on),
    # then six updates' (the cursor 16 bytes on before each but the first): up to 5 * 16 + 20 = 100
    # bytes, to byte 164 -- 25 tokens; 24 are refused, 25 are enough
    short = stream(TOKENS[:24])
    text = refused(tmp_path, code, host, {"s.bin": short}, ["train", *ARGS], 3,
                   "the stream is shorter than a train request needs", name="short")
    assert "reads 100 bytes from the cursor at byte 64, to byte 164" in text
    out = run_both(tmp_path, code, host, {"s.bin": stream(TOKENS[:25])}, ["train", *ARGS], name="exact")
    assert out.status == 0, out.stderr


def test_a_checkpoint_whose_cursor_lies_past_the_stream_is_refused(tmp_path, code, host):
    late = envelope(FRESH, 100)
    text = refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": late}, ["train", "--checkpoint", "in.bin", *ARGS],
                   3, "checkpoint in.bin's step 100 puts the cursor at byte 1664, past the stream's 304 bytes", name="late")
    assert "input s.bin" in text
    # a cursor inside the stream with too little after it is the shorter-stream refusal
    refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": envelope(FRESH, 12)},
            ["train", "--checkpoint", "in.bin", *ARGS], 3, "the stream is shorter than a train request needs",
            name="tail")


FOREIGN = [
    ("schema", dict(schema=b"other-schema"), 5, "foreign checkpoint: schema identity differs"),
    ("learner", dict(learner=b"other-learner"), 5, "foreign checkpoint: learner identity differs"),
    ("data", dict(data=b"token-stream-u32|context=8"), 5, "foreign checkpoint: data identity differs"),
    ("updates", dict(updates_per_invocation=7), 5, "updates per invocation differ: this host's 6, the checkpoint's 7"),
]


@pytest.mark.parametrize("name, changes, status, message", FOREIGN, ids=[f[0] for f in FOREIGN])
def test_a_checkpoint_of_another_configuration_is_refused(tmp_path, code, host, name, changes, status, message):
    data = envelope(FRESH, 3, **changes)
    refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": data}, ["train", "--checkpoint", "in.bin", *ARGS],
            status, "checkpoint in.bin: ", message, name=name)


def test_a_larger_configurations_checkpoint_is_refused_as_foreign_not_by_its_size(tmp_path, code, host):
    """A checkpoint past the size this host reads (its envelope + 1 MiB) is a larger shape's more
    often than a damaged file: its header's identity names it, exit 5, as for a smaller one."""
    big = (1 << 20) + 64 * PAYLOAD
    data = envelope(bytes(big), 3, schema=b"request-test-schema-v2", payload_bytes=big, chunk_bytes=big)
    text = refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": data}, ["train", "--checkpoint", "in.bin", *ARGS],
                   5, "checkpoint in.bin: foreign checkpoint: schema identity differs from byte 21",
                   f"(and {len(data)} bytes, more than this host's checkpoint)", name="bigger")
    assert "-v1'" in text and "-v2'" in text
    # the same size with this host's identities stays a size refusal (a damaged or foreign file alike)
    data = envelope(bytes(big), 3, payload_bytes=big, chunk_bytes=big)
    refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": data}, ["train", "--checkpoint", "in.bin", *ARGS],
            4, "checkpoint in.bin: ", "more than a checkpoint can be", name="bigger-same")


def test_a_damaged_checkpoint_is_refused(tmp_path, code, host):
    good = envelope(FRESH, 3)
    refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": good[:-5]}, ["train", "--checkpoint", "in.bin", *ARGS],
            4, "checkpoint in.bin: truncated", name="truncated")
    flipped = good[:80] + bytes([good[80] ^ 4]) + good[81:]
    refused(tmp_path, code, host, {"s.bin": GOOD, "in.bin": flipped}, ["train", "--checkpoint", "in.bin", *ARGS],
            4, "checkpoint in.bin: corrupted: CRC-32", name="crc")


def test_usage_and_outputs_are_refused_as_the_plan_host_refuses_them(tmp_path, code, host):
    refused(tmp_path, code, host, {"s.bin": GOOD}, ["train", *ARGS[:6]], 2, "missing --result FILE", name="usage")
    refused(tmp_path, code, host, {"s.bin": GOOD}, ["fit", *ARGS], 2, "unknown operation 'fit'", name="operation")
    refused(tmp_path, code, host, {"s.bin": GOOD}, ["train", "--input", "missing.bin", *ARGS[2:]], 3,
            "input missing.bin: cannot open", name="missing")
    # an output that is a folder: refused before the GPU is touched (exit 8)
    out = run_both(tmp_path, code, host, {"s.bin": GOOD}, ["train", *ARGS[:2], "--checkpoint-out", ".", *ARGS[4:]],
                   name="folder")
    assert out.status == 8 and b"output . (--checkpoint-out)" in out.stderr, out.stderr
    assert set(out.files) == {"s.bin"}


def test_a_damaged_journal_is_refused_and_left(tmp_path, code, host):
    journal = {".ck.bin.bob-journal": b"bob-journal 1 3\ngarbage\n"}
    refused(tmp_path, code, host, {"s.bin": GOOD, **journal}, ["train", *ARGS], 8,
            "journal ./.ck.bin.bob-journal: a damaged publication journal", "it was left as it is", name="journal")


def test_help_prints_the_usage_and_writes_nothing(tmp_path, host):
    done = subprocess.run([str(host), "--help"], cwd=tmp_path, capture_output=True,
                          env={**os.environ, "NATIVE_DEVICE": "memory"})
    assert done.returncode == 0 and done.stdout.startswith(b"usage: ") and b"--checkpoint-out OUT" in done.stdout
    assert list(tmp_path.iterdir()) == []


# ---- atomic publication ----

def test_a_kill_between_two_publications_leaves_the_last_published_checkpoint(tmp_path, request_module, code, host):
    hangs = program_bytes(request_module, "requestHangs")
    hanging = write_host(tmp_path, "hanging-host", hangs)
    folder = tmp_path / "killed"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    process = subprocess.Popen([str(hanging), "train", *ARGS], cwd=folder,
                               env={**os.environ, "NATIVE_DEVICE": "memory"}, stderr=subprocess.PIPE)
    try:
        wait_for((folder / "ck.bin").exists, process, "the first publication never came", within_s=20)
        time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["ck.bin", "s.bin"], names          # no temporary, no predictions or result
    payload, step = decode((folder / "ck.bin").read_bytes())
    assert (payload, step) == (trained(FRESH, 0, 3), 3)
    # resumable: it continues at step 3's cursor
    out = run_both(tmp_path, code, host, {"s.bin": GOOD, "ck.bin": (folder / "ck.bin").read_bytes()},
                   ["train", "--checkpoint", "ck.bin", *ARGS], name="resumed")
    assert decode(out.files["ck.bin"]) == (trained(payload, 3), 3 + UPDATES)
    # the reference fails its never-rising wait at once (status 7, a request host's GPU fault: 4 is a
    # damaged checkpoint there): the first publication stays
    from native_helpers import run_reference
    ref = tmp_path / "reference-hangs"
    ref.mkdir()
    (ref / "s.bin").write_bytes(GOOD)
    outcome = run_reference(hangs, ref, ["train", *ARGS])
    assert outcome.status == 7 and set(outcome.files) == {"s.bin", "ck.bin"}
    assert decode(outcome.files["ck.bin"]) == (trained(FRESH, 0, 3), 3)


def test_request_programs_the_decoder_refuses():
    from bobc.native.program import ProgramError, decode as decode_program
    header = b"NPHY" + (1).to_bytes(4, "little") + (8).to_bytes(8, "little") + (4096).to_bytes(8, "little") \
        + (0).to_bytes(8, "little")
    write = bytes([28]) + (4).to_bytes(8, "little") + (0).to_bytes(8, "little") + (8).to_bytes(8, "little") + bytes([0])
    with pytest.raises(ProgramError, match=r"command 0 \(RequestWrite\): no request is open"):
        decode_program(header + write)
    bad_request = bytes([26]) + (3).to_bytes(8, "little") + b"abc" + bytes(16) + bytes([0])
    with pytest.raises(ProgramError, match=r"command 0 \(RequestOpen\): the request's bytes: cut short"):
        decode_program(header + bad_request)


def embedded(host: bytes, images) -> bytes:
    """The host wrapped as an embedded artifact (docs/native-host.md, "The file"): components of
    kind 1..4 (kind 4, identity 64, length 8, bytes), the host's header, "NPEMBED1", the offset."""
    parts = [kind.to_bytes(4, "little") + name.ljust(64, b"\0") + len(data).to_bytes(8, "little") + data
             for kind, (name, data) in enumerate(images, start=1)]
    footer = (0).to_bytes(4, "little") + b"host".ljust(64, b"\0") + len(host).to_bytes(8, "little") + b"NPEMBED1" \
        + len(host).to_bytes(8, "little")
    return host + b"".join(parts) + footer


def test_the_embedded_images_are_loaded_into_their_buffers(tmp_path, request_module):
    from bobc.native import artifact
    from bobc.native.writer import native_host
    from native_helpers import run_c
    code = program_bytes(request_module, "requestLoads")
    images = [(name, bytes((i * 13 + k) % 256 for i in range(16 + 8 * k)))
              for k, name in enumerate((b"program", b"qmd", b"push", b"ring"))]
    wrapped = embedded(native_host(code, "sm_90"), images)
    host = tmp_path / "loads-host"
    host.write_bytes(wrapped)
    host.chmod(0o755)
    components = {kind: data for kind, _, data in artifact.split(wrapped, "loads-host").components}
    outcomes = []
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "s.bin").write_bytes(GOOD)
        if side == "c":
            outcomes.append(run_c(host, folder, ["predict", *ARGS]))
        else:
            from bobc.reference.native_program import run_program
            import io
            stderr, before = io.BytesIO(), os.getcwd()
            os.chdir(folder)
            try:
                status = run_program(code, ["predict", *ARGS], gpu=None, stderr=stderr, components=components)
            finally:
                os.chdir(before)
            outcomes.append((status, stderr.getvalue(), (folder / "r.bin").read_bytes()))
    c = outcomes[0]
    assert c.status == 0, c.stderr
    assert c.files["r.bin"] == b"".join(data[:16] for _, data in images)
    assert outcomes[1] == (0, b"", c.files["r.bin"])
    # the bare host (no images) refuses at the first load, naming it (status 9), nothing written
    bare = write_host(tmp_path, "bare-host", code)
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    out = run_c(bare, folder, ["predict", *ARGS])
    assert out.status == 9 and b"(LoadEmbedded): the host carries no embedded device image of kind 1" in out.stderr
    assert set(out.files) == {"s.bin"}


def test_bobc_build_and_bobc_run_native_take_the_request_as_the_host_takes_it(tmp_path, host):
    """`bobc build --entry` writes the request host; `bobc run PLAN native train --input ...
    --reference --entry DEF` (a request's options after its operation) publishes its files."""
    plan = PLANS / "Native" / "Request.bob"
    bobc = [sys.executable, "-m", "bobc"]
    built = subprocess.run([*bobc, "build", str(plan), "--entry", "requestHost", "-o", str(tmp_path / "built")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "built").read_bytes() == host.read_bytes()
    (tmp_path / "s.bin").write_bytes(GOOD)
    run = subprocess.run([*bobc, "run", str(plan), "native", "train", *ARGS, "--reference", "--entry",
                          "requestProgram"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert decode((tmp_path / "ck.bin").read_bytes()) == (trained(FRESH, 0), UPDATES)
    assert (tmp_path / "r.bin").read_bytes() == expected_result(FRESH, 0, UPDATES)


def test_the_request_is_checked_before_the_device_is_opened(tmp_path, host):
    """Without NATIVE_DEVICE=memory the host opens a real GPU, which this machine may lack: a bad
    stream is refused by the request (its message), a good one reaches OpenDevice first."""
    from native_helpers import run_c
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "s.bin").write_bytes(stream(TOKENS, version=9))
    out = run_c(host, folder, ["train", *ARGS], env={"NATIVE_DEVICE": "gpu"})
    assert out.status == 3 and out.stderr.startswith(b"native: input s.bin: token stream "
                                                     b"version: 9, this host reads 1"), out.stderr
    assert set(out.files) == {"s.bin"}
    if Path("/dev/nvidiactl").exists():
        return                    # a GPU node: the good stream would train (tests/gpu/test_native_request.py)
    folder = tmp_path / "good"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    out = run_c(host, folder, ["train", *ARGS], env={"NATIVE_DEVICE": "gpu"})
    # a request host answers with the plan host's codes: 6 no GPU (3 is a bad stream there)
    # one line for one failure (docs/runtime.md): the host's, not the driver shim's too
    assert out.status == 6 and out.stderr.startswith(b"native: command 1 (OpenDevice): no GPU"), out.stderr
    assert out.stderr.count(b"\n") == 1 and out.stderr.endswith(b"; nothing was published\n"), out.stderr
    assert set(out.files) == {"s.bin"}


def test_a_kill_inside_the_last_publication_is_completed_by_the_next_request(tmp_path, host):
    """The request's outputs are published under a journal (host_io.h): a kill between two of
    its renames leaves the journal, and the next invocation naming those outputs completes it
    before it reads anything -- so it resumes from the killed run's own last checkpoint."""
    folder = tmp_path / "journalled"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    process = subprocess.Popen([str(host), "train", *ARGS], cwd=folder, stderr=subprocess.PIPE,
                               env={**os.environ, "NATIVE_DEVICE": "memory", "BOBC_IO_TEST_PAUSE_MS": "5000"})
    try:        # the first rename: predictions
        wait_for((folder / "p.bin").exists, process, "the final publication never began", within_s=20)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert (folder / ".ck.bin.bob-journal").exists()
    assert not (folder / "r.bin").exists()
    assert decode((folder / "ck.bin").read_bytes())[1] == 3          # the first period's publication
    from native_helpers import run_c
    out = run_c(host, folder, ["predict", "--checkpoint", "ck.bin", *ARGS])
    assert out.status == 0, out.stderr
    assert b"completed an interrupted publication" in out.stderr
    assert ".ck.bin.bob-journal" not in out.files
    # the journal's checkpoint (step 6) was in place before the predict request read it
    assert decode(out.files["ck.bin"]) == (trained(FRESH, 0), UPDATES)


def test_the_reference_runs_a_request_whose_updates_go_to_the_device(tmp_path, request_module):
    """`bobc run PLAN native train ... --reference --kernels FILE`: each update a Reissue carried
    out by the file's SUBMIT (a NumPy stand-in for the kernels) -- the same files as the host
    whose updates are native commands, six submissions traced, the ring check passed."""
    plan = PLANS / "Native" / "Request.bob"
    (tmp_path / "s.bin").write_bytes(GOOD)
    run = subprocess.run([sys.executable, "-m", "bobc", "run", str(plan), "native", "train", *ARGS, "--reference",
                          "--entry", "requestSubmits", "--kernels", str(Path(__file__).parent / "request_device.py")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "NATIVE_TRACE": "trace.txt"})
    assert run.returncode == 0, run.stderr
    assert decode((tmp_path / "ck.bin").read_bytes()) == (trained(FRESH, 0), UPDATES)
    assert (tmp_path / "r.bin").read_bytes() == expected_result(FRESH, 0, UPDATES, issued=UPDATES)
    submits = [line for line in (tmp_path / "trace.txt").read_text().splitlines() if line.startswith("submit")]
    assert submits == [f"submit {n} 0xa0" for n in range(UPDATES)]
    # without a GPU the C host stops at the first submission, before any publication
    from native_helpers import run_c
    code = program_bytes(request_module, "requestSubmits")
    host = write_host(tmp_path, "submits-host", code)
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    out = run_c(host, folder, ["train", *ARGS])
    assert out.status == 6 and b"(Submit): submission 0 (entry 0xa0): this session has no GPU" in out.stderr
    assert set(out.files) == {"s.bin"}


def test_a_checkpoint_write_past_the_contracts_payload_is_refused_both_ways(tmp_path, code):
    """The C host gathers the checkpoint into an envelope of the contract's payload size; a
    program whose checkpoint writes run past it is refused at that write, by both hosts alike,
    and nothing is published."""
    from bobc.native.program import decode as decode_program
    program = decode_program(code)
    last = [c for c in program.commands if c.name == "RequestWrite" and c.n[0] == 3][-1]
    old = bytes([28]) + b"".join(n.to_bytes(8, "little") for n in last.n)
    longer = bytes([28]) + b"".join(n.to_bytes(8, "little") for n in (*last.n[:2], last.n[2] + 1))
    assert code.count(old) >= 1
    bad = code.replace(old, longer, 1)
    host = write_host(tmp_path, "past-host", bad)
    out = run_both(tmp_path, bad, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS], name="past")
    assert out.status == 1
    assert b"(RequestWrite): the program writes" in out.stderr and b"past the contract's" in out.stderr
    assert set(out.files) == {"s.bin"}


def _after_the_last_publication(code: bytes, replacement: bytes) -> bytes:
    """The program with the command right after its last checkpoint publication replaced."""
    from bobc.native.program import CODE_OF, decode as decode_program
    commands = decode_program(code).commands
    last = max(i for i, c in enumerate(commands) if c.name == "RequestCheckpointPublish")
    following = commands[last + 1]
    assert following.name == "CopyMappedToState"          # n fields only: its bytes are its code and naturals
    old = bytes([CODE_OF["CopyMappedToState"]]) + b"".join(n.to_bytes(8, "little") for n in following.n)
    assert code.count(old) == 1
    return code.replace(old, replacement)


def _late_checkpoint_write(tmp_path, code, count: int, name: str):
    """Both hosts run the request with a RequestWrite of `count` checkpoint bytes into its staging
    after its last publication."""
    from bobc.native.program import CODE_OF, decode as decode_program
    staging = [c for c in decode_program(code).commands if c.name == "RequestWrite" and c.n[0] == 3][-1].n[1]
    write = bytes([CODE_OF["RequestWrite"]]) + b"".join(n.to_bytes(8, "little") for n in (3, staging, count))
    bad = _after_the_last_publication(code, write)
    host = write_host(tmp_path, f"{name}-host", bad)
    return run_both(tmp_path, bad, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS], name=name)


def test_a_checkpoint_write_after_the_last_publication_is_refused_both_ways(tmp_path, code):
    """After its last publication the C host stages the envelope it gathered the checkpoint
    into; a program that wrote checkpoint bytes then would change what is published.  Both
    hosts refuse that write alike, and nothing is published."""
    out = _late_checkpoint_write(tmp_path, code, 4, "late")
    assert out.status == 1
    assert b"(RequestWrite): the program writes 4 checkpoint bytes after the request's last publication (2 of 2)" \
        in out.stderr, out.stderr
    # the interval publication before the last stays, and the message says so
    assert out.stderr.endswith(b"; publication 1 of 2 (step 3) stays at ck.bin; nothing else was published\n")
    assert set(out.files) == {"s.bin", "ck.bin"}
    assert decode(out.files["ck.bin"])[1] == 3


def test_a_publication_more_than_the_request_makes_is_refused_both_ways(tmp_path, code):
    from bobc.native.program import CODE_OF
    publish = bytes([CODE_OF["RequestCheckpointPublish"]]) + (6).to_bytes(8, "little")
    bad = _after_the_last_publication(code, publish)
    host = write_host(tmp_path, "extra-publish-host", bad)
    out = run_both(tmp_path, bad, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS], name="extra")
    assert out.status == 1
    assert b"(RequestCheckpointPublish): the program publishes checkpoint 3; the request publishes 2" in out.stderr, \
        out.stderr
    assert out.stderr.endswith(b"; publication 1 of 2 (step 3) stays at ck.bin; nothing else was published\n")
    assert set(out.files) == {"s.bin", "ck.bin"}


# ---- a count of 1 in a refusal: the singular, both sides alike (probe s29 nits finding 2) ----

ONE = [
    ("one-byte", b"\x00", "token stream header: 1 byte, shorter than the 64-byte header"),
    ("one-token-said", stream(TOKENS, count=1), "token stream token count: the header says 1 token, the file has 304 "
                                                "bytes"),
]


@pytest.mark.parametrize("name, data, message", ONE, ids=[o[0] for o in ONE])
def test_a_count_of_one_is_said_in_the_singular(tmp_path, code, host, name, data, message):
    refused(tmp_path, code, host, {"s.bin": data}, ["train", *ARGS], 3, "input s.bin: ", message, name=name)


def test_one_token_from_the_cursor_is_said_in_the_singular(tmp_path, code, host):
    # a stream of 57 tokens (292 bytes) and a checkpoint of step 14: the cursor at byte 64 + 14 * 16 =
    # 288, one token before the stream's end
    text = refused(tmp_path, code, host, {"s.bin": stream(TOKENS[:57]), "in.bin": envelope(FRESH, 14)},
                   ["train", "--checkpoint", "in.bin", *ARGS], 3, "the stream is shorter than a train request needs",
                   name="one-token")
    assert ("it reads 100 bytes from the cursor at byte 288, to byte 388; the stream has 292 bytes (1 token from "
            "the cursor on, 25 needed: give a longer stream)") in text, text


def test_one_checkpoint_byte_after_the_last_publication_is_said_in_the_singular(tmp_path, code):
    out = _late_checkpoint_write(tmp_path, code, 1, "late-byte")
    assert out.status == 1
    assert b"(RequestWrite): the program writes 1 checkpoint byte after the request's last publication (2 of 2)" \
        in out.stderr, out.stderr


def test_the_readme_states_the_outputs_rule_the_hosts_keep(tmp_path, code, host):
    """README's outputs rule names its one request exception, as docs/runtime.md does: an output is
    never an input except --checkpoint-out naming the --checkpoint it resumes (probe s29 nits
    finding 3; README said no output may be an input at all)."""
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    rule = readme[readme.index("**Outputs are all or nothing**"):readme.index("The renames run under a journal")]
    assert "no output may be another output or an input -- except `--checkpoint-out` naming the `--checkpoint` " \
           "it resumes (a checkpoint resumed in place" in rule, rule
    runtime = " ".join((Path(__file__).parents[2] / "docs" / "runtime.md").read_text().split())
    assert "except `--checkpoint-out` naming the `--checkpoint` it resumes (in place)" in runtime
    # what the hosts do: the checkpoint resumed in place is published, another output over it is refused
    inputs = {"s.bin": stream(TOKENS), "ck.bin": envelope(FRESH, UPDATES)}
    out = run_both(tmp_path, code, host, inputs, ["train", "--checkpoint", "ck.bin", *ARGS], name="rule-in-place")
    assert out.status == 0 and decode(out.files["ck.bin"])[1] == 2 * UPDATES, out.stderr
    over = ["--input", "s.bin", "--checkpoint-out", "out.bin", "--predictions", "ck.bin", "--result", "r.bin"]
    out = run_both(tmp_path, code, host, inputs, ["train", "--checkpoint", "ck.bin", *over], name="rule-over")
    assert out.status == 8 and b"--predictions" in out.stderr, out.stderr
    assert out.files == inputs
