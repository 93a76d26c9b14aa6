#!/usr/bin/env python3
"""Which of ptxas's cubin records does an sm_90 kernel with TMA copies and mbarriers need?

bobc's assembly of ptxas's own TMA tile-load kernel (tools/ptx_corpus/sm90_tma_tile_load.ptx),
instruction for instruction the same, copied nothing on the H200 when wrapped by
bobc.sass.cubin.write_cubin (tests/gpu/test_sm90_async_kernels.py, session 14), and the product
kernel hung.  The difference is the cubin's metadata.  This probe starts from ptxas's cubin
(tests/gpu/prepare.sh writes it to .device/sm90-async) and neutralises one thing at a time -- an
.nv.info record of the kernel (its attribute byte set to EIATTR_PAD, 0x01) or the
.nv.shared.reserved.0 section (renamed) -- and runs the copy in a process of its own (a timeout
is a hang), reporting whether the tile still lands as ptxas's unmodified cubin lands it.  It also
runs ptxas's cubin with its .text replaced by bobc's assembly of the listing.

    PYTHONPATH=$PWD/compiler:/tmp/site python3 bench/gpu/sm90_cubin_records_probe.py OUTDIR
"""
from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
PREBUILT = REPO / ".device" / "sm90-async"
KERNEL = "tma_tile_load_2d"
PAD = 0x01

RUNNER = r"""
import sys, numpy as np, cupy as cp
sys.path.insert(0, sys.argv[3])
from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
rng = np.random.default_rng(7)
tensor = cp.asarray(rng.standard_normal((256, 768)).astype(np.float16))
t = TiledTensor("float16", int(tensor.data.ptr), (768, 256), (1536,), (64, 128), swizzle="128b")
descriptor = cp.asarray(np.frombuffer(encode_tiled(t), dtype=np.uint8))
nbytes = t.box_bytes()
out = cp.zeros(nbytes + 16, dtype=cp.uint8)
kernel = cp.RawModule(path=sys.argv[1]).get_function("tma_tile_load_2d")
kernel((1,), (128,), (np.uint64(descriptor.data.ptr), np.uint64(out.data.ptr), np.uint32(64), np.uint32(128),
                      np.uint32(0), np.uint32(nbytes), np.uint32(nbytes)), shared_mem=int(sys.argv[4]) + nbytes)
cp.cuda.Device().synchronize()
np.save(sys.argv[2], cp.asnumpy(out))
"""


def sections(elf: bytes) -> dict[str, tuple[int, int, int]]:
    """name -> (header offset, file offset, size)."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [shoff + i * entsize for i in range(count)]
    names_offset = struct.unpack_from("<Q", elf, headers[names_index] + 0x18)[0]
    out = {}
    for h in headers:
        name_at = struct.unpack_from("<I", elf, h)[0]
        end = elf.index(b"\0", names_offset + name_at)
        name = elf[names_offset + name_at:end].decode()
        out[name] = (h, struct.unpack_from("<Q", elf, h + 0x18)[0], struct.unpack_from("<Q", elf, h + 0x20)[0])
    return out


def records(elf: bytes, section: str) -> list[tuple[int, int, int]]:
    """(file offset, format, attribute) of each .nv.info record."""
    _, offset, size = sections(elf)[section]
    at, out = offset, []
    while at < offset + size:
        fmt, attr = elf[at], elf[at + 1]
        out.append((at, fmt, attr))
        if fmt == 0x04:
            at += 4 + struct.unpack_from("<H", elf, at + 2)[0]
        else:
            at += 4
    return out


def without_attribute(elf: bytes, attribute: int) -> bytes | None:
    patched = bytearray(elf)
    hits = 0
    for name in (f".nv.info.{KERNEL}", ".nv.info"):
        for at, _, attr in records(elf, name):
            if attr == attribute:
                patched[at + 1] = PAD
                hits += 1
    return bytes(patched) if hits else None


def without_reserved_shared(elf: bytes) -> bytes | None:
    table = sections(elf)
    if ".nv.shared.reserved.0" not in table:
        return None
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    entsize, _, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    names_offset = struct.unpack_from("<Q", elf, shoff + names_index * entsize + 0x18)[0]
    name_at = struct.unpack_from("<I", elf, table[".nv.shared.reserved.0"][0])[0]
    patched = bytearray(elf)
    at = names_offset + name_at + len(".nv.shared.")
    patched[at] = ord("x")                                   # .nv.shared.xeserved.0
    return bytes(patched)


def with_our_text(elf: bytes) -> bytes | None:
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import _padded_text
    from bobc.targets import TARGETS
    assembled = assemble_listing((PREBUILT / "tma_tile_load.lst").read_text(), TARGETS["sm_90"],
                                 source_name="tma_tile_load.lst")[KERNEL]
    _, offset, size = sections(elf)[f".text.{KERNEL}"]
    text = _padded_text(assembled, TARGETS["sm_90"])
    if len(text) != size:
        print(f"our text is {len(text)} bytes, ptxas's {size}", flush=True)
        return None
    print(f"our text equals ptxas's: {text == elf[offset:offset + size]}", flush=True)
    return elf[:offset] + text + elf[offset + size:]


def with_static_shared(elf: bytes, size: int) -> bytes:
    """ptxas's cubin with its kernel's .nv.shared section declaring `size` bytes."""
    header = sections(elf)[f".nv.shared.{KERNEL}"][0]
    patched = bytearray(elf)
    struct.pack_into("<Q", patched, header + 0x20, size)
    return bytes(patched)


def with_renamed(elf: bytes, old: bytes, new: bytes) -> bytes | None:
    """ptxas's cubin with one string of its tables replaced by another of the same length."""
    assert len(old) == len(new)
    at = elf.find(old + b"\0")
    return None if at < 0 else elf[:at] + new + elf[at + len(old):]


def ours(style: str, static_shared: int = 0, reserved_shared: bool = False) -> bytes:
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import write_cubin
    from bobc.targets import TARGETS
    assembled = assemble_listing((PREBUILT / "tma_tile_load.lst").read_text(), TARGETS["sm_90"],
                                 source_name="tma_tile_load.lst")[KERNEL]
    return write_cubin(assembled, KERNEL, TARGETS["sm_90"], 36, 128, style=style, static_shared=static_shared,
                       reserved_shared=reserved_shared)


def run(path: Path, out: Path, low: int = 2048) -> str:
    """Launch the copy (dynamic shared memory: `low` bytes below the tile, then the tile)."""
    try:
        done = subprocess.run([sys.executable, "-c", RUNNER, str(path), str(out), str(REPO / "compiler"), str(low)],
                              capture_output=True, text=True, timeout=25)
    except subprocess.TimeoutExpired:
        return "hang"
    if done.returncode:
        return "error: " + (done.stderr.strip().splitlines() or ["?"])[-1][:160]
    return "ran"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="folder for the patched cubins and their results")
    folder = parser.parse_args().outdir
    import numpy as np
    folder.mkdir(parents=True, exist_ok=True)
    elf = (PREBUILT / "tma_tile_load.cubin").read_bytes()
    attributes = sorted({attr for name in (f".nv.info.{KERNEL}", ".nv.info") for _, _, attr in records(elf, name)})
    print("records of the kernel: " + ", ".join(f"{a:#04x}" for a in attributes), flush=True)
    variants = {"ptxas": elf}
    for attr in attributes:
        patched = without_attribute(elf, attr)
        if patched:
            variants[f"ptxas-without-{attr:#04x}"] = patched
    variants["ptxas-without-reserved-shared"] = without_reserved_shared(elf)
    variants["ptxas-with-our-text"] = with_our_text(elf)
    variants["ptxas-static-shared-0"] = with_static_shared(elf, 0)
    variants["ptxas-reservedSmem-symbol-renamed"] = with_renamed(elf, b".nv.reservedSmem.offset0",
                                                                 b".nv.reservedSmem.offsetX")
    variants["ptxas-alias-symbol-renamed"] = with_renamed(elf, b"__nv_reservedSMEM_offset_0_alias",
                                                          b"__nv_reservedSMEM_offset_X_alias")
    stripped = elf
    for attr in attributes:
        if attr not in (0x0A, 0x17, 0x19, 0x2F):
            stripped = without_attribute(stripped, attr) or stripped
    variants["ptxas-only-param-and-regcount-records"] = stripped
    variants["ours-reserved-shared"] = ours("minimal", reserved_shared=True)
    variants["ours-reserved-and-static-0x800"] = ours("minimal", 0x800, reserved_shared=True)
    variants["ours-minimal"] = ours("minimal")
    variants["ours-ptxas-style"] = ours("ptxas")
    variants["ours-static-shared-0x800"] = ours("minimal", 0x800)
    variants["ours-dynamic-0x1000-below"] = ours("minimal")
    reference, results = None, {}
    for name, blob in variants.items():
        if blob is None:
            continue
        path = folder / f"{name}.cubin"
        path.write_bytes(blob)
        status = run(path, folder / f"{name}.npy", 4096 if name == "ours-dynamic-0x1000-below" else 2048)
        if status == "ran":
            got = np.load(folder / f"{name}.npy")
            if reference is None:
                reference = got
            status = "lands as ptxas's" if np.array_equal(got, reference) else \
                f"differs ({int(np.count_nonzero(got != reference))} bytes)"
        results[name] = status
        print(f"{name:36s} {status}", flush=True)
    (folder / "records-probe.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
