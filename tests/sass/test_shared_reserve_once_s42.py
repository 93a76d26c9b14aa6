"""sm_90's 1 KiB shared-memory reserve is counted once (probe s42 reserve; s41 newuser6 item 1).

Since session 41 an sm_90 `.shared` holds the system's first 0x400 bytes (bobc.targets
SMResources.shared_base), as ptxas's .nv.shared.<k> and libcuda's SHARED_MEMORY_SIZE do (the kernel's
bytes + 0x400: bench/results/cuda-launch-probe-h100-shared.md).  The block bound (227 KiB) and the
carve-out footprint (declared + 1 KiB) took the reserve off / added it again, so CUDA's documented
227 KiB opt-in maximum on 9.0 -- `.shared 0x39000` -- was refused by `bobc asm --arch sm_90`, and an
sm_90 block was charged 1 KiB more than it takes.

Independent oracles:
- ptxas 13.x -arch=sm_90a lays out 227 KiB (232448 bytes) of `.shared` variables as a 0x39000-byte
  .nv.shared.<k> and refuses 232449 ("uses too much shared data (0x38c01 bytes, 0x38c00 max)");
- the CUDA Programming Guide's 99 KB / 227 KB per block (8.6 / 9.0), and cuda_occupancy.h's rule for
  a block's share of the SM: its own bytes + reservedSharedMemPerBlock (1 KiB), rounded up to the
  carve-out steps of cudaOccAlignUpShmemSizeVoltaPlus (9.x: 0, 8, 16, 32, 64, 100, 132, 164, 196,
  228 KiB).  The footprints and carve-outs below are worked by hand from that rule.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.nvidia.encode import Carveout, shared_carveout
from bobc.nvtools import ptxas
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]
KERNEL = ".kernel k\n.shared {shared}\n        S2R R0, SR_TID.X ;\n        MOV R1, 0x400 ;\n        STS [R1], R0 ;\n        EXIT ;\n"

PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .shared .align 4 .b8 sa[{own}];
  .reg .b32 r<3>; .reg .b64 d<3>;
  mov.u32 r1, %tid.x;
  mov.u64 d1, sa;
  cvt.u64.u32 d2, r1;
  add.u64 d1, d1, d2;
  st.shared.u8 [d1], r1;
  ret;
}}
"""


def _sections(elf: bytes) -> dict[str, int]:
    """name -> size of each section of a 64-bit little-endian ELF (the ELF-64 spec's headers)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize) for k in range(shnum)]
    strtab = headers[shstrndx][4]
    name = lambda at: elf[strtab + at:elf.index(b"\0", strtab + at)].decode()     # noqa: E731
    return {name(h[0]): h[5] for h in headers}


def _asm(tmp_path, shared: str, arch: str, *extra: str) -> subprocess.CompletedProcess:
    source = tmp_path / "k.sass"
    source.write_text(KERNEL.format(shared=shared))
    return subprocess.run([sys.executable, "-m", "bobc", "asm", str(source), "--arch", arch, *extra,
                           "-o", str(tmp_path / "k.out")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def test_ptxas_lays_out_227_kib_of_sm90_variables_as_0x39000(tmp_path, needs_ptxas):
    """The oracle for the bound below: ptxas's section holds the reserve and 227 KiB of the kernel's own."""
    for own, ok in ((227 * 1024, True), (227 * 1024 + 1, False)):
        source, cubin = tmp_path / f"k{own}.ptx", tmp_path / f"k{own}.cubin"
        source.write_text(PTX.format(own=own))
        done = subprocess.run([ptxas(), "-arch=sm_90a", "-o", str(cubin), str(source)], capture_output=True, text=True)
        if ok:
            assert done.returncode == 0, done.stderr
            assert _sections(cubin.read_bytes())[".nv.shared.k"] == 0x39000
        else:
            assert done.returncode != 0 and "0x38c00 max" in done.stderr, done.stderr


def test_sm90_takes_the_227_kib_maximum_declared_with_its_reserve(tmp_path):
    done = _asm(tmp_path, "0x39000", "sm_90", "--cubin")
    assert done.returncode == 0, done.stderr
    # the cubin's section is ptxas's for 227 KiB of variables (the test above)
    assert _sections((tmp_path / "k.out").read_bytes())[".nv.shared.k"] == 0x39000


def test_one_byte_more_is_refused_naming_both_numbers(tmp_path):
    done = _asm(tmp_path, "0x39001", "sm_90")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "k.sass:2:9: error: .shared 0x39001: a block on sm_90 may use at most 233472 bytes" in done.stderr
    assert "232448 bytes of the block's own" in done.stderr and "0x400" in done.stderr
    assert "at most 0x39000 (233472)" in done.stderr


def test_sm86_keeps_its_99_kib():
    # the Programming Guide's 99 KB a block on 8.6, where the reserve lies past the block's bytes
    assert SM86.sm_resources.block_shared_bytes == SM86.sm_resources.block_own_shared_bytes == 99 * 1024
    assert SM90.sm_resources.block_own_shared_bytes == 227 * 1024
    assert SM90.sm_resources.block_shared_bytes == 227 * 1024 + 0x400


@pytest.mark.parametrize("target, declared, footprint", [
    (SM90, 0, 1024),                    # no shared memory: the reserve alone (libcuda: field 0x400, 32 blocks in 32 KiB)
    (SM90, 0x400, 1024),                # the reserve declared, nothing of its own
    (SM90, 0x4400, 0x4400),             # 16 KiB of its own + 1 KiB (libcuda's field for it is 0x4400)
    (SM90, 66816, 66816),               # the products' 66592 declared, in the field's 256-byte units
    (SM90, 0x39000, 228 * 1024),        # 227 KiB of its own + 1 KiB: the SM's largest step exactly
    (SM86, 0, 1024),
    (SM86, 16384, 17408),               # 16 KiB of its own from 0 + the reserve at the window's top
    (SM86, 99 * 1024, 100 * 1024),
], ids=lambda v: getattr(v, "name", v))
def test_a_blocks_footprint_counts_the_reserve_once(target, declared, footprint):
    assert target.sm_resources.block_shared_footprint(declared) == footprint


def test_the_products_take_196_kib_for_three_blocks_on_sm90():
    # Coppelius's sm_90 products: 128 threads, 96 registers, 66592 bytes (0x400 + four 16 KiB stages + 32).
    # Registers: 96 * 32 = 3072 a warp; 16384 // 3072 = 5 warps a sub-partition, 20 an SM, 5 blocks of 4;
    # threads allow 16, slots 32.  Each block takes 66816 (own 65792 in 256-byte units + 1 KiB): 196 KiB
    # (200704) holds 3, 228 KiB holds 3, 164 KiB 2; 64 KiB none, 100 KiB one.  Counting the reserve
    # twice (67840 a block) had held 196 KiB to 2 and asked for 228.
    assert shared_carveout(SM90, 128, 96, 66592) == Carveout(smallest=100, chosen=196, largest=228, blocks=3)


def test_the_largest_declaration_encodes_and_one_unit_more_does_not():
    assert shared_carveout(SM90, 128, 32, 0x39000) == Carveout(smallest=228, chosen=228, largest=228, blocks=1)
    assert shared_carveout(SM86, 128, 32, 99 * 1024) == Carveout(smallest=100, chosen=100, largest=100, blocks=1)
    for target, declared in ((SM90, 0x39000 + 256), (SM86, 99 * 1024 + 256)):
        with pytest.raises(BobcError, match="does not fit one") as refused:
            shared_carveout(target, 128, 32, declared)
        assert refused.value.hint == f"declare at most {target.sm_resources.block_shared_bytes} bytes of shared memory per block"
