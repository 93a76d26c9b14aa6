"""What README.md and docs/tensor-maps.md say of the tensor maps is what the driver capture and the
bundled kernels hold (probe s41 docs10 findings 2 and 3).

README said bobc's descriptors were "learned from 4102 of the driver's encodings" and that "No
bundled kernel uses them yet".  The driver was asked 4102 parameter sets and encoded 1059 of them,
refusing 3043 (docs/tensor-maps.md says so); and since b7215a81 Coppelius's sm_90 matrix products
(coppelius-gemm-{nn,nt,tn}.sm_90.sass) copy their tiles with UTMALDG through two `//@ tensormap`
words each.

The counts are recounted from the capture itself (tests/nvidia/data/tensor-maps-driver-580.json.gz:
a record with `bytes` is one the driver wrote, one without is a refusal), and the kernels' use of
the maps from the bundled sources' own instructions, not from what bobc writes."""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CAPTURE = REPO / "tests" / "nvidia" / "data" / "tensor-maps-driver-580.json.gz"
README = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
PAGE = " ".join((REPO / "docs" / "tensor-maps.md").read_text(encoding="utf-8").split())
KERNEL_FOLDERS = [REPO / "specs", REPO / "examples"]


def captured() -> tuple[int, int, int]:
    """(parameter sets asked, encodings the driver wrote, refusals)."""
    records = json.loads(gzip.decompress(CAPTURE.read_bytes()))["records"]
    written = sum(1 for r in records if r["bytes"] is not None)
    return len(records), written, len(records) - written


def test_readme_counts_the_drivers_answers_as_the_capture_does():
    said = re.search(r"learned from the driver's answers to ([0-9,]+) parameter sets: ([0-9,]+) encodings, "
                     r"([0-9,]+) refusals", README)
    assert said, "README's tensor-map paragraph no longer says what the encoding was learned from"
    assert tuple(int(n.replace(",", "")) for n in said.groups()) == captured()


def test_the_tensor_maps_page_counts_them_as_the_capture_does():
    asked = re.search(r"to encode ([0-9,]+) parameter sets", PAGE)
    answered = re.search(r"The driver accepted ([0-9,]+) and refused ([0-9,]+)\.", PAGE)
    assert asked and answered
    total, written, refused = captured()
    assert (int(asked.group(1)), int(answered.group(1)), int(answered.group(2))) == (total, written, refused)
    assert f"writes all {written} bit for bit and refuses exactly the {refused}" in PAGE


def test_readme_names_the_bundled_kernels_that_use_tensor_maps():
    """Every bundled kernel source with a TMA tensor copy (UTMALDG / UTMASTG) is named in README's
    tensor-map paragraph, and the paragraph does not say none uses them."""
    users = sorted(p.name for folder in KERNEL_FOLDERS for p in folder.rglob("*.sass")
                   if any(re.search(r"\bUTMA(?:LDG|STG)\b", line.split("//", 1)[0])
                          for line in p.read_text(encoding="utf-8").splitlines()))
    assert users, "no bundled kernel copies by a tensor map: README's paragraph should say so"
    paragraph = README.split("- **Tensor maps**", 1)[1].split("- **", 1)[0]
    assert "No bundled kernel uses them" not in paragraph
    named = set()
    for head, choices, tail in re.findall(r"([\w.-]*)(?:\{([\w,]+)\})?([\w.-]*\.sass)\b", paragraph):
        named |= {f"{head}{choice}{tail}" for choice in (choices.split(",") if choices else [""])}
    assert set(users) == named, (users, named)
