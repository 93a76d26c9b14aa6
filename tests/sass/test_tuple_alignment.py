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


# Vector register tuples (probe-sass finding 9): a pair starts at an even register, a block of 4 or
# more at a multiple of 4 -- as every tuple in ptxas's corpus of both targets does (checked below).
@pytest.mark.parametrize("text,block", [
    ("LDG.E.64 R3, [R2.64]", "R3..R4 (2 registers) must start at a multiple of 2"),
    ("LDG.E.128 R4, [R3.64]", "R3..R4 (2 registers) must start at a multiple of 2"),    # the address pair
    ("LDG.E.128 R6, [R2.64]", "R6..R9 (4 registers) must start at a multiple of 4"),
    ("STG.E.64 [R2.64], R5", "R5..R6 (2 registers) must start at a multiple of 2"),
    ("IMAD.WIDE R3, R0, R1, R4", "R3..R4 (2 registers) must start at a multiple of 2"),
    ("DADD R2, R4, R7", "R7..R8 (2 registers) must start at a multiple of 2"),
    ("HMMA.16816.F32 R4, R10, R12, R4", "R10..R13 (4 registers) must start at a multiple of 4"),
])
def test_a_misaligned_vector_tuple_is_refused(tmp_path, capsys, text, block):
    source = tmp_path / "k.sass"
    source.write_text(f"NOP\n{text}\nEXIT\n")
    for arch in ("sm_86", "sm_90"):
        assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch]) == 1
        err = capsys.readouterr().err
        assert f"{source}:2:1:" in err and block in err and "Traceback" not in err


def test_ptxas_tuples_are_all_aligned():
    """The rule is ptxas's: no vector tuple in the corpus of either target breaks it."""
    from bobc.sass.encoder import EncodeProblem, Encoder
    from bobc.sass.learn import read_corpus, streams
    from bobc.sass.syntax import Label, parse_instruction

    tuples = 0
    for arch in ("sm_86", "sm_90"):
        for rows in streams(read_corpus(arch)).values():
            encoder = Encoder(arch)
            for row in rows:
                inst = parse_instruction(row.text)
                inst.operands = [Label(o.name, 0) if isinstance(o, Label) and o.address is None else o
                                 for o in inst.operands]
                try:
                    placed = encoder.place_operands(encoder.normalize(inst), row.offset)
                except (EncodeProblem, KeyError):
                    continue
                for bank, first, count in placed.reads + placed.writes:
                    if bank == "R" and count > 1 and first != 255:
                        tuples += 1
                        assert first % min(1 << (count - 1).bit_length(), 4) == 0, row.text
    assert tuples > 3000
