"""`bobc diff` of two plan hosts reads a scalar fill's address as the launch parameter word it
writes (probe s37 targetparity finding 1).  Bob built for sm_86 and for sm_90 fills the same
AdamW words of the same launches, but the parameter blocks lie elsewhere and sm_90's parameters
start at c[0x0][0x210], not 0x160: diff printed all 30 fill addresses as raw differences
(`host.plan.fills[0].va: 0x100000b980 -> 0x100000c830`), saying nothing of what they are, while the
QMDs' constant bank addresses into the same blocks were "the same places, moved"."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")}, timeout=600)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """{target: (host, manifest of its images)} for Bob on both targets."""
    root = tmp_path_factory.mktemp("fills")
    out = {}
    for target in ("sm_86", "sm_90"):
        host, images = root / f"bob-{target}", root / f"images-{target}"
        done = bobc("build", PLAN, "--target", target, "-o", host, "--emit-images", images)
        assert done.returncode == 0, done.stderr
        out[target] = (host, json.loads((images / "manifest.json").read_text()))
    return out


def fill_addresses(host: Path) -> dict[int, int]:
    """fill index -> address, as `bobc dump` prints the host plan."""
    done = bobc("dump", host)
    assert done.returncode == 0, done.stderr
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("host.plan.fills[") and ".va = " in line:
            index = int(line[len("host.plan.fills["):line.index("]")])
            found[index] = int(line.split(" = ", 1)[1].split()[0], 16)
    return found


def word_of(address: int, manifest: dict) -> tuple[str, int]:
    """(launch identity and index, byte from the parameter base) of the parameter block holding `address`."""
    size, base = manifest["sizes"]["parameter_block"], manifest["parameter_base"]
    [(launch, byte)] = [((x["index"], x["identity"]), address - x["parameter_address"] - base)
                        for x in manifest["launches"] if 0 <= address - x["parameter_address"] < size]
    return launch, byte


def test_fills_writing_the_same_words_are_one_moved_line(builds):
    (a, manifest_a), (b, manifest_b) = builds["sm_86"], builds["sm_90"]
    fills_a, fills_b = fill_addresses(a), fill_addresses(b)
    assert len(fills_a) == len(fills_b) == 30
    # the premise, from the images' own manifests: every fill writes the same word of the same launch
    # (Bob's launches are the same sequence on both targets), at another address
    for i in fills_a:
        assert word_of(fills_a[i], manifest_a) == word_of(fills_b[i], manifest_b)
        assert fills_a[i] != fills_b[i]
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert not [x for x in lines if x.startswith("host.plan.fills[")], lines
    [moved] = [x for x in lines if x.startswith("host.plan.fills.va")]
    assert moved.startswith("host.plan.fills.va: 30 fill addresses -> the same parameter words, moved"), moved
    assert "host.plan.fills[0..29].va" in moved, moved


def test_a_fill_writing_another_word_stays_a_difference_saying_which(builds):
    from bobc.commands.diff import fill_places
    from bobc.host import sections

    (a, manifest_a), (b, manifest_b) = builds["sm_86"], builds["sm_90"]
    lines_a = sections.plan_lines(a.read_bytes(), a)
    lines_b = sections.plan_lines(b.read_bytes(), b)
    # b's first fill moved on by one u32: the next parameter word of its launch
    lines_b = [replace(x, value=x.value + 4) if x.key == "host.plan.fills[0].va" else x for x in lines_b]
    va_a = next(x.value for x in lines_a if x.key == "host.plan.fills[0].va")
    va_b = next(x.value for x in lines_b if x.key == "host.plan.fills[0].va")
    (index_a, kernel_a), byte_a = word_of(va_a, manifest_a)
    (index_b, kernel_b), byte_b = word_of(va_b, manifest_b)
    assert byte_b == byte_a + 4
    kept_a, kept_b, moved = fill_places(lines_a, lines_b, manifest_a, manifest_b)
    [left_a] = [x for x in kept_a if x.key.startswith("host.plan.fills[") and x.key.endswith(".va")]
    [left_b] = [x for x in kept_b if x.key.startswith("host.plan.fills[") and x.key.endswith(".va")]
    expected = (f"writes launch[{index_a}] ({kernel_a}) param+{byte_a:#x} in a, "
                f"launch[{index_b}] ({kernel_b}) param+{byte_b:#x} in b")
    assert left_a.key == left_b.key == "host.plan.fills[0].va"
    assert left_a.note == left_b.note == expected
    [line] = moved
    assert line.a == "29 fill addresses" and "host.plan.fills[1..29].va" in line.meaning


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_dump_says_which_launch_parameter_word_each_fill_writes(builds, target):
    """`bobc dump HOST` printed a fill's address alone (`host.plan.fills[0].va = 0x100000c830`);
    it now says the word, as the images' manifest places the launches' parameter blocks."""
    host, manifest = builds[target]
    done = bobc("dump", host)
    assert done.returncode == 0, done.stderr
    fills = [x for x in done.stdout.splitlines() if x.startswith("host.plan.fills[") and ".va = " in x]
    assert len(fills) == 30
    for line in fills:
        address = int(line.split(" = ", 1)[1].split()[0], 16)
        (index, kernel), byte = word_of(address, manifest)
        assert line.endswith(f"  # writes launch[{index}] ({kernel}) param+{byte:#x}"), line
