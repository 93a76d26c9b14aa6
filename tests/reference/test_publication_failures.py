"""Probe s31 hostexe finding 3: root without CAP_FOWNER (a container that dropped it) may not
replace another user's file in a sticky folder, so the output check refuses it before any work
as it does for any other user; and a publication whose rename fails never leaves a journal
that blocks every later run without saying what to do.  runtime_c/host_io.c (rt_tool) and
bobc.reference.safe_io are run over the same cases and must say the same, byte for byte."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import reachable_folder

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["nv_status.c", "nv_targets.c", "nv_shim.c", "host_runtime.c", "host_io.c", "plan_fill.c", "host_settings.c"]
NOBODY = 65534
NO_FOWNER = ["setpriv", "--bounding-set", "-fowner"]

# safe_io's side, in a process of its own (run as the C tool is: capabilities, pauses)
REFERENCE = r"""
import json, sys
from bobc.reference import safe_io
from bobc.reference.errors import OutputWriteFailure
paths = sys.argv[2:5]
try:
    safe_io.recover(paths)
    files = safe_io.OutputSet()
    for path, option in zip(paths, ("--predictions", "--result", "--checkpoint-out")):
        files.add(path, option)
        files.stage(option, f"{sys.argv[1]} {option}\n".encode())
    if sys.argv[1] == "publish":
        files.publish()
except OutputWriteFailure as error:
    print(json.dumps([8, error.host_form()]))
else:
    print(json.dumps([0, ""]))
"""


@pytest.fixture(scope="module")
def tool():
    """runtime_c/tests/rt_tool (tests/reference/test_safe_io_journal.py builds it alike)."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    runtime = REPO / "runtime_c"
    folder = reachable_folder("bobc-io-tool-")
    out = folder / "rt_tool"
    built = subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE",
                            f"-I{runtime}", str(runtime / "tests/rt_tool.c"),
                            *(str(runtime / s) for s in SOURCES), "-lm", "-o", str(out)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    yield out
    shutil.rmtree(folder, ignore_errors=True)


def can_set_attributes(folder: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    probe = folder / "attribute-probe"
    probe.write_bytes(b"")
    ok = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
    probe.unlink()
    return ok


def clear_attributes(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            subprocess.run(["chattr", "-i", "-a", str(path)], capture_output=True)


def c_side(tool, folder, command, paths, prefix=(), env=None):
    done = subprocess.Popen([*prefix, str(tool), command, *map(str, paths)], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return done


def reference_side(folder, command, paths, prefix=(), env=None):
    environment = dict(env or os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(REPO / "compiler"), environment.get("PYTHONPATH", "")])
    return subprocess.Popen([*prefix, sys.executable, "-c", REFERENCE, command, *map(str, paths)], cwd=folder,
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def verdict(process, side) -> tuple[int, str]:
    out, err = process.communicate(timeout=120)
    if side == "c":
        errors = [line[len("host: error: "):] for line in err.splitlines() if line.startswith("host: error: ")]
        return process.returncode, errors[0] if errors else ""
    assert process.returncode == 0, err
    code, message = json.loads(out)
    return code, message


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv (to drop CAP_FOWNER)")
def test_root_without_cap_fowner_is_refused_another_users_file_in_a_sticky_folder(tool):
    base = reachable_folder("bobc-fowner-")
    try:
        outcomes = []
        for side in ("c", "r"):
            folder = base / side
            sticky = folder / "shared"
            sticky.mkdir(parents=True)
            os.chown(sticky, NOBODY, NOBODY)
            sticky.chmod(0o1777)
            (sticky / "r.bin").write_bytes(b"THEIRS")
            os.chown(sticky / "r.bin", NOBODY, NOBODY)
            paths = ["p.bin", "shared/r.bin", "c.bin"]
            process = (c_side(tool, folder, "outputs", paths, NO_FOWNER) if side == "c"
                       else reference_side(folder, "outputs", paths, NO_FOWNER))
            outcomes.append(verdict(process, side))
            assert (sticky / "r.bin").read_bytes() == b"THEIRS"
        assert outcomes[0] == outcomes[1], outcomes
        assert outcomes[0] == (8, "output shared/r.bin (--result): it cannot be replaced: it belongs to another user "
                                  "(uid 65534) and its folder shared is sticky and not yours; ask the owner to remove "
                                  "it, or choose another path; nothing was written")
        # with the capability (root as usual) the file may be replaced: accepted
        for side in ("c", "r"):
            folder = base / side
            paths = ["p.bin", "shared/r.bin", "c.bin"]
            process = c_side(tool, folder, "outputs", paths) if side == "c" else reference_side(folder, "outputs", paths)
            assert verdict(process, side) == (0, "")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _failing_rename(tool, base: Path, which: str):
    """Publish p.bin, r.bin, c.bin with a pause before the publication takes its lock; in the pause
    (its temporaries written) `which` is made immutable, so its rename fails after the checks."""
    outcomes = []
    for side in ("c", "r"):
        folder = base / side
        folder.mkdir(parents=True)
        for name in ("p.bin", "r.bin", "c.bin"):
            (folder / name).write_bytes(b"OLD " + name.encode())
        env = dict(os.environ, BOBC_IO_TEST_LOCK_PAUSE_MS="4000")
        paths = ["p.bin", "r.bin", "c.bin"]
        process = (c_side(tool, folder, "publish", ["x", *paths], env=env) if side == "c"
                   else reference_side(folder, "publish", paths, env=env))
        deadline = time.monotonic() + 60
        while len(list(folder.glob(".*.tmp-*"))) < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        subprocess.run(["chattr", "+i", str(folder / which)], check=True)
        try:
            code, message = verdict(process, side)
        finally:
            clear_attributes(folder)
        outcomes.append((code, message.replace(str(folder.resolve()), "<F>"), listing(folder)))
    assert outcomes[0][:2] == outcomes[1][:2], outcomes
    assert [n for n in outcomes[0][2] if ".tmp-" not in n] == [n for n in outcomes[1][2] if ".tmp-" not in n]
    return outcomes[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i needs root")
def test_a_first_rename_that_fails_leaves_no_journal(tool, tmp_path):
    if not can_set_attributes(tmp_path):
        pytest.skip("this filesystem has no immutable attribute")
    code, message, files = _failing_rename(tool, tmp_path, "p.bin")
    assert code == 8
    assert message == "output p.bin (--predictions): rename failed: Operation not permitted (nothing was published)"
    assert files == ["c.bin", "p.bin", "r.bin"]        # no journal, no temporaries


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i needs root")
def test_a_later_rename_that_fails_names_the_journal_and_what_to_do(tool, tmp_path):
    if not can_set_attributes(tmp_path):
        pytest.skip("this filesystem has no immutable attribute")
    code, message, files = _failing_rename(tool, tmp_path, "r.bin")
    assert code == 8
    assert message == ("output r.bin (--result): rename failed: Operation not permitted (the journal "
                       "./.c.bin.bob-journal is kept: once r.bin can be replaced, the next invocation naming these "
                       "outputs completes the publication; to keep the files as they are instead, remove the journal "
                       "and the temporaries it lists)")
    assert ".c.bin.bob-journal" in files
