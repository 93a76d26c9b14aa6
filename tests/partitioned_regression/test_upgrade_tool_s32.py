"""examples/partitioned_regression/upgrade_checkpoint.py (probe s32 today3 findings 1 and 2): one
file given twice is refused, shards keep their permission bits, a FIFO is refused without
waiting, a failed write leaves nothing rewritten and a failed rename says what is left."""
from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from partitioned_regression import formats as F

REPOSITORY = Path(__file__).resolve().parents[2]
TOOL = REPOSITORY / "examples/partitioned_regression/upgrade_checkpoint.py"
NAMES = ["m", "w0", "a0", "w1", "a1"]


@pytest.fixture
def tool():
    spec = importlib.util.spec_from_file_location("upgrade_checkpoint_s32", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def older(folder: Path) -> list[str]:
    (folder / "m").write_bytes(F.manifest(3))
    for k, name in enumerate(NAMES[1:]):
        (folder / name).write_bytes(F.older_shard(3, 100, 1.5 + k))
    for name in NAMES:
        os.chmod(folder / name, 0o644)
    return [str(folder / name) for name in NAMES]


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_same_file_given_twice_is_refused_and_nothing_is_rewritten(tool, tmp_path, capsys):
    paths = older(tmp_path)
    before = contents(tmp_path)
    assert tool.main([paths[0], paths[1], paths[2], paths[1], paths[4]]) == 2
    error = capsys.readouterr().err
    assert error.startswith("upgrade_checkpoint.py: error: worker 1's weight shard (argument 3) "
                            f"{paths[1]} is the same file as worker 0's weight shard (argument 1) {paths[1]}")
    assert error.endswith("nothing was rewritten\n") and "\n" not in error[:-1]
    assert contents(tmp_path) == before


def test_a_symbolic_link_to_another_argument_is_the_same_file(tool, tmp_path, capsys):
    paths = older(tmp_path)
    (tmp_path / "link").symlink_to("w1")
    before = contents(tmp_path)
    assert tool.main([paths[0], str(tmp_path / "link"), paths[2], paths[3], paths[4]]) == 2
    assert "is the same file as worker 0's weight shard (argument 1)" in capsys.readouterr().err
    assert contents(tmp_path) == before and (tmp_path / "link").is_symlink()


def test_a_hard_link_to_another_argument_is_refused(tool, tmp_path, capsys):
    paths = older(tmp_path)
    os.link(paths[1], tmp_path / "hard")
    before = contents(tmp_path)
    assert tool.main([paths[0], paths[1], paths[2], str(tmp_path / "hard"), paths[4]]) == 2
    assert ("worker 1's weight shard (argument 3) " + str(tmp_path / "hard") + " is the same file as "
            "worker 0's weight shard (argument 1)") in capsys.readouterr().err
    assert contents(tmp_path) == before


def test_rewritten_shards_keep_their_permission_bits(tool, tmp_path):
    paths = older(tmp_path)
    os.chmod(paths[2], 0o640)
    assert tool.main(paths) == 0
    modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode) for name in NAMES}
    assert modes == {"m": 0o644, "w0": 0o644, "a0": 0o640, "w1": 0o644, "a1": 0o644}
    assert [(tmp_path / name).read_bytes()[:4] for name in NAMES[1:]] == list(F.TAGS)


def test_a_shard_given_as_a_symbolic_link_is_rewritten_where_it_points(tool, tmp_path):
    paths = older(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    os.replace(paths[3], store / "w1")
    os.chmod(store / "w1", 0o604)
    (tmp_path / "w1").symlink_to(store / "w1")
    assert tool.main(paths) == 0
    assert (tmp_path / "w1").is_symlink() and os.readlink(tmp_path / "w1") == str(store / "w1")
    assert (store / "w1").read_bytes()[:4] == b"SHw1"
    assert stat.S_IMODE(os.stat(store / "w1").st_mode) == 0o604
    assert sorted(os.listdir(store)) == ["w1"]


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_fifo_or_a_folder_given_as_a_shard_is_refused_without_waiting(tmp_path, kind):
    paths = older(tmp_path)
    os.unlink(paths[2])
    if kind == "fifo":
        os.mkfifo(paths[2])
    else:
        os.mkdir(paths[2])
    before = {name: (tmp_path / name).read_bytes() for name in ("m", "w0", "w1", "a1")}
    done = subprocess.run([sys.executable, str(TOOL), *paths], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    shown = "a FIFO" if kind == "fifo" else "a folder"
    assert done.stderr == (f"upgrade_checkpoint.py: error: worker 0's accumulator shard (argument 2) {paths[2]}: "
                           f"{shown}, not a checkpoint file; give the file itself; nothing was rewritten\n")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before


def test_a_temporary_that_cannot_be_written_leaves_nothing_rewritten(tool, tmp_path, capsys, monkeypatch):
    paths = older(tmp_path)
    before = contents(tmp_path)
    real = os.fsync
    calls = []

    def fsync(handle):
        calls.append(handle)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(handle)
    monkeypatch.setattr(tool.os, "fsync", fsync)
    assert tool.main(paths) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"upgrade_checkpoint.py: error: worker 1's weight shard (argument 3) {paths[3]}: "
                            f"cannot write its tagged copy ({tmp_path}: No space left on device); nothing was "
                            f"rewritten\n")
    assert contents(tmp_path) == before  # no temporaries left either


def test_a_rename_that_fails_says_what_is_tagged_and_what_to_do(tool, tmp_path, capsys, monkeypatch):
    paths = older(tmp_path)
    real = os.replace
    calls = []

    def replace(source, target):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(30, "Read-only file system")
        return real(source, target)
    monkeypatch.setattr(tool.os, "replace", replace)
    assert tool.main(paths) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"upgrade_checkpoint.py: error: worker 1's weight shard (argument 3) {paths[3]}: cannot rename its "
        f"tagged copy over it (Read-only file system); the checkpoint is half upgraded: tagged now: "
        f"worker 0's weight shard (argument 1) {paths[1]}, worker 0's accumulator shard (argument 2) {paths[2]}; "
        f"left as they were: worker 1's weight shard (argument 3) {paths[3]}, worker 1's accumulator shard "
        f"(argument 4) {paths[4]}; fix the cause and run upgrade_checkpoint.py again with the same arguments "
        f"(it leaves tagged shards as they are and tags the rest)\n")
    assert sorted(os.listdir(tmp_path)) == sorted(NAMES)  # no temporaries left
    monkeypatch.setattr(tool.os, "replace", real)
    assert tool.main(paths) == 0
    assert [(tmp_path / name).read_bytes()[:4] for name in NAMES[1:]] == list(F.TAGS)
