"""nvdisasm's listings assemble as printed, whole kernels included, on both targets.

tests/sass/data/listings/*.lst.gz are `nvdisasm -hex` of the cubins ptxas makes of
tools/ptx_corpus (-O3; build_corpus.py --listings regenerates them): every section,
labels (`.L_x_12:`), targets by label (`` BRA `(.L_x_3) ``), annotations
(`(*"SpillRefill"*)`), `.reuse`, lane selections, predicates.  Each kernel's .text is
assembled from the listing text alone (control codes from the printed words, which is
the only place nvdisasm shows them) and must equal the words nvdisasm printed.
"""
from __future__ import annotations

import gzip
import re

import pytest

from bobc.sass.assembler import assemble_listing
from bobc.sass.learn import CORPUS, only_sm90

LISTINGS = sorted((CORPUS / "listings").glob("*.lst.gz"))


def _printed_words(text: str, kernel: str) -> bytes:
    """The words nvdisasm printed in .text.<kernel>: read straight from the listing."""
    section = re.split(r"\n\s*\.section\s", text.split(f".section\t.text.{kernel},")[1])[0]
    words = [int(w, 16) for w in re.findall(r"/\* (0x[0-9a-f]{16}) \*/", section)]
    return b"".join(w.to_bytes(8, "little") for w in words)


def test_listings_are_there():
    assert {p.name.split(".")[1] for p in LISTINGS} == {"sm_86", "sm_90"}
    ptx = sorted((CORPUS.parents[2] / "tools" / "ptx_corpus").glob("*.ptx"))
    # a file marked sm_90-only (learn.ONLY_SM90) has no sm_86 listing
    assert sorted(p.name for p in LISTINGS) == sorted(f"{x.stem}.{a}.lst.gz" for x in ptx for a in ("sm_86", "sm_90")
                                                      if a == "sm_90" or not only_sm90(x.name))


@pytest.mark.parametrize("path", LISTINGS, ids=[p.name for p in LISTINGS])
def test_listing_assembles_as_printed(path, capsys):
    arch = path.name.split(".")[1]
    text = gzip.decompress(path.read_bytes()).decode()
    kernels = assemble_listing(text, arch, source_name=path.name)
    assert kernels
    for name, assembled in kernels.items():
        assert assembled.code == _printed_words(text, name), f"{path.name}: {name}"
    with capsys.disabled():
        print(f"\n{path.name}: {len(kernels)} kernels, "
              f"{sum(len(a.instructions) for a in kernels.values())} instructions, all identical")


def test_listing_syntax_is_read():
    """The pieces of nvdisasm's syntax the corpus holds are all in these listings."""
    text = "".join(gzip.decompress(p.read_bytes()).decode() for p in LISTINGS)
    for piece in ('(*"SpillRefill"*)', "`(.L_x_", ".reuse", ".H0_H0", "@!P", "desc[UR", "CALL.REL.NOINC `(",
                  "RET.REL.NODEC R", "BSSY B", "HMMA.16816.F32", "LDGSTS", "DEPBAR.LE SB0", "DFMA", "LDL",
                  "STL", "ATOMS", "ULEA", "SR_CgaCtaId", "LDSM", "F2FP", "HFMA2", "BAR.RED.POPC",
                  "HGMMA.64x128x16.F32", "gdesc[UR", ".tnspB", "gsb0", "UTMALDG.2D [UR", "SYNCS.PHASECHK",
                  "USETMAXREG", "BRA.U.ANY"):
        assert piece in text, piece


def test_the_gpu_tests_ptxas_cubin_is_the_listings_cubin():
    """tests/gpu/test_corpus_kernels.py runs ptxas's cubin of corpus3 beside ours; that cubin is
    the one the committed listing was printed from (nvdisasm -hex of it gives the listing)."""
    import subprocess

    from bobc.nvtools import find_tool

    cubin = CORPUS.parents[1] / "gpu" / "data" / "corpus3.sm_90.cubin"
    printed = subprocess.run([find_tool("nvdisasm"), "-hex", str(cubin)], check=True,
                             capture_output=True, text=True).stdout
    listing = gzip.decompress((CORPUS / "listings" / "corpus3.sm_90.lst.gz").read_bytes()).decode()
    assert printed == listing
