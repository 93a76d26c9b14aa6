"""`bobc asm --cubin --register-count N` (probe s38 coverage findings 4 and 5).

4. A count past the registers a thread may have (255) is an option's value out of range: refused
   before any work, exit 2, as --block-size 0 or 1025 is (README: "2 usage (an option's value").  It
   was refused after assembling, exit 1, as "kernel 'k' would have 300 registers".
5. A count below the registers the code names (MOV R100 with --register-count 4) wrote a cubin
   whose REGCOUNT gives each thread R0..R3 while its code writes R100 (exit 0); ptxas never declares
   fewer registers than its code names.  Refused at the instruction naming the highest register
   (exit 1, nothing written) -- but for code that resizes its registers (USETMAXREG), what the
   option is for (sass/README.md, "Registers"), whose count at entry the code does not show."""
from __future__ import annotations

from bobc.cli import main

HIGH = ".kernel high\n    MOV R100, RZ\n    EXIT\n"


def _asm(tmp_path, source, *options):
    (tmp_path / "k.sass").write_text(source)
    out = tmp_path / "k.cubin"
    return main(["asm", str(tmp_path / "k.sass"), "--arch", "sm_90", "--cubin", "-o", str(out), *options]), out


def test_a_count_past_a_thread_s_registers_is_a_usage_error(tmp_path, capsys):
    for count in ("256", "300"):
        rc, out = _asm(tmp_path, HIGH, "--register-count", count)
        err = capsys.readouterr().err
        assert rc == 2, err
        assert err.startswith(f"bobc asm: error: --register-count {count}: a thread has at most 255 registers on "
                              "sm_90\n"), err
        assert not out.exists()
    rc, out = _asm(tmp_path, ".kernel k\n    EXIT\n", "--register-count", "255")
    assert rc == 0 and out.exists()


def test_a_count_below_the_code_s_registers_is_refused_at_the_instruction(tmp_path, capsys):
    for count in ("4", "100"):
        rc, out = _asm(tmp_path, HIGH, "--register-count", count)
        err = capsys.readouterr().err
        assert rc == 1, err
        assert err.startswith(f"bobc asm: {tmp_path / 'k.sass'}:2:5: error: the code uses R100, but --register-count "
                              f"{count} declares R0..R{int(count) - 1}"), err
        assert "Traceback" not in err and not out.exists()
    rc, out = _asm(tmp_path, HIGH, "--register-count", "101")       # R0..R100: the code's registers
    assert rc == 0 and out.exists(), capsys.readouterr().err


def test_code_that_resizes_its_registers_takes_the_count_given(tmp_path, capsys):
    source = ".kernel up\n    [B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL 40\n    MOV R100, RZ\n    EXIT\n"
    rc, out = _asm(tmp_path, source, "--register-count", "64")
    assert rc == 0 and out.exists(), capsys.readouterr().err
