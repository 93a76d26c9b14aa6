"""Probe s33 docs finding 2, revisited (s34 kparam): a parameter past what a KPARAM_INFO record's
size field holds (bits 18..31 of its last word, 14 bits) was refused, on the belief that bobc
could not describe it.  ptxas 13.5 describes every parameter of a block of more than 4352 bytes
with a KPARAM_INFO_V2 record whose size is a whole 32-bit word (tests/sass/test_kparam_info_v2.py
compares them with ptxas's), so such a parameter is written, whole, never a struct.error."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sass.test_cubin_probe_s33 import _kernel_records

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE = REPOSITORY / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"
KPARAM_INFO_V2 = 0x45


def _asm(tmp_path, sizes):
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")}
    return subprocess.run([sys.executable, "-m", "bobc", "asm", str(SOURCE), "--cubin", "-o",
                           str(tmp_path / "k.cubin"), "--parameter-sizes", sizes],
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("sizes, expected", [
    ("32764", [(0, 0, 32764)]),
    ("8,8,16384", [(0, 0, 8), (1, 8, 8), (2, 16, 16384)]),
    ("8,8,16380", [(0, 0, 8), (1, 8, 8), (2, 16, 16380)]),
])
def test_a_parameter_past_the_14_bit_field_is_written_whole(tmp_path, sizes, expected):
    done = _asm(tmp_path, sizes)
    assert done.returncode == 0, done.stderr
    records = [struct.unpack("<IHHI", p)
               for p in _kernel_records((tmp_path / "k.cubin").read_bytes(), "linreg_sgd", KPARAM_INFO_V2)]
    assert sorted((ordinal, offset, size) for _, ordinal, offset, size in records) == expected


def test_write_cubin_takes_a_parameter_past_the_field():
    from bobc.sass import cubin
    cubin.check_parameters([(0, 8), (8, 16384)], 16392, "k")
    cubin.check_parameters([(0, 32764)], 32764, "k")
