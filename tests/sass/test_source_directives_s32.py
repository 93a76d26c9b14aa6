"""A kernel source's `.kernel`, `.registers` and `.shared` lines (compiler/bobc/sass/README.md):
each given once, `.kernel` with one name, `.shared` at most what a block of the target may use.
Before, `.kernel` with no name or with two words, a second `.registers` (the last won) and
`.shared 99999999999` were all taken without a word (probe s32 contracts finding 9)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.kernel_search import SourceError, kernel_name
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]


def _assemble(tmp_path, head: str, target=SM86):
    path = tmp_path / "probe.sass"
    path.write_text(f"{head}\n    EXIT\n")
    return assemble_kernel(path, target)


@pytest.mark.parametrize("head, line, column, says", [
    (".kernel", 1, 1, ".kernel needs the kernel's name (.kernel scale_rows)"),
    (".kernel a b", 1, 11, ".kernel takes one name, found 2 words ('a b')"),
    ("  .kernel   probe   extra   // a remark", 1, 21, ".kernel takes one name, found 2 words"),
    (".kernel a\n.kernel b", 2, 1, ".kernel is given twice (first at line 1): a source declares it once"),
    (".registers 16\n// then\n.registers 24", 3, 1, ".registers is given twice (first at line 1)"),
    (".shared 0\n.shared 16", 2, 1, ".shared is given twice (first at line 1)"),
    (".shared 99999999999", 1, 9, ".shared 99999999999: a block on sm_86 may use at most 101376 bytes of shared "
                                  "memory (the SM's 100 KiB carve-out less the 1024 bytes the system reserves per block)"),
    (".shared 101377", 1, 9, ".shared 101377: a block on sm_86 may use at most 101376 bytes"),
])
def test_a_directive_that_would_be_taken_silently_is_refused_at_its_place(tmp_path, head, line, column, says):
    with pytest.raises(BobcError) as caught:
        _assemble(tmp_path, head)
    assert caught.value.message.startswith(says), caught.value.message
    span = caught.value.span
    assert (span.path, span.line, span.column) == (str(tmp_path / "probe.sass"), line, column)


@pytest.mark.parametrize("target, most", [(SM86, 101376), (SM90, 0x400 + 232448)])
def test_shared_up_to_the_targets_bound_is_taken(tmp_path, target, most):
    """A block on sm_86 may use 99 KiB, on sm_90 227 KiB (CUDA's opt-in maximum per block), which on
    sm_90 a `.shared` declares after the system's first 0x400 bytes (s42)."""
    assert _assemble(tmp_path, f".kernel probe\n.shared {most}", target).shared_bytes == most
    with pytest.raises(BobcError, match=rf"may use at most {most} bytes"):
        _assemble(tmp_path, f".shared {most + 1}", target)


def test_bobc_asm_refuses_an_impossible_shared_size(tmp_path):
    source = tmp_path / "y.sass"
    source.write_text(".shared 99999999999\nEXIT\n")
    result = subprocess.run([sys.executable, "-m", "bobc", "asm", str(source), "--arch", "sm_86", "-o",
                             str(tmp_path / "y.bin")], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"{source}:1:9: error: .shared 99999999999: a block on sm_86 may use at most 101376 bytes" in result.stderr
    assert not (tmp_path / "y.bin").exists()


@pytest.mark.parametrize("head, line, says", [
    (".kernel a b", 2, ".kernel takes one name, found 2 words ('a b')"),
    (".kernel", 2, ".kernel needs the kernel's name"),
    (".kernel a\n.kernel a", 3, ".kernel is given twice (first at line 2)"),
])
def test_the_kernel_search_reads_the_name_as_the_assembler_does(tmp_path, head, line, says):
    """A plan's SM86Program name is compared with the source's .kernel before the source is assembled
    (bobc.plan.intrinsics): that comparison refuses the same lines, at the line."""
    path = tmp_path / "probe.sass"
    path.write_text(f"// a kernel\n{head}\n    EXIT\n")
    with pytest.raises(SourceError) as caught:
        kernel_name(path, "probe")
    assert caught.value.message.startswith(says) and caught.value.span.line == line


def test_one_kernel_name_is_read(tmp_path):
    path = tmp_path / "probe.sass"
    path.write_text("  .kernel  probe_k   // its cubin symbol\n    EXIT\n")
    assert kernel_name(path, "probe") == "probe_k"
    assert _assemble(tmp_path, ".kernel probe_k // the symbol").kernel_name == "probe_k"
