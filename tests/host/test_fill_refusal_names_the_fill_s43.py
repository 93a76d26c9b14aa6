"""Probe s43 nativemsgs: a word32 host fill whose value is no natural below 2^32 only on a resumed
run (its step is the input checkpoint's step + the fill's step; bobc check certifies a fresh run's)
stopped the C host, `bobc run --reference` and `bobc sim` with `a fill's value -19 at step 20 is no
natural below 2^32`: no fill, no hint that the checkpoint's step is why, nothing to do.  The
ScalarFill step now says which fill (the plan's NvidiaPlanHostFills, 0-based, as `bobc dump` lists
host.plan.fills[I]), the sum its step is, and what to do -- in the C host's words
(runtime_c/plan_fill.c bobc_fill_step_bytes, compiled here) and the Python hosts' alike
(bobc.plan.host.fill_refusal).

Expected values by hand: 1 - t at t = 20 + 0 is -19; 2^32 at any step is 4294967296."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bobc.sim.faults import HostStepFault
from bobc.sim.host_adapter import HostFill
from bobc.sim.invocation import SimulatedHost

REPO = Path(__file__).resolve().parents[2]
OPS = {"constant": 1, "step": 2, "subtract": 4}

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "plan_fill.h"
/* argv: fill index, input step, fill step, then op and value per term (word32) */
int main(int argc, char **argv)
{
    bobc_scalar_term terms[16];
    uint32_t n = 0;
    for (int i = 4; i + 1 < argc; i += 2, n++) {
        terms[n].op = atoi(argv[i]);
        terms[n].value = strtod(argv[i + 1], NULL);
    }
    bobc_fill f = { 0, strtoull(argv[3], NULL, 10), BOBC_ENCODE_WORD32, n, terms };
    uint8_t out[4];
    char err[512] = "";
    if (bobc_fill_step_bytes(&f, (uint32_t)atoi(argv[1]), strtoull(argv[2], NULL, 10), out, err, sizeof err))
        printf("%s", err);
    else
        printf("accepted");
    return 0;
}
"""

ONE_MINUS_T = [("constant", 1.0), ("step", 0.0), ("subtract", 0.0)]
RESUMED = ("fill 3: a fill's value -19 at step 20 is no natural below 2^32 (the input checkpoint's step 20 + the "
           "fill's step 0); resume from a checkpoint of an earlier step, or make fill 3's scalar a natural below "
           "2^32 at every step a run reaches (`bobc dump` of the host shows host.plan.fills[3], the launch word it "
           "writes)")
FRESH = ("fill 0: a fill's value 4294967296 at step 2 is no natural below 2^32 (a run from step 0, the fill's "
         "step 2); make fill 0's scalar a natural below 2^32 at every step a run reaches (`bobc dump` of the "
         "host shows host.plan.fills[0], the launch word it writes)")
# (fill index, input step, fill step, terms, the line by hand)
CASES = [
    (3, 20, 0, ONE_MINUS_T, RESUMED),
    (0, 0, 2, [("constant", 2.0 ** 32)], FRESH),
    (1, 0, 1, ONE_MINUS_T, "accepted"),
]


@pytest.fixture(scope="module")
def c_says(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fill-step")
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None
    (folder / "driver.c").write_text(DRIVER)
    exe = folder / "driver"
    made = subprocess.run([cc, "-std=c11", "-O1", "-I", str(REPO / "runtime_c"), str(folder / "driver.c"),
                           str(REPO / "runtime_c/plan_fill.c"), "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr

    def says(index, input_step, step, terms):
        args = [str(exe), str(index), str(input_step), str(step)]
        for op, value in terms:
            args += [str(OPS[op]), float(value).hex()]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return says


def simulator_says(index, input_step, step, terms):
    """bobc sim's ScalarFill step (SimulatedHost.step_scalar_fill) on a host holding only this fill."""
    fills = [HostFill(0x1000, step, "word32", tuple(terms), "launch 0 (k) + 0")] * (index + 1)
    word = np.zeros(4, dtype=np.uint8)
    host = SimpleNamespace(plan=SimpleNamespace(fills=fills), step=input_step, at=lambda va, n, what: word)
    try:
        SimulatedHost.step_scalar_fill(host, {"fill": index})
    except HostStepFault as refused:
        return refused.message
    return "accepted"


@pytest.mark.parametrize("index, input_step, step, terms, expected", CASES)
def test_the_c_host_names_the_fill_and_the_checkpoints_step(c_says, index, input_step, step, terms, expected):
    assert c_says(index, input_step, step, terms) == expected


@pytest.mark.parametrize("index, input_step, step, terms, expected", CASES)
def test_the_simulator_says_what_the_c_host_says(index, input_step, step, terms, expected):
    assert simulator_says(index, input_step, step, terms) == expected
