"""coppelius-attention-forward's references (coppelius_model/attention.py): the launch stands for
the three the forward had (scores = q k^T, the causal softmax, o16 = p16 v), so its parts are
word for word what graph.py's own builders make of them, and its NumPy references give
model.forward's attention (p, p16, o16) -- kernels.py bit for bit, as test_graph_executes.py's
whole update needs; ref_ops.py (ref_gemm's products, its softmax) within the products' and the
softmax's rounding.  The same for coppelius-attention-backward (dp = do16 v^T, ds16, dq = ds16 k)
and coppelius-attention-backward-kv (dv = p16^T do16, dk = ds16^T q), against the backward's
formulas in the model's roundings."""
from __future__ import annotations

import numpy as np
import pytest

from coppelius_model import attention, graph, kernels, model, ref_ops
from coppelius_model.config import SMALL


def test_its_parts_are_the_three_launches_graph_builds():
    builder = graph.Builder(SMALL)
    T, d, H, dh = builder.T, builder.d, builder.H, builder.dh
    launches = [l for l in graph.update_launches(SMALL) if l.kernel == attention.KERNEL]
    assert len(launches) == SMALL.layers
    for layer, launch in enumerate(launches):
        n = f"h{layer}."
        qkv = builder.at(n + "qkv16")
        assert launch.grid == (T // 32, H, 1) and launch.block == attention.BLOCKS[attention.KERNEL]
        expected = [
            builder.gemm("nt", "", qkv, qkv + 2 * d, T, T, dh, 3 * d, 3 * d, D=attention.SCORES, ldd=T, batches=H,
                         sA=dh, sB=dh, sD=T * T),
            builder.rows("softmax-forward", "", H * T, attention.SCORES, builder.at(n + "p16"), builder.at(n + "p"),
                         graph.pair(H * T, T), graph.pair(graph.f32(dh ** -0.5))),
            builder.gemm("nn", "", builder.at(n + "p16"), qkv + 2 * 2 * d, T, dh, T, T, 3 * d,
                         Dh=builder.at(n + "o16"), flags=graph.WRITE_HALF | graph.NO_D, ldh=d, batches=H, sA=T * T,
                         sB=dh, sH=dh),
        ]
        got = attention.parts(launch.words)
        for part, want in zip(got, expected, strict=True):
            # the gemm's words 13 and 14 (split K's workspace and tickets) go unread unsplit
            words = list(want.words)
            if want.kernel.startswith("coppelius-gemm"):
                assert (want.words[7] >> 32) & graph.SPLIT_K == 0
                words[13] = words[14] = 0
            assert (part.kernel, part.grid, part.block, part.words) == (want.kernel, want.grid, want.block,
                                                                        tuple(words))


@pytest.mark.parametrize("T,H", [(128, 2), (256, 1)])
def test_the_references_give_the_models_attention(T, H):
    dh, d = attention.HEAD_DIMENSION, attention.HEAD_DIMENSION * H
    rng = np.random.default_rng(T + H)
    qkv16 = (rng.standard_normal((T, 3 * d)) * 2).astype(np.float16)
    base, size = 1 << 30, 2 * 3 * T * d + 6 * H * T * T + 2 * T * d
    addresses = dict(qkv=base, p16=base + 2 * 3 * T * d)
    addresses["p"] = addresses["p16"] + 2 * H * T * T
    addresses["o16"] = addresses["p"] + 4 * H * T * T

    a = model.MIXED
    q, k, v = (qkv16.astype(np.float64)[:, i * d:(i + 1) * d].reshape(T, H, dh).transpose(1, 0, 2) for i in range(3))
    p = model.causal_softmax(a.r32(dh ** -0.5 * (q @ k.transpose(0, 2, 1))), a)
    p16 = a.r16(p)
    o16 = a.r16(p16 @ v).transpose(1, 0, 2).reshape(T, d)

    launch = graph.Launch(attention.KERNEL, (T // 32, H, 1), attention.BLOCKS[attention.KERNEL],
                          attention.words(addresses["qkv"], addresses["p16"], addresses["p"], addresses["o16"], T, H))
    for name, registered in (("kernels", kernels.KERNELS), ("ref_ops", ref_ops.KERNELS)):
        memory = kernels.FlatMemory([(base, size)])
        memory.array(addresses["qkv"], "<f2", 3 * T * d)[...] = qkv16.ravel()
        registered[attention.KERNEL](memory, kernels.Launched(launch.parameters()))
        got_p = memory.array(addresses["p"], "<f4", H * T * T).reshape(H, T, T)
        got_p16 = memory.array(addresses["p16"], "<f2", H * T * T).reshape(H, T, T)
        got_o16 = memory.array(addresses["o16"], "<f2", T * d).reshape(T, d)
        masked = np.triu(np.ones((T, T), bool), k=1)
        assert np.all(got_p[:, masked] == 0) and np.all(got_p16[:, masked] == 0), name
        if name == "kernels":
            assert np.array_equal(got_p, p.astype(np.float32)) and np.array_equal(got_p16, p16.astype(np.float16))
            assert np.array_equal(got_o16, o16.astype(np.float16))
        else:      # binary64 exp and sums rounded once: an ulp of binary32, then of binary16
            assert np.allclose(got_p, p, rtol=2.0 ** -22, atol=0)
            assert np.allclose(got_p16.astype(np.float64), p16, rtol=2.0 ** -10, atol=2.0 ** -24)
            assert np.allclose(got_o16.astype(np.float64), o16, rtol=2.0 ** -9, atol=2.0 ** -20)


def _layer_launches(builder, kernel):
    """The update's launches of `kernel`, one a layer from the top layer down (the backward's
    order), each with its layer's resident prefix and its qkv16 and dqkv16 addresses; each checked
    to be one block of attention.BLOCKS[kernel] threads a 32-query tile and head."""
    launches = [l for l in graph.update_launches(SMALL) if l.kernel == kernel]
    assert len(launches) == SMALL.layers
    for launch, layer in zip(launches, reversed(range(SMALL.layers))):
        n = f"h{layer}."
        assert launch.grid == (builder.T // 32, builder.H, 1) and launch.block == attention.BLOCKS[kernel]
        yield launch, n, builder.at(n + "qkv16"), builder.at(n + "dqkv16")


def test_the_backward_parts_are_the_three_launches_graph_builds():
    """Each layer's coppelius-attention-backward launch stands for the backward's dp, ds16 and dq
    launches: its parts are what graph.py's own builders make of them (dp at SCORES)."""
    builder = graph.Builder(SMALL)
    T, d, H, dh = builder.T, builder.d, builder.H, builder.dh
    for launch, n, qkv16, dqkv16 in _layer_launches(builder, attention.BACKWARD):
        expected = [
            builder.gemm("nt", "", builder.at("do16"), qkv16 + 2 * 2 * d, T, T, dh, d, 3 * d, D=attention.SCORES,
                         ldd=T, batches=H, sA=dh, sB=dh, sD=T * T),
            builder.rows("softmax-backward", "", H * T, builder.at(n + "p"), attention.SCORES, builder.at("ds16"),
                         graph.pair(H * T, T), graph.pair(graph.f32(dh ** -0.5))),
            builder.gemm("nn", "", builder.at("ds16"), qkv16 + 2 * d, T, dh, T, T, 3 * d, D=builder.at("dqkv"),
                         Dh=dqkv16, flags=graph.WRITE_HALF, ldd=3 * d, ldh=3 * d, batches=H, sA=T * T, sB=dh,
                         sD=dh, sH=dh),
        ]
        for part, want in zip(attention.backward_parts(launch.words), expected, strict=True):
            words = list(want.words)
            if want.kernel.startswith("coppelius-gemm"):
                assert (want.words[7] >> 32) & graph.SPLIT_K == 0
                words[13] = words[14] = 0          # split K's workspace and tickets, unread unsplit
            assert (part.kernel, part.grid, part.block, part.words) == (want.kernel, want.grid, want.block,
                                                                        tuple(words))


def _backward_launch(kernel, sizes, probabilities, T, H):
    """The buffers `sizes` names laid end to end from 1 GiB (qkv first), and a launch of a fused
    attention backward kernel on them (words: qkv, do, `probabilities`, ds, dqkv, dqkv16, (T, H), scale)."""
    at, address = {}, 1 << 30
    for name, size in sizes.items():
        at[name], address = address, address + size
    words = tuple(at[name] for name in ("qkv", "do", probabilities, "ds", "dqkv", "dqkv16"))
    dh = attention.HEAD_DIMENSION
    return at, graph.Launch(kernel, (T // 32, H, 1), attention.BLOCKS[kernel],
                            words + (graph.pair(T, H), graph.pair(graph.f32(dh ** -0.5))))


def test_the_backward_references_give_the_models_gradients():
    T, H = 128, 2
    dh, d = attention.HEAD_DIMENSION, attention.HEAD_DIMENSION * H
    rng = np.random.default_rng(7)
    qkv16 = rng.standard_normal((T, 3 * d)).astype(np.float16)
    do16 = rng.standard_normal((T, d)).astype(np.float16)
    q, k, v = (qkv16.astype(np.float64)[:, i * d:(i + 1) * d].reshape(T, H, dh).transpose(1, 0, 2) for i in range(3))
    a = model.MIXED
    p = model.causal_softmax(a.r32(dh ** -0.5 * (q @ k.transpose(0, 2, 1))), a)
    do = do16.astype(np.float64).reshape(T, H, dh).transpose(1, 0, 2)
    dp = a.r32(do @ v.transpose(0, 2, 1))
    ds16 = a.r16(dh ** -0.5 * p * (dp - (dp * p).sum(axis=-1, keepdims=True)))
    dq = a.r32(ds16 @ k).transpose(1, 0, 2).reshape(T, d)

    sizes = dict(qkv=2 * 3 * T * d, do=2 * T * d, p=4 * H * T * T, ds=2 * H * T * T, dqkv=4 * 3 * T * d,
                 dqkv16=2 * 3 * T * d)
    at, launch = _backward_launch(attention.BACKWARD, sizes, "p", T, H)
    for name, registered in (("kernels", kernels.KERNELS), ("ref_ops", ref_ops.KERNELS)):
        memory = kernels.FlatMemory([(at["qkv"], sum(sizes.values()))])
        memory.array(at["qkv"], "<f2", 3 * T * d)[...] = qkv16.ravel()
        memory.array(at["do"], "<f2", T * d)[...] = do16.ravel()
        memory.array(at["p"], "<f4", H * T * T)[...] = p.astype(np.float32).ravel()
        registered[attention.BACKWARD](memory, kernels.Launched(launch.parameters()))
        got_ds = memory.array(at["ds"], "<f2", H * T * T).reshape(H, T, T).astype(np.float64)
        got_dq = memory.array(at["dqkv"], "<f4", 3 * T * d).reshape(T, 3 * d)[:, :d].astype(np.float64)
        got_dq16 = memory.array(at["dqkv16"], "<f2", 3 * T * d).reshape(T, 3 * d)[:, :d]
        assert np.all(memory.array(at["dqkv"], "<f4", 3 * T * d).reshape(T, 3 * d)[:, d:] == 0), name
        if name == "kernels":
            assert np.array_equal(got_ds, ds16) and np.array_equal(got_dq, dq), name
        else:      # binary32 and binary16 roundings of the same binary64 values: an ulp apart at most
            assert np.allclose(got_ds, ds16, rtol=2.0 ** -10, atol=2.0 ** -24)
            assert np.allclose(got_dq, dq, rtol=2.0 ** -9, atol=2.0 ** -20)
        assert np.array_equal(got_dq16, got_dq.astype(np.float32).astype(np.float16)), name


def test_the_kv_parts_are_the_two_products_graph_builds():
    """Each layer's coppelius-attention-backward-kv launch stands for that layer's dv = p16^T do16
    and dk = ds16^T q products: its parts are what graph.py's own builder makes of them."""
    builder = graph.Builder(SMALL)
    T, d, H, dh = builder.T, builder.d, builder.H, builder.dh
    for launch, n, qkv16, dqkv16 in _layer_launches(builder, attention.KV):
        expected = [
            builder.gemm("tn", "", builder.at(n + "p16"), builder.at("do16"), T, dh, T, T, d,
                         D=builder.at("dqkv", 4 * 2 * d), Dh=dqkv16 + 2 * 2 * d, flags=graph.WRITE_HALF, ldd=3 * d,
                         ldh=3 * d, batches=H, sA=T * T, sB=dh, sD=dh, sH=dh),
            builder.gemm("tn", "", builder.at("ds16"), qkv16, T, dh, T, T, 3 * d, D=builder.at("dqkv", 4 * d),
                         Dh=dqkv16 + 2 * d, flags=graph.WRITE_HALF, ldd=3 * d, ldh=3 * d, batches=H, sA=T * T,
                         sB=dh, sD=dh, sH=dh),
        ]
        for part, want in zip(attention.kv_parts(launch.words), expected, strict=True):
            assert (want.words[7] >> 32) & graph.SPLIT_K == 0
            words = list(want.words)
            words[13] = words[14] = 0          # split K's workspace and tickets, unread unsplit
            assert (part.kernel, part.grid, part.block, part.words) == (want.kernel, want.grid, want.block,
                                                                        tuple(words))


def test_the_kv_references_give_the_models_gradients():
    """dv = p16^T do16, dk = ds16^T q into dqkv's v and k columns (binary32) and dqkv16's, q's
    columns untouched: kernels.py as the model rounds them, ref_ops.py within an ulp."""
    T, H = 128, 2
    dh, d = attention.HEAD_DIMENSION, attention.HEAD_DIMENSION * H
    rng = np.random.default_rng(9)
    qkv16 = rng.standard_normal((T, 3 * d)).astype(np.float16)
    do16 = rng.standard_normal((T, d)).astype(np.float16)
    masked = np.triu(np.ones((T, T), bool), k=1)
    p16 = np.where(masked, 0, rng.random((H, T, T)) / T).astype(np.float16)
    ds16 = np.where(masked, 0, rng.standard_normal((H, T, T)) * 0.01).astype(np.float16)
    a = model.MIXED
    heads = lambda x: x.astype(np.float64).reshape(T, H, dh).transpose(1, 0, 2)      # noqa: E731
    merged = lambda x: x.transpose(1, 0, 2).reshape(T, d)                            # noqa: E731
    dv = merged(a.r32(p16.astype(np.float64).transpose(0, 2, 1) @ heads(do16)))
    dk = merged(a.r32(ds16.astype(np.float64).transpose(0, 2, 1) @ heads(qkv16[:, :d])))

    sizes = dict(qkv=2 * 3 * T * d, do=2 * T * d, p16=2 * H * T * T, ds=2 * H * T * T, dqkv=4 * 3 * T * d,
                 dqkv16=2 * 3 * T * d)
    at, launch = _backward_launch(attention.KV, sizes, "p16", T, H)
    for name, registered in (("kernels", kernels.KERNELS), ("ref_ops", ref_ops.KERNELS)):
        memory = kernels.FlatMemory([(at["qkv"], sum(sizes.values()))])
        for buffer, value in (("qkv", qkv16), ("do", do16), ("p16", p16), ("ds", ds16)):
            memory.array(at[buffer], "<f2", value.size)[...] = value.ravel()
        registered[attention.KV](memory, kernels.Launched(launch.parameters()))
        got = memory.array(at["dqkv"], "<f4", 3 * T * d).reshape(T, 3 * d).astype(np.float64)
        got16 = memory.array(at["dqkv16"], "<f2", 3 * T * d).reshape(T, 3 * d)
        assert np.all(got[:, :d] == 0) and np.all(got16[:, :d] == 0), name
        for value, columns in ((dk, slice(d, 2 * d)), (dv, slice(2 * d, 3 * d))):
            if name == "kernels":
                assert np.array_equal(got[:, columns], value), name
            else:      # binary32 roundings of the same binary64 values: an ulp apart at most
                assert np.allclose(got[:, columns], value, rtol=2.0 ** -22, atol=2.0 ** -40), name
            assert np.array_equal(got16[:, columns], got[:, columns].astype(np.float32).astype(np.float16)), name
