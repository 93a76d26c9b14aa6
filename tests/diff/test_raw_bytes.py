"""`bobc diff` never says "the same images" when a byte differs (probe s27 regress, finding 1).

The decoded comparison (golden.differences) is backed by a byte comparison of every image:
each decoded line knows the image bits it shows (decode.Line.spans), and a differing bit no
reported line shows is a `raw` difference naming the file, the offset and the enclosing
record.  Checked here by flipping bits of the committed goldens (which a rebuild reproduces
byte for byte, test_bob_golden.py): every flip is a difference, and the flipped bit is shown
either by a decoded line whose bits hold it or by a raw line naming its file and offset.
"""
from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
FILES = {"program": "program.bin", "qmd": "qmd.bin", "push": "push.bin", "gpfifo": "gpfifo.bin"}


def bobc(*args, **kw):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(autouse=True)
def no_nvdisasm(monkeypatch):
    """Instruction text is not what is checked here; without nvdisasm a diff takes 0.1 s."""
    from bobc import nvtools

    monkeypatch.setattr(nvtools, "nvdisasm", lambda: None)


def _raw_range(key: str, file_name: str):
    found = re.fullmatch(re.escape(file_name) + r"\[(0x[0-9a-f]+)(?:\.\.(0x[0-9a-f]+))?\]", key)
    if not found:
        return None
    start = int(found.group(1), 16)
    return start, int(found.group(2), 16) if found.group(2) else start


def _shown(differences, image: str, offset: int, bits: int) -> bool:
    """Whether every bit of `bits` at byte `offset` of `image` is in a reported line."""
    left = bits
    for d in differences:
        raw = _raw_range(d.key, FILES[image])
        if raw and raw[0] <= offset <= raw[1]:
            return True
        for name, first, count in d.spans:
            if name == image:
                for bit in range(max(first, 8 * offset), min(first + count, 8 * offset + 8)):
                    left &= ~(1 << (bit & 7))
    return not left


def _flipped(images, image: str, offset: int, bit: int):
    data = bytearray(getattr(images, image))
    data[offset] ^= 1 << bit
    return dataclasses.replace(images, **{image: bytes(data)})


# Flips the probe found unreported on sm_90 (GPFIFO bits 1:0, a method header's subchannel and
# bit 12, QMD bits in no field and slot padding, program.bin padding between and after regions)
PROBE_FLIPS = [("gpfifo", 0x68, 0), ("push", 0x259, 7), ("push", 0x51, 4), ("qmd", 0x68A, 7),
               ("qmd", 0x22A6, 5), ("qmd", 0x1A0, 1), ("program", 0x9E80, 0), ("program", 0xA990, 3)]


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_seeded_bit_flip_sweep_is_always_a_difference(target):
    from bobc.errors import BobcError
    from bobc.nvidia import decode, golden

    base = decode.read_images(GOLDEN / f"bob-{target}")
    assert golden.differences(base, base) == []
    rng = random.Random(27)
    flips = [(image, rng.randrange(len(getattr(base, image))), rng.randrange(8))
             for image in FILES for _ in range(30)]
    if target == "sm_90":
        flips += PROBE_FLIPS
    unshown = []
    for image, offset, bit in flips:
        try:
            found = golden.differences(base, _flipped(base, image, offset, bit))
        except BobcError:       # a pushbuffer header that no longer parses: refused, never "the same"
            assert image == "push"
            continue
        if not found or not _shown(found, image, offset, 1 << bit):
            unshown.append((image, hex(offset), bit, [d.text() for d in found]))
    assert not unshown, unshown


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("image", ["program", "qmd", "gpfifo"])
def test_every_bit_of_an_image_is_shown_by_some_line(target, image):
    """Every byte of the image inverted at once: each of its bits is in a reported line."""
    from bobc.nvidia import decode, golden

    base = decode.read_images(GOLDEN / f"bob-{target}")
    inverted = dataclasses.replace(base, **{image: bytes(x ^ 0xFF for x in getattr(base, image))})
    found = golden.differences(base, inverted)
    masks = {}
    raw = []
    for d in found:
        span = _raw_range(d.key, FILES[image])
        if span:
            raw.append(span)
        for name, first, count in d.spans:
            if name == image:
                for bit in range(first, first + count):
                    masks[bit >> 3] = masks.get(bit >> 3, 0) | 1 << (bit & 7)
    missing = [hex(o) for o in range(len(getattr(base, image)))
               if masks.get(o, 0) != 0xFF and not any(a <= o <= b for a, b in raw)]
    assert not missing, missing[:20]


def test_the_probes_flips_are_named_by_the_cli(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(GOLDEN / "bob-sm_90", a)
    expected = {("gpfifo", 0x68, 0): "gpfifo[13] (bob-submission): [0x20000248, 0x2810] -> [0x20000249, 0x2810]",
                ("push", 0x259, 7): "SUBCHANNEL 0 -> 4",
                ("push", 0x51, 4): "BIT12 0 -> 1",
                ("qmd", 0x68A, 7): "qmd.bin[0x68a] (bob-row-gather): 00 -> 80  [launch[3]'s QMD, bit(s) 1111 of the "
                                   "QMD, in no V04_00 field]",
                ("qmd", 0x1A0, 1): "qmd.bin[0x1a0] (bob-loss-gradient): 00 -> 02  [launch[0]'s QMD slot padding",
                ("program", 0x9E80, 0): "program.bin[0x9e80] (bob-loss-gradient): 00 -> 01  [padding after region[1]",
                ("program", 0xA990, 3): "program.bin[0xa990] (bob-greedy-argmax): 00 -> 08  [padding after region[3]"}
    for (image, offset, bit), said in expected.items():
        shutil.rmtree(b, ignore_errors=True)
        shutil.copytree(a, b)
        data = bytearray((b / FILES[image]).read_bytes())
        data[offset] ^= 1 << bit
        (b / FILES[image]).write_bytes(bytes(data))
        done = bobc("diff", a, b)
        assert done.returncode == 1, (image, offset, done.stdout, done.stderr)
        assert said in done.stdout, (said, done.stdout)
        assert done.stdout.splitlines()[-1].startswith("1 difference(s)"), done.stdout
        as_json = json.loads(bobc("diff", a, b, "--json").stdout)
        assert len(as_json) == 1


def test_a_header_change_is_one_line_with_both_sides(tmp_path):
    from bobc.nvidia import decode, golden

    base = decode.read_images(GOLDEN / "bob-sm_90")
    found = golden.differences(base, _flipped(base, "push", 0x259, 7))
    assert len(found) == 1, [d.text() for d in found]
    text = found[0].text()
    assert "subch 0 INC_METHOD, header at push +0x258 -> subch 4 INC_METHOD" in text
    assert "header 0x20050017 -> 0x20058017 (SUBCHANNEL 0 -> 4)" in text


def test_manifest_values_no_line_shows_and_manifest_bytes_are_compared(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(GOLDEN / "bob-sm_90", a)
    shutil.copytree(a, b)
    manifest = json.loads((a / "manifest.json").read_text())
    manifest["launches"][3]["schedules"] = [5, 6]               # the QMD schedules none: a manifest fact
    (b / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "manifest.launch[3].schedules (bob-row-gather): [] -> [0x5, 0x6]" in done.stdout, done.stdout
    (b / "manifest.json").write_text(json.dumps(json.loads((a / "manifest.json").read_text()), sort_keys=True))
    done = bobc("diff", a, b)             # the same content, written compactly: not the same bytes
    assert done.returncode == 1 and "manifest.json: " in done.stdout and "the same JSON content" in done.stdout


def test_an_image_of_another_length_is_a_difference():
    from bobc.nvidia import decode, golden

    base = decode.read_images(GOLDEN / "bob-sm_90")
    longer = dataclasses.replace(base, gpfifo=base.gpfifo + bytes(8))
    base.manifest = dict(base.manifest, sizes={k: v for k, v in base.manifest["sizes"].items() if k != "gpfifo"})
    longer.manifest = base.manifest
    found = golden.differences(base, longer)
    assert any(d.key == "gpfifo.bin.bytes" for d in found), [d.text() for d in found]
