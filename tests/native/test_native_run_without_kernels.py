"""`bobc run PLAN native ... --reference` without --kernels (probe s28 texts, finding 1): a
submission is refused with the host's status, saying what to give (--kernels FILE defining
SUBMIT), not naming NATIVE_DEVICE=memory, which the user never set; a caller that collects
the messages to hold them to the C host's still gets the host's line; `bobc run --help` says
the default kernels file is not native's."""
from __future__ import annotations

import io
import subprocess
import sys

from native_helpers import PLANS, program_bytes, load_module

COMMANDS = PLANS / "Native" / "Commands.bob"


def test_a_submission_without_submit_says_to_give_kernels(tmp_path):
    run = subprocess.run([sys.executable, "-m", "bobc", "run", str(COMMANDS), "native", "--reference", "--entry",
                          "submitting"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 3, run.stderr
    assert run.stderr == ("native: command 2 (Submit): submission 0 (entry 0x2222): the reference interpreter has no "
                          "GPU and no SUBMIT to carry a submission out: give --kernels FILE defining SUBMIT(machine, "
                          "entry), a NumPy stand-in for the kernels (docs/native-host.md, \"The reference "
                          "interpreter\", names the bundled examples'); nothing was published\n")
    assert "NATIVE_DEVICE" not in run.stderr


def test_a_caller_collecting_the_messages_gets_the_hosts_line():
    from bobc.reference.native_program import run_program

    code = program_bytes(load_module(COMMANDS), "submitting")
    stderr = io.BytesIO()
    assert run_program(code, [], stderr=stderr) == 3
    assert stderr.getvalue() == (b"native: command 2 (Submit): submission 0 (entry 0x2222): this session has no GPU "
                                 b"(NATIVE_DEVICE=memory): a submission needs one; nothing was published\n")
    said = io.BytesIO()
    assert run_program(code, [], stderr=said, say_kernels=True) == 3
    assert b"give --kernels FILE defining SUBMIT(machine, entry)" in said.getvalue()


def test_run_help_says_native_has_no_default_kernels_file():
    done = subprocess.run([sys.executable, "-m", "bobc", "run", "--help"], capture_output=True, text=True, timeout=60)
    text = " ".join(done.stdout.split())
    assert "(default: reference_kernels.py in the plan's root folder); for native, a file defining SUBMIT(machine, " \
           "entry)" in text, text
    assert "no default" in text


def test_a_kernels_file_without_submit_says_what_a_native_run_reads(tmp_path):
    """A plan run's kernels file (KERNELS, no SUBMIT) given to a native run: the refusal says a
    native run's --kernels carries its submissions out and where the bundled ones are (probe s28
    texts, finding 1)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    plan = repo / "examples/coppelius/Coppelius/Build/DirectArtifact.bob"
    done = subprocess.run([sys.executable, "-m", "bobc", "run", str(plan), "native", "predict", "--entry",
                           "coppeliusHost", "--reference", "--kernels", str(repo / "examples/coppelius/reference_kernels.py"),
                           "--input", "s.bin", "--checkpoint", "c.bin", "--predictions", "p.bin", "--result", "r.bin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "reference_kernels.py defines no SUBMIT(machine, entry): a native run's --kernels carries its " \
           "submissions out" in done.stderr
    assert 'docs/native-host.md, "The reference interpreter"' in done.stderr
