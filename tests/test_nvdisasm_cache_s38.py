"""nvdisasm's answers are kept in the user cache (docs/cache.md, `nvdisasm-runs/`): a second
`bobc dump`, or a second simulator reading the same code, in a fresh process starts no nvdisasm
(probe s38 simspeed finding 3: every process ran it again for every code image, 0.1-0.25 s of CPU
each).  Safe as the cache's other kinds: a damaged entry is run again and replaced, another
nvdisasm file is another key, a failed run is never kept, and BOBC_CACHE_DIR=off keeps nothing.
The nvdisasm runs are counted by a wrapper that BOBC_NVDISASM names, which logs each call."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import nvtools

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "bob-sm_90"

pytestmark = pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")

# the simulator's reading of one region of the golden images (sim/sass_frontend.disassembly_text)
SIM_READ = """
import sys
from bobc.nvidia import decode
from bobc.sim.sass_frontend import disassembly_text
images = decode.load_images(sys.argv[1])
sys.stdout.write(disassembly_text(decode.region_code(images, images.manifest["regions"][1]), "SM90"))
"""


@pytest.fixture
def counted(tmp_path):
    """(run, calls): run(argv, cache) runs a fresh python with argv under BOBC_CACHE_DIR=cache and
    a counting nvdisasm wrapper; calls() is how many times nvdisasm ran since the last run."""
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "bin" / "nvdisasm"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {nvtools.nvdisasm()} "$@"\n')
    wrapper.chmod(0o755)

    def run(argv: list[str], cache, tool: Path = wrapper) -> subprocess.CompletedProcess:
        log.write_text("")
        env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_NVDISASM": str(tool),
               "BOBC_CACHE_DIR": str(cache)}
        return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=tmp_path)

    def calls() -> int:
        return len(log.read_text().splitlines())
    run.wrapper = wrapper
    return run, calls


DUMP = ["-m", "bobc", "dump", str(GOLDEN)]
SIM = ["-c", SIM_READ, str(GOLDEN)]


@pytest.mark.parametrize("argv", [DUMP, SIM], ids=["dump", "sim"])
def test_a_second_process_runs_no_nvdisasm(counted, tmp_path, argv):
    run, calls = counted
    off = run(argv, "off")
    assert off.returncode == 0, off.stderr
    assert calls() > 0 and "EXIT" in off.stdout
    first = run(argv, tmp_path / "cache")
    assert first.returncode == 0 and calls() > 0 and first.stdout == off.stdout
    assert list((tmp_path / "cache" / nvtools.RUNS_KIND).iterdir())
    second = run(argv, tmp_path / "cache")
    assert second.returncode == 0 and second.stdout == off.stdout and second.stderr == off.stderr
    assert calls() == 0                                      # every answer read from the cache
    assert run(argv, "off").stdout == off.stdout and calls() > 0     # off: nothing kept, asked again
    assert not (tmp_path / "off").exists()


@pytest.mark.parametrize("damage", ["truncated", "empty", "one bit", "garbage"])
def test_a_damaged_entry_is_run_again_and_replaced(counted, tmp_path, damage):
    run, calls = counted
    cache = tmp_path / "cache"
    expected = run(SIM, cache).stdout
    [entry] = list((cache / nvtools.RUNS_KIND).iterdir())
    data = entry.read_bytes()
    entry.write_bytes({"truncated": data[:len(data) // 2], "empty": b"",
                       "one bit": data[:-1] + bytes([data[-1] ^ 1]), "garbage": os.urandom(len(data))}[damage])
    again = run(SIM, cache)
    assert again.returncode == 0 and again.stdout == expected and calls() == 1     # run again, same text
    assert entry.read_bytes() == data                                              # and the entry replaced
    assert run(SIM, cache).stdout == expected and calls() == 0


def test_another_nvdisasm_is_another_key(counted, tmp_path):
    run, calls = counted
    cache = tmp_path / "cache"
    expected = run(SIM, cache).stdout
    assert calls() == 1
    other = tmp_path / "other" / "nvdisasm"          # the same script in another file: another tool
    other.parent.mkdir()
    other.write_bytes(run.wrapper.read_bytes())
    other.chmod(0o755)
    assert run(SIM, cache, other).stdout == expected and calls() == 1
    os.utime(run.wrapper, ns=(0, 10**18))            # the first one changed (an upgrade): asked again
    assert run(SIM, cache).stdout == expected and calls() == 1
    assert len(list((cache / nvtools.RUNS_KIND).iterdir())) == 3


def test_a_failed_run_is_never_kept(tmp_path, monkeypatch):
    """nvdisasm's refusal of a word (exit status 1) may be asked again: only exit status 0 is kept."""
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    tool = nvtools.nvdisasm()
    refused = nvtools.run_on_code(tool, ["-b", "SM90", "-hex"], b"\xff" * 16)
    assert refused.returncode != 0 and "Unrecognized operation" in refused.stderr
    assert not (tmp_path / "cache" / nvtools.RUNS_KIND).exists()
    from bobc.sass.oracle import nop_word

    listed = nvtools.run_on_code(tool, ["-b", "SM90", "-hex"], nop_word("SM90"))
    assert listed.returncode == 0 and "NOP" in listed.stdout and str(tmp_path) not in listed.stdout
    assert len(list((tmp_path / "cache" / nvtools.RUNS_KIND).iterdir())) == 1
    assert nvtools.run_on_code(tool, ["-b", "SM90", "-hex"], nop_word("SM90")) == listed
