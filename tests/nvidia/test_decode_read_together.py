"""`bobc dump` and `bobc diff` read an image set's code with two nvdisasm runs, not one per region
(probe s29 speed, finding 5).  nvdisasm's start-up is about 0.2 s of CPU however short the code, and
Bob's dump ran it 4 times, a diff of two hosts 8.  Now the regions are read joined, at base 0 and
at 1 << 32 side by side, and each instruction's text is the one reading its region alone gives:
the numbers that moved with the base are branch targets, moved back by the region's start.  What
the joined readings do not account for (a refused instruction) is read region by region, as before."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc import nvtools
from bobc.nvidia import decode

pytestmark = pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture
def runs(monkeypatch):
    """The (code length, base) of every nvdisasm run while the test runs; nothing read before counts
    (neither this process's texts nor the runs the cache keeps: nvtools.run_on_code, which every
    nvdisasm run over raw code goes through; sass.oracle holds its own name for it)."""
    from bobc.sass import oracle

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setattr(decode, "_TEXTS", {})
    seen: list[tuple[int, int]] = []
    real = nvtools.run_on_code

    def counted(tool, options, code, running=None, prefix=None):
        spelt = next((o for o in ("-base", "--base-address") if o in options), None)
        seen.append((len(code), int(options[options.index(spelt) + 1], 16) if spelt else 0))
        return real(tool, options, code, running, prefix)

    monkeypatch.setattr(nvtools, "run_on_code", counted)
    monkeypatch.setattr(oracle, "run_on_code", counted)
    return seen


def alone(codes, arch) -> list[dict[int, str]]:
    """Each stream read by itself (the walk `bobc dump` made per region before)."""
    decode._TEXTS.clear()
    texts = [decode._instruction_text(code, arch) for code in codes]
    decode._TEXTS.clear()
    return texts


@pytest.mark.parametrize("name", ["bob-sm_90", "bob-sm_86", "coppelius-sm_86"])
def test_an_image_set_is_read_with_two_runs_and_the_same_texts(name, runs):
    images = decode.load_images(GOLDEN / name)
    streams = len(decode._image_codes(images))
    assert streams > 2
    text = decode.render(images)
    assert sorted(base for _, base in runs) == [0, decode.SHIFTED_BASE]
    runs.clear()
    expected = alone(decode._image_codes(images), decode.nvdisasm_arch(images.manifest))
    assert len(runs) >= streams                                  # what a dump cost before
    for code, texts in zip(decode._image_codes(images), expected):
        decode._TEXTS[(decode.nvdisasm_arch(images.manifest), code)] = texts
    assert decode.render(images) == text                         # byte for byte the same dump


def test_branch_targets_of_a_later_region_are_its_own(runs):
    """Each of Bob's kernels ends in a branch to itself (`BRA .`): in every region, read joined with
    the others, that branch's target is its own offset in the region, not in the joined stream."""
    import re

    images = decode.load_images(GOLDEN / "bob-sm_90")
    loops = {}
    for line in decode.lines(images):
        found = re.fullmatch(r"region\[(\d+)\]\.code\[(0x[0-9a-f]+)\]", line.key)
        target = re.search(r" BRA (0x[0-9a-f]+)$", line.note)
        if found and target and found.group(2) == f"{int(target.group(1), 16):#06x}":
            loops[int(found.group(1))] = int(target.group(1), 16)
    assert len(runs) == 2
    assert sorted(loops) == [r["index"] for r in images.manifest["regions"]]


def test_a_diff_reads_each_side_with_two_runs(runs):
    a, b = (decode.load_images(GOLDEN / n) for n in ("bob-sm_90", "bob-sm_86"))
    for images in (a, b):
        for region in images.manifest["regions"]:
            decode.code_lines(images, region)
    assert len(runs) == 4                                          # 8 before: one per region


def test_a_refused_instruction_is_read_region_by_region(runs):
    """A stream with an instruction nvdisasm refuses makes the joined readings fail: every stream
    is then read alone, and the refusal is said for that instruction only."""
    images = decode.load_images(GOLDEN / "bob-sm_90")
    arch = decode.nvdisasm_arch(images.manifest)
    codes = [decode.region_code(images, r) for r in images.manifest["regions"]][:2]
    bad = codes[0][:32] + b"\xff" * 16 + codes[0][48:96]
    decode._read_together([codes[1], bad], arch)
    got = [dict(decode._TEXTS[(arch, c)]) for c in (codes[1], bad)]
    assert got == alone([codes[1], bad], arch)
    assert got[1][32].startswith("(nvdisasm refuses it: ")
    assert all(not t.startswith("(nvdisasm refuses") for k, t in got[1].items() if k != 32)


def test_moved_back_refuses_what_is_not_an_address():
    assert decode._moved_back("BRA 0x120", f"BRA {decode.SHIFTED_BASE + 0x120:#x}", 0x100) == "BRA 0x20"
    assert decode._moved_back("BRA 0x20", f"BRA {decode.SHIFTED_BASE + 0x20:#x}", 0x100) is None   # before the region
    assert decode._moved_back("MOV R1, 0x5", "MOV R1, 0x6", 0) is None
    assert decode._moved_back("MOV R1, 0x5", "MOV R2, 0x5", 0) is None
    assert decode._moved_back("NOP", "NOP", 0x100) == "NOP"
