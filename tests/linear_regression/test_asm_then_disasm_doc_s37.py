"""docs/writing-a-plan.md, "2. Kernels": `bobc asm FILE --arch sm_86 -o code.bin` then `bobc disasm
...` shows what was encoded.  It wrote a bare `bobc disasm`, which reads a raw stream (it names no
target) as sm_90's: sm_86 code shown as another architecture's (probe s37 docs4 finding 4).  The two
commands are read from the doc and run on LinReg's kernel as written."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "examples/linear_regression/LinReg/kernels/linreg-predict.sass"


def the_commands() -> tuple[list[str], list[str]]:
    text = " ".join((REPO / "docs" / "writing-a-plan.md").read_text(encoding="utf-8").split())
    found = re.search(r"`bobc (asm FILE [^`]*)` then `bobc (disasm [^`]*)` shows what was encoded", text)
    assert found, "docs/writing-a-plan.md no longer pairs bobc asm with bobc disasm"
    return shlex.split(found.group(1)), shlex.split(found.group(2))


def arch(words: list[str]) -> str | None:
    return words[words.index("--arch") + 1] if "--arch" in words else None


def test_the_doc_disassembles_for_the_architecture_it_assembled_for():
    asm, disasm = the_commands()
    assert arch(asm) is not None and arch(disasm) == arch(asm), (asm, disasm)


def test_the_doc_commands_run_as_written(tmp_path):
    asm, disasm = the_commands()
    bobc = [sys.executable, "-m", "bobc"]
    asm = [str(KERNEL) if w == "FILE" else w for w in asm]
    made = subprocess.run(bobc + asm, cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    shown = subprocess.run(bobc + disasm, cwd=tmp_path, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "names no target" not in shown.stderr, shown.stderr
    assert "S2R R0, SR_TID.X" in shown.stdout, shown.stdout
