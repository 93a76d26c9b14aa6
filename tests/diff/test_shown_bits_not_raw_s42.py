"""A bit a decoded line shows is never also reported as a raw byte difference (probe s42
mutants8, mutation testing of nvidia/decode.py).

Each decoded line says which image bits it shows (decode.Line.spans); golden.differences reports
as `raw` only the differing bits no reported line shows.  test_raw_bytes.py checks that every
flipped bit is reported one way or the other, so spans that miss bits passed it: a method's data
dword placed at its header (`offset + 4 * position`), a QMD field one bit short (`high - low`), an instruction
counted as 64 bits, not 128 -- each flip there was then reported twice, once decoded and once
as raw bytes the decoded line already shows.

Expected by hand from the formats: a method's header dword is followed by its data dwords, one
per write (clc56f.h / pushbuffer.py's NV_FIFO_DMA_* header: COUNT data dwords after it), a QMD
field (high, low) holds high - low + 1 bits, an instruction is 16 bytes (128 bits)."""
from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture(autouse=True)
def no_nvdisasm(monkeypatch):
    from bobc import nvtools

    monkeypatch.setattr(nvtools, "nvdisasm", lambda: None)


RAW = re.compile(r"(program|qmd|push|gpfifo)\.bin\[")


def _flip_each_shown_bit(base, lines, image, pick, skip=lambda line, first: False):
    from bobc.nvidia import golden

    doubled = []
    for line in lines:
        for name, first, count in line.spans:
            if name != image or skip(line, first):
                continue
            for bit in pick(first, count):
                data = bytearray(getattr(base, image))
                data[bit >> 3] ^= 1 << (bit & 7)
                found = golden.differences(base, dataclasses.replace(base, **{image: bytes(data)}))
                raw = [d.text() for d in found if RAW.match(d.key)]
                if raw:
                    doubled.append((line.key, hex(bit >> 3), bit & 7, raw))
    return doubled


def _header_span(line, first) -> bool:
    """Whether the span at bit `first` is the method's header dword (a flip there may make the
    header unparsable: a refusal, not a difference), by the `header at push +0x..` it names."""
    return first == 8 * int(re.search(r"header at push \+(0x[0-9a-f]+)", line.where).group(1), 16)


def test_a_flip_in_a_methods_data_is_reported_decoded_only():
    from bobc.nvidia import decode

    base = decode.read_images(GOLDEN / "bob-sm_90")
    lines = decode.push_lines(base)
    # the top bit of each data dword, the first write's and every later one's
    doubled = _flip_each_shown_bit(base, lines, "push", lambda first, count: [first + count - 1], _header_span)
    assert not doubled, doubled[:3]


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_flip_in_a_qmd_field_or_an_instruction_is_reported_decoded_only(target):
    from bobc.nvidia import decode

    base = decode.read_images(GOLDEN / f"bob-{target}")
    rng = random.Random(42)
    qmd = [line for line in decode.launch_lines(base) if line.kind == "qmd"]
    region = base.manifest["regions"][0]
    code = decode.code_lines(base, region, with_text=False)
    doubled = _flip_each_shown_bit(base, rng.sample(qmd, 20), "qmd", lambda first, count: [first + count - 1])
    # an instruction's first and last bit: 16 bytes from its start, whatever its span says
    doubled += _flip_each_shown_bit(base, rng.sample(code, 4), "program", lambda first, count: [first, first + 127])
    assert not doubled, doubled[:3]
