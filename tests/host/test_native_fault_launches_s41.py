"""A native host's GPU fault or timeout line names the unfinished submission's launches, as a plan
host's does (docs/native-host.md, "GPU faults"; probe s41 nativelaunch): `bobc build --entry DEF`
writes a launch table (.bobc.launches: bobc.native.launches) beside the images' manifest, and the
host's Submit fault says `; its launches: launch[L] (kernel NAME, grid [..], FILE:LINE:COL)`.

Before it the line said only `command 33 (Submit): submission 1 (entry 0x7810100000b8): <the shim's
message>`: which kernel ran took `bobc dump HOST`, the entry's GPFIFO image entry, its submission
and the launch indices -- and nothing said where the plan wrote the launch.

The fault is injected without a GPU: a C driver links the runtime's launch_rows.c and says the
line the host says (native_host.c launches_note -> rt_launch_table_line) for the section the
built host carries, for every entry of the GPFIFO image.  The expectations come from the images
the same build wrote (`--emit-images`: manifest.json's launches and submissions, gpfifo.bin's
entries) and the plan's text at each place -- not from the table the host carries.  Device images
are checked unchanged by the images tests (the table is an interpreter section)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_runtime

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"
EXAMPLE = REPO / "examples" / "coppelius"
PLAN = Path("Coppelius/Build/DirectArtifact.bob")       # seed 004's host as one build
ENTRY = "coppeliusHost"
SHOWN = 3           # runtime_c/launch_rows.h BOBC_FAULT_LAUNCHES_SHOWN

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "launch_rows.h"

int main(int argc, char **argv)
{
    static uint8_t section[1 << 22], ring[1 << 20];
    FILE *f = fopen(argv[1], "rb"), *g = fopen(argv[2], "rb");
    size_t size = fread(section, 1, sizeof section, f), ring_size = fread(ring, 1, sizeof ring, g);
    rt_launch_table t;
    char why[160], line[4096];
    if (rt_launch_table_decode(section, size, &t, why, sizeof why)) {
        printf("damaged: %s\n", why);
        return 1;
    }
    for (size_t at = 0; at + 8 <= ring_size; at += 8) {
        uint64_t entry = 0;
        for (int i = 7; i >= 0; i--)
            entry = entry << 8 | ring[at + i];
        rt_launch_table_line(&t, entry, "./h", line, sizeof line);
        printf("%s\n", line);
    }
    rt_launch_table_free(&t);
    return 0;
}
"""


def bobc(*args, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(REPO / "compiler"), BOBC_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=900, env=environment)


def build(folder: Path) -> tuple[Path, Path, Path]:
    tree = folder / "tree"
    shutil.copytree(EXAMPLE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    built = bobc("build", tree / PLAN, "--entry", ENTRY, "--target", "sm_90", "-o", folder / "h", "--emit-images",
                 folder / "images", cwd=folder, cache=folder / "cache")
    assert built.returncode == 0, built.stderr
    return tree, folder / "h", folder / "images"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    return build(tmp_path_factory.mktemp("native-launches"))


def section_of(executable: Path) -> bytes:
    from bobc.host import sections

    data = executable.read_bytes()
    start, size = sections.spans(data, executable)["launches"]
    return data[start:start + size]


def expected(manifest: dict, k: int, places: list[str]) -> str:
    """Submission k's launches as the plan host's line words them, from the images' manifest."""
    launches = {row["index"]: row for row in manifest["launches"]}
    indices = manifest["submissions"][k]["launches"]
    shown = [f"launch[{i}] (kernel {launches[i]['identity']}, grid [{', '.join(f'{n:#x}' for n in launches[i]['grid'])}]"
             f", {places[i]})" for i in indices[:SHOWN]]
    more = f" and {len(indices) - SHOWN} more" if len(indices) > SHOWN else ""
    return f"; its launches: {', '.join(shown)}{more}; `bobc dump ./h` lists submission[{k}]'s launches"


def test_a_native_hosts_fault_line_names_each_submissions_launches(host, runtime_build, tmp_path):
    tree, executable, images = host
    built = make_runtime(runtime_build, f"{runtime_build}/libbobcrt.a")
    assert built.returncode == 0, built.stderr
    (tmp_path / "driver.c").write_text(DRIVER)
    subprocess.run(["gcc", "-std=c11", "-D_DEFAULT_SOURCE", f"-I{RUNTIME}", str(tmp_path / "driver.c"), "-o",
                    str(tmp_path / "driver"), str(runtime_build / "libbobcrt.a"), "-lm"], check=True)
    (tmp_path / "section").write_bytes(section_of(executable))
    lines = subprocess.run([str(tmp_path / "driver"), str(tmp_path / "section"), str(images / "gpfifo.bin")],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    manifest = json.loads((images / "manifest.json").read_text())
    dumped = json.loads(bobc("dump", executable, "--no-code", "--json", cwd=tmp_path, cache=tmp_path / "c").stdout)
    facts = {line["key"]: line["value"] for line in dumped}
    places = [facts[f"host.launches[{i}].place"] for i in range(len(manifest["launches"]))]
    # each place is where the plan wrote a schedule node: a module of the plan's tree, relative to
    # it (never this machine's folders), its line and column at an opening parenthesis
    for place in set(places):
        path, line, column = place.rsplit(":", 2)
        assert not Path(path).is_absolute() and str(tree) not in place, place
        text = (tree / path).read_text().splitlines()[int(line) - 1]
        assert text[int(column) - 1] == "(", (place, text)
    ring = {s["ring_entry"]: s["index"] for s in manifest["submissions"]}
    assert len(lines) == (images / "gpfifo.bin").stat().st_size // 8
    for e, line in enumerate(lines):
        assert line == (expected(manifest, ring[e], places) if e in ring else ""), (e, line)
    # and `bobc dump HOST`'s table lines say what its images' lines say
    for index, row in enumerate(manifest["launches"]):
        assert facts[f"host.launches[{index}].kernel"] == facts[f"launch[{index}].kernel"] == row["identity"]
        assert facts[f"host.launches[{index}].grid"] == facts[f"launch[{index}].grid"]
    for k, submission in enumerate(manifest["submissions"]):
        assert facts[f"host.submissions[{k}].launches"] == submission["launches"]


def test_a_copy_of_the_plan_elsewhere_builds_the_same_host(host, tmp_path):
    """The table names places relative to the plan's search folders: the same plan in another
    folder (its own cache: evaluated again, not a stored artifact) builds the same bytes."""
    _, first, _ = host
    _, second, _ = build(tmp_path / "elsewhere" / "deeper")
    assert first.read_bytes() == second.read_bytes()
