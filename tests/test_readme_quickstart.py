"""The README's quick start, run as written in a fresh clone.

The commands between `<!-- quick start: begin -->` and `<!-- quick start: end -->`
are extracted (continuation lines joined) and run in one bash session from
the top of a `git clone` of this checkout, so `. .venv/bin/activate` carries
over.  Lines marked `# needs a GPU` run only where /dev/nvidiactl exists.

`make setup` is the one command not re-run from scratch: installing the
dependencies again takes minutes, so the clone gets a .venv that is this
test's own environment (the same packages; its bobc is this checkout's, which
the clone equals when the working tree is committed).  Everything else,
building the host, the fixture, the reference run, the images and the diff,
really runs, and each step's outputs are checked.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, has_gpu

GPU_MARK = "# needs a GPU"


def quickstart_commands(readme: str) -> list[str]:
    block = re.search(r"<!-- quick start: begin -->\n(.*?)<!-- quick start: end -->", readme, re.S)
    assert block, "README.md has no quick start block"
    commands, pending = [], ""
    for line in block.group(1).splitlines():
        assert line.startswith("    "), f"quick start line is not an indented command: {line!r}"
        text = line[4:]
        if pending:
            text = pending + " " + text.strip()
        if text.rstrip().endswith("\\"):
            pending = text.rstrip()[:-1].rstrip()
            continue
        pending = ""
        commands.append(text)
    assert not pending, "the quick start ends inside a continued line"
    return commands


def test_the_quick_start_block_is_what_a_new_user_needs():
    commands = quickstart_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert commands[0].startswith("make setup")
    assert commands[1].startswith(". .venv/bin/activate")
    assert any(c.startswith("bobc run ") and "--reference" in c for c in commands)
    assert all("../shared" not in c for c in commands)
    gpu = [c for c in commands if c.rstrip().endswith(GPU_MARK)]
    assert gpu and all(c.startswith("./bob-host ") for c in gpu)


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    done = subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], capture_output=True, text=True)
    if done.returncode != 0:  # not a git checkout (an unpacked archive): copy the tree instead
        shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(".venv", ".git", "out", "bob-host"))
    # README.md as in this working tree (what is being tested), not only as last committed
    shutil.copy(REPO / "README.md", clone / "README.md")
    return clone


def _prepared_venv(clone: Path) -> None:
    """A .venv in the clone that `make setup` finds installed (see the module docstring)."""
    venv = Path(sys.prefix)
    assert (venv / "bin" / "bobc").exists(), f"run the tests from the .venv `make setup` makes ({venv})"
    (clone / ".venv").symlink_to(venv, target_is_directory=True)
    stamp = venv / ".bobc-installed"
    if not stamp.exists():
        stamp.touch()
    # make's stamp must be newer than the clone's pyproject.toml
    os.utime(stamp)


def test_the_quick_start_runs_in_a_fresh_clone(tmp_path):
    clone = _clone(tmp_path)
    _prepared_venv(clone)
    commands = quickstart_commands((clone / "README.md").read_text(encoding="utf-8"))
    script = ["set -euo pipefail"]
    skipped = []
    for command in commands:
        if command.rstrip().endswith(GPU_MARK) and not has_gpu():
            skipped.append(command)
            continue
        script.append(f"echo '+ {command.replace(chr(39), '')}'")
        script.append(command)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"   # bobc must come from the activated .venv
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=clone, capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    assert "wrote bob-host (sm_90)" in out
    assert (clone / "bob-host").stat().st_mode & 0o111
    assert (clone / "record.bin").is_file()
    # the plan-driven reference host knows no model's losses: it says what it published
    assert re.search(r"train: 1 checkpoint publication\(s\); ref-ckpt\.bin holds step 10", out), out
    for name in ("ref-ckpt.bin", "ref-predictions.bin", "ref-result.bin"):
        assert (clone / name).stat().st_size > 0
    assert "out-images and bob-host hold the same images" in out
    assert "target: sm_90 (QMD V04_00)" in out and "driver branch: 580 " in out
    if has_gpu():
        assert (clone / "ckpt2.bin").is_file()
    else:
        assert len(skipped) == 2


# the options of the quick start's commands that name a file or folder they write
OUTPUT_OPTIONS = ("-o", "--emit-images", "--checkpoint-out", "--predictions", "--result")


def test_what_the_quick_start_writes_is_ignored_by_git():
    """Probe s36 newuser2 finding 2: after the quick start `git status` listed record.bin, the
    reference run's three files and out-images/ (and a GPU run's four) as untracked.  Every path
    an output option of the block names is ignored (git check-ignore is the judge), and so is
    the Coppelius host README's own line builds."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: no .gitignore to judge")
    commands = quickstart_commands((REPO / "README.md").read_text(encoding="utf-8"))
    written = set()
    for command in commands:
        words = command.split("#")[0].split()
        written.update(words[i + 1] for i, word in enumerate(words[:-1]) if word in OUTPUT_OPTIONS)
    assert {"bob-host", "record.bin", "out-images", "ckpt2.bin"} <= written, written
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    coppelius = re.search(r"--entry coppeliusHost --target sm_90 -o (\S+?)`", readme)
    assert coppelius, "README no longer builds the Coppelius host with -o"
    written.add(coppelius.group(1))
    done = subprocess.run(["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *sorted(written)],
                          cwd=REPO, capture_output=True, text=True)
    not_ignored = [line.split("\t")[-1] for line in done.stdout.splitlines() if line.startswith("::")]
    assert not_ignored == [], f"written by README's commands, not in .gitignore: {not_ignored}"


def test_a_host_built_into_the_working_folder_is_run_as_dot_slash():
    """Probe s36 newuser2 finding 5: README built `-o coppelius-host`, then said "then
    `coppelius-host train|predict ...`", which the shell, not searching the working folder, does not
    find when pasted.  A command (a code span, or an indented block's line) that starts with the
    name of a host a `bobc build ... -o NAME` of the same document wrote into the working folder
    (NAME without a '/') runs it as ./NAME."""
    found = []
    for document in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = document.read_text(encoding="utf-8")
        for name in set(re.findall(r"bobc build\s[^`]*?-o ([A-Za-z0-9_.-]+)", text)):
            for match in re.finditer(r"(?:`|^ {4,})" + re.escape(name) + r" ", text, re.M):
                found.append(f"{document.relative_to(REPO)}:{text[:match.start()].count(chr(10)) + 1}: {name}")
    assert found == [], found
