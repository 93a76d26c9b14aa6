"""The coppelius-gemm kernels: generated sources are current, assemble for both targets,
decode cleanly with nvdisasm, fit their register budget, keep their contract, respect the
tensor cores' fixed latency, and the NumPy reference computes what the contract says.

Numerics of the kernels themselves: tests/coppelius/sim_kernels_gemm.py (the simulator's
one-kernel API) and tests/gpu/test_coppelius_gemm.py (the H200).
"""
from __future__ import annotations

import importlib.util
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from bobc.certify.kernels import check_code_reads, parse_contract
from bobc.sass import assemble_kernel
from bobc.sass.generate import gemm
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import Control
from bobc.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
VARIANTS = sorted(gemm.VARIANTS)
CASES = [(v, a) for v in VARIANTS for a in ("sm_86", "sm_90")]


def source(variant: str) -> Path:
    return SOURCES / f"coppelius-gemm-{variant}.sass"


def load_reference():
    path = REPO / "examples" / "coppelius" / "coppelius_model" / "ref_gemm.py"
    spec = importlib.util.spec_from_file_location("coppelius_ref_gemm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("variant", VARIANTS)
def test_committed_source_is_what_the_generator_emits(variant):
    assert source(variant).read_text(encoding="utf-8") == gemm.generate(gemm.VARIANTS[variant], PREFIX)


def test_generator_check_mode_names_a_stale_file(tmp_path, capsys):
    gemm.write_all(tmp_path, PREFIX)
    assert gemm.main(["--prefix", PREFIX, "--check", str(tmp_path)]) == 0
    stale = tmp_path / "coppelius-gemm-nt.sass"
    stale.write_text(stale.read_text() + "// edited\n")
    assert gemm.main(["--prefix", PREFIX, "--check", str(tmp_path)]) == 1
    assert "coppelius-gemm-nt.sass: differs" in capsys.readouterr().err


@pytest.mark.parametrize("variant,arch", CASES, ids=[f"{v}.{a}" for v, a in CASES])
def test_assembles_within_its_register_budget(variant, arch):
    assembled = assemble_kernel(source(variant), TARGETS[arch])
    assert assembled.kernel_name == f"coppelius_gemm_{variant}"
    assert assembled.register_budget == gemm.REGISTERS
    assert assembled.registers <= gemm.REGISTERS


@pytest.mark.parametrize("variant,arch", CASES, ids=[f"{v}.{a}" for v, a in CASES])
def test_nvdisasm_decodes_every_word_and_reads_back_the_same_code(variant, arch):
    from bobc.sass import assemble
    assembled = assemble_kernel(source(variant), TARGETS[arch])
    decoded = disassemble(assembled.code, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    assert len(decoded.lines) == len(assembled.code) // 16
    texts = [d.text for d in decoded.lines]
    # the tensor-core forms are there as intended (nvdisasm's own reading of our words)
    # the split sum: a ring of 4 x (9728, 10240, 9216 bytes: nn, nt, tn) holds two 64 x 288-byte
    # partials, each 1024 chunks, 8 a thread
    _assert_slice_counts(texts, variant, hmmas=16, loads=8, transposed={"nn": 4, "nt": 0, "tn": 8}[variant],
                         copies=4, staged=2 * 8)
    # nvdisasm's listing assembles back to the same words (control codes included)
    listing = "\n".join(f"{Control.from_word(d.hi).text()} {d.text} ;" for d in decoded.lines)
    assert assemble(listing, arch).code == assembled.code


@pytest.mark.parametrize("variant", VARIANTS)
def test_contract_declares_every_parameter_word_the_code_reads(variant):
    contract = parse_contract(source(variant), f"coppelius-gemm-{variant}")
    assert check_code_reads(contract) == []
    # words 17 and 18 are sm_90's tensor maps (gemm_sm90's contract), then flag 256's words
    adamw = variant == "tn"
    assert [a.index for a in contract.arguments] == list(range(gemm.PARAMETER_BYTES // 8)) + [19] * adamw
    pointers = [a.index for a in contract.arguments if a.kind == "pointer"]
    # E (word 15, flag 32) only where B is stored K x N; nt declares it unused; U (word 16, flag 128) in all;
    # the AdamW step record (word 19, flag 256) in tn, the weight-gradient layout, alone, whose D, R and U
    # are then the weights and their moments (read and written)
    assert pointers == ([0, 1, 2, 3, 4, 5, 13, 14] + ([15] if variant in ("nn", "tn") else []) + [16] + [19] * adamw)
    access = {a.index: a.access for a in contract.arguments if a.kind == "pointer"}
    assert [access[w] for w in (2, 4, 16)] == (["read-write"] * 3 if adamw else ["write", "read", "read"])
    # every parameter offset the code reads is a field of gemm.PARAMETERS or ADAM_STEP_PARAMETERS
    fields = {offset for offset, _, _ in gemm.PARAMETERS + gemm.ADAM_STEP_PARAMETERS}
    for read in contract.reads:
        assert read.offset in fields or read.offset - 4 in fields, read.text


def _assert_slice_counts(texts: list[str], variant: str, hmmas: int, loads: int, transposed: int,
                         copies: int, staged: int) -> None:
    """The instruction counts a software-pipelined kernel has for a slice's `hmmas` HMMAs, `loads`
    LDSMs (`transposed` of them MT88) and `copies` LDGSTS a thread: the loop holds one slice's
    (twice where B is stored K x N: a version with the column sums and one without); the prologue
    copies STAGES - 1 slices and loads slice 0's first k16 step (half its fragments).  The split
    path's last block copies `staged` 16-byte chunks a thread a round (the partial tiles the ring
    holds, each 64 columns of binary32 in rows of 288 bytes)."""
    loops = 2 if gemm.VARIANTS[variant].column_sums else 1
    assert sum("HMMA.16816.F32" in t for t in texts) == loops * hmmas
    assert sum("LDSM.16." in t for t in texts) == loads // 2 + loops * loads
    assert sum("LDSM.16.MT88.4" in t for t in texts) == transposed // 2 + loops * transposed
    assert sum("LDGSTS.E.BYPASS.128" in t for t in texts) == copies * (gemm.STAGES - 1 + loops) + staged


# NVIDIA's Ampere tables (Mesa NAK sm80_instr_latencies.rs, MMA_2x_collect as writer): an
# HMMA.16816's result may be read 18 cycles after it issues at the earliest (by the next
# HMMA; 17 by an ALU, 16 by a memory instruction).  Checked here on the issued code,
# independently of the scheduler, along both paths of the loop's branch.
HMMA_RESULT_CYCLES = 18


def _registers(text: str) -> set[int]:
    return {int(r) for r in re.findall(r"\bR(\d+)\b", text)}


@pytest.mark.parametrize("variant,arch", CASES, ids=[f"{v}.{a}" for v, a in CASES])
def test_no_hmma_result_is_touched_before_the_tensor_core_latency(variant, arch):
    _assert_hmma_results_wait(assemble_kernel(source(variant), TARGETS[arch]))


def _assert_hmma_results_wait(assembled) -> None:
    """No instruction touches an HMMA's result sooner than HMMA_RESULT_CYCLES after it, on any path."""
    code = assembled.instructions

    def earliest_touch(start: int, result: set[int]) -> int:
        """Fewest cycles from issuing `start` to an instruction touching `result`, over paths."""
        best = 10 ** 6
        stack = [(start + 1, code[start].control.stall, 0)]
        while stack:
            index, cycles, hops = stack.pop()
            if cycles >= best or index >= len(code) or hops > 400:
                continue
            text = code[index].text
            if _registers(text) & result:
                best = min(best, cycles)
                continue
            stall = max(1, code[index].control.stall)
            words = text.split()
            if "BRA" in words:
                target = words[words.index("BRA") + 1]
                stack.append((assembled.labels[target] // 16, cycles + stall, hops + 1))
            if text.strip() != "EXIT" and not text.startswith("BRA "):
                stack.append((index + 1, cycles + stall, hops + 1))
        return best

    for index, instruction in enumerate(code):
        if instruction.text.startswith("HMMA"):
            d = int(re.match(r"HMMA\.\S+ R(\d+)", instruction.text).group(1))
            gap = earliest_touch(index, set(range(d, d + 4)))
            assert gap >= HMMA_RESULT_CYCLES, f"{instruction.address:#06x} {instruction.text}: {gap} cycles"


def test_async_copies_are_waited_by_depbar_alone():
    """LDGDEPBAR counts its group on SB0; no instruction of the loop waits on SB0 through
    its wait mask (which would drain the copies in flight) and no load result uses SB0."""
    assembled = assemble_kernel(source("nn"), TARGETS["sm_90"])
    for instruction in assembled.instructions:
        control = instruction.control
        if instruction.text == "LDGDEPBAR":
            assert control.write_barrier == 0
        else:
            assert control.write_barrier != 0, instruction.text
            assert not control.wait_mask & 1, instruction.text


# ---- the NumPy reference against the contract, written out element by element ----

def _pack(p: dict) -> bytes:
    return (struct.pack("<6Q", p["A"], p["B"], p["D"], p["Dh"], p["R"], p["bias"])
            + struct.pack("<12I", p["M"], p["N"], p["K"], p["flags"], p["lda"], p["ldb"], p["ldd"],
                          p["ldh"], p["sA"], p["sB"], p["sD"], p["sH"])
            + struct.pack("<fI", p["alpha"], p["batches"])
            + struct.pack("<4Q", p.get("W", 0), p.get("tickets", 0), p.get("E", 0), p.get("U", 0)))


class _Memory:
    """Named arrays at made-up addresses (1 MiB apart)."""

    def __init__(self, **arrays):
        self.arrays = {i: a for i, a in enumerate(arrays.values())}
        self.address = {name: (i + 1) << 20 for i, name in enumerate(arrays)}

    def read(self, address, dtype, count):
        array = self.arrays[(address >> 20) - 1]
        start = (address & ((1 << 20) - 1)) // array.itemsize
        assert array.dtype == np.dtype(dtype) and start + count <= array.size
        return array[start:start + count].copy()

    def write(self, address, values):
        array = self.arrays[(address >> 20) - 1]
        start = (address & ((1 << 20) - 1)) // array.itemsize
        array[start:start + values.size] = values


def _run_reference(ref, layout, memory, p):
    """Run the reference product kernel on `memory` with the parameter fields `p`, as the
    model's launcher would (a launch's packed block, memory read and written by address)."""

    class Launch:
        parameters = _pack(p)

    class Memory:
        array = staticmethod(lambda address, dtype, count: memory.read(address, dtype, count))
        write = staticmethod(lambda address, data: memory.write(
            address, np.frombuffer(data, dtype=memory.arrays[(address >> 20) - 1].dtype)))

    ref.KERNELS[f"coppelius-gemm-{layout}"](Memory, Launch)


def _expected(layout, p, a, b, d0, bias):
    """The contract, one element at a time, in binary64 then rounded as it says."""
    m_, n_, k_ = p["M"], p["N"], p["K"]
    out = d0.copy()
    half = {}
    for z in range(p["batches"]):
        for m in range(m_):
            for n in range(n_):
                total = 0.0
                for k in range(k_):
                    x = a[z * p["sA"] + (k * p["lda"] + m if layout == "tn" else m * p["lda"] + k)]
                    y = b[z * p["sB"] + (n * p["ldb"] + k if layout == "nt" else k * p["ldb"] + n)]
                    total += float(x) * float(y)
                v = np.float32(np.float32(p["alpha"]) * np.float32(total))
                if p["flags"] & 2:
                    v = np.float32(v + bias[n])
                at = z * p["sD"] + m * p["ldd"] + n
                if p["flags"] & 1:
                    v = np.float32(v + d0[at])
                if not p["flags"] & 8:
                    out[at] = v
                half[z * p["sH"] + m * p["ldh"] + n] = np.float16(v)
    return out, half


@pytest.mark.parametrize("layout,flags", [("nn", 0), ("nt", 1 | 2 | 4), ("tn", 4 | 8), ("nn", 1 | 4)])
def test_reference_kernel_computes_the_contract(layout, flags):
    ref = load_reference()
    rng = np.random.default_rng(7)
    batches, m, n, k = 2, 3, 5, 4
    lda, ldb, ldd, ldh = 9, 11, 7, 6
    a = rng.standard_normal(200).astype(np.float16)
    b = rng.standard_normal(200).astype(np.float16)
    d = rng.standard_normal(200).astype(np.float32)
    h = np.zeros(200, np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    memory = _Memory(a=a, b=b, d=d, h=h, bias=bias)
    p = dict(A=memory.address["a"] + 2 * 3, B=memory.address["b"], D=memory.address["d"], Dh=memory.address["h"],
             R=memory.address["d"], bias=memory.address["bias"], M=m, N=n, K=k, flags=flags, lda=lda, ldb=ldb,
             ldd=ldd, ldh=ldh, sA=60, sB=70, sD=40, sH=30, alpha=0.125, batches=batches)
    want_d, want_h = _expected(layout, p, a[3:], b, d.copy(), bias)

    _run_reference(ref, layout, memory, p)
    np.testing.assert_array_equal(d, want_d)          # products of halves are exact: same roundings
    if flags & 4:
        for at, value in want_h.items():
            assert h[at] == value
    else:
        assert not h.any()


def test_reference_kernel_splits_k_as_the_contract_says():
    """Flag 16: batch z is split z (A, B moved by z sA, z sB); W[z] = its product (binary64
    rounded once); D = alpha P + bias + R in binary32 with P the whole product over the
    splits, rounded once (the reference's rule for every product)."""
    ref = load_reference()
    rng = np.random.default_rng(8)
    splits, m, n, k = 3, 3, 5, 4                    # K is one split's length
    lda, ldb, ldd = 13, 11, 7
    a = rng.standard_normal(200).astype(np.float16)
    b = rng.standard_normal(200).astype(np.float16)
    d = rng.standard_normal(200).astype(np.float32)
    w = np.full(splits * m * n, np.nan, np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    memory = _Memory(a=a, b=b, d=d, w=w, bias=bias)
    p = dict(A=memory.address["a"], B=memory.address["b"], D=memory.address["d"], Dh=0, R=memory.address["d"],
             bias=memory.address["bias"], M=m, N=n, K=k, flags=16 | 1 | 2, lda=lda, ldb=ldb, ldd=ldd, ldh=0,
             sA=k, sB=k * ldb, sD=0, sH=0, alpha=0.25, batches=splits, W=memory.address["w"], tickets=0)
    d0 = d.copy()

    _run_reference(ref, "nn", memory, p)
    for row in range(m):
        for col in range(n):
            partials = [sum(float(a[row * lda + s * k + i]) * float(b[(s * k + i) * ldb + col]) for i in range(k))
                        for s in range(splits)]
            for s, partial in enumerate(partials):
                assert w[s * m * n + row * n + col] == np.float32(partial)
            v = np.float32(np.float32(np.float32(0.25) * np.float32(sum(partials))) + bias[col])
            assert d[row * ldd + col] == np.float32(v + d0[row * ldd + col])


def _ordered_column_sum(column) -> np.float32:
    """coppelius-bias-backward's order for one column, written out: s_g = +0 + x_g + x_(g+4)
    + .. in binary32 (g = 0..3), then (s0 + s1) + (s2 + s3)."""
    s = [np.float32(0.0)] * 4
    for row, value in enumerate(column):
        s[row % 4] = np.float32(s[row % 4] + np.float32(value))
    return np.float32(np.float32(s[0] + s[1]) + np.float32(s[2] + s[3]))


@pytest.mark.parametrize("layout", ["nn", "tn", "nt"])
def test_reference_kernel_sums_the_columns_of_b_in_the_kernels_order(layout):
    """Flag 32: E[n] = sum_k B[k, n] in bias-backward's association (bit for bit), within
    K 2^-24 sum|B| of the binary64 sum; D is the same as without the flag.  nt ignores it."""
    ref = load_reference()
    rng = np.random.default_rng(9)
    m, n, k = 3, 5, 23                              # K not a multiple of 4: the groups are uneven
    lda, ldb, ldd = 29, 31, 7
    a = rng.standard_normal(1000).astype(np.float16)
    b = (rng.standard_normal(1000) * np.exp2(rng.integers(-12, 12, 1000))).astype(np.float16)
    results = {}
    for flags in (0, 32):
        d = np.zeros(200, np.float32)
        e = np.full(n, np.nan, np.float32)
        memory = _Memory(a=a, b=b, d=d, e=e)
        p = dict(A=memory.address["a"], B=memory.address["b"] + 2 * 5, D=memory.address["d"], Dh=0, R=0, bias=0,
                 M=m, N=n, K=k, flags=flags, lda=lda, ldb=ldb, ldd=ldd, ldh=0, sA=0, sB=0, sD=0, sH=0, alpha=1.0,
                 batches=1, E=memory.address["e"])

        _run_reference(ref, layout, memory, p)
        results[flags] = d, e
    np.testing.assert_array_equal(results[0][0], results[32][0])
    e = results[32][1]
    if layout == "nt":
        assert np.isnan(e).all()
        return
    for col in range(n):
        column = [b[5 + row * ldb + col] for row in range(k)]
        assert e[col].tobytes() == _ordered_column_sum(column).tobytes(), col
        exact = sum(float(x) for x in column)
        assert abs(float(e[col]) - exact) <= k * 2.0 ** -24 * sum(abs(float(x)) for x in column)


def test_column_sums_are_refused_where_the_kernel_cannot_serve_them():
    fields = dict(A=0, B=0, D=0, M=64, N=64, K=768, lda=64, ldb=64, ldd=64, flags=32, E=0x1000)
    with pytest.raises(ValueError, match="whole of K in one batch"):
        gemm.pack_parameters(**dict(fields, flags=32 | 16, batches=2))
    with pytest.raises(ValueError, match="batches = 3"):
        gemm.pack_parameters(**dict(fields, batches=3))
    with pytest.raises(ValueError, match="whole of K in one batch"):
        gemm.split_parameters("tn", 2, 0x2000, 0x3000, **fields)
    with pytest.raises(ValueError, match="not nt"):
        gemm.split_parameters("nt", 1, 0, 0, **fields)
    grid, block = gemm.split_parameters("tn", 1, 0, 0, **fields)
    assert grid == (1, 1, 1) and struct.unpack_from("<Q", block, gemm.OFFSET["E"])[0] == 0x1000


def test_parameter_block_matches_the_contract_offsets():
    """pack_parameters writes each field where gemm.PARAMETERS (and the //@ lines) say, and
    the reference reads it back from there."""
    ref = load_reference()
    fields = dict(A=0x1000, B=0x2000, D=0x3000, Dh=0x4000, R=0x5000, bias=0x6000, M=128, N=192, K=96, flags=13,
                  lda=104, ldb=200, ldd=192, ldh=256, sA=64, sB=3, sD=7, sH=9, alpha=0.125, batches=12,
                  W=0x7000, tickets=0x8000, E=0x9000, U=0xa000)
    block = gemm.pack_parameters(**fields)
    assert len(block) == gemm.PARAMETER_BYTES
    for offset, name, meaning in gemm.PARAMETERS:
        kind = "<Q" if meaning.startswith("pointer") else "<f" if name == "alpha" else "<I"
        assert struct.unpack_from(kind, block, offset)[0] == fields[name], name
    assert ref.unpack(block) == fields


@pytest.mark.parametrize("m,n,k", [(96, 64, 32), (64, 100, 32), (64, 64, 48), (64, 64, 0)])
def test_shapes_that_are_not_whole_tiles_are_refused(m, n, k):
    with pytest.raises(ValueError, match="not a positive multiple"):
        gemm.pack_parameters(A=0, B=0, D=0, M=m, N=n, K=k, lda=64, ldb=64, ldd=64)


def test_device_images_declare_each_products_shared_memory_and_parameter_room(tmp_path):
    """Coppelius.Build.DeviceImages gives each product region the shared memory its ring needs
    (a QMD with less would let the kernel address past its block's window), and every launch
    room for the fifteen parameter words."""
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.sass.generate import gemm_sm90
    from bobc.targets import SM86, SM90
    probe = tmp_path / "Probe.bob"
    probe.write_text("module Probe\n\nimport Coppelius.Build.DeviceImages\nimport Coppelius.Build.Graph\n\n"
                     + "".join(f"def shared{k} : Nat = (coppeliusKernelSharedBytes {k})\n" for k in range(3))
                     + "def room : Nat = cgParameterBytes\n", encoding="utf-8")
    for target in (SM86, SM90):
        program = load_program(probe, include=[REPO / "examples" / "coppelius"], target=target,
                               intrinsics=default_intrinsics())
        for k, layout in enumerate(("nn", "nt", "tn")):
            needs = gemm.shared_bytes(gemm.VARIANTS[layout]) if target is SM86 else gemm_sm90.shared_bytes()
            assert program.value(f"shared{k}").value == needs, (target.name, layout)
        # the words the sm_90 variants' tensor maps take (17, 18) fit the launches' parameter room
        assert program.value("room").value >= gemm.PARAMETER_BYTES + 16


def test_the_models_split_rule_is_the_generators():
    """coppelius_model.graph.split_count (which the plan mirrors; test_plan_agrees) splits
    exactly the products gemm.split_count does."""
    from coppelius_model import graph
    for m in (64, 128, 256, 768):
        for n in (64, 256, 768, 1024, 2304, 3072):
            for k in (32, 64, 256, 384, 768, 1024, 2304, 3072):
                for batches in (1, 12):
                    assert graph.split_count(m, n, k, batches) == gemm.split_count(m, n, k, batches), (m, n, k)


# ---- GELU in the epilogue (flags 64 and 128) ----

def _kernel_constants(name: str) -> dict[str, str]:
    """The MOV'd binary32 bits and FFMA immediates of a separate gelu kernel's source."""
    text = (SOURCES / f"coppelius-{name}.sass").read_text()
    return {"movs": re.findall(r"MOV R\d+, (0x[0-9a-f]+)", text),
            "immediates": re.findall(r"FFMA R\d+, R\d+, R\d+, ([0-9.]+)", text)}


def test_gelu_constants_are_the_separate_kernels():
    """The epilogue's constants are the ones coppelius-gelu-forward / -backward hold, and the
    binary32 values of K2 = 2 sqrt(2/pi) log2(e), KA2 = 0.044715 K2, 2K, 6 K 0.044715."""
    forward, backward = _kernel_constants("gelu-forward"), _kernel_constants("gelu-backward")
    assert forward == {"movs": [f"{gemm.GELU_KA2:#x}"], "immediates": [gemm.GELU_K2] * 4}
    assert backward["movs"] == [f"{gemm.GELU_KA2:#x}", f"{gemm.GELU_6KA:#x}"]
    assert backward["immediates"] == [gemm.GELU_K2] * 4 + [gemm.GELU_2K] * 4
    k = np.sqrt(2 / np.pi)
    bits = lambda x: struct.unpack("<I", struct.pack("<f", x))[0]
    assert np.float32(gemm.GELU_K2) == np.float32(2 * k * np.log2(np.e))
    assert np.float32(gemm.GELU_2K) == np.float32(2 * k)
    assert gemm.GELU_KA2 == bits(2 * k * np.log2(np.e) * 0.044715)
    assert gemm.GELU_6KA == bits(6 * k * 0.044715)
    for name in ("nn", "nt", "tn"):
        text = source(name).read_text()
        assert f"MOV R0, {gemm.GELU_KA2:#x}" in text and f"MOV R1, {gemm.GELU_6KA:#x}" in text
        assert text.count(f"R0, {gemm.GELU_K2}") == 2 * 4 * 8       # forward and backward, 4 row groups of 8


def _gelu_steps(u: float, dy: float | None = None):
    """One element through the separate kernels' instructions, each rounded to binary32
    (MUFU correctly rounded, EX2 flushing subnormal results): gelu(u), or dy gelu'(u)."""
    f = np.float32
    ka2, k2 = np.frombuffer(struct.pack("<I", gemm.GELU_KA2), np.float32)[0], f(gemm.GELU_K2)
    ka6, k2x = np.frombuffer(struct.pack("<I", gemm.GELU_6KA), np.float32)[0], f(gemm.GELU_2K)
    u = f(u)
    square = f(u * u)
    t = f(float(square) * float(ka2) + float(k2))
    x = min(f(u * t), f(64))
    e = f(2.0 ** float(x))
    if abs(e) < np.finfo(np.float32).tiny:
        e = f(0)
    r = f(1.0 / float(f(e + f(1))))
    s = f(e * r)
    if dy is None:
        return f(u * s)
    p = f(float(square) * float(ka6) + float(k2x))
    w = f(f(u * r) * s)
    return f(f(float(w) * float(p) + float(s)) * f(dy))


def test_reference_gelu_flags_follow_the_kernels_steps():
    """ref_gemm with flag 64 (bias, Dh; D kept) and flag 128 (R, U with D's strides, Dh, no D):
    each element is _gelu_steps of v, written out scalar by scalar, and within a few binary16
    ulp of the model's binary64 gelu / gelu' (ref_ops)."""
    ref = load_reference()
    rng = np.random.default_rng(10)
    m, n, k, lda, ldb, ldd, ldh = 3, 5, 4, 9, 11, 7, 6
    a = (rng.standard_normal(200) * 2).astype(np.float16)
    b = (rng.standard_normal(200) * 2).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    u = (rng.standard_normal(200) * np.exp2(rng.integers(-2, 4, 200))).astype(np.float32)
    for flags in (2 | 4 | 64, 1 | 4 | 8 | 128):
        d = rng.standard_normal(200).astype(np.float32)
        d0, h = d.copy(), np.zeros(200, np.float16)
        memory = _Memory(a=a, b=b, d=d, h=h, bias=bias, u=u)
        p = dict(A=memory.address["a"], B=memory.address["b"], D=memory.address["d"], Dh=memory.address["h"],
                 R=memory.address["d"], bias=memory.address["bias"], M=m, N=n, K=k, flags=flags, lda=lda,
                 ldb=ldb, ldd=ldd, ldh=ldh, sA=0, sB=0, sD=0, sH=0, alpha=1.0, batches=1, U=memory.address["u"])
        plain, _ = _expected("nn", dict(p, flags=flags & 3, batches=1), a, b, d0.copy(), bias)

        _run_reference(ref, "nn", memory, p)
        for row in range(m):
            for col in range(n):
                v = plain[row * ldd + col]
                at_d, at_h = row * ldd + col, row * ldh + col
                if flags & 64:
                    assert d[at_d] == v
                    want = _gelu_steps(v)
                    exact = float(v) * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * float(v) ** 3)))
                else:
                    assert d[at_d] == d0[at_d]                  # no D
                    want = _gelu_steps(u[at_d], v)
                    uu = float(u[at_d])
                    t = np.tanh(np.sqrt(2 / np.pi) * (uu + 0.044715 * uu ** 3))
                    exact = float(v) * (0.5 * (1 + t) + 0.5 * uu * (1 - t * t) * np.sqrt(2 / np.pi)
                                        * (1 + 3 * 0.044715 * uu * uu))
                assert h[at_h].tobytes() == np.float16(want).tobytes(), (flags, row, col)
                assert abs(float(h[at_h]) - exact) <= 2.0 ** -9 * abs(exact) + 2.0 ** -20, (flags, row, col)


# ---- the 128-row tiling (gemm.generate(..., tile_m=128)), generated into a temporary folder ----

TALL = 128


def _assembled_decoded_and_round_tripped(folder, variant: str, arch: str) -> list[str]:
    """Assemble a generated kernel of `folder` for `arch`: its symbol, within the 96 registers;
    nvdisasm decodes every word and its listing assembles back to the same words; HMMA results
    waited.  Returns nvdisasm's instruction texts."""
    from bobc.sass import assemble
    assembled = assemble_kernel(folder / f"coppelius-gemm-{variant}.sass", TARGETS[arch])
    assert assembled.kernel_name == f"coppelius_gemm_{variant}"
    assert assembled.register_budget == gemm.REGISTERS and assembled.registers <= gemm.REGISTERS
    decoded = disassemble(assembled.code, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    assert len(decoded.lines) == len(assembled.code) // 16
    listing = "\n".join(f"{Control.from_word(d.hi).text()} {d.text} ;" for d in decoded.lines)
    assert assemble(listing, arch).code == assembled.code
    _assert_hmma_results_wait(assembled)
    return [d.text for d in decoded.lines]


@pytest.mark.parametrize("variant,arch", CASES, ids=[f"{v}.{a}" for v, a in CASES])
def test_128_row_kernels_assemble_within_the_budget_and_decode_cleanly(variant, arch, tall_sources):
    """Within the 96 registers; nvdisasm decodes every word, reads the same tensor-core and
    matrix-load forms as the 64-row kernels', and its listing assembles back to the same words.
    Copies: a 128 x 32 slice of A is 8 KiB, B's 32 x 64 4 KiB, in 16-byte chunks over 256
    threads: 2 + 1 a thread a slice, in the prologue's STAGES - 1 slices and the loop's one."""
    texts = _assembled_decoded_and_round_tripped(tall_sources, variant, arch)
    chunks = (128 * 32 * 2) // 16 // 256 + (32 * 64 * 2) // 16 // 256
    # the split sum: a ring of 4 x (14848, 15360, 13312 bytes) holds one 128 x 288-byte partial,
    # 2048 chunks, 8 a thread
    _assert_slice_counts(texts, variant, hmmas=16, loads=8, transposed={"nn": 4, "nt": 0, "tn": 8}[variant],
                         copies=chunks, staged=1 * 8)


@pytest.mark.parametrize("variant", VARIANTS)
def test_128_row_kernels_keep_the_contract_and_a_conflict_free_ring(variant, tall_sources):
    """The contract names every parameter word the code reads; the launch is 256 threads, 128-row
    tiles; the shared pitches the fragment addresses use (read from the code) put the 8 rows of an
    8 x 8 matrix load in 8 different 16-byte bank groups (of the 8 a 128-byte bank row holds), and
    a stored row fits its pitch; the ring fits shared_bytes(variant, 128)."""
    path = tall_sources / f"coppelius-gemm-{variant}.sass"
    contract = parse_contract(path, f"coppelius-gemm-{variant}")
    assert check_code_reads(contract) == []
    text = path.read_text()
    shared = gemm.shared_bytes(gemm.VARIANTS[variant], TALL)
    assert f"// Launch: block (256, 1, 1), grid (N/64, M/128, batches); shared memory {shared} bytes" in text
    a_along_k, b_along_k = variant != "tn", variant == "nt"
    for register, along_k, outer in ((gemm.FRAG_SRC_A, a_along_k, 128), (gemm.FRAG_SRC_B, b_along_k, 64)):
        pitch = int(re.search(rf"IMAD R{register}, R\d+, (0x[0-9a-f]+), R\d+", text).group(1), 16)
        assert pitch % 16 == 0 and pitch >= (64 if along_k else 2 * outer)
        assert len({(row * pitch // 16) % 8 for row in range(8)}) == 8, (register, pitch)
        rows = outer if along_k else 32
        assert rows * pitch <= (shared - gemm.SHARED_BASE) // gemm.STAGES
    assert shared - gemm.SHARED_BASE == gemm.STAGES * (
        (128 * 80 if a_along_k else 32 * 272) + (64 * 80 if b_along_k else 32 * 144))


def test_tile_height_reaches_every_launch_helper():
    """grid, check_shape, split_ticket_bytes, split_count, split_parameters and pack_parameters
    take the tile height; the defaults are the 64-row tiling; other heights are refused."""
    assert gemm.grid(256, 128, 3, tile_m=TALL) == (2, 2, 3) and gemm.grid(256, 128, 3) == (2, 4, 3)
    assert gemm.tiling(TALL) == gemm.Tiling(128, 256) and gemm.tiling() == gemm.Tiling(64, gemm.THREADS)
    assert gemm.split_ticket_bytes(256, 128, TALL) == 4 * 2 * 2 and gemm.split_ticket_bytes(256, 128) == 4 * 4 * 2
    # 512 x 1024 is 128 tiles of 64 x 64, too many to split, but 64 tiles of 128 x 64 (< SPLIT_FEW_TILES)
    assert gemm.split_count(256, 1024, 3072) == 4 and gemm.split_count(256, 1024, 3072, tile_m=TALL) == 4
    assert gemm.split_count(512, 1024, 3072) == 1 and gemm.split_count(512, 1024, 3072, tile_m=TALL) == 4
    with pytest.raises(ValueError, match="M = 64 is not a positive multiple of 128: these kernels compute whole "
                                         "128 x 64 tiles"):
        gemm.pack_parameters(A=0, B=0, D=0, M=64, N=64, K=32, lda=64, ldb=64, ldd=64, tile_m=TALL)
    with pytest.raises(ValueError, match="M = 192 is not a positive multiple of 128"):
        gemm.split_parameters("nn", 2, 0, 0, tile_m=TALL, A=0, B=0, D=0, M=192, N=64, K=64, lda=64, ldb=64, ldd=64)
    grid, _ = gemm.split_parameters("nn", 2, 0, 0, tile_m=TALL, A=0, B=0, D=0, M=256, N=64, K=64, lda=64, ldb=64,
                                    ldd=64)
    assert grid == (1, 2, 2)
    with pytest.raises(ValueError, match="tile_m = 96: the product kernels come in tiles of 64 or 128 rows"):
        gemm.generate(gemm.VARIANTS["nn"], PREFIX, tile_m=96)


def test_generator_cli_writes_and_checks_the_128_row_kernels(tmp_path, capsys):
    assert gemm.main(["--prefix", PREFIX, "--tile-m", "128", str(tmp_path)]) == 0
    for variant in VARIANTS:
        assert (tmp_path / f"coppelius-gemm-{variant}.sass").read_text() == \
            gemm.generate(gemm.VARIANTS[variant], PREFIX, tile_m=TALL)
    assert gemm.main(["--prefix", PREFIX, "--tile-m", "128", "--check", str(tmp_path)]) == 0
    assert gemm.main(["--prefix", PREFIX, "--check", str(tmp_path)]) == 1       # not the 64-row kernels
    stale = tmp_path / "coppelius-gemm-tn.sass"
    stale.write_text(stale.read_text() + "// edited\n")
    capsys.readouterr()
    assert gemm.main(["--prefix", PREFIX, "--tile-m", "128", "--check", str(tmp_path)]) == 1
    assert f"coppelius-gemm-tn.sass: differs from what the generator emits; run python -m bobc.sass.generate.gemm " \
           f"--prefix {PREFIX} --tile-m 128 {tmp_path}" in capsys.readouterr().err


# ---- eight warps on a 64 x 64 tile (gemm.generate(..., warps=8)), generated into a temporary folder ----

@pytest.mark.parametrize("variant,arch", CASES, ids=[f"{v}.{a}" for v, a in CASES])
def test_eight_warp_kernels_assemble_within_the_budget_and_decode_cleanly(variant, arch, eight_warp_sources):
    """Within the 96 registers; nvdisasm decodes every word and its listing assembles back to the
    same words.  A warp of 32 x 16 is 2 x 2 HMMA tiles of 16 x 8: per k16 step two A fragments
    and one B matrix load (x4: two n8 fragments), so 8 HMMAs and 6 LDSM a slice.  Copies: A's
    64 x 32 slice and B's 32 x 64 are 4 KiB each, 256 chunks of 16 bytes: one of each a thread a
    slice, in the prologue's STAGES - 1 slices and the loop's one.  HMMA results wait 18 cycles."""
    texts = _assembled_decoded_and_round_tripped(eight_warp_sources, variant, arch)
    # the split sum: the 64-row ring holds two partials of 1024 chunks, 4 a thread of 256
    _assert_slice_counts(texts, variant, hmmas=8, loads=6, transposed={"nn": 2, "nt": 0, "tn": 6}[variant],
                         copies=2, staged=2 * 4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_eight_warp_kernels_keep_the_contract_and_a_conflict_free_ring(variant, eight_warp_sources):
    """The contract names every parameter word the code reads (the same contract as 4 warps'); the
    launch is 256 threads on 64-row tiles with the 4-warp kernels' shared memory; the fragment
    pitches (read from the code) put an 8 x 8 matrix load's 8 rows in 8 bank groups; the warp grid
    is 2 x 4: A's warp row is tid >> 7, B's warp column (tid >> 5) & 3, 16 columns (rows of a
    stored-N x K B, or 32 bytes of a K x N one) apart."""
    path = eight_warp_sources / f"coppelius-gemm-{variant}.sass"
    contract = parse_contract(path, f"coppelius-gemm-{variant}")
    assert check_code_reads(contract) == []
    text = path.read_text()
    assert [line for line in text.splitlines() if line.startswith("//@ param")] == \
        [line for line in source(variant).read_text().splitlines() if line.startswith("//@ param")]
    shared = gemm.shared_bytes(gemm.VARIANTS[variant])
    assert f"// Launch: block (256, 1, 1), grid (N/64, M/64, batches); shared memory {shared} bytes" in text
    for register in (gemm.FRAG_SRC_A, gemm.FRAG_SRC_B):
        pitch = int(re.search(rf"IMAD R{register}, R\d+, (0x[0-9a-f]+), R\d+", text).group(1), 16)
        assert len({(row * pitch // 16) % 8 for row in range(8)}) == 8, (register, pitch)
    setup = text.split("MOV R8, RZ")[0]
    assert "SHF.R.U32.HI R6, RZ, 0x7, R0\n    LOP3.LUT R6, R6, 0x1, RZ" in setup      # A: warp row tid >> 7
    assert "SHF.R.U32.HI R6, RZ, 0x5, R0\n    LOP3.LUT R6, R6, 0x3, RZ" in setup      # B: warp column
    b_along_k = variant == "nt"
    assert ("LEA R4, R6, R4, 0x4    // + 16 rows" if b_along_k else "LEA R5, R6, R5, 0x5    // + 16 halves") in setup


def test_warps_reach_the_generator_and_other_combinations_are_refused(tmp_path, capsys):
    """TILINGS: (64, 4) the default, (64, 8) warps of 32 x 16, (128, 8) the 128-row tiling
    (its default); tile_m 128 with 4 warps is refused by generate and by the CLI, naming what is
    served; --warps 8 writes and checks the 8-warp kernels, and the 4-warp check then fails."""
    assert gemm.tiling(64, 8) == gemm.Tiling(64, 256) and gemm.tiling(64, 4) == gemm.tiling()
    assert gemm.tiling(128) == gemm.tiling(128, 8) == gemm.Tiling(128, 256)
    eight = gemm.tiling(64, 8)
    assert (eight.warp_rows, eight.warp_cols, eight.warp_n, eight.n_tiles, eight.accumulators) == (2, 4, 16, 2, 16)
    assert [eight.acc(mi, nt) for mi in range(2) for nt in range(2)] == [8, 12, 16, 20]
    assert [gemm.tiling().acc(mi, nt) for mi in range(2) for nt in range(4)] == list(range(8, 40, 4))
    for tile_m, warps in ((128, 4), (64, 16)):
        with pytest.raises(ValueError, match=rf"tile_m = {tile_m} with warps = {warps}: the product kernels come as "
                                             "tile_m 64 with 4 warps, tile_m 64 with 8 warps, tile_m 128 with 8 warps"):
            gemm.generate(gemm.VARIANTS["nn"], PREFIX, tile_m=tile_m, warps=warps)
    assert gemm.generate(gemm.VARIANTS["tn"], PREFIX, warps=4) == source("tn").read_text()
    assert gemm.generate(gemm.VARIANTS["tn"], PREFIX, 128, 8) == gemm.generate(gemm.VARIANTS["tn"], PREFIX, 128)
    with pytest.raises(SystemExit):
        gemm.main(["--prefix", PREFIX, "--tile-m", "128", "--warps", "4", str(tmp_path)])
    assert "tile_m = 128 with warps = 4" in capsys.readouterr().err
    assert gemm.main(["--prefix", PREFIX, "--warps", "8", str(tmp_path)]) == 0
    for variant in VARIANTS:
        assert (tmp_path / f"coppelius-gemm-{variant}.sass").read_text() == \
            gemm.generate(gemm.VARIANTS[variant], PREFIX, warps=8)
    assert gemm.main(["--prefix", PREFIX, "--warps", "8", "--check", str(tmp_path)]) == 0
    assert gemm.main(["--prefix", PREFIX, "--check", str(tmp_path)]) == 1
    stale = tmp_path / "coppelius-gemm-nn.sass"
    stale.write_text(stale.read_text() + "// edited\n")
    capsys.readouterr()
    assert gemm.main(["--prefix", PREFIX, "--warps", "8", "--check", str(tmp_path)]) == 1
    assert f"--prefix {PREFIX} --warps 8 {tmp_path}" in capsys.readouterr().err
