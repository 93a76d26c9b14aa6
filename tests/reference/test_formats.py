"""Bob's file formats: layouts checked at hand-computed offsets, every refusal.

The expectations come from docs/formats.md read independently here (struct
offsets, zlib's CRC, published FNV-1a/SplitMix64 vectors, a pure-Python
integer generator), not from the encoders under test.
"""
from __future__ import annotations

import dataclasses
import math
import struct
import zlib

import numpy as np
import pytest

from bob_model.model import bob_contract
from bobc.reference.errors import BadCheckpoint, BadInputRecord, ForeignCheckpoint
from bob_model.formats import (
    AdamWScalars, Checkpoint, Hyperparameters, InputRecord, adamw_scalars, decode_checkpoint,
    decode_input_record, decode_predictions, decode_result, encode_checkpoint,
    encode_input_record, encode_predictions, encode_result, fnv1a64, fresh_parameters,
    splitmix64)

CONTRACT = bob_contract()


def _cases(cases, prefix):
    """pytest params named by the part refused, not by the (large) bytes."""
    return [pytest.param(data, part, id=f"{prefix}-{i}-{part}") for i, (data, part) in enumerate(cases)]


# ------------------------------------------------------------------ records
def sample_record() -> InputRecord:
    targets = (np.arange(256) * 7 + 3) % 256
    return InputRecord(targets, [119, 116, 32])


def test_record_layout_at_documented_offsets():
    data = encode_input_record(sample_record())
    assert len(data) == 1564
    assert data[:8] == b"BOBINPUT"
    assert struct.unpack_from("<Q", data, 8) == (1,)
    for b in (0, 1, 200, 255):
        assert data[16 + 2 * b] == b
        assert data[17 + 2 * b] == (b * 7 + 3) % 256
        assert struct.unpack_from("<I", data, 528 + 4 * b) == ((b * 7 + 3) % 256,)
    assert struct.unpack_from("<3I", data, 1552) == (119, 116, 32)


def test_record_round_trip():
    record = sample_record()
    back = decode_input_record(encode_input_record(record))
    assert np.array_equal(back.targets, record.targets)
    assert np.array_equal(back.prompts, record.prompts)


def patched(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


GOOD_RECORD = encode_input_record(sample_record())


@pytest.mark.parametrize("data, part", _cases([
    (GOOD_RECORD[:-1], "size"),
    (GOOD_RECORD + b"\0", "size"),
    (b"", "size"),
    (b"BOBINPUX" + GOOD_RECORD[8:], "magic"),
    (patched(GOOD_RECORD, 8, "<Q", 2), "version"),
    (patched(GOOD_RECORD, 16 + 2 * 5, "<B", 6), "pairs"),          # pair 5 names byte 6
    (patched(GOOD_RECORD, 17 + 2 * 9, "<B", 0), "pairs"),          # pair target != word
    (patched(GOOD_RECORD, 528 + 4 * 9, "<I", 0), "pairs"),         # word != pair target
    (patched(GOOD_RECORD, 528 + 4 * 9, "<I", 256 + 66), "targets"),  # not a byte
    (patched(GOOD_RECORD, 1552 + 4 * 2, "<I", 300), "prompts"),
], "record"))
def test_record_refusals(data, part):
    with pytest.raises(BadInputRecord) as caught:
        decode_input_record(data, "rec.bin")
    assert caught.value.part == part
    assert caught.value.exit_code == 3
    assert "rec.bin" in str(caught.value)


# -------------------------------------------------------------- checkpoints
def sample_state(step=7) -> Checkpoint:
    rng = np.random.default_rng(1)
    planes = rng.standard_normal((3, 65536)).astype(np.float32)
    return Checkpoint(planes[0], planes[1], np.abs(planes[2]), step)


GOOD_STATE = sample_state()
GOOD = encode_checkpoint(CONTRACT, GOOD_STATE)


def test_checkpoint_layout_at_documented_offsets():
    identities = CONTRACT.schema + CONTRACT.learner + CONTRACT.data + CONTRACT.seed
    h = (64 + len(identities) + 15) // 16 * 16
    assert len(GOOD) == h + 786432 + 12
    magic, header, chunks, step, payload, chunk, updates = struct.unpack_from("<8sIIQQQQ", GOOD)
    assert (magic, header, chunks, step, payload, chunk, updates) == (
        b"BOBCENV1", h, 3, 7, 786432, 262144, 10)
    assert struct.unpack_from("<4I", GOOD, 48) == tuple(
        len(x) for x in (CONTRACT.schema, CONTRACT.learner, CONTRACT.data, CONTRACT.seed))
    assert GOOD[64: 64 + len(identities)] == identities
    assert GOOD[64 + len(identities): h] == bytes(h - 64 - len(identities))
    assert GOOD[h: h + 262144] == GOOD_STATE.P.astype("<f4").tobytes()
    assert GOOD[h + 262144: h + 524288] == GOOD_STATE.M.astype("<f4").tobytes()
    assert GOOD[h + 524288: h + 786432] == GOOD_STATE.V.astype("<f4").tobytes()
    assert struct.unpack_from("<I", GOOD, h + 786432) == (zlib.crc32(GOOD[: h + 786432]),)
    assert GOOD[-8:] == b"BOBCEND1"


def test_bob_contract_identities_follow_the_seed():
    # as the language evaluates Bob.TrainingRun's bobCheckpointContract (24-digit decimals)
    assert CONTRACT.schema == (b"bob-raw-pmv-f32-v1|parameter-order:p-then-m-then-v"
                               b"|payload=000000000000000000786432")
    assert CONTRACT.data == (b"raw-byte-sequence|vocabulary=000000000000000000000256"
                             b"|prompts=000000000000000000000003|record=000000000000000000001564")
    assert CONTRACT.learner == (b"objective:next-byte-cross-entropy|reduction:mean-over-rows|"
                                b"optimizer:adamw|weight-decay:decoupled|bias-correction:step-size|"
                                + struct.pack("<5f", 0.1, 0.9, 0.999, 1e-8, 0.01))
    assert CONTRACT.seed == b"bob-seed-v1"
    assert CONTRACT.learner[-21:] == b"|" + struct.pack("<5f", 0.1, 0.9, 0.999, 1e-8, 0.01)
    assert (CONTRACT.payload_bytes, CONTRACT.chunk_bytes, CONTRACT.updates_per_invocation) == (
        786432, 262144, 10)


def test_checkpoint_round_trip_is_bit_exact():
    back = decode_checkpoint(GOOD, CONTRACT, "c.bin")
    assert back.step == 7
    for name in "PMV":
        assert getattr(back, name).tobytes() == getattr(GOOD_STATE, name).tobytes()
    special = Checkpoint(np.full(65536, np.nan, np.float32), np.full(65536, -0.0, np.float32),
                         np.full(65536, np.inf, np.float32), 2 ** 64 - 1)
    again = decode_checkpoint(encode_checkpoint(CONTRACT, special), CONTRACT)
    assert again.step == 2 ** 64 - 1
    assert again.P.tobytes() == special.P.tobytes() and again.M.tobytes() == special.M.tobytes()


def resealed(data: bytes, offset: int, fmt: str, value) -> bytes:
    """Patch a header field and recompute the CRC, as a foreign writer would."""
    out = bytearray(patched(data, offset, fmt, value))
    h, = struct.unpack_from("<I", out, 8)
    payload, = struct.unpack_from("<Q", out, 24)
    struct.pack_into("<I", out, h + payload, zlib.crc32(bytes(out[: h + payload])))
    return bytes(out)


def flipped(data: bytes, offset: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= 0x10
    return bytes(out)


H = struct.unpack_from("<I", GOOD, 8)[0]


@pytest.mark.parametrize("data, part", _cases([
    (b"", "size"),
    (GOOD[:5], "size"),
    (GOOD[:63], "size"),
    (GOOD[:H + 1000], "size"),
    (GOOD[:-1], "size"),
    (GOOD + b"\0", "size"),
    (b"BOBCENV2" + GOOD[8:], "magic"),
    (b"\x7fELF" + bytes(2000), "magic"),
    (GOOD[:-8] + b"BOBCEND2", "trailer"),
    (flipped(GOOD, H + 12345), "crc"),            # a payload byte
    (flipped(GOOD, 20), "crc"),                   # the step
    (flipped(GOOD, 70), "crc"),                   # an identity byte
    (flipped(GOOD, H + 786432), "crc"),           # the stored CRC itself
    (patched(GOOD, 8, "<I", H + 4), "header"),    # H not a multiple of 16
], "bad"))
def test_bad_checkpoint_refusals(data, part):
    with pytest.raises(BadCheckpoint) as caught:
        decode_checkpoint(data, CONTRACT, "ck.bin")
    assert caught.value.part == part
    assert caught.value.exit_code == 4
    assert "ck.bin" in str(caught.value)


def foreign(**changes) -> bytes:
    other = dataclasses.replace(CONTRACT, **changes)
    return encode_checkpoint(other, GOOD_STATE)


@pytest.mark.parametrize("data, part", _cases([
    (foreign(schema=b"bob-raw-pmv-f16-v1"), "schema"),
    (foreign(learner=bob_contract(Hyperparameters(lr=0.05)).learner), "learner"),
    (foreign(data=CONTRACT.data.replace(b"03|record", b"04|record")), "data"),
    (foreign(seed=b"bob-seed-v2"), "seed"),
    (foreign(updates_per_invocation=20), "updates per invocation"),
    (resealed(GOOD, 32, "<Q", 131072), "chunk bytes"),
    (resealed(GOOD, 12, "<I", 2), "chunk count"),
    # a learner and a seed both differ: the learner is named (documented order)
    (foreign(learner=b"sgd", seed=b"other"), "learner"),
], "foreign"))
def test_foreign_checkpoint_refusals(data, part):
    with pytest.raises(ForeignCheckpoint) as caught:
        decode_checkpoint(data, CONTRACT, "ck.bin")
    assert caught.value.part == part
    assert caught.value.exit_code == 5
    assert "ck.bin" in str(caught.value)


def test_foreign_payload_bytes_named_after_identities():
    small = dataclasses.replace(CONTRACT, payload_bytes=3 * 64, chunk_bytes=64)
    data = encode_checkpoint(small, Checkpoint(np.ones(16), np.zeros(16), np.zeros(16), 1))
    with pytest.raises(ForeignCheckpoint) as caught:
        decode_checkpoint(data, CONTRACT, "ck.bin")
    assert caught.value.part == "payload bytes"


def test_corruption_is_reported_before_foreignness():
    data = flipped(foreign(seed=b"bob-seed-v2"), H + 99)
    with pytest.raises(BadCheckpoint) as caught:
        decode_checkpoint(data, CONTRACT)
    assert caught.value.part == "crc"


# ---------------------------------------------------- predictions and result
def test_predictions_layout():
    data = encode_predictions([97, 32, 116], [1, 1, 0])
    assert data == struct.pack("<6I", 97, 1, 32, 1, 116, 0)
    tokens, valid = decode_predictions(data)
    assert list(tokens) == [97, 32, 116] and list(valid) == [1, 1, 0]


def test_result_layout():
    initial = np.arange(256, dtype=np.float32)
    training = -np.arange(256, dtype=np.float32)
    rows = np.arange(768, dtype=np.float32).reshape(3, 256) / 8
    data = encode_result(initial, training, rows)
    assert len(data) == 5120
    assert struct.unpack_from("<f", data, 4 * 255) == (255.0,)
    assert struct.unpack_from("<f", data, 4 * (256 + 3)) == (-3.0,)
    assert struct.unpack_from("<f", data, 4 * (512 + 256 + 1)) == (257 / 8,)
    a, b, c = decode_result(data)
    assert np.array_equal(a, initial) and np.array_equal(b, training) and np.array_equal(c, rows)


# ------------------------------------------------------ fresh initialization
def test_fnv1a64_published_vectors():
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def pure_python_generator(identity: bytes, count: int) -> list[float]:
    """docs/formats.md, line by line, with Python integers and struct rounding."""
    mask = (1 << 64) - 1
    state = 0xCBF29CE484222325
    for byte in identity:
        state = ((state ^ byte) * 0x100000001B3) & mask
    values = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        u = z >> 40
        wide = (u - 8388608) / 838860800.0            # Python float: binary64, correctly rounded
        values.append(struct.unpack("<f", struct.pack("<f", wide))[0])   # to binary32, RNE
    return values


def test_splitmix64_published_vector():
    # SplitMix64 seeded with 0 (Vigna's splitmix64.c) starts e220a8397b1dcdaf, 6e789e6aa1b965f4
    assert [int(x) for x in splitmix64(0, 2)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    # the state wraps mod 2^64: a seed of -gamma makes the first state 0, which mixes to 0
    assert int(splitmix64(2 ** 64 - 0x9E3779B97F4A7C15, 1)[0]) == 0


def test_fresh_parameters_bit_exact_against_pure_python():
    values = fresh_parameters(b"bob-seed-v1")
    assert values.dtype == np.float32 and values.shape == (65536,)
    head = np.array(pure_python_generator(b"bob-seed-v1", 2048), dtype=np.float32)
    assert values[:2048].tobytes() == head.tobytes()
    assert np.abs(values).max() <= 0.01
    assert abs(float(values.astype(np.float64).mean())) < 1e-4     # centred
    assert len(np.unique(values)) > 60000                          # not degenerate
    assert fresh_parameters(b"bob-seed-v2")[:16].tobytes() != values[:16].tobytes()


def test_fresh_parameters_extremes_of_the_scale():
    # u = 0 maps to -0.01 exactly as binary32 of -1/100; u = 2^24-1 to just below 0.01
    assert np.float32(-8388608 / 838860800.0) == np.float32(-0.01)
    assert np.float32((2 ** 24 - 1 - 8388608) / 838860800.0) < np.float32(0.01)


# ---------------------------------------------------------------- AdamW block
def test_adamw_scalars_first_step_by_hand():
    s = adamw_scalars(Hyperparameters(), 1)
    lr, b1, b2, eps = (float(np.float32(x)) for x in (0.1, 0.9, 0.999, 1e-8))
    assert s.alpha == np.float32(lr * math.sqrt(1 - b2) / (1 - b1))
    assert abs(float(s.alpha) - 0.1 * math.sqrt(0.001) / 0.1) < 1e-6    # ~ 0.0316
    assert s.epsilon == np.float32(eps * math.sqrt(1 - b2))
    assert s.decay == np.float32(0.999)
    assert s.one_minus_beta1 == np.float32(1 - b1) and s.one_minus_beta2 == np.float32(1 - b2)
    assert (s.count, s.step) == (65536, 1)


def test_adamw_scalars_approach_lr_and_eps():
    s = adamw_scalars(Hyperparameters(), 100000)
    assert s.alpha == np.float32(0.1) and s.epsilon == np.float32(1e-8)


def test_adamw_block_words():
    s = adamw_scalars(Hyperparameters(), 12)
    words = s.pack()
    assert len(words) == 36
    fields = struct.unpack("<7f2I", words)
    assert fields[:7] == tuple(float(x) for x in (s.alpha, s.epsilon, s.decay, s.beta1,
                                                  s.one_minus_beta1, s.beta2, s.one_minus_beta2))
    assert fields[7:] == (65536, 12)
    with pytest.raises(ValueError):
        adamw_scalars(Hyperparameters(), 0)
    with pytest.raises(ValueError):
        adamw_scalars(Hyperparameters(), 2 ** 32)
    assert isinstance(s, AdamWScalars)


# ------------------------------------------------------------------ properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(st.binary(min_size=256, max_size=256), st.binary(min_size=3, max_size=3))
@settings(max_examples=50, deadline=None)
def test_any_record_round_trips(targets, prompts):
    back = decode_input_record(encode_input_record(InputRecord(list(targets), list(prompts))))
    assert bytes(back.targets.tolist()) == targets and bytes(back.prompts.tolist()) == prompts


@given(st.integers(0, len(GOOD) - 1), st.integers(1, 255))
@settings(max_examples=150, deadline=None)
def test_any_single_byte_corruption_is_refused_as_bad(offset, mask):
    # CRC-32 catches every error confined to 32 bits; the header fields that locate
    # the CRC are caught by the size/magic/header checks before it
    data = bytearray(GOOD)
    data[offset] ^= mask
    with pytest.raises(BadCheckpoint):
        decode_checkpoint(bytes(data), CONTRACT)


@given(st.integers(0, len(GOOD) - 1))
@settings(max_examples=50, deadline=None)
def test_any_truncation_is_refused_as_bad(length):
    with pytest.raises(BadCheckpoint):
        decode_checkpoint(GOOD[:length], CONTRACT)
