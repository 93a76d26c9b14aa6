"""`bobc diff` of a plan with a program residence (probe-regress3 finding 1): Coppelius's QMDs,
its dependents' bank prefetches and its tensor-map words point into the residence, a video-memory
copy of the program table at residence.base + offset.  One launch inserted moves them all with
their launches: that is no difference (README's `bobc diff` row), on both targets; a real change
of such an address is still one."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coppelius"

LAST_COPY = "(cgCopy place (cgStagingAt coppeliusResultRecordOffset) coppeliusReportAddress 16)"
FORWARD_COUNT = "def cgForwardPieceLaunches : Nat = (naturalAdd (naturalMultiply 7 coppeliusLayers) 8)"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def write(root: Path, target: str, out: Path) -> Path:
    from bobc.nvidia.encode import write_images
    from coppelius_host import images

    write_images(images.evaluate(target, (str(EXAMPLE),), root).images, out)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{target: (images of the plan, images of it with its forward piece's last copy launched twice)}."""
    tmp = tmp_path_factory.mktemp("residence-diff")
    base, inserted = tmp / "base", tmp / "inserted"
    for root in (base, inserted):
        shutil.copytree(EXAMPLE / "Coppelius", root / "Coppelius")
    graph = inserted / "Coppelius/Build/Graph.bob"
    source = graph.read_text()
    assert source.count(LAST_COPY + ")))))") == 1 and FORWARD_COUNT in source
    source = source.replace(LAST_COPY + ")))))", f"(cgThen {LAST_COPY} {LAST_COPY})" + ")))))")
    graph.write_text(source.replace(FORWARD_COUNT, FORWARD_COUNT[:-2] + "9)"))
    return {target: (write(base, target, tmp / f"a-{target}"), write(inserted, target, tmp / f"b-{target}"))
            for target in ("sm_86", "sm_90")}


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_an_inserted_launch_in_a_resident_plan_is_a_short_diff(folders, target):
    a, b = folders[target]
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # 213 (sm_86) and 817 (sm_90) lines before: every moved launch's constant bank address, its
    # dependents' bank prefetch, its tensor-map words and its latch ids
    assert len(lines) < 120, done.stdout
    assert any(x.startswith("launch[46..180]: launch[46..180] -> launch[47..181]") for x in lines), done.stdout
    moved = [x for x in lines if x.startswith("launch[") and "->" in x.split(" ", 1)[0] and
             ("CONSTANT_BUFFER_ADDR" in x or "LATCH_ID" in x or "_latch" in x or ".bank0[" in x or
              "PROGRAM_ADDRESS" in x or "PREFETCH_ADDR" in x)]
    # the one launch whose latch is new (the inserted launch is its parent) is the only one left
    assert [x.split(" ", 1)[0] for x in moved if "LATCH_ID" in x or "_latch" in x] in \
        ([], ["launch[46->47].qmd.WAIT_ON_LATCH_ID"]), done.stdout
    assert not [x for x in moved if "LATCH" not in x and "_latch" not in x], done.stdout
    assert not [x for x in lines if x.startswith("tensor_maps:") or ".bank0[" in x and x.startswith("launch[14]")]
    if target == "sm_90":     # the tensor-map words that only moved are named as moved
        assert any(x.startswith("launch[14].addresses (coppelius-gemm-nn): 2 address facts -> the same places, moved")
                   for x in lines), done.stdout


def test_a_real_change_of_a_residence_address_is_still_reported(folders, tmp_path):
    a, _ = folders["sm_86"]
    b = tmp_path / "b"
    shutil.copytree(a, b)
    import json

    from bobc.nvidia import qmd as qmd_layouts
    manifest = json.loads((a / "manifest.json").read_text())
    launch = manifest["launches"][47]
    _high, low = qmd_layouts.LAYOUTS[manifest["qmd_layout"]].field("CONSTANT_BUFFER_ADDR_LOWER(0)")
    raw = bytearray((b / "qmd.bin").read_bytes())
    bit = 8 * launch["qmd_offset"] + low + 8          # the address moved by 0x100: to another place
    raw[bit // 8] ^= 1 << (bit % 8)
    (b / "qmd.bin").write_bytes(bytes(raw))
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    assert any(x.startswith("launch[47].qmd.CONSTANT_BUFFER_ADDR_LOWER(0)") for x in done.stdout.splitlines()), \
        done.stdout
