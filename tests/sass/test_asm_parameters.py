"""`bobc asm --cubin` declares the parameter bytes the code reads, from the encoded constant fields:
`c[0x0][param+N]` counts as `c[0x0][0x160+N]` does (probe-sass finding 5: the symbolic form gave
0 bytes and no KPARAM_INFO, so the driver would pass no parameters), and an operand counts the
bytes it covers (LDC.64, the 64-bit addends of IMAD.WIDE and IMAD.HI).  Out-of-range options are refused
with a message, never a traceback (finding 8b, 10, 11)."""
from __future__ import annotations

import re
import subprocess

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm

SYMBOLIC = """.kernel pk
S2R R0, SR_TID.X
ULDC.64 UR4, c[0x0][memory_descriptor]
LDC.64 R2, c[0x0][RZ+param+0x8]
LDC R5, c[0x0][param+0x10]
STG.E [R2.64], R5
EXIT
"""


def _param_size(cubin) -> int:
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\.byte\s+0x03, 0x19\s*\n\s*/\*[0-9a-f]+\*/\s*\.short\s+(0x[0-9a-f]+)", listing)
    return int(m.group(1), 16)


@pytest.mark.parametrize("arch,base", [("sm_86", 0x160), ("sm_90", 0x210)])
def test_symbolic_and_absolute_parameters_give_one_cubin(arch, base, tmp_path, needs_nvdisasm):
    absolute = SYMBOLIC.replace("RZ+param+0x8", f"RZ+{base + 8:#x}").replace("param+0x10", f"{base + 0x10:#x}")
    cubins = []
    for name, text in (("symbolic", SYMBOLIC), ("absolute", absolute)):
        source = tmp_path / f"{name}.sass"
        source.write_text(text)
        cubins.append(tmp_path / f"{name}.cubin")
        assert main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(cubins[-1])]) == 0
    assert _param_size(cubins[0]) == 0x18      # up to param+0x14, in 8-byte words
    assert cubins[0].read_bytes() == cubins[1].read_bytes()


@pytest.mark.parametrize("line,size", [
    ("IMAD.HI.U32 R2, R0, R3, c[0x0][param+0x20]", 0x28),         # IMAD.HI adds a 64-bit value
    ("IMAD.WIDE.U32 R2, R0, R3, c[0x0][param+0x18]", 0x20),      # the 64-bit addend
    ("ULDC.64 UR6, c[0x0][param+0x28]", 0x30),
    ("MOV R2, c[0x0][param+0x4]", 0x8),
    ("MOV R2, c[0x0][memory_descriptor]", 0),                     # not a parameter
])
def test_each_read_counts_the_bytes_it_covers(line, size, tmp_path, needs_nvdisasm):
    source = tmp_path / "k.sass"
    source.write_text(f"S2R R0, SR_TID.X\n{line}\nEXIT\n")
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(tmp_path / "k.cubin")]) == 0
    assert _param_size(tmp_path / "k.cubin") == size


# an option's value out of its range is a usage error, exit 2 (README; probe s32 sasssyntax finding 5:
# they were exit 1); a --parameter-bytes the code reads past is the source's matter, exit 1
@pytest.mark.parametrize("options,message,code", [
    (["--parameter-bytes", "100000"], "--parameter-bytes 100000: a kernel takes 0 to 32764 bytes of parameters", 2),
    (["--parameter-bytes", "40000"], "--parameter-bytes 40000: a kernel takes 0 to 32764 bytes of parameters", 2),
    (["--parameter-bytes", "-8"], "--parameter-bytes -8: a kernel takes 0 to 32764 bytes of parameters", 2),
    (["--parameter-bytes", "6"], "--parameter-bytes 6: a multiple of 4 is needed", 2),
    (["--parameter-bytes", "3"], "--parameter-bytes 3: a multiple of 4 is needed", 2),
    (["--parameter-bytes", "16"], "k.sass:5:1: error: --parameter-bytes 16: the code reads parameter bytes up to 20", 1),
    (["--block-size", "0"], "--block-size 0: a block has 1 to 1024 threads", 2),
    (["--block-size", "5000"], "--block-size 5000: a block has 1 to 1024 threads", 2),
])
def test_out_of_range_options_are_refused(options, message, code, tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_text(SYMBOLIC)
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(tmp_path / "k.cubin"), *options]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(tmp_path / "k.cubin"),
                 "--parameter-bytes", "24"]) == 0
