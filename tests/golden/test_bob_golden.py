"""Bob's device images: a rebuild reproduces the committed goldens byte for
byte, and the goldens are checked by readers that are not the encoder:
nvdisasm decodes every region's code without errors, and the QMDs decode to
the values the plan itself computes (evaluated through the language)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from bobc.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
GOLDEN = Path(__file__).resolve().parent


@pytest.fixture(scope="module", params=sorted(TARGETS))
def built(request):
    from bobc import pipeline

    target = TARGETS[request.param]
    return target, pipeline.compile_plan(PLAN, target)


def test_rebuild_reproduces_the_golden_images(built):
    from bobc.nvidia.encode import write_images
    from bobc.nvidia.golden import compare

    target, result = built
    golden = GOLDEN / f"bob-{target.name}"
    with tempfile.TemporaryDirectory() as scratch:
        fresh = write_images(result.images, Path(scratch) / "images")
        differences = compare(golden, fresh)
        for name in ("program.bin", "qmd.bin", "push.bin", "gpfifo.bin", "manifest.json"):
            same = (golden / name).read_bytes() == (fresh / name).read_bytes()
            assert same, f"{name} differs from the golden ({target.name}):\n" + "\n".join(differences[:40])


def test_every_region_of_the_golden_decodes_with_nvdisasm(built):
    from bobc.nvidia.decode import read_images, region_code
    from bobc.sass import oracle

    if oracle.nvdisasm() is None:
        pytest.skip("nvdisasm is not installed (pip install nvidia-cuda-nvdisasm)")
    target, _ = built
    images = read_images(GOLDEN / f"bob-{target.name}")
    for region in images.manifest["regions"]:
        listing = oracle.disassemble(region_code(images, region), target.nvdisasm_arch)
        assert not listing.errors, (region["identity"], listing.errors)
        assert len(listing.lines) * 16 == region["size"], region["identity"]
        assert any(d.text.strip().startswith("EXIT") for d in listing.lines), region["identity"]


def test_golden_qmds_decode_to_the_plans_own_values(built):
    """Grid, block, registers and program address per launch, as the plan computes them."""
    from bobc.nvidia.decode import qmd_fields, read_images

    target, result = built
    images = read_images(GOLDEN / f"bob-{target.name}")
    plan = result.plan.program
    grid_names = {"V03_00": ("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"),
                  "V04_00": ("GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH")}[target.qmd_layout]
    regions = {r["index"]: r for r in images.manifest["regions"]}
    assert len(images.manifest["launches"]) == 27
    for index, launch in enumerate(plan.launches):
        fields = dict(qmd_fields(images, index))
        assert tuple(fields[n] for n in grid_names) == launch.grid
        assert (fields["CTA_THREAD_DIMENSION0"], fields["CTA_THREAD_DIMENSION1"],
                fields["CTA_THREAD_DIMENSION2"]) == launch.block
        declared = plan.regions[launch.region].registers
        assert declared <= fields[next(k for k in fields if k.startswith("REGISTER_COUNT"))] < declared + 8
        address = fields["PROGRAM_ADDRESS_LOWER"] | (fields["PROGRAM_ADDRESS_UPPER"] << 32)
        assert address == regions[launch.region]["address"]


def test_sm86_sizes_equal_what_the_plan_computes(built):
    """Seed 001: bobProgramBytes = retained code + one 512-byte block per launch;
    bobQMDTableBytes = one 256-byte record per launch (evaluated in the language)."""
    target, result = built
    program = result.program
    if target.name != "sm_86":
        # the plan's sizes are sm_86's; sm_90's parameter blocks (1024 bytes) and QMD slots
        # (512) are larger: the same code extent, 27 launches of each
        code = result.images.manifest["sizes"]["code"]
        plan_code = program.value("bobProgramBytes").value - 27 * 512
        assert code == plan_code
        assert len(result.images.program) == code + 27 * 1024
        assert len(result.images.qmd) == 27 * 512
        return
    assert len(result.images.program) == program.value("bobProgramBytes").value
    assert len(result.images.qmd) == program.value("bobQMDTableBytes").value == 27 * 256
