"""A region that gives its blocks fewer bytes of shared memory than its kernel's source declares
(`.shared BYTES`) is refused by the certifier (probe s41 newuser5, finding 1).

A user's reduction through shared memory (`.shared 4096`, STS/LDS from 0x800) in a plan whose region
helper gives shared bytes `zero` (as LinReg's lrRegion writes it) was certified by `bobc check` and
built; `bobc sim` then stopped at the STS, "outside the block's 1024 bytes of shared memory", naming
neither the declaration nor the region, and on a GPU the block would fault.  The region's shared bytes
are the launches' QMD SHARED_MEMORY_SIZE, the whole of a block's shared memory
(docs/kernel-contracts.md), so a region below the source's own declaration gives the code less than
it says it uses: the expected verdict follows from the two numbers alone.  Here LinReg's linreg-sgd
declares `.shared 4096` (its code touches none: the certifier reads the declaration, not the code).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DECLARED = 4096


def _plan(tmp_path: Path, region_shared: str) -> Path:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    source = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    source.write_text(source.read_text().replace(".registers 16\n", f".registers 16\n.shared {DECLARED}\n"))
    module = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = module.read_text()
    old = "NvidiaDeviceRegionValue identity material registers blockX zero"
    assert old in text
    module.write_text(text.replace(old, f"NvidiaDeviceRegionValue identity material registers blockX {region_shared}"))
    return module


def _check(tmp_path: Path, target: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob", "--target", target],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})


def test_a_region_below_its_sources_shared_declaration_is_refused(tmp_path):
    module = _plan(tmp_path, "zero")
    for target in ("sm_86", "sm_90"):
        result = _check(tmp_path, target)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        # located at the region: the line of lrRegions that makes linreg-sgd's
        line = next(k for k, row in enumerate(module.read_text().splitlines(), 1)
                    if '(lrRegion b"linreg-sgd"' in row)
        assert re.search(rf"NativeHost\.bob:{line}:\d+: region linreg-sgd gives its blocks 0 bytes of shared memory, "
                         rf"but linreg-sgd\.sass declares \.shared {DECLARED} \(line \d+\)", result.stderr), result.stderr
        assert f"hint: give the region at least {DECLARED} bytes of shared memory" in result.stderr, result.stderr


def test_a_region_that_gives_what_the_source_declares_certifies(tmp_path):
    _plan(tmp_path, str(DECLARED))
    for target in ("sm_86", "sm_90"):
        result = _check(tmp_path, target)
        assert result.returncode == 0, result.stderr
        assert "certified" in result.stdout


# -- mutants6: the comparison's edge, the line number, and `.shared` as the assembler reads it
# (bobc.sass.assembler: int(value, 0), the line's leading space stripped) -- mutants of
# _shared_findings that the two plans above let pass.  Called directly on a region-like object.

import pytest                                                       # noqa: E402
from types import SimpleNamespace                                   # noqa: E402

from bobc.certify import _shared_findings                           # noqa: E402
from bobc.targets import SM86                                       # noqa: E402


def _findings(tmp_path, shared_line: str, given: int):
    source = tmp_path / "k.sass"
    source.write_text(f".kernel k\n.registers 16\n{shared_line}\n    EXIT\n")
    return _shared_findings(SimpleNamespace(identity=b"k", shared_bytes=given, at=None), source, SM86)


@pytest.mark.parametrize("given, refused", [(4095, True), (4096, False), (4097, False)])
def test_a_region_one_byte_short_is_refused_and_one_exact_is_not(tmp_path, given, refused):
    found = _findings(tmp_path, ".shared 4096", given)
    assert bool(found) == refused
    if refused:
        assert "gives its blocks 4095 bytes of shared memory, but k.sass declares .shared 4096 (line 3)" in found[0].message


@pytest.mark.parametrize("line", [".shared 0x1000", "  .shared 0x1000", "\t.shared 4096 // a block's"])
def test_shared_read_as_the_assembler_reads_it(tmp_path, line):
    # 0x1000 is 4096 (the assembler's int(value, 0)); an indented line is still the directive
    assert _findings(tmp_path, line, 4096) == []
    found = _findings(tmp_path, line, 4095)
    assert len(found) == 1 and "(line 3)" in found[0].message
