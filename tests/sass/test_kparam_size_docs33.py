"""Probe s33 docs finding 2: one parameter past what a KPARAM_INFO record's size field holds (bits
18..31 of its last word, 14 bits) is a usage error naming the option's value, exit 2, never a
struct.error traceback; the largest size the field holds is written as itself."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sass.test_cubin_probe_s33 import _kparams

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE = REPOSITORY / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"


def _asm(tmp_path, sizes):
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")}
    return subprocess.run([sys.executable, "-m", "bobc", "asm", str(SOURCE), "--cubin", "-o",
                           str(tmp_path / "k.cubin"), "--parameter-sizes", sizes],
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("sizes, ordinal", [("32764", 0), ("8,8,16384", 2), ("16384@16", 0)])
def test_a_parameter_past_the_size_field_is_a_usage_error(tmp_path, sizes, ordinal):
    done = _asm(tmp_path, sizes)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "struct.error" not in done.stderr
    assert done.stderr.startswith(f"bobc asm: error: --parameter-sizes {sizes}: parameter {ordinal} "), done.stderr
    assert "14 bits" in done.stderr and "16380" in done.stderr
    assert not (tmp_path / "k.cubin").exists()


def test_the_largest_size_the_field_holds_is_written_as_itself(tmp_path):
    done = _asm(tmp_path, "8,8,16380")
    assert done.returncode == 0, done.stderr
    records = _kparams((tmp_path / "k.cubin").read_bytes(), "linreg_sgd")
    assert [(o, off, size) for o, off, size, _ in records] == [(0, 0, 8), (1, 8, 8), (2, 16, 16380)]
    # the size is the word's top 14 bits: nothing of it spilled into the flags below bit 18
    assert all(flags & ((1 << 18) - 1) == records[0][3] & ((1 << 18) - 1) for *_, flags in records)


def test_write_cubin_refuses_a_size_the_record_cannot_hold():
    from bobc.errors import BobcError
    from bobc.sass import cubin
    assert cubin.KPARAM_SIZE_MAX == 16380 and (cubin.KPARAM_SIZE_MAX << cubin.KPARAM_SIZE_SHIFT) < 2 ** 32
    assert (cubin.KPARAM_SIZE_MAX + 4) << cubin.KPARAM_SIZE_SHIFT >= 2 ** 32
    with pytest.raises(BobcError, match="parameter 1 .16384 bytes at offset 8. is past the 16380"):
        cubin.check_parameters([(0, 8), (8, 16384)], 16392, "k")
    cubin.check_parameters([(0, 8), (8, 16380)], 16388, "k")
