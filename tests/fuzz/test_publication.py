"""kill -9 at random moments of a publication, between the files of one too.

After every kill each output path holds either its whole old file or its
whole new one, and the new ones are a prefix of the publication order
(predictions, result, checkpoint).  Then the next invocation naming those
outputs runs (it stops at once on a missing input record, after completing
any journal the kill left: docs/runtime.md "Files"), and after it the three
outputs are all old or all new: never a mix, and no journal is left.
BOBC_IO_TEST_PAUSE_MS widens the gaps between the renames so that kills land
between the files of one publication.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from fuzzing import COUNTS, PLAN, SCALE, TIMEOUT_S, rng_for

ORDER = ("pred.bin", "result.bin", "out.ckpt")


JOURNAL = ".out.ckpt.bob-journal"


def state_of(folder, old: dict, new: dict) -> list:
    state = []
    for name in ORDER:
        data = (folder / name).read_bytes()
        assert data in (old[name], new[name]), f"{name} is neither the old nor the new file " \
                                               f"({len(data)} bytes): a partial or mixed file"
        state.append(data == new[name] and data != old[name])
    return state


def classify(folder, old: dict, new: dict, category: str) -> None:
    state = state_of(folder, old, new)
    count = sum(state)
    assert state == [True] * count + [False] * (3 - count), \
        f"new files {state} are not a prefix of the publication order {ORDER}"
    COUNTS[category]["kills"] += 1
    COUNTS[category][{0: "all old", 3: "all new"}.get(count, f"{count} of 3 new (between files)")] += 1
    leftovers = [p.name for p in folder.iterdir() if ".tmp-" in p.name]
    if leftovers:
        COUNTS[category]["temporaries left beside (never at) an output path"] += 1


def next_invocation(command, folder, old: dict, new: dict, category: str) -> None:
    """The next invocation completes a journal the kill left; then all old or all new."""
    journal = (folder / JOURNAL).exists()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert "Traceback" not in done.stderr
    assert done.returncode == 3, done.stderr        # the missing input record, after recovery
    state = state_of(folder, old, new)
    assert state in ([False] * 3, [True] * 3), f"a mix after the next invocation: new {state}"
    assert not (folder / JOURNAL).exists(), "a journal left after the next invocation"
    assert ("completed an interrupted publication" in done.stderr) == journal, done.stderr
    if journal:
        COUNTS[category]["journal completed by the next invocation"] += 1


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


def test_kill_9_during_the_host_publication(publish_tool, host, tmp_path):
    """runtime_c/host_io.c, as the host publishes at the end of a run; the next invocation
    is the Bob host itself."""
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
        env["BOBC_IO_TEST_PAUSE_MS"] = str(pause)
        kill_at([str(publish_tool), "NEW", *ORDER], rng.uniform(0, 0.004 + 2.5 * pause / 1000), env,
                folder)
        classify(folder, old, new, "kill -9, C publication")
        next_invocation([str(host), "train", "--input", "missing.bin", "--checkpoint-out",
                         ORDER[2], "--predictions", ORDER[0], "--result", ORDER[1]],
                        folder, old, new, "kill -9, C publication")


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
    env["BOBC_IO_TEST_PAUSE_MS"] = "400"
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
        next_invocation([part if part != "record.bin" else "missing.bin" for part in command],
                        folder, old, new, "kill -9, reference run")


def _journal(folder, pairs) -> bytes:
    """A journal in the form docs/runtime.md ("Files") documents, written by hand."""
    text = f"bob-journal 1 {len(pairs)}\n".encode()
    for temporary, destination in pairs:
        for name in (str(folder.resolve() / temporary), str(folder.resolve() / destination)):
            text += f"{len(name.encode())} {name}\n".encode()
    return text + b"end\n"


def _commands(host):
    outputs = ["--checkpoint-out", ORDER[2], "--predictions", ORDER[0], "--result", ORDER[1]]
    return {"C host": [str(host), "train", "--input", "missing.bin", *outputs],
            "reference": [sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference",
                          "--input", "missing.bin", *outputs]}


def test_a_journal_is_completed_or_refused_by_name(host, tmp_path):
    """A hand-written journal (the documented format) is rolled forward by both the host and
    the reference runner; a damaged one, or one whose temporaries are missing, is refused
    by name (exit 8) and left as it is, the outputs untouched."""
    for label, command in _commands(host).items():
        cases = {
            # predictions already renamed; result and checkpoint still temporaries
            "completes": ([(".pred.bin.tmp-Ab3dE0", "pred.bin"), (".result.bin.tmp-Ab3dE1", "result.bin"), (".out.ckpt.tmp-Ab3dE2", "out.ckpt")],
                          [".result.bin.tmp-Ab3dE1", ".out.ckpt.tmp-Ab3dE2"], None),
            "missing": ([(".pred.bin.tmp-Ab3dE0", "pred.bin"), (".result.bin.tmp-Ab3dE1", "result.bin"), (".out.ckpt.tmp-Ab3dE2", "out.ckpt")],
                        [".pred.bin.tmp-Ab3dE0", ".out.ckpt.tmp-Ab3dE2"], "its temporaries are missing"),
            "damaged": (None, [".result.bin.tmp-Ab3dE1"], "a damaged publication journal"),
        }
        for case, (pairs, present, refusal) in cases.items():
            folder = tmp_path / f"{label.replace(' ', '-')}-{case}"
            folder.mkdir()
            for name in ORDER:
                (folder / name).write_bytes(b"OLD " + name.encode())
            for temporary in present:
                (folder / temporary).write_bytes(b"NEW " + temporary.encode())
            journal = (_journal(folder, pairs) if pairs else
                       b"bob-journal 1 3\n12 /not/a/pa")          # cut short by a crash
            (folder / JOURNAL).write_bytes(journal)
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True,
                                  timeout=TIMEOUT_S * 2)
            assert "Traceback" not in done.stderr
            if refusal is None:
                assert done.returncode == 3, (label, done.stderr)
                assert "completed an interrupted publication" in done.stderr
                assert (folder / "result.bin").read_bytes() == b"NEW .result.bin.tmp-Ab3dE1"
                assert (folder / "out.ckpt").read_bytes() == b"NEW .out.ckpt.tmp-Ab3dE2"
                assert (folder / "pred.bin").read_bytes() == b"OLD pred.bin"   # renamed before
                assert not (folder / JOURNAL).exists()
            else:
                assert done.returncode == 8, (label, case, done.stderr)
                assert refusal in done.stderr and JOURNAL in done.stderr, done.stderr
                assert (folder / JOURNAL).read_bytes() == journal
                for name in ORDER:
                    assert (folder / name).read_bytes() == b"OLD " + name.encode()
