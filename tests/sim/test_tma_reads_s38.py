"""A TMA copy's global reads are held to a load's rules (probe s38 tmacheck, docs/simulator.md).

The global memory a tiled TMA copy (UTMALDG) reads is its box's in-bounds elements: the tensor
map's address plus each in-bounds coordinate times its dimension's stride.  Elements outside the
tensor are filled with zero and read nothing (PTX ISA, "Tensors": out-of-bound accesses;
docs/tensor-maps.md, measured on the H200).  Those reads, like an LDG's, must lie inside one arena
resident, inside what the launch's kernel contract declares, and are recorded for the
launch-order check; before, the copy read them the way host steps read memory, checked against
nothing but the mapped buffers.

The kernel is examples/coppelius's nn product for sm_90 (64 x 64 boxes of binary16, A's tensor
K x M, B's N x K) with M = N = 128 and K = 160: K's last box (128..191) is clipped at 160, so every
row of A's last box column reads 32 elements and leaves 32 out of bounds.  The expected words come
from that geometry, not from the simulator.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bobc.certify.footprints import Footprint
from bobc.sim import kernel as sim_kernel
from bobc.sim.channel import Channel
from bobc.sim.faults import OutOfBounds, SimulationFault, UnorderedLaunches
from bobc.sim.memory import LaunchAccesses, Memory, Resident

M = N = 128
K = 160
PAD = 64 * 2                       # bytes after A's tensor in its buffer: what clipped elements would reach


def _gemm(map_offset: int = 0, oob_fill: str = "zero"):
    """(addresses, buffers, run(memory_hook)): the product with A's buffer PAD bytes longer than A's
    tensor (the padding written with NaN, so a clipped element read from it would show), the maps
    `map_offset` bytes into their buffer.  memory_hook(memory, at) adjusts the launch's Memory."""
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    from bobc.sass.generate import gemm, gemm_sm90
    from bobc.sim.kernel import buffer_addresses, run_kernel
    from tests.coppelius.test_kernels_gemm_sim import PREFIX, SOURCES
    rng = np.random.default_rng(11)
    a = np.concatenate([rng.standard_normal(M * K), np.full(PAD // 2, np.nan)]).astype(np.float16)
    buffers = {"a": a, "b": rng.standard_normal(K * N).astype(np.float16),
               "d": np.full(M * N, np.nan, np.float32), "maps": np.zeros(256 + map_offset, np.uint8)}
    at = buffer_addresses(buffers)
    block = gemm.pack_parameters(A=at["a"], B=at["b"], D=at["d"], Dh=0, R=0, bias=0, E=0, U=0, M=M, N=N, K=K,
                                 lda=K, ldb=N, ldd=N, ldh=N, flags=0)
    maps = b"".join(encode_tiled(TiledTensor("float16", address, (*dims, 1), (2 * ld, 2 * ld * dims[1]), (64, 64, 1),
                                             swizzle="128b", oob_fill=oob_fill))
                    for address, dims, ld in ((at["a"], (K, M), K), (at["b"], (N, K), N)))
    buffers["maps"][map_offset:] = np.frombuffer(maps, np.uint8)
    first = at["maps"] + map_offset
    block = block[:0x88] + struct.pack("<2Q", first, first + 128) + block[0x98:]
    source = (SOURCES / f"{gemm.VARIANTS['nn'].identity(PREFIX)}.sm_90.sass").read_text()

    def run(monkeypatch, hook=None):
        def memory(buffers_, residents):
            m = Memory(buffers_, residents)
            if hook:
                hook(m, at)
            made.append(m)
            return m
        made = []
        monkeypatch.setattr(sim_kernel, "Memory", memory)
        out = run_kernel(source, "sm_90", grid=gemm.grid(M, N, 1), block=(gemm.THREADS, 1, 1), params=block,
                         buffers=buffers, shared_bytes=gemm_sm90.shared_bytes())
        return out, made[0]
    return at, buffers, run


def _words(start: int, end: int) -> set[int]:
    return set(range(start // 4, -(-end // 4)))


def _declared(at, a_end: int) -> Footprint:
    """A contract footprint: A's tensor up to a_end, B's, the maps read; D written."""
    return Footprint(reads=[(at["a"], a_end), (at["b"], at["b"] + 2 * K * N), (at["maps"], at["maps"] + 256)],
                     writes=[(at["d"], at["d"] + 4 * M * N)])


def test_clipped_box_elements_read_nothing_and_the_rest_are_recorded(monkeypatch):
    """With a footprint of exactly A's tensor (not its padding) the launch runs, D is A x B (the
    clipped elements zero, not the NaN padding), and the words it read are A's tensor, B's and the
    two maps (the copies read them too): none of the padding the clipped elements would have
    reached."""
    at, buffers, run = _gemm()

    def hook(memory, at):
        memory.footprint = _declared(at, at["a"] + 2 * M * K)
        memory.accesses = LaunchAccesses()
    out, memory = run(monkeypatch, hook)
    a = buffers["a"][:M * K].astype(np.float64).reshape(M, K)
    b = buffers["b"].astype(np.float64).reshape(K, N)
    np.testing.assert_allclose(out["d"].reshape(M, N), a @ b, rtol=1e-3, atol=1e-3)
    reads, writes = memory.accesses.sets()
    expected = (_words(at["a"], at["a"] + 2 * M * K) | _words(at["b"], at["b"] + 2 * K * N)
                | _words(at["maps"], at["maps"] + 256))
    assert set(int(w) for w in reads) == expected
    assert set(int(w) for w in writes) == _words(at["d"], at["d"] + 4 * M * N)


def test_a_box_reading_past_the_contract_is_refused_naming_the_first_row(monkeypatch):
    """A contract declaring A's first 64 rows only (M x K would be 128 rows): block (0, 1)'s first
    copy of A (rows 64..127, K 0..63) reads row 64 first, K 0..63: 128 bytes at A + 64 x 320."""
    at, _, run = _gemm()
    with pytest.raises(OutOfBounds) as fault:
        run(monkeypatch, lambda memory, at: setattr(memory, "footprint", _declared(at, at["a"] + 2 * 64 * K)))
    message = fault.value.message
    assert "UTMALDG" in message and f"tensor map at {at['maps']:#x}" in message
    assert "reads bytes its kernel's contract does not say it reads or writes (in a, 20480 bytes in)" in message
    assert message.split("; first")[0].endswith(f"128 bytes at {at['a'] + 64 * 2 * K:#x}")
    assert "//@ tensormap" in fault.value.hint


def test_a_box_straying_into_another_resident_is_refused(monkeypatch):
    """A's buffer holding two residents, A's first 96 rows and the rest: a copy of rows 64..127
    reads both, and is refused at row 96 as an LDG straying into a neighbour is."""
    at, _, run = _gemm()
    split = 2 * 96 * K

    def hook(memory, at):
        residents = [r for r in memory.residents if r.name != "a"] + [
            Resident("a-head", at["a"], split), Resident("a-tail", at["a"] + split, 2 * M * K + PAD - split)]
        memory.__init__(memory.buffers, residents)
    with pytest.raises(OutOfBounds) as fault:
        run(monkeypatch, hook)
    message = fault.value.message
    assert "strays 0 bytes past the end of a-head" in message and "into a-tail" in message
    assert message.split("; first")[0].endswith(f"128 bytes at {at['a'] + split:#x}")


def test_a_tensor_map_not_64_byte_aligned_is_refused(monkeypatch):
    at, _, run = _gemm(map_offset=16)
    with pytest.raises(SimulationFault) as fault:
        run(monkeypatch)
    assert f"reads its tensor map at {at['maps'] + 16:#x}, not a multiple of 64" in fault.value.message


def test_a_tensor_map_filling_out_of_bounds_elements_with_nan_is_refused(monkeypatch):
    """A map whose OOB_NAN_FILL bit is set (CUDA's FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) would get
    the NaN bits the GPU writes, which nobody measured: refused, not filled with zero."""
    from bobc.sim.faults import Unmodeled
    at, _, run = _gemm(oob_fill="nan")
    with pytest.raises(Unmodeled) as fault:
        run(monkeypatch)
    assert f"a tensor map (at {at['maps']:#x}) with NaN out-of-bounds fill is not modeled" in fault.value.message


def _channel_with_writer(memory, written: int) -> Channel:
    """A channel whose earlier launch, not yet ordered before the next, wrote the word at `written`."""
    channel = Channel(memory, check_hazards=False, contracts=None)
    channel.unordered.append(("launch 0 (writer)", np.zeros(0, np.uint64),
                              np.array([written // 4], dtype=np.uint64), object()))
    return channel


def test_a_concurrent_writer_of_what_a_copy_reads_is_caught_and_of_clipped_bytes_is_not(monkeypatch):
    """The copy's recorded reads meet an unordered launch's write of A's last element (read by the
    clipped box), and not one of A's padding (which only clipped elements would have reached)."""
    at, _, run = _gemm()
    _, memory = run(monkeypatch, lambda memory, at: setattr(memory, "accesses", LaunchAccesses()))
    reads, writes = memory.accesses.sets()
    last = at["a"] + 2 * M * K - 2
    with pytest.raises(UnorderedLaunches) as fault:
        _channel_with_writer(memory, last)._ordered("launch 1 (product)", reads, writes)
    assert f"{last // 4 * 4:#x}" in fault.value.message and "launch 0 (writer)" in fault.value.message
    _channel_with_writer(memory, at["a"] + 2 * M * K + 4)._ordered("launch 1 (product)", reads, writes)


def test_a_tma_store_is_refused_by_name():
    """UTMASTG (cp.async.bulk.tensor from shared to global) is not modeled: refused by its name
    before it could write global memory unchecked."""
    from bobc.sass.assembler import assemble
    from bobc.sim import sass_frontend
    from bobc.sim.executor import Launch, LaunchGeometry
    from bobc.sim.faults import Unmodeled
    from bobc.targets import SM90
    code = assemble("[B------:R-:W-:-:S10] UTMASTG.2D [UR4], [UR8]\nEXIT", SM90).code
    instructions = sass_frontend.decode(code, SM90.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (store)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), SM90.nvdisasm_arch)
    with pytest.raises(Unmodeled) as caught:
        Launch(geometry, instructions, Memory([], []), check_hazards=False).run()
    assert "the simulator does not model UTMASTG.2D" in caught.value.message
