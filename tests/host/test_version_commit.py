"""The bobc commit a host records (.bobc.version, host/version.py checkout_commit) is the one of
bobc's own checkout, whatever the caller's git environment (probe s28 determinism finding 4):
GIT_DIR (set inside git hooks) once recorded another repository's HEAD, and GIT_WORK_TREE or a
checkout owned by another user ("dubious ownership") recorded "not a clean git checkout" for a
clean one.  When git cannot answer, the reason says so."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bobc.host import version



def git(folder, *command):
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.email=t@example.org", "-c", "user.name=t",
                           "-c", "commit.gpgsign=false", *command], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def repository(folder: Path, text: str) -> str:
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "file.txt").write_text(text)
    git(folder, "add", "file.txt")
    git(folder, "commit", "-q", "-m", text)
    return git(folder, "rev-parse", "HEAD")


@pytest.fixture
def checkouts(tmp_path):
    return tmp_path / "ours", repository(tmp_path / "ours", "ours"), tmp_path / "other", \
        repository(tmp_path / "other", "other")


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"])
def test_the_callers_git_variables_change_nothing(checkouts, monkeypatch, variable):
    ours, head, other, _ = checkouts
    monkeypatch.setenv(variable, {"GIT_WORK_TREE": str(other), "GIT_INDEX_FILE": str(other / ".git/index"),
                                  "GIT_OBJECT_DIRECTORY": str(other / ".git/objects")}.get(variable, str(other / ".git")))
    assert version.checkout_commit(ours) == head


def test_a_hook_of_another_repository_does_not_name_its_head(checkouts, monkeypatch):
    ours, head, other, _ = checkouts
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git/index"))
    assert version.checkout_commit(ours) == head
    # bobc's own checkout, as source_commit reads it: the same under a foreign GIT_DIR
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    plain = version.source_commit()
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert version.source_commit() == plain


def test_a_checkout_owned_by_another_user_is_read(checkouts):
    ours, head, _, _ = checkouts
    if os.geteuid() == 0:            # as root, give it to nobody: git then sees "dubious ownership"
        for path in [ours, *ours.rglob("*")]:
            os.lchown(path, 65534, 65534)
        refused = subprocess.run(["git", "-C", str(ours), "rev-parse", "HEAD"], capture_output=True, text=True,
                                 env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
        assert "dubious ownership" in refused.stderr        # what git alone says of it
    assert version.checkout_commit(ours) == head


def test_the_reason_says_what_happened(checkouts, tmp_path, monkeypatch):
    ours, _, _, _ = checkouts
    (ours / "file.txt").write_text("changed")
    assert version.checkout_commit(ours) == version.UNKNOWN_COMMIT == \
        "unknown (bobc was not run from a clean git checkout)"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert version.checkout_commit(plain) == "unknown (bobc was not run from a git checkout)"
    (ours / ".git/HEAD").write_text("garbage\n")
    said = version.checkout_commit(ours)
    assert said.startswith("unknown (git could not read bobc's checkout: `git rev-parse HEAD` failed"), said
    assert str(tmp_path) not in said            # no path: the text stays the same wherever bobc lies
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    said = version.checkout_commit(plain.parent / "other")
    assert said.startswith("unknown (git could not be run to read bobc's checkout: "), said
    assert shutil.which("git") is None
