"""A plan's kernels open with their target's launch prologue (bobc.targets Target.launch_prologue):
on sm_90 ACQBULK (PTX griddepcontrol.wait), which holds a grid started before its parent's has
fully ended until the parent's writes are visible (docs/launch-order.md); on sm_86 nothing.
Checked by nvdisasm, against the kernel as written."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.kernel_cache import assemble_kernel as plan_kernel
from bobc.sass import assemble_kernel
from bobc.sass.oracle import disassemble
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]
KERNELS = [REPO / "tests/native/kernels/native-mask.sass",
           REPO / "examples/coppelius/Realization/Nvidia/SM86/coppelius-attention-forward.sass"]


def _texts(code: bytes, target) -> list[str]:
    done = disassemble(code, target.nvdisasm_arch)
    assert done.errors == []
    return [line.text for line in done.lines]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda p: p.stem)
def test_a_launched_sm90_kernel_opens_with_acqbulk_and_is_otherwise_the_kernel_as_written(kernel):
    written = assemble_kernel(kernel, SM90)
    launched = assemble_kernel(kernel, SM90, launched=True)
    assert len(launched.code) == len(written.code) + 16
    texts = _texts(launched.code, SM90)
    assert texts[0] == "ACQBULK"
    assert "ACQBULK" not in _texts(written.code, SM90)
    # every branch still lands on the instruction it named (nvdisasm prints absolute targets)
    shifted = [t for t in texts[1:] if "BRA" not in t]
    assert shifted == [t for t in _texts(written.code, SM90) if "BRA" not in t]
    assert launched.registers == written.registers
    assert plan_kernel(kernel, SM90).code == launched.code      # what a plan's build assembles


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda p: p.stem)
def test_sm86_has_no_launch_prologue(kernel):
    assert SM86.launch_prologue == ()
    assert assemble_kernel(kernel, SM86, launched=True).code == assemble_kernel(kernel, SM86).code


def test_branch_targets_move_with_the_prologue():
    """A backward branch's target is an address: with the prologue before it, it is 16 bytes on."""
    kernel = REPO / "examples/coppelius/Realization/Nvidia/SM86/coppelius-attention-forward.sass"
    written = [t for t in _texts(assemble_kernel(kernel, SM90).code, SM90) if "BRA" in t]
    launched = [t for t in _texts(assemble_kernel(kernel, SM90, launched=True).code, SM90) if "BRA" in t]
    assert written and len(written) == len(launched)
    for before, after in zip(written, launched):
        target_before, target_after = (int(t.rsplit("0x", 1)[1].rstrip(" );`"), 16) for t in (before, after))
        assert target_after == target_before + 16


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
@pytest.mark.parametrize("bank", [0x1, 0x5])
def test_a_launched_kernel_reading_another_constant_bank_is_refused_where_it_reads(tmp_path, target, bank):
    """A plan's QMD binds bank 0 to the launch's words and, on sm_90, slot 5 to the next launch's
    bank 0 (its prefetch): c[0x5] would read another launch's words.  `bobc asm` (not launched)
    still assembles the instruction as written."""
    source = tmp_path / "k.sass"
    source.write_text(f".kernel k\nMOV R2, c[0x0][param+0x0]\nMOV R1, c[{bank:#x}][0x10]\nEXIT\n")
    with pytest.raises(BobcError) as refused:
        assemble_kernel(source, target, launched=True)
    rendered = refused.value.render()
    assert f"{source}:3:1: error: MOV reads constant bank {bank:#x}" in rendered
    assemble_kernel(source, target)
