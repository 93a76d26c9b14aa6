"""The simulator's speed-ups keep every bit and every fault (probe s38 simspeed).

- Memory._buffer_of bisects the sorted, disjoint buffers: the buffer a linear scan finds (the
  first holding the bytes), for every address and size around each buffer, zero-size ones too.
- A TMA copy (op_UTMALDG) reads its box's rows at once, not one Memory.read per row (a million an
  update of seed 004's host); since probe s38 tmacheck the rows are first held to the residents
  as a load's addresses are, faulting at the first row outside them.
- The control-code checker's per-instruction plans are shared by the launches of one decoded code
  list: each instruction is planned once, not once a launch.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bobc.sim import hazards
from bobc.sim.memory import Buffer, Memory


def _linear(memory: Memory, address: int, size: int):
    for b in memory.buffers:
        if b.address <= address and address + size <= b.end:
            return b
    return None


def test_buffer_of_is_the_first_buffer_holding_the_bytes():
    buffers = [Buffer("a", 0x1000, np.zeros(0x100, np.uint8)), Buffer("z", 0x1100, np.zeros(0, np.uint8)),
               Buffer("b", 0x1100, np.zeros(0x40, np.uint8)), Buffer("c", 0x2000, np.zeros(8, np.uint8)),
               Buffer("e", 0x3000, np.zeros(0, np.uint8))]
    memory = Memory(buffers, [])
    edges = {x + d for b in buffers for x in (b.address, b.end) for d in (-9, -1, 0, 1, 8)}
    for address in sorted(edges | {0, 0x1080, 0x2004, 1 << 40}):
        for size in (0, 1, 2, 8, 0x40, 0x100, 0x101):
            assert memory._buffer_of(address, size) is _linear(memory, address, size), (hex(address), size)


def test_checker_plans_each_instruction_once_for_the_launches_of_one_code(monkeypatch):
    from bobc.sim.sass_frontend import Control, Instruction, Operand
    control = Control(stall=4, yield_=0, write_scoreboard=7, read_scoreboard=7, wait_mask=0, reuse=0)
    code = [Instruction(0x0, "IADD3 R1, R2, R3, RZ", "IADD3", (), 7, False,
                        (Operand("reg", 1), Operand("reg", 2), Operand("reg", 3), Operand("reg", 255)), control),
            Instruction(0x10, "EXIT", "EXIT", (), 7, False, (), control)]
    planned = []
    plan = hazards.Checker._plan
    monkeypatch.setattr(hazards.Checker, "_plan", lambda self, ins: planned.append(ins.pc) or plan(self, ins))
    for launch in ("first", "second", "third"):
        checker = hazards.Checker(launch, "SM90", code)
        for ins in code:
            checker.issue(ins)
    assert sorted(planned) == [0x0, 0x10]
    other = list(code)                       # another list (another kernel's decoding): planned afresh
    checker = hazards.Checker("fourth", "SM90", other)
    for ins in other:
        checker.issue(ins)
    assert sorted(planned) == [0x0, 0x0, 0x10, 0x10]


def _gemm_sm90(pitch_of_a: int | None = None):
    """tests/coppelius's nn product on sm_90 (TMA copies of 64 x 64 boxes), M = N = 128, K = 160;
    pitch_of_a: the elements from one row of A to the next in A's tensor map (K, unless given: a
    longer pitch puts the later rows past A's buffer, in no mapped buffer)."""
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    from bobc.sass.generate import gemm, gemm_sm90
    from bobc.sim.kernel import buffer_addresses, run_kernel
    from tests.coppelius.test_kernels_gemm_sim import PREFIX, SOURCES
    m = n = 128
    k = 160
    rng = np.random.default_rng(7)
    buffers = {"a": rng.standard_normal(m * k).astype(np.float16), "b": rng.standard_normal(k * n).astype(np.float16),
               "d": np.full(m * n, np.nan, np.float32), "maps": np.zeros(256, np.uint8)}
    at = buffer_addresses(buffers)
    block = gemm.pack_parameters(A=at["a"], B=at["b"], D=at["d"], Dh=0, R=0, bias=0, E=0, U=0, M=m, N=n, K=k,
                                 lda=k, ldb=n, ldd=n, ldh=n, flags=0)
    maps = b"".join(encode_tiled(TiledTensor("float16", address, (*dims, 1), (2 * ld, 2 * ld * dims[1]), (64, 64, 1),
                                             swizzle="128b"))
                    for address, dims, ld in ((at["a"], (k, m), pitch_of_a or k), (at["b"], (n, k), n)))
    buffers["maps"][:] = np.frombuffer(maps, np.uint8)
    block = block[:0x88] + struct.pack("<2Q", at["maps"], at["maps"] + 128) + block[0x98:]
    variant = gemm.VARIANTS["nn"]
    source = (SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass").read_text()
    return at, lambda: run_kernel(source, "sm_90", grid=gemm.grid(m, n, 1), block=(gemm.THREADS, 1, 1), params=block,
                                  buffers=buffers, shared_bytes=gemm_sm90.shared_bytes())


def test_a_tma_copy_reads_its_box_at_once(monkeypatch):
    from bobc.sim import executor
    _, run = _gemm_sm90()
    copies, reads = [], []
    copy, read = executor.Launch.op_UTMALDG, Memory.read
    monkeypatch.setattr(executor.Launch, "op_UTMALDG",
                        lambda self, ins, mods, o, mask: copies.extend(self._first_lanes(mask)) or copy(self, ins, mods, o, mask))
    monkeypatch.setattr(Memory, "read", lambda self, *a, **k: reads.append(a) or read(self, *a, **k))
    run()
    assert copies and len(reads) <= 2 * len(copies) + 4   # the tensor map per copy, not a read per box row


def test_a_tma_box_past_its_buffer_faults_at_its_first_unmapped_row():
    """A's map steps 640 elements (1280 bytes) a row where A's buffer holds 128 rows of 160 (40,960
    bytes): block 0's first copy (rows 0..63, K 0..63) reads rows 0..31 and faults at row 32, the
    128 bytes at A + 32 x 1280, the first row past the buffer, as the row-by-row reads always did --
    now as a load does, outside every resident (probe s38 tmacheck: a copy's rows are held to the
    residents before any is read)."""
    from bobc.sim.faults import OutOfBounds
    at, run = _gemm_sm90(pitch_of_a=640)
    with pytest.raises(OutOfBounds) as fault:
        run()
    assert f"lies outside every arena resident (0 bytes past the end of a [{at['a']:#x}" in fault.value.message
    assert fault.value.message.split("; first")[0].endswith(f"128 bytes at {at['a'] + 32 * 1280:#x}")


def test_the_order_check_finds_intersect1d_s_first_common_word(monkeypatch):
    """channel._first_common is the first word np.intersect1d finds, on sorted distinct words of
    every overlap shape, and the check no longer sorts the two launches' words together."""
    from bobc.sim import channel
    rng = np.random.default_rng(3)
    for size_a, size_b, span in ((0, 5, 10), (5, 0, 10), (1, 1, 2), (50, 7, 60), (7, 50, 60), (300, 300, 100_000),
                                 (40, 40, 40)):
        for _ in range(20):
            a = np.unique(rng.integers(0, span, size_a).astype(np.uint64))
            b = np.unique(rng.integers(0, span, size_b).astype(np.uint64))
            common = np.intersect1d(a, b, assume_unique=True)
            assert channel._first_common(a, b) == (int(common[0]) if common.size else None)
    monkeypatch.setattr(np, "intersect1d", lambda *a, **k: pytest.fail("the order check sorted both word sets"))
    assert channel._first_common(np.arange(5, dtype=np.uint64), np.arange(3, 9, dtype=np.uint64)) == 3
