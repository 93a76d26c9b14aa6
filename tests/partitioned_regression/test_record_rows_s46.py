"""A coordinate record of another number of rows (probe s46 partreg2, finding 3).

A plan whose PartitionedRegression.Coordinates.coordinateRows is another power of two builds a
pair that trains on that many rows (docs/partitioned-regression.md, "The data": 1 and 1024 rows
were checked against a NumPy float64 oracle, fresh and resumed).  Its hosts' data identity sums
those rows; `partitioned_regression.formats.data_identity` summed 4096 whatever the record held:
struct.error for a shorter record, the wrong words for a longer one, so a scripted peer (the
tests' stand-in worker 0, bench's echo peer) could not pair with such a host.  The expected words
here are NumPy's wrapping uint64 cumulative sums of the rows' bit patterns, computed beside the
code, not read from it; the built host is the second judge."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from partitioned_regression import formats as F
from partitioned_regression import reference as R
from peers import run_beside_worker0

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"
UUID = "".join(f"\\x{b:02x}" for b in bytes(range(16)))


def fletcher(bits: np.ndarray) -> tuple[int, int]:
    """The sum of the bit patterns and the sum of the running sums, modulo 2^64 (uint64 wraps)."""
    with np.errstate(over="ignore"):
        running = np.cumsum(bits, dtype=np.uint64)
        return int(running[-1]), int(np.sum(running, dtype=np.uint64))


def a_record(rows: int) -> bytes:
    data = R.generate(rows=rows)
    return F.record(data, 1, R.Coordinate(0.0, 0.0, 0.5, 0.05))


@pytest.mark.parametrize("rows", [1, 3, 1024, 4096, 5000])
def test_the_data_identity_sums_every_row_the_record_holds_s46(rows):
    record = a_record(rows)
    pairs = np.frombuffer(record[32:], dtype="<u8").reshape(rows, 2)     # x_k, y bit patterns
    expected = (*fletcher(pairs[:, 1]), *fletcher(pairs[:, 0]))
    assert F.record_rows(record) == rows
    assert F.column_checksums(record) == expected
    assert F.data_identity(record, 1) == b"CDPD" + struct.pack("<I4Q", 1, *expected)


@pytest.mark.parametrize("size", [0, 31, 33, 32 + 16 * 3 + 8])
def test_a_size_that_is_not_a_record_is_refused_s46(size):
    with pytest.raises(ValueError, match=f"{size} bytes: not a coordinate record"):
        F.column_checksums(bytes(size))


def test_a_host_built_for_1024_rows_pairs_with_the_words_formats_computes_s46(tmp_path, port):
    """The example with coordinateRows 1024 (the plan and its kernels copied beside Pair.bob),
    worker 1 built and run under NATIVE_DEVICE=memory beside the stand-in worker 0, whose data
    message is formats.data_identity of a 1024-row partner record: the host agrees on the data
    and goes on to its first Submit (status 3, no GPU here); a wrong word would end it with
    status 5, "worker 1's targets y differ from worker 0's"."""
    plan = tmp_path / "plan"
    shutil.copytree(EXAMPLE / "PartitionedRegression", plan / "PartitionedRegression")
    coordinates = plan / "PartitionedRegression/Coordinates.bob"
    text = coordinates.read_text()
    assert "def coordinateRows : Nat = 4096\n" in text
    coordinates.write_text(text.replace("def coordinateRows : Nat = 4096\n", "def coordinateRows : Nat = 1024\n"))
    (plan / "Pair.bob").write_text("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
                                   f'def worker1 : Bytes = (coordinateH200Worker b"{UUID}" 0 1 {port} 0 1 4)\n')
    host = tmp_path / "worker1"
    built = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan / "Pair.bob"), "--entry", "worker1",
                            "--target", "sm_90", "-I", str(plan), "-o", str(host)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    record = tmp_path / "record1.bin"
    record.write_bytes(a_record(1024))
    done = run_beside_worker0(port, [str(host), "m", "w0", "a0", "w1", "a1", "readback1", str(record)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "30000"})
    assert done.returncode == 3, done.stderr
    assert "(Submit)" in done.stderr and "no GPU" in done.stderr, done.stderr
