"""Mutated plans and SASS through bobc check, build and asm: never a traceback,
never a hang, every run bounded (each subprocess under a timeout)."""
from __future__ import annotations

import re
import shutil
import sys
import time

from fuzzing import COUNTS, REPO, SCALE, rng_for, run

NUMBER = re.compile(rb"\b\d+\b")
HUGE = [b"0", b"18446744073709551623", b"1" + b"0" * 40, b"9" * 5000, b"4294967296",
        b"100000", b"0x" + b"f" * 70]


def mutate(data: bytes, rng) -> tuple[bytes, str]:
    kind = rng.choice(["number", "number", "delete", "insert-bytes", "nest", "truncate",
                       "duplicate-line", "swap-lines"])
    if kind == "number":
        numbers = list(NUMBER.finditer(data))
        if numbers:
            m = rng.choice(numbers)
            value = rng.choice(HUGE)
            return data[:m.start()] + value + data[m.end():], f"number -> {value[:24]!r}"
        kind = "delete"
    at = rng.randrange(max(1, len(data)))
    if kind == "delete":
        return data[:at] + data[at + rng.randrange(1, 40):], f"delete at {at}"
    if kind == "insert-bytes":
        junk = bytes(rng.choice([0xff, 0xfe, 0x00, 0x28, 0x29, 0x22, 0x5c, 0x80, 0x0a])
                     for _ in range(rng.randrange(1, 8)))
        return data[:at] + junk + data[at:], f"insert {junk!r} at {at}"
    if kind == "nest":
        depth = rng.choice([50, 199, 201, 400, 3000])
        return data[:at] + b"(" * depth + data[at:], f"{depth} '(' at {at}"
    if kind == "truncate":
        return data[:at], f"truncate at {at}"
    lines = data.split(b"\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == "duplicate-line":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"{kind} {i} {j}"


def assert_clean(done, what: str, category: str, took: float) -> None:
    COUNTS[category]["runs"] += 1
    COUNTS[category][f"exit {done.returncode}"] += 1
    assert done.returncode >= 0, f"{what}: killed by signal {-done.returncode}"
    assert "Traceback" not in done.stderr, f"{what}: a traceback:\n{done.stderr[-3000:]}"
    assert done.returncode in (0, 1, 2, 8), f"{what}: exit {done.returncode}: {done.stderr[-800:]}"
    if done.returncode:
        assert "error" in done.stderr, f"{what}: failed without a message"
    COUNTS[category]["slowest (s)"] = max(COUNTS[category]["slowest (s)"], round(took))


def test_mutated_plans_check_and_build(tmp_path):
    rng = rng_for("plans")
    source = REPO / "examples/bob"
    modules = sorted(p.relative_to(source) for p in source.rglob("*.bob"))
    for trial in range(6 * SCALE):
        folder = tmp_path / f"plan{trial}"
        shutil.copytree(source, folder)
        target = folder / rng.choice(modules)
        mutated, how = mutate(target.read_bytes(), rng)
        target.write_bytes(mutated)
        command = "build" if trial % 3 == 2 else "check"
        argv = [sys.executable, "-m", "bobc", command, "Bob/Build/NativeHost.bob"]
        if command == "build":
            argv += ["-o", "host"]
        started = time.monotonic()
        done = run(argv, cwd=folder)
        assert_clean(done, f"bobc {command} with {target.name}: {how}", f"mutated plans ({command})",
                     time.monotonic() - started)


def test_mutated_sass(tmp_path):
    rng = rng_for("sass")
    sources = sorted((REPO / "specs").rglob("*.sass"))
    assert sources
    for trial in range(12 * SCALE):
        origin = rng.choice(sources)
        mutated, how = mutate(origin.read_bytes(), rng)
        path = tmp_path / f"k{trial}.sass"
        path.write_bytes(mutated)
        started = time.monotonic()
        done = run([sys.executable, "-m", "bobc", "asm", str(path), "-o", str(tmp_path / "k.bin")])
        assert_clean(done, f"bobc asm {origin.name}: {how}", "mutated SASS", time.monotonic() - started)
