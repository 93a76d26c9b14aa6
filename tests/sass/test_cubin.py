"""The cubin writer: nvdisasm (an independent ELF reader) accepts our cubins and finds our code and records.

(The CUDA driver loading them and running Bob's kernels is tests/gpu/test_kernels.py.)
"""
from __future__ import annotations

import re
import subprocess

import pytest

from bobc.nvtools import nvdisasm
from bobc.sass import assemble_kernel
from bobc.sass.cubin import write_cubin
from bobc.sass.golden import KERNELS
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_nvdisasm_reads_our_cubin(arch, tmp_path, needs_nvdisasm):
    target = TARGETS[arch]
    assembled = assemble_kernel(KERNELS["bob-loss-gradient"], target)
    path = tmp_path / "k.cubin"
    path.write_bytes(write_cubin(assembled, "bob_loss_gradient", target, 64, 256))
    done = subprocess.run([nvdisasm(), "-hex", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr.lower() and "fatal" not in done.stderr.lower()
    out = done.stdout
    for attribute in ("EIATTR_REGCOUNT", "EIATTR_PARAM_CBANK", "EIATTR_CBANK_PARAM_SIZE",
                      "EIATTR_KPARAM_INFO", "EIATTR_EXIT_INSTR_OFFSETS", "EIATTR_MAX_THREADS"):
        assert attribute in out
    assert ".text.bob_loss_gradient" in out
    # the code inside the cubin decodes exactly as the raw stream does
    raw = [d.text for d in disassemble(assembled.code, target.nvdisasm_arch).lines]
    in_cubin = [re.sub(r"\s+", " ", m.group(1)).strip()
                for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* 0x", out)]
    strip = lambda t: re.sub(r"BRA .*", "BRA", t)   # the cubin listing names targets by label
    assert [strip(t) for t in in_cubin[:len(raw)]] == [strip(t) for t in raw]
    assert all(t == "NOP" for t in in_cubin[len(raw):])   # padding to 128 bytes
    assert (len(in_cubin) * 16) % 128 == 0


def test_parameter_bank_record(tmp_path):
    target = TARGETS["sm_90"]
    assembled = assemble_kernel(KERNELS["bob-adamw"], target)
    image = write_cubin(assembled, "bob_adamw", target, 72, 256)
    # PARAM_CBANK: size << 16 | parameter base, right after the section symbol index
    assert (72 << 16 | 0x210).to_bytes(4, "little") in image
    assert image[:4] == b"\x7fELF" and image[7] == 0x41
    assert int.from_bytes(image[48:52], "little") == target.elf_flags


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_barrier_count_is_ptxas_num_barriers(arch):
    """NUM_BARRIERS as ptxas writes it, kernel by kernel, read from nvdisasm's listing of ptxas's
    corpus3 cubin (the 'barriers' kernel uses barriers 0..2, five others barrier 0, five none)."""
    import gzip
    from pathlib import Path
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import barrier_count, code_barrier_count
    path = Path(__file__).parent / "data" / "listings" / f"corpus3.{arch}.lst.gz"
    text = gzip.decompress(path.read_bytes()).decode()
    ptxas = {}
    for section in re.split(r"//-+ \.nv\.info\.", text)[1:]:
        name = section.split()[0]
        section = section.split("\n//---")[0]           # up to the next section's header
        m = re.search(r"EIATTR_NUM_BARRIERS.*?\.byte\s+0x02, 0x4c\s+.*?\.byte\s+(0x[0-9a-f]+)", section, re.S)
        if m:
            ptxas[name] = int(m.group(1), 16)
    assembled = assemble_listing(text, TARGETS[arch])
    ours = {name: barrier_count(a) for name, a in assembled.items()}
    assert {k: v for k, v in ours.items() if v} == ptxas
    assert ptxas["barriers"] == 3
    # the same count read back from the machine code alone, as the QMD encoder reads a region
    from_code = {name: code_barrier_count(bytes(a.code), arch) for name, a in assembled.items()}
    assert {k: v for k, v in from_code.items() if v} == ptxas


def test_cluster_record_is_ptxas_cta_per_cluster(tmp_path, needs_nvdisasm):
    """write_cubin's cluster: the record nvdisasm names EIATTR_CTA_PER_CLUSTER with the shape, as in
    ptxas's cubin of a kernel of .reqnctapercluster 1, 1, 4 (the corpus listing of sm90_cluster.ptx);
    sm_86 has no clusters."""
    import gzip
    from pathlib import Path
    target = TARGETS["sm_90"]
    assembled = assemble_kernel(KERNELS["bob-adamw"], target)
    path = tmp_path / "k.cubin"
    path.write_bytes(write_cubin(assembled, "bob_adamw", target, 72, 256, cluster=(1, 1, 4)))
    listing = subprocess.run([nvdisasm(), "-hex", str(path)], capture_output=True, text=True, check=True).stdout

    def record(text):
        m = re.search(r"EIATTR_CTA_PER_CLUSTER.*?\.byte\s+0x04, 0x3d.*?\.word\s+(0x\w+)\s+.*?\.word\s+(0x\w+)\s+"
                      r".*?\.word\s+(0x\w+)", text, re.S)
        return tuple(int(x, 16) for x in m.groups()) if m else None

    ptxas = gzip.decompress((Path(__file__).parent / "data" / "listings" / "sm90_cluster.sm_90.lst.gz").read_bytes())
    assert record(listing) == record(ptxas.decode()) == (1, 1, 4)
    plain = tmp_path / "plain.cubin"
    plain.write_bytes(write_cubin(assembled, "bob_adamw", target, 72, 256))
    assert "CTA_PER_CLUSTER" not in subprocess.run([nvdisasm(), "-hex", str(plain)], capture_output=True,
                                                   text=True, check=True).stdout
    with pytest.raises(ValueError, match="no thread-block clusters"):
        write_cubin(assemble_kernel(KERNELS["bob-adamw"], TARGETS["sm_86"]), "bob_adamw", TARGETS["sm_86"], 72, 256,
                    cluster=(1, 1, 2))
