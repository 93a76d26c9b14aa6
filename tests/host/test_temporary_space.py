"""A temporary file bobc needs that cannot be written (a full disk, a quota, `ulimit -f`) is one
message and exit 8 (`bobc diff`: 2, it cannot compare), never a traceback (probe s31 signals
finding 2: `bobc build` failed with OSError [Errno 27] in host/sections.py:embed, `bobc dump` and
`bobc diff` in nvidia/decode.py:_nvdisasm_listing, and diff said 1, "they differ").

The failures are made deterministic with RLIMIT_FSIZE in the child (SIGXFSZ ignored, so a write
past the limit fails with EFBIG instead of killing the process): no tmpfs mount is needed."""
from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


def _limited(limit: int):
    def start() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return start


def _environment(tmp_path: Path, **more) -> dict[str, str]:
    temporary = tmp_path / "tmp"
    temporary.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "TMPDIR": str(temporary),
            "BOBC_CACHE_DIR": "off", **more}


def _bobc(arguments: list[str], tmp_path: Path, limit: int, **more) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", *arguments], cwd=tmp_path, capture_output=True,
                          text=True, env=_environment(tmp_path, **more), preexec_fn=_limited(limit))


def _fake_nvdisasm(tmp_path: Path) -> str:
    """An nvdisasm that is never reached when its input cannot be written (and prints nothing)."""
    fake = tmp_path / "nvdisasm"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    return str(fake)


def _one_refusal(done: subprocess.CompletedProcess, command: str) -> list[str]:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith(f"bobc {command}: error: cannot write the temporary file "), lines
    assert lines[0].endswith(": File too large"), lines
    assert lines[1].startswith("hint: the file size limit (ulimit -f)"), lines
    return lines


def test_dump_whose_nvdisasm_input_cannot_be_written_exits_8_with_one_message(tmp_path):
    done = _bobc(["dump", str(GOLDEN / "bob-sm_90")], tmp_path, 4096, BOBC_NVDISASM=_fake_nvdisasm(tmp_path))
    assert done.returncode == 8, done.stderr
    lines = _one_refusal(done, "dump")
    assert f"{tmp_path / 'tmp'}/bobc-proc-" in lines[0] and "code.bin" in lines[0]
    assert not list((tmp_path / "tmp").iterdir())          # the command's folder went with it


def test_diff_that_cannot_write_a_temporary_says_2_not_they_differ(tmp_path):
    done = _bobc(["diff", str(GOLDEN / "bob-sm_86"), str(GOLDEN / "bob-sm_90")], tmp_path, 4096,
                 BOBC_NVDISASM=_fake_nvdisasm(tmp_path))
    assert done.returncode == 2, done.stderr + done.stdout
    _one_refusal(done, "diff")


def test_embed_past_the_file_size_limit_refuses_and_leaves_the_host_as_it_was(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    source = tmp_path / "tiny.c"
    source.write_text("int main(void) { return 0; }\n")
    host = tmp_path / "host"
    subprocess.run(["gcc", str(source), "-o", str(host)], check=True)
    before = host.read_bytes()
    script = ("import sys\nfrom pathlib import Path\nfrom bobc.errors import BobcError\nfrom bobc.host import sections\n"
              "try:\n    sections.embed(Path(sys.argv[1]), {'program': bytes(1 << 20)})\n"
              "except BobcError as error:\n    print(type(error).__name__, error.exit_code)\n    print(error.render())\n")
    done = subprocess.run([sys.executable, "-c", script, str(host)], capture_output=True, text=True,
                          env=_environment(tmp_path), preexec_fn=_limited(len(before) + 65536))
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "TemporaryWriteFailure 8"
    assert lines[1] == f"error: cannot write the temporary file {host}.sections: File too large"
    assert host.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host", "tiny.c", "tmp"]    # no .sections left


def test_build_past_the_file_size_limit_exits_8_and_says_so(tmp_path):
    """The link (or, on a cold cache, a compile) meets the limit: gcc's failure is said as the
    file size limit, exit 8, no "bobc bug", no traceback, no output."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    done = _bobc(["build", str(PLAN), "-o", "host"], tmp_path, 100 * 1024)
    assert done.returncode == 8, done.stderr
    assert "Traceback" not in done.stderr and "bobc bug" not in done.stderr
    assert "file size limit" in done.stderr
    assert "hint: raise the file size limit (ulimit -f), then build again" in done.stderr
    assert not (tmp_path / "host").exists()


def test_a_full_temporary_folder_names_the_folder_to_free(tmp_path):
    from bobc.errors import TemporaryWriteFailure, temporary_base

    process = tmp_path / "bobc-proc-abc123"
    error = TemporaryWriteFailure(process / "tmpx" / "code.bin", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    assert error.exit_code == 8
    assert error.render() == (f"error: cannot write the temporary file {process}/tmpx/code.bin: "
                              f"No space left on device\n"
                              f"hint: free space in {tmp_path}, or point TMPDIR at a folder with room")
    assert temporary_base(process, folder=True) == tmp_path
    assert temporary_base(tmp_path / "x" / "f") == tmp_path / "x"


@pytest.mark.parametrize("call", [
    "from bobc.sass.oracle import disassemble; disassemble(bytes(20000), 'SM86')",
    "from bobc.sim.sass_frontend import disassembly_text; disassembly_text(bytes(20000), 'SM86')",
], ids=["oracle", "simulator"])
def test_the_other_nvdisasm_inputs_are_refused_as_one_message(tmp_path, call):
    """The assembler's oracle and the simulator write nvdisasm's input the same way (fix-diskfull's
    note): past the file size limit, a TemporaryWriteFailure (exit 8), not an OSError."""
    program = ("import sys\nfrom bobc.errors import TemporaryWriteFailure\ntry:\n    " + call +
               "\nexcept TemporaryWriteFailure as error:\n    print(error.exit_code, error.message)\n    sys.exit(0)\n"
               "sys.exit(3)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env=_environment(tmp_path, BOBC_NVDISASM=_fake_nvdisasm(tmp_path)),
                          preexec_fn=_limited(4096))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("8 cannot write the temporary file ") and "File too large" in done.stdout
