"""`bobc dump` and `bobc diff` read a region holding words nvdisasm refuses the way `bobc disasm`
does (sass.oracle.read_words): the stream again with a NOP in place of each word nvdisasm's errors
name, a fixed number of runs, where halving the stream down to each refused word took one run per
half (a dump and a diff of a host with one such word: 82 s on a loaded machine; probe s38
testspeed).  The texts are what halving gave, which in the limit is each word read alone at its own
address: nvdisasm's text for a word it decodes, its first complaint for one it refuses."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bobc import nvtools
from bobc.bounded import BoundedCache
from bobc.nvidia import decode
from bobc.sass import oracle

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "bob-sm_90"

pytestmark = pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")


def _alone(word: bytes, address: int) -> str:
    """nvdisasm's reading of one word alone at `address`, as the line of a dump shows it."""
    done = nvtools.run_on_code(nvtools.nvdisasm(), ["-b", "SM90", "-hex", "--base-address", hex(address)], word)
    if done.returncode == 0:
        [line] = oracle.parse_hex_listing(done.stdout)
        return line.text
    first = next(line for line in done.stderr.splitlines() if line.strip())
    said = re.sub(r"\s+at address 0x[0-9a-fA-F]+$", "", re.sub(r"^nvdisasm error\s*:\s*", "", first.strip()))
    return f"(nvdisasm refuses it: {said})"


@pytest.fixture
def runs(monkeypatch, tmp_path):
    """The nvdisasm runs made from now on (a wrapper BOBC_NVDISASM names logs each), none the
    cache's, with no text or verdict of this process kept from before."""
    real = nvtools.nvdisasm()
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "nvdisasm"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    log.write_text("")
    monkeypatch.setenv("BOBC_NVDISASM", str(wrapper))
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setattr(decode, "_TEXTS", BoundedCache(decode.TEXTS_KEPT))
    monkeypatch.setattr(oracle, "_WORKING", set())
    return lambda: log.read_text().splitlines()


def test_refused_words_cost_a_fixed_number_of_runs_and_read_as_each_word_alone(runs):
    images = decode.load_images(GOLDEN)
    code = bytearray(decode.region_code(images, images.manifest["regions"][1])[:16 * 16])
    bad = (0, 5, 9, 15)
    for k in bad:
        code[16 * k] = 0xFF                               # an opcode nvdisasm refuses
    texts = decode._instruction_text(bytes(code), "SM90")
    assert len(runs()) <= 3, runs()          # the stream, one NOP (whether nvdisasm works), the patched stream
    expected = {16 * k: _alone(bytes(code[16 * k:16 * k + 16]), 16 * k) for k in range(16)}
    assert [k for k in range(16) if "refuses it" in expected[16 * k]] == list(bad)
    assert texts == expected


def test_an_image_set_with_a_refused_word_costs_runs_by_its_refusals_not_by_its_regions(runs, monkeypatch,
                                                                                          tmp_path):
    """`bobc dump` reads an image set's regions joined (decode._read_together); a refused word in
    one of them had every region read alone again (one run each: a run per region of a
    Coppelius host).  Now the joined stream is read with a NOP in its place, at both bases: the
    texts are still each region's read alone."""
    folder = tmp_path / "images"
    shutil.copytree(GOLDEN, folder)
    region = decode.load_images(folder).manifest["regions"][1]
    program = bytearray((folder / "program.bin").read_bytes())
    program[region["place"]] = 0xFF                       # an opcode nvdisasm refuses
    (folder / "program.bin").write_bytes(bytes(program))
    images = decode.load_images(folder)
    decode.lines(images)
    assert len(runs()) <= 6, runs()        # joined at 0 and moved, the NOP (each thread), both patched
    codes = [decode.region_code(images, r) for r in images.manifest["regions"]]
    read = [decode._TEXTS.get(("SM90", code)) for code in codes]
    monkeypatch.setattr(decode, "_TEXTS", BoundedCache(decode.TEXTS_KEPT))
    alone = [decode._instruction_text(code, "SM90") for code in codes]       # each region by itself
    assert read == alone and "(nvdisasm refuses it: " in alone[1][0]
