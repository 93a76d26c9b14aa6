"""A native program's output refused before it runs: the C host and the reference interpreter
say it in the same words (docs/native-host.md: the reference gives the host's verdicts and
messages), `output PATH (argument N): WHY; nothing was written`, exit 8, nothing written.
Probe s27 (seed 003, finding 8): the reference said `PATH: cannot write output (argument N): WHY`."""
from __future__ import annotations

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_c, run_reference, write_host


@pytest.fixture(scope="module")
def arithmetic(tmp_path_factory):
    """Commands.bob's `arithmetic`: reads argument 0, writes argument 1."""
    code = program_bytes(load_module(PLANS / "Native" / "Commands.bob"), "arithmetic")
    return code, write_host(tmp_path_factory.mktemp("host"), "arithmetic", code)


CASES = {
    "a folder": (lambda folder: (folder / "out").mkdir(), "out",
                 "output out (argument 1): is a folder; only a regular file (or nothing) is replaced"),
    "a missing folder": (lambda folder: None, "nodir/out.bin",
                         "output nodir/out.bin (argument 1): its folder nodir does not exist; create it first"),
    "a symlink": (lambda folder: (folder / "out").symlink_to("elsewhere"), "out",
                  "output out (argument 1): is a symbolic link; only a regular file (or nothing) is replaced"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_host_and_the_reference_refuse_an_output_in_the_same_words(arithmetic, tmp_path, case):
    code, host = arithmetic
    setup, output, said = CASES[case]
    outcomes = []
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "in.bin").write_bytes(bytes(1024))
        setup(folder)
        outcomes.append(run_c(host, folder, ["in.bin", output]) if side == "c"
                        else run_reference(code, folder, ["in.bin", output]))
    c, reference = outcomes
    assert (c.status, c.stderr) == (reference.status, reference.stderr)
    assert c.status == 8 and c.stderr.decode() == f"native: {said}; nothing was written\n"
    assert c.files == reference.files
