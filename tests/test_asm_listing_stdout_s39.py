"""`bobc asm --listing -o OUT`: the listing is an output as OUT is (probe s39 leftovers3 finding 1).

It is printed before OUT is published, so a stdout that cannot take it (a full disk,
`> /dev/full`, a closed stdout) is a refusal, exit 8 (README: an output not written), and OUT is
not written -- never a new OUT beside an exit code that says "not written"; one that was there
stays as it was.  A reader that went away (`| head`) read what it wanted: OUT is written, exit 0."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"


def env(tmp_path):
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}


def asm(tmp_path, output, stdout):
    return subprocess.run([sys.executable, "-m", "bobc", "asm", "--listing", "-o", str(output), str(SOURCE)],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, env=env(tmp_path), timeout=300)


@pytest.mark.parametrize("before", [None, b"kept"])
def test_a_full_stdout_writes_no_output(tmp_path, before):
    output = tmp_path / "k.bin"
    if before is not None:
        output.write_bytes(before)
    with open("/dev/full", "w") as full:
        done = asm(tmp_path, output, full)
    assert done.returncode == 8, done.stderr
    assert done.stderr.splitlines() == [
        "bobc asm: error: cannot write the listing (--listing) to stdout: No space left on device",
        f"hint: nothing was written to {output} (-o); send the listing to a file (> FILE), or leave out --listing"]
    assert (output.read_bytes() if output.exists() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["cache"] * (tmp_path / "cache").exists()
                                                                 + ["k.bin"] * (before is not None))


def test_a_closed_stdout_writes_no_output(tmp_path):
    output = tmp_path / "k.bin"
    done = subprocess.run(f'"{sys.executable}" -m bobc asm --listing -o "{output}" "{SOURCE}" >&-', shell=True,
                          stderr=subprocess.PIPE, text=True, env=env(tmp_path), timeout=300)
    assert done.returncode == 8, done.stderr
    assert "cannot write the listing (--listing) to stdout" in done.stderr
    assert not output.exists()


def test_the_listing_and_the_output_when_stdout_takes_it(tmp_path):
    output = tmp_path / "k.bin"
    done = asm(tmp_path, output, subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    words = output.read_bytes()
    # one listing line per 16-byte instruction, its words those written to OUT, then the success line
    assert len(lines) == len(words) // 16 + 1
    for index, line in enumerate(lines[:-1]):
        lo, hi = (int(word, 16) for word in line.rsplit("/*", 1)[1].rstrip(" */").split())
        assert words[16 * index:16 * index + 16] == lo.to_bytes(8, "little") + hi.to_bytes(8, "little")
    assert lines[-1].startswith(f"{output}: raw stream, {len(words) // 16} instructions")


def test_a_reader_that_went_away_still_gets_the_output_written(tmp_path):
    output = tmp_path / "k.bin"
    done = subprocess.run(f'"{sys.executable}" -m bobc asm --listing -o "{output}" "{SOURCE}" | head -c 1 >/dev/null;'
                          ' exit "${PIPESTATUS[0]}"', shell=True, executable="/bin/bash",
                          stderr=subprocess.PIPE, text=True, env=env(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert output.stat().st_size > 0 and output.stat().st_size % 16 == 0
