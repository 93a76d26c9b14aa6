"""Every reader of a .sass source takes `bobc asm`'s bound through its one reader (bobc.sass.source):
a 1 GiB source is refused by its size, unread, with the same message, by the simulator
(run_kernel), the assembler, the kernel cache (a plan's kernels in build/check/sim) and the kernel
search (a variant's `.kernel` name) -- probe s29 asmrange finding 2: only `bobc asm` had a bound,
the others read the whole file.  The files are sparse (truncate): no gigabyte is written."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sass.source import SOURCE_LIMIT_BYTES

GIB = 1 << 30


def _sparse(path: Path, size: int = GIB) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def _message(path: Path, size: int = GIB) -> str:
    """`bobc asm`'s refusal of a source past the bound (tests/test_source_excerpt.py checks its CLI form)."""
    return (f"{path}: {size:,} bytes, more than this file can be ({SOURCE_LIMIT_BYTES:,} bytes at most are read) "
            f"(docs/limits.md: 4 MiB for a SASS source)")


def test_bobc_asm_gives_the_message(tmp_path):
    big = _sparse(tmp_path / "big.sass")
    done = subprocess.run([sys.executable, "-m", "bobc", "asm", str(big), "-o", str(tmp_path / "x.bin")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and done.stderr == f"bobc asm: error: {_message(big)}\n", done.stderr  # a file refused: 1 for every subcommand but diff (probe s30 cli finding 7)


def test_the_simulator_refuses_a_huge_source_unread(tmp_path):
    from bobc.sim.kernel import run_kernel

    big = _sparse(tmp_path / "big.sass")
    with pytest.raises(BobcError) as info:
        run_kernel(big, "sm_86", grid=1, block=32, params=[], buffers={"x": np.zeros(4, np.float32)})
    assert info.value.message == _message(big)
    assert info.value.exit_code == 1    # a file that is there but refused (README's exit codes), not a usage error


def test_the_simulator_reads_a_source_at_the_bound(tmp_path):
    from bobc.sim.kernel import run_kernel

    source = tmp_path / "k.sass"
    text = ".kernel k\n    EXIT ;\n"
    source.write_text(text)
    out = run_kernel(source, "sm_86", grid=1, block=32, params=[], buffers={"x": np.ones(4, np.float32)})
    assert (out["x"] == 1).all()
    source.write_text(text + "//" + "c" * (SOURCE_LIMIT_BYTES - len(text) - 2))
    assert source.stat().st_size == SOURCE_LIMIT_BYTES
    from bobc.sass.source import read_source

    assert read_source(source).startswith(text)      # at the bound: read, not refused
    _sparse(source, SOURCE_LIMIT_BYTES + 1)
    with pytest.raises(BobcError) as info:
        read_source(source)
    assert info.value.message == _message(source, SOURCE_LIMIT_BYTES + 1)
    assert info.value.exit_code == 1


def test_the_assembler_and_the_kernel_cache_refuse_a_huge_source_unread(tmp_path, monkeypatch):
    from bobc import kernel_cache
    from bobc.sass import assemble_kernel
    from bobc.targets import target_named

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    big = _sparse(tmp_path / "big.sass")
    for assemble in (assemble_kernel, kernel_cache.assemble_kernel):
        with pytest.raises(BobcError) as info:
            assemble(big, target_named("sm_90"))
        assert info.value.message == _message(big)


def test_the_kernel_search_refuses_a_huge_variant_unread(tmp_path):
    from bobc.kernel_search import find_source, kernel_name

    (tmp_path / "k.sass").write_text(".kernel k\n    EXIT\n")
    big = _sparse(tmp_path / "k.sm_90.sass")
    with pytest.raises(BobcError) as info:
        kernel_name(big, "k")
    assert info.value.message == _message(big)
    with pytest.raises(BobcError) as info:          # the variant's `.kernel` is checked against its base's
        find_source("k", [tmp_path], "sm_90")
    assert info.value.message == _message(big)


def test_a_fifo_source_is_refused_not_waited_on(tmp_path):
    from bobc.sim.kernel import run_kernel

    fifo = tmp_path / "k.sass"
    os.mkfifo(fifo)
    with pytest.raises(BobcError) as info:
        run_kernel(fifo, "sm_86", grid=1, block=32, params=[])
    assert info.value.message == f"{fifo}: a FIFO, not a regular file"


def test_the_certifiers_readers_give_the_message(tmp_path):
    """The certifier reads a kernel's contract, its code's parameter reads and its assembly's
    reads from the source too (bobc check of a kernel on its own, or a build past the kernel cache)."""
    from bobc.certify.kernels import assembled_reads, code_reads, parse_contract
    from bobc.targets import target_named

    big = _sparse(tmp_path / "big.sass")
    for read in (lambda: parse_contract(big), lambda: code_reads(big, b"", 0x210),
                 lambda: assembled_reads(big, target_named("sm_90"))):
        with pytest.raises(BobcError) as refused:
            read()
        assert str(refused.value) == _message(big)
