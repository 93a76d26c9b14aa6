"""write_stream.py - -o STREAM: the text is a file, not stdin.

Probe s45 coppuser: `echo text | write_stream.py - -o s.stream` said "cannot read -: cannot open: No
such file or directory" -- true only of a file named '-' in the working folder, and no word of why
stdin is not read -- where `-o -` is explained (the stream is a file the host reads).  The tool reads
its text twice (the header's sha256 first, then the tokens, refusing a text that changed between),
which a pipe cannot give.  Expected: exit 2 saying the text is read from a file, naming the way to
give a file named '-' (./-), nothing written; `./-` itself is an ordinary file."""
from __future__ import annotations

import subprocess
import sys

from coppelius_model import stream

from .conftest import EXAMPLE


def run(folder, text, stdin=b""):
    return subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), text, "-o", "s.stream"], cwd=folder,
                          input=stdin, capture_output=True)


def test_dash_is_refused_saying_the_text_is_a_file(tmp_path):
    done = run(tmp_path, "-", b"some text from a pipe\n")
    assert done.returncode == 2
    said = done.stderr.decode()
    assert said.startswith("write_stream.py: error: TEXT -: the text is read from a file, not stdin") and "./-" in said
    assert "Traceback" not in said and not (tmp_path / "s.stream").exists()


def test_a_file_named_dash_is_read_as_dot_slash_dash(tmp_path):
    (tmp_path / "-").write_bytes(b"abc\n")
    done = run(tmp_path, "./-")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.stream").read_bytes() == stream.from_bytes(b"abc\n").encode()
