"""`bobc run PLAN native train|predict ... --reference --entry DEF` of a request program (a host that
takes a request's options): no output the request publishes (--checkpoint-out, --predictions,
--result) may be a file the command read -- a plan module or the --kernels file -- as no file
argument of a plain native program may (tests/native/test_native_run_outputs_spare_the_plan_s42.py).

Probe s45 coppuser: `bobc run myshape/MyShape.bob native predict ... --checkpoint-out
myshape/MyShape.bob` published the checkpoint over the plan module, exit 0: the request's own
output set knew only the request's input and checkpoint, not the modules `bobc run` read.
Expected (README, "Outputs are all or nothing": an input is any file the command read, the plan's
modules and `bobc run`'s kernels file among them): exit 8, the host's form of the refusal naming
the file and what it is, every file as it was."""
from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
PLANS = REPOSITORY / "tests/native/plans/Native"


def stream(tokens) -> bytes:
    """docs/formats.md's token stream, written here from its table (not by the code under test)."""
    body = b"".join(struct.pack("<I", t) for t in tokens)
    return (struct.pack("<8sIIII", b"COPSTRM1", 1, 4, 256, 64) + struct.pack("<Q", len(tokens))
            + hashlib.sha256(body).digest() + body)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "Native").mkdir()
    for name in ("Request.bob", "Short.bob"):
        shutil.copy(PLANS / name, tmp_path / "Native" / name)
    (tmp_path / "s.bin").write_bytes(stream([(i * 37 + 11) % 256 for i in range(60)]))
    (tmp_path / "k.py").write_text("def SUBMIT(machine, entry):\n    pass\n")
    return tmp_path


def run(work, operation, outputs):
    arguments = ["--input", "s.bin", "--checkpoint-out", outputs[0], "--predictions", outputs[1],
                 "--result", outputs[2]]
    return subprocess.run([sys.executable, "-m", "bobc", "run", "Native/Request.bob", "native", operation,
                           *arguments, "--reference", "--entry", "requestProgram", "--kernels", "k.py"],
                          cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


def contents(work):
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("operation, outputs, option, path, what", [
    ("train", ("Native/Request.bob", "p.bin", "r.bin"), "--checkpoint-out", "Native/Request.bob", "a module of the plan"),
    ("predict", ("ck.bin", "Native/Request.bob", "r.bin"), "--predictions", "Native/Request.bob", "a module of the plan"),
    ("train", ("ck.bin", "p.bin", "k.py"), "--result", "k.py", "the kernels file this run imports"),
], ids=["checkpoint-out-over-the-plan", "predictions-over-the-plan", "result-over-the-kernels-file"])
def test_a_request_output_never_replaces_what_the_run_read(work, operation, outputs, option, path, what):
    before = contents(work)
    done = run(work, operation, outputs)
    assert done.returncode == 8, done.stderr
    assert done.stderr == (f"native: output {path} ({option}): is the input {path} ({what}); "
                           "an output never replaces an input; nothing was written\n"), done.stderr
    assert contents(work) == before


def test_the_request_still_publishes_other_outputs(work):
    done = run(work, "train", ("ck.bin", "p.bin", "r.bin"))
    assert done.returncode == 0, done.stderr
    assert all((work / name).is_file() for name in ("ck.bin", "p.bin", "r.bin"))
