"""An output named directly under the root folder has the folder "/" (probe s40 mutants5).

runtime_c/host_io.c rt_io_add_output takes an output's folder as the path up to its last '/',
"/" for a name at the root, "." for a bare name; bobc.reference.safe_io says the same
(tests/native/test_output_folder_as_written_s40.py tried "no//o" and "no/sub///o" only, so a
reference taking the root's folder as "" -- refused as "its folder  does not exist" -- passed).
A name of 250 bytes is refused before anything is written: the publication's temporaries add 25
bytes to it, past a 255-byte NAME_MAX; the refusal names the folder the host would.
"""
from __future__ import annotations

import pytest

from bobc.reference.safe_io import OutputSet, OutputWriteFailure


def test_an_output_at_the_root_has_the_root_as_its_folder():
    with pytest.raises(OutputWriteFailure) as refused:
        OutputSet().add("/" + "x" * 250, "--result")
    message = str(refused.value)
    assert "its file name has 250 bytes, and its folder / takes names of at most" in message, message
    assert "does not exist" not in message
