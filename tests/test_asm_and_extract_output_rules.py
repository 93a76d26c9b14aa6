"""`bobc asm -o` follows `bobc build -o`'s output rules (probe s30 cli finding 2): the source
itself (or a hard link to it), a symlink, a folder, a device, a missing folder are refused,
exit 8, before anything is assembled or written; an empty value is a usage error (exit 2), as
build's; the output is written to a temporary beside it and renamed into place.  And `bobc
inspect HOST --extract DIR` never writes an image over the host it inspects."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"
KEPT = "hint: nothing was written; the files there are unchanged"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copy(SOURCE, tmp_path / "k.sass")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def asm(capsys, *args):
    code = main(["asm", "k.sass", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("cubin", [[], ["--cubin"]])
def test_asm_never_writes_over_its_source(folder, capsys, cubin):
    before = (folder / "k.sass").read_bytes()
    code, out, err = asm(capsys, *cubin, "-o", "k.sass")
    assert code == 8, err
    assert err.splitlines() == ["bobc asm: error: k.sass: cannot write output (-o): is the input k.sass (the source "
                                "assembled); an output never replaces an input", KEPT]
    assert out == ""
    assert (folder / "k.sass").read_bytes() == before
    os.link(folder / "k.sass", folder / "hard.sass")
    code, _, err = asm(capsys, *cubin, "-o", "hard.sass")
    assert code == 8 and "hard.sass: cannot write output (-o): is the input k.sass (the source assembled)" in err
    assert (folder / "k.sass").read_bytes() == before


@pytest.mark.parametrize("output, detail", [
    ("nofolder/x.bin", "its folder nofolder does not exist; create it first"),
    ("adir", "is a folder; only a regular file (or nothing) is replaced"),
    ("adir/", "ends with '/': an output is a file, not a folder"),
    ("link.bin", "is a symbolic link; only a regular file (or nothing) is replaced"),
    ("/dev/null", "is a device; only a regular file (or nothing) is replaced"),
])
def test_asm_output_refused_like_builds(folder, capsys, output, detail):
    (folder / "adir").mkdir()
    (folder / "target.bin").write_bytes(b"kept")
    (folder / "link.bin").symlink_to("target.bin")
    code, out, err = asm(capsys, "-o", output)
    assert code == 8, err
    assert err.splitlines() == [f"bobc asm: error: {output}: cannot write output (-o): {detail}", KEPT]
    assert out == ""
    assert (folder / "target.bin").read_bytes() == b"kept"
    assert sorted(p.name for p in folder.iterdir()) == ["adir", "k.sass", "link.bin", "target.bin"]
    assert list((folder / "adir").iterdir()) == []


def test_asm_empty_output_is_a_usage_error(folder, capsys):
    code, out, err = asm(capsys, "-o", "")
    assert code == 2, err
    assert err.splitlines()[0] == "bobc asm: error: option -o has an empty value"
    assert sorted(p.name for p in folder.iterdir()) == ["k.sass"]


def test_asm_replaces_an_output_by_rename(folder, capsys):
    """A file there is replaced (a new inode: renamed into place, never written through), and
    nothing but the output is left beside it."""
    (folder / "k.bin").write_bytes(b"old")
    (folder / "other.bin").hardlink_to(folder / "k.bin")
    code, out, err = asm(capsys, "-o", "k.bin")
    assert code == 0, err
    assert out.startswith("k.bin: raw stream, ")
    assert (folder / "other.bin").read_bytes() == b"old"      # the old inode, untouched
    assert len((folder / "k.bin").read_bytes()) % 16 == 0 and (folder / "k.bin").read_bytes() != b"old"
    assert sorted(p.name for p in folder.iterdir()) == ["k.bin", "k.sass", "other.bin"]


def test_inspect_extract_never_writes_over_the_host_it_reads(tmp_path, capsys):
    """A host named program.bin inside the --extract folder: refused, exit 8, the host intact."""
    host = tmp_path / "images" / "program.bin"
    host.parent.mkdir()
    assert main(["build", str(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"), "-o", str(host)]) == 0
    before = host.read_bytes()
    capsys.readouterr()
    code = main(["inspect", str(host), "--extract", str(host.parent)])
    _, err = capsys.readouterr()
    assert code == 8, err
    assert "program.bin: cannot write output (--extract): is the input " in err
    assert "program.bin (the host inspected); an output never replaces an input" in err
    assert host.read_bytes() == before
    assert sorted(p.name for p in host.parent.iterdir()) == ["program.bin"]
