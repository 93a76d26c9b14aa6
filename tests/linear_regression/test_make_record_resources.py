"""examples/linear_regression/make_record.py under resource failures (probe s33 resources finding
5): the record is published through a synced temporary renamed into place, so a full disk
(ENOSPC), a file size limit (EFBIG, `ulimit -f`) or a bad output path is one message, exit 8, the
file there unchanged and no temporary left; a symbolic link is refused, never written through."""
from __future__ import annotations

import errno
import importlib.util
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "examples/linear_regression/make_record.py"
RECORD_BYTES = 16 + 64 * 7 * 4 + 64 * 4          # LINREG01, version, X, y (LinReg.Model)


@pytest.fixture
def tool():
    spec = importlib.util.spec_from_file_location("make_record_s33", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# root ignores a folder's modes; without those capabilities it honours them (as a user does)
HONOUR_MODES = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []


def run(*args, fsize: int | None = None, cwd=None, prefix=()):
    def limit():
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return subprocess.run([*prefix, sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, preexec_fn=limit, timeout=120)


def one_refusal(stderr: str, path) -> None:
    lines = stderr.splitlines()
    assert "Traceback" not in stderr
    assert lines[0].startswith(f"make_record.py: error: {path}: cannot write output (-o): ")
    assert lines[1:] == ["hint: nothing was written; the files there are unchanged"]


def good_record(folder: Path) -> tuple[Path, bytes]:
    made = run("-o", folder / "lr.bin")
    assert made.returncode == 0, made.stderr
    data = (folder / "lr.bin").read_bytes()
    assert len(data) == RECORD_BYTES and data.startswith(b"LINREG01")
    return folder / "lr.bin", data


def test_a_file_size_limit_leaves_the_good_record_and_no_temporary(tmp_path):
    path, data = good_record(tmp_path)
    limited = run("-o", path, "--seed", "1", fsize=1024)
    assert limited.returncode == 8
    one_refusal(limited.stderr, path)
    assert os.strerror(errno.EFBIG) in limited.stderr
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lr.bin"]


def test_a_file_size_limit_on_a_new_record_leaves_nothing(tmp_path):
    limited = run("-o", tmp_path / "new.bin", fsize=1024)
    assert limited.returncode == 8 and os.strerror(errno.EFBIG) in limited.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("call", ["write", "fsync"])
def test_a_full_disk_is_one_message_and_the_record_is_unchanged(tool, tmp_path, monkeypatch, capsys, call):
    path, data = good_record(tmp_path)

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(tool.os, call, full)
    assert tool.main(["-o", str(path), "--seed", "1"]) == 8
    one_refusal(capsys.readouterr().err, path)
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lr.bin"]


def test_dev_full_is_refused(tmp_path):
    refused = run("-o", "/dev/full")
    assert refused.returncode == 8
    one_refusal(refused.stderr, "/dev/full")


def test_a_symbolic_link_is_refused_and_its_target_kept(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "link.bin").symlink_to("notes.txt")
    refused = run("-o", tmp_path / "link.bin")
    assert refused.returncode == 8
    one_refusal(refused.stderr, tmp_path / "link.bin")
    assert "symbolic link" in refused.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine\n" and (tmp_path / "link.bin").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bin", "notes.txt"]


def test_a_parent_that_is_a_file_is_one_message(tmp_path):
    (tmp_path / "afile").write_text("x")
    refused = run("-o", tmp_path / "afile" / "lr.bin")
    assert refused.returncode == 8
    one_refusal(refused.stderr, tmp_path / "afile" / "lr.bin")
    assert "is not a folder" in refused.stderr


def test_a_missing_folder_is_one_message(tmp_path):
    refused = run("-o", tmp_path / "no" / "lr.bin")
    assert refused.returncode == 8
    one_refusal(refused.stderr, tmp_path / "no" / "lr.bin")


def test_a_folder_that_refuses_the_temporary_is_one_message(tool, tmp_path, monkeypatch, capsys):
    """A read-only folder (EROFS, or EACCES for a user who may not write there: as root here, the
    refusal is simulated at the temporary's creation)."""
    path, data = good_record(tmp_path)
    real_open = os.open

    def refusing(name, flags, *rest, **kw):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), name)
        return real_open(name, flags, *rest, **kw)
    monkeypatch.setattr(tool.os, "open", refusing)
    assert tool.main(["-o", str(path)]) == 8
    err = capsys.readouterr().err
    one_refusal(err, path)
    assert "cannot create a temporary file" in err and os.strerror(errno.EROFS) in err
    assert path.read_bytes() == data


def test_a_read_only_folder_is_one_message(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        refused = run("-o", folder / "lr.bin", prefix=HONOUR_MODES)
    finally:
        folder.chmod(0o755)
    assert refused.returncode == 8
    one_refusal(refused.stderr, folder / "lr.bin")
    assert list(folder.iterdir()) == []


def test_a_record_replaces_a_regular_file_whole(tmp_path):
    path, _ = good_record(tmp_path)
    again = run("-o", path, "--seed", "2")
    assert again.returncode == 0 and again.stderr == ""
    assert len(path.read_bytes()) == RECORD_BYTES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lr.bin"]
