"""Concurrent publications into one folder (probe s28 determinism finding 3; docs/runtime.md,
"Files"): a publication and a recovery hold an exclusive flock on each folder they write in,
the C hosts (runtime_c/host_io.c) and bobc's Python side (bobc.reference.safe_io) alike, so two
invocations naming the same outputs never break each other: each exits 0 (or with a one-line
message), never a traceback, and the folder always holds one run's complete set.

BOBC_IO_TEST_PAUSE_MS (tests only) widens the gap between two renames, so the second invocation
starts while the first one's journal is live; before the lock it "completed" that live journal
and the first invocation failed (exit 8, or a FileNotFoundError traceback)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bobc.reference.safe_io import LOCK_NOTICE, shown

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120
NAMES = ("p.bin", "r.bin", "c.bin")          # predictions, result, checkpoint: the publication order
JOURNAL = ".c.bin.bob-journal"

# what a host does with its outputs (runtime_c/plan_host.c): complete a journal, check, publish
C_TOOL = r"""
#include <stdio.h>
#include <string.h>
#include "host_io.h"
#include "host_runtime.h"
int main(int argc, char **argv)
{
    static const char *const option[3] = { "--predictions", "--result", "--checkpoint-out" };
    static rt_io_files files;
    static char text[3][65536];
    char err[RT_ERR_BYTES];
    const char *const *paths = (const char *const *)argv + 2;
    if (argc != 5)
        return 2;
    int rc = rt_io_recover(paths, 3, err);
    for (int i = 0; !rc && i < 3; i++) {
        char line[65];
        snprintf(line, sizeof line, "%-63.63s\n", argv[1]);
        for (size_t at = 0; at < sizeof text[i]; at += 64)
            memcpy(text[i] + at, line, 64);
        rc = rt_io_add_output(&files, paths[i], option[i], NULL, err);
        if (!rc)
            rc = rt_io_stage(&files, option[i], text[i], sizeof text[i], err);
    }
    if (!rc)
        rc = rt_io_publish(&files, err);
    if (rc)
        fprintf(stderr, "c-tool: %s\n", err);
    return rc;
}
"""

# the same through bobc.reference.safe_io, as `bobc run --reference` does (commands/run.py)
PY_TOOL = r"""
import sys
from bobc.reference import safe_io
from bobc.reference.errors import OutputWriteFailure
tag, paths = sys.argv[1], sys.argv[2:]
try:
    safe_io.recover(paths)
    files = safe_io.OutputSet()
    for path, option in zip(paths, ("--predictions", "--result", "--checkpoint-out")):
        files.add(path, option)
        files.stage(option, "".join(f"{tag:<63.63}\n" for _ in range(1024)).encode())
    files.publish()
except OutputWriteFailure as error:
    print(f"py-tool: {error.render()}", file=sys.stderr)
    sys.exit(error.exit_code)
"""


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tools")
    runtime = REPO / "runtime_c"
    (folder / "c_tool.c").write_text(C_TOOL)
    built = subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE",
                            f"-I{runtime}", str(folder / "c_tool.c"), str(runtime / "host_io.c"),
                            str(runtime / "host_runtime.c"), "-lm", "-o", str(folder / "c_tool")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (folder / "py_tool.py").write_text(PY_TOOL)
    return {"c": [str(folder / "c_tool")], "py": [sys.executable, str(folder / "py_tool.py")]}


def environment(pause_ms: int) -> dict:
    env = {**os.environ, "BOBC_IO_TEST_PAUSE_MS": str(pause_ms)}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "compiler"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def tag_of(path: Path) -> str:
    return path.read_bytes()[:63].decode().strip()


def one_run(folder: Path) -> str:
    """The tag all three outputs hold (each whole: every 64-byte line the same)."""
    tags = set()
    for name in NAMES:
        data = (folder / name).read_bytes()
        assert len(data) == 65536 and data == data[:64] * 1024, f"{name} is not one run's whole file"
        tags.add(tag_of(folder / name))
    assert len(tags) == 1, f"the outputs are from different runs: {tags}"
    assert not (folder / JOURNAL).exists() and not [p for p in folder.iterdir() if ".tmp-" in p.name]
    return tags.pop()


@pytest.mark.parametrize("first,second", [("c", "py"), ("py", "c"), ("c", "c"), ("py", "py")])
def test_an_invocation_waits_for_a_live_publication(tools, tmp_path, first, second):
    """The second invocation starts while the first one's journal is live (between two renames):
    its recovery waits for the first publication to end, then it publishes its own set.  Both
    exit 0; nothing is 'completed' from the live journal; the second run's set is what is left."""
    paths = [str(tmp_path / name) for name in NAMES]
    env = environment(500)
    one = subprocess.Popen([*tools[first], f"first-{first}", *paths], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT_S
    while not (tmp_path / JOURNAL).exists():           # the first publication is live
        assert one.poll() is None, one.communicate()
        assert time.monotonic() < deadline, "the first publication never wrote its journal"
        time.sleep(0.005)
    two = subprocess.run([*tools[second], f"second-{second}", *paths], env=env, capture_output=True, text=True,
                         timeout=TIMEOUT_S)
    out, err = one.communicate(timeout=TIMEOUT_S)
    assert one.returncode == 0, err
    assert two.returncode == 0, two.stderr
    for said in (err, two.stderr):
        assert "Traceback" not in said and "completed an interrupted publication" not in said, said
    assert one_run(tmp_path) == f"second-{second}"


def test_many_hosts_and_reference_runs_into_one_folder(tools, tmp_path):
    """Six at once, C and Python mixed, three rounds: every one exits 0 and the folder holds one
    run's complete set after each round."""
    paths = [str(tmp_path / name) for name in NAMES]
    env = environment(20)
    for round_ in range(3):
        running = [subprocess.Popen([*tools[kind], f"r{round_}-{kind}{i}", *paths], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for i, kind in enumerate(["c", "py"] * 3)]
        for process in running:
            _, err = process.communicate(timeout=TIMEOUT_S)
            assert process.returncode == 0 and "Traceback" not in err, err
        assert one_run(tmp_path).startswith(f"r{round_}-")


def test_concurrent_emit_images_into_one_folder(tmp_path):
    """The probe's repro (repro_emit_race.sh): `bobc build --emit-images` three at a time into one
    folder, sm_90 and sm_86 mixed, the renames widened: every build exits 0 with its one line, and
    the folder holds one build's five files."""
    plan = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
    env = environment(60)
    env["BOBC_CACHE_DIR"] = str(tmp_path / "cache")
    expected = {}
    for target in ("sm_90", "sm_86"):               # what each target's images are, built alone
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--target", target,
                               "--emit-images", str(tmp_path / target)], env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        assert done.returncode == 0, done.stderr
        expected[target] = {p.name: p.read_bytes() for p in (tmp_path / target).iterdir()}
    folder = tmp_path / "imgs"         # not there yet: the first round's builds race to create it too
    for round_ in range(3):
        running = [subprocess.Popen([sys.executable, "-m", "bobc", "build", str(plan), "--target", target,
                                     "--emit-images", str(folder)], env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
                   for target in ("sm_90", "sm_86", "sm_90")]
        # a build that found the folder locked by another says so (safe_io.LOCK_NOTICE), then waits
        waited = f"bobc: {LOCK_NOTICE.format(shown(str(folder)))}"
        for process in running:
            out, err = process.communicate(timeout=TIMEOUT_S)
            assert process.returncode == 0 and all(line == waited for line in err.splitlines()), err
            assert out.startswith("wrote sm_") and out.count("\n") == 1, out
        found = {p.name: p.read_bytes() for p in folder.iterdir()}
        assert found in expected.values(), f"round {round_}: the folder is not one build's five files: {sorted(found)}"
