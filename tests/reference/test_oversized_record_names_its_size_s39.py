"""An input record larger than the plan's is refused with the plan's record size (probe s39
newuser3, finding 1).

A host reads the record's size and no more: a file past it is refused unread (docs/limits.md).
Before, that refusal showed the reader's bound, the record's size + 1 -- "2064 bytes, more than an
input record can be (1041 bytes at most are read)" for a 1040-byte record -- while a file one byte
too long got "1041 bytes, expected exactly 1040".  A user who changed the plan's record (LinReg with
fewer samples) learned a wrong size.  Now every wrong size is "N bytes, expected exactly SIZE", in the
C host, `bobc run --reference` and `bobc sim` alike, SIZE the record the plan declares: LinReg's
16-byte header, N x D binary32 features and N binary32 targets (examples/linear_regression/README.md),
computed here from numpy_model's N and D, not from bobc.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
PLAN = EXAMPLE / "LinReg" / "Build" / "NativeHost.bob"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

import numpy_model  # noqa: E402

RECORD_BYTES = 16 + 4 * numpy_model.N * numpy_model.D + 4 * numpy_model.N
OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def _run(argv, cwd):
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    folder = tmp_path_factory.mktemp("oversized-record")
    built = _run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", "linreg-host"], folder)
    assert built.returncode == 0, built.stderr
    return folder / "linreg-host"


@pytest.mark.parametrize("size", [RECORD_BYTES + 1, RECORD_BYTES + 1024, 2 * RECORD_BYTES, 1 << 20])
def test_every_record_past_the_plans_size_is_refused_with_that_size(host, tmp_path, size):
    (tmp_path / "big.bin").write_bytes(bytes(size))
    said = f"input record big.bin: {size:,} bytes, expected exactly {RECORD_BYTES:,}\n"   # grouped (s42)
    arguments = ["train", "--input", "big.bin", *OUTPUTS]
    for name, argv in (("host", [str(host), *arguments]),
                       ("reference", [sys.executable, "-m", "bobc", "run", str(PLAN), *arguments, "--reference"]),
                       ("sim", [sys.executable, "-m", "bobc", "sim", str(PLAN), *arguments])):
        done = _run(argv, tmp_path)
        assert done.returncode == 3, (name, done.stderr)
        assert done.stderr.endswith(said), (name, done.stderr)
        assert "at most are read" not in done.stderr, (name, done.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]         # nothing published


def test_a_shorter_record_is_still_called_truncated(host, tmp_path):
    (tmp_path / "short.bin").write_bytes(bytes(RECORD_BYTES - 1))
    done = _run([str(host), "train", "--input", "short.bin", *OUTPUTS], tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stderr.endswith(f"short.bin: {RECORD_BYTES - 1:,} bytes, expected exactly {RECORD_BYTES:,} (truncated)\n")


def test_the_guides_example_a_copy_with_32_samples_and_the_64_sample_record(tmp_path):
    """docs/writing-a-plan.md, section 8: make_record.py keeps its own N, so LinReg copied with 32
    samples refuses its record with the size the plan declares (16 + 4 x 32 x 7 + 4 x 32 = 1040)."""
    import shutil

    import make_record

    shutil.copytree(EXAMPLE / "LinReg", tmp_path / "LinReg")
    shutil.copy(EXAMPLE / "reference_kernels.py", tmp_path)
    model = tmp_path / "LinReg" / "Model.bob"
    line = f"def linRegSamples : Nat = {numpy_model.N}"
    assert model.read_text().count(line) == 1
    model.write_text(model.read_text().replace(line, "def linRegSamples : Nat = 32"))
    (tmp_path / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    done = _run([sys.executable, "-m", "bobc", "run", "LinReg/Build/NativeHost.bob", "train", "--reference",
                 "--input", "record.bin", *OUTPUTS], tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stderr == "bobc run: error: input record record.bin: 2,064 bytes, expected exactly 1,040\n"
    assert 2064 == RECORD_BYTES and 1040 == 16 + 4 * 32 * numpy_model.D + 4 * 32
