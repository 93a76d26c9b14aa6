"""The coppelius-gemm kernels on a real GPU, from our own cubins through CuPy (no ptxas).

Each source (examples/coppelius/Realization/Nvidia/SM86/coppelius-gemm-{nn,nt,tn}.sass)
is assembled for the GPU's architecture, wrapped by bobc.sass.cubin.write_cubin, loaded
with cupy.RawModule and launched with the parameter block of
bobc.sass.generate.gemm.pack_parameters, at the large configuration's shapes (12 x 768,
context 256: every product of a forward and backward, and the per-head attention
products with their 3C row strides) and the small one's.  Each result is compared with
NumPy float64 of the binary16 inputs, within ref_gemm.error_bound (K binary32
additions, truncating inside the tensor cores, plus the epilogue's roundings); the
binary16 copy within one binary16 rounding of that.

On the device machine: PYTHONPATH=compiler python3 -m pytest tests/gpu/test_coppelius_gemm.py
(tests/gpu/run.sh runs it with every GPU test).  H200, 2026-12-01: 11 passed
(bench/results/coppelius-gemm-h200.md).  The split products (flag 16, gemm.split_parameters)
at the shapes split_count splits, with their epilogues, twice (bit for bit): added in session 4;
their first H200 run failed in the test's own helper (operands freed before the launch, since
fixed) while bench/gpu/coppelius_gemm_split_diagnose.py found the kernels right.
The column sums (flag 32: a weight-gradient product also writing its bias gradient,
test_weight_gradient_column_sums_are_the_bias_backward_kernels) at the large configuration's
four weight-gradient shapes: E bit for bit coppelius-bias-backward's result on the same
output gradient (and ref_gemm.column_sums), D bit for bit the same as without the flag:
added in session 8, not yet run on the H200.
GELU in the epilogue (flags 64 and 128: the MLP's first product writing half(gelu(u)) beside
u, and dg = dy Wfcproj^T writing only half(dg gelu'(u)),
test_gelu_flags_are_the_separate_gelu_kernels) at the large and small MLP shapes, unsplit as
the model runs them and split 2 ways: Dh bit for bit what coppelius-gelu-forward /
-backward write for the product's own D (and u), D bit for bit the product without the flag:
added in session 8, not yet run on the H200.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
cp = pytest.importorskip("cupy")


def _reference():
    path = REPO / "examples" / "coppelius" / "coppelius_model" / "ref_gemm.py"
    spec = importlib.util.spec_from_file_location("coppelius_ref_gemm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


@pytest.fixture(scope="module")
def kernels(target, tmp_path_factory):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm
    folder = tmp_path_factory.mktemp("gemm-cubins")
    out = {}
    for name, variant in gemm.VARIANTS.items():
        assembled = assemble_kernel(SOURCES / f"{variant.identity(PREFIX)}.sass", target)
        path = folder / f"{variant.identity(PREFIX)}.{target.name}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES, gemm.THREADS))
        module = cp.RawModule(path=str(path))
        out[name] = (module, module.get_function(assembled.kernel_name), gemm.shared_bytes(variant))
    return out


def launch(kernels, layout, **fields):
    """Run one product; fields as pack_parameters takes them, arrays for the pointers."""
    from bobc.sass.generate import gemm
    pointers = {}
    for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U"):
        value = fields.pop(key, None)
        pointers[key] = value
        offset = fields.pop(f"{key}_offset", 0)
        fields[key] = 0 if value is None else value.data.ptr + offset * value.itemsize
    block = gemm.pack_parameters(**fields)
    _, function, shared = kernels[layout]
    function(gemm.grid(fields["M"], fields["N"], fields.get("batches", 1)), (gemm.THREADS,),
             tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()


def halves(rng, count, scale=1.0):
    return (rng.standard_normal(count) * scale).astype(np.float16)


def expected(layout, a, b, p, bias=None, addend=None):
    """float64 truth and its error bound for every batch: lists of (v, bound) [M, N]."""
    out = []
    for z in range(p.get("batches", 1)):
        def view(flat, offset, rows, cols, ld):
            return np.lib.stride_tricks.as_strided(flat[offset:], (rows, cols), (ld * flat.itemsize, flat.itemsize))
        m, n, k = p["M"], p["N"], p["K"]
        if layout == "tn":
            A = view(a, z * p.get("sA", 0), k, m, p["lda"]).astype(np.float64).T
        else:
            A = view(a, z * p.get("sA", 0), m, k, p["lda"]).astype(np.float64)
        if layout == "nt":
            B = view(b, z * p.get("sB", 0), n, k, p["ldb"]).astype(np.float64).T
        else:
            B = view(b, z * p.get("sB", 0), k, n, p["ldb"]).astype(np.float64)
        alpha = float(np.float32(p.get("alpha", 1.0)))
        v = alpha * (A @ B)
        magnitude = abs(alpha) * (np.abs(A) @ np.abs(B))
        if bias is not None:
            v = v + bias[None, :].astype(np.float64)
        if addend is not None:
            v = v + view(addend, z * p.get("sD", 0), m, n, p["ldd"]).astype(np.float64)
        out.append((v, ref.error_bound(magnitude, k, v)))
    return out


def check(got, truth):
    v, bound = truth
    error = np.abs(got.astype(np.float64) - v)
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    assert (error <= bound).all(), f"at {worst}: got {got[worst]}, want {v[worst]} (bound {bound[worst]})"


# The large configuration (d = 768, heads 12 of 64, context T = 256, MLP 3072, vocabulary 256):
# (layout, M, N, K, what)
LINEAR = [
    ("nn", 256, 2304, 768, "qkv = x Wqkv"),
    ("nn", 256, 768, 3072, "x' = g Wfcproj"),
    ("nn", 256, 256, 768, "logits = x Whead"),
    ("nt", 256, 768, 2304, "dx = dqkv Wqkv^T"),
    ("nt", 256, 3072, 768, "dg = dx' Wfcproj^T"),
    ("tn", 768, 2304, 256, "dWqkv = x^T dqkv"),
    ("tn", 3072, 768, 256, "dWfcproj = g^T dx'"),
    ("nn", 128, 1024, 256, "small: u = x Wfc"),
]


@pytest.mark.parametrize("layout,m,n,k,what", LINEAR, ids=[w for *_, w in LINEAR])
def test_linear_products(kernels, layout, m, n, k, what):
    rng = np.random.default_rng(m + n + k)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a = halves(rng, a_rows * a_cols)
    b = halves(rng, b_rows * b_cols, 0.05)
    d = cp.full(m * n, np.nan, dtype=cp.float32)
    p = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, alpha=1.0)
    launch(kernels, layout, A=cp.asarray(a), B=cp.asarray(b), D=d, **p)
    check(d.get().reshape(m, n), expected(layout, a, b, p)[0])


def test_every_flag_together(kernels):
    """v = alpha P + bias + R, written to D (= R, in place) and to Dh."""
    rng = np.random.default_rng(3)
    m, n, k = 128, 192, 96
    a, b = halves(rng, m * k), halves(rng, k * n)
    bias = rng.standard_normal(n).astype(np.float32)
    r = rng.standard_normal(m * n).astype(np.float32)
    d = cp.asarray(r)
    h = cp.zeros(m * n, dtype=cp.float16)
    p = dict(M=m, N=n, K=k, lda=k, ldb=n, ldd=n, ldh=n, alpha=0.75, flags=1 | 2 | 4)
    launch(kernels, "nn", A=cp.asarray(a), B=cp.asarray(b), D=d, R=d, Dh=h, bias=cp.asarray(bias), **p)
    truth = expected("nn", a, b, p, bias=bias, addend=r)[0]
    got = d.get().reshape(m, n)
    check(got, truth)
    half = h.get().reshape(m, n)
    np.testing.assert_array_equal(half, got.astype(np.float16))   # the copy is half(D) exactly


def test_half_only_leaves_d_untouched(kernels):
    rng = np.random.default_rng(4)
    m, n, k = 64, 64, 32
    a, b = halves(rng, m * k), halves(rng, n * k)
    d = cp.full(m * n, 7.0, dtype=cp.float32)
    h = cp.zeros(m * n, dtype=cp.float16)
    p = dict(M=m, N=n, K=k, lda=k, ldb=k, ldd=n, ldh=n, flags=4 | 8)
    launch(kernels, "nt", A=cp.asarray(a), B=cp.asarray(b), D=d, Dh=h, **p)
    assert (d.get() == 7.0).all()
    v, bound = expected("nt", a, b, p)[0]
    got = h.get().reshape(m, n).astype(np.float64)
    assert (np.abs(got - v) <= bound + np.abs(v) * 2.0 ** -11).all()


def test_attention_products_per_head(kernels):
    """Scores = q k^T / 8 per head from qkv [T, 3C] (row stride 3C, heads 64 apart), then
    o = p v into o [T, C] (heads merged, binary16 only), then dV = p^T do."""
    rng = np.random.default_rng(5)
    T, C, H, dh = 256, 768, 12, 64
    qkv = halves(rng, T * 3 * C)
    dqkv_q = cp.asarray(qkv)
    scores = cp.zeros(H * T * T, dtype=cp.float32)
    p = dict(M=T, N=T, K=dh, lda=3 * C, ldb=3 * C, ldd=T, sA=dh, sB=dh, sD=T * T, alpha=0.125, batches=H)
    launch(kernels, "nt", A=dqkv_q, B=dqkv_q, B_offset=C, D=scores, **p)
    truths = expected("nt", qkv, qkv[C:], p)
    got = scores.get().reshape(H, T, T)
    for z in range(H):
        check(got[z], truths[z])

    probabilities = halves(rng, H * T * T, 0.1)
    o = cp.zeros(T * C, dtype=cp.float16)
    p = dict(M=T, N=dh, K=T, lda=T, ldb=3 * C, ldd=C, ldh=C, sA=T * T, sB=dh, sD=dh, sH=dh, flags=4 | 8, batches=H)
    launch(kernels, "nn", A=cp.asarray(probabilities), B=dqkv_q, B_offset=2 * C, D=cp.zeros(1, cp.float32),
           Dh=o, **p)
    truths = expected("nn", probabilities, qkv[2 * C:], p)
    got = o.get().reshape(T, C)
    for z in range(H):
        v, bound = truths[z]
        head = got[:, z * dh:(z + 1) * dh].astype(np.float64)
        assert (np.abs(head - v) <= bound + np.abs(v) * 2.0 ** -11).all(), z

    do = halves(rng, T * C)
    dqkv = cp.full(T * 3 * C, np.nan, dtype=cp.float32)
    p = dict(M=T, N=dh, K=T, lda=T, ldb=C, ldd=3 * C, sA=T * T, sB=dh, sD=dh, batches=H)
    launch(kernels, "tn", A=cp.asarray(probabilities), B=cp.asarray(do), D=dqkv, D_offset=2 * C, **p)
    truths = expected("tn", probabilities, do, p)
    got = dqkv.get().reshape(T, 3 * C)
    for z in range(H):
        check(got[:, 2 * C + z * dh:2 * C + (z + 1) * dh], truths[z])
    assert np.isnan(got[:, :2 * C]).all()           # nothing outside the dV columns is written


def split_product(kernels, layout, splits, tickets, **fields):
    """One product split `splits` ways (gemm.split_parameters: S blocks per tile, partials in
    a workspace, the tile's last block adds them); fields as launch() takes them."""
    from bobc.sass.generate import gemm
    arrays = {}                       # the operands stay alive (and out of the pool) until the launch is done
    for key in ("A", "B", "D", "Dh", "R", "bias", "U"):
        value = arrays[key] = fields.get(key)
        fields[key] = 0 if value is None else value.data.ptr
    m, n = fields["M"], fields["N"]
    workspace = cp.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, dtype=cp.float32)
    _, function, shared = kernels[layout]
    grid, block = gemm.split_parameters(layout, splits, workspace.data.ptr, tickets.data.ptr, **fields)
    function(grid, (gemm.THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()
    del arrays


# the products gemm.split_count splits at the large configuration, with their epilogues
SPLIT = [
    ("nn", 256, 768, 3072, 1 | 2, "x' = g Wfcproj + b + h"),
    ("nn", 256, 768, 768, 1 | 2, "h = o Wproj + b + x"),
    ("nt", 256, 768, 3072, 0, "dln2 = du Wfc^T"),
    ("nt", 256, 768, 2304, 0, "dln1 = dqkv Wqkv^T"),
    ("nt", 256, 768, 768, 4 | 8, "do16 = dres Wproj^T (binary16 only)"),
    ("tn", 768, 256, 256, 0, "G[head] = xf^T dlogits"),
]


@pytest.mark.parametrize("layout,m,n,k,flags,what", SPLIT, ids=[w for *_, w in SPLIT])
def test_split_products_are_right_and_deterministic(kernels, layout, m, n, k, flags, what):
    """The split product (as split_count splits it; at least 2) against float64, and bit
    for bit the same in a second run (the reduce adds the partials in split order)."""
    from bobc.sass.generate import gemm
    splits = max(2, gemm.split_count(m, n, k))
    rng = np.random.default_rng(m + n + k + flags)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a, b = halves(rng, a_rows * a_cols), halves(rng, b_rows * b_cols, 0.05)
    bias = rng.standard_normal(n).astype(np.float32)
    r = rng.standard_normal(m * n).astype(np.float32)
    p = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n, flags=flags)
    results = []
    tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
    for _ in range(2):
        d = cp.full(m * n, np.nan, dtype=cp.float32)
        h = cp.zeros(m * n, dtype=cp.float16)
        split_product(kernels, layout, splits, tickets, A=cp.asarray(a), B=cp.asarray(b), D=d, Dh=h,
                      R=cp.asarray(r), bias=cp.asarray(bias), **p)
        results.append((d.get().reshape(m, n), h.get().reshape(m, n)))
        assert (tickets.get() == 0).all()              # every tile's ticket wrapped back
    truth = expected(layout, a, b, p, bias=bias if flags & 2 else None, addend=r if flags & 1 else None)[0]
    (d0, h0), (d1, h1) = results
    if flags & 8:
        assert np.isnan(d0).all()
        v, bound = truth
        assert (np.abs(h0.astype(np.float64) - v) <= bound + np.abs(v) * 2.0 ** -11).all()
    else:
        check(d0, truth)
        np.testing.assert_array_equal(d0, d1)
    np.testing.assert_array_equal(h0, h1)
    if flags & 4 and not flags & 8:
        np.testing.assert_array_equal(h0, d0.astype(np.float16))


# the weight-gradient products of a large layer, each with its bias (M, N, what): tn over T = 256
WEIGHT_GRADIENTS = [
    (3072, 768, "G[wfcproj], G[bfcproj]"),
    (768, 3072, "G[wfc], G[bfc]"),
    (768, 768, "G[wproj], G[bproj]"),
    (768, 2304, "G[wqkv], G[bqkv]"),
]


@pytest.fixture(scope="module")
def bias_backward(target, tmp_path_factory):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    assembled = assemble_kernel(SOURCES / "coppelius-bias-backward.sass", target)
    path = tmp_path_factory.mktemp("bias-cubin") / f"coppelius-bias-backward.{target.name}.cubin"
    path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, 24, 256))
    module = cp.RawModule(path=str(path))
    return module, module.get_function(assembled.kernel_name)


@pytest.mark.parametrize("m,n,what", WEIGHT_GRADIENTS, ids=[w for *_, w in WEIGHT_GRADIENTS])
def test_weight_gradient_column_sums_are_the_bias_backward_kernels(kernels, bias_backward, m, n, what):
    """tn with flag 32 (gemm: the column sums of B into E, by the first row tile): E is bit
    for bit what coppelius-bias-backward writes for the same binary16 dy [T, N] (the launch
    the fusion removes) and ref_gemm.column_sums; D is bit for bit the product without the
    flag, and within the float64 bound."""
    T = 256
    rng = np.random.default_rng(m + 2 * n)
    x = halves(rng, T * m)
    dy = (rng.standard_normal(T * n) * np.exp2(rng.integers(-8, 8, T * n))).astype(np.float16)
    x_d, dy_d = cp.asarray(x), cp.asarray(dy)
    p = dict(M=m, N=n, K=T, lda=m, ldb=n, ldd=n)
    outputs = {}
    for flags in (0, 32):
        d = cp.full(m * n, np.nan, dtype=cp.float32)
        e = cp.full(n, np.nan, dtype=cp.float32)
        launch(kernels, "tn", A=x_d, B=dy_d, D=d, E=e, flags=flags, **p)
        outputs[flags] = d.get(), e.get()
    (d0, e0), (d32, e32) = outputs[0], outputs[32]
    np.testing.assert_array_equal(d0.view(np.uint32), d32.view(np.uint32))
    check(d32.reshape(m, n), expected("tn", x, dy, p)[0])
    assert np.isnan(e0).all()
    db = cp.full(n, np.nan, dtype=cp.float32)
    _, function = bias_backward
    words = np.array([dy_d.data.ptr, db.data.ptr, T | (n << 32)], dtype=np.uint64)
    function((n // 64,), (256,), tuple(words))
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(e32.view(np.uint32), db.get().view(np.uint32))
    np.testing.assert_array_equal(e32.view(np.uint32), ref.column_sums(dy.reshape(T, n)).view(np.uint32))


@pytest.fixture(scope="module")
def gelu_kernels(target, tmp_path_factory):
    """coppelius-gelu-forward (3 words) and -backward (4 words), the launches the fusion removes."""
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    folder = tmp_path_factory.mktemp("gelu-cubins")
    out = {}
    for name, words in (("gelu-forward", 3), ("gelu-backward", 4)):
        assembled = assemble_kernel(SOURCES / f"coppelius-{name}.sass", target)
        path = folder / f"coppelius-{name}.{target.name}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, 8 * words, 256))
        module = cp.RawModule(path=str(path))
        out[name] = (module, module.get_function(assembled.kernel_name))
    return out


# (layout, M, N, K, flags, what): the model's two fused MLP products, large and small
GELU_PRODUCTS = [
    ("nn", 256, 3072, 768, 2 | 4 | 64, "large: u = b Wfc + bfc, g16 = gelu(u)"),
    ("nt", 256, 3072, 768, 4 | 8 | 128, "large: du16 = (dres Wfcproj^T) gelu'(u)"),
    ("nn", 128, 1024, 256, 2 | 4 | 64, "small: u, g16"),
    ("nt", 128, 1024, 256, 4 | 8 | 128, "small: du16"),
]


@pytest.mark.parametrize("splits", [1, 2])
@pytest.mark.parametrize("layout,m,n,k,flags,what", GELU_PRODUCTS, ids=[w.split(":")[0] + f"-{l}"
                                                                        for l, *_, w in GELU_PRODUCTS])
def test_gelu_flags_are_the_separate_gelu_kernels(kernels, gelu_kernels, layout, m, n, k, flags, what, splits):
    """Flag 64: D bit for bit the product without the flag (u) and Dh bit for bit what
    coppelius-gelu-forward writes for that u; flag 128 (with no D): Dh bit for bit what
    coppelius-gelu-backward writes for (u, dy = the product without the flag); U untouched.
    u spans gelu's tails (scaled inputs; bias and U with exponents over 2^-3 .. 2^4)."""
    from bobc.sass.generate import gemm
    rng = np.random.default_rng(m + n + k + flags)
    a_rows, a_cols = (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a, b = halves(rng, a_rows * a_cols), halves(rng, b_rows * b_cols, 0.2)
    bias = (rng.standard_normal(n) * np.exp2(rng.integers(-3, 4, n))).astype(np.float32)
    u = (rng.standard_normal(m * n) * np.exp2(rng.integers(-3, 5, m * n))).astype(np.float32)
    a_d, b_d, bias_d, u_d = cp.asarray(a), cp.asarray(b), cp.asarray(bias), cp.asarray(u)
    p = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n)
    tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
    outputs = {}
    for f in (flags & 2, flags):
        d = cp.full(m * n, np.nan, dtype=cp.float32)
        h = cp.zeros(m * n, dtype=cp.float16)
        fields = dict(A=a_d, B=b_d, D=d, Dh=h, bias=bias_d if f & 2 else None, U=u_d if f & 128 else None,
                      flags=f, **p)
        if splits == 1:
            launch(kernels, layout, **fields)
        else:
            split_product(kernels, layout, splits, tickets, **fields)
            assert (tickets.get() == 0).all()
        outputs[f] = d.get(), h.get()
    plain, _ = outputs[flags & 2]
    d, h = outputs[flags]
    np.testing.assert_array_equal(u_d.get().view(np.uint32), u.view(np.uint32))
    _, function = gelu_kernels["gelu-forward" if flags & 64 else "gelu-backward"]
    out = cp.zeros(m * n, dtype=cp.float16)
    if flags & 64:
        np.testing.assert_array_equal(d.view(np.uint32), plain.view(np.uint32))
        assert plain.max() > 8 and plain.min() < -8
        pre = cp.asarray(plain)
        words = [pre.data.ptr, out.data.ptr, m * n]
    else:
        assert np.isnan(d).all()
        dy = cp.asarray(plain)
        words = [u_d.data.ptr, dy.data.ptr, out.data.ptr, m * n]
    function((m * n // 1024,), (256,), tuple(np.array(words, dtype=np.uint64)))
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(h.view(np.uint16), out.get().view(np.uint16))
