"""What a native host says and refuses before its program touches anything (probe s27):
a diagnostic file (NATIVE_TRACE, NATIVE_SUBMIT_TIMES) that is one of the run's inputs is
refused, exit 8, before it is opened for writing (it used to be truncated first, destroying
the input); a misspelt BOBC_GPU_MAPPING is a usage error (exit 2) on any machine; and a
request's messages -- an output's refusal said once, the input's name as the usage names it,
an option whose value is missing -- are the C host's and the reference's alike, byte for byte.
The request host is plans/Native/Request.bob's (a token stream), run with NATIVE_DEVICE=memory."""
from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_c, run_reference, run_sides, write_host

ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
TOKENS = [(i * 37 + 11) % 256 for i in range(60)]


def stream(tokens) -> bytes:
    body = b"".join(struct.pack("<I", t) for t in tokens)
    return struct.pack("<8sIIIIQ32s", b"COPSTRM1", 1, 4, 256, 64, len(tokens), hashlib.sha256(body).digest()) + body


GOOD = stream(TOKENS)


@pytest.fixture(scope="module")
def request_module():
    return load_module(PLANS / "Native" / "Request.bob")


@pytest.fixture(scope="module")
def code(request_module):
    return program_bytes(request_module, "requestProgram")


@pytest.fixture(scope="module")
def host(code, tmp_path_factory):
    return write_host(tmp_path_factory.mktemp("request-host"), "request-host", code)




# ---- diagnostic files never destroy an input (finding 7) ----

@pytest.mark.parametrize("arguments, victim", [
    (["train", *ARGS], "s.bin"),
    (["train", "--input=s.bin", *ARGS[2:]], "s.bin"),
    (["train", "--checkpoint", "in.bin", *ARGS], "in.bin"),
], ids=["input", "input-equals", "checkpoint"])
def test_a_trace_naming_an_input_is_refused_before_it_is_written(tmp_path, code, host, arguments, victim):
    from bobc.reference import envelope
    from bobc.plan.model import CheckpointContract

    contract = CheckpointContract(b"request-test-schema-v1", b"request-test-learner", b"token-stream-u32|context=4",
                                  b"request-test-seed", 40, 16, 6)
    inputs = {"s.bin": GOOD, "in.bin": envelope.encode(contract, 0, bytes(40))}
    c, reference = run_sides(tmp_path, code, host, inputs, arguments, env={"NATIVE_TRACE": victim})
    expected = (f"native: NATIVE_TRACE {victim}: is the input {victim}; a diagnostic file never replaces an input; "
                f"nothing was written\n").encode()
    for out in (c, reference):
        assert (out.status, out.stderr) == (8, expected)
        assert out.files == inputs          # the input whole, nothing else written
    # another spelling of the same file: refused by its identity (device and inode), not its text
    folder = tmp_path / "spelt"
    folder.mkdir()
    for file_name, data in inputs.items():
        (folder / file_name).write_bytes(data)
    for run in (lambda env: run_c(host, folder, arguments, env),
                lambda env: run_reference(code, folder, arguments, env)):
        out = run({"NATIVE_TRACE": f"{folder}/{victim}"})
        assert out.status == 8 and out.files == inputs, out.stderr
        assert out.stderr.startswith(f"native: NATIVE_TRACE {folder}/{victim}: is the input {victim};".encode())


def test_submit_times_naming_an_input_is_refused_and_a_new_trace_is_still_written(tmp_path, host):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "s.bin").write_bytes(GOOD)
    out = run_c(host, folder, ["train", *ARGS], env={"NATIVE_SUBMIT_TIMES": "s.bin"})
    assert out.status == 8 and out.stderr == (b"native: NATIVE_SUBMIT_TIMES s.bin: is the input s.bin; a diagnostic "
                                              b"file never replaces an input; nothing was written\n")
    assert (folder / "s.bin").read_bytes() == GOOD
    # an existing trace that is no input is replaced (truncated, then written), and the run goes on
    (folder / "trace.txt").write_bytes(b"x" * 10000)
    out = run_c(host, folder, ["train", *ARGS], env={"NATIVE_TRACE": "trace.txt"})
    assert out.status == 0, out.stderr
    assert (folder / "trace.txt").read_text().startswith("open train step 0\n")
    assert b"x" not in (folder / "trace.txt").read_bytes()


# ---- BOBC_GPU_MAPPING at start-up (finding 9) ----

def test_a_misspelt_gpu_mapping_is_a_usage_error_before_anything_is_read(tmp_path, host):
    folder = tmp_path / "run"
    folder.mkdir()
    for env in ({"NATIVE_DEVICE": "gpu"}, {}):      # a real device (none here) or the memory session
        out = run_c(host, folder, ["train", "--input", "absent.bin", *ARGS[2:]],
                    env={**env, "BOBC_GPU_MAPPING": "bogus", "NATIVE_TRACE": "trace.txt"})
        assert out.status == 2 and out.stderr == (b"native: BOBC_GPU_MAPPING=bogus: expected rm or uvm (or leave it "
                                                  b"unset)\n"), out.stderr
        assert list(folder.iterdir()) == []         # not even the trace


# ---- messages (section 10) ----

def test_an_output_refusal_says_nothing_was_written_once(tmp_path, code, host):
    c, reference = run_sides(tmp_path, code, host, {"s.bin": GOOD}, ["train", "--input", "s.bin", "--checkpoint-out", ".",
                                                                *ARGS[4:]])
    assert c.status == reference.status == 8 and c.stderr == reference.stderr, (c.stderr, reference.stderr)
    assert c.stderr.startswith(b"native: output . (--checkpoint-out): ")
    assert c.stderr.endswith(b"; nothing was written\n") and b"nothing was published" not in c.stderr, c.stderr
    # a refusal that says nothing of it still ends saying nothing was published
    c, reference = run_sides(tmp_path, code, host, {}, ["train", *ARGS], name="missing")
    assert c.stderr == reference.stderr and c.stderr.endswith(b"cannot open: No such file or directory; nothing was "
                                                              b"published\n"), c.stderr


def test_the_input_is_named_as_the_usage_names_it(tmp_path, code, host):
    c, reference = run_sides(tmp_path, code, host, {}, ["train", *ARGS[2:]])
    assert c.status == reference.status == 2 and c.stderr == reference.stderr
    assert c.stderr == b"native: missing --input STREAM; nothing was published\n"
    done = subprocess.run([str(host), "--help"], cwd=tmp_path, capture_output=True,
                          env={**os.environ, "NATIVE_DEVICE": "memory"})
    assert done.returncode == 0
    assert done.stdout == (f"usage: {host} train|predict --input STREAM [--checkpoint IN] --checkpoint-out OUT "
                           f"--predictions FILE --result FILE\n").encode()


def test_an_option_without_its_value_is_named(tmp_path, code, host):
    arguments = ["train", "--input", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
    c, reference = run_sides(tmp_path, code, host, {"s.bin": GOOD}, arguments)
    assert c.status == reference.status == 2 and c.stderr == reference.stderr
    assert c.stderr == (b"native: option --input needs a value; the next word, "
                        b"'--checkpoint-out', is an option (write --input=VALUE for a value starting with '-'); "
                        b"nothing was published\n")
    # a value that starts with '-' is given with '='
    shutil.copy(tmp_path / "x-c" / "s.bin", tmp_path / "x-c" / "-s.bin")
    out = run_c(host, tmp_path / "x-c", ["train", "--input=-s.bin", *ARGS[2:]])
    assert out.status == 0, out.stderr
