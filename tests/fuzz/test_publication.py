"""kill -9 at random moments of a publication, between the files of one too.

After every kill each output path holds either its whole old file or its
whole new one, and the new ones are a prefix of the publication order
(predictions, result, checkpoint): a new checkpoint always stands beside its
own predictions and result.  BOB_IO_TEST_PAUSE_MS widens the gaps between
the renames so that kills land between the files of one publication.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from fuzzing import COUNTS, PLAN, SCALE, TIMEOUT_S, rng_for

ORDER = ("pred.bin", "result.bin", "out.ckpt")


def classify(folder, old: dict, new: dict, category: str) -> None:
    state = []
    for name in ORDER:
        data = (folder / name).read_bytes()
        assert data in (old[name], new[name]), f"{name} is neither the old nor the new file " \
                                               f"({len(data)} bytes): a partial or mixed file"
        state.append(data == new[name] and data != old[name])
    count = sum(state)
    assert state == [True] * count + [False] * (3 - count), \
        f"new files {state} are not a prefix of the publication order {ORDER}"
    COUNTS[category]["kills"] += 1
    COUNTS[category][{0: "all old", 3: "all new"}.get(count, f"{count} of 3 new (between files)")] += 1
    leftovers = [p.name for p in folder.iterdir() if ".tmp-" in p.name]
    if leftovers:
        COUNTS[category]["temporaries left beside (never at) an output path"] += 1


def kill_at(command, delay: float, env, cwd) -> int:
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    try:
        return process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as expired:
        process.kill()
        raise AssertionError("hang after SIGKILL") from expired


def test_kill_9_during_the_host_publication(publish_tool, tmp_path):
    """runtime_c/host_io.c, as the host publishes at the end of a run."""
    rng = rng_for("kill-c")
    old = {name: f"OLD {name}\n".encode() * 100 for name in ORDER}
    reference = tmp_path / "reference"
    reference.mkdir()
    done = subprocess.run([str(publish_tool), "NEW", *ORDER], cwd=reference, timeout=TIMEOUT_S)
    assert done.returncode == 0
    new = {name: (reference / name).read_bytes() for name in ORDER}
    for trial in range(40 * SCALE):
        folder = tmp_path / f"kill{trial}"
        folder.mkdir()
        for name in ORDER:
            (folder / name).write_bytes(old[name])
        env = dict(os.environ)
        pause = rng.choice([0, 30])
        env["BOB_IO_TEST_PAUSE_MS"] = str(pause)
        kill_at([str(publish_tool), "NEW", *ORDER], rng.uniform(0, 0.004 + 2.5 * pause / 1000), env,
                folder)
        classify(folder, old, new, "kill -9, C publication")


def test_kill_9_during_a_reference_run(plan_files, tmp_path):
    """`bobc run --reference` killed anywhere in a run (most kills in its publication)."""
    rng = rng_for("kill-python")
    record = plan_files["record"]
    old = {name: f"OLD {name}\n".encode() * 100 for name in ORDER}
    command = [sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference",
               "--input", "record.bin", "--checkpoint-out", "out.ckpt", "--predictions",
               "pred.bin", "--result", "result.bin"]
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "record.bin").write_bytes(record)
    env = dict(os.environ)
    env["BOB_IO_TEST_PAUSE_MS"] = "400"
    started = time.monotonic()
    done = subprocess.run(command, cwd=reference, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S * 3)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    new = {name: (reference / name).read_bytes() for name in ORDER}
    for trial in range(5 * SCALE):
        folder = tmp_path / f"kill{trial}"
        folder.mkdir()
        (folder / "record.bin").write_bytes(record)
        for name in ORDER:
            (folder / name).write_bytes(old[name])
        # the publication is the last ~0.8 s (two 400 ms pauses): aim most kills there
        delay = rng.uniform(max(0.0, took - 1.2), took + 0.2)
        kill_at(command, delay, env, folder)
        classify(folder, old, new, "kill -9, reference run")
