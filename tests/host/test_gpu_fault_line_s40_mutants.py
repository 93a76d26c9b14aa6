"""runtime_c's Xid table and GPU fault line held to NVIDIA's catalogue and to their own bounds
(probe s40 mutants5).

`make -C runtime_c test` checks Xid 13 and 31 only, so any other row of nv_shim.c's table could
carry a wrong number and pass; and it never gives bobc_gpu_fault_line a submission outside the
plan's (its `submission < submission_count` guard, which keeps semaphore_va[] in bounds) or no
host path.  The expected Xids are NVIDIA's Xid catalogue's ("XID Errors", NVIDIA GPU deployment
and management documentation): 8 "GPU stopped processing" (timeout), 13 "Graphics Engine
Exception", 31 "GPU memory page fault", 32 "Invalid or corrupted push buffer stream", 43 "GPU
stopped processing", 45 "Preemptive cleanup, due to previous errors", 69 "Graphics Engine class
error", 109 "Context Switch Timeout Error".
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import make_runtime

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"

DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include "nv_shim.h"
#include "plan_host.h"

int main(void)
{
    for (unsigned xid = 0; xid < 200; xid++)
        printf("xid %u\t%s\t%s\n", xid, rt_xid_name(xid), rt_xid_advice(xid));
    static const uint64_t semaphores[3] = { 0x1000000000ull, 0x1000000010ull, 0x1000000020ull };
    bobc_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.submission_count = 3;
    plan.semaphore_va = semaphores;
    plan.step_count = 4;
    char line[1024];
    bobc_gpu_fault_line(&plan, "h", 1, "Submit", 0, 3, 3, "E", line, sizeof line);
    printf("line|%s\n", line);
    bobc_gpu_fault_line(&plan, "h", 1, "Submit", 0, 3, 2, "E", line, sizeof line);
    printf("line|%s\n", line);
    bobc_gpu_fault_line(&plan, NULL, 2, "Reissue", 1, 2, 1, "E", line, sizeof line);
    printf("line|%s\n", line);
    return 0;
}
"""

CATALOGUE = {8: "gpu stopped processing", 13: "graphics engine exception", 31: "gpu memory page fault",
             32: "invalid or corrupted push buffer stream", 43: "gpu stopped processing",
             45: "preemptive cleanup", 69: "graphics engine class error", 109: "context switch timeout"}


@pytest.fixture(scope="module")
def printed(runtime_build, tmp_path_factory):
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("needs gcc and make")
    built = make_runtime(runtime_build, f"{runtime_build}/libbobcrt.a")
    assert built.returncode == 0, built.stderr
    folder = tmp_path_factory.mktemp("fault-line")
    (folder / "driver.c").write_text(DRIVER)
    subprocess.run(["gcc", "-std=c11", "-D_DEFAULT_SOURCE", f"-I{RUNTIME}", str(folder / "driver.c"), "-o",
                    str(folder / "driver"), str(runtime_build / "libbobcrt.a"), "-lm"], check=True)
    return subprocess.run([str(folder / "driver")], capture_output=True, text=True, check=True).stdout.splitlines()


def test_every_catalogued_xid_has_its_name_and_no_other_number_does(printed):
    names = {}
    advice = {}
    for row in printed:
        if row.startswith("xid "):
            number, name, said = row[4:].split("\t")
            names[int(number)], advice[int(number)] = name, said
    for xid, name in names.items():
        if xid in CATALOGUE:
            assert CATALOGUE[xid] in name.lower(), (xid, name)
            assert "look the Xid up" not in advice[xid], (xid, advice[xid])
        elif xid:
            assert name == "unlisted RC error", (xid, name)
            assert "look the Xid up in NVIDIA's Xid catalogue" in advice[xid], (xid, advice[xid])
    assert advice[0].startswith("no Xid, yet the work did not finish")


def test_a_submission_outside_the_plan_is_not_looked_up(printed):
    """Submission 3 of a plan of 3 (0..2) has no semaphore: the line names the step only, never
    semaphore_va[3] (past the array)."""
    lines = [row[5:] for row in printed if row.startswith("line|")]
    assert lines[0] == "step 1 of 4 (Submit of submissions 0..2): E"
    assert lines[1] == ("step 1 of 4 (Submit of submissions 0..2): submission 2 (semaphore at GPU VA 0x1000000020) "
                        "did not finish: E; `bobc dump h` lists submission[2]'s launches")


def test_a_host_without_a_path_is_called_host(printed):
    lines = [row[5:] for row in printed if row.startswith("line|")]
    assert lines[2] == ("step 2 of 4 (Reissue of submission 1): submission 1 (semaphore at GPU VA 0x1000000010) "
                        "did not finish: E; `bobc dump HOST` lists submission[1]'s launches")
