"""coppelius-attention-forward, -backward and -backward-kv on the GPU, from our own cubins through CuPy: each bit
for bit the three launches it replaces (forward: coppelius-gemm-nt, coppelius-softmax-forward,
coppelius-gemm-nn; backward: coppelius-gemm-nt for dP, coppelius-softmax-backward,
coppelius-gemm-nn for dq; backward-kv: the two coppelius-gemm-tn launches dv = P16^T dO and
dk = dS^T q) at the small (T 128, 4 heads) and the large (T 256, 12 heads)
configurations and at the longest context the kernels serve (T 512); P within binary32 of float64
softmax-attention.  Both paths' times (CUDA events around 20 replays of a CUDA graph of each; us a
launch group) are printed for the bench notes; nothing is asserted about them.

On the device machine:  PYTHONPATH=compiler python3 -m pytest -m gpu tests/gpu/test_coppelius_attention.py -v -s
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
sys.path.insert(0, str(REPO / "examples" / "coppelius"))
from coppelius_model.attention import BACKWARD, BLOCKS, KERNEL, KV  # noqa: E402  (each kernel's block)

cp = pytest.importorskip("cupy")
DH, FUSED_SHARED, KV_SHARED = 64, 100352, 50176
CASES = [(128, 4), (256, 12), (512, 2)]


@pytest.fixture(scope="module")
def functions(target, tmp_path_factory):
    """name -> (function, dynamic shared bytes), each assembled for this GPU's target."""
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm
    folder = tmp_path_factory.mktemp("attention")
    out = {}
    for name, words, block, shared in (("gemm-nt", 17, gemm.THREADS, gemm.shared_bytes(gemm.VARIANTS["nt"])),
                                       ("gemm-nn", 17, gemm.THREADS, gemm.shared_bytes(gemm.VARIANTS["nn"])),
                                       ("softmax-forward", 5, 256, 0), ("attention-forward", 6, BLOCKS[KERNEL], FUSED_SHARED),
                                       ("softmax-backward", 5, 256, 0),
                                       ("attention-backward", 8, BLOCKS[BACKWARD], FUSED_SHARED),
                                       ("gemm-tn", 17, gemm.THREADS, gemm.shared_bytes(gemm.VARIANTS["tn"])),
                                       ("attention-backward-kv", 8, BLOCKS[KV], KV_SHARED)):
        assembled = assemble_kernel(SOURCES / f"coppelius-{name}.sass", target)
        path = folder / f"{name}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, 8 * words, block))
        module = cp.RawModule(path=str(path))
        function = module.get_function(assembled.kernel_name)
        if shared > 48 * 1024:
            function.max_dynamic_shared_size_bytes = shared
        out[name] = (module, function, shared)
    return out


def _words(raw: bytes, count: int):
    raw = raw + bytes(8 * count - len(raw))
    return tuple(np.frombuffer(raw, dtype=np.uint64))


def _launch(functions, name, grid, block, raw, count):
    """coppelius-<name> on `grid` x `block` with the parameter block `raw` as `count` 8-byte words."""
    _, function, shared = functions[name]
    function(grid, (block,), _words(raw, count), shared_mem=shared)


def _same_bytes_then_times(what, before, after, names, run_before, run_after, launches):
    """Run both paths, hold every named output of `after` to `before` bit for bit, print both times."""
    run_before()
    run_after()
    cp.cuda.Device().synchronize()
    for name in names:
        a, b = before[name].get().view(np.uint8), after[name].get().view(np.uint8)
        assert np.array_equal(a, b), f"{name}: {np.count_nonzero(a != b)} bytes differ"
    print(f"\n  {what}: {launches} launches {graph_time_us(run_before):.2f} us, fused {graph_time_us(run_after):.2f} us")


def paths(functions, qkv, T, H, scale):
    """(three-launch outputs, fused outputs, run-three, run-fused): each output p16, p, o16."""
    from bobc.sass.generate import gemm
    d = DH * H
    three = dict(scores=cp.full(H * T * T, np.nan, cp.float32), p16=cp.full(H * T * T, np.nan, cp.float16),
                 p=cp.full(H * T * T, np.nan, cp.float32), o16=cp.full(T * d, np.nan, cp.float16))
    fused = dict(p16=cp.full(H * T * T, np.nan, cp.float16), p=cp.full(H * T * T, np.nan, cp.float32),
                 o16=cp.full(T * d, np.nan, cp.float16))
    base = qkv.data.ptr
    nt = gemm.pack_parameters(A=base, B=base + 2 * d, D=three["scores"].data.ptr, M=T, N=T, K=DH, lda=3 * d,
                              ldb=3 * d, ldd=T, batches=H, sA=DH, sB=DH, sD=T * T)
    softmax = struct.pack("<QQQIIfI", three["scores"].data.ptr, three["p16"].data.ptr, three["p"].data.ptr,
                          H * T, T, scale, 0)
    nn = gemm.pack_parameters(A=three["p16"].data.ptr, B=base + 4 * d, D=three["o16"].data.ptr,
                              Dh=three["o16"].data.ptr, M=T, N=DH, K=T, lda=T, ldb=3 * d, ldd=d, ldh=d,
                              flags=gemm.FLAG_HALF | gemm.FLAG_NO_D, batches=H, sA=T * T, sB=DH, sD=DH, sH=DH)
    attention = struct.pack("<QQQQIIfI", base, fused["p16"].data.ptr, fused["p"].data.ptr, fused["o16"].data.ptr,
                            T, H, scale, 0)

    def run_three():
        _launch(functions, "gemm-nt", gemm.grid(T, T, H), gemm.THREADS, nt, 17)
        _launch(functions, "softmax-forward", (-(-H * T // 8),), 256, softmax, 5)
        _launch(functions, "gemm-nn", gemm.grid(T, DH, H), gemm.THREADS, nn, 17)

    def run_fused():
        _launch(functions, "attention-forward", (T // 32, H, 1), BLOCKS[KERNEL], attention, 6)

    return three, fused, run_three, run_fused


def graph_time_us(run, repeats=20) -> float:
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        run()
        stream.begin_capture()
        for _ in range(repeats):
            run()
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        times = []
        for _ in range(5):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            graph.launch(stream)
            stop.record(stream)
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) * 1000 / repeats)
    return float(np.median(times))


@pytest.mark.parametrize("T,H", CASES, ids=[f"T{t}-H{h}" for t, h in CASES])
def test_fused_attention_is_the_three_launches_bit_for_bit(functions, T, H):
    rng = np.random.default_rng(T * 100 + H)
    qkv = cp.asarray((rng.standard_normal(T * 3 * DH * H) * 0.7).astype(np.float16))
    scale = float(np.float32(DH ** -0.5))
    three, fused, run_three, run_fused = paths(functions, qkv, T, H, scale)
    _same_bytes_then_times(f"attention forward T {T} H {H}", three, fused, ("p16", "p", "o16"), run_three,
                           run_fused, "three")
    x = qkv.get().astype(np.float64).reshape(T, 3 * DH * H)
    p = fused["p"].get().reshape(H, T, T).astype(np.float64)
    mask = np.triu(np.ones((T, T), bool), 1)
    for h in range(H):
        q, k = x[:, h * DH:(h + 1) * DH], x[:, DH * H + h * DH: DH * H + (h + 1) * DH]
        s = np.where(mask, -np.inf, scale * (q @ k.T))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        assert np.abs(p[h] - e / e.sum(axis=1, keepdims=True)).max() < 1e-5


@pytest.mark.parametrize("T,H", CASES, ids=[f"T{t}-H{h}" for t, h in CASES])
def test_fused_attention_backward_is_the_three_launches_bit_for_bit(functions, T, H):
    from bobc.sass.generate import gemm
    rng = np.random.default_rng(T * 10 + H)
    d = DH * H
    scale = float(np.float32(DH ** -0.5))
    qkv = cp.asarray((rng.standard_normal(T * 3 * d) * 0.7).astype(np.float16))
    do = cp.asarray((rng.standard_normal(T * d) * 0.5).astype(np.float16))
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, rng.standard_normal((H, T, T)) * 1.5)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    p = cp.asarray((e / e.sum(axis=2, keepdims=True)).astype(np.float32).reshape(-1))
    three = dict(dp=cp.full(H * T * T, np.nan, cp.float32), ds=cp.full(H * T * T, np.nan, cp.float16),
                 dqkv=cp.full(T * 3 * d, np.nan, cp.float32), dqkv16=cp.full(T * 3 * d, np.nan, cp.float16))
    fused = {k: cp.full_like(v, np.nan) for k, v in three.items() if k != "dp"}
    base = qkv.data.ptr
    nt = gemm.pack_parameters(A=do.data.ptr, B=base + 4 * d, D=three["dp"].data.ptr, M=T, N=T, K=DH, lda=d,
                              ldb=3 * d, ldd=T, batches=H, sA=DH, sB=DH, sD=T * T)
    softmax = struct.pack("<QQQIIfI", p.data.ptr, three["dp"].data.ptr, three["ds"].data.ptr, H * T, T, scale, 0)
    nn = gemm.pack_parameters(A=three["ds"].data.ptr, B=base + 2 * d, D=three["dqkv"].data.ptr,
                              Dh=three["dqkv16"].data.ptr, M=T, N=DH, K=T, lda=T, ldb=3 * d, ldd=3 * d, ldh=3 * d,
                              flags=gemm.FLAG_HALF, batches=H, sA=T * T, sB=DH, sD=DH, sH=DH)
    attention = struct.pack("<6QIIfI", base, do.data.ptr, p.data.ptr, fused["ds"].data.ptr, fused["dqkv"].data.ptr,
                            fused["dqkv16"].data.ptr, T, H, scale, 0)

    def run_three():
        _launch(functions, "gemm-nt", gemm.grid(T, T, H), gemm.THREADS, nt, 17)
        _launch(functions, "softmax-backward", (-(-H * T // 8),), 256, softmax, 5)
        _launch(functions, "gemm-nn", gemm.grid(T, DH, H), gemm.THREADS, nn, 17)

    def run_fused():
        _launch(functions, "attention-backward", (T // 32, H, 1), BLOCKS[BACKWARD], attention, 8)

    _same_bytes_then_times(f"attention backward (dP, dS, dq) T {T} H {H}", three, fused, ("ds", "dqkv", "dqkv16"),
                           run_three, run_fused, "three")


@pytest.mark.parametrize("T,H", CASES, ids=[f"T{t}-H{h}" for t, h in CASES])
def test_fused_attention_backward_kv_is_the_two_products_bit_for_bit(functions, T, H):
    """dqkv and dqkv16 whole (NaN-filled; q's columns left alone by both paths)."""
    from bobc.sass.generate import gemm
    rng = np.random.default_rng(T * 30 + H)
    d = DH * H
    scale = float(np.float32(DH ** -0.5))
    masked = np.triu(np.ones((T, T), bool), 1)
    qkv = cp.asarray((rng.standard_normal(T * 3 * d) * 0.7).astype(np.float16))
    do = cp.asarray((rng.standard_normal(T * d) * 0.5).astype(np.float16))
    p16 = cp.asarray(np.where(masked, 0, rng.random((H, T, T)) * 4 / T).astype(np.float16).reshape(-1))
    ds = cp.asarray(np.where(masked, 0, rng.standard_normal((H, T, T)) * 0.01).astype(np.float16).reshape(-1))
    two = dict(dqkv=cp.full(T * 3 * d, np.nan, cp.float32), dqkv16=cp.full(T * 3 * d, np.nan, cp.float16))
    fused = {k: cp.full_like(v, np.nan) for k, v in two.items()}
    base = qkv.data.ptr
    tn = [gemm.pack_parameters(A=A, B=B, D=two["dqkv"].data.ptr + 4 * column, Dh=two["dqkv16"].data.ptr + 2 * column,
                               M=T, N=DH, K=T, lda=T, ldb=ldb, ldd=3 * d, ldh=3 * d, flags=gemm.FLAG_HALF, batches=H,
                               sA=T * T, sB=DH, sD=DH, sH=DH)
          for A, B, ldb, column in ((p16.data.ptr, do.data.ptr, d, 2 * d), (ds.data.ptr, base, 3 * d, d))]
    kv = struct.pack("<6QIIfI", base, do.data.ptr, p16.data.ptr, ds.data.ptr, fused["dqkv"].data.ptr,
                     fused["dqkv16"].data.ptr, T, H, scale, 0)

    def run_two():
        for words in tn:
            _launch(functions, "gemm-tn", gemm.grid(T, DH, H), gemm.THREADS, words, 17)

    def run_fused():
        _launch(functions, "attention-backward-kv", (T // 32, H, 1), BLOCKS[KV], kv, 8)

    _same_bytes_then_times(f"attention backward (dv, dk) T {T} H {H}", two, fused, ("dqkv", "dqkv16"), run_two,
                           run_fused, "two")
    assert np.isnan(fused["dqkv"].get().reshape(T, 3 * d)[:, :d]).all()
