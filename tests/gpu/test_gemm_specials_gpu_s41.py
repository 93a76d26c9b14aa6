"""NaN, infinity, -0, binary16 subnormals and overflow through the product kernels on the GPU: the
HMMA kernel (coppelius-gemm-nn, sm_86 and sm_90) and, on sm_90, the warpgroup kernel (TMA + HGMMA,
2 stages), on tests/coppelius/test_kernels_gemm_specials_s41.py's operands (one 64 x 64 x 64 tile,
flags R | bias | Dh).

Asserted: what the PTX ISA fixes (that module's check: NaN classes, inf * 0, inf - inf, signed
infinities, overflow to inf in bias + R and in Dh, exact small-integer sums) and, where the simulator
documents a rule, its words: every NaN is the canonical 0x7fffffff (D) / 0x7fff (Dh), the epilogue's
binary32 adds writing it on the GPU whatever NaN the tensor core gave them (docs/simulator.md, "NaN,
infinity, -0 and subnormal results").  Recorded, GPU beside simulator, to NAN_BITS_LOG (run.sh:
LOGDIR/nan_bits.log; else printed): the words PTX leaves open -- zeros' signs, sums with binary16
subnormal operands (the simulator keeps them: a guess), sums of products spanning more exponents than
binary64 holds.  HGMMA may hang rather than fail on a wrong barrier: tests/gpu/run.sh runs this file
in a process of its own with a short timeout."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
cp = pytest.importorskip("cupy")

from tests.coppelius import test_kernels_gemm_specials_s41 as spec  # noqa: E402

RUNS = [("hmma", "sm_86"), ("hmma", "sm_90"), ("hgmma", "sm_90")]


def _launch_hmma(target, fields):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm
    variant = gemm.VARIANTS[spec.LAYOUT]
    assembled = assemble_kernel(spec.SOURCES / f"{variant.identity(spec.PREFIX)}.sass", target)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hmma.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES, gemm.THREADS))
        module = cp.RawModule(path=str(path))
        function = module.get_function(assembled.kernel_name)
        block = gemm.pack_parameters(**fields)
        function(gemm.grid(spec.M, spec.N), (gemm.THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)),
                 shared_mem=gemm.shared_bytes(variant))
        cp.cuda.Device().synchronize()


def _launch_hgmma(target, fields):
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm, gemm_sm90
    variant = gemm.VARIANTS[spec.LAYOUT]
    assembled = assemble_kernel(spec.SOURCES / f"{variant.identity(spec.PREFIX)}.sm_90.sass", target)
    maps = cp.asarray(np.frombuffer(b"".join(        # nn: A stored [M][K], B stored [K][N]
        encode_tiled(TiledTensor("float16", address, (*dims, 1), (2 * ld, 0), (64, 64, 1), swizzle="128b"))
        for address, dims, ld in ((fields["A"], (spec.K, spec.M), spec.K), (fields["B"], (spec.N, spec.K), spec.N))),
        dtype=np.uint8))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hgmma.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES + 16,
                                     gemm_sm90.BLOCK_THREADS))
        module = cp.RawModule(path=str(path))
        function = module.get_function(assembled.kernel_name)
        function.max_dynamic_shared_size_bytes = gemm_sm90.shared_bytes()
        block = gemm.pack_parameters(**fields) + np.array([maps.data.ptr, maps.data.ptr + 128], np.uint64).tobytes()
        function(gemm.grid(spec.M, spec.N), (gemm_sm90.BLOCK_THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)),
                 shared_mem=gemm_sm90.shared_bytes())
        cp.cuda.Device().synchronize()
    del maps


@pytest.mark.parametrize("kind,arch", RUNS, ids=[f"{k}.{a}" for k, a in RUNS])
def test_s41_product_specials_store_what_ptx_fixes_and_record_the_rest(target, kind, arch):
    if target.name != arch:
        pytest.skip(f"{kind} kernel for {arch} (this GPU: {target.name})")
    a, b, bias, r = spec.operands()
    arrays = {"A": cp.asarray(a.reshape(-1)), "B": cp.asarray(b.reshape(-1)), "bias": cp.asarray(bias),
              "R": cp.asarray(r.reshape(-1)), "D": cp.full(spec.M * spec.N, np.nan, cp.float32),
              "Dh": cp.zeros(spec.M * spec.N, cp.float16)}
    fields = {key: array.data.ptr for key, array in arrays.items()}
    fields.update(M=spec.M, N=spec.N, K=spec.K, lda=spec.K, ldb=spec.N, ldd=spec.N, ldh=spec.N, flags=spec.FLAGS)
    (_launch_hmma if kind == "hmma" else _launch_hgmma)(target, fields)
    d, h = arrays["D"].get().view(np.uint32), arrays["Dh"].get().view(np.uint16)
    sim_d, sim_h = spec.simulate(kind, arch)
    record = (f"== product kernel {kind} on {arch} (tests/coppelius/test_kernels_gemm_specials_s41.py): "
              f"D/Dh words PTX leaves open, GPU (simulator where it differs)\n" + "\n".join(spec.open_words(d, h, sim_d, sim_h)) + "\n")
    named = os.environ.get("NAN_BITS_LOG")
    if named:
        with open(named, "a") as log:
            log.write(record)
    else:
        print(record)
    bad = spec.check(d, h)
    assert not bad, f"GPU {kind} on {arch} != PTX ISA:\n" + "\n".join(bad)
    breaks = spec.nan_rule_breaks(d, h, sim_d, sim_h)
    assert not breaks, f"GPU {kind} on {arch}: a NaN not the simulator's canonical NaN:\n" + "\n".join(breaks)
