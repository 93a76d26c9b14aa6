"""docs/simulator.md, "Limits": the "Refused by name" list names what the simulator refuses, and
no form it runs (probe s43 docs12 finding 1).

The list had gone stale as forms were modelled: it still said CALL / RET were refused (ptxas's
CALL.REL.NOINC and RET.REL.NODEC run since probe s42 ptxcover), that packed-half atomics were
refused (ADD.F16x2.RN / .BF16x2.RN run since probe s41 f16x2atoms,
tests/sass/test_sim_atomics_f16x2_s41.py), and that FFMA with a directed rounding was refused (it
runs, rounded once, since probe s42 ptxcover).  DADD / DMUL / DFMA with a directed rounding run
too since probe s43 f64div; their expected results are worked by hand from the exact value.

The oracle is the simulator's own behaviour on each form, run here (a form that runs must not be
listed as refused; a refused one must be listed), and the page's own "What the executor
implements", which lists the forms that run.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bobc.nvtools import ptxas
from bobc.sim.faults import Unmodeled
from bobc.sim.kernel import run_kernel

REPO = Path(__file__).resolve().parents[2]


def refused_bullet() -> str:
    """The "Refused by name" bullet of simulator.md's "Limits" section, its lines joined."""
    text = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")
    section = text.split("\n## Limits", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"\n- Refused by name.*?(?=\n- |\Z)", section, re.S)
    assert found, "docs/simulator.md, \"Limits\": no \"Refused by name\" bullet"
    return " ".join(found.group(0).split())


def implemented() -> str:
    """docs/simulator.md's "What the executor implements" section, its lines joined."""
    text = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")
    return " ".join(text.split("\n## What the executor implements", 1)[1].split("\n## ", 1)[0].split())


def _run(body: str, arch: str):
    run_kernel(f".kernel t\n.registers 16\n{body}", arch, grid=(1, 1, 1), block=(32, 1, 1), params=[],
               buffers={}, check_hazards=False)


# forms that run: the bullet must not list them as refused (the words it used to)
RUNS = [
    ("MOV R4, 0x30\nMOV R5, RZ\nCALL.REL.NOINC fn\nEXIT\nfn:\nRET.REL.NODEC R4, 0x0\n", "CALL / RET,"),
    ("MOV R0, 0x3f800000\nFFMA.RZ R0, R0, R0, R0\nEXIT\n", "FADD / FFMA"),
    ("MOV R0, 0x3f800000\nFFMA.RM R0, R0, R0, R0\nEXIT\n", "FADD / FFMA"),
]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("body, stale", RUNS, ids=["call-ret-noinc", "ffma-rz", "ffma-rm"])
def test_a_form_that_runs_is_not_listed_as_refused(arch, body, stale):
    _run(body, arch)
    assert stale not in refused_bullet()


def test_packed_half_atomics_are_not_listed_as_refused():
    """They run: tests/sass/test_sim_atomics_f16x2_s41.py holds them to the PTX ISA."""
    bullet = refused_bullet()
    assert "packed-half atomics" not in bullet.replace("the packed-half ADD.F16x2.RN", "")
    assert "ADD.F16x2.RN / .BF16x2.RN run" in bullet


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_fadd_with_a_directed_rounding_runs_and_is_not_listed(arch):
    """FADD.RZ / .RM / .RP run since probe s44 simops (tests/sass/test_sim_roundings_s44.py holds them to the exact
    sums); the bullet listed them as refused until then."""
    _run("MOV R0, 0x3f800000\nFADD.RZ R0, R0, R0\nFADD.RM R0, R0, R0\nFADD.RP R0, R0, R0\nEXIT\n", arch)
    assert "FADD with a directed rounding" not in refused_bullet()


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_lop3_with_a_predicate_input_is_refused_and_listed(arch):
    with pytest.raises(Unmodeled, match=r"LOP3\.LUT with a predicate input is not modeled"):
        _run("MOV R0, 0x3f800000\nLOP3.LUT P0, R2, R0, R0, RZ, 0xc0, PT\nEXIT\n", arch)
    assert "LOP3 with a predicate input" in refused_bullet()


PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .u64 %rd<3>; .reg .f64 %fd<4>;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
 ld.global.f64 %fd1, [%rd2]; ld.global.f64 %fd2, [%rd2+8];
 {op}.{mode}.f64 %fd3, %fd1, %fd2{third}; st.global.f64 [%rd2+16], %fd3; ret; }}
"""


# (op, mode, x, y, the correctly rounded result by hand: the exact value, then the mode's direction)
DIRECTED = [
    ("add", "rz", 1.0, 2.0 ** -60, 1.0),                                  # 1 + 2^-60 truncated
    ("mul", "rm", 1 + 2.0 ** -52, 1 + 2.0 ** -52, 1 + 2.0 ** -51),        # 1 + 2^-51 + 2^-104 down
    ("fma", "rp", 1.0, 2.0 ** -60, 1 + 2.0 ** -52),                       # 1 * 2^-60 + 1 up
]


@pytest.mark.parametrize("op, mode, x, y, expected", DIRECTED, ids=["add-rz", "mul-rm", "fma-rp"])
def test_binary64_with_a_directed_rounding_runs_and_is_not_listed(tmp_path, op, mode, x, y, expected):
    """ptxas writes DADD.RZ / DMUL.RM / DFMA.RP for PTX add.rz / mul.rm / fma.rp .f64; the simulator
    models them (probe s43 f64div: div.rn.f64's slow path uses DMUL.RP), rounded once in the mode."""
    source = tmp_path / "k.ptx"
    source.write_text(PTX.format(arch="sm_86", op=op, mode=mode, third=", %fd1" if op == "fma" else ""))
    subprocess.run([str(ptxas()), "-arch=sm_86", "-o", str(tmp_path / "k.cubin"), str(source)], check=True)
    out = run_kernel((tmp_path / "k.cubin").read_bytes(), "sm_86", grid=(1, 1, 1), block=(1, 1, 1),
                     params=["a"], buffers={"a": np.array([x, y, 0.0])})["a"]
    assert out[2] == expected
    name = {"add": "DADD", "mul": "DMUL", "fma": "DFMA"}[op]
    assert not re.search(rf"\b{name}\b", refused_bullet()), f"the bullet lists {name}, which runs"
    assert re.search(rf"\b{name}\b", implemented()), f"\"What the executor implements\" should name {name}"
