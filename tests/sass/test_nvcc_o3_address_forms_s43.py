"""`bobc asm` of ordinary `nvcc -O3` output (session 43, helper asmgaps3; probe s43 newuser8 finding 2).

A new user's kernels (tests/sass/data/nvcc_o3/mlp_{grad,sgd,predict,packed}.cu: a two-layer MLP's gradient, SGD step
and prediction, 40 lines of CUDA C each; packed: the three over one parameter vector) compiled with nvcc 13.0 `-arch=sm_86|sm_90 -fmad=false -O3 -cubin` and
printed with `nvdisasm -hex` (the .lst.gz beside them) were refused before: `LEA.HI.X R7, R14, R3, RZ, 0x2, P5`
(64-bit address arithmetic whose high word takes the low word's carry, both targets), `ULEA UR5, UP0, UR4, UR6,
0x2` / `ULEA.HI.X ..., UP0` ("ULEA takes 4 operands, not 5": a count the layout places, said as a count error),
sm_86's `UIMAD` (refused as "an sm_90 opcode, not one of sm_86's", which is false: ptxas wrote it for sm_86 and
nvdisasm reads it there) and UIADD3 with carry-out predicates.  tools/ptx_corpus/address_forms.ptx now makes
ptxas emit them for both targets and the tables have learned them.

The oracle is NVIDIA's: each listing's own printed words (ptxas's cubin through nvdisasm), which the assembled
.text must equal bit for bit.
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from bobc.sass.assembler import assemble_listing

DATA = Path(__file__).parent / "data" / "nvcc_o3"
LISTINGS = sorted(DATA.glob("*.lst.gz"))
# the forms the brief and the probe name, as nvdisasm prints them, per target: each must occur in the listings
FORMS = {
    "sm_86": [r"LEA\.HI\.X R\d+, R\d+(\.reuse)?, R\d+, RZ, 0x2, P\d", r"UIMAD UR\d+, UR\d+, UR\d+, URZ",
              r"UIADD3 UR\d+, UP0, UR\d+, UR\d+, URZ", r"ULEA UR\d+, UP0, UR\d+, UR\d+, 0x2"],
    "sm_90": [r"LEA\.HI\.X R\d+, R\d+(\.reuse)?, R\d+, RZ, 0x2, P\d", r"ULEA UR\d+, UP0, UR\d+, UR\d+, 0x2",
              r"ULEA\.HI\.X UR\d+, UR\d+, UR\d+, URZ, 0x2, UP0"],
}


def _printed_words(text: str, kernel: str) -> bytes:
    """The words nvdisasm printed in .text.<kernel>: read straight from the listing."""
    section = re.split(r"\n\s*\.section\s", text.split(f".section\t.text.{kernel},")[1])[0]
    words = [int(w, 16) for w in re.findall(r"/\* (0x[0-9a-f]{16}) \*/", section)]
    return b"".join(w.to_bytes(8, "little") for w in words)


def test_the_listings_are_there():
    assert sorted(p.name for p in LISTINGS) == sorted(f"mlp_{k}.{a}.lst.gz" for k in ("grad", "sgd", "predict", "packed")
                                                      for a in ("sm_86", "sm_90"))


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_the_refused_forms_are_in_the_listings(arch):
    text = "".join(gzip.decompress(p.read_bytes()).decode() for p in LISTINGS if f".{arch}." in p.name)
    for form in FORMS[arch]:
        assert re.search(form, text), form


@pytest.mark.parametrize("path", LISTINGS, ids=[p.name for p in LISTINGS])
def test_nvcc_o3_listing_assembles_to_its_words(path):
    arch = path.name.split(".")[1]
    text = gzip.decompress(path.read_bytes()).decode()
    kernels = assemble_listing(text, arch, source_name=path.name)
    assert kernels
    for name, assembled in kernels.items():
        assert assembled.code == _printed_words(text, name), f"{path.name}: {name}"
