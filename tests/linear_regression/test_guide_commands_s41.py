"""docs/writing-a-plan.md section 8's commands run as written, and they show a resume and a predict
(probe s41 newuser5, finding 4: the guide showed a fresh train only, and a user's first
`bobc run PLAN predict --reference --input R --checkpoint C --predictions P --result R2` was refused,
"missing --checkpoint-out OUT"; docs/runtime.md's command line requires it for predict too).

Expected values from the documents, not from bobc: a resumed checkpoint's step is the input's plus the
contract's updates per invocation (docs/formats.md, "Checkpoint envelope": LinReg's 20, so 20 then 40),
and a predict hands its input checkpoint on unchanged (docs/host-steps.md, `Operation`)."""
from __future__ import annotations

import os
import re
import shlex
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "writing-a-plan.md"


def _section_8_commands() -> list[list[str]]:
    text = GUIDE.read_text()
    section = text[text.index("## 8. Running it without a GPU"):]
    block = []
    for line in section.splitlines()[1:]:
        if line.startswith("    "):
            block.append(line[4:])
        elif block and line.strip():
            break
    joined = "\n".join(block).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def _step(path: Path) -> int:
    return struct.unpack_from("<Q", path.read_bytes(), 16)[0]


def test_the_guides_commands_run_and_resume_and_predict(tmp_path):
    commands = _section_8_commands()
    assert any(c[:2] == ["bobc", "run"] and "predict" in c for c in commands), commands
    assert any(c[:2] == ["bobc", "run"] and "--checkpoint" in c for c in commands), commands
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"}
    for words in commands:
        words = [str(REPO / w) if re.match(r"examples/", w) else w for w in words]
        if words[0] == "python":
            argv = [sys.executable, *words[1:]]
        else:
            assert words[0] == "bobc", words
            argv = [sys.executable, "-m", "bobc", *words[1:]]
        result = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
        assert result.returncode == 0, (words, result.stderr)
    assert _step(tmp_path / "ckpt.bin") == 20 and _step(tmp_path / "ckpt2.bin") == 40
    assert (tmp_path / "ckpt3.bin").read_bytes() == (tmp_path / "ckpt2.bin").read_bytes()
    assert (tmp_path / "pred3.bin").stat().st_size == (tmp_path / "pred2.bin").stat().st_size
