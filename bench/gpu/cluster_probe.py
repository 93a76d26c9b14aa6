"""What the H200 requires of a bobc-assembled kernel launched in thread-block clusters (sessions 23, 24):
small kernels and variants of the sm_90 product, each launched through CuPy from a cubin whose cluster
attribute (EIATTR_CTA_PER_CLUSTER) makes CUDA launch it in clusters, beside ptxas's own cubin of
tools/ptx_corpus/sm90_cluster.ptx, that cubin with one .nv.info record blanked at a time, and that cubin
with its .text replaced by ours.  Results: bench/results/cuda-cluster-launch-h200.md.

    python bench/gpu/cluster_probe.py build DIR          # here: assemble the cubins
    python3 bench/gpu/cluster_probe.py run DIR [GLOB]    # device: each in a process of its own

The small kernels: every block stores its rank in its shared memory; the cluster's barrier; rank 0 loads
rank 1's word through the shared window and writes it; a second barrier.  wide-*: the same on the
product's grid, rank 0 reading ranks 1..3 (wide-tail: with ptxas's fence after the last barrier)."""
import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sm90_cubin_records_probe as records_probe  # noqa: E402  (its ELF readers)

HEAD = """.kernel probe
.registers 32
S2R R0, SR_TID.X
S2R R1, SR_CgaCtaId
LDC.64 R10, c[0x0][param]
ULDC.64 UR4, c[0x0][memory_descriptor]
SHF.L.U32 R2, R0, 0x4, RZ
IADD3 R2, R2, 0x400, RZ
STS [R2], R1
"""
RELEASE = """[B------:R-:W-:-:S06] MEMBAR.ALL.GPU
[B------:R-:W-:Y:S00] ERRBAR
[B------:R-:W-:-:S08] CGAERRBAR
[B------:R-:W-:-:S01] UCGABAR_ARV
[B------:R-:W-:-:S01] UCGABAR_WAIT
[B------:R-:W-:-:S01] CCTL.IVALL
"""
TAIL = """ISETP.NE.U32.AND P1, PT, R1, RZ, PT
@P1 BRA hold
S2R R5, SR_SWINHI
IADD3 R4, R2, 0x1000000, RZ
{load}
IMAD.WIDE.U32 R10, R0, 0x4, R10
STG.E desc[UR4][R10.64], R6
hold:
[B------:R-:W-:-:S01] UCGABAR_ARV
[B------:R-:W-:-:S01] UCGABAR_WAIT
EXIT
"""
# the same with R1 kept as ptxas keeps it: the stack pointer, from bank 0 (c[0x0][0x28])
HEAD_SP = HEAD.replace("S2R R1, SR_CgaCtaId", "LDC R1, c[0x0][0x28]\nS2R R3, SR_CgaCtaId").replace(
    "STS [R2], R1", "STS [R2], R3")
# the shared address in the cluster-wide form ptxas gives a shared::cta address on sm_90: the
# block's rank in the top byte (CgaCtaId << 24 | offset)
HEAD_RANK = HEAD.replace("STS [R2], R1", "LEA R2, R1, R2, 0x18\nSTS [R2], R1")
KERNELS = {
    "barrier-only": HEAD + RELEASE + "EXIT\n",
    "rk-barrier-only": HEAD_RANK + RELEASE + "EXIT\n",
    "rk-ld32": HEAD_RANK + RELEASE + TAIL.format(load="LD.E R6, [R4]"),
    "rk-rel2": HEAD_RANK + RELEASE + TAIL.format(load="LD.E R6, [R4]").replace(
        "hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n", "hold:\n" + RELEASE),
    "rk-prmt": HEAD_RANK + RELEASE + TAIL.format(load="LD.E R6, [R4]").replace(
        "IADD3 R4, R2, 0x1000000, RZ", "MOV R7, 0x1\nPRMT R4, R7, 0x654, R2"),
    "rk-both": HEAD_RANK + RELEASE + TAIL.format(load="LD.E R6, [R4]").replace(
        "IADD3 R4, R2, 0x1000000, RZ", "MOV R7, 0x1\nPRMT R4, R7, 0x654, R2").replace(
        "hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n", "hold:\n" + RELEASE),
    "rk-rel128": HEAD_RANK + RELEASE + TAIL.format(load="LD.E.128 R12, [R4]").replace("], R6\nhold", "], R12\nhold").replace(
        "hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n", "hold:\n" + RELEASE),
    # rk-rel128 at the offsets the product's partials use (up to 0x43f0) in a block of its shared memory
    "rk-far128": (HEAD_RANK.replace("STS [R2], R1", "STS [R2+0x3800], R1") + RELEASE
                  + TAIL.format(load="LD.E.128 R12, [R4+0x3800]").replace("], R6\nhold", "], R12\nhold").replace(
                      "hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n",
                      "hold:\n" + RELEASE)),
    "rk-self32": HEAD_RANK + RELEASE + TAIL.format(load="LD.E R6, [R4]").replace("0x1000000, RZ", "0x0, RZ"),
    "rk-ld128": HEAD_RANK + RELEASE + TAIL.format(load="LD.E.128 R12, [R4]").replace("], R6\nhold", "], R12\nhold"),
    "sp-barrier-only": HEAD_SP + RELEASE + "EXIT\n",
    "ld32": HEAD + RELEASE + TAIL.format(load="LD.E R6, [R4]"),
    "ld128": HEAD + RELEASE + TAIL.format(load="LD.E.128 R12, [R4]").replace("], R6\nhold", "], R12\nhold"),
}
# the sm_90 product (nn, 2 stages) in clusters of (1, 1, S), as generated: split K through W, every
# shared address in the cluster-wide form.  Sessions 23-24 also built variants of the kernels' on-chip
# reduction here (their results: bench/results/cuda-cluster-launch-h200.md); the reduction was taken out
# of the kernels in session 27 and its variants with it (git history has them).
GEMM = {
    "gemm-cluster": lambda t: t,
}


def build(folder: Path) -> None:
    from bobc.nvtools import ptxas
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.targets import SM90
    folder.mkdir(parents=True, exist_ok=True)
    # the peer exchange on the product's grid: 48 clusters of (1, 1, 4), rank 0 reading ranks 1, 2 and 3
    wide = (HEAD_RANK + RELEASE + TAIL.format(load="LD.E.128 R12, [R4]\nIADD3 R4, R4, 0x1000000, RZ\n"
                                              "LD.E.128 R16, [R4]\nIADD3 R4, R4, 0x1000000, RZ\nLD.E.128 R20, [R4]\n"
                                              "FADD R12, R12, R16\nFADD R12, R12, R20")
            .replace("], R6\nhold", "], R12\nhold")
            .replace("hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n", "hold:\n" + RELEASE))
    (folder / "wide-ranks.sass").write_text(wide)
    one = (HEAD_RANK + RELEASE + TAIL.format(load="LD.E.128 R12, [R4]").replace("], R6\nhold", "], R12\nhold")
           .replace("hold:\n[B------:R-:W-:-:S01] UCGABAR_ARV\n[B------:R-:W-:-:S01] UCGABAR_WAIT\n", "hold:\n" + RELEASE))
    (folder / "wide-r1.sass").write_text(one)
    # ranks 1..3 loaded at once, each address in a register pair of its own (ptxas's form: no load
    # waits for the one before), and wide-ranks with ptxas's fence after the last barrier
    (folder / "wide-par.sass").write_text(wide.replace(
        "IADD3 R4, R2, 0x1000000, RZ\nLD.E.128 R12, [R4]\nIADD3 R4, R4, 0x1000000, RZ\nLD.E.128 R16, [R4]\n"
        "IADD3 R4, R4, 0x1000000, RZ\nLD.E.128 R20, [R4]\n",
        "MOV R7, R5\nMOV R9, R5\nIADD3 R4, R2, 0x1000000, RZ\nIADD3 R6, R2, 0x2000000, RZ\n"
        "IADD3 R8, R2, 0x3000000, RZ\nLD.E.128 R12, [R4]\nLD.E.128 R16, [R6]\nLD.E.128 R20, [R8]\n"))
    (folder / "wide-tail.sass").write_text(wide.replace(
        "CCTL.IVALL\nEXIT", "CCTL.IVALL\n[B------:R-:W-:-:S06] MEMBAR.ALL.GPU\n[B------:R-:W-:Y:S00] ERRBAR\n"
        "[B------:R-:W-:-:S06] CGAERRBAR\n[B012345:R-:W-:-:S01] CCTL.IVALL\nEXIT"))
    # the variables, in the file name: -g1 one cluster (grid (1, 1, 4)), -g2 ptxas's two (grid (2, 1, 4))
    # instead of the product's 48, -s4k blocks of 4 KiB instead of its 33808 bytes; wide-r1 reads rank 1 alone
    for stem in ("wide-ranks", "wide-r1", "wide-par", "wide-tail"):
        image = write_cubin(assemble_kernel(folder / f"{stem}.sass", SM90), "probe", SM90, 8, 128, cluster=(1, 1, 4))
        for suffix in ("", "-g1", "-g2", "-s4k", "-g1-s4k", "-g2-s4k"):
            (folder / f"{stem}-4{suffix}.cubin").write_bytes(image)
    for name, text in KERNELS.items():
        source = folder / f"{name}.sass"
        source.write_text(text)
        assembled = assemble_kernel(source, SM90)
        for style in ("minimal", "ptxas"):
            for reserved in (False, True):
                (folder / f"{name}-{style}{'-reserved' if reserved else ''}.cubin").write_bytes(
                    write_cubin(assembled, "probe", SM90, 8, 128, style=style, cluster=(1, 1, 2),
                                reserved_shared=reserved))
    from bobc.sass.generate import gemm, gemm_sm90
    for name, change in GEMM.items():
        source = folder / f"{name}.sass"
        source.write_text(change(gemm_sm90.generate(gemm.VARIANTS["nn"], "coppelius-gemm", 2)))
        assembled = assemble_kernel(source, SM90)
        for cluster in ((1, 1, 4), None):
            for reserved in (False, True):
                (folder / f"{name}-{4 if cluster else 1}{'-reserved' if reserved else ''}.cubin").write_bytes(
                    write_cubin(assembled, assembled.kernel_name, SM90, gemm.PARAMETER_BYTES + 16, 128,
                                cluster=cluster, reserved_shared=reserved))
    subprocess.run([ptxas(), "-arch=sm_90a", "-O3", "tools/ptx_corpus/sm90_cluster.ptx", "-o",
                    str(folder / "ptxas-cluster_sum.cubin")], check=True)
    elf = (folder / "ptxas-cluster_sum.cubin").read_bytes()
    # ptxas's own kernel on the product's grid, with its 4 KiB or the product's 33808 bytes of shared memory
    for suffix in ("", "-s33k"):
        (folder / f"ptxwide-cluster_sum{suffix}.cubin").write_bytes(elf)
    _swaps(folder, elf)
    for attribute in sorted({attr for name in (".nv.info.cluster_sum", ".nv.info")
                             for _, _, attr in _records(elf, name)}):
        patched = bytearray(elf)
        for name in (".nv.info.cluster_sum", ".nv.info"):
            for at, _, attr in _records(elf, name):
                if attr == attribute:
                    patched[at + 1] = 0x01          # EIATTR_PAD
        (folder / f"ptxas-without-{attribute:#04x}.cubin").write_bytes(bytes(patched))


def _swaps(folder: Path, elf: bytes) -> None:
    """ptxas's cubin with its .text replaced (by bobc's assembly of ptxas's own listing, and by the
    barrier-only kernel padded to the same size), and bobc's cubin around bobc's assembly of the
    listing: whether the code or the cubin's records decide."""
    from bobc.nvtools import nvdisasm
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import _padded_text, write_cubin
    from bobc.sass import assemble_kernel
    from bobc.sass.encoder import Encoder
    from bobc.sass.syntax import Control, parse_instruction
    from bobc.targets import SM90
    listing = subprocess.run([nvdisasm(), "-hex", str(folder / "ptxas-cluster_sum.cubin")], check=True,
                             capture_output=True, text=True).stdout
    assembled = assemble_listing(listing, SM90, source_name="cluster_sum.lst")["cluster_sum"]
    offset, size = _sections(elf)[".text.cluster_sum"]
    text = _padded_text(assembled, SM90)
    print("bobc's assembly of ptxas's listing is ptxas's text:", text == elf[offset:offset + size])
    (folder / "swap-ptxas-own.cubin").write_bytes(elf[:offset] + text + elf[offset + size:])
    (folder / "ourcubin-ptxas-listing.cubin").write_bytes(
        write_cubin(assembled, "cluster_sum", SM90, 8, 128, style="ptxas", static_shared=4096, cluster=(1, 1, 4)))
    barrier = assemble_kernel(folder / "barrier-only.sass", SM90)
    code = bytearray(barrier.code)
    nop = Encoder("sm_90").encode(parse_instruction("NOP"), 0, Control(stall=0, yield_bit=0).bits())
    while len(code) < size:
        code += nop.to_bytes(16, "little")
    (folder / "swap-barrier-only.cubin").write_bytes(elf[:offset] + bytes(code[:size]) + elf[offset + size:])
    for name in ("rk-ld32", "rk-self32"):
        body = bytearray(assemble_kernel(folder / f"{name}.sass", SM90).code)
        while len(body) < size:
            body += nop.to_bytes(16, "little")
        (folder / f"swap-{name}.cubin").write_bytes(elf[:offset] + bytes(body[:size]) + elf[offset + size:])
    barrier = assemble_kernel(folder / "sp-barrier-only.sass", SM90)
    code = bytearray(barrier.code)
    while len(code) < size:
        code += nop.to_bytes(16, "little")
    (folder / "swap-sp-barrier-only.cubin").write_bytes(elf[:offset] + bytes(code[:size]) + elf[offset + size:])


def _sections(elf: bytes) -> dict:
    """name -> (file offset, size), from the records probe's reader."""
    return {name: (offset, size) for name, (_, offset, size) in records_probe.sections(elf).items()}


def _records(elf: bytes, section: str) -> list:
    """(file offset, format, attribute) of each .nv.info record."""
    return records_probe.records(elf, section)


def run_one(path: Path) -> None:
    import cupy as cp
    import numpy as np
    module = cp.RawModule(path=str(path))
    out = cp.zeros(1024, dtype=cp.uint32)
    if path.name.startswith("gemm"):
        return run_gemm(path)
    if path.name.startswith("ptxwide"):
        function = module.get_function("cluster_sum")
        extra = 33808 - 4096 if "-s33k" in path.name else 0
        function.max_dynamic_shared_size_bytes = extra
        function((12, 4, 4), (128,), (out,), shared_mem=extra)
    elif path.name.startswith(("ptxas", "swap", "ourcubin")):
        module.get_function("cluster_sum")((2, 1, 4), (128,), (out,))
    else:
        function = module.get_function("probe")
        shared = 4096 if "-s4k" in path.name else 33808
        function.max_dynamic_shared_size_bytes = shared
        grid = ((1, 1, 4) if "-g1" in path.name else (2, 1, 4) if "-g2" in path.name else (12, 4, 4)) \
            if path.name.startswith("wide") else (1, 1, 2)
        function(grid, (128,), (out,), shared_mem=shared)
    cp.cuda.Device().synchronize()
    print(path.name, "ok", np.unique(out.get()[:128]).tolist())


def run_gemm(path: Path) -> None:
    """x' = g W + b + h's shape (nn, 256 x 768 x 3072, flags 1 | 2): 4 splits; D's digest."""
    import hashlib
    import cupy as cp
    import numpy as np
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    from bobc.sass.generate import gemm, gemm_sm90
    m, n, k, splits = 256, 768, 3072, 4
    rng = np.random.default_rng(7)
    a = cp.asarray((rng.standard_normal(m * k) * 0.5).astype(np.float16))
    b = cp.asarray((rng.standard_normal(k * n) * 0.05).astype(np.float16))
    bias = cp.asarray(rng.standard_normal(n).astype(np.float32))
    r = cp.asarray(rng.standard_normal(m * n).astype(np.float32))
    d = cp.zeros(m * n, dtype=cp.float32)
    w = cp.zeros(gemm.split_workspace_bytes(m, n, splits) // 4, dtype=cp.float32)
    tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
    grid, block = gemm.split_parameters("nn", splits, w.data.ptr, tickets.data.ptr, A=a.data.ptr, B=b.data.ptr,
                                        D=d.data.ptr, R=r.data.ptr, bias=bias.data.ptr, M=m, N=n, K=k, lda=k, ldb=n,
                                        ldd=n, ldh=n, flags=1 | 2)
    part = k // splits
    maps = cp.asarray(np.frombuffer(b"".join(encode_tiled(TiledTensor("float16", address, (*dims, splits),
                                                                      (2 * ld, 2 * stride), (64, 64, 1), swizzle="128b"))
                                             for address, dims, ld, stride in ((a.data.ptr, (k, m), k, part),
                                                                               (b.data.ptr, (n, k), n, part * n))),
                                    dtype=np.uint8))
    words = block + np.array([maps.data.ptr, maps.data.ptr + 128], dtype=np.uint64).tobytes()
    module = cp.RawModule(path=str(path))
    function = module.get_function("coppelius_gemm_nn")
    function.max_dynamic_shared_size_bytes = gemm_sm90.shared_bytes(2)
    shared = gemm_sm90.shared_bytes(2) + (0x4400 + 0x400 if "outside" in path.name else 0)
    function.max_dynamic_shared_size_bytes = shared
    function(grid, (128,), tuple(np.frombuffer(words, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()
    print(path.name, "ok D", hashlib.sha256(d.get().tobytes()).hexdigest()[:16], "W written",
          bool((w.get() != 0).any()), "tickets", int(tickets.get().sum()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["build", "run", "one"],
                        help="build: assemble the cubins into DIR (here); run: each cubin of DIR in a process of "
                             "its own (on the GPU); one: a single cubin (what run starts)")
    parser.add_argument("folder", type=Path, metavar="DIR", help="DIR (one: the cubin)")
    parser.add_argument("glob", nargs="?", default="*.cubin", metavar="GLOB", help="run: the cubins of DIR to run")
    args = parser.parse_args()
    mode, folder = args.mode, args.folder
    if mode == "build":
        build(folder)
    elif mode == "one":
        run_one(folder)
    else:
        for cubin in sorted(folder.glob(args.glob)):
            result = subprocess.run([sys.executable, __file__, "one", str(cubin)], capture_output=True, text=True,
                                    timeout=60)
            lines = (result.stdout + result.stderr).strip().splitlines()
            print(cubin.name, "rc", result.returncode, lines[-1] if lines else "")


if __name__ == "__main__":
    main()
