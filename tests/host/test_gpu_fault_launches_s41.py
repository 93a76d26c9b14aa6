"""A plan host's GPU fault or timeout line names the unfinished submission's launches itself
(docs/runtime.md, "GPU faults"; runtime_c/plan_host.c bobc_gpu_fault_line), from the launch table
the generator puts in the host plan (bobc.host.generate._launch_table, host_plan.c.j2).

Before it the host had no launch table: its line said only "`bobc dump HOST` lists submission[K]'s
launches", whose dump gives launch indices (`submission[1].launches = [0x1]`), a third look-up
from the kernel that ran.

The expectations come from the plan as bobc.pipeline extracts it (bobc.plan.model: each
submission's launch indices, each launch's identity, grid and where the plan wrote it, the path
taken relative to the plan's root here), and the dump's launch facts from the images (the QMD's
grid, the manifest's kernel) -- not from the table the host carries, which is what is checked.
The C driver includes the generated host_plan.c (`bobc build --emit-c`) and calls the line's
function on its `plan` for every submission, as the host does when a wait fails (no GPU needed).
"""
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
EXAMPLE = REPO / "examples" / "linear_regression"
PLAN = Path("LinReg/Build/NativeHost.bob")
TARGET = "sm_90"
SHOWN = 3           # runtime_c/plan_host.h BOBC_FAULT_LAUNCHES_SHOWN

DRIVER = r"""
#define main generated_host_main
#include "host_plan.c"
#undef main
#include <stdio.h>

int main(void)
{
    char line[4096];
    for (uint32_t k = 0; k < plan.submission_count; k++) {
        bobc_gpu_fault_line(&plan, "./h", 0, "Submit", k, k + 1, k, "E", line, sizeof line);
        printf("%s\n", line);
    }
    return 0;
}
"""


def bobc(*args, cwd: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600, env=environment)


def build(folder: Path) -> tuple[Path, Path]:
    tree = folder / "tree"
    shutil.copytree(EXAMPLE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    built = bobc("build", tree / PLAN, "--target", TARGET, "-o", folder / "h", "--emit-c", folder / "host_plan.c",
                 cwd=folder)
    assert built.returncode == 0, built.stderr
    return tree, folder / "h"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    return build(tmp_path_factory.mktemp("launches"))


@pytest.fixture(scope="module")
def plan(host):
    from bobc.pipeline import compile_plan
    from bobc.targets import target_named

    tree, _ = host
    return compile_plan(tree / PLAN, target_named(TARGET)).plan


def expected_launches(plan, tree: Path, k: int) -> str:
    """What the line must say of submission k's launches, from the plan's model."""
    indices = plan.program.submissions[k].launches
    shown = []
    for index in indices[:SHOWN]:
        launch = plan.program.launches[index]
        place = f"{Path(os.path.relpath(os.path.abspath(launch.at.path), tree)).as_posix()}:{launch.at.line}:" \
                f"{launch.at.column}"
        grid = ", ".join(f"{n:#x}" for n in launch.grid)
        shown.append(f"launch[{index}] (kernel {launch.identity}, grid [{grid}], {place})")
    more = f" and {len(indices) - SHOWN} more" if len(indices) > SHOWN else ""
    return f"; its launches: {', '.join(shown)}{more}; `bobc dump ./h` lists submission[{k}]'s launches"


def test_the_fault_line_names_each_submissions_launches(host, plan, runtime_build, tmp_path):
    tree, executable = host
    built = make_runtime(runtime_build, f"{runtime_build}/libbobcrt.a")
    assert built.returncode == 0, built.stderr
    (tmp_path / "driver.c").write_text(DRIVER)
    subprocess.run(["gcc", "-std=c11", "-D_DEFAULT_SOURCE", f"-I{RUNTIME}", f"-I{executable.parent}",
                    str(tmp_path / "driver.c"), "-o", str(tmp_path / "driver"), str(runtime_build / "libbobcrt.a"),
                    "-lm"], check=True)
    lines = subprocess.run([str(tmp_path / "driver")], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert len(lines) == len(plan.program.submissions)
    for k, line in enumerate(lines):
        assert line.endswith(expected_launches(plan, tree, k)), (k, line)
        assert "LinReg/Build/NativeHost.bob:" in line and str(tree) not in line, line


def test_the_table_says_what_bobc_dump_says_of_the_images(host):
    """host.plan.launches[L] (the table) against launch[L].kernel and .grid (the manifest, the QMD),
    host.plan.submissions[K].launches against submission[K].launches (the manifest)."""
    _, executable = host
    dumped = bobc("dump", executable, "--no-code", "--json", cwd=executable.parent)
    assert dumped.returncode == 0, dumped.stderr
    facts = {line["key"]: line["value"] for line in json.loads(dumped.stdout)}
    count = sum(1 for key in facts if key.startswith("launch[") and key.endswith("].kernel"))
    assert count and sum(1 for key in facts if key.startswith("host.plan.launches[") and key.endswith("].kernel")) == count
    for index in range(count):
        assert facts[f"host.plan.launches[{index}].kernel"] == facts[f"launch[{index}].kernel"]
        assert [facts[f"host.plan.launches[{index}].grid_{axis}"] for axis in "xyz"] == facts[f"launch[{index}].grid"]
    k = 0
    while f"submission[{k}].launches" in facts:
        listed = facts[f"submission[{k}].launches"]
        assert [facts[f"host.plan.submissions[{k}].launches[{i}]"] for i in range(len(listed))] == listed
        assert f"host.plan.submissions[{k}].launches[{len(listed)}]" not in facts
        k += 1
    assert k == facts["host.plan.submission_count"]


def test_a_copy_of_the_plan_elsewhere_builds_the_same_bytes(host, tmp_path):
    """The table names where the plan wrote each launch relative to the plan's root, never this
    machine's folders: the same plan in another folder builds a byte-identical host."""
    _, first = host
    _, second = build(tmp_path / "elsewhere")
    assert first.read_bytes() == second.read_bytes()
