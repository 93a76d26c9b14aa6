"""README.md's "training on the GPU" row names the GPU runs whose logs are in tests/gpu/logs and
what they passed: `latest on the H200 PREFIX: 130 + 40 + 20 + 6 + 5 + 3 passed`, `latest of all
PREFIX on an H100: ...`, `every step of both exit 0`.  Each named run is there, ran on the GPU
named (its env.txt's nvidia-smi), every step of its summary exited 0, and the counts are its pytest
logs' "N passed" in the order tests/gpu/run.sh runs them (the GPU suite, test_sm90_gemm,
test_coppelius_kernels, test_coppelius_host, test_coppelius_update, and test_sm90_async_kernels's
runs together), none failing, erring or skipping (probe s38 docs6: the row is rewritten by hand
after each run, and nothing held it to the logs)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "tests" / "gpu" / "logs"
ORDER = ["pytest_gpu", "pytest_sm90_gemm", "pytest_coppelius_kernels", "pytest_coppelius_host",
         "pytest_coppelius", "pytest_sm90_async"]
NAMED = [(r"latest on the H200 ([\w-]+): ([\d + ]+) passed", "H200"),
         (r"latest of all ([\w-]+) on an H100: ([\d + ]+) passed", "H100")]


def row() -> str:
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| training on the GPU |"):
            return line
    raise AssertionError("README.md has no 'training on the GPU' row")


def passed(log: Path) -> int:
    total = 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if re.match(r"^=+ .* in [0-9.]+s", line):                     # pytest's closing line
            assert not re.search(r"\b(failed|error|errors|skipped|xfailed)\b", line), f"{log.name}: {line}"
            found = re.search(r"(\d+) passed", line)
            total += int(found.group(1)) if found else 0
    return total


@pytest.mark.parametrize("pattern, gpu", NAMED, ids=[g for _, g in NAMED])
def test_the_named_gpu_run_is_in_the_logs_as_stated(pattern, gpu):
    found = re.search(pattern, row())
    assert found, f"README's GPU row no longer says {pattern!r}"
    prefix, counts = found.group(1), [int(c) for c in found.group(2).split("+")]
    summary = LOGS / f"{prefix}-summary.txt"
    assert summary.is_file(), f"README names the GPU run {prefix}; tests/gpu/logs has no {summary.name}"
    steps = [line for line in summary.read_text().splitlines() if line.strip()]
    assert steps and all(line.endswith(": exit 0") for line in steps), f"{summary.name}: not every step exit 0"
    assert re.search(rf"NVIDIA {gpu}\b", (LOGS / f"{prefix}-env.txt").read_text()), f"{prefix} did not run on an {gpu}"
    real = [passed(LOGS / f"{prefix}-{name}.log") for name in ORDER]
    assert counts == real, f"README says {prefix} passed {' + '.join(map(str, counts))}; its logs: " \
                           f"{' + '.join(map(str, real))}"
