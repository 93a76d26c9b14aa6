"""An output a request cannot write (here: the file size limit, ulimit -f, with SIGXFSZ ignored as a
shell's `ulimit -f` run does not ignore it but a supervisor may) is refused alike by the C host and
by `bobc run --reference`: the same exit 8 and the same line, for an interval checkpoint (train:
the first of its two publications) and for the last publication (predict) -- the reference said
bobc's `PATH: cannot write output (output): write failed: ...` where the host says `output PATH:
write of the temporary file failed: ...` (README: "same ... refusals and exit codes as the host";
probe s36 exitcodes finding 7)."""
from __future__ import annotations

import resource
import signal
import subprocess

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream

TOKENS = [(i * 37 + 11) % 256 for i in range(60)]
ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return request_host(tmp_path_factory)


def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)        # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))


@pytest.mark.parametrize("operation, line", [
    ("train", "native: command 71 (RequestCheckpointPublish): output ck.bin: write of the temporary file failed: "
              "File too large (the file size limit, ulimit -f, is 16 bytes: raise it, then run again) "
              "(nothing was published)\n"),
    ("predict", "native: output r.bin: write of the temporary file failed: File too large (the file size limit, "
                "ulimit -f, is 16 bytes: raise it, then run again) (nothing was published)\n"),
])
def test_an_output_the_request_cannot_write_is_refused_in_the_same_words_both_ways(tmp_path, host, operation, line):
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "s.bin").write_bytes(request_stream(TOKENS))
        done = subprocess.run(request_command(side, host, operation, *ARGS), cwd=folder, env=request_environment(),
                              preexec_fn=limited, capture_output=True, text=True, timeout=300)
        said[side] = (done.returncode, done.stderr)
        assert sorted(p.name for p in folder.iterdir()) == ["s.bin"], side      # nothing published, no temporary
    assert said["c"] == said["reference"] == (8, line), said
