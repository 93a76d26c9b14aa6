"""`bobc disasm` of a stream with an undecodable word (probe s33 asmfuzz finding 5): the decodable
instructions on stdout, the bad word (address and bits) on stderr, exit 1."""
from __future__ import annotations

from bobc.cli import main
from bobc.sass import assemble


def test_disasm_lists_good_words_and_names_the_bad_one_on_stderr(needs_nvdisasm, tmp_path, capsys):
    code = bytearray(assemble("    S2R R0, SR_TID.X\n    ATOMG.E.EXCH.STRONG.GPU PT, R3, [R4.64+0x100], R2\n"
                              "    IADD3 R2, R0, 0x1, RZ\n    EXIT\n", "sm_86").code)
    code[0x13] = 0xFF           # the ATOMG's base register -> RZ: no sm_86 instruction (nvdisasm)
    path = tmp_path / "k.bin"
    path.write_bytes(bytes(code))
    assert main(["disasm", "--arch", "sm_86", str(path)]) == 1
    out, err = capsys.readouterr()
    assert [line.split("] ", 1)[1] for line in out.splitlines()] == [
        "S2R R0, SR_TID.X ;", "IADD3 R2, R0, 0x1, RZ ;", "EXIT ;"]
    lo = int.from_bytes(code[0x10:0x18], "little")
    assert f"0x0010: undecodable word {lo:#018x}" in err and "nvdisasm" not in out
