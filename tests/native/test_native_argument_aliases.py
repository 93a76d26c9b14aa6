"""An output argument that is the file another argument's ReadFile reads is refused before the
program runs, by the C host and the reference interpreter alike, byte for byte, exit 8, nothing
written (probe s29 seed003 finding 7: the training record given as the readback path was
overwritten by the 104-byte readback, and a worker given another worker's shard paths replaced
them, both exit 0).  "The same file": the same path once its folder is resolved, or the same
device and inode (a symlink or hard link to the input).  The same argument read and written --
a checkpoint resumed in place -- stays allowed, and so do distinct files.  Two output arguments
that are one file are refused too (host_io.c's rule, now saying what to do).

The program (plans/Native/Arguments.bob resumeInPlace) reads arguments 0 and 1, writes 0 back
(in place) and writes 2 and 3."""
from __future__ import annotations

import os

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_c, run_reference, write_host

CHECKPOINT = bytes(range(16))
RECORD = bytes(range(100, 116))
INPUTS = {"ck.bin": CHECKPOINT, "rec.bin": RECORD}


@pytest.fixture(scope="module")
def resume(tmp_path_factory):
    code = program_bytes(load_module(PLANS / "Native" / "Arguments.bob"), "resumeInPlace")
    return code, write_host(tmp_path_factory.mktemp("host"), "resume", code)


def refused(output: str, argument: int, read: int, path: str) -> bytes:
    return (f"native: output {output} (argument {argument}): is the same file as argument {read} {path}, which the "
            f"program reads; an output never replaces another argument's input: give argument {argument} a path of "
            f"its own; nothing was written\n").encode()


def both(tmp_path, resume, arguments, name, prepare=None):
    """The C host's outcome of one command line, checked to be the reference's (status, message
    and files left), each run in its own folder holding INPUTS and whatever `prepare(folder)`
    adds (native_helpers.run_sides, with a folder prepared first)."""
    code, host = resume
    for side in ("c", "reference"):
        folder = tmp_path / f"{name}-{side}"
        folder.mkdir()
        for file_name, data in INPUTS.items():
            (folder / file_name).write_bytes(data)
        if prepare:
            prepare(folder)
    c = run_c(host, tmp_path / f"{name}-c", arguments)
    reference = run_reference(code, tmp_path / f"{name}-reference", arguments, name=str(host))
    assert (c.status, c.stderr) == (reference.status, reference.stderr), (c.stderr, reference.stderr)
    assert c.files == reference.files
    return c


def summed(a: bytes, b: bytes) -> bytes:
    return ((int.from_bytes(a[:8], "little") + int.from_bytes(b[:8], "little")) % (1 << 64)).to_bytes(8, "little") \
        + a[8:]


def test_the_same_path_as_another_arguments_input_is_refused(tmp_path, resume):
    # the record given as an output's path (seed 003's `... myrec.bin myrec.bin`)
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "rec.bin", "o3"], "same")
    assert out.status == 8 and out.stderr == refused("rec.bin", 2, 1, "rec.bin")
    assert out.files == INPUTS                      # the record whole, nothing written
    # another spelling of that path: the same file once its folder is resolved
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "./sub/../rec.bin", "o3"], "spelt",
               prepare=lambda folder: (folder / "sub").mkdir())
    assert out.status == 8 and out.stderr == refused("./sub/../rec.bin", 2, 1, "rec.bin")
    assert out.files == INPUTS
    # a path that names no file yet: refused by its text alone, before the ReadFile would fail
    out = both(tmp_path, resume, ["ck.bin", "new.bin", "./new.bin", "o3"], "missing")
    assert out.status == 8 and out.stderr == refused("./new.bin", 2, 1, "new.bin")
    assert out.files == INPUTS
    # the checkpoint (read and written as argument 0) given again as argument 3: argument 0's
    # input would be replaced by argument 3's bytes; refused as two outputs that are one file
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "o2", "ck.bin"], "twice")
    assert out.status == 8 and out.stderr == (b"native: output ck.bin (argument 3): is the same file as argument 0 "
                                              b"ck.bin; give each output a path of its own; nothing was written\n")
    assert out.files == INPUTS


def test_a_symlink_to_the_output_given_as_the_input_is_refused(tmp_path, resume):
    # argument 1 reads through a link to the file argument 2 would replace
    def link(folder):
        (folder / "data.bin").write_bytes(RECORD)
        (folder / "link.bin").symlink_to("data.bin")
    out = both(tmp_path, resume, ["ck.bin", "link.bin", "data.bin", "o3"], "symlink", prepare=link)
    assert out.status == 8 and out.stderr == refused("data.bin", 2, 1, "link.bin")
    assert out.files == {**INPUTS, "data.bin": RECORD, "link.bin": RECORD}     # (the link read through)
    for side in ("c", "reference"):
        assert os.readlink(tmp_path / f"symlink-{side}" / "link.bin") == "data.bin"


def test_a_hard_link_to_another_arguments_input_is_refused(tmp_path, resume):
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "hard.bin", "o3"], "hard",
               prepare=lambda folder: os.link(folder / "rec.bin", folder / "hard.bin"))
    assert out.status == 8 and out.stderr == refused("hard.bin", 2, 1, "rec.bin")
    assert out.files == {**INPUTS, "hard.bin": RECORD}
    # two output arguments that are one file by a hard link (argument 0's checkpoint, written
    # back in place, and argument 3)
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "o2", "ck2.bin"], "hard-outputs",
               prepare=lambda folder: os.link(folder / "ck.bin", folder / "ck2.bin"))
    assert out.status == 8 and out.stderr == (b"native: output ck2.bin (argument 3): is the same file as argument 0 "
                                              b"ck.bin; give each output a path of its own; nothing was written\n")
    assert out.files == {**INPUTS, "ck2.bin": CHECKPOINT}


def test_an_input_given_in_another_arguments_place_is_refused(tmp_path, resume):
    # the checkpoint resumed in place (argument 0) given again as another output, or the record
    # given as the checkpoint read and written back: each refused naming both arguments
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "ck.bin", "o3"], "shard")
    assert out.status == 8 and out.stderr == (b"native: output ck.bin (argument 2): is the same file as argument 0 "
                                              b"ck.bin; give each output a path of its own; nothing was written\n")
    assert out.files == INPUTS
    out = both(tmp_path, resume, ["rec.bin", "rec.bin", "o2", "o3"], "record")
    assert out.status == 8 and out.stderr == refused("rec.bin", 0, 1, "rec.bin")
    assert out.files == INPUTS


def test_the_same_argument_read_and_written_is_allowed(tmp_path, resume):
    out = both(tmp_path, resume, ["ck.bin", "rec.bin", "o2", "o3"], "inplace")
    assert out.status == 0, out.stderr
    new = summed(CHECKPOINT, RECORD)
    assert out.files == {"ck.bin": new, "rec.bin": RECORD, "o2": RECORD, "o3": new}


def test_distinct_files_are_allowed_whatever_their_spelling(tmp_path, resume):
    def elsewhere(folder):
        (folder / "sub").mkdir()
        (folder / "o2").write_bytes(b"old")       # an existing output that is no input: replaced
    out = both(tmp_path, resume, ["./ck.bin", "sub/../rec.bin", "o2", "sub/o3"], "distinct", prepare=elsewhere)
    assert out.status == 0, out.stderr
    new = summed(CHECKPOINT, RECORD)
    assert out.files == {"ck.bin": new, "rec.bin": RECORD, "o2": RECORD}
    for side in ("c", "reference"):
        assert (tmp_path / f"distinct-{side}" / "sub" / "o3").read_bytes() == new
