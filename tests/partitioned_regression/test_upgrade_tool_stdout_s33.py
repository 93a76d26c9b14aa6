"""examples/partitioned_regression/upgrade_checkpoint.py when stdout cannot take its summary, or
the run is interrupted (probe s33 resources finding 8): the summary is printed only after every
rename, so a full stdout (`> /dev/full`), a closed one or a reader gone away never stops an
upgrade half way; whatever ends a run, each shard is tagged or as it was, no temporary is left,
and the message says which."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from partitioned_regression import formats as F

REPOSITORY = Path(__file__).resolve().parents[2]
TOOL = REPOSITORY / "examples/partitioned_regression/upgrade_checkpoint.py"
NAMES = ["m", "w0", "a0", "w1", "a1"]
UPGRADED = ("upgrade_checkpoint.py: the checkpoint is upgraded (every shard tagged), but its summary could not "
            "be printed on stdout ({})\n")


@pytest.fixture
def tool():
    spec = importlib.util.spec_from_file_location("upgrade_checkpoint_s33", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def older(folder: Path) -> list[str]:
    (folder / "m").write_bytes(F.manifest(3))
    for k, name in enumerate(NAMES[1:]):
        (folder / name).write_bytes(F.older_shard(3, 100, 1.5 + k))
    return [str(folder / name) for name in NAMES]


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def all_tagged(folder: Path) -> bool:
    return [(folder / name).read_bytes()[:4] for name in NAMES[1:]] == list(F.TAGS)


def environment(unbuffered: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_full_stdout_leaves_every_shard_tagged_and_says_so(tmp_path, unbuffered):
    paths = older(tmp_path)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, str(TOOL), *paths], stdout=full, stderr=subprocess.PIPE, text=True,
                              env=environment(unbuffered), timeout=60)
    assert done.returncode == 0
    assert done.stderr == UPGRADED.format("No space left on device")
    assert all_tagged(tmp_path) and sorted(os.listdir(tmp_path)) == sorted(NAMES)


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_gone_away_leaves_every_shard_tagged(tmp_path, unbuffered):
    paths = older(tmp_path)
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, str(TOOL), *paths], stdout=write, stderr=subprocess.PIPE, text=True,
                              env=environment(unbuffered), timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == ""
    assert all_tagged(tmp_path) and sorted(os.listdir(tmp_path)) == sorted(NAMES)


def test_a_closed_stdout_leaves_every_shard_tagged_and_says_so(tmp_path):
    paths = older(tmp_path)
    done = subprocess.run([sys.executable, str(TOOL), *paths], stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: os.close(1), timeout=60)
    assert done.returncode == 0
    assert done.stderr == UPGRADED.format("stdout is closed")
    assert all_tagged(tmp_path) and sorted(os.listdir(tmp_path)) == sorted(NAMES)


def test_a_full_stdout_after_a_partly_tagged_checkpoint_tags_the_rest(tmp_path):
    paths = older(tmp_path)
    (tmp_path / "a0").write_bytes(F.upgrade_shard(F.older_shard(3, 100, 2.5), 1))
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, str(TOOL), *paths], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    assert done.returncode == 0 and done.stderr == UPGRADED.format("No space left on device")
    assert all_tagged(tmp_path) and sorted(os.listdir(tmp_path)) == sorted(NAMES)


def test_an_interruption_between_two_renames_says_which_shards_are_tagged(tool, tmp_path, capsys, monkeypatch):
    paths = older(tmp_path)
    before = contents(tmp_path)
    real = os.replace
    calls = []

    def replace(source, target):
        calls.append(target)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(source, target)
    monkeypatch.setattr(tool.os, "replace", replace)
    try:
        code = tool.main(paths)
    except KeyboardInterrupt:
        pytest.fail("the interruption escaped the tool")
    assert code == 130
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"upgrade_checkpoint.py: interrupted while tagging the shards; the checkpoint is half upgraded: tagged now: "
        f"worker 0's weight shard (argument 1) {paths[1]}; left as they were: worker 0's accumulator shard "
        f"(argument 2) {paths[2]}, worker 1's weight shard (argument 3) {paths[3]}, worker 1's accumulator shard "
        f"(argument 4) {paths[4]}; fix the cause and run upgrade_checkpoint.py again with the same arguments (it "
        f"leaves tagged shards as they are and tags the rest)\n")
    assert sorted(os.listdir(tmp_path)) == sorted(NAMES)          # no temporaries left
    now = contents(tmp_path)
    assert now["w0"][:4] == b"SHw0" and {k: now[k] for k in ("m", "a0", "w1", "a1")} == \
        {k: before[k] for k in ("m", "a0", "w1", "a1")}


def test_an_interruption_while_the_copies_are_written_rewrites_nothing(tool, tmp_path, capsys, monkeypatch):
    paths = older(tmp_path)
    before = contents(tmp_path)
    real = os.fsync
    calls = []

    def fsync(handle):
        calls.append(handle)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(handle)
    monkeypatch.setattr(tool.os, "fsync", fsync)
    try:
        code = tool.main(paths)
    except KeyboardInterrupt:
        pytest.fail("the interruption escaped the tool")
    assert code == 130
    assert capsys.readouterr().err == ("upgrade_checkpoint.py: interrupted before any shard was tagged; nothing "
                                       "was rewritten\n")
    assert contents(tmp_path) == before           # no temporaries either
