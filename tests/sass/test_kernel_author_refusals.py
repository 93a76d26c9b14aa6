"""What `bobc asm` tells a new kernel's author (probe s31 kernel): a misaligned LDC.64 / ULDC.64 is
refused by its width (finding 3); a kernel whose last instruction falls through, or that holds no
instruction, is refused (finding 5); an unknown form is told why -- a misspelt modifier, an operand
count no form takes, an opcode of the other target -- and only a form of a known opcode the tables
have not learned gets "relearn" (finding 7); --block-size and --parameter-bytes without --cubin are
refused, and `bobc disasm` says which target it decoded a raw stream for (finding 10)."""
import pytest

from bobc.cli import main

TARGETS = pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
RELEARN = "relearn (python -m bobc.sass.learn)"


def _asm(tmp_path, capsys, body: str, arch: str = "sm_86", *extra) -> tuple[int, str, str]:
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n" + body)
    code = main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch, *extra])
    out = capsys.readouterr()
    return code, out.err, str(source)


@TARGETS
@pytest.mark.parametrize("line,column,mnemonic,offset", [
    ("    LDC.64 R6, c[0x0][RZ+param+0xc]", 16, "LDC.64", "param+0xc"),      # at the constant
    ("  ULDC.64 UR4, c[0x0][param+0x4]", 16, "ULDC.64", "param+0x4"),
])
def test_an_8_byte_constant_read_at_an_offset_not_a_multiple_of_8_is_refused(tmp_path, capsys, arch, line,
                                                                              column, mnemonic, offset):
    code, err, source = _asm(tmp_path, capsys, f"    S2R R0, SR_TID.X\n{line}\n    EXIT\n", arch)
    assert code == 1
    assert f"{source}:3:{column}: error: {mnemonic} reads 8 bytes: its offset must be a multiple of 8 " \
           f"(c[0x0][{offset} = " in err


@TARGETS
def test_an_8_byte_constant_read_at_a_multiple_of_8_assembles(tmp_path, capsys, arch):
    code, err, _ = _asm(tmp_path, capsys, "    LDC.64 R6, c[0x0][RZ+param+0x8]\n    ULDC.64 UR4, c[0x0][param+0x10]\n"
                                          "    LDC R8, c[0x0][RZ+param+0x4]\n    EXIT\n", arch)
    assert code == 0, err


@pytest.mark.parametrize("body,line,why", [
    ("    S2R R0, SR_TID.X\n    STG.E [R2.64], R0\n", 3, "STG.E [R2.64], R0, is no EXIT or branch"),
    ("    S2R R0, SR_TID.X\n    @P0 EXIT\n", 3, "@P0 EXIT, is guarded (@P0)"),
    ("    S2R R0, SR_TID.X\n    EXIT\n    MOV R1, R0\n    NOP\n", 4, "MOV R1, R0, is no EXIT or branch"),
])
def test_a_kernel_whose_last_instruction_falls_through_is_refused(tmp_path, capsys, body, line, why):
    code, err, source = _asm(tmp_path, capsys, body)
    assert code == 1
    assert f"{source}:{line}:5: error: the kernel's last instruction, {why}: threads would run past the end " \
           f"of the code" in err
    assert "hint: end every path with EXIT" in err


@pytest.mark.parametrize("body,line,says", [
    ("    S2R R0, SR_TID.X\n    BRA end\n    EXIT\nend:\n", 3, "BRA end branches to label 'end', which no instruction follows"),
    ("    S2R R0, SR_TID.X\n    BRA end\nend:\n", 3, "BRA end branches to label 'end', which no instruction follows"),
    ("    @P0 BRA end\n    EXIT\nend:\n    NOP\n    NOP\n", 2,
     "@P0 BRA end branches to label 'end', which only NOP padding follows"),
    ("    BSSY B0, end\n    EXIT\nend:\n", 2, "BSSY B0, end targets label 'end', which no instruction follows"),
    ("    BRA 0x20\n    EXIT\n", 2, "BRA 0x20 branches to 0x20, past the kernel's last instruction (at 0x10)"),
])
def test_a_branch_to_the_end_of_the_code_is_refused_at_the_branch(tmp_path, capsys, body, line, says):
    # probe-today finding 2: the last-instruction rule let a branch past the last instruction through
    code, err, source = _asm(tmp_path, capsys, body)
    assert code == 1
    assert f"{source}:{line}:5: error: {says}: threads would run past the end of the code" in err
    assert "hint: " in err and ("EXIT" in err or "an instruction of the kernel" in err)


@pytest.mark.parametrize("body", ["    EXIT\n", "    @P0 BRA end\n    EXIT\nend:\n    EXIT\n",
                                  "    EXIT\nhere:\n    BRA here\n    NOP\n    NOP\n", "loop:\n    BRA loop\n"])
def test_a_kernel_ending_in_exit_or_a_branch_assembles(tmp_path, capsys, body):
    code, err, _ = _asm(tmp_path, capsys, body)
    assert code == 0, err


def test_a_kernel_with_no_instruction_is_refused(tmp_path, capsys):
    code, err, source = _asm(tmp_path, capsys, "// nothing yet\n.registers 8\n")
    assert code == 1
    assert f"{source}:1:1: error: k.sass holds no instructions: a kernel is at least its EXIT" in err


def test_a_misspelt_modifier_gets_a_did_you_mean(tmp_path, capsys):
    code, err, _ = _asm(tmp_path, capsys, "    ISETP.GE.U23.AND P0, PT, R0, R6, PT\n    EXIT\n")
    assert code == 1
    assert "ISETP takes no modifier .U23 (did you mean .U32?)" in err
    assert "hint: the modifiers of ISETP on sm_86: " in err and ".U32" in err
    # the corpus hint stays beside the did-you-mean, for a modifier ptxas writes and no table has yet
    assert "if ptxas itself writes .U23 on ISETP, it is a form the tables have not learned" in err and RELEARN in err


@TARGETS
@pytest.mark.parametrize("line,key", [
    # ptxas's mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 and ld.global.nc.L1::evict_last.v4.u32 (both
    # targets, ptxas 13.5; no corpus kernel makes ptxas emit them yet).  HMMA.16816.F32.BF16 and LDG.E.EL.128 (ld.global
    # .L1::evict_last.v4), these cases until session 46, are learned from tools/ptx_corpus/user_forms_s46.ptx;
    # F2F.BF16.F64.RM (sm_90's cvt.rm.bf16.f64) and LDG.E.EL (32-bit) from sm90_user_forms_s45.ptx /
    # user_forms_s45.ptx; MUFU.TANH.BF16 before them from sm90_sim_forms_s44.ptx, MUFU.EX2.F16 from
    # wide_cover_forms.ptx, HADD2.BF16_V2 from sm90_bf16_forms.ptx, HFMA2.BF16_V2 from math_forms2.ptx, and
    # F2FP.BF16.PACK_AB from param_shapes.ptx
    ("    HMMA.1688.F32.BF16 R0, R4, R6, R0", "HMMA.1688.F32.BF16 R,R,R,R"),
    ("    LDG.E.EL.128.CONSTANT R0, [R2.64]", "LDG.E.EL.128.CONSTANT R,[MR.64]"),
    ("    LDG.E.LTC128B R0, [R2.64]", "LDG.E.LTC128B R,[MR.64]"),
])
def test_a_ptxas_modifier_the_tables_lack_gets_the_corpus_hint_not_a_did_you_mean(tmp_path, capsys, arch, line, key):
    # probe-today finding 3: .BF16 got "did you mean .F16?" (another data type), .EL ".E"
    code, err, _ = _asm(tmp_path, capsys, line + "\n    EXIT\n", arch)
    assert code == 1
    assert f"no {arch} encoding for '{key}'; known forms, nearest first: " in err
    assert "did you mean" not in err and "takes no modifier" not in err
    assert "add a PTX kernel to tools/ptx_corpus that makes ptxas emit it" in err and RELEARN in err


@TARGETS
def test_modifiers_in_another_order_than_the_tables_say_which_order(tmp_path, capsys, arch):
    code, err, _ = _asm(tmp_path, capsys, "    FADD.RZ.FTZ R0, R1, R2\n    EXIT\n", arch)
    assert code == 1
    assert f"no {arch} encoding for 'FADD.RZ.FTZ R,R,R': FADD writes these modifiers in the order .FTZ.RZ: " \
           f"write FADD.FTZ.RZ" in err
    assert RELEARN not in err
    assert _asm(tmp_path, capsys, "    FADD.FTZ.RZ R0, R1, R2\n    EXIT\n", arch)[0] == 0


@TARGETS
def test_an_operand_count_names_the_forms_each_count_belongs_to(tmp_path, capsys, arch):
    code, err, _ = _asm(tmp_path, capsys, "    IADD3 R0, R1, R2\n    EXIT\n", arch)
    assert code == 1
    # IADD3 R, P, P, R, R, R (two carry-outs) is learned from ptxas too (tools/ptx_corpus/param_shapes.ptx)
    # and IADD3.X R, P, R, R, R, P, P (a carry-in and a carry-out: add.cc / addc.cc chains) since session 43
    # (tools/ptx_corpus/wide_cover_forms.ptx)
    assert "IADD3 takes 4, 5 or 6 operands (IADD3.X takes 6 or 7), not 3" in err
    code, err, _ = _asm(tmp_path, capsys, "    IADD3.X R0, R1, R2\n    EXIT\n", arch)
    assert code == 1
    assert "IADD3.X takes 6 or 7 operands (IADD3 takes 4, 5 or 6), not 3" in err


def test_an_operand_too_many_says_how_many_the_opcode_takes(tmp_path, capsys):
    code, err, _ = _asm(tmp_path, capsys, "    FFMA R9, R8, R7, R9, R10\n    EXIT\n")
    assert code == 1
    assert "no sm_86 encoding for 'FFMA R,R,R,R,R': FFMA takes 4 operands, not 5" in err
    assert "hint: its sm_86 forms: " in err and "FFMA R,R,R,R" in err
    assert RELEARN not in err


def test_an_opcode_of_the_other_target_says_so(tmp_path, capsys):
    code, err, _ = _asm(tmp_path, capsys, "    VIADD R0, R0, R1\n    EXIT\n", "sm_86")
    assert code == 1
    assert "VIADD is an sm_90 opcode, not one of sm_86's (the sm_86 tables have no form of it)" in err
    assert "IADD3" in err and "<stem>.sm_90.sass" in err
    assert RELEARN not in err
    assert _asm(tmp_path, capsys, "    VIADD R0, R0, R1\n    EXIT\n", "sm_90")[0] == 0


def test_an_unlearned_form_of_a_known_opcode_still_says_relearn(tmp_path, capsys):
    code, err, _ = _asm(tmp_path, capsys, "    FMNMX R1, R2, 0x5, 0x6\n    EXIT\n")
    assert code == 1 and RELEARN in err


@pytest.mark.parametrize("extra,named", [(["--block-size", "5000"], "--block-size"),
                                         (["--parameter-bytes", "16"], "--parameter-bytes"),
                                         (["--parameter-bytes", "16", "--block-size", "64"],
                                          "--parameter-bytes and --block-size")])
def test_cubin_options_without_cubin_are_refused(tmp_path, capsys, extra, named):
    code, err, _ = _asm(tmp_path, capsys, "    EXIT\n", "sm_86", *extra)
    assert code == 2
    assert f"error: {named} describe" in err and "this writes a raw stream" in err and "add --cubin" in err
    assert not (tmp_path / "k.bin").exists()


def test_cubin_options_with_cubin_still_work(tmp_path, capsys):
    code, err, _ = _asm(tmp_path, capsys, "    EXIT\n", "sm_86", "--cubin", "--block-size", "64",
                        "--parameter-bytes", "16")
    assert code == 0, err
    code, err, _ = _asm(tmp_path, capsys, "    EXIT\n", "sm_86", "--cubin", "--block-size", "5000")
    assert code == 2 and "--block-size 5000: a block has 1 to 1024 threads" in err     # a usage error


def test_disasm_of_a_raw_stream_without_arch_names_the_target_it_assumed(tmp_path, capsys):
    assert _asm(tmp_path, capsys, "    EXIT\n", "sm_86")[0] == 0
    main(["disasm", str(tmp_path / "k.bin")])
    err = capsys.readouterr().err
    assert f"bobc disasm: {tmp_path / 'k.bin'} is a raw stream, which names no target: decoded for sm_90 " \
           f"(the default); --arch sm_86 for code of another" in err
    main(["disasm", str(tmp_path / "k.bin"), "--arch", "sm_86"])
    assert "names no target" not in capsys.readouterr().err
