"""tests/gpu/run.sh's summary.txt, without a GPU (probe s46 gpuprobes46): run.sh is run from a copy of itself in a
scratch tree, with make, timeout and python3 replaced on PATH by stubs (a pytest run of a file named in STUB_FAIL exits
1 and prints pytest's FAILED line; one named in STUB_TIMEOUT exits 124, as `timeout` does when its time runs out).

The oracle is what each step's own command returned (the stubs'): every step's line says that status, a failed pytest
step lists its FAILED tests beneath it, a timed-out one says so, and run.sh's own exit status is nonzero when a step
failed -- before, test_coppelius_update.py's line read `$?` of the `[ COPPELIUS_UPDATE = 1 ]` test (always 0), and
run.sh exited with gpu_smoke's status alone.  A run where every step passes keeps every line ending ": exit 0", which
tests/test_doc_gpu_logs_row_s38.py reads."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STUB_PYTHON = r"""#!/usr/bin/env bash
# python3 stub: `-c "import pytest"` succeeds (pytest_timeout does not); `-m pytest ... FILE ...` fails for a file
# named in STUB_FAIL (printing pytest's FAILED line), times out (124) for one in STUB_TIMEOUT; the rest succeed
if [ "$1" = "-c" ]; then case "$2" in *pytest_timeout*) exit 1 ;; *) exit 0 ;; esac; fi
if [ "$1" = "-m" ] && [ "$2" = "pytest" ]; then
  for arg in "$@"; do
    file=${arg%%::*}
    for f in $STUB_FAIL; do
      if [ "$file" = "$f" ]; then echo "FAILED $arg::test_stub - AssertionError: stub"; echo "=== 1 failed in 0.1s ==="; exit 1; fi
    done
    for f in $STUB_TIMEOUT; do [ "$file" = "$f" ] && exit 124; done
  done
  echo "=== 3 passed in 0.1s ==="
  exit 0
fi
exit 0
"""

STUB_TIMEOUT = r"""#!/usr/bin/env bash
# timeout stub: drop timeout's options and duration, run python3 (the stub) and nothing else
while [ $# -gt 0 ]; do
  case "$1" in -s|-k) shift 2 ;; -*) shift ;; *) break ;; esac
done
shift
[ "$1" = "python3" ] && exec "$@"
exit 0
"""


def run_stubbed(tmp_path: Path, fail: str = "", timeout: str = "") -> tuple[int, list[str]]:
    tree = tmp_path / "tree"
    (tree / "tests" / "gpu").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "gpu" / "run.sh", tree / "tests" / "gpu" / "run.sh")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name, text in (("python3", STUB_PYTHON), ("timeout", STUB_TIMEOUT), ("make", "#!/bin/sh\nexit 0\n"),
                       ("nvidia-smi", "#!/bin/sh\nexit 0\n"), ("dmesg", "#!/bin/sh\nexit 0\n")):
        (stubs / name).write_text(text)
        (stubs / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "STUB_FAIL": fail, "STUB_TIMEOUT": timeout}
    for name in ("BENCH_GEMM", "BENCH_COPPELIUS", "BENCH_COPPELIUS_HOST", "PROBES", "COPPELIUS_UPDATE"):
        env.pop(name, None)
    done = subprocess.run(["bash", str(tree / "tests" / "gpu" / "run.sh"), str(tmp_path / "logs")], env=env,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, (tmp_path / "logs" / "summary.txt").read_text().splitlines()


def test_every_step_passing_reads_exit_0_and_run_sh_exits_0_s46(tmp_path):
    rc, lines = run_stubbed(tmp_path)
    assert rc == 0, lines
    assert lines and all(line.endswith(": exit 0") for line in lines if line.strip()), lines
    assert "pytest -m gpu tests/gpu/test_coppelius_update.py: exit 0" in lines


def test_a_failing_step_says_so_with_its_tests_and_run_sh_fails_s46(tmp_path):
    rc, lines = run_stubbed(tmp_path, fail="tests/gpu/test_coppelius_update.py tests/gpu/test_sm90_gemm.py")
    assert "pytest -m gpu tests/gpu/test_coppelius_update.py: exit 1" in lines, lines
    assert "pytest tests/gpu/test_sm90_gemm.py: exit 1" in lines, lines
    at = lines.index("pytest tests/gpu/test_sm90_gemm.py: exit 1")
    assert lines[at + 1].strip().startswith("FAILED tests/gpu/test_sm90_gemm.py::test_stub"), lines
    assert rc != 0
    assert any("2 of" in line and "failed" in line and "test_coppelius_update.py" in line for line in lines[-2:]), lines


def test_a_timed_out_step_says_it_timed_out_s46(tmp_path):
    rc, lines = run_stubbed(tmp_path, timeout="tests/gpu/test_coppelius_host.py")
    assert any(line.startswith("pytest -m gpu tests/gpu/test_coppelius_host.py: exit 124") and "timed out" in line
               for line in lines), lines
    assert rc != 0


def test_run_sh_parses_s46():
    subprocess.run(["bash", "-n", str(REPO / "tests" / "gpu" / "run.sh")], check=True)
    subprocess.run(["bash", "-n", str(REPO / "tests" / "gpu" / "prepare.sh")], check=True)
