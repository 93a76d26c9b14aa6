"""RequestWriteAt's offset + extent is never summed unchecked (probe s33 asan finding 5), and the
decoder's refusals name the command they stop at (findings 1, 2): the C host, the reference and
bobc's writer refuse alike, before the first command where the program gives the numbers, and
at run time for any write; nothing is written."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from native_helpers import PLANS, load_module, program_bytes

LIMIT = 1 << 30          # docs/native-host.md: the most bytes a request's predictions or result holds


@pytest.fixture(scope="module")
def code():
    return program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")


def _with_write_at_offset(code: bytes, offset: int, extent: int | None = None) -> bytes:
    from bobc.native.program import CODE_OF, decode
    write_at = [c for c in decode(code).commands if c.name == "RequestWriteAt"]
    assert len(write_at) == 1
    n = write_at[0].n
    old = bytes([CODE_OF["RequestWriteAt"]]) + b"".join(v.to_bytes(8, "little") for v in n)
    new = bytes([CODE_OF["RequestWriteAt"]]) + b"".join(
        v.to_bytes(8, "little") for v in (n[0], n[1], n[2] if extent is None else extent, offset))
    assert code.count(old) == 1
    return code.replace(old, new)


def _index_of_write_at(code: bytes) -> int:
    from bobc.native.program import decode
    return [c.name for c in decode(code).commands].index("RequestWriteAt")


def _c_and_reference(tmp_path: Path, code: bytes, name: str) -> tuple[int, str]:
    """The C host of `code` (the program bytes appended as a damaged host file would hold them,
    past bobc's writer) and the reference: the same status and message."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    host = tmp_path / name
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    done = subprocess.run([str(host), "train"], capture_output=True, timeout=60, cwd=tmp_path,
                          env={"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin"})
    stderr = io.BytesIO()
    status = run_program(code, ["train"], name=str(host), stderr=stderr)
    assert status == done.returncode, (stderr.getvalue(), done.stderr)
    assert stderr.getvalue() == done.stderr
    text = done.stderr.decode()
    prefix = f"native: {host}: damaged host file: its program: "
    assert text.startswith(prefix) and text.endswith("; rebuild it\n"), text
    return done.returncode, text[len(prefix):-len("; rebuild it\n")]


@pytest.mark.parametrize("offset, extent", [((1 << 64) - 2, None), (1 << 40, None), (LIMIT - 1, 4),
                                            (2, (1 << 64) - 1)],
                         ids=["wraps", "huge", "one-past-the-limit", "extent-wraps"])
def test_a_write_at_past_its_output_is_refused_before_the_first_command(tmp_path, code, offset, extent):
    bad = _with_write_at_offset(code, offset, extent)
    index = _index_of_write_at(code)
    from bobc.native.program import decode
    size = extent if extent is not None else [c for c in decode(code).commands if c.name == "RequestWriteAt"][0].n[2]
    status, message = _c_and_reference(tmp_path, bad, "write-at")
    assert status == 9
    said_bytes = f"{size} byte{'s' if size != 1 else ''}"
    assert message == (f"command {index} (RequestWriteAt): it writes {said_bytes} at offset {offset}, past the "
                       f"{LIMIT} bytes an output holds at most (file 4, the predictions)")


def test_a_write_at_up_to_the_limit_is_taken(code):
    from bobc.native.program import decode
    write_at = [c for c in decode(code).commands if c.name == "RequestWriteAt"][0]
    decode(_with_write_at_offset(code, LIMIT - write_at.n[2]))      # exactly to the limit: no refusal


def test_bobcs_writer_refuses_the_program_naming_the_command(code):
    from bobc.errors import BobcError
    from bobc.native.writer import native_host
    with pytest.raises(BobcError) as refused:
        native_host(_with_write_at_offset(code, (1 << 64) - 2), "sm_90")
    assert f"command {_index_of_write_at(code)} (RequestWriteAt): it writes" in refused.value.message


def test_the_references_run_time_write_is_refused_not_an_overflow():
    """The reference's RequestWrite/RequestWriteAt (RequestSession.write), as np_request_write:
    refused with status 1, the output left as it was (no OverflowError, no GiB allocated)."""
    from bobc.plan.model import CheckpointContract
    from bobc.reference.native_request import EXIT_INTERNAL, Refused, RequestSession
    session = RequestSession.__new__(RequestSession)
    session.out = {3: bytearray(), 4: bytearray(), 5: bytearray()}
    session.published, session.publications = 0, 1
    session.request = type("Request", (), {"contract": CheckpointContract(b"s", b"l", b"d", b"e", 16, 16, 1)})()
    for file, offset, what in ((4, (1 << 64) - 2, "predictions"), (5, 1 << 40, "result")):
        with pytest.raises(Refused) as refused:
            session.write(file, b"\1\2\3\4", offset)
        assert refused.value.status == EXIT_INTERNAL
        assert refused.value.message == (f"the program writes 4 bytes at {offset} of the {what}, past the {LIMIT} "
                                         "bytes an output holds at most")
        assert session.out[file] == bytearray()
    session.write(5, b"\1\2", 2)
    assert session.out[5] == bytearray(b"\0\0\1\2")


# ---- the decoder's refusals name the command they stop at (probe s33 asan findings 1, 2) ----


def test_an_unknown_code_and_a_bad_operation_name_their_command_both_ways(tmp_path):
    def u(v):
        return v.to_bytes(8, "little")
    header = b"NPHY" + (1).to_bytes(4, "little") + u(0) + u(8) + u(0)
    release = bytes([23])
    cases = {
        "code": (header + release + bytes([99]), f"byte {len(header) + 1}: unknown command code 99 (command 1)"),
        "operation": (header + release + bytes([6, 7]) + u(0) + bytes([0]) + u(0) + bytes([0]) + u(0) + bytes([0]),
                      "command 1 (Float): operation 7 is not 0-3"),
        "kind": (header + release + bytes([6, 0]) + u(0) + bytes([9]) + u(0) + bytes([0]) + u(0) + bytes([0]),
                 "command 1 (Float): operand kind 9 is not 0-3"),
    }
    for name, (program, expected) in cases.items():
        status, message = _c_and_reference(tmp_path, program, name)
        assert (status, message) == (9, expected), name


# ---- bobc build: a plan whose RequestWriteAt offset is past its output, refused where it is written ----

def test_bobc_build_refuses_a_plan_whose_write_at_offset_is_past_the_output(tmp_path):
    source = (PLANS / "Native" / "Request.bob").read_text()
    old = "NvidiaPlanHostStepWriteAt rqPredictions (nat-add rqStaging 1024) 4 12"
    assert source.count(old) == 1
    folder = tmp_path / "Native"
    folder.mkdir()
    for other in (PLANS / "Native").iterdir():
        if other.suffix == ".bob" and other.name != "Request.bob":
            (folder / other.name).write_text(other.read_text())
    plan = folder / "Request.bob"
    plan.write_text(source.replace(old, old[:-2] + "18446744073709551614"))
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--entry", "requestHost", "-o",
                           str(tmp_path / "host")], capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    assert "(RequestWriteAt): it writes 4 bytes at offset 18446744073709551614, past the" in done.stderr, done.stderr
    assert not (tmp_path / "host").exists()
