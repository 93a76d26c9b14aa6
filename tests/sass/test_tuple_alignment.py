"""A TMA copy's uniform operand block must start at a multiple of its width rounded up to a power
of two (tables.layouts.ALIGNED_UNIFORM_TUPLES): the encoding takes any register, so nvdisasm decodes
UTMALDG.3D [UR44] happily, but the H200 raised an illegal instruction for it; ptxas's blocks are
2-D at multiples of 4 and 3-D at multiples of 8."""
import pytest

from bobc.cli import main

KERNEL = "[B------:R3:W-:-:S10] UTMALDG.{dims} [UR{block}], [UR26] ;\nEXIT ;\n"


@pytest.mark.parametrize("dims,block,width,align", [("3D", 44, 5, 8), ("3D", 12, 5, 8), ("2D", 6, 4, 4)])
def test_a_misaligned_copy_block_is_refused(tmp_path, capsys, dims, block, width, align):
    source = tmp_path / "k.sass"
    source.write_text(KERNEL.format(dims=dims, block=block))
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:1:" in err
    assert f"operand block UR{block}..UR{block + width - 1} ({width} registers) must start at a multiple of {align}" in err


@pytest.mark.parametrize("dims,block", [("3D", 48), ("3D", 8), ("2D", 12), ("2D", 4)])
def test_an_aligned_copy_block_assembles(tmp_path, capsys, dims, block):
    source = tmp_path / "k.sass"
    source.write_text(KERNEL.format(dims=dims, block=block))
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 0
