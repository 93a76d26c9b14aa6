"""Coppelius's sm_86 device images (issue 17): no GPU runs sm_86 here, so these goldens
and independent decoders are its whole verification.

A rebuild (Coppelius.Build.DirectArtifact evaluated for sm_86: what the built host
embeds) reproduces tests/golden/coppelius-sm_86 byte for byte; nvdisasm decodes every
region's code; and `bobc dump` of the golden folder decodes to the plan as
coppelius_model.graph (the Python specification) writes it: every launch's kernel, grid,
block and parameter words, every submission's launches, and one counting semaphore.

After an intended change (a kernel, a launch word), regenerate and say why in the commit:
    cd examples/coppelius && python -m coppelius_host.images sm_86 ../../tests/golden/coppelius-sm_86
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from coppelius_host import images as direct
from coppelius_model import graph
from coppelius_model.config import SMALL

from .conftest import REPOSITORY

GOLDEN = REPOSITORY / "tests" / "golden" / "coppelius-sm_86"
FILES = ("program.bin", "qmd.bin", "push.bin", "gpfifo.bin", "manifest.json")
REGENERATE = "cd examples/coppelius && python -m coppelius_host.images sm_86 ../../tests/golden/coppelius-sm_86"


@pytest.fixture(scope="module")
def dump():
    done = subprocess.run([sys.executable, "-m", "bobc", "dump", str(GOLDEN), "--no-code", "--json"],
                          capture_output=True, text=True, cwd=REPOSITORY)
    assert done.returncode == 0, done.stderr
    return {line["key"]: line["value"] for line in json.loads(done.stdout)}


def test_a_rebuild_reproduces_the_golden_images():
    from bobc.nvidia.encode import write_images
    from bobc.nvidia.golden import compare

    evaluated = direct.evaluate("sm_86")
    with tempfile.TemporaryDirectory() as scratch:
        fresh = write_images(evaluated.images, Path(scratch) / "images")
        differences = compare(GOLDEN, fresh)
        for name in FILES:
            assert (GOLDEN / name).read_bytes() == (fresh / name).read_bytes(), \
                f"{name} differs from the golden:\n" + "\n".join(differences[:40]) + f"\n(regenerate: {REGENERATE})"
    # and what the host embeds is these images
    assert evaluated.program == (GOLDEN / "program.bin").read_bytes()
    assert evaluated.qmd == (GOLDEN / "qmd.bin").read_bytes()
    assert evaluated.push == (GOLDEN / "push.bin").read_bytes()
    assert evaluated.gpfifo == (GOLDEN / "gpfifo.bin").read_bytes()


def test_every_region_of_the_golden_decodes_with_nvdisasm():
    from bobc.nvidia.decode import read_images, region_code
    from bobc.sass import oracle

    assert oracle.nvdisasm() is not None, "nvdisasm is part of the dev install (make setup)"
    images = read_images(GOLDEN)
    # one region for each kernel the launch graph uses (bias-backward, gelu-forward and -backward and the
    # softmaxes stay as sources and oracles, but no launch uses them)
    from coppelius_model import graph
    from coppelius_model.config import SMALL
    launched = {launch.kernel for piece in graph.pieces(SMALL) for launch in piece.launches}
    assert sorted(region["identity"] for region in images.manifest["regions"]) == sorted(launched)
    for region in images.manifest["regions"]:
        listing = oracle.disassemble(region_code(images, region), "SM86")
        assert not listing.errors, (region["identity"], listing.errors)
        assert len(listing.lines) * 16 == region["size"], region["identity"]
        assert any(d.text.strip().startswith("EXIT") for d in listing.lines), region["identity"]


def test_the_dump_decodes_every_launch_to_the_graphs_launch(dump):
    launches = [launch for piece in graph.pieces(SMALL) for launch in piece.launches]
    assert f"launch[{len(launches)}].kernel" not in dump
    for index, launch in enumerate(launches):
        key = f"launch[{index}]"
        assert dump[f"{key}.kernel"] == launch.kernel, index
        assert tuple(dump[f"{key}.grid"]) == launch.grid, (index, launch.kernel)
        assert dump[f"{key}.block"] == [launch.block, 1, 1], (index, launch.kernel)
        for word, value in enumerate(launch.words):
            held = dump.get(f"{key}.bank0[{0x160 + 8 * word:#x}]", 0)
            assert held == value, (index, launch.kernel, word)


def test_the_dump_decodes_every_submission_to_the_graphs_pieces_counting_on_one_semaphore(dump):
    pieces = graph.pieces(SMALL)
    first = 0
    for index, piece in enumerate(pieces):
        key = f"submission[{index}]"
        assert dump[f"{key}.launches"] == list(range(first, first + len(piece.launches))), (index, piece.name)
        assert dump[f"{key}.ring_entry"] == index
        assert dump[f"{key}.semaphore_offset"] == 0, piece.name
        first += len(piece.launches)
    assert f"submission[{len(pieces)}].launches" not in dump
